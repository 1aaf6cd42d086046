// The deployment forms answer alike: the all-in-one `ibgraphrag` (its gateway calling the other
// services directly, and through in-process gRPC channels), the distributed suite whose
// retriever asks kgstore for subgraphs over gRPC, and the distributed suite whose retriever reads
// its own read-only KG replica (issue 30: the form the Kubernetes manifests run), that form with
// the gateway answering in its own process (`gateway --reasoner=local`), and with the gateway
// aligning there too (`--alignment=local`: the retriever its one upstream). Real binaries on
// loopback, the same artifacts; every answer, entity, evidence triple (with its score), path and
// version must be identical, only timings and request ids differ.
#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ibgraphrag/v1/gateway.grpc.pb.h"
#include "services/gateway/testing/small_suite.h"
#include "services/reasoner/confidence_calibration.h"
#include "tests/test_util/distributed_suite.h"
#include "tests/test_util/subprocess.h"

namespace ibgraphrag::testing {
namespace {

namespace pb = ::ibgraphrag::v1;
using ::ibgraphrag::common::test_util::MakeTempDir;

std::vector<pb::AnswerRequest> Questions() {
  std::vector<pb::AnswerRequest> out = {gateway::testing::SmallSuiteDiabetesQuestion()};
  for (const char* q :
       {"What drugs treat type 2 diabetes mellitus?",
        "Which genes are associated with type 2 diabetes mellitus?",
        "What are the symptoms of type 2 diabetes mellitus?", "Does metformin treat diabetes?",
        "Which drug treats type 2 diabetes mellitus and what does it target?"}) {
    pb::AnswerRequest r;
    r.set_question(q);
    out.push_back(r);
  }
  // The baselines too: their rankings read the same subgraph.
  for (const char* mode : {"kg_rank", "kg_rag"}) {
    pb::AnswerRequest r;
    r.set_question("What drugs treat type 2 diabetes mellitus?");
    r.mutable_pipeline()->set_mode(mode);
    out.push_back(r);
  }
  return out;
}

// A calibration fitted on synthetic multiple-choice signals, published under `base` as the
// all-in-one's `--calibration=auto` and the distributed reasoner's `--base` find it.
void PublishCalibration(const std::string& base) {
  std::vector<reasoner::CalibrationExample> examples;
  for (int i = 0; i < 80; ++i) {
    reasoner::CalibrationExample e;
    const bool wide = i % 2 == 0;
    e.signals.present = true;
    e.signals.task = reasoner::Task::kMultipleChoice;
    e.signals.top_support = 1.0;
    e.signals.runner_up_support = wide ? 0.1 : 0.95;
    e.signals.margin = 1.0 - e.signals.runner_up_support;
    e.signals.options_supported = 2;
    e.signals.num_options = 4;
    e.signals.topics_present = 1;
    e.signals.topics_connected = 1;
    e.signals.evidence_count = 10;
    e.signals.candidate_index = 0;
    e.correct = wide ? (i % 8 != 0) : (i % 8 == 1);
    e.raw_confidence = 1.0;
    e.dataset = "synthetic";
    examples.push_back(e);
  }
  auto fitted = reasoner::FitCalibration(examples, {});
  ASSERT_OK(fitted);
  ASSERT_OK(reasoner::PublishCalibration(base, *fitted, "distributed_forms_test"));
}

// The response without what legitimately differs between calls (timings, request id).
std::string Canonical(pb::AnswerResponse response) {
  response.clear_timings();
  response.clear_request_id();
  return response.DebugString();
}

std::vector<std::string> AskAll(int port) {
  auto stub = pb::GatewayService::NewStub(
      grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials()));
  std::vector<std::string> out;
  for (const pb::AnswerRequest& request : Questions()) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    pb::AnswerResponse response;
    const grpc::Status status = stub->Answer(&ctx, request, &response);
    EXPECT_TRUE(status.ok()) << request.question() << ": " << status.error_message();
    // The baselines say they ran without an LLM; nothing may say the retriever or the KG failed.
    for (const pb::Degradation& d : response.degraded()) {
      EXPECT_NE(d.component(), "retriever") << request.question() << ": " << d.reason();
      EXPECT_NE(d.component(), "kgstore") << request.question() << ": " << d.reason();
    }
    out.push_back(Canonical(std::move(response)));
  }
  return out;
}

// The last message of AnswerStream for `request`, canonical; "" when the stream fails.
std::string StreamedResult(int port, const pb::AnswerRequest& request) {
  auto stub = pb::GatewayService::NewStub(
      grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  pb::AnswerStreamRequest stream_request;
  *stream_request.mutable_request() = request;
  auto reader = stub->AnswerStream(&ctx, stream_request);
  pb::AnswerStreamResponse message;
  std::string result;
  while (reader->Read(&message)) {
    if (message.has_result()) result = Canonical(message.result());
  }
  const grpc::Status status = reader->Finish();
  EXPECT_TRUE(status.ok()) << status.error_message();
  return status.ok() ? result : "";
}

TEST(DistributedFormsTest, EveryFormAnswersIdentically) {
  const std::string dir = MakeTempDir("distributed-forms");
  const std::string base = dir + "/art";
  gateway::testing::PublishSmallSuite(base);
  PublishCalibration(base);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());

  auto all_in_one =
      Subprocess::Start({BinDir() + "/ibgraphrag", "--base=" + base, "--host=127.0.0.1", "--port=0",
                         "--metrics_port=-1", "--device=cpu"},
                        dir + "/ibgraphrag.log");
  ASSERT_OK(all_in_one);
  auto all_in_one_port = all_in_one->WaitForReadyPort("ibgraphrag", absl::Seconds(90));
  ASSERT_OK(all_in_one_port);
  const std::vector<std::string> want = AskAll(*all_in_one_port);
  ASSERT_EQ(want.size(), Questions().size());
  EXPECT_THAT(want[0], ::testing::HasSubstr("Metformin"));
  // Every form serves the published calibration (the distributed reasoner through --base).
  EXPECT_THAT(want[0], ::testing::HasSubstr("calibration: \"calibration/1\""));
  ASSERT_OK(all_in_one->Stop(SIGTERM, absl::Seconds(30)).status());

  {
    // The all-in-one's gateway calls the other services' handlers directly by default; through
    // in-process gRPC channels (serialised messages) the answers are the same.
    SCOPED_TRACE("all-in-one over in-process gRPC channels");
    auto over_grpc = Subprocess::Start(
        {BinDir() + "/ibgraphrag", "--base=" + base, "--host=127.0.0.1", "--port=0",
         "--metrics_port=-1", "--device=cpu", "--inprocess_calls=grpc"},
        dir + "/ibgraphrag-grpc.log");
    ASSERT_OK(over_grpc);
    auto port = over_grpc->WaitForReadyPort("ibgraphrag", absl::Seconds(90));
    ASSERT_OK(port);
    const std::vector<std::string> got = AskAll(*port);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i], want[i]) << Questions()[i].question();
    }
    ASSERT_OK(over_grpc->Stop(SIGTERM, absl::Seconds(30)).status());
  }

  struct Form {
    const char* name;
    bool replica;
    bool gateway_reasons_locally;
    bool gateway_aligns_locally;
  };
  for (const Form& form :
       {Form{"kgstore", false, false, false}, Form{"replica", true, false, false},
        Form{"replica-local-reasoner", true, true, false},
        Form{"replica-local-alignment-reasoner", true, true, true}}) {
    SCOPED_TRACE(form.name);
    DistributedSuite::Options options;
    options.dir = absl::StrCat(dir, "/", form.name);
    ASSERT_TRUE(std::filesystem::create_directories(options.dir));
    options.base = base;
    options.retriever_kg_replica = form.replica;
    options.gateway_reasons_locally = form.gateway_reasons_locally;
    options.gateway_aligns_locally = form.gateway_aligns_locally;
    auto suite = DistributedSuite::Start(options);
    ASSERT_OK(suite);
    // No process for what the gateway does itself.
    EXPECT_EQ((*suite)->port("reasoner") == 0, form.gateway_reasons_locally);
    EXPECT_EQ((*suite)->port("alignment") == 0, form.gateway_aligns_locally);
    const std::vector<std::string> got = AskAll((*suite)->port("gateway"));
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i], want[i]) << Questions()[i].question();
    }
    // AnswerStream reaches alignment and the reasoner through their channels (in process for
    // local ones), not the direct calls: its result is the same answer.
    EXPECT_EQ(StreamedResult((*suite)->port("gateway"), Questions()[0]), want[0]);
  }
}

// The alignment bundle version of one answer to the small suite's question through `port`.
std::string AlignmentVersionOfAnAnswer(int port) {
  auto stub = pb::GatewayService::NewStub(
      grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  pb::AnswerResponse response;
  const grpc::Status status =
      stub->Answer(&ctx, gateway::testing::SmallSuiteDiabetesQuestion(), &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  return response.versions().alignment_bundle_version();
}

// `gateway --alignment=local` follows new alignment bundles as the alignment pod does
// (--alignment_watch_seconds), and a bundle_version in --alignment_config pins it as it pins the
// alignment service.
TEST(DistributedFormsTest, GatewayAligningLocallyFollowsNewBundlesUnlessPinned) {
  const std::string dir = MakeTempDir("gateway-local-alignment-swap");
  const std::string base = dir + "/art";
  gateway::testing::PublishSmallSuite(base);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  const std::string pinned_config = dir + "/alignment-pinned.textproto";
  std::ofstream(pinned_config) << "bundle_version: 1\n";

  struct Case {
    const char* name;
    std::vector<std::string> flags;
    std::string want_after_publishing;
  };
  int64_t next_version = 2;
  for (const Case& c : {Case{"following", {"--alignment_watch_seconds=1"}, "2"},
                        Case{"pinned",
                             {"--alignment_watch_seconds=1", "--alignment_config=" + pinned_config},
                             "1"}}) {
    SCOPED_TRACE(c.name);
    DistributedSuite::Options options;
    options.dir = absl::StrCat(dir, "/", c.name);
    ASSERT_TRUE(std::filesystem::create_directories(options.dir));
    options.base = base;
    options.retriever_kg_replica = true;
    options.gateway_aligns_locally = true;
    options.gateway_flags = c.flags;
    auto suite = DistributedSuite::Start(options);
    ASSERT_OK(suite);
    const int port = (*suite)->port("gateway");
    // Version 1 at start: the only one for the first case; the pinned one for the second, which
    // starts after the first case has published version 2.
    const std::string at_start = AlignmentVersionOfAnAnswer(port);
    EXPECT_EQ(at_start, "1");
    gateway::testing::PublishSmallSuiteAlignmentBundle(base, next_version++);
    ASSERT_FALSE(::testing::Test::HasFatalFailure());
    // The watcher looks every second; a swap shows within a few.
    std::string seen = at_start;
    for (int i = 0; i < 40 && seen != c.want_after_publishing; ++i) {
      absl::SleepFor(absl::Milliseconds(250));
      seen = AlignmentVersionOfAnAnswer(port);
    }
    if (c.want_after_publishing == "1") {
      absl::SleepFor(absl::Seconds(3));  // three watch periods: a pinned gateway must not move
      seen = AlignmentVersionOfAnAnswer(port);
    }
    EXPECT_EQ(seen, c.want_after_publishing);
  }
}

// The local services' flags are refused where they would be ignored, and a configuration a
// local service cannot load stops the gateway naming the flag: exit status 1, no server.
TEST(DistributedFormsTest, GatewayLocalServiceFlagsAreCheckedAtStart) {
  const std::string dir = MakeTempDir("gateway-local-flags");
  const std::string empty_base = dir + "/empty";
  ASSERT_TRUE(std::filesystem::create_directories(empty_base));
  const std::vector<std::string> common = {BinDir() + "/gateway", "--host=127.0.0.1", "--port=0",
                                           "--metrics_port=-1", "--retriever=127.0.0.1:1"};
  struct Case {
    std::vector<std::string> flags;
    std::string message;
  };
  const std::string remote_alignment = "--alignment=127.0.0.1:1";
  const std::string remote_reasoner = "--reasoner=127.0.0.1:1";
  for (const Case& c : {
           Case{{remote_alignment, remote_reasoner, "--base=" + dir},
                "--base: only with --alignment=local or --reasoner=local"},
           Case{{remote_alignment, remote_reasoner, "--calibration=none"},
                "only with --reasoner=local"},
           Case{{remote_alignment, "--reasoner=local", "--calibration=" + dir + "/missing.json"},
                "--calibration: "},
           Case{{remote_alignment, "--reasoner=local",
                 "--reasoner_config=" + dir + "/missing.textproto"},
                "--reasoner_config: "},
           Case{{remote_alignment, remote_reasoner, "--alignment_config=" + dir + "/a.textproto"},
                "only with --alignment=local"},
           Case{{remote_alignment, "--reasoner=local", "--alignment_watch_seconds=30"},
                "only with --alignment=local"},
           Case{{"--alignment=local", remote_reasoner}, "--base: required with --alignment=local"},
           Case{{"--alignment=local", remote_reasoner, "--base=" + dir,
                 "--alignment_config=" + dir + "/missing.textproto"},
                "--alignment_config: "},
           Case{{"--alignment=local", remote_reasoner, "--base=" + empty_base},
                "local alignment: "},
       }) {
    std::vector<std::string> argv = common;
    argv.insert(argv.end(), c.flags.begin(), c.flags.end());
    const std::string log = dir + "/gateway.log";
    std::filesystem::remove(log);
    auto code = RunToCompletion(argv, log, absl::Seconds(30));
    ASSERT_OK(code);
    EXPECT_EQ(*code, 1) << c.flags.back();
    std::ifstream in(log);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_THAT(text, ::testing::HasSubstr(c.message)) << c.flags.back();
    EXPECT_THAT(text, ::testing::Not(::testing::HasSubstr("gateway: ready")));
  }
}

}  // namespace
}  // namespace ibgraphrag::testing
