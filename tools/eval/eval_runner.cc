#include "tools/eval/eval_runner.h"

#include <algorithm>
#include <atomic>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/parallel_for.h"

namespace ibgraphrag::eval {
namespace {

std::string OnOff(const std::optional<bool>& value) {
  if (!value.has_value()) return "default";
  return *value ? "on" : "off";
}

std::string FormatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--";
  const int64_t s = static_cast<int64_t>(std::llround(seconds));
  if (s >= 3600) return absl::StrFormat("%dh%02dm", s / 3600, (s % 3600) / 60);
  if (s >= 60) return absl::StrFormat("%dm%02ds", s / 60, s % 60);
  return absl::StrFormat("%ds", s);
}

}  // namespace

std::string PipelineConfig::Label() const {
  std::string label = absl::StrCat("msca=", OnOff(msca), " ibrp=", OnOff(ibrp),
                                   " top_k=", top_k ? absl::StrCat(*top_k) : "default");
  if (lambda) absl::StrAppend(&label, " lambda=", *lambda);
  if (tau) absl::StrAppend(&label, " tau=", *tau);
  if (align_top_k) absl::StrAppend(&label, " align_top_k=", *align_top_k);
  if (max_hops) absl::StrAppend(&label, " max_hops=", *max_hops);
  if (!backend.empty()) absl::StrAppend(&label, " backend=", backend);
  if (!scorer.empty()) absl::StrAppend(&label, " scorer=", scorer);
  if (intent) absl::StrAppend(&label, " intent=", OnOff(intent));
  if (kg_rag_minimum_similarity) {
    absl::StrAppend(&label, " kg_rag_min_sim=", *kg_rag_minimum_similarity);
  }
  if (!kg_rank_reranker.empty()) absl::StrAppend(&label, " kg_rank_reranker=", kg_rank_reranker);
  if (!illama_reranker.empty()) absl::StrAppend(&label, " illama_reranker=", illama_reranker);
  if (!mode.empty()) label = absl::StrCat("mode=", mode, " ", label);
  return label;
}

void PipelineConfig::ApplyTo(v1::PipelineOptions* options) const {
  if (top_k) options->set_top_k(*top_k);
  if (msca) options->set_msca_enabled(*msca);
  if (ibrp) options->set_ibrp_enabled(*ibrp);
  if (lambda) options->set_lambda(*lambda);
  if (tau) options->set_tau(*tau);
  if (align_top_k) options->set_align_top_k(*align_top_k);
  if (max_hops) options->set_max_hops(*max_hops);
  if (!backend.empty()) options->set_reasoner_backend(backend);
  if (scorer == "residual") options->set_scorer_variant(v1::SCORER_VARIANT_RESIDUAL);
  if (scorer == "plain") options->set_scorer_variant(v1::SCORER_VARIANT_PLAIN);
  if (!mode.empty()) options->set_mode(mode);
  if (intent) options->set_intent_enabled(*intent);
  if (kg_rag_minimum_similarity) {
    options->set_kg_rag_minimum_similarity(*kg_rag_minimum_similarity);
  }
  if (!kg_rank_reranker.empty()) options->set_kg_rank_reranker(kg_rank_reranker);
  if (!illama_reranker.empty()) options->set_illama_reranker(illama_reranker);
}

std::vector<PipelineConfig> AblationGrid(const PipelineConfig& base,
                                         const std::vector<bool>& msca_values,
                                         const std::vector<bool>& ibrp_values,
                                         const std::vector<uint32_t>& top_k_values) {
  std::vector<PipelineConfig> grid;
  for (bool msca : msca_values) {
    for (bool ibrp : ibrp_values) {
      for (uint32_t top_k : top_k_values) {
        PipelineConfig config = base;
        config.msca = msca;
        config.ibrp = ibrp;
        config.top_k = top_k;
        grid.push_back(config);
      }
    }
  }
  return grid;
}

v1::AnswerRequest BuildRequest(const QaItem& item, const PipelineConfig& pipeline) {
  v1::AnswerRequest request;
  request.set_question(item.question);
  for (const std::string& option : item.options) request.add_options(option);
  request.set_task(item.task);
  pipeline.ApplyTo(request.mutable_pipeline());
  return request;
}

void AddApiKey(grpc::ClientContext* context, const std::string& api_key) {
  if (!api_key.empty()) context->AddMetadata("authorization", absl::StrCat("Bearer ", api_key));
}

absl::StatusOr<std::vector<ItemOutcome>> RunItems(v1::GatewayService::StubInterface* stub,
                                                  const std::vector<QaItem>& items,
                                                  const RunOptions& options) {
  if (stub == nullptr) return absl::InvalidArgumentError("stub: null");
  if (options.concurrency < 1 || options.concurrency > kMaxConcurrency) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--concurrency: must be in [1, ", kMaxConcurrency, "], got ", options.concurrency));
  }
  if (options.deadline <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--deadline_ms: must be > 0");
  }
  std::vector<ItemOutcome> outcomes(items.size());
  std::vector<char> sent(items.size(), 0);
  std::atomic<bool> abandon{false};
  std::atomic<int> ok_calls{0};
  std::atomic<int> failed_calls{0};
  absl::Mutex progress_mu;
  RunProgress progress;
  progress.total = items.size();
  const absl::Time start = absl::Now();

  // Once abandoned, the remaining items are skipped (left unsent).
  auto send_item = [&](size_t i) {
    if (abandon.load()) return;
    sent[i] = 1;
    const v1::AnswerRequest request = BuildRequest(items[i], options.pipeline);
    v1::AnswerResponse response;
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + options.deadline));
    AddApiKey(&context, options.api_key);
    const absl::Time call_start = absl::Now();
    const grpc::Status status = stub->Answer(&context, request, &response);
    const double latency_ms = absl::ToDoubleMilliseconds(absl::Now() - call_start);
    outcomes[i] = status.ok() ? ScoreAnswer(items[i], response, latency_ms)
                              : ErrorOutcome(static_cast<absl::StatusCode>(status.error_code()),
                                             status.error_message(), latency_ms);
    if (status.ok()) {
      ok_calls.fetch_add(1);
    } else if (failed_calls.fetch_add(1) + 1 >= options.fail_fast_after &&
               options.fail_fast_after > 0 && ok_calls.load() == 0) {
      abandon.store(true);
    }
    absl::MutexLock lock(&progress_mu);
    ++progress.done;
    if (!status.ok()) ++progress.errors;
    progress.elapsed = absl::Now() - start;
    if (options.on_progress) options.on_progress(progress);
  };
  common::ParallelFor(items.size(), options.concurrency, send_item);
  for (size_t i = 0; i < items.size(); ++i) {
    if (!sent[i]) {
      outcomes[i] = ErrorOutcome(
          absl::StatusCode::kCancelled,
          absl::StrCat("not sent: the first ", options.fail_fast_after, " calls all failed"), 0);
    }
  }
  return outcomes;
}

std::string FormatProgress(const RunProgress& progress, int width) {
  const double fraction =
      progress.total == 0 ? 1.0 : static_cast<double>(progress.done) / progress.total;
  const int filled = static_cast<int>(fraction * width);
  std::string bar(width, ' ');
  for (int i = 0; i < filled && i < width; ++i) bar[i] = '=';
  if (filled < width) bar[filled] = '>';
  const double seconds = absl::ToDoubleSeconds(progress.elapsed);
  const double rate = seconds > 0 ? progress.done / seconds : 0;
  const double eta = rate > 0 ? (progress.total - progress.done) / rate : -1;
  return absl::StrFormat("[%s] %*d/%d %5.1f%% %6.1f q/s ETA %s errors %d", bar,
                         static_cast<int>(absl::StrCat(progress.total).size()), progress.done,
                         progress.total, 100.0 * fraction, rate, FormatDuration(eta),
                         progress.errors);
}

}  // namespace ibgraphrag::eval
