// Generic names (not mentions by themselves) and abbreviation senses chosen by context.
#include "services/alignment/generic_terms.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/alignment/abbreviation_senses.h"
#include "services/alignment/aligner.h"
#include "services/alignment/bundle.h"
#include "services/alignment/mention_extractor.h"
#include "services/alignment/testing/test_fixtures.h"

namespace ibgraphrag::alignment {
namespace {

using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

LexiconEntry Entry(const std::string& id, const std::string& name,
                   std::vector<std::string> synonyms = {}, std::vector<std::string> abbr = {},
                   const std::string& definition = "") {
  LexiconEntry e;
  e.external_id = id;
  e.name = name;
  e.synonyms = std::move(synonyms);
  e.abbreviations = std::move(abbr);
  e.definition = definition;
  return e;
}

// A small ontology: DO's root with one child, HPO's clinical modifier subtree, a mode of
// inheritance, and specific entities that must stay mentions.
class GenericTermsTest : public ::testing::Test {
 protected:
  GenericTermsTest() {
    lexicon_.entries = {
        Entry("DOID:4", "disease"),
        Entry("DOID:225", "syndrome"),
        Entry("DOID:784", "chronic kidney disease", {}, {"CKD"}),
        Entry("HP:0012823", "Clinical modifier"),
        Entry("HP:0012824", "Severity", {"Intensity"}),
        Entry("HP:0012828", "Severe"),
        Entry("HP:0011010", "Chronic"),
        Entry("HP:0000005", "Mode of inheritance", {"Inheritance"}),
        Entry("HP:0000007", "Autosomal recessive inheritance"),
        Entry("DOID:2841", "asthma"),
        Entry("HP:0012531", "Pain"),
        Entry("DOID:9952", "acute lymphoblastic leukemia", {}, {"ALL"}),
        Entry("HP:0000001", "All"),
        Entry("UMLS:C0030705", "Patient"),
        Entry("PathwayCommons:PC7_3278", "Disease"),
    };
    const absl::flat_hash_map<std::string, std::vector<std::string>> children = {
        {"DOID:4", {"DOID:225"}},
        {"DOID:225", {"DOID:784"}},  // below the top's children: stays specific
        {"HP:0000001", {"HP:0012823", "HP:0000005"}},
        {"HP:0012823", {"HP:0012824"}},
        {"HP:0012824", {"HP:0012828", "HP:0011010"}},
        {"HP:0000005", {"HP:0000007"}},
    };
    lexicon_.generic_entries = FindGenericOntologyEntries(lexicon_, [&](const std::string& parent) {
      auto it = children.find(parent);
      return it == children.end() ? std::vector<std::string>() : it->second;
    });
    GenericTermOptions options;
    terms_ = ComputeGenericTerms(lexicon_, options);
  }
  std::vector<std::string> Keys() const {
    std::vector<std::string> out;
    for (const GenericTerm& t : terms_) out.push_back(t.key);
    return out;
  }
  MentionExtractorOptions ExtractorOptions() const {
    MentionExtractorOptions options;
    for (const GenericTerm& t : terms_) options.generic_terms.push_back(t.key);
    return options;
  }
  static std::vector<std::string> Texts(const std::vector<Mention>& mentions) {
    std::vector<std::string> out;
    for (const Mention& m : mentions) out.push_back(m.text);
    return out;
  }

  Lexicon lexicon_;
  std::vector<GenericTerm> terms_;
};

TEST_F(GenericTermsTest, QualifiersTopClassesAndCuratedWordsAreGeneric) {
  EXPECT_THAT(Keys(), ::testing::IsSupersetOf({"all", "chronic", "clinical modifier", "disease",
                                               "inheritance", "intensity", "mode of inheritance",
                                               "patient", "severe", "severity", "syndrome"}));
  for (const std::string& specific : {"asthma", "pain", "autosomal recessive inheritance",
                                      "acute lymphoblastic leukemia", "chronic kidney disease"}) {
    EXPECT_THAT(Keys(), ::testing::Not(::testing::Contains(specific))) << specific;
  }
}

TEST_F(GenericTermsTest, GenericWordsAreNoMentionsButMatchInsideLongerNames) {
  MentionExtractor extractor(lexicon_, ExtractorOptions());
  EXPECT_GE(extractor.generic_phrases(), 8);  // "all" and "patient" are stop words anyway
  EXPECT_THAT(extractor.Extract("Severe disease in a patient with a syndrome."), IsEmpty());
  EXPECT_THAT(Texts(extractor.Extract("Severe chronic kidney disease and severe asthma.")),
              ElementsAre("chronic kidney disease", "asthma"));
  // The abbreviation of a leukemia is not the HPO root "All".
  EXPECT_THAT(Texts(extractor.Extract("All children with ALL")), ElementsAre("ALL"));
  // Reported on request (AlignerOptions::report_generic_terms).
  EXPECT_THAT(Texts(extractor.Extract("Severe disease", /*include_generic=*/true)),
              ElementsAre("Severe", "disease"));
}

TEST_F(GenericTermsTest, ClassWordsComeFromNameStatistics) {
  Lexicon lexicon;
  for (const char* name : {"syndrome", "Down syndrome", "Rett syndrome", "Marfan syndrome",
                           "asthma", "allergic asthma", "fever", "yellow fever"}) {
    lexicon.entries.push_back(Entry("X", name));
  }
  GenericTermOptions options;
  options.class_word_min_name_share = 0.4;  // syndrome: 4 of 8 names; asthma 2, fever 2
  options.class_word_min_names = 1;
  std::vector<std::string> keys;
  for (const GenericTerm& t : ComputeGenericTerms(lexicon, options)) keys.push_back(t.key);
  EXPECT_THAT(keys, ElementsAre("syndrome"));
  options.enabled = false;
  EXPECT_THAT(ComputeGenericTerms(lexicon, options), IsEmpty());
}

TEST_F(GenericTermsTest, FileRoundTripAndMalformedLine) {
  common::test_util::ScratchDir dir("generic-terms");
  const std::string path = dir.path() + "/generic_terms.tsv";
  ASSERT_OK(WriteGenericTerms(terms_, path));
  absl::StatusOr<std::vector<GenericTerm>> read = ReadGenericTerms(path);
  ASSERT_OK(read);
  ASSERT_EQ(read->size(), terms_.size());
  EXPECT_EQ((*read)[0].key, terms_[0].key);
  EXPECT_EQ((*read)[0].reason, terms_[0].reason);
  std::ofstream(path) << "disease\tok\nno tab here\n";
  EXPECT_THAT(ReadGenericTerms(path), StatusIs(absl::StatusCode::kDataLoss));
}

// Two senses of "CRF" and a keyword encoder that sees the words of their definitions.
class AbbreviationSenseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    encoder_ = std::make_shared<testing::KeywordEncoder>(std::vector<std::string>{
        "cortisol", "acth", "hypothalamus", "dialysis", "creatinine", "kidney"});
    Lexicon lexicon;
    lexicon.source = "test:crf";
    lexicon.entries = {
        Entry("DOID:784", "chronic renal failure", {"chronic kidney failure"}, {"CRF"},
              "Kidney failure that needs dialysis; creatinine rises."),
        Entry("DrugBank:DB09067", "corticotropin-releasing factor", {}, {"CRF"},
              "Hypothalamus hormone that releases ACTH and so cortisol."),
        Entry("HP:0003259", "Elevated serum creatinine", {}, {}, "Creatinine above normal."),
    };
    for (size_t i = 0; i < lexicon.entries.size(); ++i) lexicon.entries[i].kg_id = i;
    auto aligner = testing::AlignerOnNewBundle(lexicon, encoder_, base_.path());
    ASSERT_OK(aligner);
    aligner_ = *std::move(aligner);
  }
  const Mention& CrfMention(const AlignResult& r) {
    for (const Mention& m : r.mentions) {
      if (m.expanded_from == "CRF") return m;
    }
    ADD_FAILURE() << "no CRF mention";
    return r.mentions.front();
  }
  // The entity `id` among kept and rejected.
  const ScoredEntity* Find(const AlignResult& r, const std::string& id) {
    for (const auto* list : {&r.kept, &r.rejected}) {
      for (const ScoredEntity& s : *list) {
        if (s.candidate.external_id == id) return &s;
      }
    }
    ADD_FAILURE() << id << " is not a candidate";
    return nullptr;
  }
  // `chosen` counts as named and outranks `other`, which is still a candidate.
  void ExpectChosenOver(const AlignResult& r, const std::string& chosen, const std::string& other) {
    const ScoredEntity* a = Find(r, chosen);
    const ScoredEntity* b = Find(r, other);
    if (a == nullptr || b == nullptr) return;
    EXPECT_TRUE(a->candidate.dictionary_match);
    EXPECT_FALSE(b->candidate.dictionary_match);
    EXPECT_GT(a->consistency, b->consistency + 0.3f);
  }

  common::test_util::ScratchDir base_{"align-senses"};
  std::shared_ptr<testing::KeywordEncoder> encoder_;
  std::unique_ptr<Aligner> aligner_;
};

TEST_F(AbbreviationSenseTest, ContextChoosesTheSense) {
  MscaOptions options;
  options.llm_choice_below = 0;
  auto endocrine =
      aligner_->Align("CRF from the hypothalamus raises ACTH and then cortisol.", options);
  ASSERT_OK(endocrine);
  EXPECT_EQ(CrfMention(*endocrine).expansion, "corticotropin-releasing factor");
  EXPECT_EQ(CrfMention(*endocrine).expansion_id, "DrugBank:DB09067");
  ExpectChosenOver(*endocrine, "DrugBank:DB09067", "DOID:784");

  auto renal = aligner_->Align(
      "A man with CRF on dialysis has an elevated serum creatinine of 6 mg/dL.", options);
  ASSERT_OK(renal);
  EXPECT_EQ(CrfMention(*renal).expansion, "chronic renal failure");
  EXPECT_EQ(CrfMention(*renal).expansion_id, "DOID:784");
  ExpectChosenOver(*renal, "DOID:784", "DrugBank:DB09067");
  // The other sense is still a candidate, below the chosen one and not a dictionary match.
  auto link = aligner_->Link("CRF on dialysis", 10);
  ASSERT_OK(link);
  ASSERT_EQ(link->links.size(), 1u);
  const std::vector<LinkedCandidate>& c = link->links[0].candidates;
  ASSERT_GE(c.size(), 2u);
  EXPECT_EQ(c[0].external_id, "DOID:784");
  EXPECT_TRUE(c[0].dictionary_match);
  bool other_sense_found = false;
  for (const LinkedCandidate& x : c) {
    if (x.external_id == "DrugBank:DB09067") {
      other_sense_found = true;
      EXPECT_FALSE(x.dictionary_match);
    }
  }
  EXPECT_TRUE(other_sense_found);
}

TEST_F(AbbreviationSenseTest, SingleSenseAbbreviationIsExpandedWithoutEncoding) {
  std::vector<Mention> mentions(1);
  mentions[0].expanded_from = "CRF";
  mentions[0].matches = {NameRef{1, 1}};
  const AlignmentBundle& bundle = aligner_->bundle();
  ChooseAbbreviationSenses(bundle, {}, &mentions);
  EXPECT_EQ(mentions[0].expansion, "corticotropin-releasing factor");
  EXPECT_THAT(mentions[0].other_senses, IsEmpty());
}

// An aligner over a disease and a gene that share the abbreviation `abbreviation` (the disease
// carries it as an abbreviation, the gene as its name), and the sense it expands to in a text.
class TwoSenseAbbreviation {
 public:
  TwoSenseAbbreviation(std::string abbreviation, LexiconEntry disease, LexiconEntry gene,
                       std::vector<std::string> keywords)
      : abbreviation_(std::move(abbreviation)), base_("align-two-senses") {
    Lexicon lexicon;
    lexicon.source = "test:" + abbreviation_;
    disease.type = "disease";
    gene.type = "gene";
    lexicon.entries = {std::move(disease), std::move(gene)};
    for (size_t i = 0; i < lexicon.entries.size(); ++i) lexicon.entries[i].kg_id = i;
    aligner_ = testing::AlignerOnNewBundle(
        lexicon, std::make_shared<testing::KeywordEncoder>(std::move(keywords)), base_.path());
  }
  bool ok() const { return aligner_.ok(); }
  std::string SenseOf(const std::string& text) const {
    auto r = (*aligner_)->ExtractMentions(text, false);
    EXPECT_OK(r);
    if (!r.ok()) return "error";
    for (const Mention& m : r->mentions) {
      if (m.expanded_from == abbreviation_) return m.expansion_id;
    }
    return "none";
  }

 private:
  std::string abbreviation_;
  common::test_util::ScratchDir base_;
  absl::StatusOr<std::unique_ptr<Aligner>> aligner_;
};

// "Gene XPA" names the gene XPA, though the claim's other words fit the disease XPA abbreviates
// (issue 28: six BiomixQA claims lost their gene this way).
TEST(AbbreviationSenseTypeTest, TheWordGeneBesideAnAbbreviationChoosesTheGeneSense) {
  const TwoSenseAbbreviation xpa("XPA",
                                 Entry("DOID:0110849", "xeroderma pigmentosum group A", {}, {"XPA"},
                                       "Xeroderma pigmentosum of the skin."),
                                 Entry("NCBIGene:7507", "XPA", {}, {}, "DNA repair protein."),
                                 {"xeroderma", "pigmentosum", "skin", "repair"});
  ASSERT_TRUE(xpa.ok());
  // The embedding alone picks the disease: the text is about xeroderma pigmentosum.
  EXPECT_EQ(xpa.SenseOf("Xeroderma pigmentosum of the skin associates XPA"), "DOID:0110849");
  // "Gene" before or "gene" after the symbol types it.
  EXPECT_EQ(xpa.SenseOf("Xeroderma pigmentosum of the skin associates Gene XPA"), "NCBIGene:7507");
  EXPECT_EQ(xpa.SenseOf("Xeroderma pigmentosum of the skin and the XPA gene"), "NCBIGene:7507");
  // Other words beside it do not.
  EXPECT_EQ(xpa.SenseOf("Xeroderma pigmentosum of the skin associates Generic XPA"),
            "DOID:0110849");
}

// "COPD" is DO's chronic obstructive pulmonary disease and also the Entrez record of the COPD
// locus (DisGeNET's gene "COPD"); the embedding favours the locus here. The question's intent
// types its topic: a drug question asks about a disease, a gene question too.
TEST(AbbreviationSenseTypeTest, TheQuestionsIntentTypesAnAbbreviationsSense) {
  const TwoSenseAbbreviation copd(
      "COPD",
      Entry("DOID:3083", "chronic obstructive pulmonary disease", {}, {"COPD"}, "A lung disease."),
      Entry("Entrez:260431", "COPD", {"severe locus of drugs and genes"}, {},
            "Severe early-onset locus; drugs and genes."),
      {"locus", "severe", "obstructive", "drugs", "genes"});
  ASSERT_TRUE(copd.ok());
  // No intent: the embedding decides (the locus's description shares the text's words).
  EXPECT_EQ(copd.SenseOf("The severe COPD"), "Entrez:260431");
  // "What drugs treat X?" and "Which genes are associated with X?" ask about a disease.
  EXPECT_EQ(copd.SenseOf("What drugs treat severe COPD?"), "DOID:3083");
  EXPECT_EQ(copd.SenseOf("Which genes are associated with severe COPD?"), "DOID:3083");
  // "Gene" beside the symbol still types it as the gene.
  EXPECT_EQ(copd.SenseOf("Which drugs target the COPD gene?"), "Entrez:260431");
}

}  // namespace
}  // namespace ibgraphrag::alignment
