// Held-out name linking, the figure the name encoder is judged by: strings are removed from
// their lexicon entries, every remaining name of every entry is indexed (exact FAISS inner-product
// index), and each removed string is linked back by the encoder alone (acc@1 / acc@5 by entry).
// Also the exact-dictionary-match baseline on the same strings.
#ifndef IBGRAPHRAG_SERVICES_ALIGNMENT_ENCODER_TRAINING_HELDOUT_LINKING_H_
#define IBGRAPHRAG_SERVICES_ALIGNMENT_ENCODER_TRAINING_HELDOUT_LINKING_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "services/alignment/encoder_training/training_concepts.h"
#include "services/alignment/lexicon.h"
#include "services/alignment/text_encoder.h"

namespace ibgraphrag::alignment::training {

struct LinkAccuracy {
  int64_t n = 0;
  double acc1 = 0;
  double acc5 = 0;
};

// Removes every string of every set from its entry's synonyms at once, indexes all remaining
// names (name, synonyms, abbreviations of every entry) with `encoder` and links each set's
// strings: one LinkAccuracy per set. `threads` encode in parallel.
absl::StatusOr<std::vector<LinkAccuracy>> HeldOutAccuracy(
    const Lexicon& lexicon, const std::vector<std::vector<HeldOutName>>& sets,
    const TextEncoder& encoder, int threads = 2);

// Exact dictionary match on the same protocol: a held-out string links to the first entry
// (lexicon order) holding a name with the same normalised form (NormalizeForMatch), after the
// same removals; acc@5 over the first five such entries. By construction of the protocol the
// string itself is gone, so only another spelling with the same normal form can match.
std::vector<LinkAccuracy> ExactMatchAccuracy(const Lexicon& lexicon,
                                             const std::vector<std::vector<HeldOutName>>& sets);

}  // namespace ibgraphrag::alignment::training

#endif  // IBGRAPHRAG_SERVICES_ALIGNMENT_ENCODER_TRAINING_HELDOUT_LINKING_H_
