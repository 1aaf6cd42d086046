// The one rule, shared by serving (gateway) and retriever training, for which text is aligned for
// a question and which aligned entities become the retriever's topic entities. Training examples
// built from real questions must see the same topics the gateway sends at serving time, or the
// retriever learns on one distribution and serves another.
#ifndef IBGRAPHRAG_COMMON_TOPIC_RULE_H_
#define IBGRAPHRAG_COMMON_TOPIC_RULE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ibgraphrag::common {

// Longest text sent to the alignment service for one question (its request limit).
inline constexpr size_t kMaxAlignmentTextBytes = 16 * 1024;
// Most topic entities one retrieval starts from.
inline constexpr int kMaxTopicEntities = 100;

// The text aligned for a question: the question, then each option on its own line, so option
// entities become topic entities too and the evidence can connect the question to each option.
// Falls back to the question alone when the joined text exceeds kMaxAlignmentTextBytes.
std::string AlignmentText(absl::string_view question, const std::vector<std::string>& options);

// Byte range [begin, end) of one option's line in AlignmentText.
struct OptionSpan {
  uint32_t begin = 0;
  uint32_t end = 0;
};
// The option lines of AlignmentText(question, options), in option order; empty when the text is
// the question alone (no options, or too long to carry them).
std::vector<OptionSpan> OptionSpans(absl::string_view question,
                                    const std::vector<std::string>& options);

// Topic entity ids for retrieval: the kept entities' ids in alignment order, first occurrence
// only, at most kMaxTopicEntities.
std::vector<uint32_t> TopicEntityIds(const std::vector<uint32_t>& kept_ids_in_order);

}  // namespace ibgraphrag::common

#endif  // IBGRAPHRAG_COMMON_TOPIC_RULE_H_
