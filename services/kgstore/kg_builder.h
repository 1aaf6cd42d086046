// KgBuilder assembles a KgData from many sources: entities are merged by external id and by xref
// aliases (DO ids join UMLS CUIs, MeSH, OMIM), relations by name, triples deduplicated.
#ifndef IBGRAPHRAG_SERVICES_KGSTORE_KG_BUILDER_H_
#define IBGRAPHRAG_SERVICES_KGSTORE_KG_BUILDER_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "services/kgstore/kg_types.h"

namespace ibgraphrag::kgstore {

class KgBuilder {
 public:
  KgBuilder() = default;
  KgBuilder(const KgBuilder&) = delete;
  KgBuilder& operator=(const KgBuilder&) = delete;

  // Returns the entity known by `external_id` (as canonical id or as an alias); creates it with
  // `type` and `name` when unknown. An empty name on an existing entity is filled in.
  EntityId AddEntity(std::string_view external_id, std::string_view type, std::string_view name);
  // The entity for a canonical id or alias, if any.
  std::optional<EntityId> Resolve(std::string_view any_id) const;
  // Makes `alias_id` resolve to `id` and records it as an xref. An alias already bound to another
  // entity keeps its first binding (returns false) so merges stay deterministic.
  bool AddAlias(EntityId id, std::string_view alias_id);
  void AddSynonym(EntityId id, std::string_view synonym);  // ignores duplicates and the name itself
  void SetDefinition(EntityId id, std::string_view definition);  // keeps the first non-empty one
  void AddEntitySource(EntityId id, std::string_view source);
  Entity& mutable_entity(EntityId id) { return data_.entities[id]; }
  const Entity& entity(EntityId id) const { return data_.entities[id]; }
  size_t num_entities() const { return data_.entities.size(); }

  RelationId AddRelation(std::string_view name, std::string_view head_type,
                         std::string_view tail_type, std::string_view description);
  SourceId AddSource(std::string_view name);
  // Adds (head, relation, tail); returns false when the triple already exists or is a self-loop.
  bool AddTriple(EntityId head, RelationId relation, EntityId tail, SourceId source);
  size_t num_triples() const { return data_.triples.size(); }

  void AddReport(SourceReport report) { data_.reports.push_back(std::move(report)); }

  // Sorts triples and hands the graph over; the builder is empty afterwards.
  KgData Finish();

 private:
  KgData data_;
  absl::flat_hash_map<std::string, EntityId> by_external_id_;  // canonical ids and aliases
  absl::flat_hash_map<std::string, RelationId> relation_by_name_;
  absl::flat_hash_map<std::string, SourceId> source_by_name_;
  absl::flat_hash_set<std::pair<uint64_t, uint32_t>> triple_keys_;  // ((head<<32)|tail, relation)
};

}  // namespace ibgraphrag::kgstore

#endif  // IBGRAPHRAG_SERVICES_KGSTORE_KG_BUILDER_H_
