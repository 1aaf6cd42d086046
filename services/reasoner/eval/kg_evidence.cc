#include "services/reasoner/eval/kg_evidence.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "services/reasoner/text_util.h"

namespace ibgraphrag::reasoner::eval {
namespace {

using kgstore::EntityId;

// Single words that never name a topic: function words, negation, numbers, very short tokens.
bool SkipSingleWordKey(const std::string& word, size_t min_chars) {
  return word.size() < min_chars || IsStopWord(word) || IsNumberWord(word) || word == "not" ||
         word == "no";
}

using KeyMap = absl::flat_hash_map<std::string, std::vector<EntityId>>;

// Adds `text` (a name or synonym of `id`) to `keys` under its normalised words.
void AddKey(absl::string_view text, EntityId id, const KgEvidenceOptions& options, KeyMap* keys) {
  std::vector<std::string> words = Words(text);
  if (words.empty() || static_cast<int>(words.size()) > options.max_key_words) return;
  if (words.size() == 1 && SkipSingleWordKey(words[0], options.min_key_chars)) return;
  if (std::all_of(words.begin(), words.end(),
                  [](const std::string& w) { return IsStopWord(w) || IsNumberWord(w); })) {
    return;
  }
  (*keys)[absl::StrJoin(words, " ")].push_back(id);
}

}  // namespace

KgEvidenceIndex::KgEvidenceIndex(const kgstore::KgData& kg, const KgEvidenceOptions& options)
    : kg_(kg), options_(options) {
  KeyMap keys;
  for (const kgstore::Entity& entity : kg.entities) {
    AddKey(entity.name, entity.id, options_, &keys);
    for (const std::string& synonym : entity.synonyms) AddKey(synonym, entity.id, options_, &keys);
  }
  IndexKeys(keys);
  // Adjacency in CSR form: count, prefix-sum, fill.
  const size_t n = kg.entities.size();
  offsets_.assign(n + 1, 0);
  for (const kgstore::Triple& t : kg.triples) {
    ++offsets_[t.head + 1];
    if (t.tail != t.head) ++offsets_[t.tail + 1];
  }
  for (size_t i = 0; i < n; ++i) offsets_[i + 1] += offsets_[i];
  incident_.resize(offsets_[n]);
  std::vector<uint32_t> next(offsets_.begin(), offsets_.end() - 1);
  for (uint32_t i = 0; i < kg.triples.size(); ++i) {
    const kgstore::Triple& t = kg.triples[i];
    incident_[next[t.head]++] = i;
    if (t.tail != t.head) incident_[next[t.tail]++] = i;
  }
}

void KgEvidenceIndex::IndexKeys(const KeyMap& keys) {
  for (const auto& [key, names] : keys) {
    std::vector<EntityId> ids = names;
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    // A key naming too many entities is ambiguous: left out, so a shorter key can match instead.
    if (static_cast<int>(ids.size()) > options_.max_entities_per_key) continue;
    const std::vector<std::string> words = absl::StrSplit(key, ' ');
    const uint32_t phrase = keys_.Insert(words);
    if (phrase >= entities_.size()) entities_.resize(phrase + 1);
    entities_[phrase] = std::move(ids);
  }
}

std::vector<TopicMatch> KgEvidenceIndex::FindTopicEntities(absl::string_view text) const {
  const std::vector<std::string> words = Words(text);
  std::vector<TopicMatch> out;
  absl::flat_hash_set<EntityId> seen;
  for (size_t i = 0; i < words.size();) {
    const common::TokenTrie::Match match = keys_.LongestMatch(
        words.size() - i, [&](size_t k) -> const std::string& { return words[i + k]; });
    if (match.length == 0) {
      ++i;
      continue;
    }
    const std::string key = absl::StrJoin(words.begin() + i, words.begin() + i + match.length, " ");
    for (EntityId id : entities_[match.phrase]) {
      if (seen.insert(id).second) out.push_back({id, key});
    }
    i += match.length;
  }
  return out;
}

EntityRef KgEvidenceIndex::Ref(EntityId id) const {
  const kgstore::Entity& e = kg_.entities[id];
  return {e.external_id, e.name};
}

EvidenceTriple KgEvidenceIndex::MakeTriple(uint32_t index, double score) const {
  const kgstore::Triple& t = kg_.triples[index];
  const kgstore::Relation& relation = kg_.relations[t.relation];
  EvidenceTriple out;
  out.head = Ref(t.head);
  out.relation = relation.name;
  out.relation_description = relation.description;
  out.tail = Ref(t.tail);
  out.score = score;
  // The first source that asserted the triple (KgData::provenance lists them all).
  if (t.provenance < kg_.provenance.size() && !kg_.provenance[t.provenance].empty()) {
    out.source = kg_.sources[kg_.provenance[t.provenance].front()].name;
  }
  out.hop = 1;
  return out;
}

std::vector<EvidenceTriple> KgEvidenceIndex::Evidence(const std::vector<EntityId>& topics,
                                                      int max_triples,
                                                      EvidenceScoring scoring) const {
  std::vector<EvidenceTriple> out;
  if (max_triples <= 0) return out;
  const absl::flat_hash_set<EntityId> topic_set(topics.begin(), topics.end());
  absl::flat_hash_set<uint32_t> taken;
  const double pair_score = 1.0;
  const double other_score = scoring == EvidenceScoring::kUniform ? 1.0 : 0.5;
  // Tier 1: triples connecting two topics.
  for (EntityId topic : topics) {
    for (uint32_t k = offsets_[topic]; k < offsets_[topic + 1]; ++k) {
      const uint32_t index = incident_[k];
      const kgstore::Triple& t = kg_.triples[index];
      if (t.head == t.tail || !topic_set.contains(t.head) || !topic_set.contains(t.tail)) continue;
      if (!taken.insert(index).second) continue;
      out.push_back(MakeTriple(index, pair_score));
      if (static_cast<int>(out.size()) >= max_triples) return out;
    }
  }
  // Tier 2: the other one-hop triples, one per topic per round.
  std::vector<uint32_t> cursor(topics.size());
  for (size_t i = 0; i < topics.size(); ++i) cursor[i] = offsets_[topics[i]];
  bool progress = true;
  while (progress && static_cast<int>(out.size()) < max_triples) {
    progress = false;
    for (size_t i = 0; i < topics.size() && static_cast<int>(out.size()) < max_triples; ++i) {
      const uint32_t end = offsets_[topics[i] + 1];
      while (cursor[i] < end && taken.contains(incident_[cursor[i]])) ++cursor[i];
      if (cursor[i] >= end) continue;
      const uint32_t index = incident_[cursor[i]++];
      taken.insert(index);
      out.push_back(MakeTriple(index, other_score));
      progress = true;
    }
  }
  return out;
}

}  // namespace ibgraphrag::reasoner::eval
