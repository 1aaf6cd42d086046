// Artifacts for gateway tests: the small hand-made KG of kgstore's tests (type 2 diabetes,
// metformin, PPARG, ...), an alignment bundle over its names, and a small trained-shape retriever
// model, published under one artifact base exactly as `ibgr artifacts build` lays them out.
#ifndef IBGRAPHRAG_SERVICES_GATEWAY_TESTING_SMALL_SUITE_H_
#define IBGRAPHRAG_SERVICES_GATEWAY_TESTING_SMALL_SUITE_H_

#include <string>

#include "gtest/gtest.h"
#include "services/alignment/bundle.h"
#include "services/alignment/lexicon.h"
#include "services/alignment/text_encoder.h"
#include "services/kgstore/kg_store.h"
#include "services/kgstore/kg_store_test_util.h"
#include "services/kgstore/snapshot_manifest.h"
#include "services/retriever/retriever_test_util.h"

namespace ibgraphrag::gateway::testing {

// Writes kg/1, alignment/1 and retriever/1 under `base`.
inline void PublishSmallSuite(const std::string& base) {
  const kgstore::KgData kg = kgstore::testing::SmallKg();
  kgstore::SnapshotManifestInfo info;
  info.version = 1;
  ASSERT_TRUE(kgstore::KgStore::WriteSnapshot(kg, info, kgstore::SnapshotDir(base, 1)).ok());
  alignment::BundleBuildOptions build;
  build.base_path = base;
  build.version = 1;
  auto encoder = alignment::HashNgramEncoder::Create(alignment::HashNgramEncoderOptions());
  ASSERT_TRUE(encoder.ok()) << encoder.status();
  auto bundle =
      alignment::BuildAlignmentBundle(alignment::LexiconFromKg(kg, "test"), **encoder, build);
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  retriever::testing::PublishTestVersion(base, kg, /*text_dim=*/256, /*hidden=*/32);
}

}  // namespace ibgraphrag::gateway::testing

#endif  // IBGRAPHRAG_SERVICES_GATEWAY_TESTING_SMALL_SUITE_H_
