// GoogleTest matchers and macros for absl::Status, absl::StatusOr<T> and grpc::Status, so tests
// state the status they expect instead of comparing `.status().code()` by hand, and a failure
// prints the status's code and message:
//
//   EXPECT_THAT(store.Lookup("x"), StatusIs(absl::StatusCode::kNotFound, HasSubstr("x")));
//   EXPECT_THAT(stub->Ask(&ctx, request, &reply), StatusIs(grpc::StatusCode::UNAVAILABLE));
//   ASSERT_OK(Publish(dir));
//   ASSERT_OK_AND_ASSIGN(auto store, KgStore::Open(options));
#ifndef IBGRAPHRAG_COMMON_TEST_UTIL_STATUS_MATCHERS_H_
#define IBGRAPHRAG_COMMON_TEST_UTIL_STATUS_MATCHERS_H_

#include <grpcpp/support/status.h>

#include <ostream>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/status_macros.h"  // IBGR_STATUS_MACROS_CONCAT_
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ibgraphrag::common::test_util {
namespace status_matchers_internal {

// The code and message of any status type. absl::StatusCode and grpc::StatusCode share their
// numbering (both follow google.rpc.Code), so one integer compares either.
struct StatusParts {
  int code = 0;
  std::string message;
};

inline StatusParts PartsOf(const absl::Status& status) {
  return {static_cast<int>(status.code()), std::string(status.message())};
}
template <typename T>
StatusParts PartsOf(const absl::StatusOr<T>& status_or) {
  return PartsOf(status_or.status());
}
inline StatusParts PartsOf(const grpc::Status& status) {
  return {static_cast<int>(status.error_code()), status.error_message()};
}

// "INVALID_ARGUMENT" for 3; absl's names are the canonical names of google.rpc.Code.
inline std::string CodeName(int code) {
  return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
}

inline void ExplainStatus(const StatusParts& parts, ::testing::MatchResultListener* listener) {
  *listener << "whose status is " << CodeName(parts.code);
  if (!parts.message.empty()) *listener << ": \"" << parts.message << "\"";
}

class IsOkMatcher {
 public:
  template <typename StatusType>
  bool MatchAndExplain(const StatusType& status, ::testing::MatchResultListener* listener) const {
    const StatusParts parts = PartsOf(status);
    ExplainStatus(parts, listener);
    return parts.code == 0;
  }
  void DescribeTo(std::ostream* os) const { *os << "is OK"; }
  void DescribeNegationTo(std::ostream* os) const { *os << "is not OK"; }
};

class StatusIsMatcher {
 public:
  StatusIsMatcher(int code, ::testing::Matcher<const std::string&> message_matcher)
      : code_(code), message_matcher_(std::move(message_matcher)) {}

  template <typename StatusType>
  bool MatchAndExplain(const StatusType& status, ::testing::MatchResultListener* listener) const {
    const StatusParts parts = PartsOf(status);
    ExplainStatus(parts, listener);
    if (parts.code != code_) return false;
    ::testing::StringMatchResultListener message_listener;
    if (message_matcher_.MatchAndExplain(parts.message, &message_listener)) return true;
    const std::string why = message_listener.str();
    if (!why.empty()) *listener << ", and the message " << why;
    return false;
  }
  void DescribeTo(std::ostream* os) const {
    *os << "has status " << CodeName(code_) << " with a message that ";
    message_matcher_.DescribeTo(os);
  }
  void DescribeNegationTo(std::ostream* os) const {
    *os << "does not have status " << CodeName(code_) << " with a message that ";
    message_matcher_.DescribeTo(os);
  }

 private:
  int code_;
  ::testing::Matcher<const std::string&> message_matcher_;
};

}  // namespace status_matchers_internal

// Matches an OK absl::Status, absl::StatusOr<T> or grpc::Status.
inline ::testing::PolymorphicMatcher<status_matchers_internal::IsOkMatcher> IsOk() {
  return ::testing::MakePolymorphicMatcher(status_matchers_internal::IsOkMatcher());
}

// Matches a status with `code` whose message matches `message_matcher` (a string is an exact
// match; any message when left out). `code` is an absl::StatusCode or a grpc::StatusCode.
inline ::testing::PolymorphicMatcher<status_matchers_internal::StatusIsMatcher> StatusIs(
    absl::StatusCode code, ::testing::Matcher<const std::string&> message_matcher = ::testing::_) {
  return ::testing::MakePolymorphicMatcher(
      status_matchers_internal::StatusIsMatcher(static_cast<int>(code), message_matcher));
}
inline ::testing::PolymorphicMatcher<status_matchers_internal::StatusIsMatcher> StatusIs(
    grpc::StatusCode code, ::testing::Matcher<const std::string&> message_matcher = ::testing::_) {
  return ::testing::MakePolymorphicMatcher(
      status_matchers_internal::StatusIsMatcher(static_cast<int>(code), message_matcher));
}

}  // namespace ibgraphrag::common::test_util

// Fails the test (ASSERT: and returns) unless `expr` is OK; the failure names the code and message.
#define ASSERT_OK(expr) ASSERT_THAT(expr, ::ibgraphrag::common::test_util::IsOk())
#define EXPECT_OK(expr) EXPECT_THAT(expr, ::ibgraphrag::common::test_util::IsOk())

// `ASSERT_OK_AND_ASSIGN(auto value, MaybeValue());` declares/assigns `value` from an
// absl::StatusOr<T>, or fails the test and returns from it. Only in functions returning void.
#define ASSERT_OK_AND_ASSIGN(lhs, rexpr) \
  IBGR_ASSERT_OK_AND_ASSIGN_IMPL_(IBGR_STATUS_MACROS_CONCAT_(ibgr_statusor_, __LINE__), lhs, rexpr)
#define IBGR_ASSERT_OK_AND_ASSIGN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                    \
  ASSERT_OK(statusor);                                        \
  lhs = std::move(statusor).value()

#endif  // IBGRAPHRAG_COMMON_TEST_UTIL_STATUS_MATCHERS_H_
