// Artifacts for gateway tests: the small hand-made KG of kgstore's tests (type 2 diabetes,
// metformin, PPARG, ...), an alignment bundle over its names, a small trained-shape retriever
// model and (on request) ILlama's subgraph documents, published under one artifact base exactly
// as `ibgr artifacts build` / `ibgr docs build` lay them out.
#ifndef IBGRAPHRAG_SERVICES_GATEWAY_TESTING_SMALL_SUITE_H_
#define IBGRAPHRAG_SERVICES_GATEWAY_TESTING_SMALL_SUITE_H_

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "ibgraphrag/v1/gateway.pb.h"
#include "services/alignment/bundle.h"
#include "services/alignment/lexicon.h"
#include "services/alignment/text_encoder.h"
#include "services/kgstore/kg_store.h"
#include "services/kgstore/kg_store_test_util.h"
#include "services/kgstore/snapshot_manifest.h"
#include "services/retriever/alignment_embedder.h"
#include "services/retriever/retriever_test_util.h"
#include "services/retriever/subgraph_documents.h"

namespace ibgraphrag::gateway::testing {

// Publishes the next documents/<version> under `base` from its kg/1, embedded with the small
// suite's retriever encoder (the 256-dim hashed n-grams) so the illama mode can search it.
inline void PublishSmallSuiteDocuments(const std::string& base) {
  kgstore::KgStoreOptions options;
  options.snapshot_dir = kgstore::SnapshotDir(base, 1);
  options.read_only = true;
  auto store = kgstore::KgStore::Open(options);
  ASSERT_TRUE(store.ok()) << store.status();
  auto built = retriever::BuildSubgraphDocuments(**store, retriever::HashNgramEmbedder(256).value(),
                                                 retriever::DocumentsBuildOptions(), base);
  ASSERT_TRUE(built.ok()) << built.status();
}

// Writes alignment/<version> under `base`: the small KG's lexicon with the hash n-gram encoder
// (PublishSmallSuite's version 1; a test publishes more to see a swap).
inline void PublishSmallSuiteAlignmentBundle(const std::string& base, int64_t version) {
  alignment::BundleBuildOptions build;
  build.base_path = base;
  build.version = version;
  auto encoder = alignment::HashNgramEncoder::Create(alignment::HashNgramEncoderOptions());
  ASSERT_TRUE(encoder.ok()) << encoder.status();
  auto bundle = alignment::BuildAlignmentBundle(
      alignment::LexiconFromKg(kgstore::testing::SmallKg(), "test"), **encoder, build);
  ASSERT_TRUE(bundle.ok()) << bundle.status();
}

// Writes kg/1, alignment/1 and retriever/1 under `base`, and documents/1 when `with_documents`
// (off by default: without it the illama mode answers FAILED_PRECONDITION, which tests check).
inline void PublishSmallSuite(const std::string& base, bool with_documents = false) {
  const kgstore::KgData kg = kgstore::testing::SmallKg();
  kgstore::SnapshotManifestInfo info;
  info.version = 1;
  ASSERT_TRUE(kgstore::KgStore::WriteSnapshot(kg, info, kgstore::SnapshotDir(base, 1)).ok());
  PublishSmallSuiteAlignmentBundle(base, 1);
  if (::testing::Test::HasFatalFailure()) return;
  retriever::testing::PublishTestVersion(base, kg, /*text_dim=*/256, /*hidden=*/32);
  if (with_documents) PublishSmallSuiteDocuments(base);
}

// The multiple-choice question the small suite answers (option A, Metformin, is right).
inline ibgraphrag::v1::AnswerRequest SmallSuiteDiabetesQuestion() {
  ibgraphrag::v1::AnswerRequest request;
  request.set_question("Which drug treats type 2 diabetes mellitus?");
  request.add_options("Metformin");
  request.add_options("Polyuria");
  request.set_task(ibgraphrag::v1::TASK_MULTIPLE_CHOICE);
  // tau 0 keeps every linked candidate: the tests are about the flow, not MSCA calibration.
  request.mutable_pipeline()->set_tau(0.0f);
  return request;
}

// A reasoner config whose "llm" backend is the fake server at `llm_base_url`: a 2 s timeout and
// no retries, so a misbehaving LLM degrades an answer quickly; no drain grace, so kills are fast.
inline std::string SmallSuiteReasonerConfig(absl::string_view llm_base_url) {
  return absl::StrCat(
      "server { termination_grace_seconds: 0 drain_deadline_seconds: 1 }\n"
      "backends {\n  name: \"llm\"\n  base_url: \"",
      llm_base_url, "\"\n  model: \"fake-model\"\n  timeout_seconds: 2\n  max_retries: 0\n}\n");
}

}  // namespace ibgraphrag::gateway::testing

#endif  // IBGRAPHRAG_SERVICES_GATEWAY_TESTING_SMALL_SUITE_H_
