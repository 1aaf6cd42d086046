#include "services/kgstore/kg_builder.h"

#include <algorithm>

namespace ibgraphrag::kgstore {
namespace {

// Debian's Abseil is built with ABSL_OPTION_USE_STD_STRING_VIEW=0: its heterogeneous lookup
// takes absl::string_view, which std::string_view does not convert to implicitly.
absl::string_view AbslView(std::string_view s) { return absl::string_view(s.data(), s.size()); }

}  // namespace

KgCounts CountKg(const KgData& kg) {
  KgCounts counts;
  counts.entities = static_cast<int64_t>(kg.entities.size());
  counts.relations = static_cast<int64_t>(kg.relations.size());
  counts.triples = static_cast<int64_t>(kg.triples.size());
  for (const Entity& e : kg.entities) ++counts.entities_by_type[e.type];
  std::vector<int64_t> per_relation(kg.relations.size(), 0);
  for (const Triple& t : kg.triples) ++per_relation[t.relation];
  for (size_t r = 0; r < kg.relations.size(); ++r) {
    counts.triples_by_relation[kg.relations[r].name] = per_relation[r];
  }
  return counts;
}

EntityId KgBuilder::AddEntity(std::string_view external_id, std::string_view type,
                              std::string_view name) {
  if (auto it = by_external_id_.find(AbslView(external_id)); it != by_external_id_.end()) {
    Entity& e = data_.entities[it->second];
    if (e.name.empty() && !name.empty()) e.name = std::string(name);
    if (e.type.empty() && !type.empty()) e.type = std::string(type);
    return it->second;
  }
  const auto id = static_cast<EntityId>(data_.entities.size());
  Entity& e = data_.entities.emplace_back();
  e.id = id;
  e.external_id = std::string(external_id);
  e.type = std::string(type);
  e.name = std::string(name);
  by_external_id_.emplace(e.external_id, id);
  return id;
}

std::optional<EntityId> KgBuilder::Resolve(std::string_view any_id) const {
  if (auto it = by_external_id_.find(AbslView(any_id)); it != by_external_id_.end()) {
    return it->second;
  }
  return std::nullopt;
}

bool KgBuilder::AddAlias(EntityId id, std::string_view alias_id) {
  auto [it, inserted] = by_external_id_.emplace(std::string(alias_id), id);
  if (!inserted) return it->second == id;
  data_.entities[id].xrefs.emplace_back(alias_id);
  return true;
}

void KgBuilder::AddSynonym(EntityId id, std::string_view synonym) {
  Entity& e = data_.entities[id];
  if (synonym.empty() || synonym == e.name) return;
  if (std::find(e.synonyms.begin(), e.synonyms.end(), synonym) != e.synonyms.end()) return;
  e.synonyms.emplace_back(synonym);
}

void KgBuilder::SetDefinition(EntityId id, std::string_view definition) {
  Entity& e = data_.entities[id];
  if (e.definition.empty()) e.definition = std::string(definition);
}

void KgBuilder::AddEntitySource(EntityId id, std::string_view source) {
  Entity& e = data_.entities[id];
  if (std::find(e.sources.begin(), e.sources.end(), source) == e.sources.end()) {
    e.sources.emplace_back(source);
  }
}

RelationId KgBuilder::AddRelation(std::string_view name, std::string_view head_type,
                                  std::string_view tail_type, std::string_view description) {
  if (auto it = relation_by_name_.find(AbslView(name)); it != relation_by_name_.end()) {
    return it->second;
  }
  const auto id = static_cast<RelationId>(data_.relations.size());
  Relation& r = data_.relations.emplace_back();
  r.id = id;
  r.name = std::string(name);
  r.head_type = std::string(head_type);
  r.tail_type = std::string(tail_type);
  r.description = std::string(description);
  relation_by_name_.emplace(r.name, id);
  return id;
}

SourceId KgBuilder::AddSource(std::string_view name) {
  if (auto it = source_by_name_.find(AbslView(name)); it != source_by_name_.end()) {
    return it->second;
  }
  const auto id = static_cast<SourceId>(data_.sources.size());
  data_.sources.emplace_back(name);
  source_by_name_.emplace(std::string(name), id);
  return id;
}

bool KgBuilder::AddTriple(EntityId head, RelationId relation, EntityId tail, SourceId source) {
  if (head == tail) return false;
  const uint64_t ends = (static_cast<uint64_t>(head) << 32) | tail;
  if (!triple_keys_.emplace(ends, relation).second) return false;
  data_.triples.push_back(Triple{head, relation, tail, source});
  return true;
}

KgData KgBuilder::Finish() {
  std::sort(data_.triples.begin(), data_.triples.end());
  KgData out = std::move(data_);
  data_ = KgData();
  by_external_id_.clear();
  relation_by_name_.clear();
  source_by_name_.clear();
  triple_keys_.clear();
  return out;
}

}  // namespace ibgraphrag::kgstore
