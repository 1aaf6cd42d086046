#include "services/gateway/shortest_path_evidence.h"

#include <grpcpp/client_context.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/client.h"
#include "common/grpc_status.h"
#include "common/status_macros.h"

namespace ibgraphrag::gateway {
namespace {

namespace pb = ::ibgraphrag::v1;

// The retriever's request defaults and limits (retriever.proto), so a request means the same
// here as there.
constexpr uint32_t kDefaultTopK = 100;
constexpr uint32_t kMaxTopK = 1000;
constexpr uint32_t kDefaultHops = 2;
constexpr uint32_t kMaxHops = 4;
constexpr uint32_t kDefaultMaxPaths = 10;
constexpr uint32_t kMaxPaths = 100;
// kgstore's ShortestPaths limits (kgstore.proto).
constexpr uint32_t kMaxPathLength = 6;
constexpr int kMaxPathEndpoints = 100;

uint32_t OrDefault(uint32_t value, uint32_t fallback, uint32_t limit) {
  return value == 0 ? fallback : std::min(value, limit);
}

// The evidence list being built: each triple once, with names, in rank order, at most `limit`.
class EvidenceList {
 public:
  EvidenceList(size_t limit, pb::RetrieveResponse* out) : limit_(limit), out_(out) {}

  template <typename Entities, typename Relations>
  void AddNames(const Entities& entities, const Relations& relations) {
    for (const pb::EntityRef& e : entities) entities_.emplace(e.id(), e);
    for (const pb::Relation& r : relations) relations_.emplace(r.id(), r);
  }

  // Index of the triple in the list, added when new; -1 when the list is full.
  int Add(uint32_t head, uint32_t relation, uint32_t tail, float score, uint32_t hop) {
    const auto key = std::make_tuple(head, relation, tail);
    if (auto it = index_.find(key); it != index_.end()) return it->second;
    if (full()) return -1;
    pb::EvidenceTriple* e = out_->add_triples();
    *e->mutable_head() = Ref(head);
    *e->mutable_tail() = Ref(tail);
    if (auto it = relations_.find(relation); it != relations_.end()) {
      e->set_relation(it->second.name());
      e->set_relation_description(it->second.description());
    }
    e->set_score(score);
    e->set_hop(hop);
    const int index = out_->triples_size() - 1;
    index_.emplace(key, index);
    return index;
  }

  bool full() const { return static_cast<size_t>(out_->triples_size()) >= limit_; }

  std::string Name(uint32_t id) const {
    auto it = entities_.find(id);
    return it == entities_.end() ? absl::StrCat("#", id) : it->second.name();
  }
  std::string RelationName(uint32_t id) const {
    auto it = relations_.find(id);
    return it == relations_.end() ? absl::StrCat("#", id) : it->second.name();
  }

 private:
  pb::EntityRef Ref(uint32_t id) const {
    if (auto it = entities_.find(id); it != entities_.end()) return it->second;
    pb::EntityRef ref;
    ref.set_id(id);
    return ref;
  }

  const size_t limit_;
  pb::RetrieveResponse* const out_;
  absl::flat_hash_map<uint32_t, pb::EntityRef> entities_;
  absl::flat_hash_map<uint32_t, pb::Relation> relations_;
  absl::flat_hash_map<std::tuple<uint32_t, uint32_t, uint32_t>, int> index_;
};

// "a -[rel]-> b <-[rel]- c", as the retriever renders its paths.
std::string RenderPath(const pb::Path& path, const EvidenceList& evidence) {
  std::string out;
  for (int i = 0; i < path.steps_size(); ++i) {
    const pb::PathStep& s = path.steps(i);
    if (i == 0) out = evidence.Name(s.reversed() ? s.tail() : s.head());
    if (s.reversed()) {
      absl::StrAppend(&out, " <-[", evidence.RelationName(s.relation()), "]- ",
                      evidence.Name(s.head()));
    } else {
      absl::StrAppend(&out, " -[", evidence.RelationName(s.relation()), "]-> ",
                      evidence.Name(s.tail()));
    }
  }
  return out;
}

// Adds the triples of `paths` (shortest first) to the evidence and the first `max_paths`
// distinct paths as reasoning paths. Both directions of a topic pair come back from kgstore;
// a path is kept once whichever way it was walked.
void AddPaths(const pb::ShortestPathsResponse& paths, uint32_t max_paths, EvidenceList* evidence,
              pb::RetrieveResponse* out) {
  evidence->AddNames(paths.entities(), paths.relations());
  absl::flat_hash_set<std::vector<int>> seen;
  for (const pb::Path& path : paths.paths()) {
    const int length = path.steps_size();
    const float score = 1.0f - 0.01f * static_cast<float>(length);
    std::vector<int> indices;
    for (int i = 0; i < length; ++i) {
      const pb::PathStep& s = path.steps(i);
      const uint32_t hop = static_cast<uint32_t>(std::min(i, length - 1 - i)) + 1;
      const int index = evidence->Add(s.head(), s.relation(), s.tail(), score, hop);
      if (index < 0) break;
      indices.push_back(index);
    }
    if (static_cast<int>(indices.size()) < length) break;  // evidence full
    std::vector<int> key = indices;
    std::sort(key.begin(), key.end());
    if (!seen.insert(std::move(key)).second ||
        static_cast<uint32_t>(out->paths_size()) >= max_paths) {
      continue;
    }
    pb::ReasoningPath* p = out->add_paths();
    for (int i = 0; i < length; ++i) {
      p->add_triple_indices(static_cast<uint32_t>(indices[i]));
      p->add_reversed(path.steps(i).reversed());
    }
    p->set_score(score);
    p->set_text(RenderPath(path, *evidence));
  }
}

// Adds the subgraph's triples (nearest hop first, as kgstore returns them) until full.
void AddNeighbourhood(const pb::ExtractSubgraphResponse& subgraph, EvidenceList* evidence) {
  evidence->AddNames(subgraph.entities(), subgraph.relations());
  const pb::TripleColumns& t = subgraph.triples();
  for (int i = 0; i < t.head_size() && !evidence->full(); ++i) {
    const uint32_t hop = i < t.hop_size() ? std::max<uint32_t>(t.hop(i), 1) : 1;
    evidence->Add(t.head(i), t.relation(i), t.tail(i), 0.5f / static_cast<float>(hop), hop);
  }
}

pb::ShortestPathsRequest PathsRequest(const std::vector<uint32_t>& topics, uint32_t hops,
                                      uint32_t top_k) {
  pb::ShortestPathsRequest request;
  request.mutable_source_ids()->Add(topics.begin(), topics.end());
  request.mutable_target_ids()->Add(topics.begin(), topics.end());
  request.set_max_length(std::min(2 * hops, kMaxPathLength));
  request.set_max_paths(top_k);
  request.set_entity_detail(pb::ENTITY_DETAIL_REFS);
  return request;
}

pb::ExtractSubgraphRequest SubgraphRequest(const std::vector<uint32_t>& topics, uint32_t hops,
                                           uint32_t top_k) {
  pb::ExtractSubgraphRequest request;
  request.mutable_seed_ids()->Add(topics.begin(), topics.end());
  request.set_max_hops(hops);
  request.set_max_triples(top_k);
  request.set_entity_detail(pb::ENTITY_DETAIL_REFS);
  return request;
}

// One kgstore call on behalf of `parent` (its request id travels along), ending by `deadline`.
template <typename Call>
absl::Status CallKgStore(const grpc::ServerContextBase& parent, absl::Time deadline, Call call) {
  std::unique_ptr<grpc::ClientContext> context =
      common::MakeChildContext(parent, deadline - absl::Now());
  return common::FromGrpcStatus(call(context.get()));
}

}  // namespace

ShortestPathEvidence::ShortestPathEvidence(std::shared_ptr<grpc::Channel> kgstore)
    : kgstore_(pb::KgStoreService::NewStub(std::move(kgstore))) {}

absl::Status ShortestPathEvidence::Fetch(const grpc::ServerContextBase& parent, absl::Time deadline,
                                         const pb::RetrieveRequest& request,
                                         pb::RetrieveResponse* response) const {
  std::vector<uint32_t> topics;
  absl::flat_hash_set<uint32_t> seen;
  for (uint32_t id : request.topic_entity_ids()) {
    if (seen.insert(id).second && static_cast<int>(topics.size()) < kMaxPathEndpoints) {
      topics.push_back(id);
    }
  }
  if (topics.empty()) return absl::InvalidArgumentError("topic_entity_ids: none given");
  const uint32_t top_k = OrDefault(request.top_k(), kDefaultTopK, kMaxTopK);
  const uint32_t hops = OrDefault(request.max_hops(), kDefaultHops, kMaxHops);
  const uint32_t max_paths = OrDefault(request.max_paths(), kDefaultMaxPaths, kMaxPaths);
  EvidenceList evidence(top_k, response);

  // 1. Shortest topic-to-topic paths, within the retriever's reach of max_hops from each end.
  if (topics.size() >= 2) {
    pb::ShortestPathsResponse paths;
    IBGR_RETURN_IF_ERROR(CallKgStore(parent, deadline, [&](grpc::ClientContext* context) {
      return kgstore_->ShortestPaths(context, PathsRequest(topics, hops, top_k), &paths);
    }));
    response->set_kg_version(paths.kg_version());
    AddPaths(paths, max_paths, &evidence, response);
  }
  // 2. The topics' neighbourhood fills the rest, nearest hop first.
  if (!evidence.full()) {
    pb::ExtractSubgraphResponse subgraph;
    IBGR_RETURN_IF_ERROR(CallKgStore(parent, deadline, [&](grpc::ClientContext* context) {
      return kgstore_->ExtractSubgraph(context, SubgraphRequest(topics, hops, top_k), &subgraph);
    }));
    response->set_kg_version(subgraph.kg_version());
    AddNeighbourhood(subgraph, &evidence);
  }
  return absl::OkStatus();
}

}  // namespace ibgraphrag::gateway
