#include "services/gateway/gateway_service_impl.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/grpc_status.h"
#include "common/logging.h"
#include "common/proto_utf8.h"
#include "common/server_interceptor.h"
#include "common/status_macros.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/histogram.h"
#include "services/gateway/request_validation.h"

namespace ibgraphrag::gateway {
namespace pb = ibgraphrag::v1;
namespace {

std::string Metadata(const grpc::ServerContextBase& context, const char* key) {
  const auto& md = context.client_metadata();
  auto it = md.find(key);
  if (it == md.end()) return "";
  return std::string(it->second.data(), it->second.size());
}

}  // namespace

struct GatewayServiceImpl::Metrics {
  prometheus::Counter* answers_ok = nullptr;
  prometheus::Counter* answers_degraded = nullptr;
  prometheus::Family<prometheus::Counter>* degraded = nullptr;
  prometheus::Counter* auth_failures = nullptr;
  prometheus::Counter* rate_limited = nullptr;
  // One histogram per top-level stage the pipeline reports, made once (not per request).
  absl::flat_hash_map<std::string, prometheus::Histogram*> stage_seconds;
};

GatewayServiceImpl::GatewayServiceImpl() = default;

GatewayServiceImpl::~GatewayServiceImpl() = default;

grpc::Status GatewayServiceImpl::ParseRequest(const grpc::ServerContextBase& context,
                                              absl::string_view rpc, const grpc::ByteBuffer& bytes,
                                              google::protobuf::Message* request) {
  const absl::Status parsed = common::ParseRequestBytes(bytes, request);
  if (parsed.ok() || parsed.code() == absl::StatusCode::kInternal) {
    return common::ToGrpcStatus(parsed);
  }
  std::string caller = "anonymous";
  grpc::Status status;
  if (keys_ != nullptr) {
    absl::StatusOr<std::string> key_id = keys_->Authenticate(
        PresentedKey(Metadata(context, "authorization"), Metadata(context, "x-api-key")));
    if (!key_id.ok()) {
      metrics_->auth_failures->Increment();
      status =
          grpc::Status(grpc::StatusCode::UNAUTHENTICATED, std::string(key_id.status().message()));
    } else {
      caller = *key_id;
    }
  }
  // AnswerStream wraps the request: the field is named as the caller sees it.
  if (status.ok()) status = common::ToGrpcStatus(parsed);
  Audit(context, rpc, caller, status, pb::AnswerResponse(), 0.0);
  return status;
}

absl::StatusOr<std::unique_ptr<GatewayServiceImpl>> GatewayServiceImpl::Create(
    std::unique_ptr<AnswerPipeline> pipeline, std::unique_ptr<ApiKeyStore> keys,
    std::unique_ptr<RateLimiter> rate_limiter, common::MetricsRegistry* metrics) {
  std::unique_ptr<GatewayServiceImpl> service(new GatewayServiceImpl());
  service->pipeline_ = std::move(pipeline);
  service->keys_ = std::move(keys);
  service->rate_limiter_ = std::move(rate_limiter);
  auto m = std::make_unique<Metrics>();
  const char* answers_help = "Answers returned, by whether anything was degraded.";
  IBGR_ASSIGN_OR_RETURN(m->answers_ok, metrics->GetCounter("ibgr_gateway_answers_total",
                                                           answers_help, {{"degraded", "false"}}));
  IBGR_ASSIGN_OR_RETURN(
      m->answers_degraded,
      metrics->GetCounter("ibgr_gateway_answers_total", answers_help, {{"degraded", "true"}}));
  IBGR_ASSIGN_OR_RETURN(
      m->degraded,
      metrics->GetCounterFamily("ibgr_gateway_degraded_total",
                                "Degradations in returned answers, by component (retriever, "
                                "reasoner, llm, alignment_llm, ...)."));
  IBGR_ASSIGN_OR_RETURN(m->auth_failures,
                        metrics->GetCounter("ibgr_gateway_auth_failures_total",
                                            "Requests refused for a missing or invalid API key."));
  IBGR_ASSIGN_OR_RETURN(m->rate_limited,
                        metrics->GetCounter("ibgr_gateway_rate_limited_total",
                                            "Requests refused by the per-caller rate limit."));
  for (const char* stage : {"align", "retrieve", "reason", "total", "gateway_overhead"}) {
    IBGR_ASSIGN_OR_RETURN(
        m->stage_seconds[stage],
        metrics->GetHistogram(
            "ibgr_gateway_stage_seconds",
            "Wall time of each answer stage (align, retrieve, reason, total, "
            "gateway_overhead).",
            {{"stage", stage}},
            {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}));
  }
  service->metrics_ = std::move(m);
  return service;
}

grpc::Status GatewayServiceImpl::Admit(const grpc::ServerContextBase& context,
                                       const pb::AnswerRequest& request, std::string* caller) {
  *caller = "anonymous";
  if (keys_ != nullptr) {
    absl::StatusOr<std::string> key_id = keys_->Authenticate(
        PresentedKey(Metadata(context, "authorization"), Metadata(context, "x-api-key")));
    if (!key_id.ok()) {
      metrics_->auth_failures->Increment();
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                          std::string(key_id.status().message()));
    }
    *caller = *std::move(key_id);
  }
  if (rate_limiter_ != nullptr && !rate_limiter_->Allow(*caller, absl::Now())) {
    metrics_->rate_limited->Increment();
    return grpc::Status(
        grpc::StatusCode::RESOURCE_EXHAUSTED,
        absl::StrCat("rate limit exceeded for caller '", *caller, "'; retry later with backoff"));
  }
  absl::Status valid = ValidateAnswerRequest(request);
  if (!valid.ok()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, std::string(valid.message()));
  }
  return grpc::Status::OK;
}

void GatewayServiceImpl::Audit(const grpc::ServerContextBase& context, absl::string_view rpc,
                               const std::string& caller, const grpc::Status& status,
                               const pb::AnswerResponse& response, double latency_ms) const {
  std::vector<common::LogField> fields = {
      {"rpc", std::string(rpc)},
      {"caller", caller},
      {"request_id", common::RequestIdOf(context)},
      {"code", std::string(common::GrpcStatusCodeName(status.error_code()))},
      {"latency_ms", latency_ms}};
  if (status.ok()) {
    std::vector<std::string> timings;
    for (const pb::StageTiming& t : response.timings()) {
      if (t.stage().find('.') != std::string::npos) continue;  // top-level stages only
      timings.push_back(absl::StrCat(t.stage(), "=", absl::StrFormat("%.2f", t.duration_ms())));
      if (auto it = metrics_->stage_seconds.find(t.stage()); it != metrics_->stage_seconds.end()) {
        it->second->Observe(t.duration_ms() / 1e3);
      }
    }
    std::vector<std::string> degraded;
    for (const pb::Degradation& d : response.degraded()) {
      degraded.push_back(d.component());
      metrics_->degraded->Add({{"component", d.component()}}).Increment();
    }
    (degraded.empty() ? metrics_->answers_ok : metrics_->answers_degraded)->Increment();
    fields.push_back({"timings_ms", absl::StrJoin(timings, ",")});
    fields.push_back({"entities", response.entities_size()});
    fields.push_back({"evidence", response.evidence_size()});
    fields.push_back({"degraded", absl::StrJoin(degraded, ",")});
    fields.push_back({"backend", response.answer().backend()});
  }
  common::LogInfo("gateway: audit", fields);
}

grpc::ServerUnaryReactor* GatewayServiceImpl::Answer(grpc::CallbackServerContext* context,
                                                     const grpc::ByteBuffer* request,
                                                     grpc::ByteBuffer* response) {
  return common::RunBlockingUnary(context, [this, context, request, response] {
    return RunAnswer(*context, *request, response);
  });
}

grpc::Status GatewayServiceImpl::RunAnswer(const grpc::ServerContextBase& context,
                                           const grpc::ByteBuffer& bytes,
                                           grpc::ByteBuffer* response_bytes) {
  // One arena for the call: the response's evidence (parsed from the retriever, or built in
  // process) and the pipeline's scratch messages (common/arena_message.h) live and die together.
  google::protobuf::Arena arena(common::HandlerArenaOptions());
  auto* request = google::protobuf::Arena::CreateMessage<pb::AnswerRequest>(&arena);
  grpc::Status status = ParseRequest(context, "Answer", bytes, request);
  if (!status.ok()) return status;
  const absl::Time start = absl::Now();
  std::string caller;
  auto* response = google::protobuf::Arena::CreateMessage<pb::AnswerResponse>(&arena);
  status = Admit(context, *request, &caller);
  if (status.ok()) {
    response->set_request_id(common::RequestIdOf(context));
    status = pipeline_->Run(context, *request, response, nullptr);
  }
  Audit(context, "Answer", caller, status, *response,
        absl::ToDoubleMilliseconds(absl::Now() - start));
  if (status.ok()) common::SerializeToByteBuffer(*response, response_bytes);
  return status;
}

namespace {

class WriterSink : public PipelineSink {
 public:
  explicit WriterSink(const common::StreamWrite& write) : write_(write) {}
  void OnStage(const pb::StageEvent& event) override {
    pb::AnswerStreamResponse message;
    *message.mutable_stage() = event;
    write_(message);
  }
  void OnToken(const std::string& token) override {
    pb::AnswerStreamResponse message;
    message.set_token(token);
    write_(message);
  }

 private:
  const common::StreamWrite& write_;
};

}  // namespace

grpc::ServerWriteReactor<grpc::ByteBuffer>* GatewayServiceImpl::AnswerStream(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request) {
  return common::RunBlockingServerStream(
      [this, context, request](const common::StreamWrite& write) {
        return RunStream(*context, *request, write);
      });
}

grpc::Status GatewayServiceImpl::RunStream(const grpc::ServerContextBase& context,
                                           const grpc::ByteBuffer& bytes,
                                           const common::StreamWrite& write) {
  pb::AnswerStreamRequest request;
  grpc::Status parsed = ParseRequest(context, "AnswerStream", bytes, &request);
  if (!parsed.ok()) return parsed;
  const absl::Time start = absl::Now();
  std::string caller;
  pb::AnswerResponse response;
  grpc::Status status = Admit(context, request.request(), &caller);
  if (status.ok()) {
    response.set_request_id(common::RequestIdOf(context));
    WriterSink sink(write);
    status = pipeline_->Run(context, request.request(), &response, &sink);
    if (status.ok()) {
      pb::AnswerStreamResponse last;
      *last.mutable_result() = response;
      write(last);
    }
  }
  Audit(context, "AnswerStream", caller, status, response,
        absl::ToDoubleMilliseconds(absl::Now() - start));
  return status;
}

}  // namespace ibgraphrag::gateway
