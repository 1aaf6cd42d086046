#include "services/reasoner/reasoner_config.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ibgraphrag::reasoner {
namespace {

namespace cfg = ::ibgraphrag::config::v1;
using ::ibgraphrag::common::test_util::IsOk;
using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

cfg::ReasonerConfig Parse(const std::string& text) {
  cfg::ReasonerConfig config;
  absl::Status status = common::ParseTextProto(text, "test", &config);
  EXPECT_OK(status);
  return config;
}

constexpr char kGoodBackend[] = R"pb(
  backends {
    name: "vllm"
    base_url: "http://127.0.0.1:8000/v1"
    model: "meta-llama/Llama-3.1-8B-Instruct"
  }
)pb";

TEST(ReasonerConfigTest, EmptyConfigServesExtractiveOnDefaultPorts) {
  auto options = ReasonerServerOptionsFromConfig(cfg::ReasonerConfig());
  ASSERT_OK(options);
  EXPECT_EQ(options->server.service_name, "reasoner");
  EXPECT_EQ(options->server.port, kDefaultReasonerPort);
  EXPECT_EQ(options->server.metrics_port, kDefaultReasonerMetricsPort);
  EXPECT_TRUE(options->reasoner.backends.empty());
  EXPECT_EQ(options->default_backend, "");
  EXPECT_EQ(options->reasoner.on_llm_failure, LlmFailurePolicy::kFallBackToExtractive);
  EXPECT_EQ(options->reasoner.default_evidence_token_budget, 4000);
  EXPECT_FALSE(options->reasoner.log_patient_text);
}

TEST(ReasonerConfigTest, EveryFieldIsMapped) {
  const cfg::ReasonerConfig config = Parse(R"pb(
    server { port: 1234 metrics_port: -1 log_payloads: true }
    backends {
      name: "vllm"
      base_url: "http://127.0.0.1:8000/v1"
      model: "m"
      timeout_seconds: 12.5
      connect_timeout_seconds: 2
      max_retries: 4
      max_concurrency: 3
      max_tokens: 64
    }
    backends { name: "ollama" base_url: "http://127.0.0.1:11434/v1" model: "llama3.1" }
    default_backend: "ollama"
    prompts { fact_verification_version: "fact.v1" }
    on_llm_failure: LLM_FAILURE_POLICY_RETURN_ERROR
    default_evidence_token_budget: 2000
    seed: 7
    stop_sequences: "\n\n"
  )pb");
  auto options = ReasonerServerOptionsFromConfig(config);
  ASSERT_OK(options);
  EXPECT_EQ(options->server.port, 1234);
  EXPECT_EQ(options->server.metrics_port, -1);
  ASSERT_EQ(options->reasoner.backends.size(), 2u);
  const LlmBackendConfig& vllm = options->reasoner.backends[0];
  EXPECT_EQ(vllm.name, "vllm");
  EXPECT_EQ(vllm.base_url, "http://127.0.0.1:8000/v1");
  EXPECT_EQ(vllm.model, "m");
  EXPECT_EQ(vllm.timeout, absl::Milliseconds(12500));
  EXPECT_EQ(vllm.connect_timeout, absl::Seconds(2));
  EXPECT_EQ(vllm.max_retries, 4);
  EXPECT_EQ(vllm.max_concurrency, 3);
  EXPECT_EQ(vllm.max_tokens, 64);
  const LlmBackendConfig& ollama = options->reasoner.backends[1];
  EXPECT_EQ(ollama.timeout, absl::Seconds(60));  // unset keeps the client's default
  EXPECT_EQ(ollama.max_retries, 2);
  EXPECT_EQ(options->default_backend, "ollama");
  EXPECT_EQ(options->reasoner.prompts.fact_verification_version, "fact.v1");
  EXPECT_EQ(options->reasoner.on_llm_failure, LlmFailurePolicy::kReturnError);
  EXPECT_EQ(options->reasoner.default_evidence_token_budget, 2000);
  EXPECT_EQ(options->reasoner.seed, 7);
  EXPECT_EQ(options->reasoner.stop_sequences, std::vector<std::string>({"\n\n"}));
  EXPECT_TRUE(options->reasoner.log_patient_text);
}

struct BadCase {
  std::string text;
  std::string field;  // the message must start with it
};

TEST(ReasonerConfigTest, InvalidFieldsAreRejectedNamingTheField) {
  const std::vector<BadCase> cases =
      {
          {R"pb(backends { base_url: "http://x/v1" model: "m" })pb", "backends[0].name"},
          {R"pb(backends { name: "bad name" base_url: "http://x/v1" model: "m" })pb",
           "backends[0].name"},
          {R"pb(backends { name: "extractive" base_url: "http://x/v1" model: "m" })pb",
           "backends[0].name"},
          {R"pb(backends { name: "a" model: "m" })pb", "backends[0].base_url"},
          {R"pb(backends { name: "a" base_url: "ftp://x" model: "m" })pb", "backends[0].base_url"},
          {R"pb(backends { name: "a" base_url: "http://x/v1" })pb", "backends[0].model"},
          {R"pb(backends { name: "a" base_url: "http://x/v1" model: "m" timeout_seconds: 0 })pb",
           "backends[0].timeout_seconds"},
          {R"pb(backends {
                  name: "a"
                  base_url: "http://x/v1"
                  model: "m"
                  connect_timeout_seconds: 601
                })pb",
           "backends[0].connect_timeout_seconds"},
          {R"pb(backends { name: "a" base_url: "http://x/v1" model: "m" max_retries: 11 })pb",
           "backends[0].max_retries"},
          {R"pb(backends { name: "a" base_url: "http://x/v1" model: "m" max_concurrency: 0 })pb",
           "backends[0].max_concurrency"},
          {R"pb(backends { name: "a" base_url: "http://x/v1" model: "m" max_tokens: 0 })pb",
           "backends[0].max_tokens"},
          {R"pb(backends { name: "a" base_url: "http://x/v1" model: "m" }
                backends { name: "a" base_url: "http://y/v1" model: "m" })pb",
           "backends[1].name"},
          {R"pb(backends {
                  name: "a"
                  base_url: "http://x/v1"
                  model: "m"
                  api_key_env: "IBGR_REASONER_CONFIG_TEST_UNSET_KEY"
                })pb",
           "backends[0].api_key_env"},
          {R"pb(backends {
                  name: "a"
                  base_url: "http://x/v1"
                  model: "m"
                  api_key_file: "/nonexistent/key"
                })pb",
           "backends[0].api_key_file"},
          {R"pb(default_backend: "vllm")pb", "default_backend"},
          {R"pb(on_llm_failure: 7)pb", "on_llm_failure"},
          {R"pb(default_evidence_token_budget: 0)pb", "default_evidence_token_budget"},
          {R"pb(stop_sequences: "a"
                stop_sequences: "b"
                stop_sequences: "c"
                stop_sequences: "d"
                stop_sequences: "e")pb",
           "stop_sequences"},
          {R"pb(stop_sequences: "")pb", "stop_sequences[0]"},
          {R"pb(prompts { multiple_choice_version: "fact.v1" })pb",
           "prompts.multiple_choice_version"},
          {R"pb(prompts { open_version: "open.v9" })pb", "prompts"},
          {R"pb(prompts { directory: "/nonexistent/prompts" })pb", "prompts.directory"},
          {R"pb(server { port: 70000 })pb", "server.port"},
      };
  for (const BadCase& c : cases) {
    cfg::ReasonerConfig config = Parse(c.text);
    auto options = ReasonerServerOptionsFromConfig(config);
    ASSERT_THAT(options, Not(IsOk())) << c.text;
    EXPECT_THAT(std::string(options.status().message()), StartsWith(c.field)) << c.text;
  }
}

TEST(ReasonerConfigTest, ExtractiveOntologySettingsAreMappedAndChecked) {
  auto options = ReasonerServerOptionsFromConfig(Parse(R"pb(
    extractive {
      subtype_weight: 0.9
      supertype_weight: 0.25
      max_subtype_depth: 2
      max_supertype_depth: 0
      prefer_connected_to_all: false
    }
  )pb"));
  ASSERT_OK(options);
  const ExtractiveOptions& e = options->reasoner.extractive;
  EXPECT_DOUBLE_EQ(e.subtype_weight, 0.9);
  EXPECT_DOUBLE_EQ(e.supertype_weight, 0.25);
  EXPECT_EQ(e.max_subtype_depth, 2);
  EXPECT_EQ(e.max_supertype_depth, 0);
  EXPECT_FALSE(e.prefer_connected_to_all);
  const ExtractiveOptions defaults =
      ReasonerServerOptionsFromConfig(cfg::ReasonerConfig())->reasoner.extractive;
  EXPECT_EQ(defaults.max_subtype_depth, 3);
  EXPECT_TRUE(defaults.prefer_connected_to_all);

  auto weight = ReasonerServerOptionsFromConfig(Parse("extractive { supertype_weight: 1.5 }"));
  EXPECT_THAT(weight, StatusIs(absl::StatusCode::kInvalidArgument,
                               HasSubstr("extractive.supertype_weight")));
  auto depth = ReasonerServerOptionsFromConfig(Parse("extractive { max_subtype_depth: 9 }"));
  EXPECT_THAT(depth, StatusIs(absl::StatusCode::kInvalidArgument,
                              HasSubstr("extractive.max_subtype_depth")));
}

TEST(ReasonerConfigTest, CallerPromptSettingsAreMappedAndChecked) {
  const ReasonerOptions defaults = ReasonerServerOptionsFromConfig(cfg::ReasonerConfig())->reasoner;
  EXPECT_TRUE(defaults.accept_caller_prompts);
  EXPECT_EQ(defaults.max_caller_prompt_tokens, 32768);
  auto options = ReasonerServerOptionsFromConfig(
      Parse("accept_caller_prompts: false max_caller_prompt_tokens: 2000"));
  ASSERT_OK(options);
  EXPECT_FALSE(options->reasoner.accept_caller_prompts);
  EXPECT_EQ(options->reasoner.max_caller_prompt_tokens, 2000);
  auto zero = ReasonerServerOptionsFromConfig(Parse("max_caller_prompt_tokens: 0"));
  EXPECT_THAT(zero,
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("max_caller_prompt_tokens")));
}

TEST(ReasonerConfigTest, ApiKeySourcesAreCheckedAtStart) {
  const std::string dir = common::test_util::MakeTempDir("reasoner-config");
  const std::string key_path = dir + "/reasoner_config_test.key";
  {
    std::ofstream out(key_path);
    out << "  sk-test \n";
  }
  cfg::ReasonerConfig config = Parse(kGoodBackend);
  config.mutable_backends(0)->set_api_key_file(key_path);
  EXPECT_OK(ReasonerServerOptionsFromConfig(config));

  setenv("IBGR_REASONER_CONFIG_TEST_KEY", "sk-env", 1);
  config.mutable_backends(0)->clear_api_key_file();
  config.mutable_backends(0)->set_api_key_env("IBGR_REASONER_CONFIG_TEST_KEY");
  EXPECT_OK(ReasonerServerOptionsFromConfig(config));
  unsetenv("IBGR_REASONER_CONFIG_TEST_KEY");
  auto missing = ReasonerServerOptionsFromConfig(config);
  ASSERT_THAT(missing, StatusIs(absl::StatusCode::kFailedPrecondition));
  std::remove(key_path.c_str());
}

TEST(ReasonerConfigTest, PromptDirectoryVersionsCanBePinned) {
  const std::string dir = common::test_util::MakeTempDir("reasoner-config-prompts");
  {
    std::ofstream out(dir + "/fact.v2.txt");
    out << "[[system]]\nDecide.\n[[user]]\nTriples:\n{{triples}}\nClaim: {{question}}\n";
  }
  cfg::ReasonerConfig config;
  config.mutable_prompts()->set_directory(dir);
  config.mutable_prompts()->set_fact_verification_version("fact.v2");
  auto options = ReasonerServerOptionsFromConfig(config);
  ASSERT_OK(options);
  EXPECT_EQ(options->reasoner.prompts.directory, dir);
  EXPECT_EQ(options->reasoner.prompts.fact_verification_version, "fact.v2");

  std::ofstream(dir + "/fact.v3.txt") << "[[user]]\nno placeholders\n";
  auto broken = ReasonerServerOptionsFromConfig(config);
  ASSERT_THAT(broken, Not(IsOk()));
  EXPECT_THAT(std::string(broken.status().message()), HasSubstr("fact.v3"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ibgraphrag::reasoner
