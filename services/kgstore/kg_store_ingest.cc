// KgStore writes: Ingest (atomic, idempotent batches) and CompactOverlay.
//
// Ingest runs in three phases so that a failure can never leave a half-applied batch:
//   1. plan: validate and resolve everything against the current state, building the complete
//      set of records to write; any error returns here with nothing written;
//   2. write: one rocksdb::WriteBatch with sync=true holding every record, the ingest-log entry,
//      the new counts/generation and the batch-id marker (so replays are recognised);
//   3. apply: update the in-memory view under the exclusive lock (memory-only, cannot fail).
// A crash between 2 and 3 loses nothing: Open replays the ingest log.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "rocksdb/db.h"
#include "rocksdb/write_batch.h"
#include "services/kgstore/kg_builder.h"
#include "services/kgstore/kg_store.h"
#include "services/kgstore/kg_store_codec.h"

namespace ibgraphrag::kgstore {
namespace {

using internal::FromRocks;

constexpr char kDefaultIngestSource[] = "ingest";
constexpr size_t kMaxIngestRelations = 10000;
constexpr size_t kMaxUnknownIdsReported = 20;

absl::Status CheckText(std::string_view value, size_t max_bytes, bool required,
                       const std::string& field) {
  if (required && value.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(field, " must not be empty"));
  }
  if (value.size() > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " has ", value.size(), " bytes; the limit is ", max_bytes));
  }
  return absl::OkStatus();
}

absl::Status ValidateBatchShape(const IngestBatch& b) {
  IBGR_RETURN_IF_ERROR(CheckText(b.batch_id, kMaxBatchIdBytes, true, "batch_id"));
  if (b.entities.size() > kMaxIngestEntities) {
    return absl::InvalidArgumentError(absl::StrCat("entities has ", b.entities.size(),
                                                   " items; the limit is ", kMaxIngestEntities));
  }
  if (b.relations.size() > kMaxIngestRelations) {
    return absl::InvalidArgumentError(absl::StrCat("relations has ", b.relations.size(),
                                                   " items; the limit is ", kMaxIngestRelations));
  }
  if (b.triples.size() > kMaxIngestTriples) {
    return absl::InvalidArgumentError(
        absl::StrCat("triples has ", b.triples.size(), " items; the limit is ", kMaxIngestTriples));
  }
  for (size_t i = 0; i < b.entities.size(); ++i) {
    const Entity& e = b.entities[i];
    const std::string f = absl::StrCat("entities[", i, "]");
    IBGR_RETURN_IF_ERROR(CheckText(e.external_id, kMaxExternalIdBytes, true, f + ".external_id"));
    IBGR_RETURN_IF_ERROR(CheckText(e.type, kMaxNameBytes, false, f + ".type"));
    IBGR_RETURN_IF_ERROR(CheckText(e.name, kMaxNameBytes, false, f + ".name"));
    IBGR_RETURN_IF_ERROR(CheckText(e.definition, kMaxDefinitionBytes, false, f + ".definition"));
    for (size_t k = 0; k < e.synonyms.size(); ++k) {
      IBGR_RETURN_IF_ERROR(
          CheckText(e.synonyms[k], kMaxNameBytes, false, absl::StrCat(f, ".synonyms[", k, "]")));
    }
    for (size_t k = 0; k < e.xrefs.size(); ++k) {
      IBGR_RETURN_IF_ERROR(
          CheckText(e.xrefs[k], kMaxExternalIdBytes, true, absl::StrCat(f, ".xrefs[", k, "]")));
    }
    for (size_t k = 0; k < e.sources.size(); ++k) {
      IBGR_RETURN_IF_ERROR(
          CheckText(e.sources[k], kMaxNameBytes, true, absl::StrCat(f, ".sources[", k, "]")));
    }
  }
  for (size_t i = 0; i < b.relations.size(); ++i) {
    const Relation& r = b.relations[i];
    const std::string f = absl::StrCat("relations[", i, "]");
    IBGR_RETURN_IF_ERROR(CheckText(r.name, kMaxNameBytes, true, f + ".name"));
    IBGR_RETURN_IF_ERROR(CheckText(r.head_type, kMaxNameBytes, false, f + ".head_type"));
    IBGR_RETURN_IF_ERROR(CheckText(r.tail_type, kMaxNameBytes, false, f + ".tail_type"));
    IBGR_RETURN_IF_ERROR(CheckText(r.description, kMaxDefinitionBytes, false, f + ".description"));
  }
  for (size_t i = 0; i < b.triples.size(); ++i) {
    const IngestTriple& t = b.triples[i];
    const std::string f = absl::StrCat("triples[", i, "]");
    IBGR_RETURN_IF_ERROR(CheckText(t.head, kMaxExternalIdBytes, true, f + ".head"));
    IBGR_RETURN_IF_ERROR(CheckText(t.relation, kMaxNameBytes, true, f + ".relation"));
    IBGR_RETURN_IF_ERROR(CheckText(t.tail, kMaxExternalIdBytes, true, f + ".tail"));
    IBGR_RETURN_IF_ERROR(CheckText(t.source, kMaxNameBytes, false, f + ".source"));
    IBGR_RETURN_IF_ERROR(CheckText(t.license, kMaxNameBytes, false, f + ".license"));
    IBGR_RETURN_IF_ERROR(CheckText(t.note, kMaxTripleNoteBytes, false, f + ".note"));
    if (std::isinf(t.score)) {
      return absl::InvalidArgumentError(absl::StrCat(f, ".score must be finite (or unset)"));
    }
  }
  return absl::OkStatus();
}

bool AddUnique(std::vector<std::string>* list, std::string_view value) {
  if (value.empty() || std::find(list->begin(), list->end(), value) != list->end()) return false;
  list->emplace_back(value);
  return true;
}

bool AddSynonym(Entity* e, std::string_view synonym) {
  if (synonym == e->name) return false;
  return AddUnique(&e->synonyms, synonym);
}

// Merges an incoming upsert into a record; xrefs are bound separately (they need the index).
void MergeEntity(const Entity& in, Entity* rec) {
  if (rec->type.empty()) rec->type = in.type;
  if (!in.name.empty()) {
    if (rec->name.empty()) {
      rec->name = in.name;
      rec->synonyms.erase(std::remove(rec->synonyms.begin(), rec->synonyms.end(), rec->name),
                          rec->synonyms.end());
    } else {
      AddSynonym(rec, in.name);
    }
  }
  for (const std::string& s : in.synonyms) AddSynonym(rec, s);
  if (rec->definition.empty()) rec->definition = in.definition;
  for (const std::string& s : in.sources) AddUnique(&rec->sources, s);
}

IngestResult ResultFromMarker(const internal::IngestMarker& m, bool already_applied) {
  IngestResult r;
  r.already_applied = already_applied;
  r.generation = m.generation;
  r.entities_added = m.entities_added;
  r.entities_updated = m.entities_updated;
  r.relations_added = m.relations_added;
  r.triples_added = m.triples_added;
  r.triples_existing = m.triples_existing;
  r.entity_ids = m.entity_ids;
  return r;
}

struct TripleKey {
  EntityId head;
  RelationId relation;
  EntityId tail;
  friend bool operator==(const TripleKey& a, const TripleKey& b) {
    return a.head == b.head && a.relation == b.relation && a.tail == b.tail;
  }
  template <typename H>
  friend H AbslHashValue(H h, const TripleKey& k) {
    return H::combine(std::move(h), k.head, k.relation, k.tail);
  }
};

}  // namespace

// Everything one batch writes, resolved against the state current when it was planned.
struct KgStore::IngestPlan {
  internal::IngestMarker marker;
  std::vector<Entity> records;                 // entity records to write
  std::vector<std::string> original_encoding;  // per record: "" for new entities
  std::vector<bool> name_changed;              // per record, filled by the write phase
  std::vector<bool> type_changed;
  std::vector<std::pair<std::string, EntityId>> new_external_ids;
  std::vector<Relation> new_relations;
  std::vector<SourceInfo> new_sources;
  std::vector<std::vector<SourceId>> new_groups;  // singleton groups of the new sources
  std::vector<Triple> new_triples;
  std::vector<float> new_scores;       // parallel to new_triples
  std::vector<std::string> new_notes;  // parallel to new_triples
  KgCounts new_counts;
  size_t old_entity_count = 0;
  size_t old_relation_count = 0;
};

// Phase 1 of Ingest: resolves a batch against the store's state, read under a shared `mu_`
// that the caller holds for the planner's whole life. Nothing is written.
class KgStore::IngestPlanner {
 public:
  IngestPlanner(const KgStore& store, IngestPlan* plan) ABSL_SHARED_LOCKS_REQUIRED(store.mu_)
      : store_(store), plan_(*plan) {
    plan_.old_entity_count = store.entities_.size();
    plan_.old_relation_count = store.relations_.size();
    plan_.new_counts = store.counts_;
    plan_.marker.generation = store.generation_ + 1;
    next_id_ = static_cast<EntityId>(plan_.old_entity_count);
  }

  absl::Status PlanEntities(const std::vector<Entity>& entities);
  absl::Status PlanRelations(const std::vector<Relation>& relations);
  absl::Status PlanTriples(const std::vector<IngestTriple>& triples);
  // Per-relation triple counts and the marker's totals, once every triple is planned.
  void CountTriples();

 private:
  // External ids bound by this batch first, then the store (cached: batches repeat ids a lot).
  // kInvalidEntity = bound nowhere.
  absl::StatusOr<EntityId> Resolve(const std::string& external_id);
  // Index in plan_.records of the record `in` upserts into, creating it if needed.
  absl::StatusOr<size_t> UpsertRecord(const Entity& in, size_t i, EntityId* id);
  void BindXrefs(const Entity& in, EntityId id, size_t index);
  RelationId FindRelation(const std::string& name) const;
  absl::StatusOr<RelationId> AddRelation(Relation r);
  // Plans triples[i]; unknown external ids are collected, not returned as errors.
  absl::Status PlanTriple(size_t i, const IngestTriple& t, std::vector<std::string>* unknown,
                          size_t* unknown_count);
  // The provenance group {source} of the triple's (source, licence), created when new.
  absl::StatusOr<ProvenanceId> GroupFor(size_t i, const IngestTriple& t);

  static constexpr RelationId kNoRelation = std::numeric_limits<RelationId>::max();

  const KgStore& store_;
  IngestPlan& plan_;
  // Writers are serialised by ingest_mu_, so the latest database state is exactly the state
  // applied in memory; planning reads it without a RocksDB snapshot.
  const rocksdb::ReadOptions latest_;
  EntityId next_id_ = 0;
  absl::flat_hash_map<EntityId, size_t> record_of_;  // entity id -> index in plan_.records
  absl::flat_hash_map<std::string, EntityId> batch_ids_;
  absl::flat_hash_map<std::string, EntityId> store_cache_;  // kInvalidEntity = absent
  absl::flat_hash_map<std::string, RelationId> batch_relations_;
  absl::flat_hash_map<std::string, ProvenanceId> group_by_source_key_;  // name '\t' licence
  absl::flat_hash_map<std::string, SourceId> source_by_key_;            // stored sources, same key
  absl::flat_hash_set<TripleKey> seen_;
};

absl::StatusOr<EntityId> KgStore::IngestPlanner::Resolve(const std::string& external_id) {
  if (auto it = batch_ids_.find(external_id); it != batch_ids_.end()) return it->second;
  if (auto it = store_cache_.find(external_id); it != store_cache_.end()) return it->second;
  std::string value;
  const rocksdb::Status s =
      store_.db_->Get(latest_, store_.cf_[internal::kCfExternalIds], external_id, &value);
  EntityId id = kInvalidEntity;
  if (s.ok()) {
    if (value.size() != 4) return absl::DataLossError("corrupt external-id index entry");
    id = internal::GetBe32(value.data());
  } else if (!s.IsNotFound()) {
    return FromRocks(s, absl::StrCat("resolve '", external_id, "'"));
  }
  store_cache_.emplace(external_id, id);
  return id;
}

absl::StatusOr<size_t> KgStore::IngestPlanner::UpsertRecord(const Entity& in, size_t i,
                                                            EntityId* id) {
  if (*id == kInvalidEntity) {
    if (in.type.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("entities[", i, "].type is required for new entity '", in.external_id, "'"));
    }
    if (next_id_ >= kInvalidEntity - 1) {
      return absl::ResourceExhaustedError("the store has no entity ids left");
    }
    *id = next_id_++;
    Entity rec;
    rec.id = *id;
    rec.external_id = in.external_id;
    rec.type = in.type;
    MergeEntity(in, &rec);
    const size_t index = plan_.records.size();
    plan_.records.push_back(std::move(rec));
    plan_.original_encoding.emplace_back();
    record_of_.emplace(*id, index);
    batch_ids_.emplace(in.external_id, *id);
    plan_.new_external_ids.emplace_back(in.external_id, *id);
    ++plan_.marker.entities_added;
    ++plan_.new_counts.entities;
    ++plan_.new_counts.entities_by_type[in.type];
    return index;
  }
  size_t index = 0;
  if (auto it = record_of_.find(*id); it != record_of_.end()) {
    index = it->second;
  } else {
    std::string value;
    IBGR_ROCKS_RETURN_IF_ERROR(store_.db_->Get(latest_, store_.cf_[internal::kCfEntities],
                                               internal::EntityKey(*id), &value),
                               absl::StrCat("read entity ", *id));
    IBGR_ASSIGN_OR_RETURN(Entity rec, internal::DecodeEntity(value, *id));
    index = plan_.records.size();
    plan_.records.push_back(std::move(rec));
    plan_.original_encoding.push_back(std::move(value));
    record_of_.emplace(*id, index);
  }
  MergeEntity(in, &plan_.records[index]);
  return index;
}

absl::Status KgStore::IngestPlanner::PlanEntities(const std::vector<Entity>& entities) {
  for (size_t i = 0; i < entities.size(); ++i) {
    const Entity& in = entities[i];
    IBGR_ASSIGN_OR_RETURN(EntityId id, Resolve(in.external_id));
    IBGR_ASSIGN_OR_RETURN(const size_t index, UpsertRecord(in, i, &id));
    for (const std::string& x : in.xrefs) {
      Entity& rec = plan_.records[index];
      if (x == rec.external_id) continue;
      IBGR_ASSIGN_OR_RETURN(EntityId bound, Resolve(x));
      if (bound == kInvalidEntity) {
        batch_ids_.emplace(x, id);
        plan_.new_external_ids.emplace_back(x, id);
        rec.xrefs.push_back(x);
      }
      // Bound already (to this entity or, first binding wins, to another): nothing to do.
    }
    plan_.marker.entity_ids.push_back(id);
  }
  return absl::OkStatus();
}

RelationId KgStore::IngestPlanner::FindRelation(const std::string& name) const {
  if (auto it = store_.relation_by_name_.find(name); it != store_.relation_by_name_.end()) {
    return it->second;
  }
  if (auto it = batch_relations_.find(name); it != batch_relations_.end()) return it->second;
  return kNoRelation;
}

absl::StatusOr<RelationId> KgStore::IngestPlanner::AddRelation(Relation r) {
  const size_t count = plan_.old_relation_count + plan_.new_relations.size();
  if (count >= kMaxCsrRelations) {
    return absl::InvalidArgumentError(absl::StrCat(
        "relation '", r.name, "' would exceed the limit of ", kMaxCsrRelations, " relations"));
  }
  r.id = static_cast<RelationId>(count);
  batch_relations_.emplace(r.name, r.id);
  plan_.new_counts.triples_by_relation.emplace(r.name, 0);
  ++plan_.new_counts.relations;
  plan_.new_relations.push_back(std::move(r));
  return plan_.new_relations.back().id;
}

absl::Status KgStore::IngestPlanner::PlanRelations(const std::vector<Relation>& relations) {
  for (const Relation& r : relations) {
    if (FindRelation(r.name) == kNoRelation) IBGR_RETURN_IF_ERROR(AddRelation(r).status());
  }
  return absl::OkStatus();
}

absl::StatusOr<ProvenanceId> KgStore::IngestPlanner::GroupFor(size_t i, const IngestTriple& t) {
  const std::string& source_name = t.source.empty() ? kDefaultIngestSource : t.source;
  const std::string license = NormalizeLicense(t.license);
  std::string key = absl::StrCat(source_name, "\t", license);
  if (auto it = group_by_source_key_.find(key); it != group_by_source_key_.end()) {
    return it->second;
  }
  // A stored source that so far only appears in merged groups keeps its id: only its singleton
  // group is new.
  const auto stored = source_by_key_.find(key);
  const size_t known = store_.sources_.size() + plan_.new_sources.size();
  const size_t groups = store_.provenance_.size() + plan_.new_groups.size();
  if ((stored == source_by_key_.end() && known >= 65536) || groups >= kMaxProvenanceGroups) {
    return absl::InvalidArgumentError(
        absl::StrCat("triples[", i, "].source '", source_name, "' would exceed the limit of ",
                     "65536 sources / ", kMaxProvenanceGroups, " provenance groups"));
  }
  SourceId source = 0;
  if (stored != source_by_key_.end()) {
    source = stored->second;
  } else {
    source = static_cast<SourceId>(known);
    plan_.new_sources.push_back(SourceInfo{source_name, license});
  }
  plan_.new_groups.push_back({source});
  group_by_source_key_.emplace(std::move(key), static_cast<ProvenanceId>(groups));
  return static_cast<ProvenanceId>(groups);
}

absl::Status KgStore::IngestPlanner::PlanTriple(size_t i, const IngestTriple& t,
                                                std::vector<std::string>* unknown,
                                                size_t* unknown_count) {
  IBGR_ASSIGN_OR_RETURN(EntityId head, Resolve(t.head));
  IBGR_ASSIGN_OR_RETURN(EntityId tail, Resolve(t.tail));
  for (auto [id, field, value] :
       {std::tuple{head, "head", &t.head}, std::tuple{tail, "tail", &t.tail}}) {
    if (id != kInvalidEntity) continue;
    if (++*unknown_count <= kMaxUnknownIdsReported) {
      unknown->push_back(absl::StrCat("triples[", i, "].", field, " '", *value, "'"));
    }
  }
  if (head == kInvalidEntity || tail == kInvalidEntity) return absl::OkStatus();
  if (head == tail) {
    return absl::InvalidArgumentError(
        absl::StrCat("triples[", i, "]: head '", t.head, "' and tail '", t.tail,
                     "' are the same entity; self-loops are not stored"));
  }
  RelationId relation = FindRelation(t.relation);
  if (relation == kNoRelation) {
    Relation r;
    r.name = t.relation;
    IBGR_ASSIGN_OR_RETURN(relation, AddRelation(std::move(r)));
  }
  const bool known_before = head < plan_.old_entity_count && tail < plan_.old_entity_count &&
                            relation < plan_.old_relation_count;
  if (!seen_.insert(TripleKey{head, relation, tail}).second ||
      (known_before && store_.ContainsEdge(head, relation, tail))) {
    ++plan_.marker.triples_existing;
    return absl::OkStatus();
  }
  // Sources are registered only by triples that are actually added.
  IBGR_ASSIGN_OR_RETURN(const ProvenanceId group, GroupFor(i, t));
  plan_.new_triples.push_back(Triple{head, relation, tail, group});
  plan_.new_scores.push_back(t.score);
  plan_.new_notes.push_back(t.note);
  return absl::OkStatus();
}

absl::Status KgStore::IngestPlanner::PlanTriples(const std::vector<IngestTriple>& triples) {
  // A stored source is reused through its singleton group (snapshots built from one source per
  // fact have one per source; a source only ever seen merged gets a new singleton group). Stored
  // licences are keyed normalised like GroupFor's, so a snapshot written before licences were
  // normalised ("CC0 1.0") does not gain a duplicate source.
  for (size_t s = 0; s < store_.sources_.size(); ++s) {
    const SourceInfo& source = store_.sources_[s];
    source_by_key_.emplace(absl::StrCat(source.name, "\t", NormalizeLicense(source.license)),
                           static_cast<SourceId>(s));
  }
  for (size_t g = 0; g < store_.provenance_.size(); ++g) {
    if (store_.provenance_[g].size() != 1) continue;
    const SourceInfo& source = store_.sources_[store_.provenance_[g][0]];
    group_by_source_key_.emplace(absl::StrCat(source.name, "\t", NormalizeLicense(source.license)),
                                 static_cast<ProvenanceId>(g));
  }
  std::vector<std::string> unknown;
  size_t unknown_count = 0;
  for (size_t i = 0; i < triples.size(); ++i) {
    IBGR_RETURN_IF_ERROR(PlanTriple(i, triples[i], &unknown, &unknown_count));
  }
  if (unknown_count == 0) return absl::OkStatus();
  std::string message = absl::StrCat("unknown external id", unknown_count > 1 ? "s" : "",
                                     " in triples (neither in the store "
                                     "nor among the batch's entities): ",
                                     absl::StrJoin(unknown, ", "));
  if (unknown_count > unknown.size()) {
    absl::StrAppend(&message, " (and ", unknown_count - unknown.size(), " more)");
  }
  return absl::NotFoundError(message);
}

void KgStore::IngestPlanner::CountTriples() {
  for (const Triple& t : plan_.new_triples) {
    const std::string& name = t.relation < plan_.old_relation_count
                                  ? store_.relations_[t.relation].name
                                  : plan_.new_relations[t.relation - plan_.old_relation_count].name;
    ++plan_.new_counts.triples_by_relation[name];
  }
  std::vector<SourceInfo> sources = store_.sources_;
  sources.insert(sources.end(), plan_.new_sources.begin(), plan_.new_sources.end());
  std::vector<std::vector<SourceId>> groups = store_.provenance_;
  groups.insert(groups.end(), plan_.new_groups.begin(), plan_.new_groups.end());
  std::vector<int64_t> per_group(groups.size(), 0);
  for (const Triple& t : plan_.new_triples) ++per_group[t.provenance];
  AddProvenanceCounts(sources, groups, per_group, &plan_.new_counts);
  plan_.new_counts.triples += static_cast<int64_t>(plan_.new_triples.size());
  plan_.marker.relations_added = static_cast<int64_t>(plan_.new_relations.size());
  plan_.marker.triples_added = static_cast<int64_t>(plan_.new_triples.size());
}

absl::StatusOr<IngestResult> KgStore::Ingest(const IngestBatch& batch) {
  if (options_.read_only) {
    return absl::FailedPreconditionError(absl::StrCat("KG store ", options_.snapshot_dir,
                                                      " is open read-only; Ingest needs a "
                                                      "read-write store"));
  }
  IBGR_RETURN_IF_ERROR(ValidateBatchShape(batch));
  absl::MutexLock writer(&ingest_mu_);
  IBGR_ASSIGN_OR_RETURN(std::optional<IngestResult> replay, FindAppliedBatch(batch.batch_id));
  if (replay.has_value()) return *std::move(replay);
  IngestPlan plan;
  IBGR_RETURN_IF_ERROR(PlanIngest(batch, &plan));
  IBGR_RETURN_IF_ERROR(WriteIngest(batch.batch_id, &plan));
  ApplyIngest(&plan);
  return ResultFromMarker(plan.marker, /*already_applied=*/false);
}

absl::Status KgStore::CheckIngest(const IngestBatch& batch) const {
  IBGR_RETURN_IF_ERROR(ValidateBatchShape(batch));
  absl::MutexLock writer(&ingest_mu_);
  IngestPlan plan;
  return PlanIngest(batch, &plan);
}

absl::StatusOr<std::optional<IngestResult>> KgStore::FindAppliedBatch(
    const std::string& batch_id) const {
  std::string marker;
  const rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), cf_[internal::kCfBatches], batch_id, &marker);
  if (s.IsNotFound()) return std::nullopt;
  if (!s.ok()) return FromRocks(s, "read ingest batch marker");
  IBGR_ASSIGN_OR_RETURN(internal::IngestMarker m, internal::DecodeIngestMarker(marker));
  return ResultFromMarker(m, /*already_applied=*/true);
}

absl::Status KgStore::PlanIngest(const IngestBatch& batch, IngestPlan* plan) const {
  absl::ReaderMutexLock lock(&mu_);
  IngestPlanner planner(*this, plan);
  IBGR_RETURN_IF_ERROR(planner.PlanEntities(batch.entities));
  IBGR_RETURN_IF_ERROR(planner.PlanRelations(batch.relations));
  IBGR_RETURN_IF_ERROR(planner.PlanTriples(batch.triples));
  planner.CountTriples();
  return absl::OkStatus();
}

absl::Status KgStore::PutEntityRecords(IngestPlan* plan, rocksdb::WriteBatch* wb) const {
  plan->name_changed.assign(plan->records.size(), false);
  plan->type_changed.assign(plan->records.size(), false);
  for (size_t i = 0; i < plan->records.size(); ++i) {
    const Entity& rec = plan->records[i];
    std::string encoded = internal::EncodeEntity(rec);
    const std::string& original = plan->original_encoding[i];
    if (!original.empty()) {
      if (encoded == original) continue;
      ++plan->marker.entities_updated;
      IBGR_ASSIGN_OR_RETURN(Entity before, internal::DecodeEntity(original, rec.id));
      plan->name_changed[i] = before.name != rec.name;
      if (before.type != rec.type) {
        plan->type_changed[i] = true;
        KgCounts& counts = plan->new_counts;
        if (--counts.entities_by_type[before.type] == 0) counts.entities_by_type.erase(before.type);
        ++counts.entities_by_type[rec.type];
      }
    }
    wb->Put(cf_[internal::kCfEntities], internal::EntityKey(rec.id), encoded);
  }
  return absl::OkStatus();
}

void KgStore::PutGraphRecords(const IngestPlan& plan, rocksdb::WriteBatch* wb) const {
  for (const auto& [external_id, id] : plan.new_external_ids) {
    std::string value;
    internal::PutBe32(&value, id);
    wb->Put(cf_[internal::kCfExternalIds], external_id, value);
  }
  for (const Relation& r : plan.new_relations) {
    wb->Put(cf_[internal::kCfRelations], internal::RelationKey(r.id), internal::EncodeRelation(r));
  }
  char key[12];
  for (size_t i = 0; i < plan.new_triples.size(); ++i) {
    const Triple& t = plan.new_triples[i];
    internal::EncodeAdjacencyKey(t.head, t.relation, t.tail, key);
    wb->Put(cf_[internal::kCfOut], rocksdb::Slice(key, 12),
            internal::EncodeAdjacencyValue(t.provenance, plan.new_scores[i], plan.new_notes[i]));
    internal::EncodeAdjacencyKey(t.tail, t.relation, t.head, key);
    wb->Put(cf_[internal::kCfIn], rocksdb::Slice(key, 12),
            internal::EncodeAdjacencyValue(t.provenance, kNoTripleScore, {}));
  }
  if (!plan.new_triples.empty()) {
    wb->Put(cf_[internal::kCfIngestLog], internal::GenerationKey(plan.marker.generation),
            internal::EncodeTripleLog(plan.new_triples));
  }
}

void KgStore::PutProvenanceMeta(const IngestPlan& plan, rocksdb::WriteBatch* wb) const {
  absl::ReaderMutexLock lock(&mu_);
  std::vector<std::string> names, licenses;
  for (const std::vector<SourceInfo>* list : {&sources_, &plan.new_sources}) {
    for (const SourceInfo& s : *list) {
      names.push_back(s.name);
      licenses.push_back(s.license);
    }
  }
  std::vector<std::vector<SourceId>> groups = provenance_;
  groups.insert(groups.end(), plan.new_groups.begin(), plan.new_groups.end());
  wb->Put(cf_[internal::kCfMeta], std::string(internal::kMetaSources),
          internal::EncodeStringList(names));
  wb->Put(cf_[internal::kCfMeta], std::string(internal::kMetaSourceLicenses),
          internal::EncodeStringList(licenses));
  wb->Put(cf_[internal::kCfMeta], std::string(internal::kMetaProvenance),
          internal::EncodeProvenance(groups));
}

absl::Status KgStore::WriteIngest(const std::string& batch_id, IngestPlan* plan) {
  rocksdb::WriteBatch wb;
  IBGR_RETURN_IF_ERROR(PutEntityRecords(plan, &wb));
  PutGraphRecords(*plan, &wb);
  wb.Put(cf_[internal::kCfMeta], std::string(internal::kMetaGeneration),
         std::to_string(plan->marker.generation));
  wb.Put(cf_[internal::kCfMeta], std::string(internal::kMetaCounts),
         internal::EncodeCounts(plan->new_counts));
  if (!plan->new_groups.empty()) PutProvenanceMeta(*plan, &wb);
  wb.Put(cf_[internal::kCfBatches], batch_id, internal::EncodeIngestMarker(plan->marker));
  rocksdb::WriteOptions write_options;
  write_options.sync = true;
  IBGR_ROCKS_RETURN_IF_ERROR(db_->Write(write_options, &wb),
                             absl::StrCat("write ingest batch '", batch_id, "'"));
  return absl::OkStatus();
}

void KgStore::ApplyIngest(IngestPlan* plan) {
  absl::MutexLock lock(&mu_);
  for (size_t i = 0; i < plan->records.size(); ++i) {
    const Entity& rec = plan->records[i];
    if (rec.id >= plan->old_entity_count) {
      // New ids were handed out in order, and records were created in that same order.
      entities_.Append(rec.external_id, rec.type, rec.name);
      continue;
    }
    if (plan->name_changed[i]) entities_.names[rec.id] = entities_.Add(rec.name);
    if (plan->type_changed[i]) entities_.type_index[rec.id] = entities_.TypeIndex(rec.type);
  }
  for (Relation& r : plan->new_relations) {
    relation_by_name_.emplace(r.name, r.id);
    relations_.push_back(std::move(r));
  }
  for (SourceInfo& s : plan->new_sources) sources_.push_back(std::move(s));
  for (auto& g : plan->new_groups) provenance_.push_back(std::move(g));
  ApplyOverlayEdges(plan->new_triples);
  counts_ = std::move(plan->new_counts);
  generation_ = plan->marker.generation;
  if (read_snapshot_ != nullptr) db_->ReleaseSnapshot(read_snapshot_);
  read_snapshot_ = db_->GetSnapshot();
}

absl::Status KgStore::CompactOverlay() {
  if (options_.read_only) {
    return absl::FailedPreconditionError(
        absl::StrCat("KG store ", options_.snapshot_dir, " is open read-only"));
  }
  absl::MutexLock writer(&ingest_mu_);
  return CompactOverlayLocked();
}

absl::Status KgStore::CompactOverlayLocked() {
  CsrGraph merged;
  int64_t generation = 0;
  int64_t old_generation = -1;
  {
    // Shared: queries keep running while the merged arrays are built.
    absl::ReaderMutexLock lock(&mu_);
    if (csr_blobs_present_ && csr_generation_ == generation_) return absl::OkStatus();
    generation = generation_;
    old_generation = csr_blobs_present_ ? csr_generation_ : -1;
    const size_t n = entities_.size();
    auto extra = [](const absl::flat_hash_map<EntityId, OverlayRun>& runs) {
      return [&runs](EntityId node) -> EdgeRun {
        auto it = runs.find(node);
        return it == runs.end() ? EdgeRun{} : it->second.run();
      };
    };
    merged = CsrGraph::FromParts(CsrGraph::Merge(csr_.out(), n, extra(overlay_.out)),
                                 CsrGraph::Merge(csr_.in(), n, extra(overlay_.in)));
  }
  merged.BuildGroupIndexes();
  IBGR_RETURN_IF_ERROR(PersistCsr(merged, generation, old_generation));
  absl::MutexLock lock(&mu_);
  csr_ = std::move(merged);
  overlay_ = Overlay();
  csr_generation_ = generation;
  csr_blobs_present_ = true;
  return absl::OkStatus();
}

absl::Status KgStore::PersistCsr(const CsrGraph& graph, int64_t generation,
                                 int64_t old_generation) {
  std::random_device rd;
  const std::string path =
      absl::StrCat(options_.snapshot_dir, "/csr-", generation, "-", ::getpid(), "-", rd(), ".sst");
  const rocksdb::Options sst_options(
      internal::MakeDbOptions(), internal::MakeColumnFamilyOptions(internal::kCfCsr, block_cache_));
  absl::Status status = internal::WriteCsrSstFile(sst_options, path, graph, generation);
  if (status.ok()) {
    // One file holds the new chunks and the header that points at them: ingesting it switches
    // the persisted CSR atomically.
    rocksdb::IngestExternalFileOptions ingest;
    ingest.move_files = true;
    ingest.write_global_seqno = false;
    status = FromRocks(db_->IngestExternalFile(cf_[internal::kCfCsr], {path}, ingest),
                       "ingest CSR blobs");
  }
  std::remove(path.c_str());  // gone already after a successful move
  IBGR_RETURN_IF_ERROR(status);
  // Garbage: the previous generation's chunks and log entries the new CSR already includes.
  // Failing here leaves only unreachable data behind, so the compaction still counts.
  rocksdb::WriteBatch cleanup;
  if (old_generation >= 0 && old_generation != generation) {
    std::string begin = internal::CsrGenerationPrefix(old_generation);
    std::string end = begin;
    end.back() = static_cast<char>(end.back() + 1);
    cleanup.DeleteRange(cf_[internal::kCfCsr], begin, end);
  }
  cleanup.DeleteRange(cf_[internal::kCfIngestLog], internal::GenerationKey(0),
                      internal::GenerationKey(static_cast<uint64_t>(generation) + 1));
  rocksdb::WriteOptions write_options;
  write_options.sync = true;
  db_->Write(write_options, &cleanup).PermitUncheckedError();
  return absl::OkStatus();
}

}  // namespace ibgraphrag::kgstore
