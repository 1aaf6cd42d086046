// KgBuilder assembles a KgData from many sources: entities are merged by external id and by xref
// aliases (DO ids join UMLS CUIs, MeSH, OMIM), relations by name, triples deduplicated.
#ifndef IBGRAPHRAG_SERVICES_KGSTORE_KG_BUILDER_H_
#define IBGRAPHRAG_SERVICES_KGSTORE_KG_BUILDER_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "services/kgstore/kg_types.h"

namespace ibgraphrag::kgstore {

// Which sources a build keeps, by licence. Empty = keep everything.
struct LicenseFilter {
  // Allow-list: a source is kept only when its licence equals one of these (case-insensitive).
  // Empty = no allow-list. Use "unknown" to allow sources without a licence.
  std::vector<std::string> allow;
  // Deny patterns: a source is dropped when a pattern equals its whole licence or one of its
  // words split at spaces and '-' (case-insensitive): "NC" drops "CC BY-NC-SA 4.0".
  std::vector<std::string> exclude;
  bool empty() const { return allow.empty() && exclude.empty(); }
  bool Keeps(std::string_view license) const;
  std::string ToString() const;  // "allow=CC0|CC BY 4.0; exclude=NC", recorded in the manifest
};

// Applies `filter` to a finished graph (KgBuilder::Finish(filter) does this): sources whose
// licence the filter refuses are removed; a triple keeps its allowed sources and disappears when
// none remains; entities that only removed sources mention and that no kept triple touches
// disappear (ids renumbered densely, order kept). Records the filter in kg->license_filter.
void ApplyLicenseFilter(const LicenseFilter& filter, KgData* kg);

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
  // The source known by (name, license); created when new. A file with a licence per row adds
  // one source per (name, licence). Licence strings are kept as published ("CC BY 4.0").
  SourceId AddSource(std::string_view name, std::string_view license);
  SourceId AddSource(std::string_view name) { return AddSource(name, ""); }  // licence unknown
  const std::vector<SourceInfo>& sources() const { return data_.sources; }

  // Adds (head, relation, tail) asserted by `source`, or MERGES into the existing triple: it gains
  // `source` in its provenance, keeps the larger score (NaN = none) and appends `note` (joined
  // with "; ", duplicates skipped, capped at kMaxTripleNoteBytes). Returns true when the triple
  // is new; self-loops are refused (false).
  bool AddTriple(EntityId head, RelationId relation, EntityId tail, SourceId source, float score,
                 std::string_view note);
  bool AddTriple(EntityId head, RelationId relation, EntityId tail, SourceId source) {
    return AddTriple(head, relation, tail, source, kNoTripleScore, {});
  }
  size_t num_triples() const { return data_.triples.size(); }
  // How often an existing triple gained a further source (the same fact from another source).
  int64_t num_merges() const { return merges_; }

  void AddReport(SourceReport report) { data_.reports.push_back(std::move(report)); }

  // Sorts triples, numbers provenance groups (in triple order) and hands the graph over; the
  // builder is empty afterwards. The filtered overload then applies ApplyLicenseFilter.
  KgData Finish();
  KgData Finish(const LicenseFilter& filter);

 private:
  using BuildGroup = uint32_t;  // builder-local provenance set id; 0 = empty set
  BuildGroup GroupWith(BuildGroup group, SourceId source);
  void MergeInto(uint32_t index, SourceId source, float score, std::string_view note);
  void Reset();

  KgData data_;
  absl::flat_hash_map<std::string, EntityId> by_external_id_;  // canonical ids and aliases
  absl::flat_hash_map<std::string, RelationId> relation_by_name_;
  absl::flat_hash_map<std::string, SourceId> source_by_key_;  // name + '\t' + licence
  // ((head<<32)|tail, relation) -> index into data_.triples
  absl::flat_hash_map<std::pair<uint64_t, uint32_t>, uint32_t> triple_index_;
  // Builder-local source sets; data_.triples[i].provenance holds a BuildGroup until Finish.
  std::vector<std::vector<SourceId>> groups_{{}};
  absl::flat_hash_map<std::string, BuildGroup> group_by_members_;
  absl::flat_hash_map<uint64_t, BuildGroup> group_plus_source_;  // (group<<16)|source -> group
  std::vector<float> scores_;                                    // parallel to data_.triples
  absl::flat_hash_map<uint32_t, std::string> notes_;             // triple index -> joined notes
  int64_t merges_ = 0;
};

}  // namespace ibgraphrag::kgstore

#endif  // IBGRAPHRAG_SERVICES_KGSTORE_KG_BUILDER_H_
