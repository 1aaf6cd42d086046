#include "services/kgstore/import/expression_importers.h"

#include <string>

#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/kgstore/import/import_test_util.h"

namespace ibgraphrag::kgstore::import_ {
namespace {

using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing_util::FindReport;
using testing_util::FindTriple;
using testing_util::TempPath;
using testing_util::TripleSources;
using testing_util::WriteFile;
using testing_util::WriteGzipFile;

class ExpressionImportersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    builder_.AddEntity("Entrez:1", "gene", "A1BG");
    builder_.AddEntity("Entrez:2", "gene", "A2M");
    builder_.AddEntity("UBERON:0000002", "anatomy", "uterine cervix");
    const std::string terms = TempPath("terms.tsv");
    WriteFile(terms,
              "uberon_id\tuberon_name\n"
              "UBERON:0000002\tuterine cervix\n"
              "UBERON:0000948\theart\n"
              "CL:0000000\tnot uberon\n");
    ASSERT_OK(ImportUberonTerms(terms, builder_, ImportOptions(), &names_));
  }
  KgBuilder builder_;
  AnatomyNames names_;
};

TEST_F(ExpressionImportersTest, UberonTermsOnlyNameColumnsAndCreateNoEntities) {
  EXPECT_EQ(names_.size(), 2u);
  EXPECT_EQ(names_.at("UBERON:0000948"), "heart");
  EXPECT_EQ(builder_.num_entities(), 3u);
  const KgData kg = builder_.Finish();
  EXPECT_EQ(FindReport(kg, "uberon-terms")->rows_skipped, 1);
}

TEST_F(ExpressionImportersTest, PresenceMatrixAddsExpressesForEveryOne) {
  const std::string path = TempPath("present.tsv.gz");
  WriteGzipFile(path,
                "entrez_gene_id\tCL:0000015\tUBERON:0000002\tUBERON:0000948\n"
                "1\t1\t1\t0\n"
                "2\t0\t1\t1\n"
                "3\t1\t1\t1\n"
                "1\t1\t2\t0\n"
                "1\t1\n");
  ASSERT_OK(ImportBgeePresence(path, names_, builder_, ImportOptions()));
  const KgData kg = builder_.Finish();
  const int64_t i = FindTriple(kg, "UBERON:0000002", "anatomy expresses gene", "Entrez:1");
  ASSERT_GE(i, 0);
  EXPECT_THAT(TripleSources(kg, i), ElementsAre("bgee-present (CC0)"));
  EXPECT_GE(FindTriple(kg, "UBERON:0000948", "anatomy expresses gene", "Entrez:2"), 0);
  EXPECT_LT(FindTriple(kg, "UBERON:0000948", "anatomy expresses gene", "Entrez:1"), 0);
  const SourceReport* report = FindReport(kg, "bgee-present");
  EXPECT_EQ(report->rows_read, 5);
  EXPECT_EQ(report->unmapped_ids, 1);  // gene 3
  EXPECT_EQ(report->rows_skipped, 2);
  EXPECT_EQ(report->triples_added, 3);
  EXPECT_THAT(report->errors,
              ElementsAre(HasSubstr("present.tsv.gz:1: 1 columns without an anatomy name left "
                                    "out: CL:0000015"),
                          HasSubstr(":5: column 3 is not 0, 1 or -1"),
                          HasSubstr(":6: expected 4 fields, got 2")));
}

TEST_F(ExpressionImportersTest, DiffexMatrixSplitsUpAndDownRegulation) {
  const std::string path = TempPath("diffex.tsv");
  WriteFile(path,
            "GeneID\tUBERON:0000002\tUBERON:0000948\n"
            "1\t1\t-1\n");
  ASSERT_OK(ImportBgeeDiffex(path, names_, builder_, ImportOptions()));
  const KgData kg = builder_.Finish();
  EXPECT_GE(FindTriple(kg, "UBERON:0000002", "anatomy upregulates gene", "Entrez:1"), 0);
  EXPECT_GE(FindTriple(kg, "UBERON:0000948", "anatomy downregulates gene", "Entrez:1"), 0);
}

TEST_F(ExpressionImportersTest, WrongFileIsRejectedByItsHeader) {
  const std::string path = TempPath("wrong.tsv");
  WriteFile(path, "GeneID\tUBERON:0000002\n1\t1\n");
  const absl::Status status = ImportBgeePresence(path, names_, builder_, ImportOptions());
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument,
                               HasSubstr("wrong.tsv:1: unexpected header")));
}

}  // namespace
}  // namespace ibgraphrag::kgstore::import_
