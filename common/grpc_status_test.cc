#include "common/grpc_status.h"

#include <utility>
#include <vector>

#include "common/test_util/status_matchers.h"
#include "gtest/gtest.h"

namespace ibgraphrag::common {
namespace {

using ::ibgraphrag::common::test_util::StatusIs;

TEST(GrpcStatusTest, OkMapsToOk) {
  EXPECT_OK(ToGrpcStatus(absl::OkStatus()));
  EXPECT_OK(FromGrpcStatus(grpc::Status::OK));
}

TEST(GrpcStatusTest, EveryCanonicalCodeMapsOneToOneAndKeepsTheMessage) {
  const std::vector<std::pair<absl::StatusCode, grpc::StatusCode>> pairs = {
      {absl::StatusCode::kCancelled, grpc::StatusCode::CANCELLED},
      {absl::StatusCode::kUnknown, grpc::StatusCode::UNKNOWN},
      {absl::StatusCode::kInvalidArgument, grpc::StatusCode::INVALID_ARGUMENT},
      {absl::StatusCode::kDeadlineExceeded, grpc::StatusCode::DEADLINE_EXCEEDED},
      {absl::StatusCode::kNotFound, grpc::StatusCode::NOT_FOUND},
      {absl::StatusCode::kAlreadyExists, grpc::StatusCode::ALREADY_EXISTS},
      {absl::StatusCode::kPermissionDenied, grpc::StatusCode::PERMISSION_DENIED},
      {absl::StatusCode::kResourceExhausted, grpc::StatusCode::RESOURCE_EXHAUSTED},
      {absl::StatusCode::kFailedPrecondition, grpc::StatusCode::FAILED_PRECONDITION},
      {absl::StatusCode::kAborted, grpc::StatusCode::ABORTED},
      {absl::StatusCode::kOutOfRange, grpc::StatusCode::OUT_OF_RANGE},
      {absl::StatusCode::kUnimplemented, grpc::StatusCode::UNIMPLEMENTED},
      {absl::StatusCode::kInternal, grpc::StatusCode::INTERNAL},
      {absl::StatusCode::kUnavailable, grpc::StatusCode::UNAVAILABLE},
      {absl::StatusCode::kDataLoss, grpc::StatusCode::DATA_LOSS},
      {absl::StatusCode::kUnauthenticated, grpc::StatusCode::UNAUTHENTICATED},
  };
  for (const auto& [absl_code, grpc_code] : pairs) {
    const grpc::Status converted = ToGrpcStatus(absl::Status(absl_code, "top_k: must be <= 100"));
    EXPECT_THAT(converted, StatusIs(grpc_code)) << absl::StatusCodeToString(absl_code);
    EXPECT_EQ(converted.error_message(), "top_k: must be <= 100");

    const absl::Status back = FromGrpcStatus(grpc::Status(grpc_code, "kgstore unreachable"));
    EXPECT_THAT(back, StatusIs(absl_code));
    EXPECT_EQ(back.message(), "kgstore unreachable");
  }
}

TEST(GrpcStatusTest, NonCanonicalCodesBecomeUnknown) {
  EXPECT_THAT(ToGrpcStatus(absl::Status(static_cast<absl::StatusCode>(42), "odd")),
              StatusIs(grpc::StatusCode::UNKNOWN));
  // 20: outside the canonical codes but inside grpc::StatusCode's value range (0..31); 42 would
  // make the cast itself undefined behaviour (UBSan: "not a valid value for type").
  EXPECT_THAT(FromGrpcStatus(grpc::Status(static_cast<grpc::StatusCode>(20), "odd")),
              StatusIs(absl::StatusCode::kUnknown));
}

}  // namespace
}  // namespace ibgraphrag::common
