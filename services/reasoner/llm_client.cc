#include "services/reasoner/llm_client.h"

#include <cstdio>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ibgraphrag::reasoner {

void LogToStderr(absl::string_view line) {
  std::fprintf(stderr, "[reasoner] %.*s\n", static_cast<int>(line.size()), line.data());
}

absl::StatusOr<std::unique_ptr<LlmClient>> CreateLlmClient(LlmBackendConfig config, LogFn log) {
  if (config.name.empty() || config.name == "extractive") {
    return absl::InvalidArgumentError(
        absl::StrCat("backend name '", config.name, "' is reserved; pick another name"));
  }
  if (!log) log = LogToStderr;
  return LlmClient::Create(std::move(config), std::move(log));
}

}  // namespace ibgraphrag::reasoner
