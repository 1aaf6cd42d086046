// The illama mode end to end on the small suite in one process (real kgstore, alignment,
// retriever with the subgraph documents artifact, reasoner): with an LLM backend (the scripted
// fake OpenAI-compatible server) the paper's prompt carries the re-ranked documents; with the
// extractive backend the documents' triples are the evidence; without the artifact the mode
// answers FAILED_PRECONDITION.
#include "services/gateway/modes/illama_mode.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/test_util/fake_openai_server.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ibgraphrag/v1/gateway.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "services/gateway/all_in_one.h"
#include "services/gateway/testing/small_suite.h"
#include "services/kgstore/kg_store.h"
#include "services/kgstore/snapshot_manifest.h"
#include "services/retriever/alignment_embedder.h"
#include "services/retriever/subgraph_documents.h"

namespace ibgraphrag::gateway {
namespace {

namespace pb = ibgraphrag::v1;
using ::ibgraphrag::common::test_util::FakeOpenAiServer;
using ::ibgraphrag::common::test_util::FakeResponse;
using ::ibgraphrag::common::test_util::ScratchDir;
using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::HasSubstr;
using ::testing::StartsWith;

void PublishDocuments(const std::string& base) { testing::PublishSmallSuiteDocuments(base); }

class IllamaModeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::PublishSmallSuite(dir_.path());
    ASSERT_FALSE(HasFatalFailure());
    auto fake = FakeOpenAiServer::Start();
    ASSERT_OK(fake);
    llm_ = *std::move(fake);
    llm_->SetHandler([](const common::test_util::RecordedRequest&) {
      return FakeResponse::Completion(
          "Metformin treats type 2 diabetes mellitus, as the context says.\nans: A) Metformin");
    });
  }
  void TearDown() override {
    if (suite_ != nullptr) suite_->Shutdown();
    llm_->Stop();
  }

  void StartSuite() {
    AllInOneOptions options;
    options.base_path = dir_.path();
    options.device = "cpu";
    options.alignment_llm_backend = "none";
    options.gateway.server.listen_host = "127.0.0.1";
    options.gateway.server.port = 0;
    options.gateway.server.metrics_port = -1;
    reasoner::LlmBackendConfig backend;
    backend.name = "fake";
    backend.base_url = llm_->base_url();
    backend.model = "fake-model";
    backend.max_retries = 0;
    options.reasoner.reasoner.backends = {backend};
    auto suite = AllInOne::Start(options);
    ASSERT_OK(suite);
    suite_ = *std::move(suite);
  }

  grpc::Status Ask(const std::string& backend, pb::AnswerResponse* response,
                   const std::string& reranker = "",
                   const std::string& question = "Which drug treats type 2 diabetes mellitus?",
                   bool with_options = true) {
    auto stub = pb::GatewayService::NewStub(grpc::CreateChannel(
        absl::StrCat("127.0.0.1:", suite_->port()), grpc::InsecureChannelCredentials()));
    pb::AnswerRequest request;
    request.set_question(question);
    request.mutable_pipeline()->set_illama_reranker(reranker);
    if (with_options) {
      request.add_options("Metformin");
      request.add_options("Polyuria");
      request.set_task(pb::TASK_MULTIPLE_CHOICE);
    } else {
      request.set_task(pb::TASK_OPEN);  // no options: no option entity aligned either
    }
    request.mutable_pipeline()->set_mode("illama");
    request.mutable_pipeline()->set_reasoner_backend(backend);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    return stub->Answer(&context, request, response);
  }

  ScratchDir dir_{"illama-mode"};
  std::unique_ptr<FakeOpenAiServer> llm_;
  std::unique_ptr<AllInOne> suite_;
};

TEST_F(IllamaModeTest, LlmGetsThePapersPromptOverTheRerankedDocuments) {
  PublishDocuments(dir_.path());
  StartSuite();
  pb::AnswerResponse response;
  const grpc::Status status = Ask("fake", &response);
  ASSERT_OK(status);

  ASSERT_EQ(llm_->requests().size(), 1u);
  const auto body = nlohmann::json::parse(llm_->requests()[0].body);
  const std::string system = body["messages"][0]["content"];
  const std::string user = body["messages"].back()["content"];
  EXPECT_THAT(system, StartsWith("You are a medical assistant specializing in providing expert "
                                 "consultations for medical inquiries."));
  EXPECT_THAT(system, HasSubstr("\"ans: <letter>) <option text>\""));
  EXPECT_THAT(user, StartsWith("### Context\n"));
  EXPECT_THAT(user, HasSubstr("\n\n### Input\nWhich drug treats type 2 diabetes mellitus?\nA) "
                              "Metformin\nB) Polyuria\n\n### Response\n"));
  // The best document leads the context: its centre triple is the first evidence triple.
  ASSERT_GT(response.evidence_size(), 0);
  const pb::EvidenceTriple& first = response.evidence(0);
  EXPECT_THAT(
      user, StartsWith(absl::StrCat("### Context\n",
                                    retriever::TripleSentence(first.head().name(), first.relation(),
                                                              first.tail().name()))));
  EXPECT_THAT(user, HasSubstr("Metformin treats type 2 diabetes mellitus."));

  EXPECT_EQ(response.answer().prompt_version(), "illama.v1");
  EXPECT_TRUE(response.answer().used_llm());
  EXPECT_EQ(response.answer().option_letter(), "A");
  EXPECT_EQ(response.llm_calls(), 1);
  // The baseline's own re-ranker (encoder similarity) ran: nothing degraded.
  for (const pb::Degradation& d : response.degraded()) {
    EXPECT_NE(d.component(), "illama") << d.reason();
  }
}

// A yes/no question sent without a task is fact verification in every mode: the prompt asks for
// the verdict the reasoner parses (the gateway resolves the task once, common::IsYesNoQuestion).
TEST_F(IllamaModeTest, AYesNoQuestionWithoutATaskAsksTheLlmForAVerdict) {
  PublishDocuments(dir_.path());
  StartSuite();
  llm_->SetHandler([](const common::test_util::RecordedRequest&) {
    return FakeResponse::Completion("The context says metformin treats it.\nans: SUPPORTED");
  });
  auto stub = pb::GatewayService::NewStub(grpc::CreateChannel(
      absl::StrCat("127.0.0.1:", suite_->port()), grpc::InsecureChannelCredentials()));
  pb::AnswerRequest request;
  request.set_question("Does metformin treat type 2 diabetes mellitus?");
  request.mutable_pipeline()->set_mode("illama");
  request.mutable_pipeline()->set_reasoner_backend("fake");
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  pb::AnswerResponse response;
  ASSERT_OK(stub->Answer(&context, request, &response));
  ASSERT_EQ(llm_->requests().size(), 1u);
  const auto body = nlohmann::json::parse(llm_->requests()[0].body);
  const std::string system = body["messages"][0]["content"];
  EXPECT_THAT(system, HasSubstr("\"ans: SUPPORTED\" or \"ans: REFUTED\""));
  EXPECT_EQ(response.answer().label(), pb::FACT_LABEL_SUPPORTED);
}

// The baseline's own re-ranker needs no aligned entity; the "ibrp" hybrid (IBGraphRAG's trained
// scorer) does, and says so when it has none; an unknown re-ranker is refused, naming the field.
TEST_F(IllamaModeTest, TheOwnRerankerNeedsNoEntitiesTheHybridDoesAndOthersAreRefused) {
  PublishDocuments(dir_.path());
  StartSuite();
  auto illama_flags = [](const pb::AnswerResponse& response) {
    std::vector<std::string> out;
    for (const pb::Degradation& d : response.degraded()) {
      if (d.component() == "illama") out.push_back(d.reason());
    }
    return out;
  };
  const std::string no_entity = "Which of these is right?";
  pb::AnswerResponse own;
  ASSERT_OK(Ask("extractive", &own, "", no_entity, /*with_options=*/false));
  EXPECT_THAT(illama_flags(own), ::testing::IsEmpty());
  EXPECT_GT(own.evidence_size(), 0);

  pb::AnswerResponse hybrid;
  ASSERT_OK(Ask("extractive", &hybrid, "ibrp", no_entity, /*with_options=*/false));
  EXPECT_THAT(illama_flags(hybrid),
              ::testing::ElementsAre(HasSubstr("documents in dense order: no aligned entities for "
                                               "the trained re-ranker (ibrp hybrid)")));
  pb::AnswerResponse hybrid_with_entity;
  ASSERT_OK(Ask("extractive", &hybrid_with_entity, "ibrp"));
  EXPECT_THAT(illama_flags(hybrid_with_entity), ::testing::IsEmpty());
  EXPECT_EQ(hybrid_with_entity.answer().option_letter(), "A");

  pb::AnswerResponse refused;
  const grpc::Status status = Ask("extractive", &refused, "cross-encoder");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              HasSubstr("pipeline.illama_reranker: \"cross-encoder\" is not encoder or ibrp"));
}

TEST_F(IllamaModeTest, ExtractiveBackendAnswersFromTheDocumentsTriples) {
  PublishDocuments(dir_.path());
  StartSuite();
  pb::AnswerResponse response;
  const grpc::Status status = Ask("extractive", &response);
  ASSERT_OK(status);
  EXPECT_TRUE(llm_->requests().empty());
  EXPECT_EQ(response.answer().backend(), "extractive");
  EXPECT_EQ(response.answer().option_letter(), "A");
  bool cites_metformin = false;
  for (const pb::EvidenceTriple& t : response.evidence()) {
    cites_metformin |= t.head().name() == "Metformin" && t.relation() == "treats";
  }
  EXPECT_TRUE(cites_metformin);
  EXPECT_EQ(response.versions().kg_version(), "1");
}

// A model whose encoder is not the documents' (published before `ibgr docs build` ran again)
// must degrade the answer, flagged, not fail every illama question.
TEST_F(IllamaModeTest, DocumentsOfAnotherEncoderDegradeInsteadOfFailing) {
  kgstore::KgStoreOptions options;
  options.snapshot_dir = kgstore::SnapshotDir(dir_.path(), 1);
  options.read_only = true;
  auto store = kgstore::KgStore::Open(options);
  ASSERT_OK(store);
  auto built = retriever::BuildSubgraphDocuments(**store, retriever::HashNgramEmbedder(64).value(),
                                                 retriever::DocumentsBuildOptions(), dir_.path());
  ASSERT_OK(built);
  StartSuite();
  pb::AnswerResponse response;
  const grpc::Status status = Ask("extractive", &response);
  ASSERT_OK(status);
  EXPECT_TRUE(response.evidence().empty());
  bool flagged = false;
  for (const pb::Degradation& d : response.degraded()) {
    if (d.component() != "illama") continue;
    flagged = true;
    EXPECT_THAT(d.reason(), HasSubstr("document retrieval failed"));
    EXPECT_THAT(d.reason(), HasSubstr("encoder"));
  }
  EXPECT_TRUE(flagged);
}

TEST_F(IllamaModeTest, WithoutDocumentsTheModeIsFailedPrecondition) {
  StartSuite();
  pb::AnswerResponse response;
  const grpc::Status status = Ask("extractive", &response);
  EXPECT_THAT(status, StatusIs(grpc::StatusCode::FAILED_PRECONDITION,
                               HasSubstr("no documents artifact; run ibgr docs build")));
}

}  // namespace
}  // namespace ibgraphrag::gateway
