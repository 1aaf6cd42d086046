// Subprocess: a restarted process appends to the same log, and waiting for its "ready" line must
// not match the line an earlier process wrote there.
#include "tests/test_util/subprocess.h"

#include <string>

#include "absl/time/time.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ibgraphrag::testing {
namespace {

using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::HasSubstr;

TEST(SubprocessTest, WaitForLogLineSkipsAnEarlierProcesssLines) {
  common::test_util::ScratchDir dir;
  const std::string log = dir.path() + "/service.log";
  absl::StatusOr<int> first =
      RunToCompletion({"/bin/sh", "-c", "echo first: ready"}, log, absl::Seconds(10));
  ASSERT_OK(first);
  // The second run exits without logging "ready": the wait fails instead of finding line 1.
  absl::StatusOr<Subprocess> second =
      Subprocess::Start({"/bin/sh", "-c", "echo second: starting; exit 3"}, log);
  ASSERT_OK(second);
  absl::StatusOr<std::string> line = second->WaitForLogLine("ready", absl::Seconds(10));
  EXPECT_THAT(line, StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_EQ(second->exit_code(), 3);
  EXPECT_EQ(second->ReadOwnLog(), "second: starting\n");
  EXPECT_THAT(second->ReadLog(), HasSubstr("first: ready"));  // the whole file keeps both runs
  // A third run that does log it is found.
  absl::StatusOr<Subprocess> third =
      Subprocess::Start({"/bin/sh", "-c", "echo third: ready; sleep 5"}, log);
  ASSERT_OK(third);
  line = third->WaitForLogLine("ready", absl::Seconds(10));
  ASSERT_OK(line);
  EXPECT_EQ(*line, "third: ready");
}

}  // namespace
}  // namespace ibgraphrag::testing
