// AnswerPipeline against scripted in-process alignment, retriever and reasoner services: what
// the gateway asks the retriever for (issue 13: the scorer-variant switch and the candidate cap).
#include "services/gateway/answer_pipeline.h"

#include <grpcpp/grpcpp.h>

#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ibgraphrag/v1/alignment.grpc.pb.h"
#include "ibgraphrag/v1/reasoner.grpc.pb.h"
#include "ibgraphrag/v1/retriever.grpc.pb.h"

namespace ibgraphrag::gateway {
namespace {

namespace pb = ibgraphrag::v1;
using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::HasSubstr;

// One entity for every question; an option line "TTN" is read as the abbreviation of Transient
// Tachypnea of the Newborn (kept), the gene TTN rejected, as the real service did (issue 26).
class FakeAlignment final : public pb::AlignmentService::Service {
  grpc::Status Align(grpc::ServerContext*, const pb::AlignRequest* request,
                     pb::AlignResponse* response) override {
    pb::AlignedEntity* e = response->add_kept();
    e->mutable_entity()->set_id(5);
    e->mutable_entity()->set_name("type 2 diabetes mellitus");
    e->mutable_mention()->set_begin(0);
    e->mutable_mention()->set_end(4);
    // Two senses of one mention ("epilepsy": the disease and the phenotype), then a second one.
    for (const auto& [word, ids] :
         {std::pair<std::string, std::vector<uint32_t>>{"epilepsy", {11u, 12u}},
          std::pair<std::string, std::vector<uint32_t>>{"bipolar disorder", {13u}}}) {
      const size_t at = request->text().find(word);
      if (at == std::string::npos) continue;
      for (uint32_t id : ids) {
        pb::AlignedEntity* sense = response->add_kept();
        sense->mutable_entity()->set_id(id);
        sense->mutable_mention()->set_begin(static_cast<uint32_t>(at));
        sense->mutable_mention()->set_end(static_cast<uint32_t>(at + word.size()));
      }
    }
    if (const size_t at = request->text().find("\nTTN"); at != std::string::npos) {
      for (auto [list, id, type] : {std::tuple{response->mutable_kept(), 7u, "symptom"},
                                    std::tuple{response->mutable_rejected(), 8u, "gene"}}) {
        pb::AlignedEntity* option = list->Add();
        option->mutable_entity()->set_id(id);
        option->mutable_entity()->set_type(type);
        option->mutable_mention()->set_begin(static_cast<uint32_t>(at + 1));
        option->mutable_mention()->set_end(static_cast<uint32_t>(at + 4));
        option->set_dictionary_match(id == 7u);
        option->set_link_similarity(id == 7u ? 1.0F : 0.994F);
      }
    }
    return grpc::Status::OK;
  }
};

// Records the last request; serves only the residual scorer, as a version without the plain
// one would. Answers with whole triples (as a retriever that predates the interned layout does)
// unless told to answer in the interned layout: well formed, with an index out of range, or
// beside whole triples.
class FakeRetriever final : public pb::RetrieverService::Service {
 public:
  enum class Layout { kTriples, kInterned, kInternedOutOfRange, kBoth };

  pb::RetrieveRequest last() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_;
  }
  void set_layout(Layout layout) {
    std::lock_guard<std::mutex> lock(mu_);
    layout_ = layout;
  }

 private:
  grpc::Status Retrieve(grpc::ServerContext*, const pb::RetrieveRequest* request,
                        pb::RetrieveResponse* response) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      last_ = *request;
    }
    if (request->scorer_variant() == pb::SCORER_VARIANT_PLAIN) {
      return grpc::Status(
          grpc::StatusCode::FAILED_PRECONDITION,
          "scorer_variant: model version 1 has no plain scorer (it holds residual)");
    }
    Layout layout;
    {
      std::lock_guard<std::mutex> lock(mu_);
      layout = layout_;
    }
    if (layout == Layout::kTriples || layout == Layout::kBoth) {
      pb::EvidenceTriple* t = response->add_triples();
      t->mutable_head()->set_name("metformin");
      t->set_relation("drug treats disease");
      t->mutable_tail()->set_name("type 2 diabetes mellitus");
      t->set_score(0.9f);
    }
    if (layout != Layout::kTriples) {
      pb::InternedEvidence* evidence = response->mutable_interned_evidence();
      evidence->add_entities()->set_name("metformin");
      evidence->add_entities()->set_name("type 2 diabetes mellitus");
      evidence->add_relations("drug treats disease");
      evidence->add_relation_descriptions("");
      evidence->add_sources("hetionet");
      evidence->add_licenses("CC0");
      for (int i = 0; i < 2; ++i) {
        pb::InternedTriple* t = evidence->add_triples();
        t->set_head(layout == Layout::kInternedOutOfRange && i == 1 ? 5 : 0);
        t->set_tail(1);
        t->add_sources(0);
        t->set_score(0.9f - 0.1f * static_cast<float>(i));
      }
    }
    response->set_model_version("1");
    if (request->mode() == pb::SCORING_MODE_IBRP) {
      response->set_scorer_variant(pb::SCORER_VARIANT_RESIDUAL);
    }
    return grpc::Status::OK;
  }

  std::mutex mu_;
  pb::RetrieveRequest last_;
  Layout layout_ = Layout::kTriples;
};

class FakeReasoner final : public pb::ReasonerService::Service {
 public:
  pb::ReasonRequest last() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_;
  }

 private:
  grpc::Status Reason(grpc::ServerContext*, const pb::ReasonRequest* request,
                      pb::ReasonResponse* response) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      last_ = *request;
    }
    response->mutable_answer()->set_text("metformin");
    return grpc::Status::OK;
  }

  std::mutex mu_;
  pb::ReasonRequest last_;
};

class AnswerPipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.RegisterService(&alignment_);
    builder.RegisterService(&retriever_);
    builder.RegisterService(&reasoner_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
  }
  void TearDown() override { server_->Shutdown(); }

  grpc::Status Answer(const PipelineConfig& config, const pb::AnswerRequest& request,
                      pb::AnswerResponse* response) {
    Upstreams upstreams;
    upstreams.alignment = server_->InProcessChannel(grpc::ChannelArguments());
    upstreams.retriever = upstreams.alignment;
    upstreams.reasoner = upstreams.alignment;
    AnswerPipeline pipeline(config, upstreams);
    grpc::ServerContext context;
    return pipeline.Run(context, request, response, nullptr);
  }

  static pb::AnswerRequest Question() {
    pb::AnswerRequest request;
    request.set_question("type 2 diabetes: which drug?");
    return request;
  }

  FakeAlignment alignment_;
  FakeRetriever retriever_;
  FakeReasoner reasoner_;
  std::unique_ptr<grpc::Server> server_;
};

// The all-in-one's direct calls replace the channels' unary calls: each function gets the
// request the RPC would have carried and a deadline within the stage's budget, and a failed
// direct call degrades the answer exactly as a failed RPC does.
TEST_F(AnswerPipelineTest, DirectCallsReplaceTheChannelsAndDegradeAlike) {
  Upstreams upstreams;
  upstreams.alignment = server_->InProcessChannel(grpc::ChannelArguments());
  upstreams.retriever = upstreams.alignment;
  upstreams.reasoner = upstreams.alignment;
  std::vector<std::string> calls;
  absl::Time retrieve_deadline;
  pb::ReasonRequest reasoned;
  upstreams.direct.align = [&](const common::DirectCall&, const pb::AlignRequest& request,
                               pb::AlignResponse* response) {
    calls.push_back("align:" + request.text());
    response->add_kept()->mutable_entity()->set_id(9);
    return grpc::Status::OK;
  };
  grpc::Status retrieve_status = grpc::Status::OK;
  upstreams.direct.retrieve = [&](const common::DirectCall& call,
                                  const pb::RetrieveRequest& request,
                                  pb::RetrieveResponse* response) {
    calls.push_back(absl::StrCat("retrieve:", request.topic_entity_ids(0)));
    // In process the triples are built whole and moved: nothing to intern.
    EXPECT_EQ(request.evidence_layout(), pb::EVIDENCE_LAYOUT_UNSPECIFIED);
    retrieve_deadline = call.deadline;
    response->add_triples()->set_relation("direct evidence");
    return retrieve_status;
  };
  upstreams.direct.reason = [&](const common::DirectCall&, const pb::ReasonRequest& request,
                                pb::ReasonResponse* response) {
    calls.push_back("reason");
    reasoned = request;
    response->mutable_answer()->set_text("from the direct call");
    return grpc::Status::OK;
  };
  PipelineConfig config;
  config.retrieve_cap = absl::Seconds(2);
  AnswerPipeline pipeline(config, upstreams);
  grpc::ServerContext context;
  pb::AnswerResponse response;
  const absl::Time start = absl::Now();
  ASSERT_OK(pipeline.Run(context, Question(), &response, nullptr));
  EXPECT_THAT(calls,
              ::testing::ElementsAre("align:type 2 diabetes: which drug?", "retrieve:9", "reason"));
  EXPECT_GT(retrieve_deadline, start);
  EXPECT_LE(retrieve_deadline, absl::Now() + absl::Seconds(2));
  EXPECT_EQ(response.answer().text(), "from the direct call");
  ASSERT_EQ(reasoned.evidence_size(), 1);  // the retriever's evidence, lent to the reasoner
  EXPECT_EQ(reasoned.evidence(0).relation(), "direct evidence");
  ASSERT_EQ(response.evidence_size(), 1);  // and handed back
  EXPECT_EQ(response.degraded_size(), 0);
  // Nothing reached the gRPC services.
  EXPECT_EQ(retriever_.last().question(), "");
  EXPECT_EQ(reasoner_.last().question(), "");

  // A retriever that fails is degraded as over gRPC: no kgstore here, so no evidence, flagged.
  retrieve_status = grpc::Status(grpc::StatusCode::UNAVAILABLE, "retriever down");
  response.Clear();
  ASSERT_OK(pipeline.Run(context, Question(), &response, nullptr));
  EXPECT_EQ(response.evidence_size(), 0);
  ASSERT_EQ(response.degraded_size(), 1);
  EXPECT_EQ(response.degraded(0).component(), "retriever");
  EXPECT_THAT(response.degraded(0).reason(), HasSubstr("retriever down"));
}

// Over the network the gateway asks for the interned layout and expands it; a retriever that
// answers with whole triples (one that predates the layout) is used as it is; a malformed
// interned answer, or one with whole triples too, is a failed retriever call, degraded and
// explained, never a crash.
TEST_F(AnswerPipelineTest, AsksARemoteRetrieverForInternedEvidenceAndExpandsIt) {
  pb::AnswerResponse response;
  ASSERT_OK(Answer(PipelineConfig(), Question(), &response));
  EXPECT_EQ(retriever_.last().evidence_layout(), pb::EVIDENCE_LAYOUT_INTERNED);
  ASSERT_EQ(response.evidence_size(), 1);  // the old layout, as sent
  EXPECT_EQ(response.evidence(0).head().name(), "metformin");

  retriever_.set_layout(FakeRetriever::Layout::kInterned);
  response.Clear();
  ASSERT_OK(Answer(PipelineConfig(), Question(), &response));
  ASSERT_EQ(response.evidence_size(), 2);
  for (const pb::EvidenceTriple& t : response.evidence()) {
    EXPECT_EQ(t.head().name(), "metformin");
    EXPECT_EQ(t.relation(), "drug treats disease");
    EXPECT_EQ(t.tail().name(), "type 2 diabetes mellitus");
    EXPECT_EQ(t.source(), "hetionet");
    EXPECT_THAT(t.licenses(), ::testing::ElementsAre("CC0"));
  }
  EXPECT_FLOAT_EQ(response.evidence(1).score(), 0.8f);
  EXPECT_EQ(response.degraded_size(), 0);
  EXPECT_EQ(reasoner_.last().evidence_size(), 2);  // the reasoner read the expanded triples

  retriever_.set_layout(FakeRetriever::Layout::kInternedOutOfRange);
  response.Clear();
  ASSERT_OK(Answer(PipelineConfig(), Question(), &response));
  EXPECT_EQ(response.evidence_size(), 0);  // no kgstore here for the shortest-path fallback
  ASSERT_EQ(response.degraded_size(), 1);
  EXPECT_EQ(response.degraded(0).component(), "retriever");
  EXPECT_THAT(response.degraded(0).reason(),
              HasSubstr("interned_evidence.triples[1].head: 5 is out of range (2 entities)"));

  retriever_.set_layout(FakeRetriever::Layout::kBoth);
  response.Clear();
  ASSERT_OK(Answer(PipelineConfig(), Question(), &response));
  EXPECT_EQ(response.evidence_size(), 0);
  ASSERT_EQ(response.degraded_size(), 1);
  EXPECT_THAT(response.degraded(0).reason(),
              HasSubstr("retriever sent both triples and interned_evidence"));
}

TEST_F(AnswerPipelineTest, SendsZeroCandidatesSoTheRetrieverUsesItsTrainedCap) {
  pb::AnswerResponse response;
  ASSERT_OK(Answer(PipelineConfig(), Question(), &response));
  EXPECT_EQ(retriever_.last().max_candidates(), 0u);
  EXPECT_EQ(retriever_.last().scorer_variant(), pb::SCORER_VARIANT_UNSPECIFIED);
  EXPECT_EQ(response.versions().retriever_scorer_variant(), "residual");

  PipelineConfig operator_cap;
  operator_cap.max_candidates = 500;  // --retriever_max_candidates
  ASSERT_OK(Answer(operator_cap, Question(), &response));
  EXPECT_EQ(retriever_.last().max_candidates(), 500u);
}

TEST_F(AnswerPipelineTest, PassesTheScorerVariantThrough) {
  pb::AnswerRequest request = Question();
  request.mutable_pipeline()->set_scorer_variant(pb::SCORER_VARIANT_RESIDUAL);
  pb::AnswerResponse response;
  ASSERT_OK(Answer(PipelineConfig(), request, &response));
  EXPECT_EQ(retriever_.last().scorer_variant(), pb::SCORER_VARIANT_RESIDUAL);
  EXPECT_EQ(retriever_.last().mode(), pb::SCORING_MODE_IBRP);
  EXPECT_EQ(response.evidence_size(), 1);
  EXPECT_EQ(response.degraded_size(), 0);

  // With IBRP off the variant means nothing and is not sent.
  request.mutable_pipeline()->set_ibrp_enabled(false);
  ASSERT_OK(Answer(PipelineConfig(), request, &response));
  EXPECT_EQ(retriever_.last().mode(), pb::SCORING_MODE_SHORTEST_PATH);
  EXPECT_EQ(retriever_.last().scorer_variant(), pb::SCORER_VARIANT_UNSPECIFIED);
}

TEST_F(AnswerPipelineTest, AVariantTheModelLacksFailsTheAnswerInsteadOfDegrading) {
  pb::AnswerRequest request = Question();
  request.mutable_pipeline()->set_scorer_variant(pb::SCORER_VARIANT_PLAIN);
  pb::AnswerResponse response;
  const grpc::Status status = Answer(PipelineConfig(), request, &response);
  EXPECT_THAT(status, StatusIs(grpc::StatusCode::FAILED_PRECONDITION,
                               ::testing::AllOf(HasSubstr("pipeline.scorer_variant"),
                                                HasSubstr("no plain scorer"))));
}

// The question's intent is read once by the gateway, returned, and sent to both stages.
TEST_F(AnswerPipelineTest, ReadsTheIntentOnceAndSendsItToRetrieverAndReasoner) {
  pb::AnswerRequest request;
  request.set_question("What drugs treat type 2 diabetes?");
  pb::AnswerResponse response;
  ASSERT_OK(Answer(PipelineConfig(), request, &response));
  EXPECT_THAT(response.intent().relation_kinds(), ::testing::ElementsAre("treats"));
  EXPECT_THAT(response.intent().answer_types(), ::testing::ElementsAre("compound"));
  EXPECT_EQ(response.intent().origin(), "question");
  EXPECT_THAT(response.intent().relations(), ::testing::Contains("drug treats disease"));
  EXPECT_THAT(retriever_.last().intent().relation_kinds(), ::testing::ElementsAre("treats"));
  EXPECT_FALSE(retriever_.last().intent_disabled());
  EXPECT_THAT(reasoner_.last().intent().answer_types(), ::testing::ElementsAre("compound"));
  EXPECT_EQ(reasoner_.last().intent().origin(), "question");
  EXPECT_FALSE(reasoner_.last().intent_disabled());
}

// The reasoner learns which mention each topic entity came from: the senses of one mention share
// a number, the next mention gets the next, and entities of option lines are not topics at all.
TEST_F(AnswerPipelineTest, SendsTheMentionOfEachTopicEntity) {
  pb::AnswerRequest request;
  request.set_question("Which drugs treat both epilepsy and bipolar disorder?");
  request.add_options("TTN");
  pb::AnswerResponse response;
  ASSERT_OK(Answer(PipelineConfig(), request, &response));
  const pb::ReasonRequest sent = reasoner_.last();
  std::vector<uint32_t> ids;
  for (const pb::EntityRef& e : sent.topic_entities()) ids.push_back(e.id());
  EXPECT_THAT(ids, ::testing::ElementsAre(5u, 11u, 12u, 13u));
  EXPECT_THAT(sent.topic_mentions(), ::testing::ElementsAre(0u, 1u, 1u, 2u));
}

TEST_F(AnswerPipelineTest, OptionsAreReadAsTheTypeTheQuestionAsksFor) {
  pb::AnswerRequest request;
  request.set_question("Which gene is linked to type 2 diabetes?");
  request.add_options("TTN");
  request.add_options("TCF7L2");
  pb::AnswerResponse response;
  ASSERT_OK(Answer(PipelineConfig(), request, &response));
  ASSERT_EQ(response.entities_size(), 2);
  EXPECT_EQ(response.entities(1).entity().id(), 8u);  // the gene, not the symptom
  EXPECT_TRUE(response.entities(1).chosen_by_context());
  EXPECT_THAT(retriever_.last().topic_entity_ids(), ::testing::ElementsAre(5u, 8u));
  // Without options nothing is re-read.
  request.clear_options();
  request.set_question("TTN and type 2 diabetes: which gene?");
  ASSERT_OK(Answer(PipelineConfig(), request, &response));
  EXPECT_THAT(retriever_.last().topic_entity_ids(), ::testing::ElementsAre(5u));
}

TEST_F(AnswerPipelineTest, IntentOverrideAndSwitchOff) {
  pb::AnswerRequest request;
  request.set_question("What about metformin?");
  request.mutable_intent()->add_relation_kinds("side_effect");
  pb::AnswerResponse response;
  ASSERT_OK(Answer(PipelineConfig(), request, &response));
  EXPECT_EQ(response.intent().origin(), "request");
  EXPECT_THAT(response.intent().relations(), ::testing::ElementsAre("drug causes side effect"));
  EXPECT_THAT(retriever_.last().intent().relation_kinds(), ::testing::ElementsAre("side_effect"));

  // Switched off: nothing read, both stages told not to read one either.
  request.mutable_pipeline()->set_intent_enabled(false);
  pb::AnswerResponse off;
  ASSERT_OK(Answer(PipelineConfig(), request, &off));
  EXPECT_EQ(off.intent().relation_kinds_size(), 0);
  EXPECT_TRUE(retriever_.last().intent_disabled());
  EXPECT_TRUE(reasoner_.last().intent_disabled());

  // A question read as no intent: the stages are told so rather than reading again.
  pb::AnswerRequest plain;
  plain.set_question("Tell me about type 2 diabetes.");
  pb::AnswerResponse none;
  ASSERT_OK(Answer(PipelineConfig(), plain, &none));
  EXPECT_EQ(none.intent().relation_kinds_size(), 0);
  EXPECT_TRUE(retriever_.last().intent_disabled());
}

TEST_F(AnswerPipelineTest, ABadIntentOverrideIsRefusedNamingTheField) {
  pb::AnswerRequest request = Question();
  request.mutable_intent()->add_relation_kinds("cures");
  pb::AnswerResponse response;
  EXPECT_THAT(Answer(PipelineConfig(), request, &response),
              StatusIs(grpc::StatusCode::INVALID_ARGUMENT,
                       HasSubstr("intent.relation_kinds: 'cures' is not one of")));
  request.mutable_intent()->clear_relation_kinds();
  request.mutable_intent()->add_answer_types("Not A Type");
  EXPECT_THAT(Answer(PipelineConfig(), request, &response),
              StatusIs(grpc::StatusCode::INVALID_ARGUMENT, HasSubstr("intent.answer_types")));
}

}  // namespace
}  // namespace ibgraphrag::gateway
