#include "services/alignment/alignment_server.h"

#include <omp.h>

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "prometheus/gauge.h"
#include "services/alignment/trained_encoder.h"

namespace ibgraphrag::alignment {

namespace {

// The LLM client's attempt lines ("llm backend=... attempt=1/3 result=..."): failed attempts at
// warning level, the rest at debug level.
void LogLlmAttempt(absl::string_view line) {
  const bool failed = !absl::StrContains(line, " result=OK");
  common::Log(failed ? common::LogLevel::kWarning : common::LogLevel::kDebug, "alignment: llm",
              {{"detail", line}});
}

}  // namespace

struct AlignmentServer::Gauges {
  prometheus::Gauge* entries = nullptr;
  prometheus::Gauge* index_rows = nullptr;
  prometheus::Gauge* bundle_version = nullptr;
  prometheus::Gauge* load_seconds = nullptr;
};

AlignmentServer::AlignmentServer(const Options& options)
    : options_(options), gauges_(std::make_unique<Gauges>()) {
  common::ServableManager<const Aligner>::Options manager;
  manager.artifacts = BundleArtifacts(options.base_path).options();
  manager.pinned_version = options.pinned_version;
  manager.fixed_dir = options.bundle_dir;
  manager.watch_interval = options.watch_interval;
  manager.log_name = "alignment";
  bundles_ = std::make_unique<common::ServableManager<const Aligner>>(
      std::move(manager), [this](const std::string& dir, int64_t) { return Load(dir); },
      [this](const std::shared_ptr<const Aligner>& aligner, int64_t) { OnSwap(*aligner); });
  service_ = std::make_unique<AlignmentServiceImpl>(&bundles_->holder());
}

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
  if (!EncoderComesFromManifest(options.encoder)) {
    IBGR_ASSIGN_OR_RETURN(std::unique_ptr<TextEncoder> encoder, CreateTextEncoder(options.encoder));
    server->encoder_ = std::move(encoder);
  }
  if (options.llm.has_value()) {
    IBGR_ASSIGN_OR_RETURN(std::unique_ptr<common::OpenAiClient> llm,
                          common::OpenAiClient::Create(*options.llm, LogLlmAttempt));
    server->llm_ = std::move(llm);
  }
  // OpenMP's thread count is per thread: this covers the starting thread, and every index the
  // server loads sets it on the request threads that search it.
  omp_set_num_threads(options.faiss_omp_threads);
  common::ServerRunner::Options runner_options = options.server;
  if (runner_options.service_name.empty()) runner_options.service_name = "alignment";
  IBGR_ASSIGN_OR_RETURN(
      server->runner_, common::ServerRunner::BuildAndStart(runner_options, {server->service_.get()},
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
  if (options.http_port >= 0) {
    IBGR_ASSIGN_OR_RETURN(
        server->http_,
        common::HttpGateway::Start(common::HttpGateway::ForServer(runner_options, options.http_port,
                                                                  kAlignmentServiceName),
                                   server->runner_->InProcessChannel()));
  }
  absl::StatusOr<bool> loaded = server->ReloadIfNewer();
  if (!loaded.ok()) {
    common::LogError("alignment: no bundle served; health stays NOT_SERVING",
                     {{"error", loaded.status().ToString()}});
  }
  // The watcher also retries a bundle that failed to load, so fixing it brings SERVING.
  server->bundles_->StartWatching();
  return server;
}

CandidateIndexOptions AlignmentServer::IndexOptions() const {
  CandidateIndexOptions index = options_.index;
  if (index.search_omp_threads == 0) index.search_omp_threads = options_.faiss_omp_threads;
  return index;
}

absl::StatusOr<std::shared_ptr<const Aligner>> AlignmentServer::Load(const std::string& dir) {
  const absl::Time start = absl::Now();
  IBGR_ASSIGN_OR_RETURN(std::shared_ptr<const AlignmentBundle> bundle,
                        LoadAlignmentBundle(dir, IndexOptions()));
  IBGR_ASSIGN_OR_RETURN(std::shared_ptr<const TextEncoder> encoder, EncoderFor(*bundle));
  IBGR_ASSIGN_OR_RETURN(std::unique_ptr<Aligner> aligner,
                        Aligner::Create(bundle, std::move(encoder), llm_, options_.aligner));
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  gauges_->load_seconds->Set(seconds);
  if (bundle->manifest.file_sha256.empty()) {
    common::LogWarning(
        "alignment: bundle has no file checksums (built before they existed), "
        "served unchecked; rebuild it with `ibgr align build`",
        {{"bundle_dir", dir}});
  }
  const ScoreCalibration& cal = bundle->manifest.calibration;
  if (cal.method == "null-z-v1" &&
      cal.relatedness_full_z != ScoreCalibration().relatedness_full_z) {
    common::LogWarning(
        "alignment: bundle's R scale predates the constants fitted with the default tau "
        "(docs/alignment.md \"Constants fitted on validation\"); rebuild it with "
        "`ibgr align build`",
        {{"bundle_dir", dir},
         {"relatedness_full_z", cal.relatedness_full_z},
         {"expected", ScoreCalibration().relatedness_full_z}});
  }
  common::LogInfo("alignment: serving bundle", {{"bundle_dir", dir},
                                                {"encoder_id", bundle->manifest.encoder_id},
                                                {"entries", bundle->manifest.entries},
                                                {"index_rows", bundle->manifest.index_rows},
                                                {"index_kind", bundle->manifest.index_kind},
                                                {"llm", llm_ != nullptr},
                                                {"load_seconds", seconds}});
  return std::shared_ptr<const Aligner>(std::move(aligner));
}

absl::StatusOr<std::shared_ptr<const TextEncoder>> AlignmentServer::EncoderFor(
    const AlignmentBundle& bundle) {
  if (encoder_ != nullptr) return encoder_;  // configured; Aligner::Create checks the id
  absl::MutexLock lock(&bundle_encoder_mu_);
  const std::string& id = bundle.manifest.encoder_id;
  if (bundle_encoder_ != nullptr && bundle_encoder_->id() == id) return bundle_encoder_;
  EncoderSpec spec = options_.encoder;
  if (spec.base_path.empty()) {
    spec.base_path =
        options_.base_path.empty() ? ArtifactBaseOfVersionDir(bundle.dir) : options_.base_path;
  }
  IBGR_ASSIGN_OR_RETURN(bundle_encoder_, EncoderForManifest(spec, id));
  return bundle_encoder_;
}

void AlignmentServer::OnSwap(const Aligner& aligner) {
  const BundleManifest& manifest = aligner.bundle().manifest;
  gauges_->entries->Set(static_cast<double>(manifest.entries));
  gauges_->index_rows->Set(static_cast<double>(manifest.index_rows));
  gauges_->bundle_version->Set(static_cast<double>(manifest.version));
  runner_->SetServing(true);
}

absl::StatusOr<bool> AlignmentServer::ReloadIfNewer() { return bundles_->ReloadIfNewer(); }

void AlignmentServer::WaitForTermination() {
  runner_->WaitForTermination();
  Shutdown();
}

void AlignmentServer::Shutdown() {
  if (bundles_ != nullptr) bundles_->StopWatching();
  // HTTP first: its requests in flight finish through the still-running gRPC server.
  if (http_ != nullptr) http_->Shutdown();
  if (runner_ != nullptr) runner_->Shutdown();
}

void ApplyAlignmentSetup(const AlignmentSetup& setup, AlignmentServer::Options* options) {
  options->encoder = setup.encoder;
  options->encoder.base_path = options->base_path;  // where trained encoders live
  options->aligner = setup.aligner;
  options->llm = setup.llm;
  options->index = setup.index;
  if (setup.faiss_omp_threads != 0) options->faiss_omp_threads = setup.faiss_omp_threads;
  if (setup.bundle_version > 0 && !options->pinned_version.has_value()) {
    options->pinned_version = setup.bundle_version;
  }
}

}  // namespace ibgraphrag::alignment
