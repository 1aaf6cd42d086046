#include "services/retriever/dde.h"

#include <vector>

#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ibgraphrag::retriever {
namespace {

using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::ElementsAreArray;
using ::testing::FloatEq;
using ::testing::Pointwise;

// 0 -> 1, 0 -> 2, 1 -> 2, 2 -> 3, 4 -> 3; topics {0, 3}.
// Worked by hand (columns s0, fwd1, fwd2, rev1, rev2):
//   fwd1: n1 = s0[0] = 1; n2 = (s0[0] + s0[1]) / 2 = 0.5; n3 = (s0[2] + s0[4]) / 2 = 0
//   fwd2: n1 = f1[0] = 0; n2 = (f1[0] + f1[1]) / 2 = 0.5; n3 = (f1[2] + f1[4]) / 2 = 0.25
//   rev1: n0 = (s0[1] + s0[2]) / 2 = 0; n1 = s0[2] = 0; n2 = s0[3] = 1; n4 = s0[3] = 1; n3 = 0
//   rev2: n0 = (r1[1] + r1[2]) / 2 = 0.5; n1 = r1[2] = 1; n2 = r1[3] = 0; n4 = r1[3] = 0
TEST(DdeTest, MatchesHandComputedRounds) {
  const std::vector<int32_t> heads = {0, 0, 1, 2, 4};
  const std::vector<int32_t> tails = {1, 2, 2, 3, 3};
  auto dde = ComputeDde(5, heads, tails, {0, 3}, DdeOptions());
  ASSERT_OK(dde);
  ASSERT_EQ(dde->dim, 5);
  const std::vector<float> expected = {
      1, 0,    0,     0, 0.5f,  // n0
      0, 1,    0,     0, 1,     // n1
      0, 0.5f, 0.5f,  1, 0,     // n2
      1, 0,    0.25f, 0, 0,     // n3
      0, 0,    0,     1, 0,     // n4
  };
  EXPECT_THAT(dde->values, Pointwise(FloatEq(), expected));
}

TEST(DdeTest, RoundCountsSetTheWidth) {
  DdeOptions options;
  options.forward_rounds = 1;
  options.reverse_rounds = 0;
  auto dde = ComputeDde(3, std::vector<int32_t>{0, 1}, std::vector<int32_t>{1, 2}, {0}, options);
  ASSERT_OK(dde);
  EXPECT_EQ(dde->dim, 2);
  EXPECT_THAT(dde->values, ElementsAreArray({1.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f}));
}

TEST(DdeTest, RejectsOutOfRangeIndicesAndRounds) {
  EXPECT_THAT(
      ComputeDde(2, std::vector<int32_t>{0}, std::vector<int32_t>{2}, {0}, DdeOptions()).status(),
      StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(
      ComputeDde(2, std::vector<int32_t>{0}, std::vector<int32_t>{1}, {5}, DdeOptions()).status(),
      StatusIs(absl::StatusCode::kInvalidArgument));
  DdeOptions bad;
  bad.forward_rounds = 9;
  EXPECT_THAT(ComputeDde(1, {}, {}, {0}, bad).status().message(),
              ::testing::HasSubstr("forward_rounds"));
}

}  // namespace
}  // namespace ibgraphrag::retriever
