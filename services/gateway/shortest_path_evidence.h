// ShortestPathEvidence: the gateway's evidence when the retriever fails, asked of kgstore over
// gRPC (ShortestPaths, then ExtractSubgraph) so the gateway needs none of the retriever's code
// (LibTorch, FAISS, RocksDB). It ranks as the retriever's SCORING_MODE_SHORTEST_PATH does:
// triples on shortest topic-to-topic paths first (score 1 - 0.01 x path length), then the
// topics' neighbourhood nearest hop first (score 0.5 / hop), at most top_k triples.
#ifndef IBGRAPHRAG_SERVICES_GATEWAY_SHORTEST_PATH_EVIDENCE_H_
#define IBGRAPHRAG_SERVICES_GATEWAY_SHORTEST_PATH_EVIDENCE_H_

#include <grpcpp/channel.h>
#include <grpcpp/server_context.h>

#include <memory>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "ibgraphrag/v1/kgstore.grpc.pb.h"
#include "ibgraphrag/v1/retriever.pb.h"

namespace ibgraphrag::gateway {

class ShortestPathEvidence {
 public:
  explicit ShortestPathEvidence(std::shared_ptr<grpc::Channel> kgstore);

  // Fills `response` (triples, paths, kg_version) for the retriever request `request`
  // (topic_entity_ids, top_k, max_hops, max_paths; 0 = the retriever's defaults). Calls carry
  // `parent`'s request id and end by `deadline`. The kgstore call's status on failure.
  absl::Status Fetch(const grpc::ServerContextBase& parent, absl::Time deadline,
                     const ibgraphrag::v1::RetrieveRequest& request,
                     ibgraphrag::v1::RetrieveResponse* response) const;

 private:
  std::unique_ptr<ibgraphrag::v1::KgStoreService::Stub> kgstore_;
};

}  // namespace ibgraphrag::gateway

#endif  // IBGRAPHRAG_SERVICES_GATEWAY_SHORTEST_PATH_EVIDENCE_H_
