#include "common/token_trie.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ibgraphrag::common {
namespace {

TokenTrie::Match MatchAt(const TokenTrie& trie, const std::vector<std::string>& words,
                         size_t from) {
  return trie.LongestMatch(words.size() - from,
                           [&](size_t k) -> const std::string& { return words[from + k]; });
}

TEST(TokenTrieTest, InsertGivesDenseIdsAndTheSameIdForTheSamePhrase) {
  TokenTrie trie;
  EXPECT_EQ(trie.Insert({"type", "2", "diabetes"}), 0u);
  EXPECT_EQ(trie.Insert({"diabetes"}), 1u);
  EXPECT_EQ(trie.Insert({"type", "2", "diabetes"}), 0u);
  EXPECT_EQ(trie.num_phrases(), 2u);
}

TEST(TokenTrieTest, LongestMatchPrefersTheLongestPhraseAtThePosition) {
  TokenTrie trie;
  const uint32_t short_id = trie.Insert({"type", "2"});
  const uint32_t long_id = trie.Insert({"type", "2", "diabetes", "mellitus"});
  const std::vector<std::string> words = {"type", "2", "diabetes", "mellitus", "risk"};
  TokenTrie::Match match = MatchAt(trie, words, 0);
  EXPECT_EQ(match.length, 4u);
  EXPECT_EQ(match.phrase, long_id);
  // A prefix of a longer phrase that is itself a phrase still matches when the rest is absent.
  match = MatchAt(trie, {"type", "2", "diabetes"}, 0);
  EXPECT_EQ(match.length, 2u);
  EXPECT_EQ(match.phrase, short_id);
}

TEST(TokenTrieTest, NoMatchForUnknownTokensOrBeyondCount) {
  TokenTrie trie;
  trie.Insert({"breast", "cancer"});
  EXPECT_EQ(MatchAt(trie, {"lung", "cancer"}, 0).length, 0u);
  EXPECT_EQ(MatchAt(trie, {"lung", "cancer"}, 1).length, 0u);
  // `count` bounds the walk (a sentence end, say), so the phrase cannot complete.
  const std::vector<std::string> words = {"breast", "cancer"};
  EXPECT_EQ(trie.LongestMatch(1, [&](size_t k) { return absl::string_view(words[k]); }).length, 0u);
}

}  // namespace
}  // namespace ibgraphrag::common
