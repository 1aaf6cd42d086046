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
  for (const std::string& name : request.allow_relations) {
    absl::StatusOr<kgstore::Relation> relation = store_->FindRelation(name);
    if (!relation.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("allow_relations: unknown relation \"", name, "\""));
    }
    query.allow_relations.push_back(relation->id);
  }
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
  store_->VisitRelations([&](const kgstore::Relation& r) {
    if (r.id < used.size() && used[r.id]) {
      out.relation_info.push_back({r.id, r.name, r.description});
    }
  });
  out.resolved_seeds = query.seeds;
  out.truncated = sg.truncated;
  out.kg_version = absl::StrCat(store_->manifest().version);
  return out;
}

absl::StatusOr<std::vector<std::string>> SubgraphSource::KnownRelations(
    absl::Span<const std::string>, absl::Time) {
  return std::vector<std::string>();
}

absl::StatusOr<std::vector<std::string>> InProcessSubgraphSource::KnownRelations(
    absl::Span<const std::string> names, absl::Time) {
  std::vector<std::string> known;
  for (const std::string& name : names) {
    if (store_->FindRelation(name).ok()) known.push_back(name);
  }
  return known;
}

absl::StatusOr<std::vector<TripleSources>> SubgraphSource::DescribeTriples(
    absl::Span<const uint32_t> heads, absl::Span<const uint32_t>, absl::Span<const uint32_t>,
    absl::Time) {
  return std::vector<TripleSources>(heads.size());
}

absl::StatusOr<std::vector<TripleSources>> InProcessSubgraphSource::DescribeTriples(
    absl::Span<const uint32_t> heads, absl::Span<const uint32_t> relations,
    absl::Span<const uint32_t> tails, absl::Time) {
  if (relations.size() != heads.size() || tails.size() != heads.size()) {
    return absl::InvalidArgumentError("DescribeTriples: head/relation/tail lengths differ");
  }
  std::vector<kgstore::Triple> triples(heads.size());
  for (size_t i = 0; i < heads.size(); ++i) {
    triples[i] = kgstore::Triple{heads[i], relations[i], tails[i], 0};
  }
  IBGR_ASSIGN_OR_RETURN(std::vector<kgstore::TripleAnnotation> annotations,
                        store_->GetTripleAnnotations(triples));
  std::vector<TripleSources> out(heads.size());
  // One lock for both tables: read apart, they could disagree after a concurrent ingest.
  store_->VisitProvenanceTables([&](const std::vector<kgstore::SourceInfo>& sources,
                                    const std::vector<std::vector<kgstore::SourceId>>& groups) {
    for (size_t i = 0; i < annotations.size(); ++i) {
      kgstore::TripleAnnotation& a = annotations[i];
      if (!a.found) continue;
      out[i].found = true;
      if (a.provenance >= groups.size()) continue;
      for (kgstore::SourceId s : groups[a.provenance]) {
        if (s >= sources.size()) continue;  // a validated store never has one
        out[i].sources.push_back(sources[s].name);
        out[i].licenses.push_back(sources[s].license);
      }
      out[i].score = a.score;
      out[i].note = std::move(a.note);
    }
  });
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

absl::StatusOr<std::shared_ptr<InProcessSubgraphSource>> ServedSnapshotSubgraphSource::Current()
    const {
  std::shared_ptr<kgstore::KgStore> store = holder_->Get();
  if (store == nullptr) return absl::UnavailableError("no KG snapshot loaded yet");
  return std::make_shared<InProcessSubgraphSource>(std::move(store));
}

std::shared_ptr<SubgraphSource> ServedSnapshotSubgraphSource::PinSnapshot() {
  absl::StatusOr<std::shared_ptr<InProcessSubgraphSource>> current = Current();
  // None loaded: unpinned, so each call answers UNAVAILABLE itself.
  return current.ok() ? *std::move(current) : nullptr;
}

absl::StatusOr<CandidateSubgraph> ServedSnapshotSubgraphSource::Extract(
    const SubgraphRequest& request) {
  IBGR_ASSIGN_OR_RETURN(std::shared_ptr<InProcessSubgraphSource> current, Current());
  return current->Extract(request);
}

absl::StatusOr<std::vector<EntityInfo>> ServedSnapshotSubgraphSource::Describe(
    absl::Span<const uint32_t> ids, absl::Time deadline) {
  IBGR_ASSIGN_OR_RETURN(std::shared_ptr<InProcessSubgraphSource> current, Current());
  return current->Describe(ids, deadline);
}

absl::StatusOr<std::vector<std::string>> ServedSnapshotSubgraphSource::KnownRelations(
    absl::Span<const std::string> names, absl::Time deadline) {
  IBGR_ASSIGN_OR_RETURN(std::shared_ptr<InProcessSubgraphSource> current, Current());
  return current->KnownRelations(names, deadline);
}

absl::StatusOr<std::vector<TripleSources>> ServedSnapshotSubgraphSource::DescribeTriples(
    absl::Span<const uint32_t> heads, absl::Span<const uint32_t> relations,
    absl::Span<const uint32_t> tails, absl::Time deadline) {
  IBGR_ASSIGN_OR_RETURN(std::shared_ptr<InProcessSubgraphSource> current, Current());
  return current->DescribeTriples(heads, relations, tails, deadline);
}

}  // namespace ibgraphrag::retriever
