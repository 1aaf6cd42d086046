// Gold entity mentions of real questions for alignment_msca_fit (issue 28): where in a question
// its entities are named, read from the question's own shape or the set's own annotation and
// never from the KG, so that MSCA is not scored against the data it aligns to.
#ifndef IBGRAPHRAG_SERVICES_ALIGNMENT_EVAL_GOLD_SPANS_H_
#define IBGRAPHRAG_SERVICES_ALIGNMENT_EVAL_GOLD_SPANS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ibgraphrag::alignment::eval {

// A byte range of a question, [begin, end), and its text.
struct GoldSpan {
  uint32_t begin = 0;
  uint32_t end = 0;
  std::string text;
};

// Whether two half-open byte ranges share a byte.
inline bool Overlaps(uint32_t begin_a, uint32_t end_a, uint32_t begin_b, uint32_t end_b) {
  return begin_a < end_b && begin_b < end_a;
}

struct ClaimSpans {
  // "associates_gene", "not_associated_gene", "treats", "is_a", "is_not_a", "doid".
  std::string shape;
  // The subject and object names (the subject only for "doid").
  std::vector<GoldSpan> gold;
  // Text that names no entity (a Disease Ontology identifier): entities kept for it count
  // neither for nor against MSCA.
  std::vector<GoldSpan> ignored;
};

// The entity spans of a BiomixQA true/false claim. The claims are generated from templates:
// "X associates Gene Y", "X is not associated with Gene Y", "X treats Y", "X is a Y",
// "X is not a Y" and "Disease ontology identifier for X is DOID:N" (the gene span is Y, without
// the word "Gene"). nullopt for a claim of another shape ("Variant rs2476601 associates
// Rheumatoid Arthritis") or with an empty side.
std::optional<ClaimSpans> ParseBiomixClaim(absl::string_view claim);

// The span naming `topic` in `question`, matched ASCII case-insensitively on word boundaries:
// the topic as written; else with trailing words dropped while at least two remain ("type 2
// diabetes mellitus" in "... treat type 2 diabetes?"); else with the plural "s" of its last word
// dropped ("ACE inhibitors" in "the ACE inhibitor class"). nullopt when the question words it
// differently ("hypertension" for "high blood pressure"); such topics are left out of the span
// figures, not counted as misses.
std::optional<GoldSpan> LocateTopic(absl::string_view question, absl::string_view topic);

// A question naming two entities, from one of kPairTemplateCount templates ("Can a patient have
// both {a} and {b}?"), with the spans of `a` and `b`. For the issue's two-disease scenario: the
// names come from real claims, the gold spans from the construction.
inline constexpr int kPairTemplateCount = 4;
struct PairQuestion {
  std::string question;
  std::vector<GoldSpan> gold;
};
PairQuestion MakePairQuestion(absl::string_view a, absl::string_view b, int template_index);

}  // namespace ibgraphrag::alignment::eval

#endif  // IBGRAPHRAG_SERVICES_ALIGNMENT_EVAL_GOLD_SPANS_H_
