#include "services/reasoner/eval/kg_evidence.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ibgraphrag::reasoner::eval {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// A tiny KG: two diseases (one name shared with an HPO phenotype), genes, a drug, a hub.
kgstore::KgData MakeKg() {
  kgstore::KgData kg;
  auto entity = [&kg](std::string id, std::string type, std::string name,
                      std::vector<std::string> synonyms = {}) {
    kgstore::Entity e;
    e.id = static_cast<kgstore::EntityId>(kg.entities.size());
    e.external_id = std::move(id);
    e.type = std::move(type);
    e.name = std::move(name);
    e.synonyms = std::move(synonyms);
    kg.entities.push_back(std::move(e));
  };
  entity("DOID:0050787", "disease", "juvenile polyposis syndrome", {"JPS"});  // 0
  entity("Entrez:4089", "gene", "SMAD4");                                     // 1
  entity("Entrez:657", "gene", "BMPR1A");                                     // 2
  entity("DOID:8778", "disease", "Crohn's disease");                          // 3
  entity("HP:0100280", "phenotype", "Crohn's disease");                       // 4
  entity("DrugBank:DB00916", "compound", "Metronidazole");                    // 5
  entity("DOID:4", "disease", "disease");                                     // 6
  entity("DOID:225", "disease", "syndrome");                                  // 7
  entity("X:1", "gene", "IS", {"a", "2"});                                    // 8: junk keys
  kg.relations = {{0, "disease associated with gene", "disease", "gene", "associated"},
                  {1, "drug treats disease", "compound", "disease", "indicated"},
                  {2, "disease is a subtype of disease", "disease", "disease", "is a"}};
  kg.sources = {{"test", ""}};
  kg.provenance = {{0}};
  kg.triples = {{0, 0, 1, 0}, {0, 0, 2, 0}, {0, 2, 6, 0}, {3, 2, 6, 0}, {5, 1, 3, 0}, {7, 2, 6, 0}};
  return kg;
}

std::vector<std::string> Ids(const kgstore::KgData& kg, const std::vector<TopicMatch>& matches) {
  std::vector<std::string> out;
  for (const TopicMatch& m : matches) out.push_back(kg.entities[m.entity].external_id);
  return out;
}

TEST(KgEvidenceIndexTest, FindsLongestNameMatchesCaseInsensitively) {
  const kgstore::KgData kg = MakeKg();
  const KgEvidenceIndex index(kg, KgEvidenceOptions());
  // "juvenile polyposis syndrome" wins over "syndrome"; "SMAD4" matches case-insensitively.
  EXPECT_THAT(Ids(kg, index.FindTopicEntities("Juvenile Polyposis Syndrome associates Gene smad4")),
              ElementsAre("DOID:0050787", "Entrez:4089"));
  // A name shared by two entities names both; punctuation is a word break.
  EXPECT_THAT(Ids(kg, index.FindTopicEntities("metronidazole treats crohn's disease")),
              ElementsAre("DrugBank:DB00916", "DOID:8778", "HP:0100280"));
  // Synonyms match too; word boundaries hold ("JPSX" is not "JPS").
  EXPECT_THAT(Ids(kg, index.FindTopicEntities("JPS, not JPSX")), ElementsAre("DOID:0050787"));
  // Stop words, short tokens and numbers never become topics.
  EXPECT_THAT(index.FindTopicEntities("it is a 2"), IsEmpty());
}

TEST(KgEvidenceIndexTest, EvidencePutsTriplesBetweenTopicsFirstAndCaps) {
  const kgstore::KgData kg = MakeKg();
  const KgEvidenceIndex index(kg, KgEvidenceOptions());
  // Topics: JPS and SMAD4. The connecting triple comes first, scored 1; the others 0.5.
  std::vector<EvidenceTriple> evidence =
      index.Evidence({0, 1}, 10, EvidenceScoring::kTopicPairsFirst);
  ASSERT_EQ(evidence.size(), 3u);
  EXPECT_EQ(evidence[0].head.id, "DOID:0050787");
  EXPECT_EQ(evidence[0].tail.name, "SMAD4");
  EXPECT_EQ(evidence[0].relation, "disease associated with gene");
  EXPECT_EQ(evidence[0].relation_description, "associated");
  EXPECT_DOUBLE_EQ(evidence[0].score, 1.0);
  EXPECT_EQ(evidence[0].hop, 1);
  EXPECT_EQ(evidence[0].source, "test");
  EXPECT_DOUBLE_EQ(evidence[1].score, 0.5);
  EXPECT_DOUBLE_EQ(evidence[2].score, 0.5);

  EXPECT_EQ(index.Evidence({0, 1}, 1, EvidenceScoring::kTopicPairsFirst).size(), 1u);
  for (const EvidenceTriple& t : index.Evidence({0, 1}, 10, EvidenceScoring::kUniform)) {
    EXPECT_DOUBLE_EQ(t.score, 1.0);
  }
}

TEST(KgEvidenceIndexTest, RoundRobinKeepsAHubFromCrowdingOutOtherTopics) {
  const kgstore::KgData kg = MakeKg();
  const KgEvidenceIndex index(kg, KgEvidenceOptions());
  // DOID:4 ("disease") touches 3 triples, metronidazole 1: with a cap of 2 each gets one.
  std::vector<EvidenceTriple> evidence = index.Evidence({6, 5}, 2, EvidenceScoring::kUniform);
  ASSERT_EQ(evidence.size(), 2u);
  EXPECT_EQ(evidence[1].head.id, "DrugBank:DB00916");
}

}  // namespace
}  // namespace ibgraphrag::reasoner::eval
