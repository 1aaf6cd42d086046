#include "services/kgstore/import/synthetic_kg.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <numeric>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "services/kgstore/import/import_common.h"
#include "services/kgstore/import/tabular_importers.h"

namespace ibgraphrag::kgstore::import_ {
namespace {

constexpr absl::string_view kSource = "synthetic-primekg";

// xoshiro256** seeded through splitmix64: fast, and its output is fixed by the algorithm, unlike
// the std:: distributions whose results differ between standard libraries.
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (uint64_t& word : state_) word = SplitMix(seed);
  }
  uint64_t Next() {
    const uint64_t result = RotateLeft(state_[1] * 5, 7) * 9;
    const uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = RotateLeft(state_[3], 45);
    return result;
  }
  // Uniform in [0, n) (Lemire's multiply-shift; the tiny bias is irrelevant here).
  uint32_t Below(uint32_t n) {
    return static_cast<uint32_t>((static_cast<unsigned __int128>(Next()) * n) >> 64);
  }
  uint64_t Below64(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64);
  }
  double Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

 private:
  static uint64_t RotateLeft(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static uint64_t SplitMix(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  uint64_t state_[4];
};

// Draws local node indices of one type with a power-law degree distribution: rank r has weight
// (r+1)^(-1/(gamma-1)), the rank-size form of P(k) ~ k^-gamma; ranks are shuffled onto nodes so
// hubs are spread over the id range. Vose's alias method makes each draw O(1).
class TypeSampler {
 public:
  TypeSampler(uint32_t size, double gamma, Rng& rng) : prob_(size), alias_(size), node_(size) {
    const double exponent = 1.0 / std::max(gamma - 1.0, 1e-3);
    std::vector<double> scaled(size);
    double total = 0;
    for (uint32_t r = 0; r < size; ++r) total += scaled[r] = std::pow(r + 1.0, -exponent);
    std::vector<uint32_t> small, large;
    for (uint32_t r = 0; r < size; ++r) {
      scaled[r] *= size / total;
      (scaled[r] < 1.0 ? small : large).push_back(r);
    }
    while (!small.empty() && !large.empty()) {
      const uint32_t s = small.back(), l = large.back();
      small.pop_back();
      prob_[s] = scaled[s];
      alias_[s] = l;
      scaled[l] -= 1.0 - scaled[s];
      if (scaled[l] < 1.0) {
        large.pop_back();
        small.push_back(l);
      }
    }
    for (uint32_t r : small) prob_[r] = 1.0, alias_[r] = r;
    for (uint32_t r : large) prob_[r] = 1.0, alias_[r] = r;
    std::iota(node_.begin(), node_.end(), 0u);
    for (uint32_t i = size; i > 1; --i) std::swap(node_[i - 1], node_[rng.Below(i)]);
  }
  uint32_t Sample(Rng& rng) const {
    const uint32_t r = rng.Below(static_cast<uint32_t>(prob_.size()));
    return node_[rng.Unit() < prob_[r] ? r : alias_[r]];
  }
  uint32_t size() const { return static_cast<uint32_t>(prob_.size()); }

 private:
  std::vector<double> prob_;
  std::vector<uint32_t> alias_;
  std::vector<uint32_t> node_;
};

// Keeps `keep` random elements of `values` (partial Fisher-Yates), sorted again.
void KeepRandomSubset(std::vector<uint64_t>* values, size_t keep, Rng& rng) {
  for (size_t i = 0; i < keep; ++i) {
    std::swap((*values)[i], (*values)[i + rng.Below64(values->size() - i)]);
  }
  values->resize(keep);
  std::sort(values->begin(), values->end());
}

// LSD radix sort of keys below 2^key_bits, 11 bits per pass: a few linear passes instead of
// std::sort's n log n comparisons, which dominated generation time.
void RadixSort(std::vector<uint64_t>* keys, int key_bits, std::vector<uint64_t>* scratch) {
  constexpr int kDigitBits = 11;
  constexpr size_t kBuckets = size_t{1} << kDigitBits;
  scratch->resize(keys->size());
  for (int shift = 0; shift < key_bits; shift += kDigitBits) {
    size_t count[kBuckets + 1] = {};
    for (const uint64_t k : *keys) ++count[((k >> shift) & (kBuckets - 1)) + 1];
    for (size_t b = 1; b <= kBuckets; ++b) count[b] += count[b - 1];
    for (const uint64_t k : *keys) (*scratch)[count[(k >> shift) & (kBuckets - 1)]++] = k;
    keys->swap(*scratch);
  }
}

// `target` unique pairs of local indices as sorted keys head * num_tails + tail. Three regimes:
// relations needing at least half of all pairs are drawn uniformly from the enumerated pairs
// (rejection would stall); fairly dense ones (>= 1/64 of all pairs) deduplicate draws in a
// bitmap, which costs no more memory than a key list there; sparse ones draw in rounds that are
// radix-sorted, deduplicated and merged. None needs a per-triple hash set.
std::vector<uint64_t> GeneratePairs(const TypeSampler& heads, const TypeSampler& tails,
                                    bool same_type, int64_t target, Rng& rng) {
  const uint64_t nh = heads.size(), nt = tails.size();
  const uint64_t all_pairs = nh * nt;
  const uint64_t capacity = all_pairs - (same_type ? nh : 0);
  std::vector<uint64_t> keys;
  if (target <= 0) return keys;
  auto draw = [&]() -> std::optional<uint64_t> {
    const uint64_t h = heads.Sample(rng), t = tails.Sample(rng);
    if (same_type && h == t) return std::nullopt;
    return h * nt + t;
  };
  if (static_cast<uint64_t>(target) * 2 >= capacity) {
    keys.reserve(capacity);
    for (uint64_t k = 0; k < all_pairs; ++k) {
      if (!same_type || k / nt != k % nt) keys.push_back(k);
    }
    KeepRandomSubset(&keys, std::min<uint64_t>(target, keys.size()), rng);
    return keys;
  }
  // Hubs saturate, so the last pairs can take many draws; past this budget the remainder is
  // drawn uniformly (at least half of all pairs are free, so that finishes quickly).
  const int64_t draw_budget = 64 * target + (1 << 20);
  auto uniform_draw = [&]() -> std::optional<uint64_t> {
    const uint64_t h = rng.Below(heads.size()), t = rng.Below(tails.size());
    if (same_type && h == t) return std::nullopt;
    return h * nt + t;
  };
  if (static_cast<uint64_t>(target) * 64 >= all_pairs) {
    std::vector<uint64_t> bits((all_pairs + 63) / 64, 0);
    int64_t have = 0, draws = 0;
    while (have < target) {
      const std::optional<uint64_t> k = ++draws <= draw_budget ? draw() : uniform_draw();
      if (!k) continue;
      uint64_t& word = bits[*k >> 6];
      const uint64_t mask = uint64_t{1} << (*k & 63);
      if ((word & mask) != 0) continue;
      word |= mask;
      ++have;
    }
    keys.reserve(target);
    for (uint64_t w = 0; w < bits.size(); ++w) {
      for (uint64_t word = bits[w]; word != 0; word &= word - 1) {
        keys.push_back(w * 64 + static_cast<uint64_t>(__builtin_ctzll(word)));
      }
    }
    return keys;
  }
  int key_bits = 1;
  while (key_bits < 64 && (uint64_t{1} << key_bits) < all_pairs) ++key_bits;
  keys.reserve(target);
  std::vector<uint64_t> drawn, fresh, scratch;
  double inflation = 1.05;
  int64_t draws = 0;
  while (keys.size() < static_cast<size_t>(target)) {
    const size_t need = target - keys.size();
    const size_t batch = static_cast<size_t>(std::ceil(need * inflation)) + 16;
    drawn.clear();
    drawn.reserve(batch);
    for (size_t i = 0; i < batch; ++i) {
      const std::optional<uint64_t> k = ++draws <= draw_budget ? draw() : uniform_draw();
      if (k) drawn.push_back(*k);
    }
    RadixSort(&drawn, key_bits, &scratch);
    drawn.erase(std::unique(drawn.begin(), drawn.end()), drawn.end());
    fresh.clear();
    std::set_difference(drawn.begin(), drawn.end(), keys.begin(), keys.end(),
                        std::back_inserter(fresh));
    // The next round draws enough to cover the shortfall at this round's yield of new pairs.
    inflation = std::min(64.0, 1.05 * batch / std::max<double>(1.0, fresh.size()));
    if (fresh.size() > need) KeepRandomSubset(&fresh, need, rng);
    scratch.resize(keys.size() + fresh.size());
    std::merge(keys.begin(), keys.end(), fresh.begin(), fresh.end(), scratch.begin());
    keys.swap(scratch);
  }
  return keys;
}

// Splits `total` in proportion to `weights` with exact sum (largest remainder).
std::vector<int64_t> Apportion(const std::vector<int64_t>& weights, int64_t total) {
  const long double weight_sum = std::accumulate(weights.begin(), weights.end(), 0.0L);
  std::vector<int64_t> out(weights.size(), 0);
  if (weight_sum <= 0 || total <= 0) return out;
  std::vector<std::pair<long double, size_t>> remainders;
  int64_t assigned = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    const long double exact = weights[i] * static_cast<long double>(total) / weight_sum;
    out[i] = static_cast<int64_t>(std::floor(exact));
    assigned += out[i];
    remainders.emplace_back(exact - out[i], i);
  }
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t k = 0; assigned < total; ++k, ++assigned) ++out[remainders[k % out.size()].second];
  return out;
}

std::string EscapeCopyText(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

// Buffered writer; fwrite per line would dominate the 8.1M-line dump.
class BufferedFile {
 public:
  static absl::StatusOr<std::unique_ptr<BufferedFile>> Create(const std::string& path) {
    FILE* file = std::fopen(path.c_str(), "wb");
    if (file == nullptr) {
      return absl::PermissionDeniedError(
          absl::StrCat(path, ": cannot create: ", std::strerror(errno)));
    }
    return std::unique_ptr<BufferedFile>(new BufferedFile(path, file));
  }
  ~BufferedFile() {
    if (file_ != nullptr) std::fclose(file_);
  }
  std::string& buffer() { return buffer_; }
  absl::Status MaybeFlush() { return buffer_.size() >= (1u << 20) ? Flush() : absl::OkStatus(); }
  absl::Status Close() {
    absl::Status status = Flush();
    if (std::fclose(file_) != 0 && status.ok()) {
      status = absl::DataLossError(absl::StrCat(path_, ": close failed: ", std::strerror(errno)));
    }
    file_ = nullptr;
    return status;
  }

 private:
  BufferedFile(std::string path, FILE* file) : path_(std::move(path)), file_(file) {
    buffer_.reserve(1u << 21);
  }
  absl::Status Flush() {
    if (!buffer_.empty() &&
        std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size()) {
      return absl::DataLossError(absl::StrCat(path_, ": write failed: ", std::strerror(errno)));
    }
    buffer_.clear();
    return absl::OkStatus();
  }
  std::string path_;
  FILE* file_;
  std::string buffer_;
};

}  // namespace

const std::vector<SyntheticNodeType>& PrimeKgNodeTypes() {
  static const auto* const types = new std::vector<SyntheticNodeType>{
      {"gene/protein", "gene", 27'671},
      {"drug", "compound", 7'957},
      {"effect/phenotype", "phenotype", 15'311},
      {"disease", "disease", 17'080},
      {"biological_process", "biological_process", 28'642},
      {"molecular_function", "molecular_function", 11'169},
      {"cellular_component", "cellular_component", 4'176},
      {"exposure", "exposure", 818},
      {"pathway", "pathway", 2'516},
      {"anatomy", "anatomy", 14'035},
  };
  return *types;
}

const std::vector<SyntheticRelationMix>& PrimeKgRelationMix() {
  static const auto* const mix = new std::vector<SyntheticRelationMix>{
      {"anatomy_protein_present", "expression present", 3'036'406},
      {"drug_drug", "synergistic interaction", 2'672'628},
      {"protein_protein", "ppi", 642'150},
      {"disease_phenotype_positive", "phenotype present", 300'634},
      {"bioprocess_protein", "interacts with", 289'610},
      {"cellcomp_protein", "interacts with", 166'804},
      {"disease_protein", "associated with", 160'822},
      {"molfunc_protein", "interacts with", 139'060},
      {"drug_effect", "side effect", 129'568},
      {"bioprocess_bioprocess", "parent-child", 105'772},
      {"pathway_protein", "interacts with", 85'292},
      {"disease_disease", "parent-child", 64'388},
      {"contraindication", "contraindication", 61'350},
      {"drug_protein", "target", 51'306},
      {"anatomy_protein_absent", "expression absent", 39'774},
      {"phenotype_phenotype", "parent-child", 37'472},
      {"anatomy_anatomy", "parent-child", 28'064},
      {"molfunc_molfunc", "parent-child", 27'148},
      {"indication", "indication", 18'776},
      {"cellcomp_cellcomp", "parent-child", 9'690},
      {"phenotype_protein", "associated with", 6'660},
      {"off-label use", "off-label use", 5'136},
      {"pathway_pathway", "parent-child", 5'070},
      {"exposure_disease", "linked to", 4'608},
      {"exposure_exposure", "parent-child", 4'140},
      {"exposure_bioprocess", "interacts with", 3'250},
      {"exposure_protein", "interacts with", 2'424},
      {"disease_phenotype_negative", "phenotype absent", 2'386},
      {"exposure_molfunc", "interacts with", 90},
      {"exposure_cellcomp", "interacts with", 20},
  };
  return *mix;
}

KgData GenerateSyntheticPrimeKg(const SyntheticKgOptions& options) {
  const std::vector<SyntheticNodeType>& node_types = PrimeKgNodeTypes();
  const std::vector<SyntheticRelationMix>& mix = PrimeKgRelationMix();
  KgData kg;
  // One generated source; every triple's provenance group 0 is that source alone.
  kg.sources.push_back(SourceInfo{std::string(kSource), ""});
  kg.provenance.push_back({0});

  // Node counts per type, at least 2 so every relation can hold a non-loop pair.
  std::vector<int64_t> type_weights;
  for (const SyntheticNodeType& t : node_types) type_weights.push_back(t.count);
  std::vector<int64_t> type_sizes =
      Apportion(type_weights, std::max<int64_t>(options.num_entities, 0));
  for (int64_t& n : type_sizes) n = std::max<int64_t>(n, 2);

  Rng rng(options.seed);
  std::vector<EntityId> type_offset;
  std::vector<TypeSampler> samplers;
  samplers.reserve(node_types.size());
  for (size_t i = 0; i < node_types.size(); ++i) {
    type_offset.push_back(static_cast<EntityId>(kg.entities.size()));
    const std::string type(node_types[i].type);
    const std::string prefix = absl::StrCat("SYN_", absl::AsciiStrToUpper(type), ":");
    const std::string name_prefix = absl::StrCat("synthetic ", type, " ");
    for (int64_t n = 0; n < type_sizes[i]; ++n) {
      Entity& e = kg.entities.emplace_back();
      e.id = static_cast<EntityId>(kg.entities.size() - 1);
      e.external_id = absl::StrCat(prefix, n);
      e.type = type;
      e.name = absl::StrCat(name_prefix, n);
      e.sources.emplace_back(kSource);
    }
    samplers.emplace_back(static_cast<uint32_t>(type_sizes[i]), options.degree_exponent, rng);
  }
  auto type_index = [&](absl::string_view type) {
    for (size_t i = 0; i < node_types.size(); ++i) {
      if (node_types[i].type == type) return i;
    }
    return size_t{0};  // unreachable: every mix relation uses the types above
  };

  // Relation targets: PrimeKG's mix scaled to num_triples, capped at each relation's pair count.
  struct Planned {
    const PrimeKgRelation* schema;
    size_t head_type, tail_type;
    int64_t capacity, target;
  };
  std::vector<Planned> plan;
  std::vector<int64_t> mix_weights;
  for (const SyntheticRelationMix& m : mix) {
    const PrimeKgRelation* schema = FindPrimeKgRelation(m.relation, m.display_relation);
    Planned p{schema, type_index(schema->head_type), type_index(schema->tail_type), 0, 0};
    p.capacity = type_sizes[p.head_type] * type_sizes[p.tail_type] -
                 (p.head_type == p.tail_type ? type_sizes[p.head_type] : 0);
    plan.push_back(p);
    mix_weights.push_back(m.count);
  }
  const std::vector<int64_t> targets =
      Apportion(mix_weights, std::max<int64_t>(options.num_triples, 0));
  for (size_t r = 0; r < plan.size(); ++r) plan[r].target = targets[r];
  for (int round = 0; round < 64; ++round) {
    int64_t excess = 0;
    std::vector<int64_t> open_weights(plan.size(), 0);
    for (size_t r = 0; r < plan.size(); ++r) {
      if (plan[r].target > plan[r].capacity) {
        excess += plan[r].target - plan[r].capacity;
        plan[r].target = plan[r].capacity;
      }
      if (plan[r].target < plan[r].capacity) open_weights[r] = mix_weights[r];
    }
    if (excess == 0 ||
        std::all_of(open_weights.begin(), open_weights.end(), [](int64_t w) { return w == 0; })) {
      break;
    }
    const std::vector<int64_t> extra = Apportion(open_weights, excess);
    for (size_t r = 0; r < plan.size(); ++r) plan[r].target += extra[r];
  }

  // Per-relation pair lists, each from its own random stream so relations are independent.
  std::vector<std::vector<uint64_t>> pairs(plan.size());
  for (size_t r = 0; r < plan.size(); ++r) {
    const Planned& p = plan[r];
    Relation& relation = kg.relations.emplace_back();
    relation.id = static_cast<RelationId>(r);
    relation.name = std::string(p.schema->name);
    relation.head_type = std::string(p.schema->head_type);
    relation.tail_type = std::string(p.schema->tail_type);
    if (const Relation* known = FindKnownRelation(relation.name)) {
      relation.description = known->description;
    }
    Rng relation_rng(options.seed ^ (0x632be59bd9b4e019ULL * (r + 1)));
    pairs[r] = GeneratePairs(samplers[p.head_type], samplers[p.tail_type],
                             p.head_type == p.tail_type, p.target, relation_rng);
  }

  // Each relation's keys are sorted by (head, tail), so walking heads in id order and taking
  // each relation's run for that head (relations in id order) emits the triples already sorted
  // by (head, relation, tail): no global sort, no bucket array.
  size_t total = 0;
  for (const std::vector<uint64_t>& keys : pairs) total += keys.size();
  kg.triples.reserve(total);
  std::vector<size_t> cursor(plan.size(), 0);
  for (size_t type = 0; type < node_types.size(); ++type) {
    std::vector<size_t> relations_of_type;
    for (size_t r = 0; r < plan.size(); ++r) {
      if (plan[r].head_type == type) relations_of_type.push_back(r);
    }
    for (uint64_t local = 0; local < static_cast<uint64_t>(type_sizes[type]); ++local) {
      const EntityId head = type_offset[type] + static_cast<EntityId>(local);
      for (const size_t r : relations_of_type) {
        const std::vector<uint64_t>& keys = pairs[r];
        const uint64_t num_tails = static_cast<uint64_t>(type_sizes[plan[r].tail_type]);
        const EntityId tail_offset = type_offset[plan[r].tail_type];
        size_t& i = cursor[r];
        for (; i < keys.size() && keys[i] / num_tails == local; ++i) {
          kg.triples.push_back(Triple{head, static_cast<RelationId>(r),
                                      tail_offset + static_cast<EntityId>(keys[i] % num_tails), 0});
        }
      }
    }
  }

  SourceReport report;
  report.source = std::string(kSource);
  report.path = absl::StrCat("synthetic:seed=", options.seed, ",entities=", options.num_entities,
                             ",triples=", options.num_triples, ",gamma=", options.degree_exponent);
  report.rows_read = static_cast<int64_t>(total);
  report.triples_added = static_cast<int64_t>(total);
  kg.reports.push_back(std::move(report));
  return kg;
}

absl::Status WriteTriplesTsv(const KgData& kg, const std::string& path,
                             const TsvWriteOptions& options) {
  auto file_or = BufferedFile::Create(path);
  if (!file_or.ok()) return file_or.status();
  BufferedFile& file = **file_or;
  std::string& out = file.buffer();
  if (options.header) out += "head\trelation\ttail\n";
  // Escape each name once, not once per triple.
  std::vector<std::string> entity_text(kg.entities.size()), relation_text(kg.relations.size());
  if (!options.internal_ids) {
    for (size_t i = 0; i < kg.entities.size(); ++i) {
      entity_text[i] = EscapeCopyText(kg.entities[i].external_id);
    }
    for (size_t i = 0; i < kg.relations.size(); ++i) {
      relation_text[i] = EscapeCopyText(kg.relations[i].name);
    }
  }
  for (const Triple& t : kg.triples) {
    if (options.internal_ids) {
      absl::StrAppend(&out, t.head, "\t", t.relation, "\t", t.tail, "\n");
    } else {
      absl::StrAppend(&out, entity_text[t.head], "\t", relation_text[t.relation], "\t",
                      entity_text[t.tail], "\n");
    }
    if (absl::Status s = file.MaybeFlush(); !s.ok()) return s;
  }
  return file.Close();
}

absl::Status WriteEntitiesTsv(const KgData& kg, const std::string& path,
                              const TsvWriteOptions& options) {
  auto file_or = BufferedFile::Create(path);
  if (!file_or.ok()) return file_or.status();
  BufferedFile& file = **file_or;
  std::string& out = file.buffer();
  if (options.header) out += "id\texternal_id\ttype\tname\n";
  for (const Entity& e : kg.entities) {
    absl::StrAppend(&out, e.id, "\t", EscapeCopyText(e.external_id), "\t", EscapeCopyText(e.type),
                    "\t", EscapeCopyText(e.name), "\n");
    if (absl::Status s = file.MaybeFlush(); !s.ok()) return s;
  }
  return file.Close();
}

}  // namespace ibgraphrag::kgstore::import_
