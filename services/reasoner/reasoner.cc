#include "services/reasoner/reasoner.h"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "services/reasoner/answer_parser.h"
#include "services/reasoner/prompt_builder.h"
#include "services/reasoner/self_consistency.h"
#include "services/reasoner/text_util.h"

namespace ibgraphrag::reasoner {
namespace {

double Milliseconds(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }

// The vote key of a parsed answer; empty when it abstains.
std::string VoteKey(Task task, const ParsedAnswer& parsed) {
  if (parsed.status != ParseStatus::kOk) return "";
  switch (task) {
    case Task::kFactVerification:
      return std::string(FactLabelName(parsed.fact_label));
    case Task::kOpen: {
      // A multi-answer list votes as a set: the same answers in another order agree.
      std::vector<std::string> keys;
      for (const std::string& answer : parsed.answers) keys.push_back(NormalizeText(answer));
      std::sort(keys.begin(), keys.end());
      return absl::StrJoin(keys, "; ");
    }
    case Task::kMultipleChoice:
    case Task::kUnspecified:
      break;
  }
  return OptionLetter(parsed.option_index);
}

// The caller's own prompt (a gateway mode's); it rendered every evidence triple it was given.
BuiltPrompt CallerBuiltPrompt(const ReasonRequest& request) {
  BuiltPrompt prompt;
  if (!request.caller_prompt.system.empty()) {
    prompt.messages.push_back({"system", request.caller_prompt.system});
  }
  prompt.messages.push_back({"user", request.caller_prompt.user});
  prompt.version = request.caller_prompt.version;
  for (size_t i = 0; i < request.evidence.size(); ++i) {
    prompt.evidence_used.push_back(static_cast<int>(i));
  }
  prompt.evidence_tokens = ApproxTokens(request.caller_prompt.user);
  return prompt;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Reasoner>> Reasoner::Create(ReasonerOptions options) {
  if (!options.log) options.log = LogToStderr;
  if (options.default_evidence_token_budget <= 0) {
    return absl::InvalidArgumentError("default_evidence_token_budget must be positive");
  }
  if (options.max_caller_prompt_tokens <= 0) {
    return absl::InvalidArgumentError("max_caller_prompt_tokens must be positive");
  }
  if (options.stop_sequences.size() > 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "stop_sequences has ", options.stop_sequences.size(), " entries; the limit is 4"));
  }
  IBGR_ASSIGN_OR_RETURN(PromptLibrary prompts, PromptLibrary::Load(options.prompts));
  std::map<std::string, std::unique_ptr<LlmClient>> clients;
  for (const LlmBackendConfig& config : options.backends) {
    if (clients.count(config.name) > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("backend name '", config.name, "' is configured twice"));
    }
    IBGR_ASSIGN_OR_RETURN(std::unique_ptr<LlmClient> client, CreateLlmClient(config, options.log));
    clients.emplace(config.name, std::move(client));
  }
  return std::unique_ptr<Reasoner>(
      new Reasoner(std::move(options), std::move(prompts), std::move(clients)));
}

Reasoner::Reasoner(ReasonerOptions options, PromptLibrary prompts,
                   std::map<std::string, std::unique_ptr<LlmClient>> clients)
    : options_(std::move(options)),
      prompts_(std::move(prompts)),
      clients_(std::move(clients)),
      backend_names_([this] {
        std::vector<std::string> names;
        for (const LlmBackendConfig& config : options_.backends) names.push_back(config.name);
        return names;
      }()) {}

std::vector<std::string> Reasoner::BackendNames() const { return backend_names_; }

void Reasoner::Log(absl::string_view line) const { options_.log(line); }

absl::StatusOr<ReasonResult> Reasoner::Reason(const ReasonRequest& request,
                                              absl::Time deadline) const {
  return Run(request, deadline, nullptr);
}

absl::StatusOr<ReasonResult> Reasoner::ReasonStream(const ReasonRequest& request,
                                                    absl::Time deadline,
                                                    const TokenCallback& on_token) const {
  return Run(request, deadline, on_token ? &on_token : nullptr);
}

ReasonResult Reasoner::RunExtractive(const ReasonRequest& request, Task task) const {
  const absl::Time start = absl::Now();
  ReasonResult result = ReasonExtractively(request, task, options_.extractive);
  result.raw_confidence = result.confidence;
  if (options_.calibration != nullptr) {
    ApplyCalibration(*options_.calibration, request, &result);
  } else {
    result.calibration = kUncalibrated;
  }
  // The one answer, as the LLM path lists it (the option's text or the label).
  if (result.answers.empty()) {
    if (result.option_index >= 0 &&
        result.option_index < static_cast<int>(request.options.size())) {
      result.answers.push_back(request.options[result.option_index]);
    } else if (result.fact_label != FactLabel::kUnspecified) {
      result.answers.emplace_back(FactLabelName(result.fact_label));
    }
  }
  result.timings.push_back({"extractive", Milliseconds(absl::Now() - start)});
  return result;
}

absl::Status Reasoner::CheckCallerPrompt(const CallerPrompt& prompt) const {
  if (prompt.version.empty()) return absl::OkStatus();
  if (!options_.accept_caller_prompts) {
    return absl::FailedPreconditionError(
        "caller_prompt: this reasoner does not accept caller prompts (accept_caller_prompts is "
        "false); leave caller_prompt unset");
  }
  const int tokens = ApproxTokens(prompt.system) + ApproxTokens(prompt.user);
  if (tokens > options_.max_caller_prompt_tokens) {
    return absl::InvalidArgumentError(absl::StrCat(
        "caller_prompt: about ", tokens, " tokens (system + user, bytes / 4); the limit is ",
        options_.max_caller_prompt_tokens, " (max_caller_prompt_tokens)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<ReasonResult> Reasoner::Run(const ReasonRequest& request, absl::Time deadline,
                                           const TokenCallback* on_token) const {
  const absl::Time start = absl::Now();
  IBGR_RETURN_IF_ERROR(ValidateRequest(request, options_.limits, backend_names_));
  IBGR_RETURN_IF_ERROR(CheckCallerPrompt(request.caller_prompt));
  const Task task = ResolveTask(request);
  if (options_.log_patient_text) {
    Log(absl::StrCat("reason request_id=", request.request_id, " question=", request.question));
  }
  absl::StatusOr<ReasonResult> result;
  if (request.backend.empty() || request.backend == kExtractiveBackend) {
    result = RunExtractive(request, task);
  } else {
    const LlmClient& client = *clients_.at(request.backend);
    const absl::Time llm_start = absl::Now();
    result = RunLlm(request, task, client, deadline, on_token);
    // Fall back only while the caller can still use the answer: a fallback that lands at the
    // deadline races the caller's own DEADLINE_EXCEEDED, so callers would see either at random.
    constexpr absl::Duration kMinFallbackBudget = absl::Milliseconds(50);
    if (!result.ok() && options_.on_llm_failure == LlmFailurePolicy::kFallBackToExtractive &&
        deadline - absl::Now() >= kMinFallbackBudget) {
      const absl::Status error = result.status();
      const double llm_ms = Milliseconds(absl::Now() - llm_start);
      result = RunExtractive(request, task);
      // The failed attempt's time stays visible next to the fallback's.
      result->timings.insert(result->timings.begin(), {"llm", llm_ms});
      result->degradations.push_back(
          {"llm",
           absl::StrCat("backend '", request.backend, "' ", absl::StatusCodeToString(error.code()),
                        ": ", error.message(), "; answered by the extractive backend")});
    }
  }
  if (!result.ok()) {
    Log(absl::StrCat("reason request_id=", request.request_id, " task=", TaskName(task),
                     " backend=", request.backend,
                     " result=", absl::StatusCodeToString(result.status().code()),
                     " ms=", absl::ToInt64Milliseconds(absl::Now() - start)));
    return result;
  }
  Log(absl::StrCat("reason request_id=", request.request_id, " task=", TaskName(task),
                   " backend=", result->backend, " used_llm=", result->used_llm, " degraded=",
                   result->degraded(), " parsed=", result->parse_status == ParseStatus::kOk,
                   " insufficient_evidence=", result->insufficient_evidence,
                   " evidence=", request.evidence.size(),
                   " ms=", absl::ToInt64Milliseconds(absl::Now() - start)));
  return result;
}

absl::StatusOr<ReasonResult> Reasoner::RunLlm(const ReasonRequest& request, Task task,
                                              const LlmClient& client, absl::Time deadline,
                                              const TokenCallback* on_token) const {
  ReasonResult result;
  result.backend = request.backend;
  result.used_llm = true;

  absl::Time stage_start = absl::Now();
  const PromptTemplate& prompt_template = prompts_.ForTask(task);
  const int budget = request.evidence_token_budget > 0 ? request.evidence_token_budget
                                                       : options_.default_evidence_token_budget;
  const BuiltPrompt prompt = request.caller_prompt.version.empty()
                                 ? BuildPrompt(prompt_template, request, budget)
                                 : CallerBuiltPrompt(request);
  result.prompt_version = prompt.version;
  result.evidence_used = prompt.evidence_used;
  result.evidence_dropped = prompt.evidence_dropped;
  result.timings.push_back({"prompt_build", Milliseconds(absl::Now() - stage_start)});

  // Samples run in parallel; the lowest-temperature one runs on this thread so the token
  // callback is only ever called from the caller's thread.
  stage_start = absl::Now();
  const std::vector<double> temperatures = SampleTemperatures(request.self_consistency);
  const int samples = static_cast<int>(temperatures.size());
  const int streamed = static_cast<int>(std::min_element(temperatures.begin(), temperatures.end()) -
                                        temperatures.begin());
  std::vector<absl::StatusOr<ChatResponse>> responses(
      samples, absl::StatusOr<ChatResponse>(absl::UnknownError("sample not run")));
  auto run_sample = [&](int i) {
    ChatRequest chat;
    chat.messages = prompt.messages;
    chat.temperature = temperatures[i];
    chat.seed = options_.seed + i;
    chat.stop = options_.stop_sequences;
    static const TokenCallback kNoTokens;
    responses[i] = client.Complete(chat, deadline,
                                   (i == streamed && on_token != nullptr) ? *on_token : kNoTokens);
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < samples; ++i) {
    if (i != streamed) threads.emplace_back(run_sample, i);
  }
  run_sample(streamed);
  for (std::thread& thread : threads) thread.join();
  result.timings.push_back({"llm", Milliseconds(absl::Now() - stage_start)});

  stage_start = absl::Now();
  std::vector<int> answered;  // samples with output, in sample order
  std::vector<ParsedAnswer> parsed(samples);
  std::vector<SampleVote> votes;
  int failed = 0;
  for (int i = 0; i < samples; ++i) {
    if (!responses[i].ok()) {
      ++failed;
      continue;
    }
    parsed[i] = ParseAnswer(task, responses[i]->content, request.options);
    answered.push_back(i);
    votes.push_back({temperatures[i], VoteKey(task, parsed[i])});
    if (options_.log_patient_text) {
      Log(absl::StrCat("reason request_id=", request.request_id, " sample=", i,
                       " output=", responses[i]->content));
    }
  }
  if (answered.empty()) {
    const absl::Status& first = responses[streamed].status();
    if (samples == 1) return first;
    return absl::Status(first.code(),
                        absl::StrCat("all ", samples,
                                     " self-consistency samples failed; first: ", first.message()));
  }
  if (failed > 0) {
    absl::Status first_failure;
    for (const auto& response : responses) {
      if (!response.ok()) {
        first_failure = response.status();
        break;
      }
    }
    result.degradations.push_back(
        {"llm", absl::StrCat(failed, " of ", samples, " self-consistency samples failed (first: ",
                             absl::StatusCodeToString(first_failure.code()), ": ",
                             first_failure.message(), "); voted over the rest")});
  }
  for (const SampleVote& vote : votes) result.votes.push_back({vote.temperature, vote.key});
  if (samples == 1) result.votes.clear();  // no vote took place

  const VoteOutcome outcome = MajorityVote(votes);
  result.insufficient_evidence = request.evidence.empty();
  if (outcome.winner < 0) {
    // Every output was unparseable: return the greedy sample's text as is, choosing nothing.
    const int shown = answered.front();
    result.parse_status = ParseStatus::kUnparseable;
    result.raw_output = responses[shown]->content;
    result.answer = result.raw_output;
    result.rationale =
        absl::StrCat("The model's output could not be parsed: ", parsed[shown].error, ".");
    result.agreement = 0.0;
    result.confidence = 0.0;
    result.low_confidence = true;
    if (task == Task::kFactVerification) result.fact_label = FactLabel::kUnspecified;
  } else {
    const int winner = answered[outcome.winner];
    const ParsedAnswer& answer = parsed[winner];
    result.parse_status = ParseStatus::kOk;
    result.answers = answer.answers;
    result.raw_output = responses[winner]->content;
    result.rationale = answer.explanation;
    result.agreement = outcome.agreement;
    result.confidence = outcome.agreement;
    result.low_confidence = outcome.agreement < 0.5;
    switch (task) {
      case Task::kFactVerification:
        result.fact_label = answer.fact_label;
        result.answer = answer.answer;
        break;
      case Task::kOpen:
        result.answer = answer.answer;
        break;
      case Task::kMultipleChoice:
      case Task::kUnspecified:
        result.option_index = answer.option_index;
        result.option_letter = OptionLetter(answer.option_index);
        result.answer = absl::StrCat(result.option_letter, ") ", answer.answer);
        break;
    }
  }
  result.timings.push_back({"parse", Milliseconds(absl::Now() - stage_start)});
  return result;
}

}  // namespace ibgraphrag::reasoner
