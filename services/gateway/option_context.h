// Answer options read in context (issue 26). The gateway aligns a multiple-choice question's
// options together with it (common::AlignmentText: the question, then one option per line), and
// the alignment service reads each line with no idea that it is an option: "TTN" among the gene
// options IL23R / TTN / BRCA1 became Transient Tachypnea of the Newborn through the abbreviation
// list, and a distractor such as BRCA1, unrelated to the question's diseases by construction,
// fell below MSCA's threshold. Here, after alignment, each option keeps the entity the question
// expects:
//
//   expected types  the intent's answer types ("which GENES"); without any, the type that the
//                   exact-name candidates of most other options share (at least two options and
//                   more than half of them);
//   exact           a candidate (kept or rejected) whose mention lies inside the option's line
//                   and names it exactly: a dictionary match, or a link similarity >= 0.99 (a
//                   gene symbol spelt as the option is); never one MSCA's LLM step passed over
//                   (excluded_by_llm: the LLM read the same question and options);
//   per option      when an exact candidate of an expected type exists, the best one (link
//                   similarity, then consistency) is kept (moved from the rejected list when
//                   MSCA dropped it, marked chosen_by_context) and the option's kept entities of
//                   other types move to the rejected list: an abbreviation expansion to another
//                   type needs the question to ask for that type. Otherwise the option is left
//                   as aligned.
//
// Question entities are never touched: only mentions inside an option's line are. Plain protobuf
// work, no RPC.
#ifndef IBGRAPHRAG_SERVICES_GATEWAY_OPTION_CONTEXT_H_
#define IBGRAPHRAG_SERVICES_GATEWAY_OPTION_CONTEXT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "common/topic_rule.h"
#include "ibgraphrag/v1/alignment.pb.h"

namespace ibgraphrag::gateway {

// The option lines of the alignment text (common::OptionSpans).
using common::OptionSpan;
using common::OptionSpans;

// The types the options are expected to have: `answer_types` when non-empty, else the majority
// exact-candidate type of the options (see the file comment); empty when there is none.
std::vector<std::string> ExpectedOptionTypes(const std::vector<OptionSpan>& spans,
                                             const std::vector<std::string>& answer_types,
                                             const v1::AlignResponse& aligned);

// Applies the per-option rule of the file comment to `aligned`; returns how many options changed.
int ReadOptionsInContext(const std::vector<OptionSpan>& spans,
                         const std::vector<std::string>& expected_types,
                         v1::AlignResponse* aligned);

}  // namespace ibgraphrag::gateway

#endif  // IBGRAPHRAG_SERVICES_GATEWAY_OPTION_CONTEXT_H_
