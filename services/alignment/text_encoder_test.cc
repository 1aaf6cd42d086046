#include "services/alignment/text_encoder.h"

#include <cmath>
#include <cstdio>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/test_util/fake_openai_server.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "services/alignment/testing/test_fixtures.h"
#include "services/alignment/text_normalize.h"

namespace ibgraphrag::alignment {
namespace {

using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::HasSubstr;

float Norm(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += x * x;
  return static_cast<float>(std::sqrt(s));
}

std::unique_ptr<HashNgramEncoder> HashEncoder(int dim = 256) {
  HashNgramEncoderOptions options;
  options.dim = dim;
  return *HashNgramEncoder::Create(options);
}

TEST(TextNormalizeTest, TokensCarryOffsetsSentencesAndPluralFolding) {
  const std::string text = "No fevers. Crohn's disease; arteries";
  const std::vector<Token> t = Tokenize(text);
  ASSERT_EQ(t.size(), 6u);
  EXPECT_EQ(t[1].key, "fever");
  EXPECT_EQ(t[1].sentence, 0u);
  EXPECT_EQ(t[2].lower, "crohn");
  EXPECT_EQ(t[2].sentence, 1u);
  EXPECT_EQ(text.substr(t[2].begin, t[2].end - t[2].begin), "Crohn");
  EXPECT_EQ(t[5].key, "artery");
  EXPECT_EQ(t[5].sentence, 2u);
  EXPECT_EQ(NormalizeForMatch("Type-2 Diabetes"), NormalizeForMatch("type 2 diabetes"));
}

TEST(TextNormalizeTest, AbbreviationsAndUtf8) {
  EXPECT_TRUE(IsAbbreviationLike("MI"));
  EXPECT_TRUE(IsAbbreviationLike("T2DM"));
  EXPECT_FALSE(IsAbbreviationLike("Mi"));
  EXPECT_FALSE(IsAbbreviationLike("M"));
  EXPECT_FALSE(IsAbbreviationLike("heart attack"));
  EXPECT_TRUE(IsValidUtf8("Sjögren syndrome"));
  EXPECT_FALSE(IsValidUtf8(std::string("bad \xC3", 5)));
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));  // surrogate
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));      // overlong '/'
}

TEST(HashNgramEncoderTest, IdNamesTheParameters) {
  EXPECT_EQ(HashEncoder()->id(), "hash-ngram-v1-d256");
  EXPECT_EQ(HashEncoder(512)->id(), "hash-ngram-v1-d512");
  HashNgramEncoderOptions bad;
  bad.dim = 8;
  EXPECT_THAT(HashNgramEncoder::Create(bad), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(HashNgramEncoderTest, VectorsAreUnitLengthAndDeterministic) {
  auto enc = HashEncoder();
  const std::vector<float> a = *enc->Encode("Myocardial infarction");
  const std::vector<float> b = *HashEncoder()->Encode("Myocardial infarction");
  EXPECT_NEAR(Norm(a), 1.0f, 1e-5);
  EXPECT_EQ(a, b);
  // Case and punctuation do not matter.
  EXPECT_EQ(a, *enc->Encode("myocardial-infarction!"));
  const std::vector<float> empty = *enc->Encode("  ...  ");
  EXPECT_EQ(Norm(empty), 0.0f);
}

TEST(HashNgramEncoderTest, SimilarNamesScoreHigherThanUnrelatedOnes) {
  auto enc = HashEncoder();
  const auto q = *enc->Encode("myocardial infarctions");
  const auto near = *enc->Encode("acute myocardial infarction");
  const auto far = *enc->Encode("iron deficiency anemia");
  EXPECT_GT(Dot(q.data(), near.data(), enc->dim()), 0.6f);
  EXPECT_LT(Dot(q.data(), far.data(), enc->dim()), 0.2f);
}

class WordVectorEncoderTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = common::test_util::MakeTempDir("align-wordvec"); }
  std::string Write(const std::string& name, const std::string& contents) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << contents;
    return path;
  }
  void ExpectMeanOfHeartAndAttack(const TextEncoder& enc) {
    ASSERT_EQ(enc.dim(), 3);
    // heart = (1,0,0), attack = (0,1,0) -> mean (0.5, 0.5, 0) -> unit (0.7071, 0.7071, 0).
    const std::vector<float> v = *enc.Encode("Heart ATTACK, unknownword");
    EXPECT_NEAR(v[0], 0.70711f, 1e-4);
    EXPECT_NEAR(v[1], 0.70711f, 1e-4);
    EXPECT_NEAR(v[2], 0.0f, 1e-6);
    EXPECT_EQ(Norm(*enc.Encode("nothing known")), 0.0f);
  }
  std::string dir_;
};

TEST_F(WordVectorEncoderTest, ReadsWord2VecText) {
  WordVectorEncoderOptions o;
  o.path = Write("w2v.txt", "3 3\nheart 2 0 0\nattack 0 3 0\nlung 0 0 1\n");
  auto enc = WordVectorEncoder::Create(o);
  ASSERT_OK(enc);
  EXPECT_EQ((*enc)->vocabulary_size(), 3);
  EXPECT_EQ((*enc)->id(), "wordvec-w2v-n3-d3");
  ExpectMeanOfHeartAndAttack(**enc);
}

TEST_F(WordVectorEncoderTest, ReadsFastTextVecWithTrailingSpaces) {
  WordVectorEncoderOptions o;
  o.path = Write("crawl.vec", "2 3\nheart 1 0 0 \nattack 0 1 0 \n");
  auto enc = WordVectorEncoder::Create(o);
  ASSERT_OK(enc);
  ExpectMeanOfHeartAndAttack(**enc);
}

TEST_F(WordVectorEncoderTest, ReadsGloveWithoutHeader) {
  WordVectorEncoderOptions o;
  o.path = Write("glove.6B.3d.txt", "heart 1.0 0.0 0.0\nattack 0.0 0.5 0.0\n");
  auto enc = WordVectorEncoder::Create(o);
  ASSERT_OK(enc);
  ExpectMeanOfHeartAndAttack(**enc);
}

TEST_F(WordVectorEncoderTest, ReadsWord2VecBinary) {
  std::string bin = "2 3\n";
  auto add = [&bin](const std::string& word, std::vector<float> v) {
    bin += word + " ";
    bin.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
    bin += "\n";
  };
  add("heart", {3, 0, 0});
  add("attack", {0, 1, 0});
  WordVectorEncoderOptions o;
  o.path = Write("bio.bin", bin);
  auto enc = WordVectorEncoder::Create(o);
  ASSERT_OK(enc);
  ExpectMeanOfHeartAndAttack(**enc);
}

TEST_F(WordVectorEncoderTest, MalformedFilesAreDataLossNamingTheLine) {
  WordVectorEncoderOptions o;
  o.path = Write("bad.txt", "heart 1 0 0\nattack 0 1\n");
  auto enc = WordVectorEncoder::Create(o);
  EXPECT_THAT(enc, StatusIs(absl::StatusCode::kDataLoss, HasSubstr(":2:")));
  // A binary row cut short: 2 of the 12 bytes of three floats.
  o.path = Write("short.bin", std::string("2 3\nheart \x01\x02", 12));
  EXPECT_THAT(WordVectorEncoder::Create(o), StatusIs(absl::StatusCode::kDataLoss));
  o.path = dir_ + "/missing.vec";
  EXPECT_THAT(WordVectorEncoder::Create(o), StatusIs(absl::StatusCode::kNotFound));
}

TEST(RemoteEmbeddingEncoderTest, PostsBatchesAndNormalises) {
  auto server = common::test_util::FakeOpenAiServer::Start();
  ASSERT_OK(server);
  // A fake /v1/embeddings: vector i of a request is (len(text), i+1, 0), returned out of order.
  (*server)->SetHandler([](const common::test_util::RecordedRequest& r) {
    nlohmann::json req = nlohmann::json::parse(r.body);
    nlohmann::json data = nlohmann::json::array();
    const auto& input = req["input"];
    for (int i = static_cast<int>(input.size()) - 1; i >= 0; --i) {
      data.push_back({{"object", "embedding"},
                      {"index", i},
                      {"embedding", {input[i].get<std::string>().size(), i + 1, 0}}});
    }
    return common::test_util::FakeResponse::Raw(
        r.path == "/v1/embeddings" ? 200 : 404,
        nlohmann::json({{"object", "list"}, {"data", data}, {"model", req["model"]}}).dump());
  });
  RemoteEmbeddingEncoderOptions o;
  o.base_url = (*server)->base_url();
  o.model = "bge-small";
  o.dim = 3;
  o.batch_size = 2;
  auto enc = RemoteEmbeddingEncoder::Create(o);
  ASSERT_OK(enc);
  EXPECT_EQ((*enc)->id(), "openai-bge-small-d3");
  const std::vector<std::string> texts = {"abc", "abcd", "x"};
  std::vector<float> out(9);
  ASSERT_OK((*enc)->EncodeBatch(texts, absl::MakeSpan(out)));
  EXPECT_EQ((*server)->request_count(), 2);         // batches of 2 and 1
  EXPECT_NEAR(out[0], 3 / std::sqrt(10.0f), 1e-5);  // "abc": (3, 1, 0) / sqrt(10)
  EXPECT_NEAR(out[0] * out[0] + out[1] * out[1], 1.0f, 1e-5);
  EXPECT_NEAR(out[6], 1 / std::sqrt(2.0f), 1e-5);  // "x": (1, 1, 0)
  const nlohmann::json first = nlohmann::json::parse((*server)->requests()[0].body);
  EXPECT_EQ(first["model"], "bge-small");
  EXPECT_EQ(first["input"].size(), 2u);
}

TEST(RemoteEmbeddingEncoderTest, WrongDimensionAndHttpErrorsAreReported) {
  auto server = common::test_util::FakeOpenAiServer::Start();
  ASSERT_OK(server);
  (*server)->Enqueue(
      common::test_util::FakeResponse::Raw(200, R"({"data":[{"index":0,"embedding":[1,2]}]})"));
  (*server)->Enqueue(common::test_util::FakeResponse::Error(503, "overloaded"));
  RemoteEmbeddingEncoderOptions o;
  o.base_url = (*server)->base_url();
  o.model = "m";
  o.dim = 3;
  o.max_retries = 0;  // the 503 is the answer, not a retried step
  auto enc = RemoteEmbeddingEncoder::Create(o);
  ASSERT_OK(enc);
  EXPECT_THAT((*enc)->Encode("a"), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT((*enc)->Encode("a"), StatusIs(absl::StatusCode::kUnavailable));
  o.base_url = "ftp://x";
  EXPECT_THAT(RemoteEmbeddingEncoder::Create(o), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(RemoteEmbeddingEncoderTest, RetriesA503ThenSucceeds) {
  auto server = common::test_util::FakeOpenAiServer::Start();
  ASSERT_OK(server);
  (*server)->Enqueue(common::test_util::FakeResponse::Error(503, "loading model"));
  (*server)->Enqueue(
      common::test_util::FakeResponse::Raw(200, R"({"data":[{"index":0,"embedding":[3,4,0]}]})"));
  RemoteEmbeddingEncoderOptions o;
  o.base_url = (*server)->base_url();
  o.model = "m";
  o.dim = 3;
  auto enc = RemoteEmbeddingEncoder::Create(o);
  ASSERT_OK(enc);
  auto vector = (*enc)->Encode("a");
  ASSERT_OK(vector);
  EXPECT_NEAR((*vector)[0], 0.6f, 1e-5);
  EXPECT_NEAR((*vector)[1], 0.8f, 1e-5);
  EXPECT_EQ((*server)->request_count(), 2);
}

TEST(RemoteEmbeddingEncoderTest, ClosedPortIsUnavailableWithinTheConnectTimeout) {
  auto port = common::test_util::UnusedLoopbackPort();
  ASSERT_OK(port);
  RemoteEmbeddingEncoderOptions o;
  o.base_url = absl::StrCat("http://127.0.0.1:", *port, "/v1");
  o.model = "m";
  o.dim = 3;
  o.connect_timeout = absl::Seconds(1);
  o.max_retries = 0;
  auto enc = RemoteEmbeddingEncoder::Create(o);
  ASSERT_OK(enc);
  const absl::Time start = absl::Now();
  EXPECT_THAT((*enc)->Encode("a"), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_LT(absl::Now() - start, o.connect_timeout);
}

}  // namespace
}  // namespace ibgraphrag::alignment
