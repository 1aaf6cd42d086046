// The scorer implementations agree (LibTorch's plain MLP and factorised ops, the fused loop over
// LibTorch's and over BLAS's projections, a model served with and without the LibTorch backend),
// and checkpoints round-trip or fail loudly.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/kgstore/kg_store_test_util.h"
#include "services/retriever/alignment_embedder.h"
#include "services/retriever/fused_scorer.h"
#include "services/retriever/model_bundle.h"
#include "services/retriever/retriever.h"
#include "services/retriever/retriever_test_util.h"
#include "services/retriever/scorer_params.h"
#include "services/retriever/scorer_test_util.h"
#include "services/retriever/scoring_backend.h"
#include "services/retriever/torch_backend.h"
#include "services/retriever/torch_scorer.h"

namespace ibgraphrag::retriever {
namespace {

using ::ibgraphrag::common::test_util::StatusIs;
using kgstore::testing::ScratchDir;
using ::testing::HasSubstr;

struct Dims {
  int text_dim;
  int hidden;
  int prior_dim;
};

class ScorerAgreementTest : public ::testing::TestWithParam<Dims> {};

TEST_P(ScorerAgreementTest, FactorisedAndFusedMatchPlainMlp) {
  ScorerConfig config;
  config.text_dim = GetParam().text_dim;
  config.dde_dim = 5;
  config.hidden = GetParam().hidden;
  config.prior_dim = GetParam().prior_dim;
  const ScorerParams params = InitScorerParams(config, 7);
  auto data =
      testing::MakeRandomCandidates(config.text_dim, 5, 300, 12, 80, 1000, 11, config.prior_dim);
  auto scorer = TorchScorer::Create(params, "cpu");
  ASSERT_OK(scorer);
  auto projections = (*scorer)->Precompute(*data.entities, *data.relations);
  ASSERT_OK(projections);

  // What the CPU serving binaries use: no LibTorch, projections from BLAS.
  auto blas_projections = ComputeProjections(params, *data.entities, *data.relations);
  ASSERT_OK(blas_projections);

  const CandidateBatch batch = data.batch();
  const size_t n = batch.heads.size();
  std::vector<float> mlp(n), factorised(n), fused(n), fused_blas(n);
  ASSERT_OK((*scorer)->ScoreMlp(batch, *data.entities, *data.relations, absl::MakeSpan(mlp)));
  ASSERT_OK((*scorer)->ScoreFactorised(batch, absl::MakeSpan(factorised)));
  FusedScorer fused_scorer(*projections);
  FusedScratch scratch;
  ASSERT_OK(fused_scorer.Score(batch, absl::MakeSpan(fused), &scratch));
  ASSERT_OK(FusedScorer(*blas_projections).Score(batch, absl::MakeSpan(fused_blas), &scratch));
  double spread = 0;
  for (size_t i = 0; i < n; ++i) {
    ASSERT_NEAR(factorised[i], mlp[i], 1e-5) << i;
    ASSERT_NEAR(fused[i], mlp[i], 1e-5) << i;
    ASSERT_NEAR(fused_blas[i], mlp[i], 1e-5) << i;
    spread += std::abs(mlp[i] - mlp[0]);
  }
  EXPECT_GT(spread, 0.0) << "scores should differ between candidates";
}

INSTANTIATE_TEST_SUITE_P(Dims, ScorerAgreementTest,
                         ::testing::Values(Dims{16, 32, kPriorFeatureDim},
                                           Dims{256, 256, kPriorFeatureDim}, Dims{30, 13, 0}));

// The structure-feature term is part of every form: with the MLP silenced (w2 = 0) the logit
// is exactly w_prior · x_p.
TEST(ScorerTest, PriorTermReachesEveryForm) {
  ScorerConfig config;
  config.text_dim = 16;
  config.hidden = 8;
  ScorerParams params = InitScorerParams(config, 3);
  ResidualPriorInit(&params);
  params.w_prior = {0.5f, 1.0f, -2.0f, 0.25f, 0.0f, 3.0f, 1.5f, -0.75f};
  auto data = testing::MakeRandomCandidates(16, 5, 50, 4, 20, 200, 5);
  auto scorer = TorchScorer::Create(params, "cpu");
  ASSERT_OK(scorer);
  auto projections = (*scorer)->Precompute(*data.entities, *data.relations);
  ASSERT_OK(projections);
  const CandidateBatch batch = data.batch();
  std::vector<float> mlp(200), factorised(200), fused(200);
  ASSERT_OK((*scorer)->ScoreMlp(batch, *data.entities, *data.relations, absl::MakeSpan(mlp)));
  ASSERT_OK((*scorer)->ScoreFactorised(batch, absl::MakeSpan(factorised)));
  FusedScratch scratch;
  ASSERT_OK(FusedScorer(*projections).Score(batch, absl::MakeSpan(fused), &scratch));
  for (size_t i = 0; i < 200; ++i) {
    float logit = 0;
    for (int k = 0; k < kPriorFeatureDim; ++k) {
      logit += params.w_prior[k] * data.prior[i * kPriorFeatureDim + k];
    }
    const float want = 1.0f / (1.0f + std::exp(-logit));
    ASSERT_NEAR(mlp[i], want, 1e-6) << i;
    ASSERT_NEAR(factorised[i], want, 1e-6) << i;
    ASSERT_NEAR(fused[i], want, 1e-6) << i;
  }
}

TEST(ScorerTest, RejectsStructureFeaturesOfTheWrongLength) {
  ScorerConfig config;
  config.text_dim = 8;
  config.hidden = 8;
  auto data = testing::MakeRandomCandidates(8, 5, 10, 3, 4, 5, 1);
  data.prior.pop_back();
  auto scorer = TorchScorer::Create(InitScorerParams(config, 1), "cpu");
  ASSERT_OK(scorer);
  auto projections = (*scorer)->Precompute(*data.entities, *data.relations);
  ASSERT_OK(projections);
  std::vector<float> out(5);
  absl::Status s = (*scorer)->ScoreFactorised(data.batch(), absl::MakeSpan(out));
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("prior")));
  FusedScratch scratch;
  s = FusedScorer(*projections).Score(data.batch(), absl::MakeSpan(out), &scratch);
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("prior")));
}

TEST(ScorerTest, RejectsBatchesThatDoNotFitTheModel) {
  ScorerConfig config;
  config.text_dim = 8;
  config.hidden = 8;
  auto data = testing::MakeRandomCandidates(8, 5, 10, 3, 4, 5, 1);
  data.heads[2] = 10;  // outside the 10 entities
  auto scorer = TorchScorer::Create(InitScorerParams(config, 1), "cpu");
  ASSERT_OK(scorer);
  ASSERT_OK((*scorer)->Precompute(*data.entities, *data.relations));
  std::vector<float> out(5);
  absl::Status s = (*scorer)->ScoreFactorised(data.batch(), absl::MakeSpan(out));
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("candidates[2]")));
}

TEST(ScorerTest, FusedRejectsANodeIndexNamingTwoEntities) {
  ScorerConfig config;
  config.text_dim = 8;
  config.hidden = 8;
  auto data = testing::MakeRandomCandidates(8, 5, 10, 3, 4, 5, 1);
  data.head_nodes[1] = data.head_nodes[0];
  data.heads[1] = (data.heads[0] + 1) % 10;
  auto scorer = TorchScorer::Create(InitScorerParams(config, 1), "cpu");
  ASSERT_OK(scorer);
  auto projections = (*scorer)->Precompute(*data.entities, *data.relations);
  ASSERT_OK(projections);
  std::vector<float> out(5);
  FusedScratch scratch;
  absl::Status s = FusedScorer(*projections).Score(data.batch(), absl::MakeSpan(out), &scratch);
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("two entities")));
}

TEST(ScorerTest, DeviceSpecsResolve) {
  EXPECT_EQ(*ResolveDevice("cpu"), "cpu");
  EXPECT_EQ(*ResolveDevice("auto"), CudaAvailable() ? "cuda:0" : "cpu");
  EXPECT_THAT(ResolveDevice("tpu"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ResolveDevice("cuda:x"), StatusIs(absl::StatusCode::kInvalidArgument));
  if (!CudaAvailable()) {
    EXPECT_THAT(ResolveDevice("cuda:0"), StatusIs(absl::StatusCode::kFailedPrecondition));
  }
}

// The projections the CPU binaries compute with BLAS are LibTorch's, entry by entry.
TEST(ScorerTest, BlasProjectionsEqualLibTorchs) {
  ScorerConfig config;
  config.text_dim = 64;
  config.hidden = 48;
  const ScorerParams params = InitScorerParams(config, 5);
  auto data = testing::MakeRandomCandidates(64, 5, 500, 20, 10, 10, 3);
  auto scorer = TorchScorer::Create(params, "cpu");
  ASSERT_OK(scorer);
  auto torch_p = (*scorer)->Precompute(*data.entities, *data.relations);
  ASSERT_OK(torch_p);
  auto blas_p = ComputeProjections(params, *data.entities, *data.relations);
  ASSERT_OK(blas_p);
  ASSERT_EQ((*blas_p)->head.size(), (*torch_p)->head.size());
  ASSERT_EQ((*blas_p)->relation.size(), (*torch_p)->relation.size());
  for (size_t i = 0; i < (*torch_p)->head.size(); ++i) {
    ASSERT_NEAR((*blas_p)->head[i], (*torch_p)->head[i], 1e-5) << i;
    ASSERT_NEAR((*blas_p)->tail[i], (*torch_p)->tail[i], 1e-5) << i;
  }
  for (size_t i = 0; i < (*torch_p)->relation.size(); ++i) {
    ASSERT_NEAR((*blas_p)->relation[i], (*torch_p)->relation[i], 1e-5) << i;
  }
  EXPECT_EQ((*blas_p)->w_q, (*torch_p)->w_q);
  EXPECT_EQ((*blas_p)->w_prior, (*torch_p)->w_prior);
}

TEST(ScorerTest, ComputeProjectionsRejectsMismatchedInputs) {
  ScorerConfig config;
  config.text_dim = 16;
  config.hidden = 8;
  ScorerParams params = InitScorerParams(config, 1);
  auto narrow = testing::MakeRandomCandidates(12, 5, 10, 3, 4, 5, 1);
  EXPECT_THAT(ComputeProjections(params, *narrow.entities, *narrow.relations),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("text_dim 16")));
  auto data = testing::MakeRandomCandidates(16, 5, 10, 3, 4, 5, 1);
  params.b1.pop_back();
  EXPECT_THAT(ComputeProjections(params, *data.entities, *data.relations),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("array sizes")));
}

// A binary without a backend (the CPU image's retriever) scores on CPU and says which binary to
// run for a GPU; one with LibTorch resolves devices as LibTorch does.
TEST(ScoringBackendTest, DevicesWithoutABackendAreCpuOnly) {
  for (const char* spec : {"auto", "", "cpu"}) {
    absl::StatusOr<std::string> device = ResolveScoringDevice(nullptr, spec);
    ASSERT_OK(device) << spec;
    EXPECT_EQ(*device, "cpu") << spec;
  }
  EXPECT_THAT(ResolveScoringDevice(nullptr, "cuda:0"),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("retriever_torch")));
  EXPECT_THAT(ResolveScoringDevice(nullptr, "cuda"),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("retriever_torch")));
  for (const char* spec : {"tpu", "cudafoo", "cuda:x", "cuda:-1"}) {
    EXPECT_THAT(ResolveScoringDevice(nullptr, spec),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("device")))
        << spec;
  }
  EXPECT_THAT(SetScoringThreads(nullptr, 0),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("torch_threads")));
  EXPECT_OK(SetScoringThreads(nullptr, 2));
  const ScoringBackend& torch = LibTorchScoringBackend();
  EXPECT_EQ(torch.name(), "libtorch");
  absl::StatusOr<std::string> device = ResolveScoringDevice(&torch, "auto");
  ASSERT_OK(device);
  EXPECT_EQ(*device, CudaAvailable() ? "cuda:0" : "cpu");
}

// One published model served by the CPU build (fused loop over BLAS projections) and by the
// LibTorch build forced onto its ops: the same scores for the same batch.
TEST(ScoringBackendTest, ServedModelScoresTheSameWithAndWithoutLibTorch) {
  ScratchDir dir;
  testing::PublishTestVersion(dir.path(), kgstore::testing::SmallKg(), 32, 16);
  const std::string version_dir = RetrieverVersionDir(dir.path(), 1);
  RetrieverModel::Options cpu;
  cpu.device = "auto";
  auto fused = RetrieverModel::Load(version_dir, cpu, TextEmbedder());
  ASSERT_OK(fused);
  EXPECT_EQ((*fused)->device(), "cpu");
  RetrieverModel::Options forced;
  forced.device = "cpu";
  forced.backend = &LibTorchScoringBackend();
  forced.force_backend_scoring = true;
  auto torch = RetrieverModel::Load(version_dir, forced, TextEmbedder());
  ASSERT_OK(torch);
  RetrieverModel::Options no_backend = cpu;
  no_backend.force_backend_scoring = true;
  EXPECT_THAT(RetrieverModel::Load(version_dir, no_backend, TextEmbedder()),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("force_backend_scoring")));
  RetrieverModel::Options gpu = cpu;
  gpu.device = "cuda:0";
  EXPECT_THAT(RetrieverModel::Load(version_dir, gpu, TextEmbedder()),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("retriever_torch")));

  const int entities = static_cast<int>((*fused)->entities().rows());
  const int relations = static_cast<int>((*fused)->relations().rows());
  const ScorerConfig& config = (*fused)->scorer_config((*fused)->default_variant());
  testing::RandomCandidates data = testing::MakeRandomCandidates(
      config.text_dim, config.dde_dim, entities, relations, 6, 40, 9, config.prior_dim);
  const CandidateBatch batch = data.batch();
  std::vector<float> a(40), b(40);
  ASSERT_OK((*fused)->Score(batch, absl::MakeSpan(a)));
  ASSERT_OK((*torch)->Score(batch, absl::MakeSpan(b)));
  for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-5) << i;
}

TEST(ScorerParamsTest, SerializeRoundTripsAndRejectsTruncation) {
  ScorerConfig config;
  config.text_dim = 4;
  config.hidden = 3;
  const ScorerParams p = InitScorerParams(config, 3);
  const std::string bytes = SerializeScorerParams(p);
  auto back = ParseScorerParams(bytes);
  ASSERT_OK(back);
  EXPECT_EQ(back->w1, p.w1);
  EXPECT_EQ(back->b1, p.b1);
  EXPECT_EQ(back->w2, p.w2);
  EXPECT_EQ(back->b2, p.b2);
  EXPECT_EQ(back->w_prior, p.w_prior);
  EXPECT_EQ(back->config.prior_dim, kPriorFeatureDim);
  EXPECT_THAT(ParseScorerParams(bytes.substr(0, bytes.size() - 4)),
              StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(ParseScorerParams("nonsense"), StatusIs(absl::StatusCode::kDataLoss));
  // A checkpoint of the previous format (no structure features) is named, not misread.
  std::string old = bytes;
  old[7] = '1';
  auto refused = ParseScorerParams(old);
  EXPECT_THAT(refused, StatusIs(absl::StatusCode::kDataLoss, HasSubstr("retrain")));
  // Without structure features the checkpoint round-trips too.
  config.prior_dim = 0;
  const ScorerParams plain = InitScorerParams(config, 3);
  auto plain_back = ParseScorerParams(SerializeScorerParams(plain));
  ASSERT_OK(plain_back);
  EXPECT_TRUE(plain_back->w_prior.empty());
  config.prior_dim = 4;
  EXPECT_THAT(ValidateScorerConfig(config), StatusIs(absl::StatusCode::kInvalidArgument));
}

// Writes a complete version 1 under `base` with a small model and embeddings of SmallKg.
void PublishSmallVersion(const std::string& base, ScorerParams* params_out) {
  const TextEmbedder embedder = HashNgramEmbedder(16).value();
  absl::StatusOr<common::ArtifactStaging> staging =
      common::ArtifactStaging::CreateVersion(RetrieverArtifacts(base), 1);
  ASSERT_OK(staging);
  RetrieverManifest manifest;
  manifest.version = 1;
  manifest.kg_version = "1";
  ASSERT_OK(BuildRetrieverArtifacts(ArtifactTextsFromKg(kgstore::testing::SmallKg()), embedder,
                                    staging->dir(), &manifest));
  ScorerConfig config;
  config.text_dim = 16;
  config.hidden = 8;
  *params_out = InitScorerParams(config, 5);
  manifest.training["lambda2"] = "0.5";
  manifest.metrics["dev_recall@10"] = 0.5;
  ASSERT_OK(PublishRetrieverVersion(&*staging, *params_out, manifest));
}

TEST(ModelBundleTest, PublishedVersionLoadsBack) {
  ScratchDir dir;
  ScorerParams params;
  PublishSmallVersion(dir.path(), &params);
  auto resolved = ResolveRetrieverDir(dir.path(), std::nullopt);
  ASSERT_OK(resolved);
  auto loaded = LoadRetrieverVersion(*resolved);
  ASSERT_OK(loaded);
  EXPECT_EQ(loaded->params.w1, params.w1);
  EXPECT_EQ(loaded->manifest.encoder_id, "hash-ngram-v1-d16");
  EXPECT_EQ(loaded->manifest.dde.forward_rounds, 2);
  EXPECT_EQ(loaded->manifest.training.at("lambda2"), "0.5");
  EXPECT_DOUBLE_EQ(loaded->manifest.metrics.at("dev_recall@10"), 0.5);
  EXPECT_EQ(loaded->entities->rows(), 9);
  EXPECT_EQ(loaded->entities->dim(), 16);
  EXPECT_EQ(*NextRetrieverVersion(dir.path()), 2);
}

TEST(ModelBundleTest, MissingOrCorruptFilesGiveClearErrors) {
  ScorerParams params;
  {
    ScratchDir dir;
    PublishSmallVersion(dir.path(), &params);
    const std::string v = RetrieverVersionDir(dir.path(), 1);
    {
      std::fstream f(v + "/model.bin", std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(40);
      f.put('\x7f');
    }
    auto loaded = LoadRetrieverVersion(v);
    EXPECT_THAT(loaded, StatusIs(absl::StatusCode::kDataLoss, HasSubstr("model.bin")));
  }
  {
    ScratchDir dir;
    PublishSmallVersion(dir.path(), &params);
    const std::string v = RetrieverVersionDir(dir.path(), 1);
    std::filesystem::remove(v + "/entity_embeddings.f32");
    auto loaded = LoadRetrieverVersion(v);
    EXPECT_THAT(loaded, StatusIs(absl::StatusCode::kNotFound, HasSubstr("entity_embeddings.f32")));
  }
  {
    ScratchDir dir;
    PublishSmallVersion(dir.path(), &params);
    const std::string v = RetrieverVersionDir(dir.path(), 1);
    std::ofstream(v + "/manifest.json") << "{\"format_version\": 2";
    EXPECT_THAT(LoadRetrieverVersion(v), StatusIs(absl::StatusCode::kDataLoss));
  }
  {
    // A model written by an older build (format 1, before the structure features) is refused
    // with a reason, not misread.
    ScratchDir dir;
    PublishSmallVersion(dir.path(), &params);
    const std::string v = RetrieverVersionDir(dir.path(), 1);
    testing::RewriteManifestFormat(v, 1);
    auto loaded = LoadRetrieverVersion(v);
    EXPECT_THAT(loaded,
                StatusIs(absl::StatusCode::kFailedPrecondition,
                         ::testing::AllOf(HasSubstr("format_version 1"), HasSubstr("retrain"))));
  }
  ScratchDir empty;
  EXPECT_THAT(ResolveRetrieverDir(empty.path(), std::nullopt),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(ResolveRetrieverDir(empty.path(), 3), StatusIs(absl::StatusCode::kNotFound));
}

TEST(EmbeddingTableTest, TruncatedFileIsDataLoss) {
  ScratchDir dir;
  const std::string path = dir.path() + "/t.f32";
  ASSERT_OK(WriteEmbeddingTable(path, std::vector<float>(12, 1.0f), 4));
  auto table = EmbeddingTable::Open(path);
  ASSERT_OK(table);
  EXPECT_EQ((*table)->rows(), 3);
  EXPECT_FLOAT_EQ((*table)->row(2)[3], 1.0f);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 4);
  EXPECT_THAT(EmbeddingTable::Open(path), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(EmbeddingTable::Open(path + ".none"), StatusIs(absl::StatusCode::kNotFound));
}

TEST(TextEmbedderTest, DeterministicNormalisedAndSimilarForSimilarText) {
  const TextEmbedder e = HashNgramEmbedder(64).value();
  const auto a = e.embed("type 2 diabetes mellitus");
  EXPECT_EQ(a, e.embed("Type 2 Diabetes Mellitus"));
  double norm = 0, dot_similar = 0, dot_other = 0;
  const auto b = e.embed("diabetes mellitus");
  const auto c = e.embed("asthma");
  for (int i = 0; i < 64; ++i) {
    norm += a[i] * a[i];
    dot_similar += a[i] * b[i];
    dot_other += a[i] * c[i];
  }
  EXPECT_NEAR(norm, 1.0, 1e-5);
  EXPECT_GT(dot_similar, dot_other);
}

}  // namespace
}  // namespace ibgraphrag::retriever
