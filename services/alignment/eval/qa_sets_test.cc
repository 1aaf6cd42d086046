#include "services/alignment/eval/qa_sets.h"

#include <cstdlib>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ibgraphrag::alignment::eval {
namespace {

TEST(ReadQuestionSetsTest, ReadsEveryRealSet) {
  const char* data = std::getenv("IBGR_DATA_DIR");
  if (data == nullptr) GTEST_SKIP() << "IBGR_DATA_DIR not set";
  auto sets = ReadQuestionSets(data);
  ASSERT_TRUE(sets.ok()) << sets.status();
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
