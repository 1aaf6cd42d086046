#include "services/kgstore/import/synthetic_kg.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "absl/strings/str_split.h"
#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/kgstore/import/import_test_util.h"
#include "services/kgstore/import/line_reader.h"
#include "services/kgstore/import/tabular_importers.h"

namespace ibgraphrag::kgstore::import_ {
namespace {

using ::ibgraphrag::common::test_util::StatusIs;

// 10% of PrimeKG's nodes and 1% of its edges keeps every relation well below its pair capacity.
SyntheticKgOptions SmallOptions() {
  SyntheticKgOptions options;
  options.num_entities = 12'938;
  options.num_triples = 81'005;
  return options;
}

void ExpectValidKgData(const KgData& kg) {
  for (size_t i = 0; i < kg.entities.size(); ++i) ASSERT_EQ(kg.entities[i].id, i);
  for (size_t i = 0; i < kg.relations.size(); ++i) ASSERT_EQ(kg.relations[i].id, i);
  for (size_t i = 0; i < kg.triples.size(); ++i) {
    const Triple& t = kg.triples[i];
    ASSERT_LT(t.head, kg.entities.size());
    ASSERT_LT(t.tail, kg.entities.size());
    ASSERT_LT(t.relation, kg.relations.size());
    ASSERT_NE(t.head, t.tail);
    if (i > 0) ASSERT_TRUE(kg.triples[i - 1] < t) << "not sorted/unique at " << i;
  }
}

TEST(SyntheticKgTest, DefaultsArePrimeKgsRealCounts) {
  const SyntheticKgOptions defaults;
  EXPECT_EQ(defaults.num_entities, 129'375);
  EXPECT_EQ(defaults.num_triples, 8'100'498);
  int64_t nodes = 0, edges = 0;
  for (const SyntheticNodeType& t : PrimeKgNodeTypes()) nodes += t.count;
  for (const SyntheticRelationMix& r : PrimeKgRelationMix()) {
    edges += r.count;
    EXPECT_NE(FindPrimeKgRelation(r.relation, r.display_relation), nullptr) << r.relation;
  }
  EXPECT_EQ(nodes, 129'375);
  EXPECT_EQ(edges, 8'100'498);
  EXPECT_EQ(PrimeKgRelationMix().size(), 30u);
}

TEST(SyntheticKgTest, SmallScaleHasExactCountsTypesAndMix) {
  const SyntheticKgOptions options = SmallOptions();
  const KgData kg = GenerateSyntheticPrimeKg(options);
  ExpectValidKgData(kg);
  EXPECT_EQ(kg.entities.size(), static_cast<size_t>(options.num_entities));
  EXPECT_EQ(kg.triples.size(), static_cast<size_t>(options.num_triples));

  std::map<std::string, int64_t> by_type;
  for (const Entity& e : kg.entities) ++by_type[e.type];
  const double node_scale = static_cast<double>(options.num_entities) / 129'375;
  for (const SyntheticNodeType& t : PrimeKgNodeTypes()) {
    EXPECT_NEAR(by_type[std::string(t.type)], t.count * node_scale, 1.0) << t.type;
  }

  std::vector<int64_t> per_relation(kg.relations.size(), 0);
  for (const Triple& t : kg.triples) {
    ++per_relation[t.relation];
    const Relation& r = kg.relations[t.relation];
    ASSERT_EQ(kg.entities[t.head].type, r.head_type) << r.name;
    ASSERT_EQ(kg.entities[t.tail].type, r.tail_type) << r.name;
  }
  const double edge_scale = static_cast<double>(options.num_triples) / 8'100'498;
  ASSERT_EQ(kg.relations.size(), PrimeKgRelationMix().size());
  for (size_t i = 0; i < kg.relations.size(); ++i) {
    const SyntheticRelationMix& mix = PrimeKgRelationMix()[i];
    EXPECT_EQ(kg.relations[i].name, FindPrimeKgRelation(mix.relation, mix.display_relation)->name);
    EXPECT_FALSE(kg.relations[i].description.empty()) << kg.relations[i].name;
    EXPECT_NEAR(per_relation[i], mix.count * edge_scale, 1.0) << kg.relations[i].name;
  }
}

TEST(SyntheticKgTest, SameSeedSameGraphOtherSeedOtherGraph) {
  const KgData a = GenerateSyntheticPrimeKg(SmallOptions());
  const KgData b = GenerateSyntheticPrimeKg(SmallOptions());
  EXPECT_TRUE(a.triples == b.triples);
  SyntheticKgOptions other = SmallOptions();
  other.seed = 7;
  const KgData c = GenerateSyntheticPrimeKg(other);
  EXPECT_EQ(c.triples.size(), a.triples.size());
  EXPECT_FALSE(a.triples == c.triples);
}

TEST(SyntheticKgTest, DegreesAreHeavyTailed) {
  const KgData kg = GenerateSyntheticPrimeKg(SmallOptions());
  std::vector<int64_t> degree(kg.entities.size(), 0);
  for (const Triple& t : kg.triples) {
    ++degree[t.head];
    ++degree[t.tail];
  }
  // Gene endpoints: the top 1% of genes carry a large share, far above a uniform draw's 1%.
  std::vector<int64_t> genes;
  for (const Entity& e : kg.entities) {
    if (e.type == "gene") genes.push_back(degree[e.id]);
  }
  std::sort(genes.rbegin(), genes.rend());
  int64_t total = 0, top = 0;
  for (size_t i = 0; i < genes.size(); ++i) {
    total += genes[i];
    if (i < genes.size() / 100) top += genes[i];
  }
  EXPECT_GT(static_cast<double>(top) / total, 0.15);
  // ... while most genes still have some edges (a long tail, not a handful of hubs).
  const auto connected = std::count_if(genes.begin(), genes.end(), [](int64_t d) { return d > 0; });
  EXPECT_GT(connected, static_cast<long>(genes.size() / 2));
}

TEST(SyntheticKgTest, TinyGraphCapsRelationsAtTheirPairCapacity) {
  SyntheticKgOptions options;
  options.num_entities = 40;  // 2-6 nodes per type
  options.num_triples = 1'000'000;
  const KgData kg = GenerateSyntheticPrimeKg(options);
  ExpectValidKgData(kg);
  std::map<std::string, int64_t> by_type;
  for (const Entity& e : kg.entities) ++by_type[e.type];
  int64_t capacity = 0;
  for (const Relation& r : kg.relations) {
    capacity += by_type[r.head_type] * by_type[r.tail_type] -
                (r.head_type == r.tail_type ? by_type[r.head_type] : 0);
  }
  EXPECT_EQ(static_cast<int64_t>(kg.triples.size()), capacity);
}

TEST(SyntheticKgTest, WritesTsvForPostgresCopy) {
  SyntheticKgOptions options;
  options.num_entities = 2'000;
  options.num_triples = 5'000;
  const KgData kg = GenerateSyntheticPrimeKg(options);
  const std::string triples = testing_util::TempPath("triples.tsv");
  ASSERT_OK(WriteTriplesTsv(kg, triples));
  auto reader = LineReader::Open(triples);
  ASSERT_OK(reader);
  absl::string_view line;
  size_t n = 0;
  while ((*reader)->Next(&line)) {
    const std::vector<std::string> fields = absl::StrSplit(line, '\t');
    ASSERT_EQ(fields.size(), 3u) << line;
    const Triple& t = kg.triples[n++];
    ASSERT_EQ(fields[0], kg.entities[t.head].external_id);
    ASSERT_EQ(fields[1], kg.relations[t.relation].name);
    ASSERT_EQ(fields[2], kg.entities[t.tail].external_id);
  }
  EXPECT_EQ(n, kg.triples.size());

  const std::string numeric = testing_util::TempPath("numeric.tsv");
  TsvWriteOptions write_options;
  write_options.header = true;
  write_options.internal_ids = true;
  ASSERT_OK(WriteTriplesTsv(kg, numeric, write_options));
  const std::string text = testing_util::ReadFile(numeric);
  EXPECT_EQ(text.substr(0, text.find('\n')), "head\trelation\ttail");
  const std::string entities = testing_util::TempPath("entities.tsv");
  ASSERT_OK(WriteEntitiesTsv(kg, entities));
  const std::string entity_text = testing_util::ReadFile(entities);
  EXPECT_EQ(std::count(entity_text.begin(), entity_text.end(), '\n'), 2'000);
  EXPECT_THAT(WriteTriplesTsv(kg, "/nonexistent-dir/x.tsv"),
              StatusIs(absl::StatusCode::kPermissionDenied));
}

}  // namespace
}  // namespace ibgraphrag::kgstore::import_
