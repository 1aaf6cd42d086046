#include "services/alignment/lexicon.h"

#include <fstream>

#include "common/test_util/status_matchers.h"
#include "common/test_util/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/alignment/testing/test_fixtures.h"

namespace ibgraphrag::alignment {
namespace {

using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

kgstore::KgData SmallKg() {
  kgstore::KgData kg;
  kgstore::Entity copd;
  copd.id = 0;
  copd.external_id = "DOID:3083";
  copd.type = "disease";
  copd.name = "chronic obstructive pulmonary disease";
  copd.synonyms = {"COPD", "chronic obstructive airway disease"};
  copd.xrefs = {"UMLS:C0024117", "MESH:D029424"};
  kgstore::Entity asthma;
  asthma.id = 1;
  asthma.external_id = "DOID:2841";
  asthma.type = "disease";
  asthma.name = "asthma";
  asthma.definition = "A bronchial disease.";
  asthma.xrefs = {"UMLS:C0004096"};
  kg.entities = {copd, asthma};
  kgstore::SourceReport report;
  report.path = "doid.obo";
  report.sha256 = "abc";
  kg.reports = {report};
  return kg;
}

TEST(LexiconTest, FromKgSplitsAbbreviationsFromSynonyms) {
  const Lexicon lexicon = LexiconFromKg(SmallKg(), "test");
  ASSERT_EQ(lexicon.entries.size(), 2u);
  const LexiconEntry& copd = lexicon.entries[0];
  EXPECT_EQ(copd.kg_id, 0u);
  EXPECT_THAT(copd.synonyms, ElementsAre("chronic obstructive airway disease"));
  EXPECT_THAT(copd.abbreviations, ElementsAre("COPD"));
  EXPECT_EQ(copd.AllNames().size(), 3u);
  EXPECT_EQ(lexicon.source_hash.size(), 64u);
  EXPECT_EQ(lexicon.entries[1].EnrichedText(), "asthma. A bronchial disease.");
}

TEST(LexiconTest, WriteAndReadRoundTrip) {
  const std::string dir = common::test_util::MakeTempDir("align-lexicon");
  Lexicon lexicon = LexiconFromKg(SmallKg(), "test");
  lexicon.entries[1].semantic_types = {"Disease or Syndrome"};
  ASSERT_OK(WriteLexicon(lexicon, dir + "/lex.jsonl"));
  auto read = ReadLexicon(dir + "/lex.jsonl");
  ASSERT_OK(read);
  ASSERT_EQ(read->entries.size(), 2u);
  EXPECT_EQ(read->entries[0].abbreviations, lexicon.entries[0].abbreviations);
  EXPECT_EQ(read->entries[1].semantic_types, lexicon.entries[1].semantic_types);
  EXPECT_EQ(read->source_hash, lexicon.source_hash);
  // A truncated file (no end line) is refused.
  std::ifstream in(dir + "/lex.jsonl");
  std::string first, second;
  std::getline(in, first);
  std::getline(in, second);
  std::ofstream(dir + "/cut.jsonl") << first << "\n" << second << "\n";
  EXPECT_THAT(ReadLexicon(dir + "/cut.jsonl"), StatusIs(absl::StatusCode::kDataLoss));
}

TEST(UmlsImportTest, JoinsCuisThroughXrefsAndAddsNamesDefinitionsTypes) {
  const std::string dir = common::test_util::MakeTempDir("align-umls");
  // MRCONSO: CUI|LAT|TS|LUI|STT|SUI|ISPREF|AUI|SAUI|SCUI|SDUI|SAB|TTY|CODE|STR|SRL|SUPPRESS|CVF|
  std::ofstream(dir + "/MRCONSO.RRF")
      << "C0004096|ENG|P|L1|PF|S1|Y|A1||||MSH|MH|D001249|Asthma|0|N|256|\n"
      << "C0004096|ENG|S|L2|PF|S2|Y|A2||||MSH|EN|D001249|Bronchial Asthma|0|N|256|\n"
      << "C0004096|ENG|S|L3|PF|S3|Y|A3||||SNOMEDCT_US|AB|1|BA|0|N|256|\n"
      << "C0004096|FRE|S|L4|PF|S4|Y|A4||||MSHFRE|EN|D001249|Asthme|0|N|256|\n"
      << "C0004096|ENG|S|L5|PF|S5|Y|A5||||MSH|EN|D001249|Asthma, obsolete|0|O|256|\n"
      << "C0024117|ENG|S|L6|PF|S6|Y|A6||||MSH|EN|D029424|Chronic Obstructive Lung "
         "Disease|0|N|256|\n"
      << "C9999999|ENG|P|L7|PF|S7|Y|A7||||MSH|MH|D000001|Unrelated concept|0|N|256|\n"
      << "broken|row\n";
  // MRDEF: CUI|AUI|ATUI|SATUI|SAB|DEF|SUPPRESS|CVF|
  std::ofstream(dir + "/MRDEF.RRF")
      << "C0024117|A6|AT1||MSH|A lung disease with airflow limitation.|N||\n"
      << "C0004096|A1|AT2||MSH|Another asthma definition.|N||\n";
  // MRSTY: CUI|TUI|STN|STY|ATUI|CVF|
  std::ofstream(dir + "/MRSTY.RRF") << "C0004096|T047|B2.2.1.2.1|Disease or Syndrome|AT3||\n"
                                    << "C0024117|T047|B2.2.1.2.1|Disease or Syndrome|AT4||\n";
  Lexicon lexicon = LexiconFromKg(SmallKg(), "test");
  UmlsImportOptions options;
  options.rrf_dir = dir;
  auto report = ImportUmlsRrf(options, &lexicon);
  ASSERT_OK(report);
  EXPECT_EQ(report->mrconso_rows, 8);
  EXPECT_EQ(report->rows_skipped, 1);
  EXPECT_EQ(report->cuis_joined, 2);
  const LexiconEntry& copd = lexicon.entries[0];
  const LexiconEntry& asthma = lexicon.entries[1];
  // "Asthma" duplicates the name (case-insensitive), French and suppressed rows are skipped.
  EXPECT_THAT(asthma.synonyms, ElementsAre("Bronchial Asthma"));
  EXPECT_THAT(asthma.abbreviations, ElementsAre("BA"));
  EXPECT_THAT(copd.synonyms, UnorderedElementsAre("chronic obstructive airway disease",
                                                  "Chronic Obstructive Lung Disease"));
  // Definitions only fill empty ones by default.
  EXPECT_EQ(copd.definition, "A lung disease with airflow limitation.");
  EXPECT_EQ(asthma.definition, "A bronchial disease.");
  EXPECT_THAT(asthma.semantic_types, ElementsAre("Disease or Syndrome"));
  EXPECT_EQ(report->synonyms_added, 2);
  EXPECT_EQ(report->abbreviations_added, 1);
  EXPECT_EQ(report->definitions_added, 1);
  EXPECT_EQ(report->semantic_types_added, 2);
  EXPECT_THAT(lexicon.source, HasSubstr("umls:"));
}

TEST(UmlsImportTest, MissingMrconsoIsNotFound) {
  Lexicon lexicon = LexiconFromKg(SmallKg(), "test");
  UmlsImportOptions options;
  options.rrf_dir = common::test_util::MakeTempDir("align-umls-empty");
  EXPECT_THAT(ImportUmlsRrf(options, &lexicon), StatusIs(absl::StatusCode::kNotFound));
}

}  // namespace
}  // namespace ibgraphrag::alignment
