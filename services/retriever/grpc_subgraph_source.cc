#include "services/retriever/grpc_subgraph_source.h"

#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"
#include "grpcpp/client_context.h"

namespace ibgraphrag::retriever {
namespace {

namespace pb = ::ibgraphrag::v1;

void SetDeadline(absl::Time deadline, grpc::ClientContext* ctx) {
  if (deadline != absl::InfiniteFuture()) ctx->set_deadline(absl::ToChronoTime(deadline));
}

}  // namespace

GrpcSubgraphSource::GrpcSubgraphSource(std::shared_ptr<grpc::Channel> channel)
    : stub_(pb::KgStoreService::NewStub(std::move(channel))) {}

absl::StatusOr<CandidateSubgraph> GrpcSubgraphSource::Extract(const SubgraphRequest& request) {
  pb::ExtractSubgraphRequest req;
  for (uint32_t id : request.seed_ids) req.add_seed_ids(id);
  for (const std::string& id : request.seed_external_ids) req.add_seed_external_ids(id);
  req.set_max_hops(static_cast<uint32_t>(request.max_hops));
  req.set_max_triples(static_cast<uint32_t>(request.max_triples));
  req.set_max_fanout_per_node(static_cast<uint32_t>(request.max_fanout_per_node));
  req.set_entity_detail(pb::ENTITY_DETAIL_IDS);
  grpc::ClientContext ctx;
  SetDeadline(request.deadline, &ctx);
  pb::ExtractSubgraphResponse resp;
  const grpc::Status status = stub_->ExtractSubgraph(&ctx, req, &resp);
  if (!status.ok()) return common::FromGrpcStatus(status);
  CandidateSubgraph out;
  const pb::TripleColumns& cols = resp.triples();
  if (cols.relation_size() != cols.head_size() || cols.tail_size() != cols.head_size()) {
    return absl::InternalError("kgstore: ExtractSubgraph returned ragged triple columns");
  }
  out.heads.assign(cols.head().begin(), cols.head().end());
  out.relations.assign(cols.relation().begin(), cols.relation().end());
  out.tails.assign(cols.tail().begin(), cols.tail().end());
  out.hops.assign(cols.hop().begin(), cols.hop().end());
  out.hops.resize(out.heads.size(), 1);
  out.resolved_seeds.assign(resp.resolved_seed_ids().begin(), resp.resolved_seed_ids().end());
  for (const pb::Relation& r : resp.relations()) {
    out.relation_info.push_back({r.id(), r.name(), r.description()});
  }
  out.truncated = resp.truncated();
  out.kg_version = resp.kg_version();
  return out;
}

absl::StatusOr<std::vector<EntityInfo>> GrpcSubgraphSource::Describe(absl::Span<const uint32_t> ids,
                                                                     absl::Time deadline) {
  std::vector<EntityInfo> out;
  if (ids.empty()) return out;
  pb::GetEntitiesRequest req;
  for (uint32_t id : ids) req.add_ids(id);
  grpc::ClientContext ctx;
  SetDeadline(deadline, &ctx);
  pb::GetEntitiesResponse resp;
  const grpc::Status status = stub_->GetEntities(&ctx, req, &resp);
  if (!status.ok()) return common::FromGrpcStatus(status);
  out.reserve(resp.entities_size());
  for (const pb::Entity& e : resp.entities()) {
    out.push_back({e.id(), e.external_id(), e.name(), e.type()});
  }
  return out;
}

}  // namespace ibgraphrag::retriever
