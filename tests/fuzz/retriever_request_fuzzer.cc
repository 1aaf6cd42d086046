// The retriever's gRPC methods as a caller reaches them, end to end: the first fuzz byte picks
// Retrieve or ScoreTriples, the rest is the binary request. They run on RetrieverServiceImpl
// over the real pieces: the hand-made KG of kg_store_test_util.h in a RocksDB snapshot read in
// process, and a published two-variant model (residual and plain scorers) loaded from disk. So
// the request checks, the subgraph extraction, ontology expansion, scoring in all three modes
// and path building all see the fuzzed ids, limits, modes and variants.
//
// Invariants: a refusal is INVALID_ARGUMENT, NOT_FOUND or FAILED_PRECONDITION with a message;
// an answer keeps its limits (at most top_k triples, ids inside the KG, paths indexing the
// returned triples, finite scores, one score per triple asked).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "common/test_util/temp_dir.h"
#include "grpcpp/server_context.h"
#include "ibgraphrag/v1/retriever.pb.h"
#include "services/kgstore/kg_store_test_util.h"
#include "services/retriever/alignment_embedder.h"
#include "services/retriever/model_bundle.h"
#include "services/retriever/retriever.h"
#include "services/retriever/retriever_service_impl.h"
#include "services/retriever/retriever_test_util.h"
#include "services/retriever/subgraph_source.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

namespace pb = ::ibgraphrag::v1;
namespace kt = ::ibgraphrag::kgstore::testing;
namespace retriever = ::ibgraphrag::retriever;
using ::ibgraphrag::fuzz::Check;
using ::ibgraphrag::fuzz::CheckOk;

constexpr uint32_t kEntities = kt::kIsolated + 1;  // SmallKg's entity count

// Built once per process: the scratch folder, the store, the model and the service over them.
struct Service {
  ibgraphrag::common::test_util::ScratchDir dir{"fuzz_retriever_request"};
  std::unique_ptr<retriever::Retriever> core;
  std::unique_ptr<retriever::RetrieverServiceImpl> impl;

  Service() {
    std::shared_ptr<ibgraphrag::kgstore::KgStore> store =
        kt::WriteAndOpen(kt::SmallKg(), dir.path());
    Check(store != nullptr, "the fuzzer's KG snapshot did not open");
    retriever::testing::PublishTwoVariantTestVersion(dir.path(), kt::SmallKg());
    retriever::RetrieverModel::Options model_options;
    model_options.device = "cpu";
    auto model =
        retriever::RetrieverModel::Load(retriever::RetrieverVersionDir(dir.path(), 1),
                                        model_options, retriever::HashNgramEmbedder(32).value());
    CheckOk(model.status(), "the fuzzer's retriever model did not load");
    core = std::make_unique<retriever::Retriever>(
        retriever::Retriever::Options{},
        std::make_shared<retriever::InProcessSubgraphSource>(std::move(store)), *model);
    impl = std::make_unique<retriever::RetrieverServiceImpl>(core.get());
  }
};

void CheckRefusal(const grpc::Status& status, const char* method) {
  const grpc::StatusCode code = status.error_code();
  Check(code == grpc::StatusCode::INVALID_ARGUMENT || code == grpc::StatusCode::NOT_FOUND ||
            code == grpc::StatusCode::FAILED_PRECONDITION,
        std::string(method) +
            " refused with a code other than INVALID_ARGUMENT, NOT_FOUND or "
            "FAILED_PRECONDITION: " +
            status.error_message());
  Check(!status.error_message().empty(), std::string(method) + " refused without a message");
}

void CheckEntity(const pb::EntityRef& ref) {
  Check(ref.id() < kEntities, "an evidence entity outside the KG was returned");
}

void CheckRetrieveAnswer(const pb::RetrieveRequest& request, const pb::RetrieveResponse& response) {
  const int top_k = request.top_k() == 0 ? retriever::kDefaultTopK : request.top_k();
  Check(response.triples_size() <= top_k, "Retrieve returned more than top_k triples");
  for (const pb::EvidenceTriple& triple : response.triples()) {
    CheckEntity(triple.head());
    CheckEntity(triple.tail());
    Check(!triple.relation().empty(), "an evidence triple without a relation name");
    Check(std::isfinite(triple.score()), "an evidence triple with a non-finite score");
    Check(triple.licenses_size() == triple.sources_size(), "sources and licences differ in count");
  }
  for (const pb::ReasoningPath& path : response.paths()) {
    for (uint32_t index : path.triple_indices()) {
      Check(index < static_cast<uint32_t>(response.triples_size()),
            "a reasoning path indexes a triple that was not returned");
    }
    Check(path.reversed_size() == 0 || path.reversed_size() == path.triple_indices_size(),
          "a path's reversed flags do not match its triples");
  }
  for (uint32_t id : response.topic_entity_ids()) {
    Check(id < kEntities, "a topic entity outside the KG was reported");
  }
}

void FuzzRetrieve(Service& service, const uint8_t* data, size_t size) {
  pb::RetrieveRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return;
  pb::RetrieveResponse response;
  const grpc::Status status =
      service.impl->RetrieveDirect(ibgraphrag::common::DirectCall{}, request, &response);
  if (!status.ok()) return CheckRefusal(status, "Retrieve");
  CheckRetrieveAnswer(request, response);
}

void FuzzScoreTriples(Service& service, const uint8_t* data, size_t size) {
  pb::ScoreTriplesRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return;
  grpc::ServerContext context;
  pb::ScoreTriplesResponse response;
  const grpc::Status status = service.impl->ScoreTriples(&context, &request, &response);
  if (!status.ok()) return CheckRefusal(status, "ScoreTriples");
  Check(response.scores_size() == request.triples_size(), "ScoreTriples: one score per triple");
  for (float score : response.scores()) {
    Check(std::isfinite(score), "ScoreTriples returned a non-finite score");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Service service;  // once per process; its scratch folder goes at exit
  if (size == 0) return 0;
  if (data[0] % 2 == 0) {
    FuzzRetrieve(service, data + 1, size - 1);
  } else {
    FuzzScoreTriples(service, data + 1, size - 1);
  }
  return 0;
}
