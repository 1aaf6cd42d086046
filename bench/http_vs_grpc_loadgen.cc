// HTTP/JSON vs gRPC on the same server: the same questions (BiomixQA true/false statements, as
// fact-verification requests) sent as Answer RPCs to the gRPC port and as POST /v1/answer to
// the HTTP port (common/http_gateway.h) of one gateway or all-in-one process, alternating per
// concurrency level. Reports answers/s, client latency percentiles and the client latency minus
// the three stages the gateway reports (align, retrieve, reason): what transport, encoding and the
// gateway add. Both clients decode the response into an AnswerResponse (the HTTP client's JSON
// decode is timed and shown apart: it is the caller's cost, not the server's); HTTP clients keep
// their connection alive, as gRPC channels do.
//
//   http_vs_grpc_loadgen --grpc_target=127.0.0.1:50051 --http_port=8080 --clients=1,8 \
//       --seconds=10 --questions=../shared/data/qa/biomixqa-true-false.csv
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "common/proto_json.h"
#include "common/qa/qa_datasets.h"
#include "grpcpp/grpcpp.h"
#include "ibgraphrag/v1/gateway.grpc.pb.h"
#include "tools/eval/eval_metrics.h"

ABSL_FLAG(std::string, grpc_target, "127.0.0.1:50051", "gRPC address of the server");
ABSL_FLAG(std::string, http_host, "127.0.0.1", "HTTP host of the same server");
ABSL_FLAG(int, http_port, 8080, "HTTP port of the same server");
ABSL_FLAG(std::string, questions, "", "BiomixQA true/false CSV (index,text,label)");
ABSL_FLAG(std::string, clients, "1,8", "comma-separated concurrency levels");
ABSL_FLAG(double, seconds, 10, "measured seconds per level and transport");
ABSL_FLAG(int, warmup, 20, "unmeasured requests per client before measuring");

namespace {

namespace pb = ibgraphrag::v1;
using ibgraphrag::eval::Percentile;
using Clock = std::chrono::steady_clock;

// One call of either transport: fills `response` and the time spent decoding JSON into it on
// the client (0 for gRPC, whose protobuf decode inside the stub is not separable and ~0.1 ms);
// returns whether it succeeded.
using Caller = std::function<bool(const pb::AnswerRequest&, pb::AnswerResponse*, double*)>;
// Makes one Caller per client thread (its own HTTP connection; the shared gRPC channel).
using CallerFactory = std::function<Caller()>;

pb::AnswerRequest Request(const std::string& question) {
  pb::AnswerRequest request;
  request.set_question(question);
  request.set_task(pb::TASK_FACT_VERIFICATION);
  return request;
}

CallerFactory GrpcCallers() {
  auto stub = std::shared_ptr<pb::GatewayService::Stub>(pb::GatewayService::NewStub(
      grpc::CreateChannel(absl::GetFlag(FLAGS_grpc_target), grpc::InsecureChannelCredentials())));
  return [stub] {
    return [stub](const pb::AnswerRequest& request, pb::AnswerResponse* response, double*) {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
      return stub->Answer(&ctx, request, response).ok();
    };
  };
}

CallerFactory HttpCallers() {
  return [] {
    auto client = std::make_shared<httplib::Client>(absl::GetFlag(FLAGS_http_host),
                                                    absl::GetFlag(FLAGS_http_port));
    client->set_keep_alive(true);
    client->set_tcp_nodelay(true);
    client->set_read_timeout(10, 0);
    return [client](const pb::AnswerRequest& request, pb::AnswerResponse* response,
                    double* decode_ms) {
      auto res = client->Post("/v1/answer", ibgraphrag::common::ProtoToJsonLine(request).value(),
                              "application/json");
      if (!res || res->status != 200) return false;
      const auto t0 = Clock::now();
      const bool ok = ibgraphrag::common::JsonToProto(res->body, "response", response).ok();
      *decode_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      return ok;
    };
  };
}

struct LevelResult {
  std::vector<double> latency_ms;
  std::vector<double> beyond_stages_ms;
  std::vector<double> decode_ms;
  int64_t errors = 0;
  double wall_s = 0;
};

LevelResult RunLevel(const CallerFactory& callers, const std::vector<std::string>& questions,
                     int clients) {
  LevelResult result;
  std::vector<LevelResult> per_client(clients);
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  Clock::time_point end;
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      Caller call = callers();
      size_t next = static_cast<size_t>(c) * 7919 % questions.size();
      pb::AnswerResponse response;
      for (int i = 0; i < absl::GetFlag(FLAGS_warmup); ++i) {
        double decode_ms = 0;
        call(Request(questions[next++ % questions.size()]), &response, &decode_ms);
      }
      ready.fetch_add(1);
      while (!go.load()) std::this_thread::yield();
      LevelResult& mine = per_client[c];
      while (Clock::now() < end) {
        const pb::AnswerRequest request = Request(questions[next++ % questions.size()]);
        response.Clear();
        double decode_ms = 0;
        const auto t0 = Clock::now();
        const bool ok = call(request, &response, &decode_ms);
        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        if (!ok) {
          ++mine.errors;
          continue;
        }
        double stages = 0;
        for (const auto& t : response.timings()) {
          if (t.stage() == "align" || t.stage() == "retrieve" || t.stage() == "reason") {
            stages += t.duration_ms();
          }
        }
        mine.latency_ms.push_back(ms);
        mine.beyond_stages_ms.push_back(ms - stages);
        mine.decode_ms.push_back(decode_ms);
      }
    });
  }
  while (ready.load() < clients) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const auto start = Clock::now();
  end = start + std::chrono::duration_cast<Clock::duration>(
                    std::chrono::duration<double>(absl::GetFlag(FLAGS_seconds)));
  go.store(true);
  for (auto& t : threads) t.join();
  result.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  for (const LevelResult& r : per_client) {
    result.latency_ms.insert(result.latency_ms.end(), r.latency_ms.begin(), r.latency_ms.end());
    result.beyond_stages_ms.insert(result.beyond_stages_ms.end(), r.beyond_stages_ms.begin(),
                                   r.beyond_stages_ms.end());
    result.decode_ms.insert(result.decode_ms.end(), r.decode_ms.begin(), r.decode_ms.end());
    result.errors += r.errors;
  }
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  absl::StatusOr<std::vector<std::string>> loaded = ibgraphrag::eval::LoadQuestionTexts(
      absl::GetFlag(FLAGS_questions), ibgraphrag::eval::DatasetFormat::kTrueFalse);
  if (!loaded.ok()) {
    std::fprintf(stderr, "no questions read from --questions: %s\n",
                 loaded.status().ToString().c_str());
    return 1;
  }
  const std::vector<std::string> questions = *std::move(loaded);
  const CallerFactory grpc_callers = GrpcCallers();
  const CallerFactory http_callers = HttpCallers();
  std::printf(
      "| transport | clients | answers | answers/s | p50 ms | p95 ms | p99 ms | client - stages "
      "p50 ms | client - stages p99 ms | client JSON decode p50 ms | errors |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (absl::string_view level : absl::StrSplit(absl::GetFlag(FLAGS_clients), ',')) {
    int clients = 0;
    if (!absl::SimpleAtoi(level, &clients) || clients < 1) return 1;
    for (const auto& [name, callers] :
         {std::pair{"gRPC", &grpc_callers}, std::pair{"HTTP/JSON", &http_callers}}) {
      const LevelResult r = RunLevel(*callers, questions, clients);
      std::printf("| %s | %d | %zu | %.1f | %.2f | %.2f | %.2f | %.3f | %.3f | %.3f | %lld |\n",
                  name, clients, r.latency_ms.size(), r.latency_ms.size() / r.wall_s,
                  Percentile(r.latency_ms, 50), Percentile(r.latency_ms, 95),
                  Percentile(r.latency_ms, 99), Percentile(r.beyond_stages_ms, 50),
                  Percentile(r.beyond_stages_ms, 99), Percentile(r.decode_ms, 50),
                  static_cast<long long>(r.errors));
      std::fflush(stdout);
    }
  }
  return 0;
}
