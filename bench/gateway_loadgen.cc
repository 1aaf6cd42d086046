// Load generator for the gateway's Answer RPC (all-in-one or distributed): N client threads on
// loopback, each cycling through real questions (the `text` column of the BiomixQA true/false CSV)
// for a bounded time, as fact-verification requests. Reports answers/s, client-side latency
// percentiles, the median of each stage the gateway reports (align, retrieve, reason, total) and
// of `gateway_overhead` (the gateway's total minus the three stages), of the client latency minus
// the three stages (the gateway's own cost including transport), and degraded / failed counts.
//
//   gateway_loadgen --target=127.0.0.1:50051 --clients=1,16 --seconds=10 \
//       --questions=../shared/data/qa/biomixqa-true-false.csv [--api_key=KEY]
//       [--answers_out=FILE --answers_count=200]
//
// --answers_out first asks the first --answers_count questions one at a time and writes each
// response, less its timings and request id, as one line (protobuf text format) to FILE: two
// deployment forms on the same artifacts must write identical files (bench/gateway_bench.sh).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "common/qa/qa_datasets.h"
#include "google/protobuf/arena.h"
#include "grpcpp/grpcpp.h"
#include "ibgraphrag/v1/gateway.grpc.pb.h"

ABSL_FLAG(std::string, target, "127.0.0.1:50051", "gateway address");
ABSL_FLAG(std::string, questions, "", "BiomixQA true/false CSV (index,text,label)");
ABSL_FLAG(std::string, clients, "1,16", "comma-separated concurrency levels");
ABSL_FLAG(double, seconds, 10, "measured seconds per level");
ABSL_FLAG(int64_t, max_requests, 100000, "request cap per level");
ABSL_FLAG(int, warmup, 20, "unmeasured requests per client before measuring");
ABSL_FLAG(int, deadline_ms, 5000, "deadline of each call");
ABSL_FLAG(std::string, api_key, "", "API key (sent as authorization: Bearer)");
ABSL_FLAG(std::string, backend, "", "reasoner backend (empty: the gateway's default)");
ABSL_FLAG(std::string, answers_out, "",
          "before the load, write the responses to the first --answers_count questions here");
ABSL_FLAG(int, answers_count, 200, "questions answered into --answers_out");

namespace {

namespace pb = ibgraphrag::v1;
using Clock = std::chrono::steady_clock;

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5));
  return v[i];
}

struct Sample {
  double latency_ms = 0;
  std::map<std::string, double> stages;
  bool degraded = false;
  // Client latency minus the three stages: everything the gateway adds, transport included.
  double beyond_stages_ms = 0;
};

pb::AnswerRequest FactRequest(const std::string& question) {
  pb::AnswerRequest request;
  request.set_question(question);
  request.set_task(pb::TASK_FACT_VERIFICATION);
  request.mutable_pipeline()->set_reasoner_backend(absl::GetFlag(FLAGS_backend));
  return request;
}

// One line per question: the response without what differs between calls (timings, request
// id), or the error. False when the file cannot be written.
bool WriteAnswers(pb::GatewayService::Stub* stub, const std::vector<std::string>& questions) {
  FILE* out = std::fopen(absl::GetFlag(FLAGS_answers_out).c_str(), "w");
  if (out == nullptr) return false;
  const size_t n =
      std::min(questions.size(), static_cast<size_t>(absl::GetFlag(FLAGS_answers_count)));
  for (size_t i = 0; i < n; ++i) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    if (!absl::GetFlag(FLAGS_api_key).empty()) {
      ctx.AddMetadata("authorization", "Bearer " + absl::GetFlag(FLAGS_api_key));
    }
    pb::AnswerResponse response;
    const grpc::Status status = stub->Answer(&ctx, FactRequest(questions[i]), &response);
    response.clear_timings();
    response.clear_request_id();
    const std::string line =
        status.ok()
            ? absl::StrReplaceAll(response.ShortDebugString(), {{"\n", " "}})
            : "error " + std::to_string(status.error_code()) + ": " + status.error_message();
    std::fprintf(out, "%s\n", line.c_str());
  }
  return std::fclose(out) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  // The suite's own QA loader (quoting, headers, labels), so the load uses exactly the
  // statements `ibgr eval` scores.
  absl::StatusOr<std::vector<std::string>> loaded = ibgraphrag::eval::LoadQuestionTexts(
      absl::GetFlag(FLAGS_questions), ibgraphrag::eval::DatasetFormat::kTrueFalse);
  if (!loaded.ok()) {
    std::fprintf(stderr, "no questions read from --questions: %s\n",
                 loaded.status().ToString().c_str());
    return 1;
  }
  const std::vector<std::string> questions = *std::move(loaded);
  auto channel =
      grpc::CreateChannel(absl::GetFlag(FLAGS_target), grpc::InsecureChannelCredentials());
  auto stub = pb::GatewayService::NewStub(channel);
  if (!absl::GetFlag(FLAGS_answers_out).empty() && !WriteAnswers(stub.get(), questions)) {
    std::fprintf(stderr, "cannot write --answers_out\n");
    return 1;
  }
  std::printf(
      "| clients | answers | answers/s | p50 ms | p95 ms | p99 ms | align p50 | retrieve "
      "p50 | reason p50 | gateway overhead p50 | overhead p99 | client - stages p50 | degraded | "
      "errors |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (absl::string_view level : absl::StrSplit(absl::GetFlag(FLAGS_clients), ',')) {
    int clients = 0;
    if (!absl::SimpleAtoi(level, &clients) || clients < 1) return 1;
    std::atomic<int64_t> issued{0};
    std::atomic<int64_t> errors{0};
    std::vector<std::vector<Sample>> samples(clients);
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    Clock::time_point end;
    std::vector<std::thread> threads;
    for (int c = 0; c < clients; ++c) {
      threads.emplace_back([&, c] {
        size_t next = static_cast<size_t>(c) * 7919 % questions.size();
        auto call = [&](Sample* sample) {
          const pb::AnswerRequest request = FactRequest(questions[next++ % questions.size()]);
          grpc::ClientContext ctx;
          ctx.set_deadline(std::chrono::system_clock::now() +
                           std::chrono::milliseconds(absl::GetFlag(FLAGS_deadline_ms)));
          if (!absl::GetFlag(FLAGS_api_key).empty()) {
            ctx.AddMetadata("authorization", "Bearer " + absl::GetFlag(FLAGS_api_key));
          }
          // The response (~100 evidence triples, a few hundred strings) is parsed into an
          // arena: the load generator shares the machine's cores with the servers it measures,
          // and per-string mallocs were most of its CPU.
          google::protobuf::Arena arena;
          pb::AnswerResponse& response =
              *google::protobuf::Arena::CreateMessage<pb::AnswerResponse>(&arena);
          const auto t0 = Clock::now();
          const grpc::Status status = stub->Answer(&ctx, request, &response);
          if (sample == nullptr) return status.ok();
          sample->latency_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
          for (const auto& t : response.timings()) sample->stages[t.stage()] = t.duration_ms();
          sample->degraded = response.degraded_size() > 0;
          sample->beyond_stages_ms = sample->latency_ms - sample->stages["align"] -
                                     sample->stages["retrieve"] - sample->stages["reason"];
          return status.ok();
        };
        for (int i = 0; i < absl::GetFlag(FLAGS_warmup); ++i) call(nullptr);
        ready.fetch_add(1);
        while (!go.load()) std::this_thread::yield();
        while (Clock::now() < end && issued.fetch_add(1) < absl::GetFlag(FLAGS_max_requests)) {
          Sample sample;
          if (call(&sample)) {
            samples[c].push_back(std::move(sample));
          } else {
            errors.fetch_add(1);
          }
        }
      });
    }
    while (ready.load() < clients) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const auto start = Clock::now();
    end = start + std::chrono::duration_cast<Clock::duration>(
                      std::chrono::duration<double>(absl::GetFlag(FLAGS_seconds)));
    go.store(true);
    for (auto& t : threads) t.join();
    const double wall = std::chrono::duration<double>(Clock::now() - start).count();
    std::vector<double> latency;
    std::vector<double> beyond;
    std::map<std::string, std::vector<double>> stages;
    int64_t degraded = 0;
    for (const auto& per_client : samples) {
      for (const Sample& s : per_client) {
        latency.push_back(s.latency_ms);
        beyond.push_back(s.beyond_stages_ms);
        for (const auto& [stage, ms] : s.stages) stages[stage].push_back(ms);
        degraded += s.degraded;
      }
    }
    std::printf(
        "| %d | %zu | %.1f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.3f | %.3f | %.2f | "
        "%lld | %lld |\n",
        clients, latency.size(), latency.size() / wall, Percentile(latency, 0.5),
        Percentile(latency, 0.95), Percentile(latency, 0.99), Percentile(stages["align"], 0.5),
        Percentile(stages["retrieve"], 0.5), Percentile(stages["reason"], 0.5),
        Percentile(stages["gateway_overhead"], 0.5), Percentile(stages["gateway_overhead"], 0.99),
        Percentile(beyond, 0.5), static_cast<long long>(degraded),
        static_cast<long long>(errors.load()));
    std::fflush(stdout);
  }
  return 0;
}
