#include "services/alignment/encoder_trait_mapper.h"

#include <memory>
#include <string>
#include <utility>

#include "common/test_util/status_matchers.h"
#include "gtest/gtest.h"

namespace ibgraphrag::alignment {
namespace {

using ::ibgraphrag::common::test_util::StatusIs;

class EncoderTraitMapperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fibroid_ = builder_.AddEntity("DOID:13223", "disease", "uterine fibroid");
    builder_.AddEntity("DOID:0081312", "disease", "T-cell non-Hodgkin lymphoma");
    builder_.AddEntity("OMIM:148100", "disease", "keloids");
    auto encoder = HashNgramEncoder::Create(HashNgramEncoderOptions());
    ASSERT_OK(encoder);
    encoder_ = std::move(*encoder);
  }
  kgstore::KgBuilder builder_;
  kgstore::EntityId fibroid_ = 0;
  std::shared_ptr<const TextEncoder> encoder_;
};

TEST_F(EncoderTraitMapperTest, NamesFirstThenNearestDoNameAboveTheThreshold) {
  auto mapper = EncoderTraitMapper::Create(builder_, encoder_, EncoderTraitMapperOptions());
  ASSERT_OK(mapper);
  const auto exact = (*mapper)->Map("Uterine fibroid");
  ASSERT_TRUE(exact.has_value());
  EXPECT_EQ(exact->method, "exact");
  // A plural is no name or synonym, and too short a phrase for a word-overlap match.
  const auto plural = (*mapper)->Map("Uterine fibroids");
  ASSERT_TRUE(plural.has_value());
  EXPECT_EQ(plural->entity, fibroid_);
  EXPECT_EQ(plural->method, "encoder");
  EXPECT_GT(plural->confidence, 0.92f * 0.8f);
  EXPECT_LE(plural->confidence, 0.8f + 1e-5f);
  // Near but different diseases stay below the threshold; non-DO diseases are not targets.
  EXPECT_FALSE((*mapper)->Map("B cell non-Hodgkin lymphoma").has_value());
  EXPECT_FALSE((*mapper)->Map("Keloids").has_value());
  EXPECT_FALSE((*mapper)->Map("Height").has_value());
}

// Encodes like the wrapped encoder for its first `good_calls` calls, then fails.
class FailingEncoder final : public TextEncoder {
 public:
  FailingEncoder(std::shared_ptr<const TextEncoder> inner, int good_calls)
      : inner_(std::move(inner)), good_calls_(good_calls) {}
  const std::string& id() const override { return inner_->id(); }
  int dim() const override { return inner_->dim(); }
  absl::Status EncodeBatch(absl::Span<const std::string> texts,
                           absl::Span<float> out) const override {
    if (calls_++ >= good_calls_) return absl::UnavailableError("encoder went away");
    return inner_->EncodeBatch(texts, out);
  }

 private:
  std::shared_ptr<const TextEncoder> inner_;
  int good_calls_;
  mutable int calls_ = 0;
};

TEST_F(EncoderTraitMapperTest, EncoderErrorsAreReturnedNotReadAsNoMatch) {
  auto failing = std::make_shared<FailingEncoder>(encoder_, /*good_calls=*/1);  // the index
  auto mapper = EncoderTraitMapper::Create(builder_, failing, EncoderTraitMapperOptions());
  ASSERT_OK(mapper);
  const auto batch = (*mapper)->MapBatch({"Uterine fibroids"});
  EXPECT_THAT(batch, StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_FALSE((*mapper)->Map("Uterine fibroids").has_value());
}

TEST_F(EncoderTraitMapperTest, RejectsAMissingEncoderAndAGraphWithoutDiseases) {
  EXPECT_THAT(EncoderTraitMapper::Create(builder_, nullptr, EncoderTraitMapperOptions()),
              StatusIs(absl::StatusCode::kInvalidArgument));
  kgstore::KgBuilder empty;
  EXPECT_THAT(EncoderTraitMapper::Create(empty, encoder_, EncoderTraitMapperOptions()),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

}  // namespace
}  // namespace ibgraphrag::alignment
