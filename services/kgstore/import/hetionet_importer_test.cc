#include "services/kgstore/import/hetionet_importer.h"

#include <map>
#include <set>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "common/delimited_reader.h"
#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/kgstore/import/import_test_util.h"
#include "services/kgstore/import/line_reader.h"
#include "services/kgstore/import/ontology_importers.h"

namespace ibgraphrag::kgstore::import_ {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using testing_util::DataFile;

constexpr char kNodes[] = "kg/hetionet-v1.0-nodes.tsv";
constexpr char kEdges[] = "kg/hetionet-v1.0-edges-5k.sif.gz";
constexpr char kMetaedges[] = "kg/hetionet-metaedges.tsv";

// Rows per metaedge abbreviation, counted straight from the SIF file.
std::map<std::string, int64_t> CountMetaedgesInFile(const std::string& path) {
  std::map<std::string, int64_t> counts;
  auto reader = LineReader::Open(path);
  EXPECT_OK(reader);
  absl::string_view line;
  std::vector<absl::string_view> fields;
  bool header = true;
  while ((*reader)->Next(&line)) {
    if (header) {
      header = false;
      continue;
    }
    common::SplitUnquotedLine(line, '\t', &fields);
    ++counts[std::string(fields[1])];
  }
  return counts;
}

TEST(HetionetIdsTest, CanonicalIdsUseSuitePrefixes) {
  EXPECT_EQ(HetionetCanonicalId("Disease::DOID:9352"), "DOID:9352");
  EXPECT_EQ(HetionetCanonicalId("Gene::1017"), "Entrez:1017");
  EXPECT_EQ(HetionetCanonicalId("Compound::DB00945"), "DrugBank:DB00945");
  EXPECT_EQ(HetionetCanonicalId("Symptom::D000006"), "MESH:D000006");
  EXPECT_EQ(HetionetCanonicalId("Side Effect::C0000727"), "UMLS:C0000727");
  EXPECT_EQ(HetionetCanonicalId("Anatomy::UBERON:0000002"), "UBERON:0000002");
  EXPECT_EQ(HetionetCanonicalId("Biological Process::GO:2000696"), "GO:2000696");
  EXPECT_EQ(HetionetCanonicalId("Pharmacologic Class::N0000000069"), "NDFRT:N0000000069");
  EXPECT_EQ(HetionetCanonicalId("Pathway::PC7_10399"), "PathwayCommons:PC7_10399");
  EXPECT_EQ(HetionetCanonicalId("Pathway::WP1403_r68937"), "WikiPathways:WP1403_r68937");
  EXPECT_EQ(HetionetCanonicalId("no separator"), "");
  EXPECT_EQ(HetionetKindToType("Side Effect"), "side_effect");
  EXPECT_EQ(HetionetKindToType("Pharmacologic Class"), "pharmacologic_class");
}

TEST(HetionetIdsTest, AllTwentyFourMetaedgesHaveReadableNames) {
  EXPECT_EQ(HetionetRelationName("CtD"), "drug treats disease");
  EXPECT_EQ(HetionetRelationName("DaG"), "disease associated with gene");
  EXPECT_EQ(HetionetRelationName("DpS"), "disease presents symptom");
  EXPECT_EQ(HetionetRelationName("GiG"), "gene interacts with gene");
  EXPECT_EQ(HetionetRelationName("AeG"), "anatomy expresses gene");
  EXPECT_EQ(HetionetRelationName("XyZ"), "");
}

class HetionetTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    builder_ = new KgBuilder();
    ImportOptions options;
    // DO first, as in the embedded build, so Hetionet diseases land on DO entities.
    ASSERT_OK(
        ImportDiseaseOntologyObo(DataFile("vocab/doid-2024-01-31.obo.gz"), *builder_, options));
    do_entities_ = builder_->num_entities();
    absl::Status status = ImportHetionetNodes(DataFile(kNodes), *builder_, options);
    ASSERT_OK(status);
    status = ImportHetionetEdges(DataFile(kEdges), DataFile(kMetaedges), *builder_, options);
    ASSERT_OK(status);
    kg_ = new KgData(builder_->Finish());
  }
  static void TearDownTestSuite() {
    delete kg_;
    delete builder_;
  }
  static const SourceReport& Report(absl::string_view source) {
    for (const SourceReport& r : kg_->reports) {
      if (r.source == source) return r;
    }
    ADD_FAILURE() << "no report " << source;
    return kg_->reports.front();
  }
  static const Entity* FindEntity(absl::string_view external_id) {
    for (const Entity& e : kg_->entities) {
      if (e.external_id == external_id) return &e;
    }
    return nullptr;
  }

  static KgBuilder* builder_;
  static KgData* kg_;
  static size_t do_entities_;
};
KgBuilder* HetionetTest::builder_ = nullptr;
KgData* HetionetTest::kg_ = nullptr;
size_t HetionetTest::do_entities_ = 0;

std::map<std::string, int64_t> TriplesPerRelation(const KgData& kg) {
  std::map<std::string, int64_t> per_relation;
  for (const Triple& t : kg.triples) ++per_relation[kg.relations[t.relation].name];
  return per_relation;
}

TEST(HetionetAloneTest, EdgeCountPerMetaedgeMatchesTheFile) {
  KgBuilder builder;
  ImportOptions options;
  ASSERT_OK(ImportHetionetNodes(DataFile(kNodes), builder, options));
  ASSERT_OK(ImportHetionetEdges(DataFile(kEdges), DataFile(kMetaedges), builder, options));
  const KgData kg = builder.Finish();
  EXPECT_EQ(kg.entities.size(), 47'031u);
  const std::map<std::string, int64_t> in_file = CountMetaedgesInFile(DataFile(kEdges));
  ASSERT_EQ(in_file.size(), 24u);
  std::map<std::string, int64_t> per_relation = TriplesPerRelation(kg);
  EXPECT_EQ(per_relation.size(), 24u);
  for (const auto& [abbreviation, rows] : in_file) {
    const std::string name(HetionetRelationName(abbreviation));
    ASSERT_FALSE(name.empty()) << abbreviation;
    EXPECT_EQ(per_relation[name], rows) << abbreviation << " = " << name;
  }
  EXPECT_EQ(per_relation["drug treats disease"], 755);
  const SourceReport& report = kg.reports.back();
  EXPECT_EQ(report.source, "hetionet-edges");
  EXPECT_EQ(report.rows_read, 99'676);
  EXPECT_EQ(report.rows_skipped, 0);
  EXPECT_EQ(report.unmapped_ids, 0);
  EXPECT_EQ(report.triples_added, 99'676);
}

// DaG rows carry their own licence; a DaG fact also among Hetionet's edges becomes one triple
// with both sources.
TEST(HetionetAloneTest, DiseaseGeneRowsKeepTheirLicenceAndMergeWithHetionetEdges) {
  KgBuilder builder;
  ImportOptions options;
  ASSERT_OK(ImportHetionetNodes(DataFile(kNodes), builder, options));
  ASSERT_OK(ImportHetionetEdges(DataFile(kEdges), DataFile(kMetaedges), builder, options));
  ASSERT_OK(
      ImportHetionetDiseaseGene(DataFile("kg/hetionet-DaG-association.tsv"), builder, options));
  const KgData kg = builder.Finish();
  std::set<std::string> dag_licenses, hetionet_licenses;
  for (const SourceInfo& s : kg.sources) {
    if (s.name == "hetionet-dag") dag_licenses.insert(s.license);
    if (s.name == "hetionet") hetionet_licenses.insert(s.license);
  }
  EXPECT_EQ(dag_licenses, (std::set<std::string>{"", "CC BY 4.0", "ODbL 1.0"}));
  // CcSE edges are SIDER's side effects (see SideEffectEdgesCarrySidersLicence).
  EXPECT_EQ(hetionet_licenses, (std::set<std::string>{"CC0", "CC BY-NC-SA 4.0"}));
  const SourceReport& dag = kg.reports.back();
  EXPECT_GT(dag.triples_merged, 0);
  const KgCounts counts = CountKg(kg);
  EXPECT_EQ(counts.triples_by_source.at("hetionet"), 99'676);
  // Every one of the file's 12,623 rows is a distinct fact; a row combining resources is one
  // triple under each resource's licence (the file leaves its licence empty).
  EXPECT_EQ(counts.triples_by_source.at("hetionet-dag"), 12'623);
  EXPECT_GT(counts.triples_by_license.at("ODbL 1.0"), 0);
  const int64_t combined =
      testing_util::FindTriple(kg, "DOID:2531", "disease associated with gene",
                               "Entrez:25");  // "DISEASES|DisGeNET", no licence
  ASSERT_GE(combined, 0);
  EXPECT_THAT(testing_util::TripleSources(kg, combined),
              ::testing::IsSupersetOf({"hetionet-dag (CC BY 4.0)", "hetionet-dag (ODbL 1.0)"}));
  // DOAF publishes no licence: the 1,087 unlicensed rows that name it stay (also) unknown.
  EXPECT_EQ(counts.triples_by_license.at("unknown"), 1'087);
}

TEST_F(HetionetTest, SideEffectEdgesCarrySidersLicence) {
  const KgCounts counts = CountKg(*kg_);
  const std::string side_effect(HetionetRelationName("CcSE"));
  // Every CcSE edge and nothing else is under SIDER's NC licence.
  EXPECT_EQ(counts.triples_by_license.at("CC BY-NC-SA 4.0"),
            counts.triples_by_relation.at(side_effect));
  for (size_t i = 0; i < kg_->triples.size(); ++i) {
    const bool is_side_effect = kg_->relations[kg_->triples[i].relation].name == side_effect;
    for (SourceId s : kg_->provenance[kg_->triples[i].provenance]) {
      EXPECT_EQ(kg_->sources[s].license == "CC BY-NC-SA 4.0", is_side_effect);
    }
  }
}

TEST_F(HetionetTest, MergingIntoDoConceptsOnlyFoldsAliasedEndpoints) {
  // MeSH symptoms and UMLS side effects that are DO xrefs land on the DO disease, so a handful of
  // their edges become duplicates or self-loops; every other metaedge keeps all its edges.
  const std::map<std::string, int64_t> in_file = CountMetaedgesInFile(DataFile(kEdges));
  std::map<std::string, int64_t> per_relation = TriplesPerRelation(*kg_);
  for (const auto& [abbreviation, rows] : in_file) {
    const std::string name(HetionetRelationName(abbreviation));
    if (abbreviation == "DpS" || abbreviation == "CcSE") {
      EXPECT_LE(per_relation[name], rows) << name;
      EXPECT_GE(per_relation[name], rows - 10) << name;
    } else {
      EXPECT_EQ(per_relation[name], rows) << name;
    }
  }
}

TEST_F(HetionetTest, DiseasesMergeIntoDiseaseOntologyEntities) {
  const Entity* t2d = FindEntity("DOID:9352");
  ASSERT_NE(t2d, nullptr);
  EXPECT_EQ(t2d->name, "type 2 diabetes mellitus");
  EXPECT_THAT(t2d->sources, Contains("doid"));
  EXPECT_THAT(t2d->sources, Contains("hetionet"));
  // 137 Hetionet diseases add (almost) no new entities: they are DO terms or their alt ids.
  size_t new_diseases = 0;
  for (size_t i = do_entities_; i < kg_->entities.size(); ++i) {
    if (kg_->entities[i].type == "disease") ++new_diseases;
  }
  EXPECT_LE(new_diseases, 5u);
}

TEST_F(HetionetTest, NodesBecomeTypedEntitiesWithCanonicalIds) {
  const Entity* gene = FindEntity("Entrez:1017");
  ASSERT_NE(gene, nullptr);
  EXPECT_EQ(gene->type, "gene");
  EXPECT_EQ(gene->name, "CDK2");
  const Entity* aspirin = FindEntity("DrugBank:DB00945");
  ASSERT_NE(aspirin, nullptr);
  EXPECT_EQ(aspirin->type, "compound");
  EXPECT_EQ(aspirin->name, "Acetylsalicylic acid");
  absl::flat_hash_set<std::string> types;
  for (const Entity& e : kg_->entities) types.insert(e.type);
  for (const char* type :
       {"disease", "gene", "compound", "symptom", "anatomy", "side_effect", "pathway",
        "biological_process", "cellular_component", "molecular_function", "pharmacologic_class"}) {
    EXPECT_TRUE(types.contains(type)) << type;
  }
  EXPECT_EQ(Report("hetionet-nodes").rows_read, 47'031);
}

TEST(HetionetEdgesTest, UnknownMetaedgeAndWrongKindsAreMalformedRows) {
  const std::string nodes = testing_util::TempPath("nodes.tsv");
  testing_util::WriteFile(nodes,
                          "id\tname\tkind\n"
                          "Gene::1\tA1BG\tGene\n"
                          "Gene::2\tA2M\tGene\n"
                          "Compound::DB1\tX\tCompound\n");
  const std::string edges = testing_util::TempPath("edges.sif");
  testing_util::WriteFile(edges,
                          "source\tmetaedge\ttarget\n"
                          "Gene::1\tGiG\tGene::2\n"
                          "Gene::1\tQqQ\tGene::2\n"
                          "Compound::DB1\tGiG\tGene::2\n"
                          "Gene::1\tGiG\tGene::404\n");
  KgBuilder builder;
  ImportOptions options;
  ASSERT_OK(ImportHetionetNodes(nodes, builder, options));
  ASSERT_OK(ImportHetionetEdges(edges, DataFile(kMetaedges), builder, options));
  KgData kg = builder.Finish();
  const SourceReport& report = kg.reports.back();
  EXPECT_EQ(report.rows_read, 4);
  EXPECT_EQ(report.rows_skipped, 2);
  EXPECT_EQ(report.unmapped_ids, 1);
  EXPECT_EQ(report.triples_added, 1);
  ASSERT_EQ(report.errors.size(), 2u);
  EXPECT_EQ(report.errors[0], edges + ":3: unknown metaedge 'QqQ'");
  EXPECT_THAT(report.errors[1], HasSubstr(edges + ":4: endpoints do not match metaedge GiG"));
}

}  // namespace
}  // namespace ibgraphrag::kgstore::import_
