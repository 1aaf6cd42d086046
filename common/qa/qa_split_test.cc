#include "common/qa/qa_split.h"

#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ibgraphrag::eval {
namespace {

using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::HasSubstr;

TEST(QaSplitTest, NormalisationIgnoresCasePunctuationAndSpacing) {
  EXPECT_EQ(NormalizeQuestionForSplit("  Which drug  TREATS\ttype-2 diabetes?? "),
            "which drug treats type 2 diabetes");
  EXPECT_EQ(SplitOfQuestion("Which drug treats asthma?", 3),
            SplitOfQuestion("which drug treats  ASTHMA", 3));
}

TEST(QaSplitTest, SameSeedSameSplitAndFractionsNearTheRule) {
  std::map<QaSplit, int> counts;
  int moved = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const std::string key = absl::StrCat("question number ", i);
    const QaSplit part = SplitOfKey(key, 7);
    EXPECT_EQ(part, SplitOfKey(key, 7));
    EXPECT_NE(part, QaSplit::kAll);
    ++counts[part];
    moved += part != SplitOfKey(key, 8);
  }
  EXPECT_NEAR(counts[QaSplit::kTrain] / double{n}, 0.70, 0.02);
  EXPECT_NEAR(counts[QaSplit::kValidation] / double{n}, 0.15, 0.02);
  EXPECT_NEAR(counts[QaSplit::kTest] / double{n}, 0.15, 0.02);
  // Another seed draws another split (about 1 - (0.7² + 2·0.15²) = 46% of keys move).
  EXPECT_GT(moved, n / 3);
}

TEST(QaSplitTest, KnownKeysKeepTheirPart) {
  // Pinned so that a change of the hash (which would silently mix test questions into training
  // data of existing models) fails here.
  std::string parts;
  for (int i = 0; i < 12; ++i) {
    absl::StrAppend(&parts, QaSplitName(SplitOfKey(absl::StrCat("k", i), 0)).substr(0, 2));
  }
  EXPECT_EQ(parts, "trtrtetrvatrtrtetrtrtrva");
}

TEST(QaSplitTest, SelectionAndNames) {
  EXPECT_TRUE(SplitSelects(QaSplit::kAll, QaSplit::kTest));
  EXPECT_TRUE(SplitSelects(QaSplit::kTest, QaSplit::kTest));
  EXPECT_FALSE(SplitSelects(QaSplit::kTest, QaSplit::kTrain));
  for (QaSplit s : {QaSplit::kAll, QaSplit::kTrain, QaSplit::kValidation, QaSplit::kTest}) {
    EXPECT_EQ(*ParseQaSplit(QaSplitName(s)), s);
  }
  const absl::StatusOr<QaSplit> bad = ParseQaSplit("dev", "eval_split");
  ASSERT_THAT(bad, StatusIs(absl::StatusCode::kInvalidArgument,
                            ::testing::AllOf(HasSubstr("eval_split"), HasSubstr("validation"))));
}

}  // namespace
}  // namespace ibgraphrag::eval
