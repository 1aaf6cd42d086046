#include "common/test_util/status_matchers.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest-spi.h"
#include "gtest/gtest.h"

namespace ibgraphrag::common::test_util {
namespace {

using ::testing::ExplainMatchResult;
using ::testing::HasSubstr;
using ::testing::Matches;
using ::testing::Not;
using ::testing::StringMatchResultListener;

// The explanation a failing EXPECT_THAT prints after "Actual:".
template <typename MatcherType, typename Value>
std::string Explain(const MatcherType& matcher, const Value& value) {
  StringMatchResultListener listener;
  ExplainMatchResult(matcher, value, &listener);
  return listener.str();
}

TEST(IsOkTest, MatchesOkStatusesOfEveryKind) {
  EXPECT_TRUE(Matches(IsOk())(absl::OkStatus()));
  EXPECT_TRUE(Matches(IsOk())(absl::StatusOr<int>(7)));
  EXPECT_TRUE(Matches(IsOk())(grpc::Status()));
}

TEST(IsOkTest, RejectsErrorsAndExplainsCodeAndMessage) {
  EXPECT_FALSE(Matches(IsOk())(absl::NotFoundError("no entity x")));
  EXPECT_FALSE(Matches(IsOk())(absl::StatusOr<int>(absl::InternalError("boom"))));
  EXPECT_FALSE(Matches(IsOk())(grpc::Status(grpc::StatusCode::UNAVAILABLE, "down")));
  EXPECT_EQ(Explain(IsOk(), absl::NotFoundError("no entity x")),
            "whose status is NOT_FOUND: \"no entity x\"");
  EXPECT_EQ(Explain(IsOk(), grpc::Status(grpc::StatusCode::UNAVAILABLE, "down")),
            "whose status is UNAVAILABLE: \"down\"");
}

TEST(IsOkTest, NegationMatchesErrorsOnly) {
  EXPECT_TRUE(Matches(Not(IsOk()))(absl::CancelledError("stop")));
  EXPECT_FALSE(Matches(Not(IsOk()))(absl::OkStatus()));
}

TEST(StatusIsTest, MatchesTheRightCodeOnly) {
  const absl::Status status = absl::InvalidArgumentError("top_k: 0 is below 1");
  EXPECT_TRUE(Matches(StatusIs(absl::StatusCode::kInvalidArgument))(status));
  EXPECT_FALSE(Matches(StatusIs(absl::StatusCode::kNotFound))(status));
  EXPECT_FALSE(Matches(StatusIs(absl::StatusCode::kInvalidArgument))(absl::OkStatus()));
  EXPECT_TRUE(Matches(StatusIs(absl::StatusCode::kOk))(absl::OkStatus()));
}

TEST(StatusIsTest, ChecksTheMessage) {
  const absl::StatusOr<std::string> result = absl::FailedPreconditionError("no snapshot in /kg");
  EXPECT_TRUE(Matches(StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("/kg")))(result));
  EXPECT_TRUE(
      Matches(StatusIs(absl::StatusCode::kFailedPrecondition, "no snapshot in /kg"))(result));
  EXPECT_FALSE(Matches(StatusIs(absl::StatusCode::kFailedPrecondition, "no snapshot"))(result));
  EXPECT_FALSE(
      Matches(StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("/models")))(result));
  EXPECT_FALSE(Matches(StatusIs(absl::StatusCode::kInternal, HasSubstr("/kg")))(result));
}

TEST(StatusIsTest, AcceptsGrpcStatusesAndEitherCodeEnum) {
  const grpc::Status status(grpc::StatusCode::RESOURCE_EXHAUSTED, "rate limit: 5 per second");
  EXPECT_TRUE(Matches(StatusIs(grpc::StatusCode::RESOURCE_EXHAUSTED))(status));
  EXPECT_TRUE(Matches(StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("5")))(status));
  EXPECT_FALSE(Matches(StatusIs(grpc::StatusCode::UNAUTHENTICATED))(status));
  EXPECT_TRUE(Matches(StatusIs(grpc::StatusCode::NOT_FOUND))(absl::NotFoundError("x")));
}

TEST(StatusIsTest, ExplainsTheActualCodeAndMessage) {
  const absl::Status status = absl::InvalidArgumentError("top_k: 0 is below 1");
  EXPECT_EQ(Explain(StatusIs(absl::StatusCode::kNotFound), status),
            "whose status is INVALID_ARGUMENT: \"top_k: 0 is below 1\"");
  EXPECT_THAT(Explain(StatusIs(absl::StatusCode::kInvalidArgument, "other"), status),
              HasSubstr("whose status is INVALID_ARGUMENT"));
  EXPECT_EQ(::testing::DescribeMatcher<absl::Status>(
                StatusIs(absl::StatusCode::kNotFound, HasSubstr("x"))),
            "has status NOT_FOUND with a message that has substring \"x\"");
}

TEST(StatusMacrosTest, AssertOkAndAssignDeclaresTheValue) {
  ASSERT_OK_AND_ASSIGN(const int value, absl::StatusOr<int>(41));
  EXPECT_EQ(value, 41);
  std::string text;
  ASSERT_OK_AND_ASSIGN(text, absl::StatusOr<std::string>("kg"));
  EXPECT_EQ(text, "kg");
  ASSERT_OK(absl::OkStatus());
  EXPECT_OK(grpc::Status());
}

// A failing ASSERT_OK_AND_ASSIGN fails the test and returns before the assignment.
int assigned_from_error = 0;
void AssignFromError() {
  ASSERT_OK_AND_ASSIGN(assigned_from_error, absl::StatusOr<int>(absl::DataLossError("torn")));
  assigned_from_error = -1;
}

TEST(StatusMacrosTest, AssertOkAndAssignFailsAndReturnsOnError) {
  EXPECT_FATAL_FAILURE(AssignFromError(), "DATA_LOSS: \"torn\"");
  EXPECT_EQ(assigned_from_error, 0);
}

void ExpectOkOnUnavailable() { EXPECT_OK(absl::UnavailableError("kgstore down")); }

TEST(StatusMacrosTest, ExpectOkFailureNamesCodeAndMessage) {
  EXPECT_NONFATAL_FAILURE(ExpectOkOnUnavailable(), "UNAVAILABLE: \"kgstore down\"");
}

}  // namespace
}  // namespace ibgraphrag::common::test_util
