#include "services/alignment/alignment_server.h"

#include <omp.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "prometheus/gauge.h"

namespace ibgraphrag::alignment {

struct AlignmentServer::Gauges {
  prometheus::Gauge* entries = nullptr;
  prometheus::Gauge* index_rows = nullptr;
  prometheus::Gauge* bundle_version = nullptr;
  prometheus::Gauge* load_seconds = nullptr;
};

AlignmentServer::AlignmentServer(const Options& options)
    : options_(options), service_(&holder_), gauges_(std::make_unique<Gauges>()) {}

AlignmentServer::~AlignmentServer() { Shutdown(); }

absl::StatusOr<std::unique_ptr<AlignmentServer>> AlignmentServer::BuildAndStart(
    const Options& options) {
  if (options.bundle_dir.empty() && options.base_path.empty()) {
    return absl::InvalidArgumentError(
        "base_path: required (artifact base holding alignment/<version>/), or give bundle_dir");
  }
  if (options.faiss_omp_threads < 1 || options.faiss_omp_threads > 256) {
    return absl::InvalidArgumentError("faiss_omp_threads: outside 1..256");
  }
  IBGR_RETURN_IF_ERROR(ValidateMscaOptions(options.aligner.defaults));
  std::unique_ptr<AlignmentServer> server(new AlignmentServer(options));
  IBGR_ASSIGN_OR_RETURN(std::unique_ptr<TextEncoder> encoder, CreateTextEncoder(options.encoder));
  server->encoder_ = std::move(encoder);
  if (options.llm.has_value()) {
    IBGR_ASSIGN_OR_RETURN(std::unique_ptr<reasoner::LlmClient> llm,
                          reasoner::LlmClient::Create(*options.llm));
    server->llm_ = std::move(llm);
  }
  omp_set_num_threads(options.faiss_omp_threads);
  common::ServerRunner::Options runner_options = options.server;
  if (runner_options.service_name.empty()) runner_options.service_name = "alignment";
  IBGR_ASSIGN_OR_RETURN(server->runner_,
                        common::ServerRunner::BuildAndStart(runner_options, {&server->service_},
                                                            {kAlignmentServiceName}));
  auto& metrics = server->runner_->metrics();
  Gauges& g = *server->gauges_;
  IBGR_ASSIGN_OR_RETURN(g.entries, metrics.GetGauge("ibgr_alignment_lexicon_entries",
                                                    "Entities in the served lexicon."));
  IBGR_ASSIGN_OR_RETURN(g.index_rows, metrics.GetGauge("ibgr_alignment_index_rows",
                                                       "Names in the served FAISS index."));
  IBGR_ASSIGN_OR_RETURN(g.bundle_version,
                        metrics.GetGauge("ibgr_alignment_bundle_version",
                                         "Version of the served bundle (0 = none)."));
  IBGR_ASSIGN_OR_RETURN(
      g.load_seconds,
      metrics.GetGauge("ibgr_alignment_load_seconds", "Seconds the served bundle took to load."));
  absl::StatusOr<bool> loaded = server->ReloadIfNewer();
  if (!loaded.ok()) {
    server->SetLoadStatus(loaded.status());
    common::LogError("alignment: no bundle served; health stays NOT_SERVING",
                     {{"error", loaded.status().ToString()}});
  }
  if (options.watch_interval > absl::ZeroDuration() && options.bundle_dir.empty() &&
      !options.pinned_version.has_value()) {
    server->watcher_ = std::thread([s = server.get()] { s->WatchLoop(); });
  }
  return server;
}

absl::Status AlignmentServer::LoadAndServe(const std::string& dir) {
  const absl::Time start = absl::Now();
  IBGR_ASSIGN_OR_RETURN(std::shared_ptr<const AlignmentBundle> bundle,
                        LoadAlignmentBundle(dir, options_.index));
  IBGR_ASSIGN_OR_RETURN(std::unique_ptr<Aligner> aligner,
                        Aligner::Create(bundle, encoder_, llm_, options_.aligner));
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  holder_.Swap(std::move(aligner));
  serving_dir_ = dir;
  SetLoadStatus(absl::OkStatus());
  gauges_->entries->Set(static_cast<double>(bundle->manifest.entries));
  gauges_->index_rows->Set(static_cast<double>(bundle->manifest.index_rows));
  gauges_->bundle_version->Set(static_cast<double>(bundle->manifest.version));
  gauges_->load_seconds->Set(seconds);
  common::LogInfo("alignment: serving bundle", {{"bundle_dir", dir},
                                                {"encoder_id", bundle->manifest.encoder_id},
                                                {"entries", bundle->manifest.entries},
                                                {"index_rows", bundle->manifest.index_rows},
                                                {"index_kind", bundle->manifest.index_kind},
                                                {"llm", llm_ != nullptr},
                                                {"load_seconds", seconds}});
  runner_->SetServing(true);
  return absl::OkStatus();
}

absl::StatusOr<bool> AlignmentServer::ReloadIfNewer() {
  std::string dir = options_.bundle_dir;
  if (dir.empty()) {
    IBGR_ASSIGN_OR_RETURN(dir, ResolveBundleDir(options_.base_path, options_.pinned_version));
  }
  if (dir == serving_dir_) return false;
  IBGR_RETURN_IF_ERROR(LoadAndServe(dir));
  return true;
}

void AlignmentServer::SetLoadStatus(absl::Status status) {
  absl::MutexLock lock(&status_mu_);
  load_status_ = std::move(status);
}

void AlignmentServer::WatchLoop() {
  while (!stop_watch_.WaitForNotificationWithTimeout(options_.watch_interval)) {
    absl::StatusOr<bool> swapped = ReloadIfNewer();
    if (!swapped.ok() && swapped.status() != load_status()) {
      SetLoadStatus(swapped.status());
      common::LogWarning("alignment: bundle watch failed; still serving the current one",
                         {{"error", swapped.status().ToString()}});
    }
  }
}

void AlignmentServer::WaitForTermination() {
  runner_->WaitForTermination();
  Shutdown();
}

void AlignmentServer::Shutdown() {
  if (!stop_watch_.HasBeenNotified()) stop_watch_.Notify();
  if (watcher_.joinable()) watcher_.join();
  if (runner_ != nullptr) runner_->Shutdown();
}

}  // namespace ibgraphrag::alignment
