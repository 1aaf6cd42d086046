// alignment: serves an alignment bundle (`<base>/alignment/<version>/`) over gRPC (MSCA entity
// alignment, usable without the rest of the suite).
//
//   alignment --base=artifacts [--pin_version=N] [--port=50053] [--metrics_port=9093]
//             [--config=alignment.textproto] [--host=0.0.0.0] [--watch_seconds=30]
//             [--http_port=8083]
//
// --config is an ibgraphrag.config.v1.AlignmentConfig in protobuf text format (encoder, MSCA
// defaults, optional LLM, TLS, drain, logging); IBGR_* / IBGR_ALIGNMENT_* environment variables
// override its server part; flags given explicitly override both.
#include <cstdio>
#include <cstdlib>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "common/config.h"
#include "common/logging.h"
#include "common/pin_version_flag.h"
#include "common/server_flags.h"
#include "common/server_runner.h"
#include "common/status_macros.h"
#include "ibgraphrag/config/v1/alignment_config.pb.h"
#include "services/alignment/alignment_server.h"
#include "services/alignment/llm_selection.h"

ABSL_FLAG(std::string, config, "", "AlignmentConfig text proto (encoder, defaults, LLM, TLS)");
ABSL_FLAG(std::string, base, "",
          "artifact base directory holding alignment/<version>/ "
          "(default: config base_path, else \"artifacts\")");
ABSL_FLAG(std::string, bundle_dir, "", "serve exactly this bundle directory");
ABSL_FLAG(int, watch_seconds, 0, "poll for newer bundle versions this often (0 = never)");
ABSL_FLAG(int, http_port, -1,
          "HTTP/JSON port (POST /v1/align, GET /healthz, /readyz) on the gRPC port's host and "
          "TLS; -1 = off, 0 = the OS picks");

namespace {

namespace cfg = ::ibgraphrag::config::v1;
using ibgraphrag::alignment::AlignmentServer;

absl::StatusOr<ibgraphrag::alignment::EncoderSpec> EncoderFromConfig(const cfg::EncoderConfig& c) {
  ibgraphrag::alignment::EncoderSpec spec;
  switch (c.kind()) {
    case cfg::ENCODER_KIND_UNSPECIFIED:
      if (c.dim() == 0) {  // the encoder the bundle names, opened by its id
        spec.kind = "bundle";
        break;
      }
      [[fallthrough]];
    case cfg::ENCODER_KIND_HASH_NGRAM:
      spec.kind = "hash-ngram";
      if (c.dim() != 0) spec.hash.dim = c.dim();
      break;
    case cfg::ENCODER_KIND_TRAINED:
      if (c.encoder_version() < 0) {
        return absl::InvalidArgumentError("encoder.encoder_version: must be >= 0");
      }
      spec.kind = "trained";
      spec.trained.dir = c.encoder_dir();
      spec.trained.version = c.encoder_version();
      break;
    case cfg::ENCODER_KIND_WORD_VECTORS:
      spec.kind = "word-vectors";
      spec.word_vectors.path = c.vectors_path();
      spec.word_vectors.max_words = c.max_words();
      spec.word_vectors.format = c.vectors_format() == cfg::WORD_VECTOR_FORMAT_WORD2VEC_BINARY
                                     ? ibgraphrag::alignment::WordVectorFormat::kWord2VecBinary
                                     : (c.vectors_format() == cfg::WORD_VECTOR_FORMAT_TEXT
                                            ? ibgraphrag::alignment::WordVectorFormat::kText
                                            : ibgraphrag::alignment::WordVectorFormat::kAuto);
      break;
    case cfg::ENCODER_KIND_OPENAI_EMBEDDINGS:
      spec.kind = "openai";
      spec.remote.base_url = c.base_url();
      spec.remote.model = c.model();
      spec.remote.dim = c.dim();
      spec.remote.api_key_env = c.api_key_env();
      if (c.has_timeout_seconds()) {
        if (c.timeout_seconds() <= 0) {
          return absl::InvalidArgumentError("encoder.timeout_seconds: must be > 0");
        }
        spec.remote.timeout = absl::Seconds(c.timeout_seconds());
      }
      if (c.batch_size() != 0) spec.remote.batch_size = c.batch_size();
      if (c.has_connect_timeout_seconds()) {
        spec.remote.connect_timeout = absl::Seconds(c.connect_timeout_seconds());
      }
      if (c.has_max_retries()) spec.remote.max_retries = c.max_retries();
      break;
    default:
      return absl::InvalidArgumentError("encoder.kind: unknown value");
  }
  return spec;
}

// The LLM selection step's bounds (alignment_config.proto LlmSelectionConfig); unset fields keep
// the AlignerOptions defaults.
absl::Status ApplyLlmSelectionConfig(const cfg::LlmSelectionConfig& c,
                                     ibgraphrag::alignment::AlignerOptions* options) {
  namespace al = ::ibgraphrag::alignment;
  auto in_range = [](int value, int limit, const char* field) {
    return value >= 1 && value <= limit
               ? absl::OkStatus()
               : absl::InvalidArgumentError(
                     absl::StrCat("llm_selection.", field, ": ", value, " outside 1..", limit));
  };
  if (c.has_max_mentions()) {
    IBGR_RETURN_IF_ERROR(in_range(c.max_mentions(), al::kMaxLlmMentionsLimit, "max_mentions"));
    options->max_llm_mentions = c.max_mentions();
  }
  if (c.has_max_candidates()) {
    IBGR_RETURN_IF_ERROR(
        in_range(c.max_candidates(), al::kMaxLlmCandidatesLimit, "max_candidates"));
    options->max_llm_candidates = c.max_candidates();
  }
  if (c.has_parallelism()) {
    IBGR_RETURN_IF_ERROR(in_range(c.parallelism(), al::kMaxLlmParallelismLimit, "parallelism"));
    options->llm_parallelism = c.parallelism();
  }
  if (c.has_timeout_seconds()) {
    if (!(c.timeout_seconds() > 0 && c.timeout_seconds() <= 600)) {
      return absl::InvalidArgumentError("llm_selection.timeout_seconds: outside (0, 600]");
    }
    options->llm_timeout = absl::Seconds(c.timeout_seconds());
  }
  return absl::OkStatus();
}

absl::Status Run() {
  cfg::AlignmentConfig config;
  if (!absl::GetFlag(FLAGS_config).empty()) {
    auto loaded =
        ibgraphrag::common::LoadTextProtoConfig<cfg::AlignmentConfig>(absl::GetFlag(FLAGS_config));
    if (!loaded.ok()) return loaded.status();
    config = *std::move(loaded);
  }
  cfg::ServerConfig* server_config = config.mutable_server();
  if (auto s = ibgraphrag::common::ApplyServerFlagsAndEnv(server_config, "IBGR_ALIGNMENT_");
      !s.ok())
    return s;

  ibgraphrag::common::ServerRunner::Options defaults;
  defaults.service_name = "alignment";
  defaults.port = ibgraphrag::alignment::kDefaultAlignmentPort;
  defaults.metrics_port = ibgraphrag::alignment::kDefaultAlignmentMetricsPort;
  auto server_options = ibgraphrag::common::OptionsFromConfig(*server_config, defaults);
  if (!server_options.ok()) return server_options.status();

  AlignmentServer::Options options;
  options.server = *server_options;
  options.base_path = !absl::GetFlag(FLAGS_base).empty() ? absl::GetFlag(FLAGS_base)
                      : !config.base_path().empty()      ? config.base_path()
                                                         : "artifacts";
  auto pinned = ibgraphrag::common::PinnedVersionFromFlag();
  if (!pinned.ok()) return pinned.status();
  if (pinned->has_value()) {
    options.pinned_version = *pinned;
  } else if (config.bundle_version() > 0) {
    options.pinned_version = config.bundle_version();
  }
  options.bundle_dir = absl::GetFlag(FLAGS_bundle_dir);
  if (absl::GetFlag(FLAGS_watch_seconds) < 0) {
    return absl::InvalidArgumentError("--watch_seconds: must be >= 0");
  }
  options.watch_interval = absl::Seconds(absl::GetFlag(FLAGS_watch_seconds));
  if (absl::GetFlag(FLAGS_http_port) < -1 || absl::GetFlag(FLAGS_http_port) > 65535) {
    return absl::InvalidArgumentError("--http_port: must be -1 (off), 0 (pick) or 1..65535");
  }
  options.http_port = absl::GetFlag(FLAGS_http_port);
  auto encoder = EncoderFromConfig(config.encoder());
  if (!encoder.ok()) return encoder.status();
  options.encoder = *std::move(encoder);
  options.encoder.base_path = options.base_path;  // where trained encoders live
  const cfg::MscaDefaults& d = config.defaults();
  if (d.has_lambda()) options.aligner.defaults.lambda = d.lambda();
  if (d.has_tau()) options.aligner.defaults.tau = d.tau();
  if (d.has_top_k()) options.aligner.defaults.top_k = static_cast<int>(d.top_k());
  if (d.has_llm_choice_below()) {
    options.aligner.defaults.llm_choice_below = static_cast<int>(d.llm_choice_below());
  }
  if (config.has_llm() && !config.llm().base_url().empty()) {
    const cfg::LlmBackend& l = config.llm();
    ibgraphrag::common::OpenAiClientOptions llm;
    llm.name = l.name().empty() ? "alignment" : l.name();
    llm.base_url = l.base_url();
    llm.model = l.model();
    llm.api_key_env = l.api_key_env();
    llm.api_key_file = l.api_key_file();
    if (l.has_timeout_seconds()) llm.timeout = absl::Seconds(l.timeout_seconds());
    if (l.has_connect_timeout_seconds()) {
      llm.connect_timeout = absl::Seconds(l.connect_timeout_seconds());
    }
    if (l.has_max_retries()) llm.max_retries = l.max_retries();
    if (l.has_max_concurrency()) llm.max_concurrency = l.max_concurrency();
    if (l.has_max_tokens()) llm.max_tokens = l.max_tokens();
    options.llm = llm;
  }
  if (auto s = ApplyLlmSelectionConfig(config.llm_selection(), &options.aligner); !s.ok()) {
    return s;
  }
  if (config.index().hnsw_ef_search() != 0) {
    if (config.index().hnsw_ef_search() < 16 || config.index().hnsw_ef_search() > 4096) {
      return absl::InvalidArgumentError("index.hnsw_ef_search: outside 16..4096");
    }
    options.index.hnsw_ef_search = config.index().hnsw_ef_search();
  }
  if (config.index().omp_threads() != 0) options.faiss_omp_threads = config.index().omp_threads();

  // Signals arriving while the bundle loads must drain, not kill, the process.
  if (auto s = ibgraphrag::common::ServerRunner::InstallTerminationSignalHandlers(); !s.ok()) {
    return s;
  }
  auto server = AlignmentServer::BuildAndStart(options);
  if (!server.ok()) return server.status();
  ibgraphrag::common::LogInfo("alignment: ready", {{"port", (*server)->port()},
                                                   {"metrics_port", (*server)->metrics_port()},
                                                   {"http_port", (*server)->http_port()},
                                                   {"serving", (*server)->serving()}});
  (*server)->WaitForTermination();
  ibgraphrag::common::LogInfo("alignment: stopped");
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Serves an alignment bundle (mentions, FAISS candidates, MSCA) over gRPC.");
  ibgraphrag::common::UseServingMutexSettings();
  absl::ParseCommandLine(argc, argv);
  absl::Status status = Run();
  if (!status.ok()) {
    ibgraphrag::common::LogError("alignment: fatal", {{"error", status.ToString()}});
    return 1;
  }
  return 0;
}
