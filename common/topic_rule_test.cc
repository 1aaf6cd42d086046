#include "common/topic_rule.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ibgraphrag::common {
namespace {

using ::testing::ElementsAre;

TEST(AlignmentTextTest, AppendsEachOptionOnItsOwnLine) {
  EXPECT_EQ(AlignmentText("Which drug treats gout?", {"allopurinol", "insulin"}),
            "Which drug treats gout?\nallopurinol\ninsulin");
  EXPECT_EQ(AlignmentText("Is BRCA1 linked to breast cancer?", {}),
            "Is BRCA1 linked to breast cancer?");
}

TEST(AlignmentTextTest, FallsBackToTheQuestionWhenTheOptionsMakeItTooLong) {
  const std::string question = "q?";
  const std::string long_option(kMaxAlignmentTextBytes, 'a');
  EXPECT_EQ(AlignmentText(question, {long_option}), question);
  const std::string fits(kMaxAlignmentTextBytes - question.size() - 1, 'a');
  EXPECT_EQ(AlignmentText(question, {fits}).size(), kMaxAlignmentTextBytes);
}

TEST(TopicEntityIdsTest, KeepsFirstOccurrenceInOrder) {
  EXPECT_THAT(TopicEntityIds({7, 3, 7, 9, 3}), ElementsAre(7, 3, 9));
  EXPECT_TRUE(TopicEntityIds({}).empty());
}

TEST(TopicEntityIdsTest, CapsAtTheLimit) {
  std::vector<uint32_t> ids;
  for (uint32_t i = 0; i < 250; ++i) ids.push_back(i);
  const std::vector<uint32_t> topics = TopicEntityIds(ids);
  ASSERT_EQ(static_cast<int>(topics.size()), kMaxTopicEntities);
  EXPECT_EQ(topics.front(), 0u);
  EXPECT_EQ(topics.back(), static_cast<uint32_t>(kMaxTopicEntities - 1));
}

}  // namespace
}  // namespace ibgraphrag::common
