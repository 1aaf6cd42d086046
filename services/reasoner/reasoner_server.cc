#include "services/reasoner/reasoner_server.h"

#include <map>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "prometheus/counter.h"
#include "prometheus/histogram.h"

namespace ibgraphrag::reasoner {
namespace {

// LLM call durations span a fast local model to a slow hosted one.
const std::vector<double>& LlmBuckets() {
  static const auto* const kBuckets =
      new std::vector<double>({0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120});
  return *kBuckets;
}

// The core's log lines ("reason request_id=... result=OK ...", "llm backend=... attempt=...")
// become structured lines: failures and degraded answers at warning level, the rest at debug
// level (the interceptor already writes one info line per RPC). Lines carry question text only
// when log_patient_text is set, and then only at debug level.
void LogCoreLine(absl::string_view line) {
  const bool failed =
      (absl::StrContains(line, " result=") && !absl::StrContains(line, " result=OK")) ||
      absl::StrContains(line, " degraded=1");
  const bool patient_text =
      absl::StrContains(line, " question=") || absl::StrContains(line, " output=");
  common::Log(failed && !patient_text ? common::LogLevel::kWarning : common::LogLevel::kDebug,
              "reasoner: core", {{"detail", line}});
}

std::string PolicyName(LlmFailurePolicy policy) {
  return policy == LlmFailurePolicy::kReturnError ? "return_error" : "fall_back_to_extractive";
}

}  // namespace

struct ReasonerServer::Metrics {
  struct Series {
    prometheus::Counter* answers_ok = nullptr;
    prometheus::Counter* answers_degraded = nullptr;
    prometheus::Counter* unparsed = nullptr;
    prometheus::Histogram* llm_seconds = nullptr;  // null for the extractive backend
  };
  // By backend name; filled before the first RPC and read-only afterwards.
  std::map<std::string, Series, std::less<>> by_backend;
};

ReasonerServer::ReasonerServer(const Options& options)
    : options_(options),
      metrics_(std::make_unique<Metrics>()),
      service_(options.default_backend,
               [this](absl::string_view backend, const ReasonResult& result) {
                 Record(backend, result);
               }) {}

ReasonerServer::~ReasonerServer() { Shutdown(); }

absl::StatusOr<std::unique_ptr<ReasonerServer>> ReasonerServer::BuildAndStart(
    const Options& options) {
  const std::string& fallback = options.default_backend;
  if (!fallback.empty() && fallback != kExtractiveBackend) {
    bool known = false;
    std::vector<std::string> names = {std::string(kExtractiveBackend)};
    for (const LlmBackendConfig& backend : options.reasoner.backends) {
      known |= backend.name == fallback;
      names.push_back(backend.name);
    }
    if (!known) {
      return absl::InvalidArgumentError(absl::StrCat("default_backend: '", fallback,
                                                     "' is not a configured backend (one of ",
                                                     absl::StrJoin(names, ", "), ")"));
    }
  }
  std::unique_ptr<ReasonerServer> server(new ReasonerServer(options));
  if (!server->options_.reasoner.log) server->options_.reasoner.log = LogCoreLine;
  common::ServerRunner::Options runner_options = options.server;
  if (runner_options.service_name.empty()) runner_options.service_name = "reasoner";
  IBGR_ASSIGN_OR_RETURN(server->runner_,
                        common::ServerRunner::BuildAndStart(runner_options, {&server->service_},
                                                            {kReasonerServiceName}));
  IBGR_RETURN_IF_ERROR(server->CreateMetrics());

  absl::StatusOr<std::unique_ptr<Reasoner>> reasoner = Reasoner::Create(server->options_.reasoner);
  if (!reasoner.ok()) {
    common::LogError("reasoner: cannot create the reasoner",
                     {{"error", reasoner.status().ToString()}});
    return reasoner.status();
  }
  server->reasoner_ = std::shared_ptr<const Reasoner>(std::move(*reasoner));
  server->service_.SetReasoner(server->reasoner_);
  const PromptLibrary& prompts = server->reasoner_->prompts();
  common::LogInfo(
      "reasoner: configured",
      {{"backends", absl::StrJoin(server->reasoner_->BackendNames(), ",")},
       {"default_backend", fallback.empty() ? std::string(kExtractiveBackend) : fallback},
       {"on_llm_failure", PolicyName(options.reasoner.on_llm_failure)},
       {"prompt_mcq", prompts.ForTask(Task::kMultipleChoice).version},
       {"prompt_fact", prompts.ForTask(Task::kFactVerification).version},
       {"prompt_open", prompts.ForTask(Task::kOpen).version},
       {"default_evidence_token_budget", options.reasoner.default_evidence_token_budget}});
  server->runner_->SetServing(true);
  return server;
}

absl::Status ReasonerServer::CreateMetrics() {
  auto& registry = runner_->metrics();
  std::vector<std::string> backends = {std::string(kExtractiveBackend)};
  for (const LlmBackendConfig& backend : options_.reasoner.backends) {
    backends.push_back(backend.name);
  }
  for (const std::string& backend : backends) {
    Metrics::Series& series = metrics_->by_backend[backend];
    IBGR_ASSIGN_OR_RETURN(series.answers_ok,
                          registry.GetCounter("ibgr_reasoner_answers_total",
                                              "Answers returned, by requested backend and whether "
                                              "the answer is degraded.",
                                              {{"backend", backend}, {"degraded", "false"}}));
    IBGR_ASSIGN_OR_RETURN(series.answers_degraded,
                          registry.GetCounter("ibgr_reasoner_answers_total",
                                              "Answers returned, by requested backend and whether "
                                              "the answer is degraded.",
                                              {{"backend", backend}, {"degraded", "true"}}));
    IBGR_ASSIGN_OR_RETURN(
        series.unparsed, registry.GetCounter("ibgr_reasoner_unparsed_answers_total",
                                             "LLM outputs that could not be parsed into an answer.",
                                             {{"backend", backend}}));
    if (backend != kExtractiveBackend) {
      IBGR_ASSIGN_OR_RETURN(
          series.llm_seconds,
          registry.GetHistogram("ibgr_reasoner_llm_seconds",
                                "Seconds spent calling the LLM backend per request (all samples "
                                "and retries, failed calls included).",
                                {{"backend", backend}}, LlmBuckets()));
    }
  }
  return absl::OkStatus();
}

void ReasonerServer::Record(absl::string_view requested_backend, const ReasonResult& result) const {
  const absl::string_view backend =
      requested_backend.empty() ? kExtractiveBackend : requested_backend;
  auto it = metrics_->by_backend.find(backend);
  if (it == metrics_->by_backend.end()) return;  // validation rejects unknown backends first
  const Metrics::Series& series = it->second;
  (result.degraded() ? series.answers_degraded : series.answers_ok)->Increment();
  if (result.parse_status != ParseStatus::kOk) series.unparsed->Increment();
  if (series.llm_seconds != nullptr) {
    double llm_ms = 0.0;
    for (const StageTiming& timing : result.timings) {
      if (timing.stage == "llm") llm_ms += timing.duration_ms;
    }
    series.llm_seconds->Observe(llm_ms / 1000.0);
  }
}

void ReasonerServer::WaitForTermination() {
  runner_->WaitForTermination();
  Shutdown();
}

void ReasonerServer::Shutdown() {
  if (runner_ != nullptr) runner_->Shutdown();
}

}  // namespace ibgraphrag::reasoner
