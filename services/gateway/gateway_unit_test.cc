// Unit tests of the gateway's admission pieces: API key file parsing, hashing, rotation,
// header parsing, the per-caller token bucket and request validation.
#include <unistd.h>

#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/file_util.h"
#include "common/proto_utf8.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/gateway/api_keys.h"
#include "services/gateway/rate_limiter.h"
#include "services/gateway/request_validation.h"

namespace ibgraphrag::gateway {
namespace {

using ::ibgraphrag::common::Sha256;
using ::ibgraphrag::common::Sha256Hex;
using ::ibgraphrag::common::test_util::IsOk;
using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(ApiKeysTest, Sha256MatchesKnownVector) {
  // printf '%s' test | sha256sum
  EXPECT_EQ(Sha256Hex("test"), "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08");
}

TEST(ApiKeysTest, ParsesIdsHashesAndComments) {
  auto keys = ParseApiKeys(absl::StrCat("# comment\n\n clinic-a : ", Sha256Hex("alpha"),
                                        "\nclinic-b:", Sha256Hex("beta"), "\n"));
  ASSERT_OK(keys);
  ASSERT_EQ(keys->size(), 2u);
  EXPECT_EQ((*keys)[0].key_id, "clinic-a");
  EXPECT_EQ((*keys)[0].hash, Sha256("alpha"));
  EXPECT_EQ((*keys)[1].key_id, "clinic-b");
}

TEST(ApiKeysTest, RejectsMalformedLinesNamingTheLine) {
  auto plain = ParseApiKeys("# ok\nclinic-a:not-a-hash\n");
  ASSERT_THAT(plain, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("line 2")));
  auto duplicate = ParseApiKeys(absl::StrCat("a:", Sha256Hex("x"), "\na:", Sha256Hex("y"), "\n"));
  ASSERT_THAT(duplicate, Not(IsOk()));
  EXPECT_THAT(std::string(duplicate.status().message()), HasSubstr("duplicate key id 'a'"));
  EXPECT_THAT(ParseApiKeys(absl::StrCat(":", Sha256Hex("x"))), Not(IsOk()));  // no id
}

TEST(ApiKeysTest, AuthenticatesAndRotatesWithoutRestart) {
  const std::string dir = common::test_util::MakeTempDir();
  const std::string path = dir + "/keys";
  common::test_util::WriteFileOrDie(path, absl::StrCat("clinic-a:", Sha256Hex("alpha"), "\n"));
  auto store = ApiKeyStore::Load(path, absl::ZeroDuration());
  ASSERT_OK(store);
  auto who = (*store)->Authenticate("alpha");
  ASSERT_OK(who);
  EXPECT_EQ(*who, "clinic-a");
  for (const char* wrong : {"", "alph", "alpha ", "ALPHA", "beta"}) {
    auto refused = (*store)->Authenticate(wrong);
    ASSERT_THAT(refused, StatusIs(absl::StatusCode::kUnauthenticated)) << wrong;
  }
  // Rotation: a new file (other size) replaces the keys; the old key stops working.
  common::test_util::WriteFileOrDie(
      path, absl::StrCat("clinic-b:", Sha256Hex("beta-rotated"), "\n# rotated\n"));
  auto reloaded = (*store)->ReloadIfChanged();
  ASSERT_OK(reloaded);
  EXPECT_TRUE(*reloaded);
  EXPECT_THAT((*store)->Authenticate("alpha"), Not(IsOk()));
  auto rotated = (*store)->Authenticate("beta-rotated");
  ASSERT_OK(rotated);
  EXPECT_EQ(*rotated, "clinic-b");
  // A broken file keeps the previous keys in force.
  common::test_util::WriteFileOrDie(path, "garbage line\n");
  EXPECT_THAT((*store)->ReloadIfChanged(), Not(IsOk()));
  EXPECT_OK((*store)->Authenticate("beta-rotated"));
  // Unchanged file: no reload.
  common::test_util::WriteFileOrDie(path, absl::StrCat("c:", Sha256Hex("gamma"), "\n"));
  ASSERT_OK((*store)->ReloadIfChanged());
  auto again = (*store)->ReloadIfChanged();
  ASSERT_OK(again);
  EXPECT_FALSE(*again);
}

TEST(ApiKeysTest, MissingFileIsAnError) {
  auto store = ApiKeyStore::Load("/nonexistent/keys");
  ASSERT_THAT(store, Not(IsOk()));
  EXPECT_THAT(std::string(store.status().message()), HasSubstr("api_keys_file"));
}

TEST(ApiKeysTest, PresentedKeyFromHeaders) {
  EXPECT_EQ(PresentedKey("Bearer abc", ""), "abc");
  EXPECT_EQ(PresentedKey("bearer  abc ", ""), "abc");
  EXPECT_EQ(PresentedKey("", "xyz"), "xyz");
  EXPECT_EQ(PresentedKey("Basic Zm9v", "xyz"), "xyz");
  EXPECT_EQ(PresentedKey("", ""), "");
}

TEST(RateLimiterTest, TokenBucketPerCaller) {
  RateLimiter limiter(/*qps=*/2, /*burst=*/3);
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limiter.Allow("a", t0)) << i;
  EXPECT_FALSE(limiter.Allow("a", t0));
  EXPECT_TRUE(limiter.Allow("b", t0));                             // callers do not share a bucket
  EXPECT_FALSE(limiter.Allow("a", t0 + absl::Milliseconds(400)));  // 0.8 token
  EXPECT_TRUE(limiter.Allow("a", t0 + absl::Milliseconds(500)));   // 1 token
  // Refill is capped at the burst.
  const absl::Time later = t0 + absl::Seconds(100);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limiter.Allow("a", later)) << i;
  EXPECT_FALSE(limiter.Allow("a", later));
  RateLimiter off(0, 0);
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(off.Allow("a", t0));
}

ibgraphrag::v1::AnswerRequest Valid() {
  ibgraphrag::v1::AnswerRequest r;
  r.set_question("Which drug treats type 2 diabetes?");
  return r;
}

void ExpectInvalid(const ibgraphrag::v1::AnswerRequest& r, const std::string& field) {
  absl::Status s = ValidateAnswerRequest(r);
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument)) << field;
  EXPECT_THAT(std::string(s.message()), ::testing::StartsWith(field + ":")) << s;
}

TEST(RequestValidationTest, AcceptsTypicalRequests) {
  EXPECT_OK(ValidateAnswerRequest(Valid()));
  auto r = Valid();
  r.add_options("Metformin");
  r.add_options("Insulin");
  r.set_task(ibgraphrag::v1::TASK_MULTIPLE_CHOICE);
  r.mutable_pipeline()->set_top_k(1000);
  r.mutable_pipeline()->set_lambda(0.0f);
  r.mutable_pipeline()->set_tau(1.0f);
  r.mutable_pipeline()->set_max_hops(4);
  EXPECT_OK(ValidateAnswerRequest(r));
  r.set_question(std::string(kMaxQuestionBytes, 'a'));
  EXPECT_OK(ValidateAnswerRequest(r));
}

TEST(RequestValidationTest, NamesTheFieldAndLimit) {
  auto r = Valid();
  r.set_question("");
  ExpectInvalid(r, "question");
  r.set_question(std::string(kMaxQuestionBytes + 1, 'a'));
  ExpectInvalid(r, "question");
  EXPECT_THAT(std::string(ValidateAnswerRequest(r).message()), HasSubstr("16 KiB"));
  r.set_question(std::string("bad \xC3", 5));
  ExpectInvalid(r, "question");
  r = Valid();
  for (int i = 0; i < 27; ++i) r.add_options(absl::StrCat("option ", i));
  ExpectInvalid(r, "options");
  r = Valid();
  r.add_options("ok");
  r.add_options(std::string(kMaxOptionBytes + 1, 'x'));
  ExpectInvalid(r, "options[1]");
  r = Valid();
  r.add_options("only one");
  r.set_task(ibgraphrag::v1::TASK_MULTIPLE_CHOICE);
  ExpectInvalid(r, "options");
  r = Valid();
  r.mutable_pipeline()->set_top_k(0);
  ExpectInvalid(r, "pipeline.top_k");
  r = Valid();
  r.mutable_pipeline()->set_top_k(1001);
  ExpectInvalid(r, "pipeline.top_k");
  r = Valid();
  r.mutable_pipeline()->set_lambda(1.5f);
  ExpectInvalid(r, "pipeline.lambda");
  r = Valid();
  r.mutable_pipeline()->set_tau(std::nanf(""));
  ExpectInvalid(r, "pipeline.tau");
  r = Valid();
  r.mutable_pipeline()->set_max_hops(5);
  ExpectInvalid(r, "pipeline.max_hops");
  r = Valid();
  r.mutable_pipeline()->set_align_top_k(0);
  ExpectInvalid(r, "pipeline.align_top_k");
  r = Valid();
  r.mutable_pipeline()->set_reasoner_backend(std::string(200, 'b'));
  ExpectInvalid(r, "pipeline.reasoner_backend");
  r = Valid();
  r.mutable_pipeline()->set_scorer_variant(static_cast<ibgraphrag::v1::ScorerVariant>(9));
  ExpectInvalid(r, "pipeline.scorer_variant");
}

TEST(ProtoUtf8Test, NamesTheFieldWithInvalidUtf8) {
  using common::FindInvalidUtf8Field;
  ibgraphrag::v1::AnswerStreamRequest stream;
  ibgraphrag::v1::AnswerRequest* r = stream.mutable_request();
  r->set_question("Which drug treats asthma?");
  r->add_options("Salbutamol");
  r->add_options("Metformin");
  r->mutable_pipeline()->set_reasoner_backend("llm");
  const auto* descriptor = ibgraphrag::v1::AnswerStreamRequest::descriptor();
  EXPECT_EQ(FindInvalidUtf8Field(stream.SerializeAsString(), descriptor), "");
  r->set_options(1, std::string("Met\xC0\xAF"
                                "formin",
                                11));  // overlong '/'
  EXPECT_EQ(FindInvalidUtf8Field(stream.SerializeAsString(), descriptor), "request.options[1]");
  r->set_options(1, "Metformin");
  r->mutable_pipeline()->set_reasoner_backend(std::string("\xED\xA0\x80", 3));  // surrogate
  EXPECT_EQ(FindInvalidUtf8Field(stream.SerializeAsString(), descriptor),
            "request.pipeline.reasoner_backend");
  EXPECT_EQ(
      FindInvalidUtf8Field(r->SerializeAsString(), ibgraphrag::v1::AnswerRequest::descriptor()),
      "pipeline.reasoner_backend");
  // Not a message at all: no field to name (the caller reports a parse error).
  EXPECT_EQ(FindInvalidUtf8Field(std::string("\x0a\xff\xff", 3), descriptor), "");
  EXPECT_TRUE(common::IsValidUtf8("Sjögren syndrome"));
  EXPECT_FALSE(common::IsValidUtf8(std::string("\xF4\x90\x80\x80", 4)));  // > U+10FFFF
}

}  // namespace
}  // namespace ibgraphrag::gateway
