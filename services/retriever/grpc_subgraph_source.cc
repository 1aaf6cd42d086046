#include "services/retriever/grpc_subgraph_source.h"

#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"
#include "common/status_macros.h"
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
  absl::StatusOr<CandidateSubgraph> out = ExtractOnce(request);
  if (out.ok() || !absl::IsInvalidArgument(out.status()) || request.allow_relations.empty()) {
    return out;
  }
  // A relation name from before a KG swap (KnownRelations answered from the old version): read
  // the names anew and retry once with those the KG still has; none left -> the first error.
  absl::Status refreshed = RefreshRelationNames(request.deadline);
  if (!refreshed.ok()) return out;
  SubgraphRequest retry = request;
  {
    absl::MutexLock lock(&mu_);
    retry.allow_relations.clear();
    for (const std::string& name : request.allow_relations) {
      if (relation_names_.contains(name)) retry.allow_relations.push_back(name);
    }
  }
  if (retry.allow_relations.empty() ||
      retry.allow_relations.size() == request.allow_relations.size()) {
    return out;
  }
  return ExtractOnce(retry);
}

absl::StatusOr<CandidateSubgraph> GrpcSubgraphSource::ExtractOnce(const SubgraphRequest& request) {
  pb::ExtractSubgraphRequest req;
  for (uint32_t id : request.seed_ids) req.add_seed_ids(id);
  for (const std::string& id : request.seed_external_ids) req.add_seed_external_ids(id);
  req.set_max_hops(static_cast<uint32_t>(request.max_hops));
  req.set_max_triples(static_cast<uint32_t>(request.max_triples));
  req.set_max_fanout_per_node(static_cast<uint32_t>(request.max_fanout_per_node));
  for (const std::string& name : request.allow_relations) req.add_allow_relations(name);
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
  absl::MutexLock lock(&mu_);
  seen_version_ = out.kg_version;
  return out;
}

absl::StatusOr<std::vector<std::string>> GrpcSubgraphSource::KnownRelations(
    absl::Span<const std::string> names, absl::Time deadline) {
  bool fresh = false;
  {
    absl::MutexLock lock(&mu_);
    fresh = !names_version_.empty() && (seen_version_.empty() || seen_version_ == names_version_);
  }
  if (!fresh) IBGR_RETURN_IF_ERROR(RefreshRelationNames(deadline));
  std::vector<std::string> known;
  absl::MutexLock lock(&mu_);
  for (const std::string& name : names) {
    if (relation_names_.contains(name)) known.push_back(name);
  }
  return known;
}

absl::Status GrpcSubgraphSource::RefreshRelationNames(absl::Time deadline) {
  grpc::ClientContext ctx;
  SetDeadline(deadline, &ctx);
  pb::StatsResponse resp;
  const grpc::Status status = stub_->Stats(&ctx, pb::StatsRequest(), &resp);
  if (!status.ok()) return common::FromGrpcStatus(status);
  absl::MutexLock lock(&mu_);
  relation_names_.clear();
  for (const auto& [name, count] : resp.triples_by_relation()) relation_names_.insert(name);
  names_version_ = resp.kg_version().empty() ? "unversioned" : resp.kg_version();
  seen_version_ = names_version_;
  return absl::OkStatus();
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

absl::StatusOr<std::vector<TripleSources>> GrpcSubgraphSource::DescribeTriples(
    absl::Span<const uint32_t> heads, absl::Span<const uint32_t> relations,
    absl::Span<const uint32_t> tails, absl::Time deadline) {
  std::vector<TripleSources> out(heads.size());
  if (heads.empty()) return out;
  pb::GetTripleProvenanceRequest req;
  pb::TripleColumns* cols = req.mutable_triples();
  cols->mutable_head()->Add(heads.begin(), heads.end());
  cols->mutable_relation()->Add(relations.begin(), relations.end());
  cols->mutable_tail()->Add(tails.begin(), tails.end());
  grpc::ClientContext ctx;
  SetDeadline(deadline, &ctx);
  pb::GetTripleProvenanceResponse resp;
  const grpc::Status status = stub_->GetTripleProvenance(&ctx, req, &resp);
  if (status.error_code() == grpc::StatusCode::UNIMPLEMENTED) return out;
  if (!status.ok()) return common::FromGrpcStatus(status);
  const pb::TripleColumns& got = resp.triples();
  std::vector<bool> missing(heads.size(), false);
  for (uint32_t i : resp.missing()) {
    if (i < missing.size()) missing[i] = true;
  }
  for (size_t i = 0; i < out.size() && i < static_cast<size_t>(got.provenance_size()); ++i) {
    if (missing[i]) continue;
    out[i].found = true;
    if (got.provenance(i) >= static_cast<uint32_t>(resp.provenance_size())) continue;
    for (uint32_t s : resp.provenance(got.provenance(i)).sources()) {
      if (s >= static_cast<uint32_t>(resp.source_refs_size())) continue;
      out[i].sources.push_back(resp.source_refs(s).name());
      out[i].licenses.push_back(resp.source_refs(s).license());
    }
    if (i < static_cast<size_t>(got.score_size())) out[i].score = got.score(i);
    if (i < static_cast<size_t>(got.note_size())) out[i].note = got.note(i);
  }
  return out;
}

}  // namespace ibgraphrag::retriever
