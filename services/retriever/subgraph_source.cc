#include "services/retriever/subgraph_source.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"

namespace ibgraphrag::retriever {

absl::StatusOr<CandidateSubgraph> InProcessSubgraphSource::Extract(const SubgraphRequest& request) {
  kgstore::SubgraphQuery query;
  query.seeds.assign(request.seed_ids.begin(), request.seed_ids.end());
  const int64_t n = store_->num_entities();
  std::vector<uint32_t> unknown;
  for (uint32_t id : request.seed_ids) {
    if (static_cast<int64_t>(id) >= n) unknown.push_back(id);
  }
  if (!unknown.empty()) {
    return absl::NotFoundError(absl::StrCat("unknown entity id(s) ", absl::StrJoin(unknown, ", "),
                                            " (snapshot has ", n, " entities)"));
  }
  if (!request.seed_external_ids.empty()) {
    IBGR_ASSIGN_OR_RETURN(std::vector<kgstore::EntityId> resolved,
                          store_->ResolveExternalIds(request.seed_external_ids));
    query.seeds.insert(query.seeds.end(), resolved.begin(), resolved.end());
  }
  query.max_hops = request.max_hops;
  query.max_triples = request.max_triples;
  query.max_fanout_per_node = request.max_fanout_per_node;
  IBGR_ASSIGN_OR_RETURN(kgstore::Subgraph sg, store_->ExtractSubgraph(query));
  CandidateSubgraph out;
  const size_t m = sg.triples.size();
  out.heads.resize(m);
  out.relations.resize(m);
  out.tails.resize(m);
  out.hops.resize(m);
  std::vector<bool> used;
  for (size_t i = 0; i < m; ++i) {
    const kgstore::SubgraphTriple& t = sg.triples[i];
    out.heads[i] = t.triple.head;
    out.relations[i] = t.triple.relation;
    out.tails[i] = t.triple.tail;
    out.hops[i] = static_cast<uint32_t>(t.hop);
    if (t.triple.relation >= used.size()) used.resize(t.triple.relation + 1, false);
    used[t.triple.relation] = true;
  }
  for (const kgstore::Relation& r : store_->relations()) {
    if (r.id < used.size() && used[r.id])
      out.relation_info.push_back({r.id, r.name, r.description});
  }
  out.resolved_seeds = query.seeds;
  out.truncated = sg.truncated;
  out.kg_version = absl::StrCat(store_->manifest().version);
  return out;
}

absl::StatusOr<std::vector<EntityInfo>> InProcessSubgraphSource::Describe(
    absl::Span<const uint32_t> ids, absl::Time) {
  std::vector<EntityInfo> out;
  out.reserve(ids.size());
  IBGR_RETURN_IF_ERROR(
      store_->VisitEntitySummaries(ids, [&out](const kgstore::EntitySummaryView& e) {
        out.push_back({e.id, std::string(e.external_id), std::string(e.name), std::string(e.type)});
      }));
  return out;
}

}  // namespace ibgraphrag::retriever
