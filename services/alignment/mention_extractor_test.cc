#include "services/alignment/mention_extractor.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/alignment/testing/test_fixtures.h"

namespace ibgraphrag::alignment {
namespace {

class MentionExtractorTest : public ::testing::Test {
 protected:
  static Lexicon MakeLexicon() {
    Lexicon lexicon = testing::TinyLexicon();
    LexiconEntry t2d;
    t2d.kg_id = 13;
    t2d.external_id = "DOID:9352";
    t2d.name = "type 2 diabetes mellitus";
    t2d.synonyms = {"type 2 diabetes", "diabetes"};
    t2d.abbreviations = {"T2DM"};
    LexiconEntry fever;
    fever.kg_id = 14;
    fever.external_id = "HP:0001945";
    fever.name = "fever";
    fever.synonyms = {"of the", "xy"};  // stop words only / too short: never tagged
    LexiconEntry artery;
    artery.kg_id = 15;
    artery.external_id = "UBERON:0001637";
    artery.name = "artery";
    lexicon.entries.push_back(t2d);
    lexicon.entries.push_back(fever);
    lexicon.entries.push_back(artery);
    return lexicon;
  }
  MentionExtractorTest() : lexicon_(MakeLexicon()), extractor_(lexicon_) {}

  std::vector<std::string> Texts(const std::vector<Mention>& mentions) {
    std::vector<std::string> out;
    for (const Mention& m : mentions) out.push_back(m.text);
    return out;
  }

  Lexicon lexicon_;
  MentionExtractor extractor_;
};

TEST_F(MentionExtractorTest, LongestMatchWinsWithByteOffsets) {
  const std::string text = "History of Type-2 Diabetes Mellitus and diabetes.";
  const std::vector<Mention> m = extractor_.Extract(text);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].text, "Type-2 Diabetes Mellitus");
  EXPECT_EQ(m[0].normalized, "type 2 diabete mellitus");  // plural folding is symmetric
  EXPECT_EQ(text.substr(m[0].begin, m[0].end - m[0].begin), m[0].text);
  EXPECT_EQ(m[0].matches.size(), 1u);
  EXPECT_EQ(m[0].matches[0].entry, 3u);
  EXPECT_EQ(m[1].text, "diabetes");
  EXPECT_EQ(m[1].origin, "dictionary");
}

TEST_F(MentionExtractorTest, PluralsCaseAndPunctuationVariantsMatch) {
  EXPECT_THAT(Texts(extractor_.Extract("HEART ATTACKS; arteries, Pneumonia!")),
              ::testing::ElementsAre("HEART ATTACKS", "arteries", "Pneumonia"));
}

TEST_F(MentionExtractorTest, AbbreviationsMatchCaseSensitively) {
  const std::vector<Mention> upper = extractor_.Extract("Known MI and T2DM.");
  ASSERT_EQ(upper.size(), 2u);
  EXPECT_EQ(upper[0].text, "MI");
  EXPECT_EQ(upper[0].expanded_from, "MI");
  EXPECT_EQ(upper[0].matches[0].entry, 0u);
  EXPECT_TRUE(extractor_.Extract("mi casa, t2dm").empty());
}

TEST_F(MentionExtractorTest, StopWordOnlyAndShortNamesAreNotTagged) {
  EXPECT_THAT(Texts(extractor_.Extract("one of the xy cases with fever")),
              ::testing::ElementsAre("fever"));
}

TEST_F(MentionExtractorTest, NegationAndUncertaintyTriggers) {
  struct Case {
    std::string text;
    bool negated;
    bool uncertain;
  };
  for (const Case& c : std::vector<Case>{
           {"Patient denies fever.", true, false},
           {"No fever or pneumonia.", true, false},
           {"Negative for pneumonia.", true, false},
           {"Pneumonia was ruled out.", true, false},
           {"Ruled out pneumonia yesterday.", true, false},
           {"Admitted to rule out pneumonia.", false, true},
           {"Possible pneumonia on the film.", false, true},
           {"Suspected pneumonia.", false, true},
           {"Chest film: ?pneumonia", false, true},
           {"Chest film: ? pneumonia", false, true},
           {"Is it fever? Pneumonia.", false, false},  // a question, not shorthand
           {"Pneumonia confirmed.", false, false},
           {"No cough. Pneumonia on film.", false, false},     // other sentence
           {"No cough but pneumonia present.", false, false},  // terminated scope
       }) {
    const std::vector<Mention> m = extractor_.Extract(c.text);
    ASSERT_FALSE(m.empty()) << c.text;
    EXPECT_EQ(m.back().negated, c.negated) << c.text;
    EXPECT_EQ(m.back().uncertain, c.uncertain) << c.text;
  }
}

}  // namespace
}  // namespace ibgraphrag::alignment
