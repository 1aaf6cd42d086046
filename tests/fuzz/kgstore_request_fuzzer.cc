// kgstore's gRPC methods as a caller reaches them: the first fuzz byte picks the method
// (GetEntities, Neighbors, ExtractSubgraph, ShortestPaths, GetTripleProvenance, or one Ingest
// batch), the rest is its binary request. The read methods run on KgStoreServiceImpl over the
// hand-made KG of kg_store_test_util.h in a real RocksDB snapshot. An Ingest batch is mapped as
// the service maps it (IngestBatchFromProto) and checked with KgStore::CheckIngest, Ingest's
// checks without the write, so millions of inputs do not grow the store.
//
// Invariants: a refusal is INVALID_ARGUMENT, NOT_FOUND or FAILED_PRECONDITION with a message;
// an answer keeps its limits (columns of one length, ids inside the KG, at most the requested
// or default number of triples, paths and hops).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/test_util/temp_dir.h"
#include "grpcpp/server_context.h"
#include "ibgraphrag/v1/kgstore.pb.h"
#include "services/kgstore/kg_store.h"
#include "services/kgstore/kg_store_test_util.h"
#include "services/kgstore/kgstore_service_impl.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

namespace pb = ::ibgraphrag::v1;
namespace kgstore = ::ibgraphrag::kgstore;
namespace kt = ::ibgraphrag::kgstore::testing;
using ::ibgraphrag::fuzz::Check;

constexpr uint32_t kEntities = kt::kIsolated + 1;  // SmallKg's entity and relation counts
constexpr uint32_t kRelations = kt::kResembles + 1;

// Built once per process: the scratch folder, the read-only store and the service over it.
struct Service {
  ibgraphrag::common::test_util::ScratchDir dir{"fuzz_kgstore_request"};
  kgstore::StoreHolder holder;
  std::unique_ptr<kgstore::KgStoreServiceImpl> impl;

  Service() {
    kgstore::KgStoreOptions options;
    options.read_only = true;  // as replicas serve; CheckIngest must work on it too
    std::shared_ptr<kgstore::KgStore> store = kt::WriteAndOpen(kt::SmallKg(), dir.path(), options);
    Check(store != nullptr, "the fuzzer's KG snapshot did not open");
    holder.Swap(std::move(store), 1);
    impl = std::make_unique<kgstore::KgStoreServiceImpl>(&holder);
  }
};

bool CleanRefusal(absl::StatusCode code) {
  return code == absl::StatusCode::kInvalidArgument || code == absl::StatusCode::kNotFound ||
         code == absl::StatusCode::kFailedPrecondition;
}

// Whether the call answered; aborts on a refusal of the wrong kind.
bool Answered(const grpc::Status& status, const char* method) {
  if (status.ok()) return true;
  Check(CleanRefusal(static_cast<absl::StatusCode>(status.error_code())),
        std::string(method) + " refused with a code other than INVALID_ARGUMENT, NOT_FOUND or " +
            "FAILED_PRECONDITION: " + status.error_message());
  Check(!status.error_message().empty(), std::string(method) + " refused without a message");
  return false;
}

// Columns of one length, ids inside the KG; returns the triple count.
int CheckColumns(const pb::TripleColumns& t, const char* method) {
  const int n = t.head_size();
  Check(t.relation_size() == n && t.tail_size() == n,
        std::string(method) + ": head/relation/tail columns differ in length");
  Check(t.hop_size() == 0 || t.hop_size() == n, std::string(method) + ": hop column length");
  for (int i = 0; i < n; ++i) {
    Check(t.head(i) < kEntities && t.tail(i) < kEntities && t.relation(i) < kRelations,
          std::string(method) + ": a triple id outside the KG");
  }
  return n;
}

template <typename Request>
bool Parse(const uint8_t* data, size_t size, Request* request) {
  return request->ParseFromArray(data, static_cast<int>(size));
}

// Parses `request` from the bytes and calls `method` of the service; true when it answered.
template <typename Request, typename Response>
bool Call(Service& s,
          grpc::Status (kgstore::KgStoreServiceImpl::*method)(grpc::ServerContext*, const Request*,
                                                              Response*),
          const char* name, const uint8_t* data, size_t size, Request* request,
          Response* response) {
  if (!Parse(data, size, request)) return false;
  grpc::ServerContext context;
  return Answered((s.impl.get()->*method)(&context, request, response), name);
}

void FuzzGetEntities(Service& s, const uint8_t* data, size_t size) {
  pb::GetEntitiesRequest request;
  pb::GetEntitiesResponse response;
  if (!Call(s, &kgstore::KgStoreServiceImpl::GetEntities, "GetEntities", data, size, &request,
            &response)) {
    return;
  }
  Check(response.entities_size() <= request.ids_size() + request.external_ids_size(),
        "GetEntities returned more entities than were asked for");
  for (const pb::Entity& e : response.entities()) {
    Check(e.id() < kEntities, "GetEntities returned an id outside the KG");
  }
}

void FuzzNeighbors(Service& s, const uint8_t* data, size_t size) {
  pb::NeighborsRequest request;
  pb::NeighborsResponse response;
  if (!Call(s, &kgstore::KgStoreServiceImpl::Neighbors, "Neighbors", data, size, &request,
            &response)) {
    return;
  }
  const uint32_t limit = request.limit() == 0 ? kgstore::kDefaultNeighborLimit : request.limit();
  Check(static_cast<uint32_t>(CheckColumns(response.triples(), "Neighbors")) <= limit,
        "Neighbors returned more than limit triples");
}

void FuzzExtractSubgraph(Service& s, const uint8_t* data, size_t size) {
  pb::ExtractSubgraphRequest request;
  pb::ExtractSubgraphResponse response;
  if (!Call(s, &kgstore::KgStoreServiceImpl::ExtractSubgraph, "ExtractSubgraph", data, size,
            &request, &response)) {
    return;
  }
  const uint32_t max_triples =
      request.max_triples() == 0 ? kgstore::kDefaultSubgraphTriples : request.max_triples();
  const uint32_t max_hops =
      request.max_hops() == 0 ? kgstore::kDefaultSubgraphHops : request.max_hops();
  Check(static_cast<uint32_t>(CheckColumns(response.triples(), "ExtractSubgraph")) <= max_triples,
        "ExtractSubgraph returned more than max_triples triples");
  for (uint32_t hop : response.entity_hops()) {
    Check(hop <= max_hops, "ExtractSubgraph reported an entity beyond max_hops");
  }
  for (uint32_t id : response.resolved_seed_ids()) {
    Check(id < kEntities, "ExtractSubgraph resolved a seed outside the KG");
  }
}

void FuzzShortestPaths(Service& s, const uint8_t* data, size_t size) {
  pb::ShortestPathsRequest request;
  pb::ShortestPathsResponse response;
  if (!Call(s, &kgstore::KgStoreServiceImpl::ShortestPaths, "ShortestPaths", data, size, &request,
            &response)) {
    return;
  }
  const int max_paths = request.max_paths() == 0 ? kgstore::kDefaultMaxPaths : request.max_paths();
  const int max_length =
      request.max_length() == 0 ? kgstore::kDefaultPathLength : request.max_length();
  Check(response.paths_size() <= max_paths, "ShortestPaths returned more than max_paths paths");
  for (const pb::Path& path : response.paths()) {
    Check(path.steps_size() >= 1 && path.steps_size() <= max_length,
          "ShortestPaths returned a path outside 1..max_length steps");
    for (const pb::PathStep& step : path.steps()) {
      Check(step.head() < kEntities && step.tail() < kEntities && step.relation() < kRelations,
            "ShortestPaths: a step id outside the KG");
    }
  }
}

void FuzzTripleProvenance(Service& s, const uint8_t* data, size_t size) {
  pb::GetTripleProvenanceRequest request;
  pb::GetTripleProvenanceResponse response;
  if (!Call(s, &kgstore::KgStoreServiceImpl::GetTripleProvenance, "GetTripleProvenance", data, size,
            &request, &response)) {
    return;
  }
  // The request's triples come back in order, the ones the KG lacks listed in `missing`.
  const pb::TripleColumns& t = response.triples();
  const int asked = request.triples().head_size();
  Check(t.head_size() == asked && t.relation_size() == asked && t.tail_size() == asked &&
            t.provenance_size() == asked,
        "GetTripleProvenance did not answer each triple asked for once");
  std::vector<bool> missing(asked, false);
  for (uint32_t index : response.missing()) {
    Check(index < static_cast<uint32_t>(asked), "GetTripleProvenance: a missing index too large");
    missing[index] = true;
  }
  for (int i = 0; i < asked; ++i) {
    Check(t.provenance(i) < static_cast<uint32_t>(response.provenance_size()),
          "GetTripleProvenance: a provenance index outside the groups returned");
    Check(missing[i] ||
              (t.head(i) < kEntities && t.tail(i) < kEntities && t.relation(i) < kRelations),
          "GetTripleProvenance found a triple with ids outside the KG");
  }
}

void FuzzIngestBatch(Service& s, const uint8_t* data, size_t size) {
  pb::IngestRequest request;
  if (!Parse(data, size, &request)) return;
  const absl::Status checked = s.holder.Get()->CheckIngest(kgstore::IngestBatchFromProto(request));
  if (checked.ok()) return;
  Check(CleanRefusal(checked.code()) && !checked.message().empty(),
        "an Ingest batch was refused with a code other than INVALID_ARGUMENT, NOT_FOUND or "
        "FAILED_PRECONDITION, or without a message: " +
            checked.ToString());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Service service;  // once per process; its scratch folder goes at exit
  if (size == 0) return 0;
  const uint8_t* body = data + 1;
  const size_t body_size = size - 1;
  switch (data[0] % 6) {
    case 0:
      FuzzGetEntities(service, body, body_size);
      break;
    case 1:
      FuzzNeighbors(service, body, body_size);
      break;
    case 2:
      FuzzExtractSubgraph(service, body, body_size);
      break;
    case 3:
      FuzzShortestPaths(service, body, body_size);
      break;
    case 4:
      FuzzTripleProvenance(service, body, body_size);
      break;
    default:
      FuzzIngestBatch(service, body, body_size);
      break;
  }
  return 0;
}
