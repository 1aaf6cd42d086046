#include "services/alignment/eval/qa_sets.h"

#include <cstdlib>

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
  ASSERT_EQ(sets->size(), 9u);
  for (const QuestionSet& set : *sets) {
    EXPECT_FALSE(set.questions.empty()) << set.name;
    if (set.name == "medmcqa-dev") EXPECT_EQ(set.questions.size(), 4183u);
    if (set.name == "pubmedqa-test") EXPECT_EQ(set.questions.size(), 500u);
    if (set.name == "biomixqa-true-false") EXPECT_EQ(set.questions.size(), 311u);
  }
}

}  // namespace
}  // namespace ibgraphrag::alignment::eval
