// The mention tagger on the lexicon of the embedded KG built from the real data (~4 s).
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/alignment/lexicon.h"
#include "services/alignment/mention_extractor.h"

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
    ASSERT_TRUE(lexicon.ok()) << lexicon.status();
    lexicon_ = new Lexicon(*std::move(lexicon));
    extractor_ = new MentionExtractor(*lexicon_);
  }
  static void TearDownTestSuite() {
    delete extractor_;
    delete lexicon_;
  }
  void SetUp() override {
    if (lexicon_ == nullptr) GTEST_SKIP() << "IBGR_DATA_DIR not set";
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
  static Lexicon* lexicon_;
  static MentionExtractor* extractor_;
};

Lexicon* RealLexiconTest::lexicon_ = nullptr;
MentionExtractor* RealLexiconTest::extractor_ = nullptr;

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

TEST_F(RealLexiconTest, LowerCaseWordsDoNotFireAbbreviationsOrGeneSymbols) {
  EXPECT_THAT(Tag("mi casa, set the cat on the table"), ::testing::IsEmpty());
  EXPECT_GT(extractor_->indexed_names(), 100000);
}

}  // namespace
}  // namespace ibgraphrag::alignment
