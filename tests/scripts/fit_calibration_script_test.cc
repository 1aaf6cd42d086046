// scripts/fit_calibration.sh decides whether start.sh refits the calibration: its features version
// must be this build's reasoner::kCalibrationFeaturesVersion, and a manifest it cannot read must
// count as stale (refit), never abort the script.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/temp_dir.h"
#include "common/test_util/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/reasoner/confidence_calibration.h"
#include "tests/test_util/subprocess.h"

namespace ibgraphrag::testing {
namespace {

using ::testing::HasSubstr;

std::string SourceDir() {
  const char* env = std::getenv("IBGR_SOURCE_DIR");
  return env != nullptr ? env : ".";
}

// Runs the script with `args`; returns its output (stdout and stderr), expecting exit code 0.
std::string RunScript(const std::string& args_dir, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/bin/bash", SourceDir() + "/scripts/fit_calibration.sh"};
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string log = args_dir + "/script.log";
  std::remove(log.c_str());
  absl::StatusOr<int> code = RunToCompletion(argv, log, absl::Seconds(30));
  EXPECT_OK(code);
  std::ifstream in(log);
  std::stringstream out;
  out << in.rdbuf();
  EXPECT_EQ(code.value_or(-1), 0) << out.str();
  return out.str();
}

TEST(FitCalibrationScriptTest, FeaturesVersionIsThisBuilds) {
  common::test_util::ScratchDir dir;
  const std::string printed = RunScript(dir.path(), {"--print_features_version"});
  EXPECT_EQ(absl::StripAsciiWhitespace(printed),
            absl::StrCat(reasoner::kCalibrationFeaturesVersion));
}

TEST(FitCalibrationScriptTest, UnreadableManifestIsStaleNotAnError) {
  common::test_util::ScratchDir dir;
  const std::string base = dir.path() + "/art";
  EXPECT_THAT(RunScript(dir.path(), {"--base=" + base, "--print_staleness"}),
              HasSubstr("no calibration version"));
  std::filesystem::create_directories(base + "/calibration/1");
  common::test_util::WriteFileOrDie(base + "/calibration/1/manifest.json", "{not json");
  EXPECT_THAT(RunScript(dir.path(), {"--base=" + base, "--print_staleness"}),
              HasSubstr("calibration/1/manifest.json is unreadable"));
  common::test_util::WriteFileOrDie(base + "/calibration/1/manifest.json",
                                    R"({"features_version": "two"})");
  EXPECT_THAT(RunScript(dir.path(), {"--base=" + base, "--print_staleness"}),
              HasSubstr("is unreadable"));
  common::test_util::WriteFileOrDie(
      base + "/calibration/1/manifest.json",
      absl::StrCat(R"({"features_version": )", reasoner::kCalibrationFeaturesVersion, "}"));
  EXPECT_EQ(
      absl::StripAsciiWhitespace(RunScript(dir.path(), {"--base=" + base, "--print_staleness"})),
      "current");
}

}  // namespace
}  // namespace ibgraphrag::testing
