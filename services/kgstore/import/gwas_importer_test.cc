#include "services/kgstore/import/gwas_importer.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/test_util/status_matchers.h"
#include "common/utf8.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/kgstore/import/import_test_util.h"

namespace ibgraphrag::kgstore::import_ {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;
using testing_util::FindReport;
using testing_util::FindTriple;
using testing_util::TempPath;
using testing_util::TripleSources;
using testing_util::WriteFile;
using testing_util::WriteGzipFile;

class GwasImporterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    t2d_ = builder_.AddEntity("DOID:9352", "disease", "type 2 diabetes mellitus");
    builder_.AddSynonym(t2d_, "NIDDM");
    alzheimer_ = builder_.AddEntity("DOID:10652", "disease", "Alzheimer's disease");
    builder_.AddEntity("DOID:1324", "disease", "lung cancer");
    builder_.AddEntity("DOID:0081312", "disease", "T-cell non-Hodgkin lymphoma");
    builder_.AddEntity("DOID:4087", "disease", "testicular pure germ cell tumor");
    builder_.AddEntity("HP:0004324", "phenotype", "Increased body weight");
    builder_.AddEntity("Entrez:3953", "gene", "LEPR");
    builder_.AddEntity("Entrez:105", "gene", "ADARB2");
  }
  KgBuilder builder_;
  EntityId t2d_ = 0, alzheimer_ = 0;
};

TEST_F(GwasImporterTest, NameMapperTriesNamesSynonymsQualifiersThenWordOverlap) {
  const NameTraitMapper mapper(builder_, NameTraitMapper::Options());
  const std::optional<TraitMatch> exact = mapper.Map("Type 2 Diabetes Mellitus");
  ASSERT_TRUE(exact.has_value());
  EXPECT_EQ(exact->entity, t2d_);
  EXPECT_EQ(exact->method, "exact");
  EXPECT_FLOAT_EQ(exact->confidence, 1.0f);
  const std::optional<TraitMatch> synonym = mapper.Map("niddm");
  ASSERT_TRUE(synonym.has_value());
  EXPECT_EQ(synonym->method, "synonym");
  const std::optional<TraitMatch> qualified = mapper.Map("Alzheimer's disease (late onset)");
  ASSERT_TRUE(qualified.has_value());
  EXPECT_EQ(qualified->entity, alzheimer_);
  EXPECT_EQ(qualified->method, "qualifier dropped");
  const std::optional<TraitMatch> overlap = mapper.Map("Type 2 diabetes");
  ASSERT_TRUE(overlap.has_value());
  EXPECT_EQ(overlap->entity, t2d_);
  EXPECT_EQ(overlap->method, "word overlap");
  EXPECT_NEAR(overlap->confidence, 0.9 * 6.0 / 7.0, 1e-5);
  // Phenotypes are not diseases, and a partial overlap stays below the threshold.
  EXPECT_FALSE(mapper.Map("Increased body weight").has_value());
  EXPECT_FALSE(mapper.Map("Diabetes").has_value());
  EXPECT_FALSE(mapper.Map("Height").has_value());
  // Lone letters count, and a disease name may not add specific words to the trait's.
  EXPECT_FALSE(mapper.Map("B cell non-Hodgkin lymphoma").has_value());
  EXPECT_FALSE(mapper.Map("Testicular germ cell tumor").has_value());
  EXPECT_TRUE(mapper.Map("T cell non Hodgkin lymphoma").has_value());
  EXPECT_FALSE(mapper.Map("").has_value());
}

// One row of the 36-column 2015 download with the given trait, gene ids, p-value and EFO label.
std::string CatalogRow(const std::string& trait, const std::string& gene_ids,
                       const std::string& p_value, const std::string& mapped_trait) {
  std::vector<std::string> f(36);
  f[1] = "25231870";
  f[7] = trait;
  f[17] = gene_ids;
  f[27] = p_value;
  f[34] = mapped_trait;
  return absl::StrCat(absl::StrJoin(f, "\t"), "\n");
}

TEST_F(GwasImporterTest, CatalogMapsTraitsAndKeepsTheMappingOnTheEdge) {
  const std::string path = TempPath("catalog.tsv.gz");
  std::string header =
      "DATE ADDED TO CATALOG\tPUBMEDID\tFIRST AUTHOR\tDATE\tJOURNAL\tLINK\tSTUDY\tDISEASE/TRAIT";
  for (int i = 8; i < 36; ++i) absl::StrAppend(&header, "\tC", i);
  WriteGzipFile(
      path,
      absl::StrCat(header, "\n", CatalogRow("Type 2 diabetes", "3953; 105", "3E-8", "x"),
                   CatalogRow("Type 2 diabetes", "105", "1E-20", "x"),
                   CatalogRow("Obesity-related traits", "3953", "1E-6", "type 2 diabetes mellitus"),
                   CatalogRow("Height", "105", "1E-9", "body height"),
                   CatalogRow("Lung cancer", "", "1E-9", "lung carcinoma"),
                   CatalogRow("Lung cancer", "999999", "1E-9", "lung carcinoma"), "short\trow\n"));
  GwasTraitCounts counts;
  const NameTraitMapper mapper(builder_, NameTraitMapper::Options());
  ASSERT_OK(ImportGwasCatalog(path, mapper, builder_, ImportOptions(), &counts));
  const KgData kg = builder_.Finish();
  const int64_t i = FindTriple(kg, "DOID:9352", "disease associated with gene", "Entrez:3953");
  ASSERT_GE(i, 0);
  EXPECT_THAT(TripleSources(kg, i), ElementsAre("gwas-catalog-2015 (CC BY 4.0)"));
  // The best mapping confidence wins; every association's note is kept (deduplicated).
  EXPECT_FLOAT_EQ(TripleScoreAt(kg, i), 1.0f);
  EXPECT_THAT(std::string(TripleNoteAt(kg, i)),
              HasSubstr("GWAS trait 'Type 2 diabetes' -> DOID:9352 (word overlap, 0.77); p=3E-8"));
  EXPECT_THAT(std::string(TripleNoteAt(kg, i)),
              HasSubstr("GWAS trait 'type 2 diabetes mellitus' -> DOID:9352 (exact, 1.00)"));
  EXPECT_GE(FindTriple(kg, "DOID:9352", "disease associated with gene", "Entrez:105"), 0);
  EXPECT_THAT(counts.traits_by_method,
              UnorderedElementsAre(Pair("word overlap", 1), Pair("exact", 2)));
  // "Obesity-related traits", "x" (never tried: the trait mapped), "Height", "body height".
  EXPECT_EQ(counts.traits_unmapped, 3);
  EXPECT_EQ(counts.rows_without_gene, 1);
  const SourceReport* report = FindReport(kg, "gwas-catalog-2015");
  EXPECT_EQ(report->rows_read, 7);
  EXPECT_EQ(report->rows_skipped, 1);
  EXPECT_EQ(report->unmapped_ids, 3);  // Height, the row without gene, the unknown gene
}

// Maps every trait to one disease, so a test can choose trait texts freely.
class EverythingIs final : public TraitMapper {
 public:
  explicit EverythingIs(EntityId disease) : disease_(disease) {}
  std::optional<TraitMatch> Map(absl::string_view) const override {
    return TraitMatch{disease_, 0.5f, "test"};
  }

 private:
  EntityId disease_;
};

TEST_F(GwasImporterTest, LongTraitsAreCutInTheNoteAtACharacterBoundary) {
  const std::string path = TempPath("catalog-utf8.tsv.gz");
  std::string header =
      "DATE ADDED TO CATALOG\tPUBMEDID\tFIRST AUTHOR\tDATE\tJOURNAL\tLINK\tSTUDY\tDISEASE/TRAIT";
  for (int i = 8; i < 36; ++i) absl::StrAppend(&header, "\tC", i);
  // "é" takes bytes 59 and 60: a 60-byte cut would keep half of it.
  const std::string trait = std::string(59, 'a') + "\xc3\xa9 and more";
  WriteGzipFile(path, absl::StrCat(header, "\n", CatalogRow(trait, "3953", "3E-8", "x")));
  const EverythingIs mapper(t2d_);
  ASSERT_OK(ImportGwasCatalog(path, mapper, builder_, ImportOptions(), nullptr));
  const KgData kg = builder_.Finish();
  const int64_t i = FindTriple(kg, "DOID:9352", "disease associated with gene", "Entrez:3953");
  ASSERT_GE(i, 0);
  const std::string note(TripleNoteAt(kg, i));
  EXPECT_TRUE(common::IsValidUtf8(note)) << note;
  EXPECT_THAT(note, HasSubstr("GWAS trait '" + std::string(59, 'a') + "' -> DOID:9352"));
}

TEST_F(GwasImporterTest, CuratedAssociationsScoreByLocusConfidence) {
  const std::string path = TempPath("curated.tsv");
  WriteFile(path,
            "doid_code\tdoid_name\tlocus\thigh_confidence\tprimary\tstatus\tgene\tsymbol\n"
            "DOID:9352\tT2D\t0\t1\t1\tHC-P\t3953\tLEPR\n"
            "DOID:1324\tlung cancer\t3\t0\t0\tLC-S\t4094\tMAF\n"
            "DOID:0000000\tnothing\t3\t0\t0\tLC-S\t4094\tMAF\n"
            "DOID:1324\tlung cancer\t3\tmaybe\t0\tLC-S\t4094\tMAF\n");
  ASSERT_OK(ImportGwasGeneAssociations(path, builder_, ImportOptions()));
  const KgData kg = builder_.Finish();
  const int64_t hc = FindTriple(kg, "DOID:9352", "disease associated with gene", "Entrez:3953");
  ASSERT_GE(hc, 0);
  EXPECT_FLOAT_EQ(TripleScoreAt(kg, hc), 1.0f);
  EXPECT_EQ(TripleNoteAt(kg, hc), "GWAS locus HC-P");
  const int64_t lc = FindTriple(kg, "DOID:1324", "disease associated with gene", "Entrez:4094");
  ASSERT_GE(lc, 0);
  EXPECT_FLOAT_EQ(TripleScoreAt(kg, lc), 0.5f);
  const SourceReport* report = FindReport(kg, "gwas-catalog-curated");
  EXPECT_EQ(report->unmapped_ids, 1);
  EXPECT_THAT(report->errors, ElementsAre(HasSubstr("curated.tsv:5: high_confidence")));
}

}  // namespace
}  // namespace ibgraphrag::kgstore::import_
