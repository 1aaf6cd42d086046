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

// The one spelling of a licence the KG stores and filters on: surrounding whitespace trimmed,
// inner runs collapsed, and CC0's spellings ("CC0 1.0", "cc0-1.0", "CC0") all "CC0"; other
// licences keep their published form ("CC BY 4.0", "ODbL 1.0").
std::string NormalizeLicense(std::string_view license);

// Which sources a build keeps, by licence. Empty = keep everything.
struct LicenseFilter {
  // Allow-list: a source is kept only when its licence equals one of these (case-insensitive,
  // both sides NormalizeLicense'd: "CC0 1.0" allows "CC0"). Empty = no allow-list. Use "unknown"
  // to allow sources without a licence.
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
// A finished KgData holds merged scores and notes and unattributed entity attributes, so this
// alone cannot remove what excluded sources contributed to kept triples and entities: build with
// KgBuilder::Finish(filter), which can.
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
  // Names the source (an entity source name, "drugbank-drugs") the following AddAlias /
  // AddSynonym / SetDefinition calls come from; "" = none. Finish(filter) then strips the xrefs,
  // synonyms and definitions that only excluded sources gave (values given without a source, or
  // also by a kept source, stay). A source given with its `license` is excluded when the filter
  // refuses that licence, so an attribute-only source (xrefs, synonyms, no triples) is filtered
  // too; without one it is excluded only when it names a triple source none of whose licences
  // is kept. ImportTabularFile sets it for the file it reads.
  void SetAttributeSource(std::string_view source_name, std::string_view license);
  void SetAttributeSource(std::string_view source_name) { SetAttributeSource(source_name, ""); }
  const std::string& attribute_source() const { return attribute_sources_[attribute_source_]; }
  const std::string& attribute_source_license() const {
    return attribute_source_licenses_[attribute_source_];
  }
  // Makes `alias_id` resolve to `id` and records it as an xref. An alias already bound to another
  // entity keeps its first binding (returns false) so merges stay deterministic.
  bool AddAlias(EntityId id, std::string_view alias_id);
  void AddSynonym(EntityId id, std::string_view synonym);  // ignores duplicates and the name itself
  // Keeps the first non-empty one; later ones are remembered in case a licence filter drops the
  // source of the first.
  void SetDefinition(EntityId id, std::string_view definition);
  void AddEntitySource(EntityId id, std::string_view source);
  Entity& mutable_entity(EntityId id) { return data_.entities[id]; }
  const Entity& entity(EntityId id) const { return data_.entities[id]; }
  size_t num_entities() const { return data_.entities.size(); }

  RelationId AddRelation(std::string_view name, std::string_view head_type,
                         std::string_view tail_type, std::string_view description);
  // The source known by (name, license); created when new. A file with a licence per row adds
  // one source per (name, licence). Licences are stored NormalizeLicense'd ("CC0 1.0" -> "CC0").
  SourceId AddSource(std::string_view name, std::string_view license);
  SourceId AddSource(std::string_view name) { return AddSource(name, ""); }  // licence unknown
  const std::vector<SourceInfo>& sources() const { return data_.sources; }

  // Adds (head, relation, tail) asserted by `source`, or MERGES into the existing triple: it gains
  // `source` in its provenance, keeps the larger score (NaN = none) and appends `note` (joined
  // with "; ", duplicates skipped, capped at kMaxTripleNoteBytes). Scores and notes are kept per
  // (triple, source) until Finish merges those of the kept sources, so a licence filter never
  // leaves an excluded source's score or note on a triple. Returns true when the triple is new;
  // self-loops are refused (false).
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
  // builder is empty afterwards. The filtered overload merges scores and notes over the kept
  // sources only, strips entity attributes only excluded sources gave (SetAttributeSource), then
  // applies ApplyLicenseFilter. Entity names are not attributed: an entity kept because a kept
  // source mentions it keeps the name it was created with.
  KgData Finish();
  KgData Finish(const LicenseFilter& filter);

 private:
  using BuildGroup = uint32_t;  // builder-local provenance set id; 0 = empty set
  // One source's score and note for one triple (only recorded when it has either).
  struct Contribution {
    uint32_t triple;
    SourceId source;
    float score;        // kNoTripleScore = none
    int32_t note = -1;  // index into contribution_notes_, -1 = none
  };
  enum class AttributeKind : uint8_t { kSynonym, kXref, kDefinition };
  // Which attribute source gave an entity a synonym, xref or definition (value as a hash; the
  // text of definitions is kept in offered_definitions_).
  struct Attribution {
    EntityId entity;
    AttributeKind kind;
    uint16_t source;  // index into attribute_sources_, 0 = none
    uint64_t value_hash;
  };
  BuildGroup GroupWith(BuildGroup group, SourceId source);
  void Attribute(EntityId id, AttributeKind kind, std::string_view value);
  // Scores and notes per triple from the contributions of sources with keep[source] set.
  void MergeContributions(const std::vector<bool>& keep);
  // Which attribute sources `filter` excludes (by their own licence, else by their triple
  // sources' licences); nullptr = none.
  std::vector<bool> ExcludedAttributeSources(const std::vector<bool>& keep_source,
                                             const LicenseFilter* filter) const;
  void StripExcludedAttributes(const std::vector<bool>& excluded);
  KgData FinishKeeping(const std::vector<bool>& keep_source, const LicenseFilter* filter);
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
  std::vector<Contribution> contributions_;                      // in AddTriple order
  std::vector<std::string> contribution_notes_;
  std::vector<Attribution> attributions_;  // in call order
  // (entity, definition) offered, in call order, with the attribute source that offered it.
  std::vector<std::pair<EntityId, std::pair<uint16_t, std::string>>> offered_definitions_;
  std::vector<std::string> attribute_sources_{""};          // index 0 = none
  std::vector<std::string> attribute_source_licenses_{""};  // parallel, normalised; "" = unknown
  absl::flat_hash_map<std::string, uint16_t> attribute_source_index_;  // name '\t' licence
  uint16_t attribute_source_ = 0;
  std::vector<float> scores_;                         // parallel to data_.triples, set by Finish
  absl::flat_hash_map<uint32_t, std::string> notes_;  // triple index -> joined notes, by Finish
  int64_t merges_ = 0;
};

}  // namespace ibgraphrag::kgstore

#endif  // IBGRAPHRAG_SERVICES_KGSTORE_KG_BUILDER_H_
