#include "common/topic_rule.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace ibgraphrag::common {

std::string AlignmentText(absl::string_view question, const std::vector<std::string>& options) {
  std::string text(question);
  for (const std::string& option : options) absl::StrAppend(&text, "\n", option);
  if (text.size() > kMaxAlignmentTextBytes) return std::string(question);
  return text;
}

std::vector<OptionSpan> OptionSpans(absl::string_view question,
                                    const std::vector<std::string>& options) {
  std::vector<OptionSpan> spans;
  if (options.empty() || AlignmentText(question, options).size() == question.size()) return spans;
  uint32_t at = static_cast<uint32_t>(question.size());
  for (const std::string& option : options) {
    at += 1;  // the newline
    spans.push_back({at, at + static_cast<uint32_t>(option.size())});
    at += static_cast<uint32_t>(option.size());
  }
  return spans;
}

std::vector<uint32_t> TopicEntityIds(const std::vector<uint32_t>& kept_ids_in_order) {
  std::vector<uint32_t> topics;
  absl::flat_hash_set<uint32_t> seen;
  for (uint32_t id : kept_ids_in_order) {
    if (static_cast<int>(topics.size()) >= kMaxTopicEntities) break;
    if (seen.insert(id).second) topics.push_back(id);
  }
  return topics;
}

}  // namespace ibgraphrag::common
