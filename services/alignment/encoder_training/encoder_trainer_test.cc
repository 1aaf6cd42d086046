// The name-encoder trainer on tiny synthetic data: the split by concept, loss and accuracy going
// the right way, determinism, and the torch forward against the served plain-C++ encoder.
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/alignment/encoder_training/name_encoder_model.h"
#include "services/alignment/encoder_training/training_concepts.h"
#include "services/alignment/trained_encoder.h"

namespace ibgraphrag::alignment::training {
namespace {

using ::ibgraphrag::common::test_util::IsOk;
using ::testing::Not;

LexiconEntry Entry(const std::string& id, const std::string& name,
                   std::vector<std::string> synonyms, std::vector<std::string> xrefs) {
  LexiconEntry e;
  e.external_id = id;
  e.name = name;
  e.synonyms = std::move(synonyms);
  e.xrefs = std::move(xrefs);
  return e;
}

TEST(TrainingConceptsTest, XrefJoinedEntriesShareOneConceptAndOneSplit) {
  Lexicon lexicon;
  for (int i = 0; i < 200; ++i) {
    const std::string cui = absl::StrCat("UMLS:C", 1000 + i);
    lexicon.entries.push_back(
        Entry(absl::StrCat("DOID:", i), absl::StrCat("disease ", i), {"syn a"}, {cui}));
    lexicon.entries.push_back(Entry(absl::StrCat("HP:", i), absl::StrCat("phenotype ", i), {},
                                    {absl::StrCat("UMLS_CUI:C", 1000 + i)}));
  }
  // An xref on too many entries joins nothing; ICD codes never join.
  for (auto& e : lexicon.entries) e.xrefs.push_back("MESH:D000001");
  lexicon.entries[0].xrefs.push_back("ICD10CM:E11");
  lexicon.entries[4].xrefs.push_back("ICD10CM:E11");

  ConceptSet set = BuildConcepts(lexicon, ConceptOptions());
  ASSERT_EQ(set.concepts.size(), 200u);
  ASSERT_OK(AssignSplits(/*seed=*/7, 0.2, 0.2, &set));
  int per_split[3] = {0, 0, 0};
  for (uint32_t e = 0; e < lexicon.entries.size(); e += 2) {
    EXPECT_EQ(set.concept_of_entry[e], set.concept_of_entry[e + 1]) << "entry " << e;
    ++per_split[static_cast<int>(set.concepts[set.concept_of_entry[e]].split)];
  }
  EXPECT_GT(per_split[1], 10);  // ~40 of 200 each
  EXPECT_GT(per_split[2], 10);
  // Names of validation and test concepts never reach training.
  for (const auto& group : TrainingGroups(set, {})) {
    for (const Concept& c : set.concepts) {
      if (c.split == Split::kTrain) continue;
      EXPECT_NE(group[0], c.names[0]);
    }
  }
  // The split is a function of the seed and the concept keys only.
  ConceptSet again = BuildConcepts(lexicon, ConceptOptions());
  ASSERT_OK(AssignSplits(7, 0.2, 0.2, &again));
  for (size_t c = 0; c < set.concepts.size(); ++c) {
    EXPECT_EQ(set.concepts[c].split, again.concepts[c].split);
  }
  EXPECT_THAT(AssignSplits(7, 0.7, 0.1, &again), Not(IsOk()));
}

TEST(TrainingConceptsTest, HeldOutStringsStayOutOfTraining) {
  Lexicon lexicon;
  lexicon.entries.push_back(
      Entry("DOID:1", "regional enteritis", {"Crohn disease", "granulomatous colitis"}, {}));
  ConceptSet set = BuildConcepts(lexicon, ConceptOptions());
  const auto groups = TrainingGroups(set, {{0, "Crohn's disease"}, {0, "crohn disease"}});
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_THAT(groups[0], ::testing::ElementsAre("regional enteritis", "granulomatous colitis"));
  EXPECT_EQ(TrainingDataDigest(groups), TrainingDataDigest(groups));
  EXPECT_NE(TrainingDataDigest(groups), TrainingDataDigest({{"regional enteritis"}}));
}

// Concepts whose names share no characters: only training can link them.
std::vector<std::vector<std::string>> SyntheticConcepts(int n) {
  std::mt19937 rng(3);
  auto word = [&] {
    std::string w;
    for (int i = 0; i < 6; ++i) w += static_cast<char>('a' + rng() % 26);
    return w;
  };
  std::vector<std::vector<std::string>> groups;
  for (int i = 0; i < n; ++i) {
    const std::string a = word(), b = word(), c = word();
    groups.push_back({a + " " + b, b + " " + c, c});
  }
  return groups;
}

NameEncoderTrainOptions TinyOptions() {
  NameEncoderTrainOptions o;
  o.features.buckets = 4096;
  o.dim = 32;
  o.hidden = 16;
  o.epochs = 40;
  o.batch_concepts = 16;
  o.temperature = 0.1;
  o.table_learning_rate = 0.3;
  o.mlp_learning_rate = 3e-3;
  o.hard_negative_fraction = 0.5;
  o.hard_negatives_per_concept = 2;
  o.threads = 1;
  o.seed = 11;
  return o;
}

// Share of concepts whose first name's nearest other-row name (among every concept's last name)
// is its own last name.
double LinkFirstToLast(const TrainedEncoderWeights& w,
                       const std::vector<std::vector<std::string>>& groups) {
  auto encoder = TrainedNameEncoder::FromWeights(w, "test");
  EXPECT_OK(encoder);
  const int d = w.dim;
  std::vector<std::vector<float>> last;
  for (const auto& g : groups) last.push_back((*encoder)->Encode(g.back()).value());
  int right = 0;
  for (size_t i = 0; i < groups.size(); ++i) {
    const std::vector<float> q = (*encoder)->Encode(groups[i].front()).value();
    size_t best = 0;
    float best_sim = -2;
    for (size_t j = 0; j < groups.size(); ++j) {
      const float s = Dot(q.data(), last[j].data(), d);
      if (s > best_sim) best_sim = s, best = j;
    }
    right += best == i;
  }
  return static_cast<double>(right) / groups.size();
}

TEST(NameEncoderTrainerTest, TrainingLowersLossAndLinksSynonyms) {
  const auto groups = SyntheticConcepts(60);
  NameEncoderTrainOptions untrained_options = TinyOptions();
  untrained_options.epochs = 0;
  auto untrained = TrainNameEncoder(groups, untrained_options);
  ASSERT_OK(untrained);
  auto trained = TrainNameEncoder(groups, TinyOptions());
  ASSERT_OK(trained);
  ASSERT_EQ(trained->epochs_run, 40);
  EXPECT_LT(trained->epoch_loss.back(), 0.5 * trained->epoch_loss.front());
  const double before = LinkFirstToLast(untrained->weights, groups);
  const double after = LinkFirstToLast(trained->weights, groups);
  EXPECT_LT(before, 0.2);
  EXPECT_GT(after, 0.8);
}

TEST(NameEncoderTrainerTest, SameSeedGivesIdenticalWeights) {
  const auto groups = SyntheticConcepts(30);
  NameEncoderTrainOptions o = TinyOptions();
  o.epochs = 5;
  auto a = TrainNameEncoder(groups, o);
  auto b = TrainNameEncoder(groups, o);
  o.seed = 12;
  auto c = TrainNameEncoder(groups, o);
  ASSERT_OK(a);
  ASSERT_OK(b);
  ASSERT_OK(c);
  const std::string bytes_a = SerializeTrainedEncoderWeights(a->weights).value();
  EXPECT_EQ(bytes_a, SerializeTrainedEncoderWeights(b->weights).value());
  EXPECT_NE(bytes_a, SerializeTrainedEncoderWeights(c->weights).value());
}

TEST(NameEncoderTrainerTest, TorchForwardMatchesServedEncoder) {
  const auto groups = SyntheticConcepts(30);
  NameEncoderTrainOptions o = TinyOptions();
  o.epochs = 5;  // a trained, non-zero MLP
  auto trained = TrainNameEncoder(groups, o);
  ASSERT_OK(trained);
  const std::vector<std::string> texts = {
      "Type 2 diabetes mellitus", "Crohn's disease", "", "--", groups[3][0], "BRCA1"};
  auto torch_out = TorchEncode(trained->weights, texts);
  ASSERT_OK(torch_out);
  auto encoder = TrainedNameEncoder::FromWeights(trained->weights, "test");
  ASSERT_OK(encoder);
  std::vector<float> served(texts.size() * o.dim);
  ASSERT_OK((*encoder)->EncodeBatch(texts, absl::MakeSpan(served)));
  float max_diff = 0;
  for (size_t i = 0; i < served.size(); ++i) {
    max_diff = std::max(max_diff, std::abs(served[i] - (*torch_out)[i]));
  }
  EXPECT_LT(max_diff, 1e-5f);
  EXPECT_EQ((*torch_out)[2 * o.dim], 0.0f);  // no features: all zero
}

TEST(NameEncoderTrainerTest, RejectsBadOptionsNamingTheField) {
  NameEncoderTrainOptions o = TinyOptions();
  o.temperature = 0;
  auto r = TrainNameEncoder(SyntheticConcepts(4), o);
  ASSERT_THAT(r, Not(IsOk()));
  EXPECT_THAT(std::string(r.status().message()), ::testing::HasSubstr("temperature"));
  EXPECT_THAT(TrainNameEncoder({{"a b c"}}, TinyOptions()), Not(IsOk()));  // no pair to learn from
}

}  // namespace
}  // namespace ibgraphrag::alignment::training
