#include "services/alignment/common_names.h"

#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ibgraphrag::alignment {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

LexiconEntry Entry(const std::string& id, const std::string& name, const std::string& type) {
  LexiconEntry e;
  e.external_id = id;
  e.name = name;
  e.type = type;
  return e;
}

TEST(CommonNamesTest, AddsNamesToTheEntryTheRowNamesByIdAndName) {
  Lexicon lexicon;
  lexicon.source = "test";
  lexicon.entries = {
      Entry("DrugBank:DB00945", "Acetylsalicylic acid", "compound"),
      Entry("NDFRT:N0000175696", "Serotonin Reuptake Inhibitor", "pharmacologic_class")};
  lexicon.entries[0].abbreviations = {"ASA"};
  const std::vector<CommonNameRow> rows = {
      {"DrugBank:DB00945", "acetylsalicylic ACID", {"aspirin", "Aspirin", "ASA"}},
      {"NDFRT:N0000175696", "Serotonin Reuptake Inhibitor", {"SSRI", "SSRIs"}}};
  const CommonNamesReport report = AddCommonNames(rows, &lexicon);
  EXPECT_EQ(report.rows, 2);
  EXPECT_EQ(report.rows_matched, 2);
  EXPECT_THAT(report.unmatched, IsEmpty());
  // "Aspirin" and "ASA" are already there (case-insensitively) and are not added twice.
  EXPECT_THAT(lexicon.entries[0].synonyms, ElementsAre("aspirin"));
  EXPECT_THAT(lexicon.entries[0].abbreviations, ElementsAre("ASA"));
  // An all-capitals name is an abbreviation (matched case-sensitively); a plural with a
  // lower-case letter is an ordinary synonym.
  EXPECT_THAT(lexicon.entries[1].abbreviations, ElementsAre("SSRI"));
  EXPECT_THAT(lexicon.entries[1].synonyms, ElementsAre("SSRIs"));
  EXPECT_EQ(report.synonyms_added, 2);
  EXPECT_EQ(report.abbreviations_added, 1);
  EXPECT_EQ(lexicon.source, absl::StrCat("test + common-names:2 ", CommonNamesTableTag(rows)));
  // The tag changes with any row's names, so a bundle of another table version is stale.
  EXPECT_THAT(CommonNamesTableTag(rows), ::testing::MatchesRegex("table-[0-9a-f]{16}"));
  std::vector<CommonNameRow> edited = rows;
  edited[1].names.push_back("SSRI antidepressants");
  EXPECT_NE(CommonNamesTableTag(edited), CommonNamesTableTag(rows));
}

TEST(CommonNamesTest, ARowWhoseIdNowNamesAnotherEntityIsReportedAndAddsNothing) {
  Lexicon lexicon;
  lexicon.entries = {Entry("DrugBank:DB00945", "Some other drug", "compound")};
  const std::vector<CommonNameRow> rows = {
      {"DrugBank:DB00945", "Acetylsalicylic acid", {"aspirin"}},
      {"DrugBank:DB99999", "Missing", {"missing"}}};
  const CommonNamesReport report = AddCommonNames(rows, &lexicon);
  EXPECT_EQ(report.rows_matched, 0);
  EXPECT_THAT(report.unmatched,
              ElementsAre("DrugBank:DB00945 (Acetylsalicylic acid)", "DrugBank:DB99999 (Missing)"));
  EXPECT_THAT(lexicon.entries[0].synonyms, IsEmpty());
}

// The built-in table: no name given to two entities (a name would then be ambiguous by
// construction), no empty rows, ids in the KG's "Source:id" form.
TEST(CommonNamesTest, TheBuiltInTableNamesEachNameOnce) {
  absl::flat_hash_set<std::string> names;
  absl::flat_hash_set<std::string> ids;
  for (const CommonNameRow& row : ClinicalCommonNames()) {
    EXPECT_THAT(row.external_id, HasSubstr(":"));
    EXPECT_TRUE(ids.insert(row.external_id).second) << row.external_id;
    EXPECT_FALSE(row.names.empty()) << row.external_id;
    for (const char* name : row.names) {
      EXPECT_TRUE(names.insert(absl::AsciiStrToLower(name)).second) << name;
    }
  }
  EXPECT_GE(ClinicalCommonNames().size(), 100u);
}

}  // namespace
}  // namespace ibgraphrag::alignment
