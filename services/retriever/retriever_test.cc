// Retriever core over a small in-process KG: modes, ranking, paths, validation, failures.
#include "services/retriever/retriever.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <memory>
#include <set>

#include "common/file_util.h"
#include "common/status_macros.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/alignment/trained_encoder.h"
#include "services/kgstore/kg_store_test_util.h"
#include "services/retriever/alignment_embedder.h"
#include "services/retriever/retriever_test_util.h"

namespace ibgraphrag::retriever {
namespace {

using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Key;
using ::testing::Not;
namespace kt = kgstore::testing;

class RetrieverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = kt::WriteAndOpen(kt::SmallKg(), dir_.path());
    ASSERT_NE(store_, nullptr);
    testing::PublishTestVersion(dir_.path(), kt::SmallKg());
    auto model =
        RetrieverModel::Load(RetrieverVersionDir(dir_.path(), 1), RetrieverModel::Options{"cpu"},
                             HashNgramEmbedder(32).value());
    ASSERT_OK(model);
    source_ = std::make_shared<InProcessSubgraphSource>(store_);
    retriever_ = std::make_unique<Retriever>(Retriever::Options(), source_, *model);
  }

  RetrieveQuery Query(std::vector<uint32_t> topics) {
    RetrieveQuery q;
    q.question = "Which drug treats type 2 diabetes mellitus?";
    q.topic_ids = std::move(topics);
    return q;
  }

  kt::ScratchDir dir_;
  std::shared_ptr<kgstore::KgStore> store_;
  std::shared_ptr<InProcessSubgraphSource> source_;
  std::unique_ptr<Retriever> retriever_;
};

// Hetionet's side-effect edges are a random 5,000-pair sample of SIDER's: on a side-effect triple
// they are no second source, so the sample does not outrank a side effect more labels list.
TEST(AnswerEvidenceStrengthTest, CountsSourcesByLineageThenTheSourceScore) {
  TripleSources sampled;
  sampled.sources = {"hetionet", "sider-side-effects"};
  sampled.score = 0.2f;
  TripleSources common_one;
  common_one.sources = {"sider-side-effects"};
  common_one.score = 0.87f;
  EXPECT_NEAR(AnswerEvidenceStrength(sampled, "drug causes side effect"), 0.5 / 3 + 0.1, 1e-6);
  EXPECT_GT(AnswerEvidenceStrength(common_one, "drug causes side effect"),
            AnswerEvidenceStrength(sampled, "drug causes side effect"));
  // Independent sources do count, up to three; no score counts 0.
  TripleSources treats;
  treats.sources = {"hetionet", "pharmacotherapydb", "drugcentral-indications", "sider-indications",
                    "offlabel"};
  EXPECT_NEAR(AnswerEvidenceStrength(treats, "drug treats disease"), 0.5, 1e-9);
  treats.sources = {"hetionet", "hsdn"};
  EXPECT_NEAR(AnswerEvidenceStrength(treats, "disease presents symptom"), 1.0 / 3, 1e-9);
}

TEST_F(RetrieverTest, IbrpReturnsTopKSortedWithNamesPathsAndTimings) {
  RetrieveQuery q = Query({kt::kDiabetes});
  q.top_k = 4;
  auto r = retriever_->Retrieve(q);
  ASSERT_OK(r);
  ASSERT_EQ(r->triples.size(), 4u);
  for (size_t i = 1; i < r->triples.size(); ++i) {
    EXPECT_GE(r->triples[i - 1].score, r->triples[i].score);
  }
  for (const ScoredTriple& t : r->triples) {
    EXPECT_GT(t.score, 0.0f);
    EXPECT_LT(t.score, 1.0f);
    EXPECT_TRUE(r->entities.contains(t.head));
    EXPECT_TRUE(r->entities.contains(t.tail));
    EXPECT_TRUE(r->relations.contains(t.relation));
  }
  EXPECT_EQ(r->subgraph_triples, 10);  // every edge of SmallKg is within 2 hops of diabetes
  EXPECT_EQ(r->subgraph_entities, 8);  // all but the isolated entity
  EXPECT_EQ(r->model_version, "1");
  EXPECT_EQ(r->kg_version, "1");
  ASSERT_FALSE(r->paths.empty());
  for (const ScoredPath& p : r->paths) {
    const ScoredTriple& first = r->triples[p.triple_indices[0]];
    EXPECT_EQ(p.reversed[0] ? first.tail : first.head, kt::kDiabetes);
    EXPECT_THAT(p.text, HasSubstr("type 2 diabetes mellitus"));
  }
  EXPECT_THAT(r->timings_ms, Contains(Key("subgraph")));
  EXPECT_THAT(r->timings_ms, Contains(Key("score")));
}

TEST_F(RetrieverTest, EachReturnedTripleNamesTheSourcesThatAssertedIt) {
  RetrieveQuery q = Query({kt::kDiabetes});
  q.top_k = 10;
  auto r = retriever_->Retrieve(q);
  ASSERT_OK(r);
  ASSERT_EQ(r->triple_sources.size(), r->triples.size());
  for (size_t i = 0; i < r->triples.size(); ++i) {
    const ScoredTriple& t = r->triples[i];
    const TripleSources& s = r->triple_sources[i];
    // SmallKg: diabetes -presents-> polyuria comes from "doid", everything else from hetionet.
    const bool doid = t.head == kt::kDiabetes && t.tail == kt::kPolyuria;
    EXPECT_THAT(s.sources, ElementsAre(doid ? "doid" : "hetionet"));
    EXPECT_THAT(s.licenses, ElementsAre(""));  // SmallKg records no licences
    EXPECT_TRUE(std::isnan(s.score));
  }
  EXPECT_THAT(r->timings_ms, Contains(Key("provenance")));
}

TEST_F(RetrieverTest, DescribeTriplesSaysWhichTriplesTheKgHolds) {
  // The topic-link probe (candidate_set.cc AddTopicLinks) reads `found`: a triple the KG lacks
  // (the reverse direction, an unknown relation id) is not found, whatever its sources.
  auto got = source_->DescribeTriples(
      {kt::kMetformin, kt::kDiabetes, kt::kMetformin}, {kt::kTreats, kt::kTreats, 99},
      {kt::kDiabetes, kt::kMetformin, kt::kDiabetes}, absl::InfiniteFuture());
  ASSERT_OK(got);
  ASSERT_EQ(got->size(), 3u);
  EXPECT_TRUE((*got)[0].found);
  EXPECT_THAT((*got)[0].sources, ElementsAre("hetionet"));
  EXPECT_FALSE((*got)[1].found);
  EXPECT_TRUE((*got)[1].sources.empty());
  EXPECT_FALSE((*got)[2].found);
}

TEST_F(RetrieverTest, ShortestPathModeRanksTopicToTopicPathFirst) {
  RetrieveQuery q = Query({kt::kMetformin, kt::kPparg});
  q.mode = ScoringMode::kShortestPath;
  q.top_k = 2;
  auto r = retriever_->Retrieve(q);
  ASSERT_OK(r);
  ASSERT_EQ(r->triples.size(), 2u);
  std::set<std::pair<uint32_t, uint32_t>> got;
  for (const auto& t : r->triples) got.insert({t.head, t.tail});
  // metformin -treats-> diabetes -associates-> PPARG is the only 2-edge path between them.
  EXPECT_EQ(got, (std::set<std::pair<uint32_t, uint32_t>>{{kt::kMetformin, kt::kDiabetes},
                                                          {kt::kDiabetes, kt::kPparg}}));
  EXPECT_FLOAT_EQ(r->triples[0].score, 0.98f);
  ASSERT_FALSE(r->paths.empty());
  EXPECT_EQ(r->paths[0].text,
            "Metformin -[treats]-> type 2 diabetes mellitus -[associates]-> PPARG");
}

// The trainer's residual start (w2 = 0, w_prior = (1, 0, ...)) must rank exactly like the
// SHORTEST_PATH mode: training then only corrects the prior.
TEST_F(RetrieverTest, ResidualStartRanksLikeShortestPath) {
  testing::PublishTestVersion(dir_.path(), kt::SmallKg(), 32, 16, /*version=*/2,
                              /*residual=*/true);
  auto model = RetrieverModel::Load(RetrieverVersionDir(dir_.path(), 2),
                                    RetrieverModel::Options{"cpu"}, HashNgramEmbedder(32).value());
  ASSERT_OK(model);
  Retriever residual(Retriever::Options(), source_, *model);
  for (const std::vector<uint32_t>& topics :
       {std::vector<uint32_t>{kt::kMetformin, kt::kPparg}, std::vector<uint32_t>{kt::kDiabetes}}) {
    RetrieveQuery q = Query(topics);
    auto ibrp = residual.Retrieve(q);
    q.mode = ScoringMode::kShortestPath;
    auto sp = residual.Retrieve(q);
    ASSERT_OK(ibrp);
    ASSERT_OK(sp);
    ASSERT_EQ(ibrp->triples.size(), sp->triples.size());
    for (size_t i = 0; i < sp->triples.size(); ++i) {
      EXPECT_EQ(ibrp->triples[i].head, sp->triples[i].head) << i;
      EXPECT_EQ(ibrp->triples[i].relation, sp->triples[i].relation) << i;
      EXPECT_EQ(ibrp->triples[i].tail, sp->triples[i].tail) << i;
      EXPECT_NEAR(ibrp->triples[i].score, sp->triples[i].score, 1e-5) << i;
    }
  }
  // ScoreTriples computes the same features without kgstore's hops.
  ScoreTriplesQuery st;
  st.question = "Which gene is associated with metformin?";
  st.topic_ids = {kt::kMetformin, kt::kPparg};
  st.heads = {kt::kMetformin, kt::kDiabetes};
  st.relations = {kt::kTreats, kt::kAssociates};
  st.tails = {kt::kDiabetes, kt::kPparg};
  auto scores = residual.ScoreTriples(st);
  ASSERT_OK(scores);
  EXPECT_NEAR((*scores)[0], 0.98f, 1e-5);
  EXPECT_NEAR((*scores)[1], 0.98f, 1e-5);
}

// With max_scored_candidates the model sees only the candidates the shortest-path prior ranks
// best: the same set SHORTEST_PATH returns as its top (the unpruned model picks others).
TEST_F(RetrieverTest, PruningScoresOnlyTheBestCandidatesByThePrior) {
  Retriever::Options pruning;
  pruning.max_scored_candidates = 3;
  RetrieveQuery q = Query({kt::kDiabetes});
  q.top_k = 3;
  auto pruned = Retriever(pruning, source_, retriever_->model()).Retrieve(q);
  auto unpruned = retriever_->Retrieve(q);
  q.mode = ScoringMode::kShortestPath;
  auto prior = Retriever(pruning, source_, retriever_->model()).Retrieve(q);
  ASSERT_OK(pruned);
  ASSERT_OK(unpruned);
  ASSERT_OK(prior);
  EXPECT_EQ(pruned->subgraph_triples, 10);
  auto keys = [](const RetrieveResult& r) {
    std::set<std::array<uint32_t, 3>> out;
    for (const ScoredTriple& t : r.triples) out.insert({t.head, t.relation, t.tail});
    return out;
  };
  EXPECT_EQ(keys(*pruned), keys(*prior));
  EXPECT_NE(keys(*unpruned), keys(*prior));
}

// Pruning never leaves fewer candidates than the request's top_k.
TEST_F(RetrieverTest, PruningKeepsAtLeastTopK) {
  Retriever::Options pruning;
  pruning.max_scored_candidates = 3;
  RetrieveQuery q = Query({kt::kDiabetes});
  q.top_k = 6;
  auto r = Retriever(pruning, source_, retriever_->model()).Retrieve(q);
  ASSERT_OK(r);
  EXPECT_EQ(r->triples.size(), 6u);
}

TEST_F(RetrieverTest, CosineModeScoresInUnitInterval) {
  RetrieveQuery q = Query({kt::kDiabetes});
  q.mode = ScoringMode::kCosine;
  auto r = retriever_->Retrieve(q);
  ASSERT_OK(r);
  ASSERT_EQ(r->triples.size(), 10u);
  for (const auto& t : r->triples) {
    EXPECT_GE(t.score, 0.0f);
    EXPECT_LE(t.score, 1.0f);
  }
  // The question names the relation "treats": a treats triple should come first.
  EXPECT_EQ(r->triples[0].relation, kt::kTreats);
}

TEST_F(RetrieverTest, ExternalTopicIdsResolve) {
  RetrieveQuery q = Query({});
  q.topic_external_ids = {"UMLS:C0011860"};
  auto r = retriever_->Retrieve(q);
  ASSERT_OK(r);
  EXPECT_EQ(r->topic_ids, std::vector<uint32_t>{kt::kDiabetes});
}

TEST_F(RetrieverTest, ValidationNamesTheField) {
  struct Case {
    RetrieveQuery query;
    absl::StatusCode code;
    std::string field;
  };
  std::vector<Case> cases;
  cases.push_back({Query({}), absl::StatusCode::kInvalidArgument, "topic_entity_ids"});
  RetrieveQuery q = Query({kt::kDiabetes});
  q.top_k = 1001;
  cases.push_back({q, absl::StatusCode::kInvalidArgument, "top_k"});
  q = Query({kt::kDiabetes});
  q.max_hops = 5;
  cases.push_back({q, absl::StatusCode::kInvalidArgument, "max_hops"});
  q = Query({kt::kDiabetes});
  q.max_candidates = 100001;
  cases.push_back({q, absl::StatusCode::kInvalidArgument, "max_candidates"});
  q = Query({kt::kDiabetes});
  q.question.assign(kMaxQuestionBytes + 1, 'x');
  cases.push_back({q, absl::StatusCode::kInvalidArgument, "question"});
  q = Query({kt::kDiabetes, 999, 1234});
  cases.push_back({q, absl::StatusCode::kNotFound, "999, 1234"});
  q = Query({});
  q.topic_external_ids = {"DOID:404"};
  cases.push_back({q, absl::StatusCode::kNotFound, "DOID:404"});
  for (const Case& c : cases) {
    auto r = retriever_->Retrieve(c.query);
    EXPECT_THAT(r, StatusIs(c.code, HasSubstr(c.field))) << c.field;
  }
}

TEST_F(RetrieverTest, KgStoreDownIsUnavailable) {
  Retriever down(Retriever::Options(),
                 std::make_shared<testing::FailingSource>(absl::UnavailableError("connect failed")),
                 retriever_->model());
  auto r = down.Retrieve(Query({kt::kDiabetes}));
  EXPECT_THAT(r, StatusIs(absl::StatusCode::kUnavailable));
  Retriever slow(Retriever::Options(),
                 std::make_shared<testing::FailingSource>(absl::DeadlineExceededError("slow")),
                 retriever_->model());
  EXPECT_THAT(slow.Retrieve(Query({kt::kDiabetes})), StatusIs(absl::StatusCode::kUnavailable));
}

TEST_F(RetrieverTest, WithoutModelOnlyShortestPathWorks) {
  Retriever no_model(Retriever::Options(), source_, nullptr, "model.bin: corrupt");
  auto r = no_model.Retrieve(Query({kt::kDiabetes}));
  EXPECT_THAT(r, StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("model.bin: corrupt")));
  RetrieveQuery q = Query({kt::kDiabetes});
  q.mode = ScoringMode::kShortestPath;
  EXPECT_OK(no_model.Retrieve(q));
}

TEST_F(RetrieverTest, ScoreTriplesScoresEachTripleAndRejectsUnknownIds) {
  ScoreTriplesQuery q;
  q.question = "Which drug treats type 2 diabetes mellitus?";
  q.topic_ids = {kt::kDiabetes};
  q.heads = {kt::kMetformin, kt::kDiabetes};
  q.relations = {kt::kTreats, kt::kPresents};
  q.tails = {kt::kDiabetes, kt::kPolyuria};
  auto s = retriever_->ScoreTriples(q);
  ASSERT_OK(s);
  ASSERT_EQ(s->size(), 2u);
  EXPECT_NE((*s)[0], (*s)[1]);
  q.heads[1] = 77;
  EXPECT_THAT(retriever_->ScoreTriples(q), StatusIs(absl::StatusCode::kNotFound));
  q.topic_ids.clear();
  EXPECT_THAT(retriever_->ScoreTriples(q), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_F(RetrieverTest, EncoderMismatchIsRefused) {
  auto model = RetrieverModel::Load(RetrieverVersionDir(dir_.path(), 1),
                                    RetrieverModel::Options{"cpu"}, HashNgramEmbedder(64).value());
  EXPECT_THAT(model,
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("hash-ngram-v1-d32")));
}

TEST(RetrieverModelTest, LoadsTheTrainedEncoderItsManifestNamesFromTheBase) {
  common::test_util::ScratchDir base("retriever-trained-encoder");
  alignment::TrainedEncoderWeights w;
  w.features.buckets = 1024;
  w.dim = 16;
  for (int i = 0; i < w.features.buckets * w.dim; ++i) w.embedding.push_back(((i * 37) % 11) - 5);
  const std::string encoder_dir =
      *alignment::PublishTrainedEncoder(base.path(), w, alignment::TrainedEncoderArtifactInfo());
  const std::string id = *alignment::ReadTrainedEncoderId(encoder_dir);
  absl::StatusOr<TextEmbedder> embedder = EmbedderForId(base.path(), id);
  ASSERT_OK(embedder);
  EXPECT_EQ(embedder->id, id);
  EXPECT_EQ(embedder->dim, 16);
  testing::PublishTestVersionWith(base.path(), kt::SmallKg(), *embedder);

  // No embedder passed: the one the manifest names, found under the model's base.
  auto model = RetrieverModel::Load(RetrieverVersionDir(base.path(), 1),
                                    RetrieverModel::Options{"cpu"}, TextEmbedder());
  ASSERT_OK(model);
  EXPECT_EQ((*model)->embedder().id, id);

  // Gone, and held by nothing (a loaded one would be shared: alignment::SharedEncoderById).
  embedder = absl::CancelledError("released");
  model = absl::CancelledError("released");
  std::filesystem::remove_all(encoder_dir);
  const absl::Status gone = RetrieverModel::Load(RetrieverVersionDir(base.path(), 1),
                                                 RetrieverModel::Options{"cpu"}, TextEmbedder())
                                .status();
  EXPECT_THAT(gone, StatusIs(absl::StatusCode::kFailedPrecondition,
                             AllOf(HasSubstr(id), HasSubstr("ibgr artifacts build"))));
}

// A disease with a two-level is_a chain below it; the only gene of the deepest subtype is three
// hops from the disease, out of a 2-hop subgraph's reach.
//   MODY -is a subtype of-> type 2 diabetes -is a subtype of-> diabetes mellitus
//   MODY -associates-> HNF1A       diabetes mellitus -associates-> INS
//   type 2 diabetes -is a subtype of-> ... ; obesity -is a subtype of-> nutrition disease
kgstore::KgData OntologyKg() {
  kgstore::KgBuilder b;
  const kgstore::SourceId doid = b.AddSource("doid");
  const kgstore::EntityId dm = b.AddEntity("DOID:9351", "disease", "diabetes mellitus");
  const kgstore::EntityId t2d = b.AddEntity("DOID:9352", "disease", "type 2 diabetes mellitus");
  const kgstore::EntityId mody = b.AddEntity("DOID:0050524", "disease", "maturity-onset diabetes");
  const kgstore::EntityId glucose =
      b.AddEntity("DOID:4194", "disease", "glucose metabolism disease");
  const kgstore::EntityId hnf1a = b.AddEntity("Entrez:6927", "gene", "HNF1A");
  const kgstore::EntityId ins = b.AddEntity("Entrez:3630", "gene", "INS");
  const kgstore::EntityId other = b.AddEntity("DOID:9970", "disease", "obesity");
  const kgstore::RelationId is_a = b.AddRelation("disease is a subtype of disease", "disease",
                                                 "disease", "One disease is a subtype of another.");
  const kgstore::RelationId assoc =
      b.AddRelation("associates", "disease", "gene", "the gene is associated with the disease");
  b.AddTriple(t2d, is_a, dm, doid);
  b.AddTriple(mody, is_a, t2d, doid);
  b.AddTriple(dm, is_a, glucose, doid);
  b.AddTriple(other, is_a, glucose, doid);  // a sibling of the topic: never an anchor
  b.AddTriple(mody, assoc, hnf1a, doid);
  b.AddTriple(dm, assoc, ins, doid);
  return b.Finish();
}

class RetrieverOntologyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = kt::WriteAndOpen(OntologyKg(), dir_.path());
    ASSERT_NE(store_, nullptr);
    source_ = std::make_shared<InProcessSubgraphSource>(store_);
    retriever_ = std::make_unique<Retriever>(Retriever::Options(), source_, nullptr, "none");
  }

  RetrieveQuery Query() {
    RetrieveQuery q;
    q.question = "Which gene is associated with diabetes mellitus?";
    q.topic_external_ids = {"DOID:9351"};
    q.mode = ScoringMode::kShortestPath;
    return q;
  }

  // A published residual model whose manifest records training.ontology_expansion =
  // `trained_with_expansion` (empty: no record, as models from before expansion).
  absl::StatusOr<std::shared_ptr<const RetrieverModel>> LoadModel(
      const std::string& trained_with_expansion, int64_t version = 1) {
    testing::PublishTestVersion(dir_.path(), OntologyKg(), 32, 16, version, /*residual=*/true);
    const std::string path = RetrieverVersionDir(dir_.path(), version) + "/" + kManifestFile;
    IBGR_ASSIGN_OR_RETURN(const std::string json, common::ReadFileToString(path));
    IBGR_ASSIGN_OR_RETURN(RetrieverManifest manifest, RetrieverManifestFromJson(json));
    if (!trained_with_expansion.empty()) {
      manifest.training["ontology_expansion"] = trained_with_expansion;
    }
    std::ofstream(path, std::ios::trunc) << RetrieverManifestToJson(manifest);
    return RetrieverModel::Load(RetrieverVersionDir(dir_.path(), version),
                                RetrieverModel::Options{"cpu"}, HashNgramEmbedder(32).value());
  }

  static bool HasEntity(const RetrieveResult& r, absl::string_view name) {
    return std::any_of(r.triples.begin(), r.triples.end(), [&](const ScoredTriple& t) {
      return r.entities.at(t.head).name == name || r.entities.at(t.tail).name == name;
    });
  }

  kt::ScratchDir dir_;
  std::shared_ptr<kgstore::KgStore> store_;
  std::shared_ptr<InProcessSubgraphSource> source_;
  std::unique_ptr<Retriever> retriever_;
};

TEST_F(RetrieverOntologyTest, ASubtypesFactJoinsTheEvidenceWithItsIsAChain) {
  auto r = retriever_->Retrieve(Query());
  ASSERT_OK(r);
  EXPECT_EQ(r->ontology_anchors, 3);  // T2D, MODY below; glucose metabolism disease above
  EXPECT_TRUE(HasEntity(*r, "HNF1A"));
  for (const ScoredTriple& t : r->triples) {
    if (r->entities.at(t.tail).name == "HNF1A") EXPECT_EQ(t.hop, 1u);  // near-topic
  }
  // The parent's other child (a sibling of the topic) is no anchor: its facts stay 2 hops out.
  for (const ScoredTriple& t : r->triples) {
    if (r->entities.at(t.head).name == "obesity") EXPECT_EQ(t.hop, 2u);
  }
  std::vector<std::string> texts;
  for (const ScoredPath& p : r->paths) texts.push_back(p.text);
  EXPECT_THAT(texts, Contains(std::string(
                         "diabetes mellitus <-[disease is a subtype of disease]- type 2 diabetes "
                         "mellitus <-[disease is a subtype of disease]- maturity-onset diabetes "
                         "-[associates]-> HNF1A")));
}

TEST_F(RetrieverOntologyTest, ExpansionOffLeavesTheDeepSubtypesFactOut) {
  RetrieveQuery q = Query();
  q.ontology_expansion = false;
  auto r = retriever_->Retrieve(q);
  ASSERT_OK(r);
  EXPECT_EQ(r->ontology_anchors, 0);
  EXPECT_FALSE(HasEntity(*r, "HNF1A"));
  EXPECT_TRUE(HasEntity(*r, "INS"));
}

TEST_F(RetrieverOntologyTest, TrainedScorerSeesTheSubtypesFactsToo) {
  auto model = LoadModel(/*trained_with_expansion=*/"true");
  ASSERT_OK(model);
  Retriever retriever(Retriever::Options(), source_, *model);
  RetrieveQuery q = Query();
  q.mode = ScoringMode::kIbrp;
  auto r = retriever.Retrieve(q);
  ASSERT_OK(r);
  EXPECT_TRUE(HasEntity(*r, "HNF1A"));
  EXPECT_EQ(r->topic_ids, std::vector<uint32_t>{0});
}

TEST_F(RetrieverOntologyTest, AModelTrainedWithoutExpansionIsServedWithout) {
  int64_t version = 0;
  for (const std::string recorded : {"", "false"}) {
    auto model = LoadModel(recorded, ++version);
    ASSERT_OK(model);
    EXPECT_FALSE((*model)->ontology_expansion());
    Retriever retriever(Retriever::Options(), source_, *model);
    for (const ScoringMode mode : {ScoringMode::kIbrp, ScoringMode::kShortestPath}) {
      RetrieveQuery q = Query();
      q.mode = mode;
      q.ontology_expansion = true;  // a request cannot turn it on
      auto r = retriever.Retrieve(q);
      ASSERT_OK(r);
      EXPECT_EQ(r->ontology_anchors, 0) << "recorded \"" << recorded << "\"";
      EXPECT_FALSE(HasEntity(*r, "HNF1A"));
    }
  }
}

TEST_F(RetrieverOntologyTest, TheServerOptionForcesExpansionOffForAModelTrainedWithIt) {
  auto model = LoadModel("true");
  ASSERT_OK(model);
  EXPECT_TRUE((*model)->ontology_expansion());
  Retriever::Options options;
  options.ontology.enabled = false;
  Retriever retriever(options, source_, *model);
  RetrieveQuery q = Query();
  q.mode = ScoringMode::kIbrp;
  auto r = retriever.Retrieve(q);
  ASSERT_OK(r);
  EXPECT_EQ(r->ontology_anchors, 0);
  EXPECT_FALSE(HasEntity(*r, "HNF1A"));
}

// Step 1c (candidate_set.h): a topic the asked relation does not reach borrows its is_a
// anchors' answers. The KG files hemochromatosis's genes under the parent, none under type 1,
// and one under type 3:
//   hemochromatosis type 1 -is a subtype of-> hemochromatosis <-is a subtype of- type 3
//   hemochromatosis -associated with-> HFE, HJV, HAMP, TFR2     type 3 -associated with-> TFR2
//   type 1 -has phenotype-> three phenotypes
kgstore::KgData HemochromatosisKg() {
  kgstore::KgBuilder b;
  const kgstore::SourceId doid = b.AddSource("doid");
  const kgstore::EntityId parent = b.AddEntity("DOID:2352", "disease", "hemochromatosis");
  const kgstore::EntityId type1 = b.AddEntity("DOID:0111029", "disease", "hemochromatosis type 1");
  const kgstore::EntityId type3 = b.AddEntity("DOID:0111031", "disease", "hemochromatosis type 3");
  const kgstore::RelationId is_a = b.AddRelation("disease is a subtype of disease", "disease",
                                                 "disease", "One disease is a subtype of another.");
  const kgstore::RelationId gene = b.AddRelation("disease associated with gene", "disease", "gene",
                                                 "The disease is associated with the gene.");
  const kgstore::RelationId phenotype = b.AddRelation(
      "disease has phenotype", "disease", "phenotype", "The disease presents the phenotype.");
  b.AddTriple(type1, is_a, parent, doid);
  b.AddTriple(type3, is_a, parent, doid);
  for (const char* symbol : {"HFE", "HJV", "HAMP", "TFR2"}) {
    b.AddTriple(parent, gene, b.AddEntity(absl::StrCat("Symbol:", symbol), "gene", symbol), doid);
  }
  b.AddTriple(type3, gene, b.AddEntity("Symbol:TFR2", "gene", "TFR2"), doid);
  for (const char* name : {"Hepatomegaly", "Arthralgia", "Diabetes"}) {
    b.AddTriple(type1, phenotype, b.AddEntity(absl::StrCat("HP:", name), "phenotype", name), doid);
  }
  return b.Finish();
}

class TopicWithoutAnswersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = kt::WriteAndOpen(HemochromatosisKg(), dir_.path());
    ASSERT_NE(store_, nullptr);
    source_ = std::make_shared<InProcessSubgraphSource>(store_);
  }
  uint32_t Id(const std::string& external_id) const {
    return store_->ResolveExternalId(external_id).value();
  }
  std::string Name(uint32_t id) const { return store_->GetEntity(id).value().name; }
  // The answer ends of the intent's answer triples (feature 7), by name.
  std::vector<std::string> Answers(const CandidateSet& set) const {
    std::vector<std::string> names;
    for (uint32_t i : set.intent_answers) names.push_back(Name(set.tails[i]));
    std::sort(names.begin(), names.end());
    return names;
  }
  static CandidateSetOptions GeneQuestion() {
    CandidateSetOptions options;
    options.max_scored = 1;  // pruning keeps only the protected triples beside the best one
    options.intent_relations =
        IntentRelations(common::ReadQuestionIntent("Which genes cause hemochromatosis type 1?"));
    return options;
  }

  kt::ScratchDir dir_;
  std::shared_ptr<kgstore::KgStore> store_;
  std::shared_ptr<InProcessSubgraphSource> source_;
};

TEST_F(TopicWithoutAnswersTest, ATopicWithoutTheAskedRelationBorrowsItsParentsAnswers) {
  const CandidateSetOptions options = GeneQuestion();
  ASSERT_FALSE(options.intent_relations.empty());
  absl::StatusOr<CandidateSet> set = BuildCandidateSet(*source_, {Id("DOID:0111029")}, {}, options);
  ASSERT_OK(set);
  // The parent lends (nearest first); type 1 has no subtypes.
  EXPECT_EQ(set->lending_anchors, std::vector<uint32_t>{Id("DOID:2352")});
  EXPECT_TRUE(set->intent_skipped.empty()) << set->intent_skipped;
  // The parent's four genes are the topic's answers now: marked and kept through pruning, and
  // they sit one hop from the topic's anchor.
  EXPECT_EQ(Answers(*set), (std::vector<std::string>{"HAMP", "HFE", "HJV", "TFR2"}));
  for (uint32_t i : set->intent_answers) {
    EXPECT_EQ(set->structure_features[i * kPriorFeatureDim + 7], 1.0f);
    EXPECT_EQ(set->hops[i], 1u);
  }
}

TEST_F(TopicWithoutAnswersTest, ATopicWithAnswersOfItsOwnBorrowsNothing) {
  // The parent has four genes: its subtypes lend nothing, and type 3's TFR2 is no answer of it.
  absl::StatusOr<CandidateSet> set =
      BuildCandidateSet(*source_, {Id("DOID:2352")}, {}, GeneQuestion());
  ASSERT_OK(set);
  EXPECT_TRUE(set->lending_anchors.empty());
  EXPECT_EQ(Answers(*set), (std::vector<std::string>{"HAMP", "HFE", "HJV", "TFR2"}));
  for (uint32_t i : set->intent_answers) EXPECT_EQ(Name(set->heads[i]), "hemochromatosis");
  // Type 3 has one gene of its own: that is its answer, and its parent's three others are not.
  set = BuildCandidateSet(*source_, {Id("DOID:0111031")}, {}, GeneQuestion());
  ASSERT_OK(set);
  EXPECT_TRUE(set->lending_anchors.empty());
  EXPECT_EQ(Answers(*set), std::vector<std::string>{"TFR2"});
}

TEST_F(TopicWithoutAnswersTest, NoIntentOrNoExpansionMeansNoBorrowing) {
  CandidateSetOptions no_intent = GeneQuestion();
  no_intent.intent_relations.clear();
  absl::StatusOr<CandidateSet> set =
      BuildCandidateSet(*source_, {Id("DOID:0111029")}, {}, no_intent);
  ASSERT_OK(set);
  EXPECT_TRUE(set->lending_anchors.empty());
  EXPECT_TRUE(set->intent_answers.empty());

  CandidateSetOptions no_expansion = GeneQuestion();
  no_expansion.ontology.enabled = false;
  set = BuildCandidateSet(*source_, {Id("DOID:0111029")}, {}, no_expansion);
  ASSERT_OK(set);
  EXPECT_TRUE(set->lending_anchors.empty());
  EXPECT_TRUE(set->intent_answers.empty());  // type 1 has no gene of its own
}

// A failed borrowing call serves the topic's own candidates and says why.
class LendingCallFails : public InProcessSubgraphSource {
 public:
  using InProcessSubgraphSource::InProcessSubgraphSource;
  absl::StatusOr<CandidateSubgraph> Extract(const SubgraphRequest& request) override {
    // The intent's own call is seeded with the topic; step 1c's with the anchors.
    if (!request.allow_relations.empty() && !request.seed_ids.empty() &&
        request.seed_ids.front() == parent) {
      return absl::UnavailableError("kgstore gone for the anchors");
    }
    return InProcessSubgraphSource::Extract(request);
  }
  uint32_t parent = 0;
};

TEST_F(TopicWithoutAnswersTest, AFailedBorrowingCallIsSkippedNotFatal) {
  LendingCallFails source(store_);
  source.parent = Id("DOID:2352");
  absl::StatusOr<CandidateSet> set =
      BuildCandidateSet(source, {Id("DOID:0111029")}, {}, GeneQuestion());
  ASSERT_OK(set);
  EXPECT_TRUE(set->lending_anchors.empty());
  EXPECT_THAT(set->intent_skipped, HasSubstr("anchors' answers"));
  EXPECT_THAT(set->intent_skipped, HasSubstr("kgstore gone for the anchors"));
}

// The KG in process, with the optional reads failing on demand: the is_a walk (the only
// Extract calls restricted to relations), the subtypes' facts (the unrestricted Extract after
// the topic subgraph's) and the triples' provenance.
class FlakySource : public SubgraphSource {
 public:
  FlakySource(std::shared_ptr<SubgraphSource> kg, bool fail_walk, bool fail_provenance,
              bool fail_anchor_facts = false)
      : kg_(std::move(kg)),
        fail_walk_(fail_walk),
        fail_provenance_(fail_provenance),
        fail_anchor_facts_(fail_anchor_facts) {}
  absl::StatusOr<CandidateSubgraph> Extract(const SubgraphRequest& request) override {
    if (fail_walk_ && !request.allow_relations.empty()) {
      return absl::UnavailableError("kgstore restarting");
    }
    if (request.allow_relations.empty() && ++unrestricted_calls_ == 2 && fail_anchor_facts_) {
      return absl::DeadlineExceededError("subtypes' facts timed out");
    }
    return kg_->Extract(request);
  }
  absl::StatusOr<std::vector<EntityInfo>> Describe(absl::Span<const uint32_t> ids,
                                                   absl::Time deadline) override {
    return kg_->Describe(ids, deadline);
  }
  absl::StatusOr<std::vector<std::string>> KnownRelations(absl::Span<const std::string> names,
                                                          absl::Time deadline) override {
    return kg_->KnownRelations(names, deadline);
  }
  absl::StatusOr<std::vector<TripleSources>> DescribeTriples(absl::Span<const uint32_t> heads,
                                                             absl::Span<const uint32_t> relations,
                                                             absl::Span<const uint32_t> tails,
                                                             absl::Time deadline) override {
    if (fail_provenance_) return absl::DeadlineExceededError("provenance read timed out");
    return kg_->DescribeTriples(heads, relations, tails, deadline);
  }

 private:
  std::shared_ptr<SubgraphSource> kg_;
  bool fail_walk_, fail_provenance_, fail_anchor_facts_;
  int unrestricted_calls_ = 0;
};

bool HasStage(const RetrieveResult& r, absl::string_view stage) {
  return std::any_of(r.timings_ms.begin(), r.timings_ms.end(),
                     [&](const auto& t) { return t.first == stage; });
}

TEST_F(RetrieverOntologyTest, AFailedIsAWalkSkipsExpansionAndSaysSo) {
  Retriever retriever(Retriever::Options(),
                      std::make_shared<FlakySource>(source_, /*fail_walk=*/true, false), nullptr,
                      "none");
  auto r = retriever.Retrieve(Query());
  ASSERT_OK(r);
  EXPECT_EQ(r->ontology_anchors, 0);
  EXPECT_FALSE(HasEntity(*r, "HNF1A"));
  EXPECT_TRUE(HasEntity(*r, "INS"));  // the unexpanded evidence
  EXPECT_THAT(r->skipped_steps,
              ElementsAre(AllOf(HasSubstr("ontology expansion"), HasSubstr("kgstore restarting"))));
  EXPECT_TRUE(HasStage(*r, "ontology_skipped"));
}

TEST_F(RetrieverOntologyTest, AFailedSubtypesFactsReadServesTheUnexpandedSubgraph) {
  Retriever retriever(Retriever::Options(),
                      std::make_shared<FlakySource>(source_, false, false,
                                                    /*fail_anchor_facts=*/true),
                      nullptr, "none");
  auto r = retriever.Retrieve(Query());
  ASSERT_OK(r);
  EXPECT_EQ(r->ontology_anchors, 0);
  EXPECT_FALSE(HasEntity(*r, "HNF1A"));
  // Exactly the unexpanded retrieval: no chain link added, no hop changed.
  RetrieveQuery off = Query();
  off.ontology_expansion = false;
  auto unexpanded = retriever_->Retrieve(off);
  ASSERT_OK(unexpanded);
  EXPECT_EQ(r->subgraph_triples, unexpanded->subgraph_triples);
  ASSERT_EQ(r->triples.size(), unexpanded->triples.size());
  for (size_t i = 0; i < r->triples.size(); ++i) {
    EXPECT_EQ(r->triples[i].head, unexpanded->triples[i].head);
    EXPECT_EQ(r->triples[i].tail, unexpanded->triples[i].tail);
    EXPECT_EQ(r->triples[i].hop, unexpanded->triples[i].hop);
  }
  EXPECT_THAT(r->skipped_steps, ElementsAre(AllOf(HasSubstr("ontology expansion"),
                                                  HasSubstr("subtypes' facts timed out"))));
}

TEST_F(RetrieverOntologyTest, AFailedProvenanceReadKeepsTheEvidenceAndSaysSo) {
  Retriever retriever(Retriever::Options(),
                      std::make_shared<FlakySource>(source_, false, /*fail_provenance=*/true),
                      nullptr, "none");
  auto r = retriever.Retrieve(Query());
  ASSERT_OK(r);
  EXPECT_TRUE(HasEntity(*r, "HNF1A"));
  ASSERT_EQ(r->triple_sources.size(), r->triples.size());
  for (const TripleSources& t : r->triple_sources) EXPECT_TRUE(t.sources.empty());
  EXPECT_THAT(r->skipped_steps,
              ElementsAre(AllOf(HasSubstr("provenance"), HasSubstr("provenance read timed out"))));
  EXPECT_TRUE(HasStage(*r, "provenance_skipped"));
  EXPECT_FALSE(HasStage(*r, "provenance"));
}

TEST_F(RetrieverOntologyTest, PruningKeepsTheIsAChains) {
  CandidateSetOptions co;
  co.max_scored = 1;
  co.with_dde = false;
  co.with_structure_features = false;
  auto cs = BuildCandidateSet(*source_, {}, {"DOID:9351"}, co);
  ASSERT_OK(cs);
  ASSERT_EQ(cs->anchors.size(), 3u);
  ASSERT_EQ(cs->anchor_chains.size(), 3u);
  auto is_a = store_->FindRelation("disease is a subtype of disease");
  ASSERT_OK(is_a);
  size_t longest = 0;
  for (const std::vector<uint32_t>& chain : cs->anchor_chains) {
    longest = std::max(longest, chain.size());
    for (uint32_t c : chain) {
      ASSERT_LT(c, cs->size());
      EXPECT_EQ(cs->relations[c], is_a->id);
    }
  }
  EXPECT_EQ(longest, 2u);  // MODY -> T2D -> diabetes mellitus
  // The three chain links only: the prior's best (a hop-1 triple, first in BFS order) is the
  // "type 2 diabetes mellitus is a subtype of diabetes mellitus" link itself.
  EXPECT_EQ(cs->size(), 3u);
}

TEST_F(RetrieverOntologyTest, AKgWithoutIsAIsNotExpanded) {
  kt::ScratchDir other;
  auto store = kt::WriteAndOpen(kt::SmallKg(), other.path());
  ASSERT_NE(store, nullptr);
  Retriever retriever(Retriever::Options(),
                      std::make_shared<InProcessSubgraphSource>(
                          std::shared_ptr<kgstore::KgStore>(std::move(store))),
                      nullptr, "none");
  RetrieveQuery q = Query();
  q.topic_external_ids = {"DOID:9352"};
  auto r = retriever.Retrieve(q);
  ASSERT_OK(r);
  EXPECT_EQ(r->ontology_anchors, 0);
  EXPECT_EQ(r->subgraph_triples, 10);
}

// Two diseases and the intent-strength order of their answer triples (RankAnswersByStrength):
// six drugs treat hypertension with two sources each, one (Carvedilol) treats hypertension and
// heart failure with one source each; sickle cell anemia has a GWAS locus (BCL11A, GWAS score 1)
// and the gene whose mutation causes it (HBB, DisGeNET 0.5).
kgstore::KgData TwoDiseasesKg() {
  kgstore::KgBuilder b;
  const kgstore::SourceId pdb = b.AddSource("pharmacotherapydb");
  const kgstore::SourceId dc = b.AddSource("drugcentral");
  const kgstore::SourceId gwas = b.AddSource("gwas-catalog-2015");
  const kgstore::SourceId disgenet = b.AddSource("disgenet");
  const kgstore::EntityId htn = b.AddEntity("DOID:10763", "disease", "hypertension");
  const kgstore::EntityId hf = b.AddEntity("DOID:6000", "disease", "congestive heart failure");
  const kgstore::EntityId scd = b.AddEntity("DOID:10923", "disease", "sickle cell anemia");
  const kgstore::RelationId treats =
      b.AddRelation("drug treats disease", "compound", "disease", "The drug treats the disease.");
  const kgstore::RelationId assoc = b.AddRelation("disease associated with gene", "disease", "gene",
                                                  "The gene is linked to the disease.");
  for (int i = 0; i < 6; ++i) {
    const kgstore::EntityId drug = b.AddEntity(absl::StrCat("DrugBank:DB0000", i), "compound",
                                               absl::StrCat("Antihypertensive ", i));
    b.AddTriple(drug, treats, htn, pdb);
    b.AddTriple(drug, treats, htn, dc);
  }
  const kgstore::EntityId carvedilol = b.AddEntity("DrugBank:DB01136", "compound", "Carvedilol");
  b.AddTriple(carvedilol, treats, htn, pdb);
  b.AddTriple(carvedilol, treats, hf, dc);
  const kgstore::EntityId bcl11a = b.AddEntity("Entrez:53335", "gene", "BCL11A");
  const kgstore::EntityId hbb = b.AddEntity("Entrez:3043", "gene", "HBB");
  b.AddTriple(scd, assoc, bcl11a, gwas, 1.0f, {});
  b.AddTriple(scd, assoc, hbb, disgenet, 0.5f, {});
  // Omeprazole: a transporter that BindingDB and Hetionet list as "binds" (two sources) and the
  // proton pump that DrugBank states as its target (one).
  const kgstore::RelationId binds =
      b.AddRelation("drug binds gene", "compound", "gene", "The drug binds the gene's protein.");
  const kgstore::EntityId omeprazole = b.AddEntity("DrugBank:DB00338", "compound", "Omeprazole");
  const kgstore::EntityId abcb1 = b.AddEntity("Entrez:5243", "gene", "ABCB1");
  const kgstore::EntityId atp4a = b.AddEntity("Entrez:495", "gene", "ATP4A");
  b.AddTriple(omeprazole, binds, abcb1, b.AddSource("bindingdb"));
  b.AddTriple(omeprazole, binds, abcb1, b.AddSource("hetionet"));
  b.AddTriple(omeprazole, binds, atp4a, b.AddSource("drugbank-proteins"));
  return b.Finish();
}

class RetrieverIntentOrderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = kt::WriteAndOpen(TwoDiseasesKg(), dir_.path());
    ASSERT_NE(store_, nullptr);
    retriever_ = std::make_unique<Retriever>(
        Retriever::Options(), std::make_shared<InProcessSubgraphSource>(store_), nullptr, "none");
  }

  // The answer end of the first `k` evidence triples (their non-topic end's name).
  std::vector<std::string> FirstAnswers(const std::string& question,
                                        std::vector<std::string> topics, int k) {
    RetrieveQuery q;
    q.question = question;
    q.topic_external_ids = std::move(topics);
    q.mode = ScoringMode::kShortestPath;
    q.top_k = k;
    auto r = retriever_->Retrieve(q);
    EXPECT_OK(r);
    std::vector<std::string> out;
    if (!r.ok()) return out;
    for (const ScoredTriple& t : r->triples) {
      const std::string& head = r->entities.at(t.head).type;
      out.push_back(r->entities.at(head == "disease" ? t.tail : t.head).name);
    }
    return out;
  }

  kt::ScratchDir dir_;
  std::shared_ptr<kgstore::KgStore> store_;
  std::unique_ptr<Retriever> retriever_;
};

TEST_F(RetrieverIntentOrderTest, BothXAndYPutsTheSharedAnswersFirst) {
  // By strength alone Carvedilol's one-source triples come after the six two-source drugs.
  EXPECT_THAT(FirstAnswers("Which drugs treat hypertension and heart failure?",
                           {"DOID:10763", "DOID:6000"}, 2),
              Not(Contains("Carvedilol")));
  EXPECT_THAT(FirstAnswers("Which drugs treat both hypertension and heart failure?",
                           {"DOID:10763", "DOID:6000"}, 2),
              ElementsAre("Carvedilol", "Carvedilol"));
}

TEST_F(RetrieverIntentOrderTest, ACausalGeneQuestionPutsTheGwasLocusLast) {
  EXPECT_THAT(
      FirstAnswers("Which genes are associated with sickle cell anemia?", {"DOID:10923"}, 2),
      ElementsAre("BCL11A", "HBB"));
  EXPECT_THAT(FirstAnswers("Which gene is mutated in sickle cell anemia?", {"DOID:10923"}, 2),
              ElementsAre("HBB", "BCL11A"));
}

TEST_F(RetrieverIntentOrderTest, ATargetQuestionPutsCuratedTargetsBeforeBindings) {
  auto first_gene = [&](const std::string& question,
                        std::optional<common::QuestionIntent> intent = std::nullopt) {
    RetrieveQuery q;
    q.question = question;
    q.topic_external_ids = {"DrugBank:DB00338"};
    q.mode = ScoringMode::kShortestPath;
    q.top_k = 1;
    q.intent = std::move(intent);
    auto r = retriever_->Retrieve(q);
    EXPECT_OK(r);
    return r.ok() && !r->triples.empty() ? r->entities.at(r->triples[0].tail).name : std::string();
  };
  EXPECT_EQ(first_gene("What is the target of omeprazole?"), "ATP4A");
  EXPECT_EQ(first_gene("Which proteins does omeprazole bind?"), "ATP4A");
  // The same relation asked for without the target kind: by strength, ABCB1's two sources win.
  common::QuestionIntent binds_only;
  binds_only.relations = {"drug binds gene"};
  binds_only.answer_types = {"gene"};
  EXPECT_EQ(first_gene("What is the target of omeprazole?", binds_only), "ABCB1");
}

TEST(TopWithAnswerShareTest, TheBestAnswersTakeUpToHalfOfTheTopK) {
  // Six other triples the scorer prefers, then three answers (7, 8, 9) it scored low.
  const std::vector<float> scores = {0.9f, 0.8f, 0.7f, 0.6f, 0.5f, 0.4f, 0.3f, 0.1f, 0.2f, 0.05f};
  const std::vector<uint32_t> answers = {7, 8, 9};
  // Without answers: the plain top k.
  EXPECT_THAT(TopWithAnswerShare(scores, {}, 4), ElementsAre(0, 1, 2, 3));
  // Half of four: the two best answers replace the two lowest other triples, keep their scores
  // (so come last) and their order.
  EXPECT_THAT(TopWithAnswerShare(scores, answers, 4), ElementsAre(0, 1, 8, 7));
  // All three fit in half of eight.
  EXPECT_THAT(TopWithAnswerShare(scores, answers, 8), ElementsAre(0, 1, 2, 3, 4, 8, 7, 9));
  // Half of one is none.
  EXPECT_THAT(TopWithAnswerShare(scores, answers, 1), ElementsAre(0));
  // Answers the scorer already ranks high are not moved; an unscored answer (0) is never let in.
  const std::vector<float> high = {0.9f, 0.0f, 0.7f, 0.6f, 0.5f};
  EXPECT_THAT(TopWithAnswerShare(high, {0, 1}, 4), ElementsAre(0, 2, 3, 4));
  // k beyond the candidates: all of them.
  EXPECT_THAT(TopWithAnswerShare(high, {1}, 10), ElementsAre(0, 2, 3, 4, 1));
}

}  // namespace
}  // namespace ibgraphrag::retriever
