// The reasoner's view of its LLM backends. The HTTP client itself (retries, timeouts, SSE,
// connection reuse) is common/openai_client.h, shared with alignment; this header names its
// types as the reasoner uses them and adds what only the reasoner knows: which backend names
// are reserved, and where its log lines go by default.
#ifndef IBGRAPHRAG_SERVICES_REASONER_LLM_CLIENT_H_
#define IBGRAPHRAG_SERVICES_REASONER_LLM_CLIENT_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/openai_client.h"

namespace ibgraphrag::reasoner {

using ::ibgraphrag::common::ChatMessage;
using ::ibgraphrag::common::ChatRequest;
using ::ibgraphrag::common::ChatResponse;
using ::ibgraphrag::common::LogFn;
using ::ibgraphrag::common::TokenCallback;
// One named backend of the reasoner config; requests select it by `name`.
using LlmBackendConfig = ::ibgraphrag::common::OpenAiClientOptions;
using LlmClient = ::ibgraphrag::common::OpenAiClient;

// The default LogFn: one line to stderr, prefixed "[reasoner] ".
void LogToStderr(absl::string_view line);

// OpenAiClient::Create for a reasoner backend: the names "" and "extractive" are reserved
// (INVALID_ARGUMENT), since requests select the extractive backend by that name. A null `log`
// logs to stderr.
absl::StatusOr<std::unique_ptr<LlmClient>> CreateLlmClient(LlmBackendConfig config,
                                                           LogFn log = nullptr);

}  // namespace ibgraphrag::reasoner

#endif  // IBGRAPHRAG_SERVICES_REASONER_LLM_CLIENT_H_
