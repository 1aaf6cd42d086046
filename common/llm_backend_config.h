// An LlmBackend config block (protos/ibgraphrag/config/v1/reasoner_config.proto: the reasoner's
// `backends`, the alignment service's `llm`) as the OpenAI client's options; unset optional
// fields keep the client's defaults. Header-only: the reasoner and alignment configs share it.
#ifndef IBGRAPHRAG_COMMON_LLM_BACKEND_CONFIG_H_
#define IBGRAPHRAG_COMMON_LLM_BACKEND_CONFIG_H_

#include "absl/time/time.h"
#include "common/openai_client.h"
#include "ibgraphrag/config/v1/reasoner_config.pb.h"

namespace ibgraphrag::common {

inline OpenAiClientOptions OpenAiClientOptionsFromConfig(const config::v1::LlmBackend& b) {
  OpenAiClientOptions options;
  options.name = b.name();
  options.base_url = b.base_url();
  options.model = b.model();
  options.api_key_env = b.api_key_env();
  options.api_key_file = b.api_key_file();
  if (b.has_timeout_seconds()) options.timeout = absl::Seconds(b.timeout_seconds());
  if (b.has_connect_timeout_seconds()) {
    options.connect_timeout = absl::Seconds(b.connect_timeout_seconds());
  }
  if (b.has_max_retries()) options.max_retries = b.max_retries();
  if (b.has_max_concurrency()) options.max_concurrency = b.max_concurrency();
  if (b.has_max_tokens()) options.max_tokens = b.max_tokens();
  return options;
}

}  // namespace ibgraphrag::common

#endif  // IBGRAPHRAG_COMMON_LLM_BACKEND_CONFIG_H_
