#include "services/kgstore/import/gene_importers.h"

#include <cmath>
#include <string>

#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/kgstore/import/import_test_util.h"

namespace ibgraphrag::kgstore::import_ {
namespace {

using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing_util::FindReport;
using testing_util::FindTriple;
using testing_util::TempPath;
using testing_util::TripleSources;
using testing_util::WriteFile;
using testing_util::WriteGzipFile;

// A backbone like the DO + Hetionet part of the embedded build: two genes, two diseases (one
// known by an alt_id alias) and DO's root class.
void AddBackbone(KgBuilder& builder) {
  builder.AddEntity("Entrez:1017", "gene", "CDK2");
  builder.AddEntity("Entrez:7157", "gene", "TP53");
  builder.AddEntity("DOID:4", "disease", "disease");
  const EntityId lung = builder.AddEntity("DOID:1324", "disease", "lung cancer");
  builder.AddAlias(lung, "DOID:9999");  // an alt_id
  builder.AddEntity("DOID:9352", "disease", "type 2 diabetes mellitus");
}

TEST(GeneImportersTest, HgncFamiliesCreateFamiliesAndKeepSymbols) {
  const std::string path = TempPath("families.tsv");
  WriteFile(path,
            "family_id\tfamily_name\troot\tleaf\tentrez_gene_id\tgene_symbol\n"
            "3\tFascins\t1\t1\t1017\tCDK2-ALIAS\n"
            "3\tFascins\t1\t1\t6624\tFSCN1\n"
            "x\tBroken\t1\t1\t6624\tFSCN1\n");
  KgBuilder builder;
  AddBackbone(builder);
  ASSERT_OK(ImportHgncGeneFamilies(path, builder, ImportOptions()));
  const KgData kg = builder.Finish();
  const int64_t i = FindTriple(kg, "Entrez:6624", "gene belongs to gene family", "HGNC_FAMILY:3");
  ASSERT_GE(i, 0);
  EXPECT_THAT(TripleSources(kg, i), ElementsAre("hgnc-families (CC0)"));
  EXPECT_GE(FindTriple(kg, "Entrez:1017", "gene belongs to gene family", "HGNC_FAMILY:3"), 0);
  EXPECT_THAT(kg.entities[0].synonyms, Contains("CDK2-ALIAS"));
  const SourceReport* report = FindReport(kg, "hgnc-families");
  ASSERT_NE(report, nullptr);
  EXPECT_EQ(report->rows_read, 3);
  EXPECT_EQ(report->rows_skipped, 1);
  EXPECT_THAT(report->errors, ElementsAre(HasSubstr("families.tsv:4: family_id is not a number")));
}

// The backbone, the Entrez -> STRING map `map_tsv` and the DISEASES knowledge channel `rows`.
KgData ImportKnowledgeChannel(const std::string& name, const std::string& map_tsv,
                              const std::string& rows) {
  const std::string map_path = TempPath(name + "-string.txt");
  WriteFile(map_path, "#Entrez_Gene_ID\tSTRING_Locus_ID\n" + map_tsv);
  const std::string path = TempPath(name + "-knowledge.tsv.gz");
  WriteGzipFile(path, rows);
  KgBuilder builder;
  AddBackbone(builder);
  EXPECT_OK(ImportStringGeneMap(map_path, builder, ImportOptions()));
  EXPECT_OK(ImportDiseasesChannel(path, "knowledge", builder, ImportOptions()));
  return builder.Finish();
}

TEST(GeneImportersTest, DiseasesChannelJoinsStringIdsAndSkipsRootsAndLowConfidence) {
  const std::string map_path = TempPath("string.txt");
  WriteFile(map_path,
            "#Entrez_Gene_ID\tSTRING_Locus_ID\n"
            "1017\t9606.ENSP00000266970\n"
            "7157\t9606.ENSP00000269305\n"
            "424242\t9606.ENSP00000999999\n");
  const std::string path = TempPath("knowledge.tsv.gz");
  WriteGzipFile(path,
                "ENSP00000266970\tCDK2\tDOID:9999\tLung cancer\tUniProtKB-KW\tCURATED\t4\n"
                "ENSP00000266970\tCDK2\tDOID:4\tDisease\tUniProtKB-KW\tCURATED\t4\n"
                "ENSP00000269305\tTP53\tDOID:9352\tT2D\tDistiLD\tp-value = 5e-14\t0\n"
                "ENSP00000269305\tTP53\tICD10:E11\tICD10:E11\tGHR\tCURATED\t5\n"
                "ENSP00000000001\tXYZ\tDOID:9352\tT2D\tGHR\tCURATED\t5\n"
                "ENSP00000269305\tTP53\tDOID:9352\tT2D\tGHR\tCURATED\tseven\n"
                "ENSP00000777777\tCDK2\tDOID:9352\tT2D\tGHR\tCURATED\t5\n");
  KgBuilder builder;
  AddBackbone(builder);
  ASSERT_OK(ImportStringGeneMap(map_path, builder, ImportOptions()));
  ASSERT_OK(ImportDiseasesChannel(path, "knowledge", builder, ImportOptions()));
  const KgData kg = builder.Finish();
  EXPECT_THAT(kg.entities[0].xrefs, Contains("STRING:9606.ENSP00000266970"));
  EXPECT_EQ(FindReport(kg, "diseases-string-map")->unmapped_ids, 1);
  // The alt_id resolves to the current DOID; the score is confidence / 5.
  const int64_t i = FindTriple(kg, "DOID:1324", "disease associated with gene", "Entrez:1017");
  ASSERT_GE(i, 0);
  EXPECT_FLOAT_EQ(TripleScoreAt(kg, i), 0.8f);
  EXPECT_EQ(TripleNoteAt(kg, i), "knowledge: UniProtKB-KW CURATED");
  EXPECT_THAT(TripleSources(kg, i), ElementsAre("diseases-knowledge (CC BY 4.0)"));
  EXPECT_LT(FindTriple(kg, "DOID:4", "disease associated with gene", "Entrez:1017"), 0);
  EXPECT_LT(FindTriple(kg, "DOID:9352", "disease associated with gene", "Entrez:7157"), 0);
  // A protein id the map does not know still names its gene by its symbol.
  EXPECT_GE(FindTriple(kg, "DOID:9352", "disease associated with gene", "Entrez:1017"), 0);
  const SourceReport* report = FindReport(kg, "diseases-knowledge");
  EXPECT_EQ(report->rows_read, 7);
  EXPECT_EQ(report->unmapped_ids, 2);  // the ICD10 row and the unknown protein named XYZ
  EXPECT_EQ(report->rows_skipped, 1);
  EXPECT_EQ(report->triples_added, 2);
}

TEST(GeneImportersTest, DiseasesChannelIgnoresASymbolTwoGenesShare) {
  const std::string path = TempPath("shared-symbol-knowledge.tsv.gz");
  WriteGzipFile(path, "ENSP00000777777\tTP53\tDOID:9352\tT2D\tGHR\tCURATED\t5\n");
  KgBuilder builder;
  AddBackbone(builder);
  builder.AddEntity("Entrez:999999", "gene", "TP53");  // a second gene under the same symbol
  ASSERT_OK(ImportDiseasesChannel(path, "knowledge", builder, ImportOptions()));
  const KgData kg = builder.Finish();
  EXPECT_LT(FindTriple(kg, "DOID:9352", "disease associated with gene", "Entrez:7157"), 0);
  EXPECT_LT(FindTriple(kg, "DOID:9352", "disease associated with gene", "Entrez:999999"), 0);
  EXPECT_EQ(FindReport(kg, "diseases-knowledge")->unmapped_ids, 1);
}

TEST(GeneImportersTest, PpiScoresBySourceCountAndMergesBothDirectionsSeparately) {
  const std::string path = TempPath("ppi.tsv");
  WriteFile(path,
            "gene_0\tgene_1\tsources\tunbiased\n"
            "1017\t7157\t3\t1\n"
            "1017\t5555\t1\t0\n"
            "1017\t7157\t0\t0\n");
  KgBuilder builder;
  AddBackbone(builder);
  ASSERT_OK(ImportHumanPpi(path, builder, ImportOptions()));
  const KgData kg = builder.Finish();
  const int64_t i = FindTriple(kg, "Entrez:1017", "gene interacts with gene", "Entrez:7157");
  ASSERT_GE(i, 0);
  EXPECT_FLOAT_EQ(TripleScoreAt(kg, i), 0.875f);
  EXPECT_EQ(TripleNoteAt(kg, i), "3 PPI resources, systematic screen");
  const SourceReport* report = FindReport(kg, "ppi-hetio-ind");
  EXPECT_EQ(report->unmapped_ids, 1);
  EXPECT_EQ(report->rows_skipped, 1);
}

TEST(GeneImportersTest, PathwaysUseHetionetIdsAndOneSourcePerLicence) {
  const std::string path = TempPath("pathways.tsv");
  WriteFile(
      path,
      "identifier\tname\turl\tn_genes\tn_coding_genes\tsource\tlicense\tgenes\tcoding_genes\n"
      "PC7_10399\ta4b7 Integrin signaling\t\t2\t2\tpid\tCC0 1.0\t1017|7157\t1017|7157\n"
      "WP100_r1\tGlutathione metabolism\turl\t2\t2\twikipathways\tCC BY 3.0\t7157|31\t7157\n");
  KgBuilder builder;
  AddBackbone(builder);
  ASSERT_OK(ImportPathways(path, builder, ImportOptions()));
  const KgData kg = builder.Finish();
  const int64_t pid =
      FindTriple(kg, "Entrez:1017", "gene participates in pathway", "PathwayCommons:PC7_10399");
  ASSERT_GE(pid, 0);
  // Published as "CC0 1.0", stored as "CC0" like every other CC0 source.
  EXPECT_THAT(TripleSources(kg, pid), ElementsAre("pathways-pid (CC0)"));
  const int64_t wp =
      FindTriple(kg, "Entrez:7157", "gene participates in pathway", "WikiPathways:WP100_r1");
  ASSERT_GE(wp, 0);
  EXPECT_THAT(TripleSources(kg, wp), ElementsAre("pathways-wikipathways (CC BY 3.0)"));
  EXPECT_EQ(FindReport(kg, "pathways")->unmapped_ids, 1);  // gene 31 is not in the KG
}

TEST(GeneImportersTest, GoAnnotationsPickTheRelationByDomainAndCheckListLengths) {
  const std::string path = TempPath("go.tsv");
  WriteFile(path,
            "go_id\tgo_name\tgo_domain\ttax_id\tannotation_type\tsize\tgene_ids\tgene_symbols\n"
            "GO:0000002\tmitochondrial genome maintenance\tbiological_process\t9606\tdirect\t2\t"
            "1017|4358\tCDK2|MPV17\n"
            "GO:0005634\tnucleus\tcellular_component\t9606\tdirect\t1\t7157\tTP53\n"
            "GO:0000003\treproduction\tbiological_process\t9606\tdirect\t2\t1|2\tA1BG\n"
            "GO:0000004\tthing\tsome_domain\t9606\tdirect\t1\t1\tA1BG\n");
  KgBuilder builder;
  AddBackbone(builder);
  ASSERT_OK(ImportGoAnnotations(path, builder, ImportOptions()));
  const KgData kg = builder.Finish();
  EXPECT_GE(FindTriple(kg, "Entrez:4358", "gene participates in biological process", "GO:0000002"),
            0);
  EXPECT_GE(FindTriple(kg, "Entrez:7157", "gene participates in cellular component", "GO:0005634"),
            0);
  const SourceReport* report = FindReport(kg, "go-annotations");
  EXPECT_EQ(report->rows_skipped, 2);
  EXPECT_THAT(report->errors, ElementsAre(HasSubstr("go.tsv:4: gene_ids and gene_symbols differ"),
                                          HasSubstr("go.tsv:5: unknown go_domain 'some_domain'")));
}

TEST(GeneImportersTest, NanAndInfiniteConfidencesAreMalformedNotScores) {
  const KgData kg =
      ImportKnowledgeChannel("nan", "1017\t9606.ENSP00000266970\n",
                             "ENSP00000266970\tCDK2\tDOID:9999\tLung cancer\tGHR\tCURATED\tnan\n"
                             "ENSP00000266970\tCDK2\tDOID:9352\tT2D\tGHR\tCURATED\tinf\n");
  EXPECT_EQ(FindReport(kg, "diseases-knowledge")->rows_skipped, 2);
  EXPECT_TRUE(kg.triples.empty());
}

TEST(GeneImportersTest, GoRowWithABadGeneIdMidListAddsNothing) {
  const std::string path = TempPath("go-bad-id.tsv");
  WriteFile(path,
            "go_id\tgo_name\tgo_domain\ttax_id\tannotation_type\tsize\tgene_ids\tgene_symbols\n"
            "GO:0005634\tnucleus\tcellular_component\t9606\tdirect\t3\t7157|x12|1017\t"
            "TP53|BAD|CDK2\n");
  KgBuilder builder;
  AddBackbone(builder);
  ASSERT_OK(ImportGoAnnotations(path, builder, ImportOptions()));
  const KgData kg = builder.Finish();
  EXPECT_TRUE(kg.triples.empty());  // TP53's triple, before the bad id, is not kept either
  const SourceReport* report = FindReport(kg, "go-annotations");
  EXPECT_EQ(report->rows_skipped, 1);
  EXPECT_THAT(report->errors, ElementsAre(HasSubstr("gene id 'x12' is not a number")));
}

TEST(GeneImportersTest, StrictModeStopsAtTheFirstMalformedRowNamingFileAndLine) {
  const std::string path = TempPath("ppi.tsv");
  WriteFile(path, "gene_0\tgene_1\tsources\tunbiased\n1017\tabc\t1\t0\n");
  KgBuilder builder;
  ImportOptions options;
  options.strict = true;
  const absl::Status status = ImportHumanPpi(path, builder, options);
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument,
                               HasSubstr("ppi.tsv:2: gene id is not a number")));
  EXPECT_THAT(ImportHumanPpi(TempPath("missing.tsv"), builder, options),
              StatusIs(absl::StatusCode::kNotFound));
}

}  // namespace
}  // namespace ibgraphrag::kgstore::import_
