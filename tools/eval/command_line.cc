#include "tools/eval/command_line.h"

#include <algorithm>
#include <fstream>
#include <iterator>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace ibgraphrag::eval {
namespace {

// The flag name of `arg` ("--top_k=3" -> "top_k"), or "" when `arg` is not a flag. `value` gets
// the text after '=' and `has_value` whether there was one.
absl::string_view FlagName(absl::string_view arg, absl::string_view* value, bool* has_value) {
  if (!absl::ConsumePrefix(&arg, "--") && !absl::ConsumePrefix(&arg, "-")) return "";
  const size_t eq = arg.find('=');
  *has_value = eq != absl::string_view::npos;
  *value = *has_value ? arg.substr(eq + 1) : absl::string_view();
  return *has_value ? arg.substr(0, eq) : arg;
}

}  // namespace

std::vector<std::string> FlagValues(const std::vector<std::string>& argv, absl::string_view name) {
  std::vector<std::string> values;
  for (size_t i = 1; i < argv.size(); ++i) {
    if (argv[i] == "--") break;
    absl::string_view value;
    bool has_value = false;
    if (FlagName(argv[i], &value, &has_value) != name) continue;
    if (has_value) {
      values.emplace_back(value);
    } else if (i + 1 < argv.size()) {
      values.push_back(argv[++i]);
    }
  }
  return values;
}

bool FlagGiven(const std::vector<std::string>& argv, absl::string_view name) {
  for (size_t i = 1; i < argv.size(); ++i) {
    if (argv[i] == "--") break;
    absl::string_view value;
    bool has_value = false;
    const absl::string_view flag = FlagName(argv[i], &value, &has_value);
    if (flag == name || (!has_value && flag == absl::StrCat("no", name))) return true;
  }
  return false;
}

std::vector<std::string> ProcessCommandLine() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  if (!in) return {};
  const std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> argv = absl::StrSplit(raw, '\0');
  if (!argv.empty() && argv.back().empty()) argv.pop_back();
  return argv;
}

std::string RedactedCommandLine(const std::vector<std::string>& argv,
                                const std::vector<std::string>& secret_flags) {
  std::vector<std::string> out;
  for (size_t i = 0; i < argv.size(); ++i) {
    absl::string_view value;
    bool has_value = false;
    const std::string flag(FlagName(argv[i], &value, &has_value));
    const bool secret = !flag.empty() && std::find(secret_flags.begin(), secret_flags.end(),
                                                   flag) != secret_flags.end();
    if (!secret) {
      out.push_back(argv[i]);
    } else if (has_value) {
      out.push_back(absl::StrCat(argv[i].substr(0, argv[i].size() - value.size()), "***"));
    } else {
      out.push_back(argv[i]);
      if (i + 1 < argv.size()) {
        out.push_back("***");
        ++i;
      }
    }
  }
  return absl::StrJoin(out, " ");
}

}  // namespace ibgraphrag::eval
