#include "services/reasoner/reasoner_config.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <system_error>
#include <tuple>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/config.h"
#include "common/llm_backend_config.h"
#include "common/status_macros.h"
#include "services/reasoner/confidence_calibration.h"
#include "services/reasoner/prompt_templates.h"

namespace ibgraphrag::reasoner {
namespace {

namespace cfg = ::ibgraphrag::config::v1;

// Limits documented in reasoner_config.proto.
constexpr int kMaxBackends = 32;
constexpr size_t kMaxBackendNameBytes = 64;
constexpr size_t kMaxBaseUrlBytes = 2048;
constexpr size_t kMaxModelBytes = 256;
constexpr double kMaxTimeoutSeconds = 3600;
constexpr double kMaxConnectTimeoutSeconds = 600;
constexpr int kMaxRetries = 10;
constexpr int kMaxConcurrency = 4096;
constexpr int kMaxTokens = 131072;
constexpr int kMaxEvidenceTokenBudget = 1 << 20;
constexpr int kMaxStopSequences = 4;
constexpr size_t kMaxStopSequenceBytes = 64;

absl::Status Invalid(absl::string_view field, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", what));
}

bool IsNameChar(char c) { return absl::ascii_isalnum(c) || c == '.' || c == '_' || c == '-'; }

absl::Status CheckSeconds(absl::string_view field, double value, double max) {
  if (!std::isfinite(value) || value <= 0 || value > max) {
    return Invalid(field,
                   absl::StrCat(value, " seconds is out of range; it must be in (0, ", max, "]"));
  }
  return absl::OkStatus();
}

absl::Status CheckRange(absl::string_view field, int64_t value, int64_t min, int64_t max) {
  if (value < min || value > max) {
    return Invalid(field, absl::StrCat(value, " is out of range; it must be in ", min, "..", max));
  }
  return absl::OkStatus();
}

absl::Status ValidateBackend(const cfg::LlmBackend& backend, const std::string& prefix) {
  const std::string& name = backend.name();
  if (name.empty()) return Invalid(prefix + ".name", "required");
  if (name.size() > kMaxBackendNameBytes || !std::all_of(name.begin(), name.end(), IsNameChar)) {
    return Invalid(prefix + ".name", absl::StrCat("'", name, "' must be 1..", kMaxBackendNameBytes,
                                                  " characters of [A-Za-z0-9._-]"));
  }
  if (name == kExtractiveBackend) {
    return Invalid(prefix + ".name", "'extractive' is reserved for the extractive backend");
  }
  const std::string& url = backend.base_url();
  if (url.empty()) {
    return Invalid(prefix + ".base_url", "required (e.g. \"http://127.0.0.1:8000/v1\")");
  }
  if (url.size() > kMaxBaseUrlBytes) {
    return Invalid(prefix + ".base_url",
                   absl::StrCat(url.size(), " bytes; the limit is ", kMaxBaseUrlBytes));
  }
  if (!absl::StartsWith(url, "http://") && !absl::StartsWith(url, "https://")) {
    return Invalid(prefix + ".base_url", absl::StrCat("must start with http:// or https:// (got '",
                                                      url.substr(0, 100), "')"));
  }
  if (backend.model().empty()) {
    return Invalid(prefix + ".model", "required (the model name the server serves)");
  }
  if (backend.model().size() > kMaxModelBytes) {
    return Invalid(prefix + ".model",
                   absl::StrCat(backend.model().size(), " bytes; the limit is ", kMaxModelBytes));
  }
  if (backend.has_timeout_seconds()) {
    IBGR_RETURN_IF_ERROR(
        CheckSeconds(prefix + ".timeout_seconds", backend.timeout_seconds(), kMaxTimeoutSeconds));
  }
  if (backend.has_connect_timeout_seconds()) {
    IBGR_RETURN_IF_ERROR(CheckSeconds(prefix + ".connect_timeout_seconds",
                                      backend.connect_timeout_seconds(),
                                      kMaxConnectTimeoutSeconds));
  }
  if (backend.has_max_retries()) {
    IBGR_RETURN_IF_ERROR(
        CheckRange(prefix + ".max_retries", backend.max_retries(), 0, kMaxRetries));
  }
  if (backend.has_max_concurrency()) {
    IBGR_RETURN_IF_ERROR(
        CheckRange(prefix + ".max_concurrency", backend.max_concurrency(), 1, kMaxConcurrency));
  }
  if (backend.has_max_tokens()) {
    IBGR_RETURN_IF_ERROR(CheckRange(prefix + ".max_tokens", backend.max_tokens(), 1, kMaxTokens));
  }
  // Key sources: the client reads them at start too, but here the message names the field.
  if (!backend.api_key_file().empty()) {
    std::ifstream in(backend.api_key_file(), std::ios::binary);
    std::stringstream contents;
    if (in) contents << in.rdbuf();
    if (!in) {
      return absl::FailedPreconditionError(
          absl::StrCat(prefix, ".api_key_file: cannot read ", backend.api_key_file()));
    }
    if (absl::StripAsciiWhitespace(contents.str()).empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat(prefix, ".api_key_file: ", backend.api_key_file(), " is empty"));
    }
  } else if (!backend.api_key_env().empty()) {
    const char* value = std::getenv(backend.api_key_env().c_str());
    if (value == nullptr || absl::StripAsciiWhitespace(value).empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          prefix, ".api_key_env: environment variable ", backend.api_key_env(), " is not set"));
    }
  }
  return absl::OkStatus();
}

// "<kind>.v<N>" with the expected kind, or empty.
absl::Status CheckPinnedVersion(absl::string_view field, const std::string& version,
                                absl::string_view kind) {
  if (version.empty()) return absl::OkStatus();
  const std::string prefix = absl::StrCat(kind, ".v");
  int number = 0;
  if (!absl::StartsWith(version, prefix) ||
      !absl::SimpleAtoi(absl::string_view(version).substr(prefix.size()), &number) || number < 1) {
    return Invalid(field,
                   absl::StrCat("'", version, "' is not a version of the ", kind,
                                " templates (expected ", prefix, "<N>, e.g. ", prefix, "1)"));
  }
  return absl::OkStatus();
}

PromptLibraryOptions PromptsFromConfig(const cfg::PromptConfig& prompts) {
  PromptLibraryOptions out;
  out.directory = prompts.directory();
  out.multiple_choice_version = prompts.multiple_choice_version();
  out.fact_verification_version = prompts.fact_verification_version();
  out.open_version = prompts.open_version();
  return out;
}

}  // namespace

namespace {

// Weights in [0, 1], depths 0..kMaxOntologyDepth.
absl::Status ValidateExtractiveConfig(const cfg::ExtractiveConfig& extractive) {
  constexpr uint32_t kMaxOntologyDepth = 8;
  for (const auto& [field, has, value] :
       {std::tuple<const char*, bool, double>{"extractive.subtype_weight",
                                              extractive.has_subtype_weight(),
                                              extractive.subtype_weight()},
        {"extractive.supertype_weight", extractive.has_supertype_weight(),
         extractive.supertype_weight()}}) {
    if (has && !(value >= 0.0 && value <= 1.0)) {
      return Invalid(field, absl::StrCat(value, " is outside 0..1"));
    }
  }
  for (const auto& [field, value] :
       {std::pair<const char*, uint32_t>{"extractive.max_subtype_depth",
                                         extractive.max_subtype_depth()},
        {"extractive.max_supertype_depth", extractive.max_supertype_depth()}}) {
    if (value > kMaxOntologyDepth) {
      return Invalid(field, absl::StrCat(value, " is outside 0..", kMaxOntologyDepth));
    }
  }
  return absl::OkStatus();
}

void ApplyExtractiveConfig(const cfg::ExtractiveConfig& config, ExtractiveOptions* options) {
  if (config.has_subtype_weight()) options->subtype_weight = config.subtype_weight();
  if (config.has_supertype_weight()) options->supertype_weight = config.supertype_weight();
  if (config.has_max_subtype_depth()) {
    options->max_subtype_depth = static_cast<int>(config.max_subtype_depth());
  }
  if (config.has_max_supertype_depth()) {
    options->max_supertype_depth = static_cast<int>(config.max_supertype_depth());
  }
  if (config.has_prefer_connected_to_all()) {
    options->prefer_connected_to_all = config.prefer_connected_to_all();
  }
}

}  // namespace

absl::Status ValidateReasonerConfig(const cfg::ReasonerConfig& config) {
  if (absl::Status s = common::ValidateServerConfig(config.server()); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("server.", s.message()));
  }
  if (config.backends_size() > kMaxBackends) {
    return Invalid("backends",
                   absl::StrCat(config.backends_size(), " entries; the limit is ", kMaxBackends));
  }
  std::map<std::string, int> seen;
  for (int i = 0; i < config.backends_size(); ++i) {
    const std::string prefix = absl::StrCat("backends[", i, "]");
    IBGR_RETURN_IF_ERROR(ValidateBackend(config.backends(i), prefix));
    auto [it, inserted] = seen.emplace(config.backends(i).name(), i);
    if (!inserted) {
      return Invalid(prefix + ".name",
                     absl::StrCat("'", config.backends(i).name(),
                                  "' is already the name of backends[", it->second, "]"));
    }
  }
  const std::string& fallback = config.default_backend();
  if (!fallback.empty() && fallback != kExtractiveBackend && seen.count(fallback) == 0) {
    return Invalid(
        "default_backend",
        absl::StrCat("'", fallback,
                     "' is neither \"extractive\" nor the name of a configured backend"));
  }
  switch (config.on_llm_failure()) {
    case cfg::LLM_FAILURE_POLICY_UNSPECIFIED:
    case cfg::LLM_FAILURE_POLICY_FALL_BACK_TO_EXTRACTIVE:
    case cfg::LLM_FAILURE_POLICY_RETURN_ERROR:
      break;
    default:
      return Invalid("on_llm_failure",
                     absl::StrCat("unknown value ", static_cast<int>(config.on_llm_failure())));
  }
  if (config.has_default_evidence_token_budget()) {
    IBGR_RETURN_IF_ERROR(CheckRange("default_evidence_token_budget",
                                    config.default_evidence_token_budget(), 1,
                                    kMaxEvidenceTokenBudget));
  }
  if (config.has_max_caller_prompt_tokens()) {
    IBGR_RETURN_IF_ERROR(CheckRange("max_caller_prompt_tokens", config.max_caller_prompt_tokens(),
                                    1, kMaxEvidenceTokenBudget));
  }
  if (config.stop_sequences_size() > kMaxStopSequences) {
    return Invalid("stop_sequences", absl::StrCat(config.stop_sequences_size(),
                                                  " entries; the limit is ", kMaxStopSequences));
  }
  for (int i = 0; i < config.stop_sequences_size(); ++i) {
    const std::string& stop = config.stop_sequences(i);
    if (stop.empty() || stop.size() > kMaxStopSequenceBytes) {
      return Invalid(absl::StrCat("stop_sequences[", i, "]"),
                     absl::StrCat(stop.size(), " bytes; it must be 1..", kMaxStopSequenceBytes));
    }
  }
  IBGR_RETURN_IF_ERROR(ValidateExtractiveConfig(config.extractive()));
  const cfg::PromptConfig& prompts = config.prompts();
  IBGR_RETURN_IF_ERROR(CheckPinnedVersion("prompts.multiple_choice_version",
                                          prompts.multiple_choice_version(), "mcq"));
  IBGR_RETURN_IF_ERROR(CheckPinnedVersion("prompts.fact_verification_version",
                                          prompts.fact_verification_version(), "fact"));
  IBGR_RETURN_IF_ERROR(CheckPinnedVersion("prompts.open_version", prompts.open_version(), "open"));
  if (!prompts.directory().empty()) {
    std::error_code error;
    if (!std::filesystem::is_directory(prompts.directory(), error)) {
      return absl::NotFoundError(
          absl::StrCat("prompts.directory: ", prompts.directory(), " is not a directory"));
    }
  }
  // Parses every template and resolves the pinned versions, as the server will.
  absl::StatusOr<PromptLibrary> library = PromptLibrary::Load(PromptsFromConfig(prompts));
  if (!library.ok()) {
    return absl::Status(library.status().code(),
                        absl::StrCat("prompts: ", library.status().message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<ReasonerServer::Options> ReasonerServerOptionsFromConfig(
    const cfg::ReasonerConfig& config) {
  IBGR_RETURN_IF_ERROR(ValidateReasonerConfig(config));
  ReasonerServer::Options options;
  common::ServerRunner::Options defaults;
  defaults.service_name = "reasoner";
  defaults.port = kDefaultReasonerPort;
  defaults.metrics_port = kDefaultReasonerMetricsPort;
  IBGR_ASSIGN_OR_RETURN(options.server, common::OptionsFromConfig(config.server(), defaults));

  ReasonerOptions& reasoner = options.reasoner;
  for (const cfg::LlmBackend& b : config.backends()) {
    reasoner.backends.push_back(common::OpenAiClientOptionsFromConfig(b));
  }
  reasoner.prompts = PromptsFromConfig(config.prompts());
  reasoner.on_llm_failure = config.on_llm_failure() == cfg::LLM_FAILURE_POLICY_RETURN_ERROR
                                ? LlmFailurePolicy::kReturnError
                                : LlmFailurePolicy::kFallBackToExtractive;
  if (config.has_default_evidence_token_budget()) {
    reasoner.default_evidence_token_budget = config.default_evidence_token_budget();
  }
  if (config.has_accept_caller_prompts()) {
    reasoner.accept_caller_prompts = config.accept_caller_prompts();
  }
  if (config.has_max_caller_prompt_tokens()) {
    reasoner.max_caller_prompt_tokens = config.max_caller_prompt_tokens();
  }
  reasoner.seed = config.seed();
  reasoner.stop_sequences.assign(config.stop_sequences().begin(), config.stop_sequences().end());
  reasoner.log_patient_text = config.server().log_payloads();
  ApplyExtractiveConfig(config.extractive(), &reasoner.extractive);
  options.default_backend = config.default_backend();
  return options;
}

absl::StatusOr<ReasonerServer::Options> LoadReasonerOptionsFromFlags(
    const std::string& config_path, const std::string& calibration_spec, const std::string& base) {
  ibgraphrag::config::v1::ReasonerConfig config;
  if (!config_path.empty()) {
    absl::StatusOr<ibgraphrag::config::v1::ReasonerConfig> loaded =
        common::LoadTextProtoConfig<ibgraphrag::config::v1::ReasonerConfig>(config_path);
    if (!loaded.ok()) {
      return absl::Status(loaded.status().code(),
                          absl::StrCat("--reasoner_config: ", loaded.status().message()));
    }
    config = *std::move(loaded);
  }
  absl::StatusOr<ReasonerServer::Options> options = ReasonerServerOptionsFromConfig(config);
  if (!options.ok()) {
    return absl::Status(options.status().code(), absl::StrCat("--reasoner_config ", config_path,
                                                              ": ", options.status().message()));
  }
  absl::StatusOr<std::shared_ptr<const CalibrationModel>> calibration =
      LoadCalibrationFlag(calibration_spec, base);
  if (!calibration.ok()) return calibration.status();
  options->reasoner.calibration = *std::move(calibration);
  return options;
}

absl::StatusOr<std::shared_ptr<const CalibrationModel>> LoadCalibrationFlag(
    const std::string& calibration_spec, const std::string& base) {
  const std::string spec = calibration_spec == "auto" && base.empty() ? "none" : calibration_spec;
  absl::StatusOr<std::shared_ptr<const CalibrationModel>> calibration =
      LoadCalibrationSpec(spec, base);
  if (!calibration.ok()) {
    return absl::Status(calibration.status().code(),
                        absl::StrCat("--calibration: ", calibration.status().message()));
  }
  return calibration;
}

}  // namespace ibgraphrag::reasoner
