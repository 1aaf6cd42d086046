// The gateway's modes end to end through the AnswerPipeline: scripted alignment and retriever in
// process, a real reasoner server whose LLM backend is the fake OpenAI-compatible server, so the
// prompts of every LLM step are asserted as sent; and the same with the extractive backend.

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/test_util/fake_openai_server.h"
#include "common/test_util/status_matchers.h"
#include "common/utf8.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ibgraphrag/v1/alignment.grpc.pb.h"
#include "ibgraphrag/v1/retriever.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "services/gateway/answer_pipeline.h"
#include "services/gateway/request_validation.h"
#include "services/reasoner/reasoner_server.h"

namespace ibgraphrag::gateway {
namespace {

namespace pb = ibgraphrag::v1;
using ::ibgraphrag::common::test_util::FakeOpenAiServer;
using ::ibgraphrag::common::test_util::FakeResponse;
using ::ibgraphrag::common::test_util::RecordedRequest;
using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kQuestion[] = "Which drug treats myocardial infarction?";

// Answers with the entities a test sets, whatever the text; records the texts.
class FakeAlignment final : public pb::AlignmentService::Service {
 public:
  std::vector<std::string> texts() {
    std::lock_guard<std::mutex> lock(mu_);
    return texts_;
  }
  void Add(uint32_t id, const std::string& name, const std::string& type, uint32_t begin) {
    pb::AlignedEntity* e = kept_.add_kept();
    e->mutable_entity()->set_id(id);
    e->mutable_entity()->set_name(name);
    e->mutable_entity()->set_type(type);
    e->mutable_mention()->set_begin(begin);
    e->mutable_mention()->set_end(begin + 1);
  }
  // A candidate alignment proposed for the mention at `begin` and rejected (below tau).
  void AddRejected(uint32_t id, const std::string& name, uint32_t begin, float link_similarity) {
    pb::AlignedEntity* e = kept_.add_rejected();
    e->mutable_entity()->set_id(id);
    e->mutable_entity()->set_name(name);
    e->mutable_mention()->set_begin(begin);
    e->mutable_mention()->set_end(begin + 1);
    e->set_link_similarity(link_similarity);
  }

 private:
  grpc::Status Align(grpc::ServerContext*, const pb::AlignRequest* request,
                     pb::AlignResponse* response) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      texts_.push_back(request->text());
    }
    *response = kept_;
    return grpc::Status::OK;
  }
  pb::AlignResponse kept_;
  std::mutex mu_;
  std::vector<std::string> texts_;
};

void AddTriple(pb::RetrieveResponse* response, uint32_t head_id, const std::string& head,
               const std::string& relation, uint32_t tail_id, const std::string& tail,
               float score) {
  pb::EvidenceTriple* t = response->add_triples();
  t->mutable_head()->set_id(head_id);
  t->mutable_head()->set_name(head);
  t->set_relation(relation);
  t->mutable_tail()->set_id(tail_id);
  t->mutable_tail()->set_name(tail);
  t->set_score(score);
  t->set_hop(1);
}

// Records every request and answers with what the test's handler puts in the response.
class FakeRetriever final : public pb::RetrieverService::Service {
 public:
  using Handler = std::function<void(const pb::RetrieveRequest&, pb::RetrieveResponse*)>;
  // Requests in this scoring mode fail UNAVAILABLE.
  void FailMode(pb::ScoringMode mode) { failing_mode_ = mode; }
  void SetHandler(Handler handler) { handler_ = std::move(handler); }
  std::vector<pb::RetrieveRequest> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  grpc::Status Retrieve(grpc::ServerContext*, const pb::RetrieveRequest* request,
                        pb::RetrieveResponse* response) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(*request);
    }
    if (request->mode() == failing_mode_) {
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "retriever restarting");
    }
    if (handler_) handler_(*request, response);
    response->set_model_version("7");
    response->set_kg_version("kg-1");
    return grpc::Status::OK;
  }

  Handler handler_;
  pb::ScoringMode failing_mode_ = pb::SCORING_MODE_UNSPECIFIED;
  std::mutex mu_;
  std::vector<pb::RetrieveRequest> requests_;
};

// kg_rank's neighbourhood of myocardial infarction (id 5). COSINE against the expanded query (it
// carries the draft answer "B) Aspirin"): three one-hop triples, the second a word-for-word
// repeat of the first (MMR drops it for the third). IBRP, and COSINE against the bare question
// (the encoder re-ranker): the symptom triple first.
void MyocardialInfarctionNeighbourhood(const pb::RetrieveRequest& request,
                                       pb::RetrieveResponse* response) {
  const bool trained =
      request.mode() == pb::SCORING_MODE_IBRP ||
      (request.mode() == pb::SCORING_MODE_COSINE && request.question() == kQuestion);
  AddTriple(response, 1, "Aspirin", "drug treats disease", 5, "Myocardial infarction",
            trained ? 0.3f : 0.9f);
  AddTriple(response, 9, "Aspirin", "drug treats disease", 5, "Myocardial infarction",
            trained ? 0.2f : 0.6f);
  AddTriple(response, 5, "Myocardial infarction", "disease presents symptom", 7, "Chest pain",
            trained ? 0.8f : 0.55f);
}

class ModeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto fake = FakeOpenAiServer::Start();
    ASSERT_OK(fake);
    llm_ = *std::move(fake);
    reasoner::ReasonerServer::Options options;
    options.server.service_name = "reasoner";
    options.server.listen_host = "127.0.0.1";
    options.server.port = 0;
    options.server.metrics_port = -1;
    options.server.drain_deadline = absl::Seconds(2);
    reasoner::LlmBackendConfig backend;
    backend.name = "fake";
    backend.base_url = llm_->base_url();
    backend.model = "fake-model";
    backend.max_retries = 0;
    options.reasoner.backends = {backend};
    options.reasoner.log = [](absl::string_view) {};
    auto reasoner = reasoner::ReasonerServer::BuildAndStart(options);
    ASSERT_OK(reasoner);
    reasoner_ = *std::move(reasoner);

    grpc::ServerBuilder builder;
    builder.RegisterService(&alignment_);
    builder.RegisterService(&retriever_);
    services_ = builder.BuildAndStart();
    ASSERT_NE(services_, nullptr);
  }
  void TearDown() override {
    services_->Shutdown();
    reasoner_->Shutdown();
    llm_->Stop();
  }

  grpc::Status Run(const pb::AnswerRequest& request, pb::AnswerResponse* response,
                   PipelineSink* sink = nullptr) {
    PipelineConfig config = config_;
    config.kg_rank.mmr_top_k = 2;
    Upstreams upstreams;
    upstreams.alignment = services_->InProcessChannel(grpc::ChannelArguments());
    upstreams.retriever = upstreams.alignment;
    upstreams.reasoner = grpc::CreateChannel(absl::StrCat("127.0.0.1:", reasoner_->port()),
                                             grpc::InsecureChannelCredentials());
    AnswerPipeline pipeline(config, upstreams);
    EXPECT_OK(ValidateAnswerRequest(request));
    grpc::ServerContext context;
    return pipeline.Run(context, request, response, sink);
  }

  // The last user message of the index-th chat request the LLM received.
  std::string UserPrompt(size_t index) { return Body(index)["messages"].back()["content"]; }
  nlohmann::json Body(size_t index) {
    const auto requests = llm_->requests();
    if (index >= requests.size())
      return nlohmann::json::object({{"messages", {{{"content", ""}}}}});
    return nlohmann::json::parse(requests[index].body);
  }

  PipelineConfig config_;  // what Run() answers with (kg_rank.mmr_top_k = 2)
  std::unique_ptr<FakeOpenAiServer> llm_;
  std::unique_ptr<reasoner::ReasonerServer> reasoner_;
  FakeAlignment alignment_;
  FakeRetriever retriever_;
  std::unique_ptr<grpc::Server> services_;
};

class KgRankModeTest : public ModeTest {
 protected:
  void SetUp() override {
    ModeTest::SetUp();
    alignment_.Add(5, "Myocardial infarction", "disease", 18);
    retriever_.SetHandler(MyocardialInfarctionNeighbourhood);
  }
  grpc::Status Answer(const std::string& backend, pb::AnswerResponse* response,
                      PipelineSink* sink = nullptr) {
    pb::AnswerRequest request;
    request.set_question(kQuestion);
    request.add_options("Metformin");
    request.add_options("Aspirin");
    request.mutable_pipeline()->set_mode("kg_rank");
    request.mutable_pipeline()->set_reasoner_backend(backend);
    return Run(request, response, sink);
  }
};

TEST_F(KgRankModeTest, ExtractsTermsDraftsAnAnswerThenRanksOneHopTriplesAgainstIt) {
  llm_->Enqueue(FakeResponse::Completion("ans: myocardial infarction\nans: drug"));
  llm_->Enqueue(FakeResponse::Completion(
      "To answer the question, we have to find a drug for it. Therefore, the answers are:\n"
      "ans: B) Aspirin"));
  llm_->Enqueue(FakeResponse::Completion(
      "From the triples we can see that (Aspirin, drug treats disease, Myocardial infarction). "
      "Therefore, the answers are:\nans: B) Aspirin"));
  pb::AnswerResponse response;
  const grpc::Status status = Answer("fake", &response);
  ASSERT_OK(status);

  // Step 1, NER: the LLM lists the question's terms; alignment maps them (one text, a term a
  // line) to the entities whose neighbourhoods are ranked.
  ASSERT_EQ(llm_->requests().size(), 3u);
  EXPECT_THAT(Body(0)["messages"][0]["content"].get<std::string>(),
              HasSubstr("Extract the medical terminologies"));
  EXPECT_EQ(UserPrompt(0), absl::StrCat("Question: ", kQuestion));
  EXPECT_EQ(alignment_.texts().back(), "myocardial infarction\ndrug");
  // Step 2, answer expansion: the draft prompt carries the question and no triples.
  const std::string draft = UserPrompt(1);
  EXPECT_THAT(draft, HasSubstr(kQuestion));
  EXPECT_THAT(draft, Not(HasSubstr("(Aspirin, drug treats disease")));
  // Step 3, ranking: one-hop cosine ranking against question + draft, then the trained scorer.
  const std::vector<pb::RetrieveRequest> calls = retriever_.requests();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].mode(), pb::SCORING_MODE_COSINE);
  EXPECT_EQ(calls[0].max_hops(), 1u);
  EXPECT_EQ(calls[0].top_k(), 200u);
  EXPECT_THAT(calls[0].question(), HasSubstr(kQuestion));
  EXPECT_THAT(calls[0].question(), HasSubstr("B) Aspirin"));
  // Re-ranked by the baseline's own stand-in: encoder similarity to the question itself.
  EXPECT_EQ(calls[1].mode(), pb::SCORING_MODE_COSINE);
  EXPECT_EQ(calls[1].question(), kQuestion);
  EXPECT_TRUE(response.versions().retriever_model_version().empty());  // no IBRP model used
  // MMR kept the first triple and the symptom triple over the repeat; re-ranking put the symptom
  // triple first.
  ASSERT_EQ(response.evidence_size(), 2);
  EXPECT_EQ(response.evidence(0).relation(), "disease presents symptom");
  EXPECT_EQ(response.evidence(1).head().id(), 1u);
  // Step 4, the answer: the final prompt lists the ranked triples, best first.
  const std::string final_prompt = UserPrompt(2);
  const size_t symptom =
      final_prompt.find("(Myocardial infarction, disease presents symptom, Chest pain)");
  const size_t treats = final_prompt.find("(Aspirin, drug treats disease, Myocardial infarction)");
  ASSERT_NE(symptom, std::string::npos);
  ASSERT_NE(treats, std::string::npos);
  EXPECT_LT(symptom, treats);
  EXPECT_EQ(response.answer().option_letter(), "B");
  EXPECT_TRUE(response.answer().used_llm());
  EXPECT_EQ(response.llm_calls(), 3u);  // NER, the draft and the answer
  EXPECT_EQ(response.degraded_size(), 0);
}

TEST_F(KgRankModeTest, WithoutAnLlmSkipsAnswerExpansionAndSaysSo) {
  pb::AnswerResponse response;
  const grpc::Status status = Answer("extractive", &response);
  ASSERT_OK(status);
  EXPECT_TRUE(llm_->requests().empty());
  const std::vector<pb::RetrieveRequest> calls = retriever_.requests();
  ASSERT_FALSE(calls.empty());
  EXPECT_EQ(calls[0].question(), kQuestion);
  ASSERT_EQ(response.degraded_size(), 2);
  EXPECT_EQ(response.degraded(0).component(), "kg_rank");
  EXPECT_EQ(response.degraded(0).reason(),
            "entities from the alignment service: the NER step was answered by 'extractive', "
            "not an LLM");
  EXPECT_EQ(response.degraded(1).component(), "kg_rank");
  EXPECT_THAT(response.degraded(1).reason(), HasSubstr("answer expansion skipped"));
  EXPECT_EQ(response.evidence_size(), 2);
  EXPECT_EQ(response.answer().option_letter(), "B");
  EXPECT_FALSE(response.answer().used_llm());
  EXPECT_EQ(response.llm_calls(), 0u);
}

// Collects AnswerStream's stage events.
class StageRecorder final : public PipelineSink {
 public:
  void OnStage(const pb::StageEvent& event) override { stages.push_back(event.stage()); }
  void OnToken(const std::string&) override {}
  std::vector<std::string> stages;
};

std::string DegradedReasons(const pb::AnswerResponse& response) {
  std::string out;
  for (const pb::Degradation& d : response.degraded()) {
    absl::StrAppend(&out, d.component(), ": ", d.reason(), "\n");
  }
  return out;
}

TEST_F(KgRankModeTest, StreamsItsStagesInOrder) {
  StageRecorder recorder;
  pb::AnswerResponse response;
  ASSERT_OK(Answer("extractive", &response, &recorder));
  EXPECT_EQ(recorder.stages,
            (std::vector<std::string>{"align", "extract", "draft", "retrieve", "reason"}));
}

TEST_F(KgRankModeTest, DegradesWithNamedReasonsWhenTheLlmFails) {
  llm_->SetDefault(FakeResponse::Error(500, "model overloaded"));
  pb::AnswerResponse response;
  const grpc::Status status = Answer("fake", &response);
  ASSERT_OK(status);
  // Every LLM step was tried; the reasoner answered extractively and the mode says what that
  // did to entity extraction and answer expansion.
  EXPECT_EQ(llm_->requests().size(), 3u);
  EXPECT_FALSE(response.answer().used_llm());
  EXPECT_EQ(response.answer().option_letter(), "B");
  const std::string reasons = DegradedReasons(response);
  EXPECT_THAT(reasons, HasSubstr("kg_rank: entities from the alignment service: the NER step "
                                 "was answered by 'extractive'"));
  EXPECT_THAT(reasons, HasSubstr("kg_rank: answer expansion skipped"));
  EXPECT_THAT(reasons, HasSubstr("llm: backend 'fake'"));
}

TEST_F(KgRankModeTest, CutsALongExpandedQueryToTheRetrieversQuestionLimit) {
  llm_->Enqueue(FakeResponse::Completion("ans: myocardial infarction"));
  std::string rationale;  // 2-byte characters, so a byte cut could split one
  while (rationale.size() < 2 * kMaxQuestionBytes) rationale += "\xC3\xA9";
  llm_->Enqueue(FakeResponse::Completion(absl::StrCat(rationale, "\nans: B) Aspirin")));
  llm_->Enqueue(FakeResponse::Completion("ans: B) Aspirin"));
  pb::AnswerResponse response;
  const grpc::Status status = Answer("fake", &response);
  ASSERT_OK(status);
  const std::vector<pb::RetrieveRequest> calls = retriever_.requests();
  ASSERT_FALSE(calls.empty());
  EXPECT_THAT(calls[0].question(), HasSubstr(kQuestion));
  for (const pb::RetrieveRequest& r : calls) {
    EXPECT_LE(r.question().size(), kMaxQuestionBytes);
    EXPECT_TRUE(common::IsValidUtf8(r.question()));
  }
  EXPECT_EQ(response.evidence_size(), 2);
  EXPECT_THAT(DegradedReasons(response),
              HasSubstr("was cut to the retriever's 16384-byte question limit"));
}

// The hybrid (pipeline.kg_rank_reranker = "ibrp") re-ranks with IBGraphRAG's trained scorer
// (the symptom triple first) and says which model; when that fails, the MMR order of the
// expanded-query ranking stays (aspirin first) and the answer says so.
TEST_F(KgRankModeTest, TheIbrpHybridReRanksWithTheTrainedScorerAndKeepsMmrOrderOnFailure) {
  pb::AnswerRequest request;
  request.set_question(kQuestion);
  request.add_options("Metformin");
  request.add_options("Aspirin");
  request.mutable_pipeline()->set_mode("kg_rank");
  request.mutable_pipeline()->set_reasoner_backend("fake");
  request.mutable_pipeline()->set_kg_rank_reranker("ibrp");
  auto script_llm = [&] {
    llm_->Enqueue(FakeResponse::Completion("ans: myocardial infarction"));
    llm_->Enqueue(FakeResponse::Completion("Therefore, the answers are:\nans: B) Aspirin"));
    llm_->Enqueue(FakeResponse::Completion("Therefore, the answers are:\nans: B) Aspirin"));
  };
  script_llm();
  pb::AnswerResponse hybrid;
  ASSERT_OK(Run(request, &hybrid));
  ASSERT_EQ(retriever_.requests().size(), 2u);
  EXPECT_EQ(retriever_.requests()[1].mode(), pb::SCORING_MODE_IBRP);
  ASSERT_EQ(hybrid.evidence_size(), 2);
  EXPECT_EQ(hybrid.evidence(0).relation(), "disease presents symptom");

  retriever_.FailMode(pb::SCORING_MODE_IBRP);
  script_llm();
  pb::AnswerResponse response;
  ASSERT_OK(Run(request, &response));
  ASSERT_EQ(response.evidence_size(), 2);
  EXPECT_EQ(response.evidence(0).head().id(), 1u);  // most similar first, as MMR chose
  EXPECT_THAT(DegradedReasons(response),
              HasSubstr("re-ranking by the trained scorer (ibrp hybrid) failed (UNAVAILABLE: "
                        "retriever restarting); MMR order kept"));
  // An unknown re-ranker is refused, naming the field.
  request.mutable_pipeline()->set_kg_rank_reranker("cross-encoder");
  EXPECT_THAT(ValidateAnswerRequest(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("pipeline.kg_rank_reranker: \"cross-encoder\" is not encoder")));
}

// kg_rag: psoriasis (10) and Takayasu arteritis (11) in the question, HLA-B (20) and TERT (21)
// found in options A and B. Each node's one-hop sentences: one close to any query (cosine 0.9),
// the rest far below the thresholds.
constexpr char kGeneQuestion[] = "Which gene is associated with psoriasis and Takayasu arteritis?";

void GeneNeighbourhoods(const pb::RetrieveRequest& request, pb::RetrieveResponse* response) {
  const uint32_t node = request.topic_entity_ids(0);
  auto add = [&](uint32_t head, const char* head_name, const char* relation, uint32_t tail,
                 const char* tail_name, double cosine) {
    AddTriple(response, head, head_name, relation, tail, tail_name,
              static_cast<float>((1 + cosine) / 2));
    response->mutable_triples(response->triples_size() - 1)->set_source("disgenet");
  };
  switch (node) {
    case 10:
      add(10, "Psoriasis", "disease associates gene", 20, "HLA-B", 0.9);
      add(10, "Psoriasis", "disease presents symptom", 30, "Itching", 0.2);
      add(10, "Psoriasis", "disease presents symptom", 31, "Scaling", 0.1);
      add(10, "Psoriasis", "disease localizes anatomy", 32, "Skin", 0.0);
      break;
    case 11:
      add(11, "Takayasu arteritis", "disease associates gene", 20, "HLA-B", 0.9);
      add(11, "Takayasu arteritis", "disease presents symptom", 33, "Fever", 0.1);
      break;
    case 20:
      add(10, "Psoriasis", "disease associates gene", 20, "HLA-B", 0.9);
      break;
    default:
      add(node, "TERT", "gene associated with disease", 40, "Melanoma", 0.9);
      break;
  }
}

class KgRagModeTest : public ModeTest {
 protected:
  void SetUp() override {
    ModeTest::SetUp();
    const std::string question = kGeneQuestion;
    alignment_.Add(10, "Psoriasis", "disease", question.find("psoriasis"));
    alignment_.Add(11, "Takayasu arteritis", "disease", question.find("Takayasu"));
    alignment_.Add(20, "HLA-B", "gene", question.size() + 1);         // option A's line
    alignment_.Add(21, "TERT", "gene", question.size() + 1 + 5 + 1);  // option B's line
    retriever_.SetHandler(GeneNeighbourhoods);
  }
  static pb::AnswerRequest GeneQuestion(const std::string& backend) {
    pb::AnswerRequest request;
    request.set_question(kGeneQuestion);
    request.add_options("HLA-B");
    request.add_options("TERT");
    request.add_options("SLC14A2");
    request.mutable_pipeline()->set_mode("kg_rag");
    request.mutable_pipeline()->set_reasoner_backend(backend);
    return request;
  }
};

TEST_F(KgRagModeTest, RunsEveryStrategyPrunesContextAndVotesOverThePapersTemperatures) {
  llm_->SetDefault(FakeResponse::Completion("{\"answer\": \"HLA-B\"}"));
  pb::AnswerResponse response;
  const grpc::Status status = Run(GeneQuestion("fake"), &response);
  ASSERT_OK(status);

  // Retrieval: the full question (both diseases), each disease, options A and B (C has no
  // entity), the diseases combined; every call one-hop encoder similarity.
  std::vector<std::string> queries;
  for (const pb::RetrieveRequest& r : retriever_.requests()) {
    EXPECT_EQ(r.mode(), pb::SCORING_MODE_COSINE);
    EXPECT_EQ(r.max_hops(), 1u);
    queries.push_back(r.question());
  }
  EXPECT_EQ(queries, (std::vector<std::string>{
                         kGeneQuestion, kGeneQuestion, "Psoriasis", "Takayasu arteritis",
                         "HLA-B disease association", "TERT disease association",
                         "Psoriasis Takayasu arteritis shared genetic basis",
                         "Psoriasis Takayasu arteritis shared genetic basis"}));

  // Three samples at the paper's temperatures, each with KG-RAG's prompt (mode 3: JSON context
  // with the prior knowledge, the quality tier and its strategy).
  ASSERT_EQ(llm_->requests().size(), 3u);
  std::vector<double> temperatures;
  for (size_t i = 0; i < 3; ++i) temperatures.push_back(Body(i)["temperature"].get<double>());
  std::sort(temperatures.begin(), temperatures.end());
  EXPECT_NEAR(temperatures[0], 0.0, 1e-6);
  EXPECT_NEAR(temperatures[1], 0.3, 1e-6);
  EXPECT_NEAR(temperatures[2], 0.5, 1e-6);
  const nlohmann::json body = Body(0);
  EXPECT_THAT(body["messages"][0]["content"].get<std::string>(),
              HasSubstr("You are an expert biomedical researcher. For answering the Question at "
                        "the end, you need to first read the Context provided."));
  const std::string user = UserPrompt(0);
  EXPECT_TRUE(absl::StartsWith(user, "Context: {")) << user;
  EXPECT_THAT(user, HasSubstr("\"retrieved_information\": \"Psoriasis disease associates gene "
                              "HLA-B and Provenance of this association is disgenet"));
  EXPECT_THAT(user, HasSubstr("Provenance & Symptoms information is useless."));
  EXPECT_THAT(user, HasSubstr("\"context_quality\": \"MEDIUM - context from 3 sources\""));
  EXPECT_THAT(user, Not(HasSubstr("Itching")));  // below the percentile and the minimum
  EXPECT_THAT(user, HasSubstr("Question: Which gene is associated with psoriasis and Takayasu "
                              "arteritis? Given list is: HLA-B, TERT, SLC14A2"));

  EXPECT_EQ(response.answer().option_letter(), "A");
  EXPECT_FLOAT_EQ(response.answer().agreement(), 1.0f);
  EXPECT_EQ(response.answer().votes_size(), 3);
  EXPECT_EQ(response.llm_calls(), 3u);
  EXPECT_EQ(response.answer().prompt_version(), "kg_rag.mode3.medium");
  EXPECT_EQ(response.degraded_size(), 0);
}

// A request's minimum similarity replaces the gateway's. At 0.95 (0.665, 0.57 and 0.71 for the
// per-disease, option and combined strategies) the full question's context, both diseases' HLA-B
// sentences (cosine 0.9), is pruned away; the diseases' own strategies keep theirs. So the
// two-disease context reaches the prompt once (the combined strategy) instead of twice.
TEST_F(KgRagModeTest, ARequestsMinimumSimilarityPrunesTheContext) {
  llm_->SetDefault(FakeResponse::Completion("{\"answer\": \"HLA-B\"}"));
  pb::AnswerResponse by_default, strict;
  ASSERT_OK(Run(GeneQuestion("fake"), &by_default));
  pb::AnswerRequest request = GeneQuestion("fake");
  request.mutable_pipeline()->set_kg_rag_minimum_similarity(0.95F);
  ASSERT_OK(Run(request, &strict));
  const std::string both =
      "Psoriasis disease associates gene HLA-B and Provenance of this association is disgenet. "
      "Takayasu arteritis disease associates gene HLA-B";
  auto count = [&](const std::string& prompt) {
    int n = 0;
    for (size_t at = prompt.find(both); at != std::string::npos; at = prompt.find(both, at + 1)) {
      ++n;
    }
    return n;
  };
  EXPECT_EQ(count(UserPrompt(0)), 2);  // by default: full question and diseases combined
  EXPECT_EQ(count(UserPrompt(3)), 1);  // 0.95: the combined strategy only
}

TEST_F(KgRagModeTest, RendersThePapersPromptModes) {
  llm_->SetDefault(FakeResponse::Completion("{\"answer\": \"HLA-B\"}"));
  pb::AnswerRequest request = GeneQuestion("fake");
  request.mutable_pipeline()->mutable_self_consistency()->add_temperatures(0.0f);
  std::vector<std::string> prompts;
  for (uint32_t mode : {0u, 1u, 2u}) {
    request.mutable_pipeline()->set_kg_rag_prompt_mode(mode);
    pb::AnswerResponse response;
    ASSERT_OK(Run(request, &response));
    EXPECT_EQ(response.answer().prompt_version(), absl::StrCat("kg_rag.mode", mode, ".medium"));
    prompts.push_back(UserPrompt(llm_->requests().size() - 1));
  }
  EXPECT_TRUE(absl::StartsWith(prompts[0], "Context: Psoriasis disease associates gene HLA-B"));
  EXPECT_THAT(prompts[0], Not(HasSubstr("Provenance & Symptoms information is useless.")));
  EXPECT_THAT(prompts[0], HasSubstr("\nContext quality: MEDIUM - context from 3 sources."));
  EXPECT_TRUE(absl::StartsWith(prompts[1], "Context: {\n  \"retrieved_information\""));
  EXPECT_THAT(prompts[1], Not(HasSubstr("prior_knowledge_notes")));
  EXPECT_THAT(prompts[2], HasSubstr(". Provenance & Symptoms information is useless. Similar "
                                    "diseases tend to have similar gene associations."));
}

TEST_F(KgRagModeTest, AnswersWithoutContextWhenRetrievalFailsAndSaysSo) {
  retriever_.FailMode(pb::SCORING_MODE_COSINE);
  llm_->SetDefault(FakeResponse::Completion("{\"answer\": \"HLA-B\"}"));
  pb::AnswerResponse response;
  const grpc::Status status = Run(GeneQuestion("fake"), &response);
  ASSERT_OK(status);
  EXPECT_EQ(response.evidence_size(), 0);
  EXPECT_EQ(response.answer().prompt_version(), "kg_rag.mode3.none");
  EXPECT_THAT(UserPrompt(0), HasSubstr("\"context_quality\": \"NONE - context from 0 sources\""));
  EXPECT_THAT(DegradedReasons(response),
              HasSubstr("kg_rag: strategy full_question: retrieval for entity 10 failed "
                        "(UNAVAILABLE: retriever restarting)"));
}

TEST_F(KgRagModeTest, AnswersExtractivelyFromThePrunedContext) {
  pb::AnswerResponse response;
  const grpc::Status status = Run(GeneQuestion("extractive"), &response);
  ASSERT_OK(status);
  EXPECT_TRUE(llm_->requests().empty());
  EXPECT_EQ(response.answer().option_letter(), "A");
  EXPECT_FALSE(response.answer().used_llm());
  for (const pb::EvidenceTriple& t : response.evidence()) {
    EXPECT_NE(t.tail().name(), "Itching");
  }
}

// give: myocardial infarction (5) with the concepts alignment proposed for its mention, acute
// myocardial infarction (6) and myocarditis (7); aspirin (1, option B) with aspirin lysine (9).
// The KG links aspirin to myocardial infarction and acute MI to MI.
void GiveKgLinks(const pb::RetrieveRequest& request, pb::RetrieveResponse* response) {
  EXPECT_EQ(request.mode(), pb::SCORING_MODE_SHORTEST_PATH);
  AddTriple(response, 1, "Aspirin", "drug treats disease", 5, "Myocardial infarction", 0.9f);
  AddTriple(response, 6, "Acute myocardial infarction", "disease resembles disease", 5,
            "Myocardial infarction", 0.8f);
  AddTriple(response, 1, "Aspirin", "drug treats disease", 99, "Headache", 0.7f);  // no member
}

// The LLM: names relations (none for myocarditis), affirms aspirin for acute MI, rejects the
// rest, and answers B.
FakeResponse GiveLlm(const RecordedRequest& request) {
  const nlohmann::json body = nlohmann::json::parse(request.body);
  const std::string system = body["messages"][0]["content"];
  const std::string user = body["messages"].back()["content"];
  if (absl::StrContains(system, "Name the relation")) {
    return FakeResponse::Completion(absl::StrContains(user, "Myocarditis") ? "ans: none"
                                                                           : "ans: salt form of");
  }
  if (absl::StrContains(system, "whether the statement is true")) {
    if (absl::StrContains(user, "(Aspirin lysine, drug treats disease, Acute myocardial")) {
      return FakeResponse::Completion("ans: maybe");  // in neither set
    }
    return FakeResponse::Completion(
        absl::StrContains(user, "(Aspirin, drug treats disease, Acute myocardial infarction)")
            ? "ans: yes"
            : "ans: no");
  }
  return FakeResponse::Completion(
      "From the knowledge we can see that aspirin treats it. Therefore, the answers are:\n"
      "ans: B) Aspirin");
}

class GiveModeTest : public ModeTest {
 protected:
  void SetUp() override {
    ModeTest::SetUp();
    const uint32_t mi = 18, aspirin = std::string(kQuestion).size() + 1 + 9 + 1;
    alignment_.Add(5, "Myocardial infarction", "disease", mi);
    alignment_.Add(1, "Aspirin", "compound", aspirin);
    alignment_.AddRejected(7, "Myocarditis", mi, 0.5f);
    alignment_.AddRejected(6, "Acute myocardial infarction", mi, 0.9f);
    alignment_.AddRejected(9, "Aspirin lysine", aspirin, 0.8f);
    retriever_.SetHandler(GiveKgLinks);
  }
  grpc::Status Answer(const std::string& backend, pb::AnswerResponse* response) {
    pb::AnswerRequest request;
    request.set_question(kQuestion);
    request.add_options("Metformin");
    request.add_options("Aspirin");
    request.mutable_pipeline()->set_mode("give");
    request.mutable_pipeline()->set_reasoner_backend(backend);
    return Run(request, response);
  }
  // The user prompts of the requests whose system prompt contains `marker`, in order.
  std::vector<std::string> UserPrompts(const std::string& marker) {
    std::vector<std::string> out;
    for (size_t i = 0; i < llm_->requests().size(); ++i) {
      const nlohmann::json body = Body(i);
      if (absl::StrContains(body["messages"][0]["content"].get<std::string>(), marker)) {
        out.push_back(body["messages"].back()["content"]);
      }
    }
    return out;
  }
};

TEST_F(GiveModeTest, ChecksCandidateLinksThenAnswersProgressively) {
  llm_->SetHandler(GiveLlm);
  pb::AnswerResponse response;
  const grpc::Status status = Answer("fake", &response);
  ASSERT_OK(status);

  // Inner-group links: MI-myocarditis and aspirin-aspirin lysine (MI-acute MI is in the KG).
  EXPECT_EQ(UserPrompts("Name the relation"),
            (std::vector<std::string>{"Concept A: Myocardial infarction\nConcept B: Myocarditis",
                                      "Concept A: Aspirin\nConcept B: Aspirin lysine"}));
  // Inter-group links: the KG's "drug treats disease" for every member pair it does not link.
  const std::vector<std::string> checks = UserPrompts("whether the statement is true");
  ASSERT_EQ(checks.size(), 5u);
  EXPECT_EQ(checks[0], "Statement: (Aspirin, drug treats disease, Acute myocardial infarction)");
  EXPECT_EQ(checks[4], "Statement: (Aspirin lysine, drug treats disease, Myocarditis)");

  // Progressive answers: affirmative knowledge, then the counterfactual, then the KG facts.
  const std::vector<std::string> answers = UserPrompts("Answer the question with the knowledge");
  ASSERT_EQ(answers.size(), 3u);
  EXPECT_THAT(answers[0], HasSubstr("(Aspirin, drug treats disease, Acute myocardial infarction)"));
  EXPECT_THAT(answers[0], HasSubstr("(Aspirin, salt form of, Aspirin lysine)"));
  EXPECT_THAT(answers[0], Not(HasSubstr("Myocarditis")));
  EXPECT_THAT(answers[0], Not(HasSubstr("Counterfactual")));
  EXPECT_THAT(answers[1], HasSubstr("Your answer from it: B) Aspirin"));
  EXPECT_THAT(answers[1], HasSubstr("Counterfactual knowledge (links your medical knowledge "
                                    "rejected; they do not hold):\n(Aspirin, drug treats disease, "
                                    "Myocarditis)"));
  EXPECT_THAT(answers[1], Not(HasSubstr("Knowledge graph facts")));
  EXPECT_THAT(answers[2], HasSubstr("Knowledge graph facts (certain):\n(Aspirin, drug treats "
                                    "disease, Myocardial infarction)"));
  EXPECT_THAT(answers[2], Not(HasSubstr("Headache")));
  // The "maybe" link is in no prompt: neither affirmed nor counterfactual.
  for (const std::string& prompt : answers) {
    EXPECT_THAT(prompt, Not(HasSubstr("(Aspirin lysine, drug treats disease, Acute myocardial")));
  }

  EXPECT_EQ(response.evidence_size(), 2);  // the KG links among the groups
  EXPECT_EQ(response.answer().option_letter(), "B");
  EXPECT_EQ(response.answer().prompt_version(), "give.answer3.v1");
  EXPECT_EQ(response.llm_calls(), 10u);  // 2 relations, 5 checks, 3 answers
  EXPECT_EQ(response.degraded_size(), 0) << DegradedReasons(response);
}

TEST_F(GiveModeTest, WithoutAnLlmKeepsOnlyKgLinksAndSaysSo) {
  pb::AnswerResponse response;
  const grpc::Status status = Answer("extractive", &response);
  ASSERT_OK(status);
  EXPECT_TRUE(llm_->requests().empty());
  EXPECT_EQ(response.evidence_size(), 2);
  EXPECT_EQ(response.answer().option_letter(), "B");
  EXPECT_EQ(response.llm_calls(), 0u);
  EXPECT_THAT(DegradedReasons(response),
              HasSubstr("give: no LLM answered: only the 2 links present in the KG are kept"));
}

TEST_F(GiveModeTest, ASpentCheckWindowStopsTheChecksButNotTheAnswers) {
  config_.give.check_share = 0;  // the window is spent before the first check
  llm_->SetHandler(GiveLlm);
  pb::AnswerResponse response;
  const grpc::Status status = Answer("fake", &response);
  ASSERT_OK(status);
  EXPECT_TRUE(UserPrompts("Name the relation").empty());
  EXPECT_TRUE(UserPrompts("whether the statement is true").empty());
  EXPECT_EQ(UserPrompts("Answer the question with the knowledge").size(), 3u);
  EXPECT_EQ(response.llm_calls(), 3u);
  EXPECT_EQ(response.answer().option_letter(), "B");
  const std::string reasons = DegradedReasons(response);
  EXPECT_THAT(reasons, HasSubstr("give: 7 of 7 candidate links were not checked: the check "
                                 "window (0 of the time left) was spent"));
  EXPECT_THAT(reasons, Not(HasSubstr("no LLM answered")));
}

// give's intermediate groups: the KG links aspirin's group to myocardial infarction's only
// through PTGS1 (two hops); Headache hangs off aspirin alone (no intermediate).
void GiveTwoHopLinks(const pb::RetrieveRequest& request, pb::RetrieveResponse* response) {
  EXPECT_EQ(request.mode(), pb::SCORING_MODE_SHORTEST_PATH);
  AddTriple(response, 6, "Acute myocardial infarction", "disease resembles disease", 5,
            "Myocardial infarction", 0.8f);
  AddTriple(response, 1, "Aspirin", "drug treats disease", 99, "Headache", 0.7f);
  if (request.max_hops() < 2) return;
  AddTriple(response, 1, "Aspirin", "drug inhibits gene", 20, "PTGS1", 0.98f);
  AddTriple(response, 20, "PTGS1", "gene associated with disease", 5, "Myocardial infarction",
            0.98f);
}

// Affirms PTGS1 for acute MI, rejects every other statement, names no relation.
FakeResponse GiveIntermediateLlm(const RecordedRequest& request) {
  const nlohmann::json body = nlohmann::json::parse(request.body);
  const std::string system = body["messages"][0]["content"];
  const std::string user = body["messages"].back()["content"];
  if (absl::StrContains(system, "Name the relation")) return FakeResponse::Completion("ans: none");
  if (absl::StrContains(system, "whether the statement is true")) {
    return FakeResponse::Completion(
        absl::StrContains(user, "(PTGS1, gene associated with disease, Acute myocardial")
            ? "ans: yes"
            : "ans: no");
  }
  return FakeResponse::Completion("Aspirin inhibits PTGS1.\nans: B) Aspirin");
}

TEST_F(GiveModeTest, ChecksLinksViaAnIntermediateGroupBetweenUnlinkedGroups) {
  retriever_.SetHandler(GiveTwoHopLinks);
  llm_->SetHandler(GiveIntermediateLlm);
  pb::AnswerResponse response;
  const grpc::Status status = Answer("fake", &response);
  ASSERT_OK(status);

  // One 1-hop read of the groups' links, then one 2-hop read around the unlinked pair.
  const std::vector<pb::RetrieveRequest> reads = retriever_.requests();
  ASSERT_EQ(reads.size(), 2u);
  EXPECT_EQ(reads[0].max_hops(), 1);
  EXPECT_EQ(reads[1].max_hops(), 2);
  EXPECT_THAT(reads[1].topic_entity_ids(), ::testing::ElementsAre(1, 5, 6, 7, 9));

  // Links to and from the intermediate PTGS1 that the KG does not state, checked yes/no.
  EXPECT_EQ(UserPrompts("whether the statement is true"),
            (std::vector<std::string>{
                "Statement: (Aspirin lysine, drug inhibits gene, PTGS1)",
                "Statement: (PTGS1, gene associated with disease, Acute myocardial infarction)",
                "Statement: (PTGS1, gene associated with disease, Myocarditis)"}));
  const std::vector<std::string> answers = UserPrompts("Answer the question with the knowledge");
  ASSERT_EQ(answers.size(), 3u);
  EXPECT_THAT(answers[0], HasSubstr("Affirmative knowledge (links your medical knowledge "
                                    "confirmed):\n(PTGS1, gene associated with disease, Acute "
                                    "myocardial infarction)"));
  EXPECT_THAT(answers[1], HasSubstr("(Aspirin lysine, drug inhibits gene, PTGS1)\n(PTGS1, gene "
                                    "associated with disease, Myocarditis)"));
  EXPECT_THAT(answers[2], HasSubstr("(Aspirin, drug inhibits gene, PTGS1)\n(PTGS1, gene "
                                    "associated with disease, Myocardial infarction)"));
  EXPECT_THAT(answers[2], Not(HasSubstr("Headache")));

  EXPECT_EQ(response.evidence_size(), 3);  // the groups' link and the 2-hop path
  EXPECT_EQ(response.answer().option_letter(), "B");
  EXPECT_EQ(response.llm_calls(), 8u);  // 2 relations, 3 checks, 3 answers
  EXPECT_EQ(response.degraded_size(), 0) << DegradedReasons(response);
}

TEST_F(GiveModeTest, WithoutAnLlmKeepsTheIntermediatePathAsKgEvidence) {
  retriever_.SetHandler(GiveTwoHopLinks);
  pb::AnswerResponse response;
  const grpc::Status status = Answer("extractive", &response);
  ASSERT_OK(status);
  EXPECT_TRUE(llm_->requests().empty());
  ASSERT_EQ(response.evidence_size(), 3);
  EXPECT_EQ(response.evidence(1).tail().name(), "PTGS1");
  EXPECT_THAT(DegradedReasons(response),
              HasSubstr("give: no LLM answered: only the 3 links present in the KG are kept"));
}

TEST_F(GiveModeTest, TheCheckCapCountsTheIntermediateLinks) {
  config_.give.max_checks = 1;
  retriever_.SetHandler(GiveTwoHopLinks);
  llm_->SetHandler(GiveIntermediateLlm);
  pb::AnswerResponse response;
  const grpc::Status status = Answer("fake", &response);
  ASSERT_OK(status);
  EXPECT_EQ(UserPrompts("Name the relation").size(), 1u);
  EXPECT_TRUE(UserPrompts("whether the statement is true").empty());
  EXPECT_EQ(response.llm_calls(), 4u);
  EXPECT_THAT(DegradedReasons(response),
              HasSubstr("give: 4 candidate links beyond 1 were not checked"));
}

TEST_F(KgRagModeTest, ASpentRetrievalWindowSkipsTheStrategiesButStillAnswers) {
  config_.kg_rag.retrieve_share = 0;  // the window is spent before the first strategy
  llm_->SetDefault(FakeResponse::Completion("{\"answer\": \"HLA-B\"}"));
  pb::AnswerResponse response;
  const grpc::Status status = Run(GeneQuestion("fake"), &response);
  ASSERT_OK(status);
  EXPECT_TRUE(retriever_.requests().empty());
  EXPECT_EQ(response.evidence_size(), 0);
  EXPECT_THAT(DegradedReasons(response),
              HasSubstr("kg_rag: 6 of 6 retrieval strategies were not run: the retrieval window "
                        "(0 of the time left) was spent"));
  EXPECT_EQ(response.answer().option_letter(), "A");
}

TEST(PipelineModeTest, RejectsAnUnknownModeNamingTheFieldAndTheAllowedValues) {
  pb::AnswerRequest request;
  request.set_question(kQuestion);
  request.mutable_pipeline()->set_mode("graphrag");
  const absl::Status status = ValidateAnswerRequest(request);
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument,
                               ::testing::AllOf(HasSubstr("pipeline.mode"),
                                                HasSubstr("ibgraphrag, kg_rank, kg_rag, give"))));
  request.mutable_pipeline()->set_mode("kg_rank");
  EXPECT_OK(ValidateAnswerRequest(request));
  request.mutable_pipeline()->set_mode("");
  EXPECT_OK(ValidateAnswerRequest(request));
  request.mutable_pipeline()->set_kg_rag_prompt_mode(4);
  const absl::Status bad_prompt_mode = ValidateAnswerRequest(request);
  EXPECT_THAT(bad_prompt_mode, StatusIs(absl::StatusCode::kInvalidArgument,
                                        HasSubstr("pipeline.kg_rag_prompt_mode")));
  request.mutable_pipeline()->clear_kg_rag_prompt_mode();
  request.mutable_pipeline()->set_kg_rag_minimum_similarity(1.5F);
  EXPECT_THAT(ValidateAnswerRequest(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::AllOf(HasSubstr("pipeline.kg_rag_minimum_similarity"),
                                        HasSubstr("outside [-1, 1]"))));
  request.mutable_pipeline()->set_kg_rag_minimum_similarity(-1.0F);
  EXPECT_OK(ValidateAnswerRequest(request));
}

}  // namespace
}  // namespace ibgraphrag::gateway
