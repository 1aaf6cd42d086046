#include "services/kgstore/kg_builder.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <tuple>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/utf8.h"

namespace ibgraphrag::kgstore {
namespace {

// Debian's Abseil is built with ABSL_OPTION_USE_STD_STRING_VIEW=0: its heterogeneous lookup
// takes absl::string_view, which std::string_view does not convert to implicitly.
absl::string_view AbslView(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// The first kMaxTripleNoteBytes of `note`, cut at a UTF-8 character boundary.
std::string CapNote(std::string_view note) {
  return std::string(common::Utf8Prefix(AbslView(note), kMaxTripleNoteBytes));
}

// Appends `note` to the "; "-joined notes of a triple: exact repeats are skipped, and a note
// that no longer fits in kMaxTripleNoteBytes is dropped rather than cut.
void AppendNote(std::string_view note, std::string* joined) {
  if (joined->empty()) {
    *joined = CapNote(note);
    return;
  }
  // Notes are short ("GWAS p=3e-12; trait 'type 2 diabetes'"); skip exact repeats.
  for (absl::string_view part : absl::StrSplit(*joined, "; ")) {
    if (part == AbslView(note)) return;
  }
  if (joined->size() + 2 + note.size() > kMaxTripleNoteBytes) return;
  absl::StrAppend(joined, "; ", AbslView(note));
}

uint64_t HashValue(std::string_view value) { return std::hash<std::string_view>()(value); }

// (entity, attribute kind, value hash) of a synonym, xref or definition.
using AttributeKey = std::tuple<EntityId, uint8_t, uint64_t>;
using AttributeKeys = absl::flat_hash_set<AttributeKey>;

// Licence words split at spaces and '-', lower-cased: "CC BY-NC-SA 4.0" -> cc, by, nc, sa, 4.0.
bool LicenseHasWord(std::string_view license, absl::string_view word) {
  for (absl::string_view part : absl::StrSplit(AbslView(license), absl::ByAnyChar(" -"))) {
    if (absl::EqualsIgnoreCase(part, word)) return true;
  }
  return false;
}

// Keeps the sources the filter allows, renumbered densely; returns old id -> new id
// (kDroppedSource for dropped ones) and the names only dropped sources carry.
constexpr SourceId kDroppedSource = std::numeric_limits<SourceId>::max();
std::vector<SourceId> KeepSources(const LicenseFilter& filter, std::vector<SourceInfo>* sources,
                                  absl::flat_hash_set<std::string>* excluded_names) {
  std::vector<SourceId> map(sources->size(), kDroppedSource);
  std::vector<SourceInfo> kept;
  for (size_t s = 0; s < sources->size(); ++s) {
    if (!filter.Keeps((*sources)[s].license)) {
      excluded_names->insert((*sources)[s].name);
      continue;
    }
    map[s] = static_cast<SourceId>(kept.size());
    kept.push_back(std::move((*sources)[s]));
  }
  // A name with one kept licence (per-row licences) still vouches for its entities.
  for (const SourceInfo& s : kept) excluded_names->erase(s.name);
  *sources = std::move(kept);
  return map;
}

// Interns sorted source sets as dense group ids in order of first use.
class GroupNumbering {
 public:
  explicit GroupNumbering(std::vector<std::vector<SourceId>>* groups) : groups_(groups) {}
  ProvenanceId Intern(std::vector<SourceId> members) {
    const std::string key(reinterpret_cast<const char*>(members.data()),
                          members.size() * sizeof(SourceId));
    auto [it, added] = by_members_.emplace(key, static_cast<ProvenanceId>(groups_->size()));
    if (added) groups_->push_back(std::move(members));
    return it->second;
  }

 private:
  std::vector<std::vector<SourceId>>* groups_;
  absl::flat_hash_map<std::string, ProvenanceId> by_members_;
};

// Sorts the triples (with their scores and notes) and numbers their source sets as provenance
// groups in order of first use, so group ids do not depend on import interleaving.
void SortAndNumber(const std::vector<std::vector<SourceId>>& build_groups,
                   const std::vector<float>& scores,
                   absl::flat_hash_map<uint32_t, std::string>* notes, KgData* kg) {
  std::vector<uint32_t> order(kg->triples.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return kg->triples[a] < kg->triples[b]; });
  std::vector<int64_t> final_group(build_groups.size(), -1);
  GroupNumbering numbering(&kg->provenance);
  std::vector<Triple> sorted;
  sorted.reserve(order.size());
  kg->triple_scores.assign(order.size(), kNoTripleScore);
  for (uint32_t i : order) {
    Triple t = kg->triples[i];
    int64_t& group = final_group[t.provenance];
    if (group < 0) group = numbering.Intern(build_groups[t.provenance]);
    t.provenance = static_cast<ProvenanceId>(group);
    if (auto it = notes->find(i); it != notes->end()) {
      kg->triple_notes.emplace_back(static_cast<uint32_t>(sorted.size()), std::move(it->second));
    }
    kg->triple_scores[sorted.size()] = i < scores.size() ? scores[i] : kNoTripleScore;
    sorted.push_back(t);
  }
  kg->triples = std::move(sorted);
}

// Group id -> group id over the kept sources (-1 when none of its sources is kept).
std::vector<int64_t> FilterGroups(const std::vector<SourceId>& source_map, KgData* kg) {
  std::vector<std::vector<SourceId>> kept;
  GroupNumbering numbering(&kept);
  std::vector<int64_t> group_map(kg->provenance.size(), -1);
  for (size_t g = 0; g < kg->provenance.size(); ++g) {
    std::vector<SourceId> members;
    for (SourceId s : kg->provenance[g]) {
      if (s < source_map.size() && source_map[s] != kDroppedSource) {
        members.push_back(source_map[s]);
      }
    }
    if (!members.empty()) group_map[g] = numbering.Intern(std::move(members));
  }
  kg->provenance = std::move(kept);
  return group_map;
}

// Keeps the triples whose group survives, with their scores and notes re-indexed.
void FilterTriples(const std::vector<int64_t>& group_map, KgData* kg) {
  std::vector<Triple> triples;
  std::vector<float> scores;
  std::vector<std::pair<uint32_t, std::string>> notes;
  auto note = kg->triple_notes.begin();
  for (size_t i = 0; i < kg->triples.size(); ++i) {
    while (note != kg->triple_notes.end() && note->first < i) ++note;
    const int64_t group = group_map[kg->triples[i].provenance];
    if (group < 0) continue;
    if (note != kg->triple_notes.end() && note->first == i) {
      notes.emplace_back(static_cast<uint32_t>(triples.size()), std::move(note->second));
    }
    Triple t = kg->triples[i];
    t.provenance = static_cast<ProvenanceId>(group);
    triples.push_back(t);
    scores.push_back(TripleScoreAt(*kg, i));
  }
  kg->triples = std::move(triples);
  kg->triple_scores = std::move(scores);
  kg->triple_notes = std::move(notes);
}

// Drops entities whose sources are all excluded and that no kept triple touches; renumbers the
// rest (ids stay dense) and rewrites the triples' ends. Entities without sources are kept.
void DropExcludedEntities(const absl::flat_hash_set<std::string>& excluded_names, KgData* kg) {
  std::vector<bool> keep(kg->entities.size(), false);
  for (const Triple& t : kg->triples) keep[t.head] = keep[t.tail] = true;
  for (const Entity& e : kg->entities) {
    if (e.sources.empty()) keep[e.id] = true;
    for (const std::string& s : e.sources) {
      if (!excluded_names.contains(s)) keep[e.id] = true;
    }
  }
  std::vector<EntityId> new_id(kg->entities.size(), kInvalidEntity);
  std::vector<Entity> entities;
  for (Entity& e : kg->entities) {
    if (!keep[e.id]) continue;
    new_id[e.id] = static_cast<EntityId>(entities.size());
    e.id = new_id[e.id];
    // A kept entity no longer claims a dropped source (KgBuilder::Finish(filter) has already
    // stripped the synonyms, xrefs and definitions only dropped sources gave).
    e.sources.erase(
        std::remove_if(e.sources.begin(), e.sources.end(),
                       [&](const std::string& s) { return excluded_names.contains(s); }),
        e.sources.end());
    entities.push_back(std::move(e));
  }
  kg->entities = std::move(entities);
  // Renumbering is monotonic, so the (head, relation, tail) order is preserved.
  for (Triple& t : kg->triples) {
    t.head = new_id[t.head];
    t.tail = new_id[t.tail];
  }
}

}  // namespace

std::string NormalizeLicense(std::string_view license) {
  std::vector<absl::string_view> words =
      absl::StrSplit(AbslView(license), absl::ByAnyChar(" \t\r\n"), absl::SkipEmpty());
  if (!words.empty() && absl::StartsWithIgnoreCase(words[0], "cc0")) {
    // "CC0", "CC0 1.0", "CC0-1.0", "cc0 1.0 universal": one public-domain dedication.
    return "CC0";
  }
  return absl::StrJoin(words, " ");
}

bool LicenseFilter::Keeps(std::string_view raw_license) const {
  const std::string license = NormalizeLicense(raw_license);
  const absl::string_view shown = license.empty() ? "unknown" : absl::string_view(license);
  if (!allow.empty()) {
    const bool allowed = std::any_of(allow.begin(), allow.end(), [&](const std::string& a) {
      return absl::EqualsIgnoreCase(NormalizeLicense(a), shown);
    });
    if (!allowed) return false;
  }
  return std::none_of(exclude.begin(), exclude.end(), [&](const std::string& pattern) {
    return absl::EqualsIgnoreCase(pattern, shown) || LicenseHasWord(license, pattern);
  });
}

std::string LicenseFilter::ToString() const {
  std::vector<std::string> parts;
  if (!allow.empty()) parts.push_back(absl::StrCat("allow=", absl::StrJoin(allow, "|")));
  if (!exclude.empty()) parts.push_back(absl::StrCat("exclude=", absl::StrJoin(exclude, "|")));
  return absl::StrJoin(parts, "; ");
}

float TripleScoreAt(const KgData& kg, size_t i) {
  return i < kg.triple_scores.size() ? kg.triple_scores[i] : kNoTripleScore;
}

std::string_view TripleNoteAt(const KgData& kg, size_t i) {
  const auto it = std::lower_bound(
      kg.triple_notes.begin(), kg.triple_notes.end(), i,
      [](const std::pair<uint32_t, std::string>& n, size_t index) { return n.first < index; });
  if (it == kg.triple_notes.end() || it->first != i) return {};
  return it->second;
}

void AddProvenanceCounts(const std::vector<SourceInfo>& sources,
                         const std::vector<std::vector<SourceId>>& provenance,
                         const std::vector<int64_t>& triples_per_group, KgCounts* counts) {
  for (size_t g = 0; g < provenance.size() && g < triples_per_group.size(); ++g) {
    const int64_t n = triples_per_group[g];
    if (n == 0) continue;
    std::vector<std::string_view> names, licenses;
    for (SourceId s : provenance[g]) {
      if (s >= sources.size()) continue;
      names.push_back(sources[s].name);
      const std::string& license = sources[s].license;
      licenses.push_back(license.empty() ? std::string_view("unknown") : std::string_view(license));
    }
    // A triple counts once per source name (one name may carry several per-row licences) and
    // once per licence, however many of its sources share it.
    for (std::vector<std::string_view>* list : {&names, &licenses}) {
      std::sort(list->begin(), list->end());
      list->erase(std::unique(list->begin(), list->end()), list->end());
    }
    for (std::string_view name : names) counts->triples_by_source[std::string(name)] += n;
    for (std::string_view l : licenses) counts->triples_by_license[std::string(l)] += n;
  }
}

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
  std::vector<int64_t> per_group(kg.provenance.size(), 0);
  for (const Triple& t : kg.triples) {
    if (t.provenance < per_group.size()) ++per_group[t.provenance];
  }
  AddProvenanceCounts(kg.sources, kg.provenance, per_group, &counts);
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
  if (!inserted && it->second != id) return false;
  // A canonical id re-asserted as an alias is no xref; a re-asserted xref gains an attribution.
  if (inserted) data_.entities[id].xrefs.emplace_back(alias_id);
  if (inserted || data_.entities[id].external_id != alias_id) {
    Attribute(id, AttributeKind::kXref, alias_id);
  }
  return true;
}

void KgBuilder::AddSynonym(EntityId id, std::string_view synonym) {
  Entity& e = data_.entities[id];
  if (synonym.empty() || synonym == e.name) return;
  Attribute(id, AttributeKind::kSynonym, synonym);
  if (std::find(e.synonyms.begin(), e.synonyms.end(), synonym) != e.synonyms.end()) return;
  e.synonyms.emplace_back(synonym);
}

void KgBuilder::SetDefinition(EntityId id, std::string_view definition) {
  if (definition.empty()) return;
  Attribute(id, AttributeKind::kDefinition, definition);
  Entity& e = data_.entities[id];
  if (e.definition.empty()) {
    e.definition = std::string(definition);
  } else if (e.definition != definition) {
    offered_definitions_.emplace_back(id,
                                      std::make_pair(attribute_source_, std::string(definition)));
  }
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

SourceId KgBuilder::AddSource(std::string_view name, std::string_view raw_license) {
  std::string license = NormalizeLicense(raw_license);
  std::string key = absl::StrCat(AbslView(name), "\t", license);
  if (auto it = source_by_key_.find(key); it != source_by_key_.end()) return it->second;
  const auto id = static_cast<SourceId>(data_.sources.size());
  data_.sources.push_back(SourceInfo{std::string(name), std::move(license)});
  source_by_key_.emplace(std::move(key), id);
  return id;
}

KgBuilder::BuildGroup KgBuilder::GroupWith(BuildGroup group, SourceId source) {
  const uint64_t step = (static_cast<uint64_t>(group) << 16) | source;
  if (auto it = group_plus_source_.find(step); it != group_plus_source_.end()) return it->second;
  std::vector<SourceId> members = groups_[group];
  const auto at = std::lower_bound(members.begin(), members.end(), source);
  if (at == members.end() || *at != source) members.insert(at, source);
  const std::string key(reinterpret_cast<const char*>(members.data()),
                        members.size() * sizeof(SourceId));
  auto [it, added] = group_by_members_.emplace(key, static_cast<BuildGroup>(groups_.size()));
  if (added) groups_.push_back(std::move(members));
  group_plus_source_.emplace(step, it->second);
  return it->second;
}

bool KgBuilder::AddTriple(EntityId head, RelationId relation, EntityId tail, SourceId source,
                          float score, std::string_view note) {
  if (head == tail) return false;
  const uint64_t ends = (static_cast<uint64_t>(head) << 32) | tail;
  const auto next = static_cast<uint32_t>(data_.triples.size());
  auto [it, added] = triple_index_.emplace(std::make_pair(ends, relation), next);
  if (added) data_.triples.push_back(Triple{head, relation, tail, 0});
  Triple& t = data_.triples[it->second];
  const BuildGroup before = t.provenance;
  t.provenance = GroupWith(before, source);
  if (before != 0 && t.provenance != before) ++merges_;
  if (!std::isnan(score) || !note.empty()) {
    Contribution& c = contributions_.emplace_back(Contribution{it->second, source, score});
    if (!note.empty()) {
      c.note = static_cast<int32_t>(contribution_notes_.size());
      contribution_notes_.emplace_back(note);
    }
  }
  return added;
}

void KgBuilder::MergeContributions(const std::vector<bool>& keep) {
  scores_.assign(data_.triples.size(), kNoTripleScore);
  notes_.clear();
  for (const Contribution& c : contributions_) {
    if (c.source < keep.size() && !keep[c.source]) continue;
    // NaN compares false, so a real score always replaces "none" and "none" never replaces one.
    float& kept = scores_[c.triple];
    if (!std::isnan(c.score) && (std::isnan(kept) || c.score > kept)) kept = c.score;
    if (c.note >= 0) AppendNote(contribution_notes_[c.note], &notes_[c.triple]);
  }
}

KgData KgBuilder::FinishKeeping(const std::vector<bool>& keep_source, const LicenseFilter* filter) {
  MergeContributions(keep_source);
  StripExcludedAttributes(ExcludedAttributeSources(keep_source, filter));
  KgData out = std::move(data_);
  SortAndNumber(groups_, scores_, &notes_, &out);
  Reset();
  return out;
}

KgData KgBuilder::Finish() {
  return FinishKeeping(std::vector<bool>(data_.sources.size(), true), nullptr);
}

KgData KgBuilder::Finish(const LicenseFilter& filter) {
  std::vector<bool> keep(data_.sources.size(), true);
  for (size_t s = 0; s < keep.size(); ++s) keep[s] = filter.Keeps(data_.sources[s].license);
  KgData out = FinishKeeping(keep, &filter);
  ApplyLicenseFilter(filter, &out);
  return out;
}

void KgBuilder::SetAttributeSource(std::string_view source_name, std::string_view license) {
  if (source_name.empty()) {
    attribute_source_ = 0;
    return;
  }
  std::string normalized = NormalizeLicense(license);
  auto [it, added] = attribute_source_index_.emplace(
      absl::StrCat(absl::string_view(source_name.data(), source_name.size()), "\t", normalized),
      static_cast<uint16_t>(attribute_sources_.size()));
  if (added) {
    attribute_sources_.emplace_back(source_name);
    attribute_source_licenses_.push_back(std::move(normalized));
  }
  attribute_source_ = it->second;
}

void KgBuilder::Attribute(EntityId id, AttributeKind kind, std::string_view value) {
  attributions_.push_back(Attribution{id, kind, attribute_source_, HashValue(value)});
}

std::vector<bool> KgBuilder::ExcludedAttributeSources(const std::vector<bool>& keep_source,
                                                      const LicenseFilter* filter) const {
  std::vector<bool> excluded(attribute_sources_.size(), false);
  if (filter == nullptr || filter->empty()) return excluded;
  // Without a licence of its own, an attribute source is excluded when it names a triple source
  // none of whose licences is kept.
  absl::flat_hash_map<std::string, bool> name_kept;
  for (size_t s = 0; s < data_.sources.size(); ++s) {
    name_kept[data_.sources[s].name] |= s >= keep_source.size() || keep_source[s];
  }
  for (size_t i = 1; i < attribute_sources_.size(); ++i) {
    if (!attribute_source_licenses_[i].empty()) {
      excluded[i] = !filter->Keeps(attribute_source_licenses_[i]);
      continue;
    }
    const auto it = name_kept.find(attribute_sources_[i]);
    excluded[i] = it != name_kept.end() && !it->second;
  }
  return excluded;
}

void KgBuilder::StripExcludedAttributes(const std::vector<bool>& excluded) {
  if (std::find(excluded.begin(), excluded.end(), true) == excluded.end()) return;
  AttributeKeys given, kept;
  absl::flat_hash_set<EntityId> touched;
  for (const Attribution& a : attributions_) {
    const AttributeKey key{a.entity, static_cast<uint8_t>(a.kind), a.value_hash};
    given.insert(key);
    if (!excluded[a.source]) {
      kept.insert(key);
    } else {
      touched.insert(a.entity);
    }
  }
  auto dropped = [&](EntityId id, AttributeKind kind, std::string_view value) {
    const AttributeKey key{id, static_cast<uint8_t>(kind), HashValue(value)};
    return given.contains(key) && !kept.contains(key);
  };
  for (EntityId id : touched) {
    Entity& e = data_.entities[id];
    for (auto [list, kind] : {std::make_pair(&e.synonyms, AttributeKind::kSynonym),
                              std::make_pair(&e.xrefs, AttributeKind::kXref)}) {
      // `kind = kind`: C++17 lambdas cannot capture a structured binding (clang refuses it).
      list->erase(
          std::remove_if(list->begin(), list->end(),
                         [&, kind = kind](const std::string& v) { return dropped(id, kind, v); }),
          list->end());
    }
    if (!e.definition.empty() && dropped(id, AttributeKind::kDefinition, e.definition)) {
      e.definition.clear();
      for (const auto& [entity, offer] : offered_definitions_) {
        if (entity != id || excluded[offer.first]) continue;
        e.definition = offer.second;
        break;
      }
    }
  }
}

void ApplyLicenseFilter(const LicenseFilter& filter, KgData* kg) {
  if (filter.empty()) return;
  absl::flat_hash_set<std::string> excluded_names;
  const std::vector<SourceId> source_map = KeepSources(filter, &kg->sources, &excluded_names);
  FilterTriples(FilterGroups(source_map, kg), kg);
  DropExcludedEntities(excluded_names, kg);
  kg->license_filter = filter.ToString();
}

void KgBuilder::Reset() {
  data_ = KgData();
  by_external_id_.clear();
  relation_by_name_.clear();
  source_by_key_.clear();
  triple_index_.clear();
  groups_.assign(1, {});
  group_by_members_.clear();
  group_plus_source_.clear();
  contributions_.clear();
  contribution_notes_.clear();
  attributions_.clear();
  offered_definitions_.clear();
  attribute_sources_.assign(1, "");
  attribute_source_licenses_.assign(1, "");
  attribute_source_index_.clear();
  attribute_source_ = 0;
  scores_.clear();
  notes_.clear();
  merges_ = 0;
}

}  // namespace ibgraphrag::kgstore
