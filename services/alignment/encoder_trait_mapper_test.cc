#include "services/alignment/encoder_trait_mapper.h"

#include <memory>

#include "gtest/gtest.h"

namespace ibgraphrag::alignment {
namespace {

class EncoderTraitMapperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fibroid_ = builder_.AddEntity("DOID:13223", "disease", "uterine fibroid");
    builder_.AddEntity("DOID:0081312", "disease", "T-cell non-Hodgkin lymphoma");
    builder_.AddEntity("OMIM:148100", "disease", "keloids");
    auto encoder = HashNgramEncoder::Create(HashNgramEncoderOptions());
    ASSERT_TRUE(encoder.ok()) << encoder.status();
    encoder_ = std::move(*encoder);
  }
  kgstore::KgBuilder builder_;
  kgstore::EntityId fibroid_ = 0;
  std::shared_ptr<const TextEncoder> encoder_;
};

TEST_F(EncoderTraitMapperTest, NamesFirstThenNearestDoNameAboveTheThreshold) {
  auto mapper = EncoderTraitMapper::Create(builder_, encoder_, EncoderTraitMapperOptions());
  ASSERT_TRUE(mapper.ok()) << mapper.status();
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

TEST_F(EncoderTraitMapperTest, RejectsAMissingEncoderAndAGraphWithoutDiseases) {
  EXPECT_EQ(
      EncoderTraitMapper::Create(builder_, nullptr, EncoderTraitMapperOptions()).status().code(),
      absl::StatusCode::kInvalidArgument);
  kgstore::KgBuilder empty;
  EXPECT_EQ(
      EncoderTraitMapper::Create(empty, encoder_, EncoderTraitMapperOptions()).status().code(),
      absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace ibgraphrag::alignment
