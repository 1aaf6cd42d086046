// gRPC face of KgStore: translates ibgraphrag.v1 protos to KgStore queries and back, applies the
// API's defaults ("0 means ...") and converts every result with the one ToGrpcStatus. Limits are
// enforced by KgStore itself so the library and the service reject the same requests.
#ifndef IBGRAPHRAG_SERVICES_KGSTORE_KGSTORE_SERVICE_IMPL_H_
#define IBGRAPHRAG_SERVICES_KGSTORE_KGSTORE_SERVICE_IMPL_H_

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/servable_holder.h"
#include "ibgraphrag/v1/kgstore.grpc.pb.h"
#include "services/kgstore/kg_store.h"

namespace ibgraphrag::kgstore {

// API defaults for request fields left 0 (documented in kgstore.proto).
inline constexpr int kDefaultNeighborLimit = 100;
inline constexpr int kDefaultSubgraphHops = 2;
inline constexpr int kDefaultSubgraphTriples = 10000;
inline constexpr int kDefaultPathLength = 3;
inline constexpr int kDefaultMaxPaths = 10;
inline constexpr int kMaxGetEntities = 10000;
inline constexpr int kMaxTripleProvenance = 10000;

// The snapshot being served (common/servable_holder.h): a request keeps the store it started
// with alive through its shared_ptr; a replaced store is closed off the request path.
using StoreHolder = common::ServableHolder<KgStore>;

// One IngestRequest of the Ingest stream as the store's batch (no checks: KgStore::Ingest and
// KgStore::CheckIngest make them).
IngestBatch IngestBatchFromProto(const ibgraphrag::v1::IngestRequest& request);

class KgStoreServiceImpl final : public ibgraphrag::v1::KgStoreService::Service {
 public:
  // `holder` must outlive the service.
  explicit KgStoreServiceImpl(const StoreHolder* holder) : holder_(holder) {}

  grpc::Status GetEntities(grpc::ServerContext* context,
                           const ibgraphrag::v1::GetEntitiesRequest* request,
                           ibgraphrag::v1::GetEntitiesResponse* response) override;
  grpc::Status Neighbors(grpc::ServerContext* context,
                         const ibgraphrag::v1::NeighborsRequest* request,
                         ibgraphrag::v1::NeighborsResponse* response) override;
  grpc::Status ExtractSubgraph(grpc::ServerContext* context,
                               const ibgraphrag::v1::ExtractSubgraphRequest* request,
                               ibgraphrag::v1::ExtractSubgraphResponse* response) override;
  grpc::Status ShortestPaths(grpc::ServerContext* context,
                             const ibgraphrag::v1::ShortestPathsRequest* request,
                             ibgraphrag::v1::ShortestPathsResponse* response) override;
  grpc::Status Ingest(grpc::ServerContext* context,
                      grpc::ServerReader<ibgraphrag::v1::IngestRequest>* reader,
                      ibgraphrag::v1::IngestResponse* response) override;
  grpc::Status Stats(grpc::ServerContext* context, const ibgraphrag::v1::StatsRequest* request,
                     ibgraphrag::v1::StatsResponse* response) override;
  grpc::Status GetTripleProvenance(grpc::ServerContext* context,
                                   const ibgraphrag::v1::GetTripleProvenanceRequest* request,
                                   ibgraphrag::v1::GetTripleProvenanceResponse* response) override;

 private:
  // The current store, or UNAVAILABLE while none is loaded.
  absl::StatusOr<std::shared_ptr<KgStore>> Store() const;

  const StoreHolder* holder_;
};

}  // namespace ibgraphrag::kgstore

#endif  // IBGRAPHRAG_SERVICES_KGSTORE_KGSTORE_SERVICE_IMPL_H_
