#include "common/token_trie.h"

namespace ibgraphrag::common {
namespace {

uint64_t EdgeKey(uint32_t node, uint32_t token) { return (uint64_t{node} << 32) | token; }

}  // namespace

uint32_t TokenTrie::Insert(absl::Span<const std::string> tokens) {
  uint32_t node = kRoot;
  for (const std::string& token : tokens) {
    const uint32_t id =
        vocab_.try_emplace(token, static_cast<uint32_t>(vocab_.size())).first->second;
    auto [edge, inserted] = edges_.try_emplace(EdgeKey(node, id), num_nodes_);
    if (inserted) ++num_nodes_;
    node = edge->second;
  }
  return phrase_of_node_.try_emplace(node, static_cast<uint32_t>(phrase_of_node_.size()))
      .first->second;
}

bool TokenTrie::Step(absl::string_view token, uint32_t* node) const {
  auto id = vocab_.find(token);
  if (id == vocab_.end()) return false;
  auto edge = edges_.find(EdgeKey(*node, id->second));
  if (edge == edges_.end()) return false;
  *node = edge->second;
  return true;
}

}  // namespace ibgraphrag::common
