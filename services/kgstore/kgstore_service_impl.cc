#include "services/kgstore/kgstore_service_impl.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/grpc_status.h"
#include "common/status_macros.h"

namespace ibgraphrag::kgstore {
namespace {

namespace pb = ::ibgraphrag::v1;
using common::ToGrpcStatus;
using ::google::protobuf::RepeatedField;
using ::google::protobuf::RepeatedPtrField;

std::string VersionOf(const KgStore& store) { return absl::StrCat(store.manifest().version); }

// Internal ids plus resolved external ids, in that order. `field` names the request field pair in
// errors.
absl::StatusOr<std::vector<EntityId>> ResolveEntities(const KgStore& store,
                                                      const RepeatedField<uint32_t>& ids,
                                                      const RepeatedPtrField<std::string>& external,
                                                      absl::string_view field) {
  std::vector<EntityId> out(ids.begin(), ids.end());
  if (!external.empty()) {
    std::vector<std::string> names(external.begin(), external.end());
    auto resolved = store.ResolveExternalIds(names);
    if (!resolved.ok()) {
      return absl::Status(resolved.status().code(),
                          absl::StrCat(field, ": ", resolved.status().message()));
    }
    out.insert(out.end(), resolved->begin(), resolved->end());
  }
  const int64_t n = store.num_entities();
  std::vector<EntityId> unknown;
  for (EntityId id : ids) {
    if (static_cast<int64_t>(id) >= n) unknown.push_back(id);
  }
  if (!unknown.empty()) {
    return absl::NotFoundError(absl::StrCat(field, ": unknown entity id(s) ",
                                            absl::StrJoin(unknown, ", "), " (snapshot has ", n,
                                            " entities)"));
  }
  return out;
}

absl::StatusOr<std::vector<RelationId>> ResolveRelations(const KgStore& store,
                                                         const RepeatedPtrField<std::string>& names,
                                                         absl::string_view field) {
  std::vector<RelationId> out;
  out.reserve(names.size());
  for (const std::string& name : names) {
    auto relation = store.FindRelation(name);
    if (!relation.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": unknown relation \"", name, "\" (see Stats for the names)"));
    }
    out.push_back(relation->id);
  }
  return out;
}

// Adds every relation flagged in `used` to `out`.
void AddRelations(const std::vector<Relation>& relations, const std::vector<bool>& used,
                  RepeatedPtrField<pb::Relation>* out) {
  for (const Relation& r : relations) {
    if (r.id >= used.size() || !used[r.id]) continue;
    pb::Relation* p = out->Add();
    p->set_id(r.id);
    p->set_name(r.name);
    p->set_head_type(r.head_type);
    p->set_tail_type(r.tail_type);
    p->set_description(r.description);
  }
}

absl::Status AddEntityRefs(const KgStore& store, absl::Span<const EntityId> ids,
                           RepeatedPtrField<pb::EntityRef>* out) {
  out->Reserve(out->size() + static_cast<int>(ids.size()));
  return store.VisitEntitySummaries(ids, [out](const EntitySummaryView& e) {
    pb::EntityRef* ref = out->Add();
    ref->set_id(e.id);
    ref->set_external_id(std::string(e.external_id));
    ref->set_name(std::string(e.name));
    ref->set_type(std::string(e.type));
  });
}

bool WantRefs(pb::EntityDetail detail) { return detail != pb::ENTITY_DETAIL_IDS; }

void ToProto(const Entity& e, pb::Entity* p) {
  p->set_id(e.id);
  p->set_external_id(e.external_id);
  p->set_type(e.type);
  p->set_name(e.name);
  for (const auto& s : e.synonyms) p->add_synonyms(s);
  for (const auto& x : e.xrefs) p->add_xrefs(x);
  p->set_definition(e.definition);
  for (const auto& s : e.sources) p->add_sources(s);
}

Entity FromProto(const pb::Entity& p) {
  Entity e;
  e.external_id = p.external_id();
  e.type = p.type();
  e.name = p.name();
  e.synonyms.assign(p.synonyms().begin(), p.synonyms().end());
  e.xrefs.assign(p.xrefs().begin(), p.xrefs().end());
  e.definition = p.definition();
  e.sources.assign(p.sources().begin(), p.sources().end());
  return e;
}

Direction FromProto(pb::Direction d) {
  switch (d) {
    case pb::DIRECTION_OUT:
      return Direction::kOut;
    case pb::DIRECTION_IN:
      return Direction::kIn;
    default:
      return Direction::kBoth;
  }
}

// Where a response puts the provenance of its triples (Neighbors and ExtractSubgraph share it).
struct ProvenanceFields {
  pb::TripleColumns* columns;
  RepeatedPtrField<std::string>* source_names;
  RepeatedPtrField<pb::SourceRef>* source_refs;
  RepeatedPtrField<pb::ProvenanceGroup>* groups;
};

// Triple::provenance of a requested triple the KG lacks: it gets an empty group, not group 0's.
constexpr ProvenanceId kNoProvenance = std::numeric_limits<ProvenanceId>::max();

// AddSources with the store's tables in hand.
void AddSourcesFrom(const std::vector<SourceInfo>& sources,
                    const std::vector<std::vector<SourceId>>& provenance,
                    absl::Span<const Triple> triples, const ProvenanceFields& out) {
  for (const SourceInfo& s : sources) {
    *out.source_names->Add() = s.name;
    pb::SourceRef* ref = out.source_refs->Add();
    ref->set_name(s.name);
    ref->set_license(s.license);
  }
  std::vector<int64_t> response_group(provenance.size(), -1);
  RepeatedField<uint32_t>* first = out.columns->mutable_source();
  RepeatedField<uint32_t>* group = out.columns->mutable_provenance();
  first->Reserve(static_cast<int>(triples.size()));
  group->Reserve(static_cast<int>(triples.size()));
  int64_t empty_group = -1;
  for (const Triple& t : triples) {
    if (t.provenance >= provenance.size()) {  // missing triple (or an unvalidated group id)
      if (empty_group < 0) {
        empty_group = out.groups->size();
        out.groups->Add();
      }
      first->Add(0);
      group->Add(static_cast<uint32_t>(empty_group));
      continue;
    }
    int64_t& g = response_group[t.provenance];
    if (g < 0) {
      g = out.groups->size();
      pb::ProvenanceGroup* added = out.groups->Add();
      for (SourceId s : provenance[t.provenance]) added->add_sources(s);
    }
    first->Add(provenance[t.provenance].empty() ? 0 : provenance[t.provenance].front());
    group->Add(static_cast<uint32_t>(g));
  }
}

// Fills, for `triples` in column order: the first source and the provenance group of each
// triple, every source with its licence, and the groups used (renumbered densely in first-use
// order so a response carries only what it refers to). Triples with kNoProvenance (or a group
// the tables lack) point at one empty group, with source 0. Both tables are read under one lock.
void AddSources(const KgStore& store, absl::Span<const Triple> triples,
                const ProvenanceFields& out) {
  store.VisitProvenanceTables([&](const std::vector<SourceInfo>& sources,
                                  const std::vector<std::vector<SourceId>>& provenance) {
    AddSourcesFrom(sources, provenance, triples, out);
  });
}

// Scores (NaN = none) and notes of `triples`, read in one batch.
absl::Status AddAnnotations(const KgStore& store, absl::Span<const Triple> triples,
                            pb::TripleColumns* columns) {
  IBGR_ASSIGN_OR_RETURN(std::vector<TripleAnnotation> annotations,
                        store.GetTripleAnnotations(triples));
  columns->mutable_score()->Reserve(static_cast<int>(annotations.size()));
  columns->mutable_note()->Reserve(static_cast<int>(annotations.size()));
  for (TripleAnnotation& a : annotations) {
    columns->add_score(a.score);
    columns->add_note(std::move(a.note));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::shared_ptr<KgStore>> KgStoreServiceImpl::Store() const {
  std::shared_ptr<KgStore> store = holder_->Get();
  if (store == nullptr) return absl::UnavailableError("kgstore: no snapshot loaded yet");
  return store;
}

grpc::Status KgStoreServiceImpl::GetEntities(grpc::ServerContext*,
                                             const pb::GetEntitiesRequest* request,
                                             pb::GetEntitiesResponse* response) {
  absl::Status status = [&]() -> absl::Status {
    IBGR_ASSIGN_OR_RETURN(auto store, Store());
    const int total = request->ids_size() + request->external_ids_size();
    if (total == 0) return absl::InvalidArgumentError("ids/external_ids: at least one id needed");
    if (total > kMaxGetEntities) {
      return absl::InvalidArgumentError(
          absl::StrCat("ids/external_ids: ", total, " ids, at most ", kMaxGetEntities));
    }
    IBGR_ASSIGN_OR_RETURN(
        std::vector<EntityId> ids,
        ResolveEntities(*store, request->ids(), request->external_ids(), "ids/external_ids"));
    IBGR_ASSIGN_OR_RETURN(std::vector<Entity> entities, store->GetEntities(ids));
    response->mutable_entities()->Reserve(static_cast<int>(entities.size()));
    for (const Entity& e : entities) ToProto(e, response->add_entities());
    response->set_kg_version(VersionOf(*store));
    return absl::OkStatus();
  }();
  return ToGrpcStatus(status);
}

grpc::Status KgStoreServiceImpl::Neighbors(grpc::ServerContext*,
                                           const pb::NeighborsRequest* request,
                                           pb::NeighborsResponse* response) {
  absl::Status status = [&]() -> absl::Status {
    IBGR_ASSIGN_OR_RETURN(auto store, Store());
    NeighborQuery query;
    if (!request->external_id().empty()) {
      auto id = store->ResolveExternalId(request->external_id());
      if (!id.ok())
        return absl::NotFoundError(absl::StrCat("external_id: ", id.status().message()));
      query.entity = *id;
    } else {
      if (static_cast<int64_t>(request->entity_id()) >= store->num_entities()) {
        return absl::NotFoundError(
            absl::StrCat("entity_id: unknown entity id ", request->entity_id()));
      }
      query.entity = request->entity_id();
    }
    query.direction = FromProto(request->direction());
    IBGR_ASSIGN_OR_RETURN(query.relations,
                          ResolveRelations(*store, request->relations(), "relations"));
    query.limit =
        request->limit() == 0
            ? kDefaultNeighborLimit
            : static_cast<int>(std::min<uint32_t>(request->limit(), kMaxNeighborLimit + 1));
    if (!request->page_token().empty() &&
        (!absl::SimpleAtoi(request->page_token(), &query.offset) || query.offset < 0)) {
      return absl::InvalidArgumentError("page_token: not a token returned by Neighbors");
    }
    IBGR_ASSIGN_OR_RETURN(NeighborPage page, store->Neighbors(query));
    pb::TripleColumns* cols = response->mutable_triples();
    const int n = static_cast<int>(page.triples.size());
    cols->mutable_head()->Reserve(n);
    cols->mutable_relation()->Reserve(n);
    cols->mutable_tail()->Reserve(n);
    const std::vector<Relation> relations = store->relations();
    std::vector<bool> used(relations.size(), false);
    std::vector<EntityId> entities;
    for (const Triple& t : page.triples) {
      cols->add_head(t.head);
      cols->add_relation(t.relation);
      cols->add_tail(t.tail);
      if (t.relation >= used.size()) used.resize(t.relation + 1, false);
      used[t.relation] = true;
      entities.push_back(t.head);
      entities.push_back(t.tail);
    }
    AddRelations(relations, used, response->mutable_relations());
    if (request->include_sources()) {
      AddSources(*store, page.triples,
                 {cols, response->mutable_sources(), response->mutable_source_refs(),
                  response->mutable_provenance()});
    }
    if (request->include_annotations()) {
      IBGR_RETURN_IF_ERROR(AddAnnotations(*store, page.triples, cols));
    }
    if (WantRefs(request->entity_detail())) {
      std::sort(entities.begin(), entities.end());
      entities.erase(std::unique(entities.begin(), entities.end()), entities.end());
      IBGR_RETURN_IF_ERROR(AddEntityRefs(*store, entities, response->mutable_entities()));
    }
    if (page.next_offset > 0) response->set_next_page_token(absl::StrCat(page.next_offset));
    response->set_total(page.total);
    response->set_kg_version(VersionOf(*store));
    return absl::OkStatus();
  }();
  return ToGrpcStatus(status);
}

grpc::Status KgStoreServiceImpl::ExtractSubgraph(grpc::ServerContext*,
                                                 const pb::ExtractSubgraphRequest* request,
                                                 pb::ExtractSubgraphResponse* response) {
  absl::Status status = [&]() -> absl::Status {
    IBGR_ASSIGN_OR_RETURN(auto store, Store());
    SubgraphQuery query;
    IBGR_ASSIGN_OR_RETURN(query.seeds, ResolveEntities(*store, request->seed_ids(),
                                                       request->seed_external_ids(), "seed_ids"));
    // Clamp huge values to limit+1 so the store's range check names the limit.
    auto field = [](uint32_t v, int def, int max) {
      return v == 0 ? def : static_cast<int>(std::min<uint32_t>(v, max + 1u));
    };
    query.max_hops = field(request->max_hops(), kDefaultSubgraphHops, kMaxSubgraphHops);
    query.max_triples = field(request->max_triples(), kDefaultSubgraphTriples, kMaxSubgraphTriples);
    query.max_fanout_per_node = static_cast<int>(
        std::min<uint32_t>(request->max_fanout_per_node(), kMaxFanoutPerNode + 1u));
    IBGR_ASSIGN_OR_RETURN(query.allow_relations,
                          ResolveRelations(*store, request->allow_relations(), "allow_relations"));
    IBGR_ASSIGN_OR_RETURN(query.deny_relations,
                          ResolveRelations(*store, request->deny_relations(), "deny_relations"));
    IBGR_ASSIGN_OR_RETURN(Subgraph subgraph, store->ExtractSubgraph(query));

    const int n = static_cast<int>(subgraph.triples.size());
    pb::TripleColumns* cols = response->mutable_triples();
    RepeatedField<uint32_t>* head = cols->mutable_head();
    RepeatedField<uint32_t>* relation = cols->mutable_relation();
    RepeatedField<uint32_t>* tail = cols->mutable_tail();
    RepeatedField<uint32_t>* hop = cols->mutable_hop();
    head->Resize(n, 0);
    relation->Resize(n, 0);
    tail->Resize(n, 0);
    hop->Resize(n, 0);
    const std::vector<Relation> relations = store->relations();
    std::vector<bool> used(relations.size(), false);
    for (int i = 0; i < n; ++i) {
      const SubgraphTriple& st = subgraph.triples[i];
      head->Set(i, st.triple.head);
      relation->Set(i, st.triple.relation);
      tail->Set(i, st.triple.tail);
      hop->Set(i, static_cast<uint32_t>(st.hop));
      if (st.triple.relation >= used.size()) used.resize(st.triple.relation + 1, false);
      used[st.triple.relation] = true;
    }
    if (request->include_sources() || request->include_annotations()) {
      std::vector<Triple> triples;
      triples.reserve(subgraph.triples.size());
      for (const SubgraphTriple& st : subgraph.triples) triples.push_back(st.triple);
      if (request->include_sources()) {
        AddSources(*store, triples,
                   {cols, response->mutable_sources(), response->mutable_source_refs(),
                    response->mutable_provenance()});
      }
      if (request->include_annotations()) {
        IBGR_RETURN_IF_ERROR(AddAnnotations(*store, triples, cols));
      }
    }
    AddRelations(relations, used, response->mutable_relations());
    if (WantRefs(request->entity_detail())) {
      std::vector<EntityId> ids;
      ids.reserve(subgraph.entities.size());
      response->mutable_entity_hops()->Reserve(static_cast<int>(subgraph.entities.size()));
      for (const SubgraphEntity& e : subgraph.entities) {
        ids.push_back(e.id);
        response->add_entity_hops(static_cast<uint32_t>(e.hop));
      }
      IBGR_RETURN_IF_ERROR(AddEntityRefs(*store, ids, response->mutable_entities()));
    }
    response->set_truncated(subgraph.truncated);
    for (EntityId seed : query.seeds) response->add_resolved_seed_ids(seed);
    response->set_kg_version(VersionOf(*store));
    return absl::OkStatus();
  }();
  return ToGrpcStatus(status);
}

grpc::Status KgStoreServiceImpl::ShortestPaths(grpc::ServerContext*,
                                               const pb::ShortestPathsRequest* request,
                                               pb::ShortestPathsResponse* response) {
  absl::Status status = [&]() -> absl::Status {
    IBGR_ASSIGN_OR_RETURN(auto store, Store());
    PathQuery query;
    IBGR_ASSIGN_OR_RETURN(query.sources,
                          ResolveEntities(*store, request->source_ids(),
                                          request->source_external_ids(), "source_ids"));
    IBGR_ASSIGN_OR_RETURN(query.targets,
                          ResolveEntities(*store, request->target_ids(),
                                          request->target_external_ids(), "target_ids"));
    query.max_length =
        request->max_length() == 0
            ? kDefaultPathLength
            : static_cast<int>(std::min<uint32_t>(request->max_length(), kMaxPathLength + 1u));
    query.max_paths =
        request->max_paths() == 0
            ? kDefaultMaxPaths
            : static_cast<int>(std::min<uint32_t>(request->max_paths(), kMaxPaths + 1u));
    query.undirected = !request->directed();
    IBGR_ASSIGN_OR_RETURN(query.allow_relations,
                          ResolveRelations(*store, request->allow_relations(), "allow_relations"));
    IBGR_ASSIGN_OR_RETURN(query.deny_relations,
                          ResolveRelations(*store, request->deny_relations(), "deny_relations"));
    IBGR_ASSIGN_OR_RETURN(PathResult result, store->ShortestPaths(query));
    const std::vector<Relation> relations = store->relations();
    std::vector<bool> used(relations.size(), false);
    std::vector<EntityId> entities;
    for (const Path& path : result.paths) {
      pb::Path* p = response->add_paths();
      for (const PathStep& step : path.steps) {
        pb::PathStep* s = p->add_steps();
        s->set_head(step.triple.head);
        s->set_relation(step.triple.relation);
        s->set_tail(step.triple.tail);
        s->set_reversed(!step.forward);
        if (step.triple.relation >= used.size()) used.resize(step.triple.relation + 1, false);
        used[step.triple.relation] = true;
        entities.push_back(step.triple.head);
        entities.push_back(step.triple.tail);
      }
    }
    AddRelations(relations, used, response->mutable_relations());
    if (WantRefs(request->entity_detail())) {
      std::sort(entities.begin(), entities.end());
      entities.erase(std::unique(entities.begin(), entities.end()), entities.end());
      IBGR_RETURN_IF_ERROR(AddEntityRefs(*store, entities, response->mutable_entities()));
    }
    response->set_truncated(result.truncated);
    response->set_kg_version(VersionOf(*store));
    return absl::OkStatus();
  }();
  return ToGrpcStatus(status);
}

IngestBatch IngestBatchFromProto(const pb::IngestRequest& request) {
  IngestBatch batch;
  batch.batch_id = request.batch_id();
  batch.entities.reserve(request.entities_size());
  for (const pb::Entity& e : request.entities()) batch.entities.push_back(FromProto(e));
  batch.triples.reserve(request.triples_size());
  for (const pb::IngestTriple& t : request.triples()) {
    IngestTriple& in = batch.triples.emplace_back();
    in.head = t.head_external_id();
    in.relation = t.relation();
    in.tail = t.tail_external_id();
    in.source = t.source();
    in.license = t.license();
    if (t.has_score()) in.score = t.score();
    in.note = t.note();
  }
  return batch;
}

grpc::Status KgStoreServiceImpl::Ingest(grpc::ServerContext* context,
                                        grpc::ServerReader<pb::IngestRequest>* reader,
                                        pb::IngestResponse* response) {
  absl::Status status = [&]() -> absl::Status {
    IBGR_ASSIGN_OR_RETURN(auto store, Store());
    pb::IngestRequest request;
    while (reader->Read(&request)) {
      if (context->IsCancelled()) return absl::CancelledError("Ingest: cancelled by the caller");
      const IngestBatch batch = IngestBatchFromProto(request);
      absl::StatusOr<IngestResult> result = store->Ingest(batch);
      if (!result.ok()) {
        // Batches before this one are durable; say so, so the caller resumes from here.
        return absl::Status(
            result.status().code(),
            absl::StrCat("batch ", response->acknowledged_batch_ids_size() + 1, " (batch_id \"",
                         batch.batch_id, "\"): ", result.status().message(), "; ",
                         response->acknowledged_batch_ids_size(),
                         " earlier batch(es) of this stream are durable"));
      }
      if (result->already_applied) {
        response->set_batches_already_applied(response->batches_already_applied() + 1);
      } else {
        response->set_batches_applied(response->batches_applied() + 1);
        response->set_entities_added(response->entities_added() + result->entities_added);
        response->set_triples_added(response->triples_added() + result->triples_added);
      }
      response->add_acknowledged_batch_ids(batch.batch_id);
    }
    return absl::OkStatus();
  }();
  return ToGrpcStatus(status);
}

grpc::Status KgStoreServiceImpl::Stats(grpc::ServerContext*, const pb::StatsRequest*,
                                       pb::StatsResponse* response) {
  absl::Status status = [&]() -> absl::Status {
    IBGR_ASSIGN_OR_RETURN(auto store, Store());
    const KgCounts counts = store->counts();
    response->set_kg_version(VersionOf(*store));
    response->set_entities(counts.entities);
    response->set_relations(counts.relations);
    response->set_triples(counts.triples);
    for (const auto& [type, n] : counts.entities_by_type) {
      (*response->mutable_entities_by_type())[type] = n;
    }
    for (const auto& [relation, n] : counts.triples_by_relation) {
      (*response->mutable_triples_by_relation())[relation] = n;
    }
    for (const SourceReport& s : store->manifest().sources) {
      pb::SourceStats* p = response->add_sources();
      p->set_name(s.source);
      p->set_path(s.path);
      p->set_sha256(s.sha256);
      p->set_rows_read(s.rows_read);
      p->set_rows_skipped(s.rows_skipped);
      p->set_unmapped_ids(s.unmapped_ids);
      p->set_triples_added(s.triples_added);
      p->set_triples_merged(s.triples_merged);
    }
    for (const auto& [source, n] : counts.triples_by_source) {
      (*response->mutable_triples_by_source())[source] = n;
    }
    for (const auto& [license, n] : counts.triples_by_license) {
      (*response->mutable_triples_by_license())[license] = n;
    }
    for (const SourceInfo& s : store->sources()) {
      pb::SourceRef* ref = response->add_source_refs();
      ref->set_name(s.name);
      ref->set_license(s.license);
    }
    response->set_license_filter(store->manifest().license_filter);
    const KgStoreStats stats = store->stats();
    response->set_read_only(stats.read_only);
    response->set_ingested_batches(stats.generation);
    return absl::OkStatus();
  }();
  return ToGrpcStatus(status);
}

grpc::Status KgStoreServiceImpl::GetTripleProvenance(grpc::ServerContext*,
                                                     const pb::GetTripleProvenanceRequest* request,
                                                     pb::GetTripleProvenanceResponse* response) {
  absl::Status status = [&]() -> absl::Status {
    IBGR_ASSIGN_OR_RETURN(auto store, Store());
    const pb::TripleColumns& in = request->triples();
    const int n = in.head_size();
    if (in.relation_size() != n || in.tail_size() != n) {
      return absl::InvalidArgumentError("triples: head/relation/tail lengths differ");
    }
    if (n > kMaxTripleProvenance) {
      return absl::InvalidArgumentError(
          absl::StrCat("triples: ", n, " triples, at most ", kMaxTripleProvenance));
    }
    std::vector<Triple> triples(n);
    for (int i = 0; i < n; ++i) triples[i] = Triple{in.head(i), in.relation(i), in.tail(i), 0};
    IBGR_ASSIGN_OR_RETURN(std::vector<TripleAnnotation> annotations,
                          store->GetTripleAnnotations(triples));
    pb::TripleColumns* cols = response->mutable_triples();
    *cols->mutable_head() = in.head();
    *cols->mutable_relation() = in.relation();
    *cols->mutable_tail() = in.tail();
    for (int i = 0; i < n; ++i) {
      triples[i].provenance = annotations[i].found ? annotations[i].provenance : kNoProvenance;
      if (!annotations[i].found) response->add_missing(static_cast<uint32_t>(i));
      cols->add_score(annotations[i].score);
      cols->add_note(std::move(annotations[i].note));
    }
    AddSources(*store, triples,
               {cols, response->mutable_sources(), response->mutable_source_refs(),
                response->mutable_provenance()});
    response->set_kg_version(VersionOf(*store));
    return absl::OkStatus();
  }();
  return ToGrpcStatus(status);
}

}  // namespace ibgraphrag::kgstore
