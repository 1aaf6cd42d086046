#include "services/alignment/encoder_training/heldout_linking.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "common/parallel_for.h"
#include "services/alignment/candidate_index.h"
#include "services/alignment/text_normalize.h"

namespace ibgraphrag::alignment::training {
namespace {

// The lexicon with every held-out string removed from its entry's synonyms.
Lexicon WithoutHeldOut(const Lexicon& lexicon, const std::vector<std::vector<HeldOutName>>& sets) {
  Lexicon reduced = lexicon;
  for (const auto& set : sets) {
    for (const HeldOutName& h : set) {
      auto& syn = reduced.entries[h.entry].synonyms;
      syn.erase(std::remove(syn.begin(), syn.end(), h.text), syn.end());
    }
  }
  return reduced;
}

// Encodes `texts` in chunks on `threads` threads.
absl::Status EncodeAll(const TextEncoder& encoder, const std::vector<std::string>& texts,
                       int threads, std::vector<float>* out) {
  const int dim = encoder.dim();
  constexpr size_t kChunk = 4096;
  out->assign(texts.size() * dim, 0.0f);
  const size_t chunks = (texts.size() + kChunk - 1) / kChunk;
  std::vector<absl::Status> status(chunks);
  common::ParallelFor(chunks, threads, [&](size_t c) {
    const size_t begin = c * kChunk, end = std::min(texts.size(), begin + kChunk);
    status[c] = encoder.EncodeBatch(absl::MakeConstSpan(texts).subspan(begin, end - begin),
                                    absl::MakeSpan(*out).subspan(begin * dim, (end - begin) * dim));
  });
  for (const absl::Status& s : status) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

// acc@1 / acc@5 of `hits` (best first, distinct entries) against the held-out entries.
LinkAccuracy Score(const std::vector<HeldOutName>& held,
                   const std::vector<std::vector<uint32_t>>& hits) {
  LinkAccuracy acc;
  acc.n = static_cast<int64_t>(held.size());
  for (size_t i = 0; i < held.size(); ++i) {
    const auto& h = hits[i];
    for (size_t r = 0; r < h.size() && r < 5; ++r) {
      if (h[r] != held[i].entry) continue;
      if (r == 0) acc.acc1 += 1;
      acc.acc5 += 1;
      break;
    }
  }
  acc.acc1 /= std::max<int64_t>(1, acc.n);
  acc.acc5 /= std::max<int64_t>(1, acc.n);
  return acc;
}

}  // namespace

absl::StatusOr<std::vector<LinkAccuracy>> HeldOutAccuracy(
    const Lexicon& lexicon, const std::vector<std::vector<HeldOutName>>& sets,
    const TextEncoder& encoder, int threads) {
  const Lexicon reduced = WithoutHeldOut(lexicon, sets);
  std::vector<NameRef> rows;
  std::vector<std::string> texts;
  for (uint32_t e = 0; e < reduced.entries.size(); ++e) {
    const auto names = reduced.entries[e].AllNames();
    for (uint32_t n = 0; n < names.size(); ++n) {
      rows.push_back({e, n});
      texts.push_back(names[n]);
    }
  }
  const int dim = encoder.dim();
  std::vector<float> vectors;
  if (auto s = EncodeAll(encoder, texts, threads, &vectors); !s.ok()) return s;
  CandidateIndexOptions options;
  options.kind = IndexKind::kFlat;
  auto index = CandidateIndex::Build(std::move(rows), vectors, dim, options);
  if (!index.ok()) return index.status();
  std::vector<LinkAccuracy> out;
  for (const auto& held : sets) {
    std::vector<std::string> queries;
    for (const HeldOutName& h : held) queries.push_back(h.text);
    std::vector<float> q;
    if (auto s = EncodeAll(encoder, queries, threads, &q); !s.ok()) return s;
    auto hits = (*index)->Search(q, 5);
    if (!hits.ok()) return hits.status();
    std::vector<std::vector<uint32_t>> entries(hits->size());
    for (size_t i = 0; i < hits->size(); ++i) {
      for (const NameHit& hit : (*hits)[i]) entries[i].push_back(hit.entry);
    }
    out.push_back(Score(held, entries));
  }
  return out;
}

std::vector<LinkAccuracy> ExactMatchAccuracy(const Lexicon& lexicon,
                                             const std::vector<std::vector<HeldOutName>>& sets) {
  const Lexicon reduced = WithoutHeldOut(lexicon, sets);
  absl::flat_hash_map<std::string, std::vector<uint32_t>> by_form;
  for (uint32_t e = 0; e < reduced.entries.size(); ++e) {
    for (const std::string& name : reduced.entries[e].AllNames()) {
      auto& entries = by_form[NormalizeForMatch(name)];
      if (entries.empty() || entries.back() != e) entries.push_back(e);
    }
  }
  std::vector<LinkAccuracy> out;
  for (const auto& held : sets) {
    std::vector<std::vector<uint32_t>> hits(held.size());
    for (size_t i = 0; i < held.size(); ++i) {
      auto it = by_form.find(NormalizeForMatch(held[i].text));
      if (it != by_form.end()) hits[i] = it->second;
    }
    out.push_back(Score(held, hits));
  }
  return out;
}

}  // namespace ibgraphrag::alignment::training
