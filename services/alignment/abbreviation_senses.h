// Abbreviation senses chosen by context: "CRF" is corticotropin-releasing factor in a question
// about cortisol and ACTH and chronic renal failure in one about dialysis. The dictionary tagger
// matches an abbreviation to every entity that carries it; this picks the entity whose enriched
// embedding v_e (precomputed in the bundle) fits the question best, so that only that sense
// counts as named (dictionary evidence in MSCA) and is the text the mention is encoded as. The
// other senses stay candidates, ranked below it.
#ifndef IBGRAPHRAG_SERVICES_ALIGNMENT_ABBREVIATION_SENSES_H_
#define IBGRAPHRAG_SERVICES_ALIGNMENT_ABBREVIATION_SENSES_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "services/alignment/bundle.h"
#include "services/alignment/mention_extractor.h"
#include "services/alignment/text_encoder.h"

namespace ibgraphrag::alignment {

// For every abbreviation mention (Mention::expanded_from set): sets expansion / expansion_id to
// the chosen sense, keeps in `matches` only that sense's names and moves the other senses' to
// `other_senses`. Entries that share a normalised name or an xref are one sense (DO's and
// HPO's "myocardial infarction" for "MI") and stay together. The fit of entry e is
//   cos(v_e, v_Q) + cos(v_e, c)
// with v_Q the question's embedding (`question`, unit length, bundle dimension) and c the mean of
// the enriched vectors of the entities the other mentions name (each mention weighted once;
// 0 when there are none); a sense fits as well as its best entry, which becomes the expansion.
// Ties go to the sense listed first. When `text` (the text the mentions index into) types the
// mention with the word right before or after it ("Gene NF1", "the XPA gene"), only the senses
// with an entry of that type compete (when some but not all have one); otherwise, when the text's
// question intent (common/question_intent.h) types its topic, only the senses of that type do
// ("What drugs treat COPD?" asks about a disease: DO's COPD, not the COPD locus's gene record).
void ChooseAbbreviationSenses(const AlignmentBundle& bundle, absl::Span<const float> question,
                              std::vector<Mention>* mentions, absl::string_view text = "");

// The same for `text`, encoding it with `encoder` (the bundle's) only when an abbreviation has
// several senses, which is rare: most requests pay nothing.
absl::Status ChooseAbbreviationSensesOfText(const AlignmentBundle& bundle,
                                            const TextEncoder& encoder, absl::string_view text,
                                            std::vector<Mention>* mentions);

}  // namespace ibgraphrag::alignment

#endif  // IBGRAPHRAG_SERVICES_ALIGNMENT_ABBREVIATION_SENSES_H_
