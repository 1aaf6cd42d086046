// Training and serving align a question the same way (issue 28): the topics retriever_train
// derives for a question (OpenTrainingAligner + AlignWithAligner with the settings of
// --alignment_config) equal the topics the gateway derives from the alignment service started
// with the same config file (ApplyAlignmentSetup, as alignment's main.cc does), without an LLM
// and with one (a fake OpenAI-compatible server on loopback) in either LLM step.
#include <grpcpp/grpcpp.h>

#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/test_util/fake_openai_server.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/temp_dir.h"
#include "common/topic_rule.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ibgraphrag/v1/alignment.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "services/alignment/alignment_server.h"
#include "services/alignment/alignment_setup.h"
#include "services/alignment/bundle.h"
#include "services/alignment/testing/test_fixtures.h"
#include "services/retriever/qa_training_data.h"

namespace ibgraphrag::retriever {
namespace {

namespace pb = ::ibgraphrag::v1;
using ::ibgraphrag::common::test_util::FakeOpenAiServer;
using ::ibgraphrag::common::test_util::FakeResponse;
using ::ibgraphrag::common::test_util::RecordedRequest;

// Questions over the three-entity lexicon (alignment/testing/test_fixtures.h): MI (kg id 10,
// "heart attack", "MI"), pneumonia (11), heart failure (12).
const std::vector<std::string>& Questions() {
  static const auto* questions = new std::vector<std::string>{
      "Heart attack or pneumonia with fever",
      "Is pneumonia a complication of heart failure?",
      common::AlignmentText("Which of these follows an MI?", {"pneumonia", "heart failure"}),
  };
  return *questions;
}

class AlignmentParityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = common::test_util::MakeTempDir("align-parity");
    auto encoder = alignment::HashNgramEncoder::Create(alignment::HashNgramEncoderOptions());
    ASSERT_OK(encoder);
    alignment::BundleBuildOptions build;
    build.base_path = base_;
    ASSERT_OK(alignment::BuildAlignmentBundle(alignment::testing::TinyLexicon(), **encoder, build));
    auto llm = FakeOpenAiServer::Start();
    ASSERT_OK(llm);
    llm_ = *std::move(llm);
    // The LLM's picks: heart failure for the heart-attack mention, NONE for "MI", the entity
    // named for any other mention.
    llm_->SetHandler([](const RecordedRequest& request) {
      const std::string prompt =
          nlohmann::json::parse(request.body)["messages"][1]["content"].get<std::string>();
      if (absl::StrContains(prompt, "query_entity: Heart attack")) {
        return FakeResponse::Completion(R"({"selected_entity": {"name": "heart failure"}})");
      }
      if (absl::StrContains(prompt, "query_entity: MI")) return FakeResponse::Completion("NONE");
      return FakeResponse::Completion("0");
    });
  }

  // The AlignmentConfig both sides read: the paper's lambda, a tau at which the tiny lexicon's
  // dictionary matches pass (its calibration has three entries), the fake LLM when asked.
  std::string WriteConfig(bool with_llm, const std::string& step) const {
    const std::string path = absl::StrCat(base_, "/alignment-", with_llm, step, ".textproto");
    std::ofstream out(path);
    out << "defaults { lambda: 0.4 tau: 0.5 top_k: 10 llm_choice_below: 5 llm_step: \"" << step
        << "\" }\n";
    if (with_llm) out << "llm { base_url: \"" << llm_->base_url() << "\" model: \"m\" }\n";
    return path;
  }

  // The topics retriever_train trains on for each question.
  std::vector<std::vector<uint32_t>> TrainingTopics(const std::string& config) const {
    TrainingDataOptions options;
    options.alignment_base = base_;
    auto setup = alignment::LoadAlignmentSetup(config);
    if (!setup.ok()) {
      ADD_FAILURE() << setup.status();
      return {};
    }
    options.alignment_setup = *setup;
    auto aligner = OpenTrainingAligner(options);
    if (!aligner.ok()) {
      ADD_FAILURE() << aligner.status();
      return {};
    }
    const AlignTextFn align = AlignWithAligner(*std::move(aligner));
    std::vector<std::vector<uint32_t>> out;
    for (const std::string& q : Questions()) {
      auto kept = align(q);
      EXPECT_OK(kept);
      std::vector<uint32_t> ids;
      for (const AlignedEntity& e : *kept) ids.push_back(e.kg_id);
      out.push_back(common::TopicEntityIds(ids));
    }
    return out;
  }

  // The topics the gateway sends the retriever: the alignment service started from the same
  // file, asked as AnswerPipeline::Align asks (msca_enabled, nothing else set).
  std::vector<std::vector<uint32_t>> ServingTopics(const std::string& config) const {
    alignment::AlignmentServer::Options options;
    options.server.listen_host = "127.0.0.1";
    options.server.port = 0;
    options.server.metrics_port = -1;
    options.server.termination_grace_period = absl::ZeroDuration();
    options.base_path = base_;
    auto setup = alignment::LoadAlignmentSetup(config);
    if (!setup.ok()) {
      ADD_FAILURE() << setup.status();
      return {};
    }
    alignment::ApplyAlignmentSetup(*setup, &options);
    auto server = alignment::AlignmentServer::BuildAndStart(options);
    if (!server.ok()) {
      ADD_FAILURE() << server.status();
      return {};
    }
    auto stub = pb::AlignmentService::NewStub(grpc::CreateChannel(
        absl::StrCat("127.0.0.1:", (*server)->port()), grpc::InsecureChannelCredentials()));
    std::vector<std::vector<uint32_t>> out;
    for (const std::string& q : Questions()) {
      pb::AlignRequest request;
      request.set_text(q);
      request.mutable_options()->set_msca_enabled(true);
      pb::AlignResponse response;
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
      EXPECT_OK(stub->Align(&ctx, request, &response));
      EXPECT_EQ(response.degraded_size(), 0);
      std::vector<uint32_t> ids;
      for (const pb::AlignedEntity& e : response.kept()) ids.push_back(e.entity().id());
      out.push_back(common::TopicEntityIds(ids));
    }
    return out;
  }

  static bool Has(const std::vector<uint32_t>& topics, uint32_t id) {
    return std::find(topics.begin(), topics.end(), id) != topics.end();
  }

  std::string base_;
  std::unique_ptr<FakeOpenAiServer> llm_;
};

TEST_F(AlignmentParityTest, TrainingAndServingGiveTheSameTopicsWithoutAnLlm) {
  const std::string config = WriteConfig(false, "before_filter");
  const auto trained = TrainingTopics(config);
  EXPECT_EQ(trained, ServingTopics(config));
  EXPECT_TRUE(Has(trained[0], 10));  // "Heart attack" names MI
  EXPECT_EQ(llm_->request_count(), 0);
}

TEST_F(AlignmentParityTest, TrainingAndServingGiveTheSameTopicsWithTheLlmInEitherStep) {
  const std::string plain = WriteConfig(false, "before_filter");
  const auto without_llm = TrainingTopics(plain);
  for (const std::string step : {"before_filter", "rescue_rejected"}) {
    SCOPED_TRACE(step);
    const std::string config = WriteConfig(true, step);
    const int calls_before = llm_->request_count();
    const auto trained = TrainingTopics(config);
    const int training_calls = llm_->request_count() - calls_before;
    const auto served = ServingTopics(config);
    EXPECT_EQ(trained, served);
    // Both sides asked the LLM as often, and what it said mattered.
    EXPECT_GT(training_calls, 0);
    EXPECT_EQ(llm_->request_count() - calls_before, 2 * training_calls);
    // A model trained without the LLM would have been trained on other topics.
    EXPECT_NE(trained, without_llm);
    if (std::string(step) == "before_filter") {
      // Before the filter the LLM's choice replaces MI for "Heart attack".
      EXPECT_FALSE(Has(trained[0], 10));
    }
  }
}

TEST_F(AlignmentParityTest, ABadConfigFileIsRefusedNamingTheField) {
  const std::string path = absl::StrCat(base_, "/bad.textproto");
  std::ofstream(path) << "defaults { llm_step: \"after_everything\" }\n";
  auto setup = alignment::LoadAlignmentSetup(path);
  EXPECT_THAT(setup, common::test_util::StatusIs(absl::StatusCode::kInvalidArgument,
                                                 ::testing::HasSubstr("defaults.llm_step")));
  std::ofstream(path) << "defaults { tau: 1.5 }\n";
  EXPECT_THAT(alignment::LoadAlignmentSetup(path),
              common::test_util::StatusIs(absl::StatusCode::kInvalidArgument,
                                          ::testing::HasSubstr("defaults.tau: 1.5")));
  std::ofstream(path) << "bundle_version: -2\n";
  EXPECT_THAT(alignment::LoadAlignmentSetup(path),
              common::test_util::StatusIs(absl::StatusCode::kInvalidArgument,
                                          ::testing::HasSubstr("bundle_version: must be >= 0")));
}

// The config's bundle_version pins the served bundle, as the alignment service, the all-in-one
// and `gateway --alignment=local` read it; a version pinned already (--pin_version) wins.
TEST_F(AlignmentParityTest, TheConfigsBundleVersionPinsUnlessAVersionIsPinnedAlready) {
  const std::string path = absl::StrCat(base_, "/pinned.textproto");
  std::ofstream(path) << "bundle_version: 3\n";
  auto setup = alignment::LoadAlignmentSetup(path);
  ASSERT_OK(setup);
  alignment::AlignmentServer::Options options;
  alignment::ApplyAlignmentSetup(*setup, &options);
  EXPECT_EQ(options.pinned_version, std::optional<int64_t>(3));
  options.pinned_version = 7;
  alignment::ApplyAlignmentSetup(*setup, &options);
  EXPECT_EQ(options.pinned_version, std::optional<int64_t>(7));
  alignment::AlignmentServer::Options newest;
  std::ofstream(path) << "defaults { tau: 0.5 }\n";
  auto unpinned = alignment::LoadAlignmentSetup(path);
  ASSERT_OK(unpinned);
  alignment::ApplyAlignmentSetup(*unpinned, &newest);
  EXPECT_FALSE(newest.pinned_version.has_value());
}

}  // namespace
}  // namespace ibgraphrag::retriever
