// The mention tagger on the lexicon of the embedded KG built from the real data (~4 s).
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/alignment/aligner.h"
#include "services/alignment/bundle.h"
#include "services/alignment/common_names.h"
#include "services/alignment/generic_terms.h"
#include "services/alignment/lexicon.h"
#include "services/alignment/mention_extractor.h"
#include "services/alignment/testing/test_fixtures.h"

namespace ibgraphrag::alignment {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class RealLexiconTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const char* data = std::getenv("IBGR_DATA_DIR");
    if (data == nullptr) return;
    auto lexicon = LexiconFromDataDir(data);
    ASSERT_OK(lexicon);
    lexicon_ = new Lexicon(*std::move(lexicon));
    extractor_ = new MentionExtractor(*lexicon_);
    generic_terms_ = new std::vector<GenericTerm>(ComputeGenericTerms(*lexicon_, {}));
    MentionExtractorOptions options;
    for (const GenericTerm& t : *generic_terms_) options.generic_terms.push_back(t.key);
    filtered_ = new MentionExtractor(*lexicon_, options);
  }
  static void TearDownTestSuite() {
    delete filtered_;
    delete generic_terms_;
    delete extractor_;
    delete lexicon_;
  }
  void SetUp() override {
    // ctest always sets IBGR_DATA_DIR (ibgr_add_test): a missing one is a broken setup, not a skip.
    ASSERT_NE(lexicon_, nullptr) << "IBGR_DATA_DIR is not set: run through ctest, or set it to "
                                    "the shared data folder (cmake -DIBGR_DATA_DIR=...)";
  }
  // "text=ID1|ID2" for each mention, ids of the entries its name matched.
  static std::vector<std::string> Tag(const std::string& text) {
    std::vector<std::string> out;
    for (const Mention& m : extractor_->Extract(text)) {
      std::string ids;
      for (const NameRef& r : m.matches) {
        absl::StrAppend(&ids, ids.empty() ? "" : "|", lexicon_->entries[r.entry].external_id);
      }
      out.push_back(
          absl::StrCat(m.text, "=", ids, m.negated ? " [neg]" : "", m.uncertain ? " [unc]" : ""));
    }
    return out;
  }
  static std::vector<std::string> Texts(const std::vector<Mention>& mentions) {
    std::vector<std::string> out;
    for (const Mention& m : mentions) out.push_back(m.text);
    return out;
  }
  static bool IsGeneric(const std::string& key) {
    for (const GenericTerm& t : *generic_terms_) {
      if (t.key == key) return true;
    }
    return false;
  }
  static Lexicon* lexicon_;
  static MentionExtractor* extractor_;
  // With the generic terms of the real lexicon (what a bundle built from it holds).
  static std::vector<GenericTerm>* generic_terms_;
  static MentionExtractor* filtered_;
};

Lexicon* RealLexiconTest::lexicon_ = nullptr;
MentionExtractor* RealLexiconTest::extractor_ = nullptr;
std::vector<GenericTerm>* RealLexiconTest::generic_terms_ = nullptr;
MentionExtractor* RealLexiconTest::filtered_ = nullptr;

TEST_F(RealLexiconTest, TagsDiseasesPhenotypesDrugsGenesAndAbbreviations) {
  EXPECT_THAT(
      Tag("A 54-year-old man with type 2 diabetes mellitus and COPD presents with chest pain; "
          "rule out MI. He denies fever. Metformin was started."),
      ElementsAre("type 2 diabetes mellitus=DOID:9352", HasSubstr("COPD=DOID:3083"),
                  "chest pain=HP:0100749", HasSubstr("MI=DOID:5844"), "fever=HP:0001945 [neg]",
                  "Metformin=DrugBank:DB00331"));
  EXPECT_THAT(Tag("rule out MI"), ElementsAre(AllOf(HasSubstr("MI="), HasSubstr("[unc]"))));
  EXPECT_THAT(Tag("Which gene is mutated in cystic fibrosis? CFTR or BRCA1."),
              ElementsAre("cystic fibrosis=DOID:1485", "CFTR=Entrez:1080", "BRCA1=Entrez:672"));
}

// The everyday drug and class names (common_names.h): every row of the built-in table names an
// entity of the real KG by id and name, and the names tag those entities.
TEST_F(RealLexiconTest, CommonNamesMatchTheRealKgAndTagTheirEntities) {
  Lexicon with_common = *lexicon_;
  const CommonNamesReport report = AddCommonNames(ClinicalCommonNames(), &with_common);
  EXPECT_THAT(report.unmatched, ::testing::IsEmpty());
  EXPECT_EQ(report.rows_matched, report.rows);
  EXPECT_GT(report.synonyms_added + report.abbreviations_added, 200);
  const MentionExtractor extractor(with_common);
  auto tag = [&](const std::string& text) {
    std::vector<std::string> out;
    for (const Mention& m : extractor.Extract(text)) {
      std::string ids;
      for (const NameRef& r : m.matches) {
        absl::StrAppend(&ids, ids.empty() ? "" : "|", with_common.entries[r.entry].external_id);
      }
      out.push_back(absl::StrCat(m.text, "=", ids));
    }
    return out;
  };
  EXPECT_THAT(tag("What are the side effects of aspirin?"),
              ElementsAre("aspirin=DrugBank:DB00945"));
  EXPECT_THAT(tag("Which drugs are statins?"), ElementsAre("statins=NDFRT:N0000175589"));
  EXPECT_THAT(tag("albuterol or paracetamol"),
              ElementsAre("albuterol=DrugBank:DB01001", "paracetamol=DrugBank:DB00316"));
  EXPECT_THAT(tag("SSRIs and beta blockers"),
              ElementsAre("SSRIs=NDFRT:N0000175696", "beta blockers=NDFRT:N0000175556"));
  // Class nouns the question reader asks the members of (question_intent.cc, ClassNoun).
  EXPECT_THAT(tag("antivirals and antihypertensives"),
              ElementsAre("antivirals=MESH:D000998", "antihypertensives=MESH:D000959"));
  EXPECT_THAT(tag("Which drugs inhibit HMG-CoA reductase?"),
              ElementsAre("HMG-CoA reductase=Entrez:3156"));
  // The longest name wins: the class, not the gene.
  EXPECT_THAT(tag("Which COX-2 inhibitors are there?"),
              ElementsAre("COX-2 inhibitors=MESH:D052246"));
  EXPECT_THAT(tag("Which gene is mutated in sickle cell disease?"),
              ElementsAre("sickle cell disease=DOID:10923"));
  EXPECT_THAT(tag("insulin for high blood pressure"),
              ElementsAre("insulin=DrugBank:DB00030", "high blood pressure=DOID:10763|HP:0000822"));
  // Without the table none of these names is known.
  EXPECT_THAT(Tag("aspirin, statins, albuterol"), ::testing::IsEmpty());
}

TEST_F(RealLexiconTest, LowerCaseWordsDoNotFireAbbreviationsOrGeneSymbols) {
  EXPECT_THAT(Tag("mi casa, set the cat on the table"), ::testing::IsEmpty());
  EXPECT_GT(extractor_->indexed_names(), 100000);
}

TEST_F(RealLexiconTest, GenericWordsAreFlaggedAndEntitiesAreNot) {
  // Qualifiers (HPO clinical modifier, frequency), the tops of DO and HPO, class words.
  for (const std::string& generic :
       {"disease", "syndrome", "severe", "chronic", "acute", "mild", "progressive", "proximal",
        "intensity", "frequent", "recurrent", "mode of inheritance", "phenotypic abnormality"}) {
    EXPECT_TRUE(IsGeneric(generic)) << generic;
  }
  for (const std::string& entity :
       {"asthma", "pain", "fever", "cancer", "carcinoma", "tumor", "neoplasm", "blood",
        "chronic kidney disease", "mitochondrial inheritance", "autosomal recessive inheritance",
        "type 2 diabetes mellitus", "metformin"}) {
    EXPECT_FALSE(IsGeneric(entity)) << entity;
  }
  EXPECT_LT(generic_terms_->size(), 400u);  // a short list, not a stop-word purge
  EXPECT_THAT(filtered_->Extract("Severe disease in a patient with an acute syndrome."),
              ::testing::IsEmpty());
  EXPECT_THAT(Tag("Severe disease in a patient"), ::testing::Not(::testing::IsEmpty()));
  EXPECT_THAT(Texts(filtered_->Extract(
                  "Severe chronic kidney disease with progressive pain and mild asthma.")),
              ElementsAre("chronic kidney disease", "pain", "asthma"));
  // The PathwayCommons pathway named "Disease" is not a mention either.
  EXPECT_THAT(filtered_->Extract("Disease"), ::testing::IsEmpty());
}

// Abbreviation senses on real entries: a bundle of every entry that "MS", "CRF" or "MI" names
// (hash encoder), aligned in two contexts each.
TEST_F(RealLexiconTest, AbbreviationSenseFollowsTheContext) {
  Lexicon senses;
  senses.source = "test:real-abbreviations";
  for (const LexiconEntry& e : lexicon_->entries) {
    for (const std::string& a : e.abbreviations) {
      if (a == "MS" || a == "CRF" || a == "MI") {
        senses.entries.push_back(e);
        break;
      }
    }
  }
  ASSERT_GE(senses.entries.size(), 6u);
  common::test_util::ScratchDir base("align-real-senses");
  auto encoder = CreateTextEncoder(EncoderSpec());
  ASSERT_OK(encoder);
  std::shared_ptr<const TextEncoder> shared_encoder(*std::move(encoder));
  auto aligner = testing::AlignerOnNewBundle(senses, shared_encoder, base.path());
  ASSERT_OK(aligner);
  const AlignmentBundle& bundle = (*aligner)->bundle();
  auto sense_of = [&](const std::string& text) -> std::string {
    auto r = (*aligner)->ExtractMentions(text, false);
    if (!r.ok() || r->mentions.empty()) return "none";
    const Mention& m = r->mentions.front();
    std::string ids = m.expansion_id;
    for (const NameRef& ref : m.matches) {
      const std::string& id = bundle.lexicon.entries[ref.entry].external_id;
      if (id != m.expansion_id) absl::StrAppend(&ids, "+", id);
    }
    return ids;
  };
  EXPECT_EQ(sense_of("MS: demyelination of the brain and spinal cord, scarring of the myelin "
                     "sheaths around the axons."),
            "DOID:2377");
  EXPECT_EQ(sense_of("MS after rheumatic fever: narrowing of the mitral valve orifice."),
            "HP:0001718");
  EXPECT_EQ(sense_of("CRF: gradual loss of kidney function over years."), "DOID:784");
  EXPECT_EQ(sense_of("CRF so severe that he needs dialysis or kidney transplantation; the "
                     "glomerular filtration rate is below 15."),
            "HP:0003774");
  // One concept in two ontologies is one sense: both stay dictionary matches.
  EXPECT_THAT(sense_of("Acute MI with ST elevation."),
              ::testing::AnyOf("DOID:5844+HP:0001658", "HP:0001658+DOID:5844"));
}

}  // namespace
}  // namespace ibgraphrag::alignment
