// Test helpers for the KG store: a scratch directory and a small hand-checked medical graph.
#ifndef IBGRAPHRAG_SERVICES_KGSTORE_KG_STORE_TEST_UTIL_H_
#define IBGRAPHRAG_SERVICES_KGSTORE_KG_STORE_TEST_UTIL_H_

#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "common/test_util/temp_dir.h"
#include "gtest/gtest.h"
#include "services/kgstore/kg_builder.h"
#include "services/kgstore/kg_store.h"

namespace ibgraphrag::kgstore::testing {

// The suite's scratch folder (removed with its contents when the object goes away).
using ::ibgraphrag::common::test_util::ScratchDir;

// Ids of the hand-made graph, by construction order.
enum SmallKgEntity : EntityId {
  kDiabetes = 0,
  kMetformin = 1,
  kIns = 2,
  kPparg = 3,
  kPioglitazone = 4,
  kPolyuria = 5,
  kPancreas = 6,
  kObesity = 7,
  kIsolated = 8,
};
enum SmallKgRelation : RelationId {
  kTreats = 0,
  kAssociates = 1,
  kBinds = 2,
  kPresents = 3,
  kLocalizes = 4,
  kExpresses = 5,
  kResembles = 6,
};

//   metformin  -treats->     diabetes        pioglitazone -treats-> diabetes
//   diabetes   -associates-> INS, PPARG      pioglitazone -binds->  PPARG
//   diabetes   -presents->   polyuria        diabetes -localizes->  pancreas
//   pancreas   -expresses->  INS             obesity -associates->  PPARG
//   obesity    -resembles->  diabetes        "isolated" has no edges
inline KgData SmallKg() {
  KgBuilder b;
  const SourceId hetionet = b.AddSource("hetionet");
  const SourceId doid = b.AddSource("doid");
  const EntityId diabetes = b.AddEntity("DOID:9352", "disease", "type 2 diabetes mellitus");
  b.AddAlias(diabetes, "UMLS:C0011860");
  b.AddAlias(diabetes, "MESH:D003924");
  b.AddSynonym(diabetes, "T2DM");
  b.AddSynonym(diabetes, "adult-onset diabetes");
  b.SetDefinition(diabetes, "A diabetes characterized by insulin resistance.");
  b.AddEntitySource(diabetes, "doid");
  b.AddEntitySource(diabetes, "hetionet");
  b.AddEntity("DrugBank:DB00331", "compound", "Metformin");
  b.AddEntity("Entrez:3630", "gene", "INS");
  b.AddEntity("Entrez:5468", "gene", "PPARG");
  b.AddEntity("DrugBank:DB01132", "compound", "Pioglitazone");
  b.AddEntity("HP:0000103", "symptom", "Polyuria");
  b.AddEntity("UBERON:0001264", "anatomy", "pancreas");
  b.AddEntity("DOID:9970", "disease", "obesity");
  b.AddEntity("DOID:0000000", "disease", "isolated disease");
  b.AddRelation("treats", "compound", "disease", "the drug is indicated for the disease");
  b.AddRelation("associates", "disease", "gene", "the gene is associated with the disease");
  b.AddRelation("binds", "compound", "gene", "the drug binds the protein");
  b.AddRelation("presents", "disease", "symptom", "the disease presents the symptom");
  b.AddRelation("localizes", "disease", "anatomy", "the disease localizes to the anatomy");
  b.AddRelation("expresses", "anatomy", "gene", "the anatomy expresses the gene");
  b.AddRelation("resembles", "disease", "disease", "the diseases resemble each other");
  b.AddTriple(kMetformin, kTreats, kDiabetes, hetionet);
  b.AddTriple(kPioglitazone, kTreats, kDiabetes, hetionet);
  b.AddTriple(kDiabetes, kAssociates, kIns, hetionet);
  b.AddTriple(kDiabetes, kAssociates, kPparg, hetionet);
  b.AddTriple(kPioglitazone, kBinds, kPparg, hetionet);
  b.AddTriple(kDiabetes, kPresents, kPolyuria, doid);
  b.AddTriple(kDiabetes, kLocalizes, kPancreas, hetionet);
  b.AddTriple(kPancreas, kExpresses, kIns, hetionet);
  b.AddTriple(kObesity, kAssociates, kPparg, hetionet);
  b.AddTriple(kObesity, kResembles, kDiabetes, hetionet);
  SourceReport report;
  report.source = "hetionet-edges";
  report.path = "/data/kg/hetionet-v1.0-edges.sif.gz";
  report.sha256 = "ab12cd34";
  report.rows_read = 12;
  report.triples_added = 9;
  report.rows_skipped = 1;
  report.unmapped_ids = 2;
  report.errors = {"hetionet-v1.0-edges.sif.gz:7: bad row"};
  b.AddReport(report);
  return b.Finish();
}

// The store's source names, SourceId order (licences left out).
inline std::vector<std::string> SourceNames(const KgStore& store) {
  std::vector<std::string> names;
  for (const SourceInfo& s : store.sources()) names.push_back(s.name);
  return names;
}

// Writes `kg` as version 1 under `base` and opens it.
inline std::unique_ptr<KgStore> WriteAndOpen(const KgData& kg, const std::string& base,
                                             KgStoreOptions options = {}) {
  SnapshotManifestInfo info;
  info.version = 1;
  info.created_unix_seconds = 1700000000;
  info.created_by = "kg_store_test";
  const std::string dir = SnapshotDir(base, 1);
  const absl::Status written = KgStore::WriteSnapshot(kg, info, dir);
  EXPECT_TRUE(written.ok()) << written;
  options.snapshot_dir = dir;
  auto store = KgStore::Open(options);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? std::move(store).value() : nullptr;
}

}  // namespace ibgraphrag::kgstore::testing

#endif  // IBGRAPHRAG_SERVICES_KGSTORE_KG_STORE_TEST_UTIL_H_
