#include "services/alignment/encoder_training/training_concepts.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/file_util.h"
#include "services/alignment/name_features.h"
#include "services/alignment/text_normalize.h"
#include "services/kgstore/import/line_reader.h"

namespace ibgraphrag::alignment::training {
namespace {

// Union-find over lexicon entries; the smaller index becomes the root so the result does not
// depend on the order unions happen in.
class DisjointSets {
 public:
  explicit DisjointSets(size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  uint32_t Find(uint32_t x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void Union(uint32_t a, uint32_t b) {
    a = Find(a);
    b = Find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }

 private:
  std::vector<uint32_t> parent_;
};

// "UMLS_CUI:C001" -> ("UMLS_CUI", "C001"); the prefix upper-cased, "MESH" for "MeSH".
std::pair<std::string, std::string> SplitCurie(absl::string_view id) {
  const size_t colon = id.find(':');
  if (colon == absl::string_view::npos) return {"", std::string(id)};
  return {absl::AsciiStrToUpper(id.substr(0, colon)), std::string(id.substr(colon + 1))};
}

// The join key of an id: CUIs from "UMLS" and "UMLS_CUI" meet, as do "MIM" and "OMIM".
std::string JoinKey(absl::string_view id, const absl::flat_hash_set<std::string>& prefixes) {
  auto [prefix, local] = SplitCurie(id);
  if (!prefixes.contains(prefix) || local.empty()) return "";
  if (prefix == "UMLS_CUI") prefix = "UMLS";
  if (prefix == "OMIM") prefix = "MIM";
  if (prefix == "ORPHA" || prefix == "ORPHANET") prefix = "ORDO";
  return absl::StrCat(prefix, ":", local);
}

// Entries per join key (each entry once per key).
absl::flat_hash_map<std::string, std::vector<uint32_t>> EntriesByKey(
    const Lexicon& lexicon, const ConceptOptions& options) {
  const absl::flat_hash_set<std::string> prefixes(options.join_prefixes.begin(),
                                                  options.join_prefixes.end());
  absl::flat_hash_map<std::string, std::vector<uint32_t>> by_key;
  for (uint32_t e = 0; e < lexicon.entries.size(); ++e) {
    const LexiconEntry& entry = lexicon.entries[e];
    absl::flat_hash_set<std::string> keys;
    if (auto k = JoinKey(entry.external_id, prefixes); !k.empty()) keys.insert(k);
    for (const std::string& x : entry.xrefs) {
      if (auto k = JoinKey(x, prefixes); !k.empty()) keys.insert(k);
    }
    for (const std::string& k : keys) by_key[k].push_back(e);
  }
  return by_key;
}

// Components of the union, each ascending; components over the size cap split into singletons.
std::vector<std::vector<uint32_t>> JoinedComponents(const Lexicon& lexicon,
                                                    const ConceptOptions& options) {
  const uint32_t n = static_cast<uint32_t>(lexicon.entries.size());
  DisjointSets sets(n);
  for (const auto& [key, entries] : EntriesByKey(lexicon, options)) {
    if (entries.size() < 2 || static_cast<int>(entries.size()) > options.max_entries_per_xref) {
      continue;
    }
    for (uint32_t e : entries) sets.Union(entries[0], e);
  }
  std::vector<std::vector<uint32_t>> by_root(n);
  for (uint32_t e = 0; e < n; ++e) by_root[sets.Find(e)].push_back(e);
  std::vector<std::vector<uint32_t>> components;
  for (auto& members : by_root) {
    if (members.empty()) continue;
    if (static_cast<int>(members.size()) <= options.max_entries_per_concept) {
      components.push_back(std::move(members));
    } else {
      for (uint32_t e : members) components.push_back({e});
    }
  }
  std::sort(components.begin(), components.end());
  return components;
}

double UnitHash(uint64_t seed, absl::string_view key) {
  const uint64_t h = StableFeatureHash('s', key, absl::StrCat(seed));
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

}  // namespace

const char* SplitName(Split split) {
  switch (split) {
    case Split::kTrain:
      return "train";
    case Split::kValidation:
      return "validation";
    case Split::kTest:
      return "test";
  }
  return "?";
}

ConceptSet BuildConcepts(const Lexicon& lexicon, const ConceptOptions& options) {
  ConceptSet set;
  set.concept_of_entry.assign(lexicon.entries.size(), 0);
  for (std::vector<uint32_t>& members : JoinedComponents(lexicon, options)) {
    Concept c;
    c.entries = std::move(members);
    absl::flat_hash_set<std::string> seen;
    for (uint32_t e : c.entries) {
      const LexiconEntry& entry = lexicon.entries[e];
      if (c.key.empty() || entry.external_id < c.key) c.key = entry.external_id;
      for (std::string& name : entry.AllNames()) {
        std::string norm = NormalizeForMatch(name);
        if (norm.empty() || !seen.insert(std::move(norm)).second) continue;
        c.names.push_back(std::move(name));
      }
      set.concept_of_entry[e] = static_cast<uint32_t>(set.concepts.size());
    }
    set.concepts.push_back(std::move(c));
  }
  return set;
}

absl::Status AssignSplits(uint64_t seed, double validation_fraction, double test_fraction,
                          ConceptSet* set) {
  if (!(validation_fraction >= 0 && validation_fraction <= 0.5)) {
    return absl::InvalidArgumentError("validation_fraction: must be in [0, 0.5]");
  }
  if (!(test_fraction >= 0 && test_fraction <= 0.5)) {
    return absl::InvalidArgumentError("test_fraction: must be in [0, 0.5]");
  }
  for (Concept& c : set->concepts) {
    const double u = UnitHash(seed, c.key);
    c.split = u < test_fraction                         ? Split::kTest
              : u < test_fraction + validation_fraction ? Split::kValidation
                                                        : Split::kTrain;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<LaySynonym>> ReadHpoLaySynonyms(const std::string& path) {
  auto reader = kgstore::import_::LineReader::Open(path);
  if (!reader.ok()) return reader.status();
  std::vector<LaySynonym> out;
  absl::string_view line;
  while ((*reader)->Next(&line)) {
    std::vector<absl::string_view> f = absl::StrSplit(line, '\t');
    const size_t p = f.empty() ? absl::string_view::npos : f[0].find("HP_");
    if (f.size() < 3 || p == absl::string_view::npos) continue;
    std::string lay(absl::StripAsciiWhitespace(f[2]));
    if (lay.size() >= 2 && lay.front() == '"') lay = lay.substr(1, lay.size() - 2);
    out.push_back({absl::StrCat("HP:", f[0].substr(p + 3, 7)), std::move(lay)});
  }
  return out;
}

absl::flat_hash_map<std::string, uint32_t> EntriesByHpId(const Lexicon& lexicon) {
  absl::flat_hash_map<std::string, uint32_t> by_hp;
  for (uint32_t e = 0; e < lexicon.entries.size(); ++e) {
    if (absl::StartsWith(lexicon.entries[e].external_id, "HP:")) {
      by_hp[lexicon.entries[e].external_id] = e;
    }
  }
  for (uint32_t e = 0; e < lexicon.entries.size(); ++e) {
    for (const std::string& x : lexicon.entries[e].xrefs) {
      if (absl::StartsWith(x, "HP:")) by_hp.try_emplace(x, e);
    }
  }
  return by_hp;
}

namespace {

bool HasSynonym(const LexiconEntry& entry, const std::string& text) {
  return std::find(entry.synonyms.begin(), entry.synonyms.end(), text) != entry.synonyms.end();
}

// Candidate held-out strings among entries that pass `keep`: one DO synonym per DO entry and
// every indexed lay synonym (later reduced to one per entry).
template <typename Keep>
EvalSamples EligibleNames(const Lexicon& lexicon, const std::vector<LaySynonym>& lay,
                          std::mt19937_64& rng, Keep&& keep) {
  EvalSamples out;
  for (uint32_t e = 0; e < lexicon.entries.size(); ++e) {
    const LexiconEntry& entry = lexicon.entries[e];
    if (!absl::StartsWith(entry.external_id, "DOID:") || entry.synonyms.empty() || !keep(e)) {
      continue;
    }
    out.do_synonyms.push_back({e, entry.synonyms[rng() % entry.synonyms.size()]});
  }
  const auto by_hp = EntriesByHpId(lexicon);
  for (const LaySynonym& l : lay) {
    auto it = by_hp.find(l.hp_id);
    if (it == by_hp.end() || !keep(it->second)) continue;
    if (!HasSynonym(lexicon.entries[it->second], l.lay)) continue;  // must be indexed
    out.hpo_lay.push_back({it->second, l.lay});
  }
  return out;
}

// Shuffles and keeps up to `samples` (0 = all), one string per entry.
std::vector<HeldOutName> Subsample(std::vector<HeldOutName> names, int samples,
                                   std::mt19937_64& rng) {
  std::shuffle(names.begin(), names.end(), rng);
  std::vector<HeldOutName> out;
  absl::flat_hash_set<uint32_t> used;
  for (HeldOutName& h : names) {
    if (samples > 0 && static_cast<int>(out.size()) >= samples) break;
    if (used.insert(h.entry).second) out.push_back(std::move(h));
  }
  return out;
}

}  // namespace

EvalSamples SampleEvalNames(const Lexicon& lexicon, const ConceptSet& set,
                            const std::vector<LaySynonym>& lay, Split split, int samples,
                            uint64_t seed) {
  std::mt19937_64 rng(seed * 3 + static_cast<uint64_t>(split));
  EvalSamples all = EligibleNames(lexicon, lay, rng, [&](uint32_t e) {
    return set.concepts[set.concept_of_entry[e]].split == split;
  });
  return {Subsample(std::move(all.do_synonyms), samples, rng),
          Subsample(std::move(all.hpo_lay), samples, rng)};
}

EvalSamples SampleSeenHoldout(const Lexicon& lexicon, const ConceptSet& set,
                              const std::vector<LaySynonym>& lay, double fraction, uint64_t seed) {
  std::mt19937_64 rng(seed * 7 + 5);
  EvalSamples all = EligibleNames(lexicon, lay, rng, [&](uint32_t e) {
    const Concept& c = set.concepts[set.concept_of_entry[e]];
    return c.split == Split::kTrain && c.names.size() >= 3 && UnitHash(seed + 17, c.key) < fraction;
  });
  // One held-out string per concept, so each keeps >= 2 training names.
  EvalSamples out;
  absl::flat_hash_set<uint32_t> used;
  for (auto* list : {&all.do_synonyms, &all.hpo_lay}) {
    std::vector<HeldOutName> shuffled = Subsample(std::move(*list), 0, rng);
    auto& dest = list == &all.do_synonyms ? out.do_synonyms : out.hpo_lay;
    for (HeldOutName& h : shuffled) {
      if (used.insert(set.concept_of_entry[h.entry]).second) dest.push_back(std::move(h));
    }
  }
  return out;
}

std::vector<std::vector<std::string>> TrainingGroups(const ConceptSet& set,
                                                     const std::vector<HeldOutName>& held_out) {
  absl::flat_hash_map<uint32_t, absl::flat_hash_set<std::string>> removed;
  for (const HeldOutName& h : held_out) {
    removed[set.concept_of_entry[h.entry]].insert(NormalizeForMatch(h.text));
  }
  std::vector<std::vector<std::string>> groups;
  for (uint32_t c = 0; c < set.concepts.size(); ++c) {
    const Concept& concept_ = set.concepts[c];
    if (concept_.split != Split::kTrain) continue;
    auto it = removed.find(c);
    std::vector<std::string> names;
    for (const std::string& n : concept_.names) {
      if (it == removed.end() || !it->second.contains(NormalizeForMatch(n))) names.push_back(n);
    }
    if (!names.empty()) groups.push_back(std::move(names));
  }
  return groups;
}

std::string TrainingDataDigest(const std::vector<std::vector<std::string>>& groups) {
  common::Sha256Hasher hasher;
  for (const auto& group : groups) {
    for (const std::string& name : group) {
      hasher.Update(name);
      hasher.Update("\x1f");
    }
    hasher.Update("\x1e");
  }
  return common::DigestToHex(hasher.Digest());
}

}  // namespace ibgraphrag::alignment::training
