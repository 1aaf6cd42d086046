#include "services/alignment/eval/qa_sets.h"

#include <cstdlib>
#include <map>
#include <set>
#include <string>

#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ibgraphrag::alignment::eval {
namespace {

TEST(ReadQuestionSetsTest, ReadsEveryRealSet) {
  const char* data = std::getenv("IBGR_DATA_DIR");
  ASSERT_NE(data, nullptr) << "IBGR_DATA_DIR is not set: run through ctest, or set it to the "
                              "shared data folder (cmake -DIBGR_DATA_DIR=...)";
  auto sets = ReadQuestionSets(data);
  ASSERT_OK(sets);
  // What matters is that every file parses and the known sets have their known sizes, not how
  // many files the shared folder holds (it grows: medqa-us-4opt-dev joined as the tenth).
  const std::map<std::string, size_t> known = {{"medmcqa-dev", 4183},
                                               {"pubmedqa-test", 500},
                                               {"biomixqa-true-false", 311},
                                               {"medqa-us-4opt-dev", 1272},
                                               {"mmlu-anatomy", 135}};
  std::set<std::string> seen;
  for (const QuestionSet& set : *sets) {
    EXPECT_FALSE(set.questions.empty()) << set.name;
    seen.insert(set.name);
    if (auto it = known.find(set.name); it != known.end()) {
      EXPECT_EQ(set.questions.size(), it->second) << set.name;
    }
  }
  for (const auto& [name, size] : known) EXPECT_EQ(seen.count(name), 1u) << name << " missing";
}

}  // namespace
}  // namespace ibgraphrag::alignment::eval
