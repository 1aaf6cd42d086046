#include "common/source_lineage.h"

#include "gtest/gtest.h"

namespace ibgraphrag::common {
namespace {

TEST(SourceLineageTest, HetionetEdgesCountAsTheirUpstreamForTheRelationsCompiledFromOne) {
  EXPECT_EQ(SourceLineage("hetionet", "drug causes side effect"), "sider-side-effects");
  // Hetionet's symptom edges are the HSDN co-occurrences that passed its significance test: a
  // judgement of its own, so its own lineage (counting it once with HSDN measurably hurt).
  EXPECT_EQ(SourceLineage("hetionet", "disease presents symptom"), "hetionet");
  EXPECT_EQ(SourceLineage("hetionet", "drug treats disease"), "pharmacotherapydb");
  // Disease-gene associations were compiled from several resources: Hetionet is its own lineage.
  EXPECT_EQ(SourceLineage("hetionet", "disease associated with gene"), "hetionet");
  EXPECT_EQ(SourceLineage("do-disease-symptom", "disease presents symptom"), "do-axioms");
  EXPECT_EQ(SourceLineage("disgenet", "disease associated with gene"), "disgenet");
}

TEST(SourceLineageTest, CountsDistinctLineages) {
  EXPECT_EQ(IndependentSourceCount({"hetionet", "pharmacotherapydb", "drugcentral-indications"},
                                   "drug treats disease"),
            2);
  EXPECT_EQ(IndependentSourceCount({"hetionet", "sider-side-effects"}, "drug causes side effect"),
            1);
  EXPECT_EQ(IndependentSourceCount({"do-axioms", "do-disease-symptom", "hetionet", "hsdn"},
                                   "disease presents symptom"),
            3);
  EXPECT_EQ(IndependentSourceCount({"hetionet", "disgenet"}, "disease associated with gene"), 2);
  // A location in DO's definition and in its axioms is one curation; Hetionet's is MEDLINE's.
  EXPECT_EQ(IndependentSourceCount({"do-axioms", "do-definitions", "hetionet"},
                                   "disease localizes to anatomy"),
            2);
  EXPECT_EQ(IndependentSourceCount({}, "drug treats disease"), 0);
}

TEST(SourceLineageTest, GwasLociAreThePopulationAssociationSources) {
  for (const char* source : {"gwas-catalog-2015", "gwas-catalog-curated", "diseases-experiments"}) {
    EXPECT_TRUE(IsPopulationAssociationSource(source)) << source;
  }
  // Curated knowledge, text mining and the multi-resource compilations are not.
  for (const char* source : {"disgenet", "diseases-knowledge", "diseases-textmining", "hetionet",
                             "hetionet-dag", "hpo-genes-to-phenotype", ""}) {
    EXPECT_FALSE(IsPopulationAssociationSource(source)) << source;
  }
}

TEST(SourceLineageTest, CuratedTargetsAreDrugBankTargetsDrugCentralAndPrimeKgTargets) {
  EXPECT_TRUE(IsCuratedTargetStatement("drug binds gene", {"bindingdb", "drugbank-proteins"}));
  EXPECT_TRUE(IsCuratedTargetStatement("drug binds gene", {"drugcentral-targets", "hetionet"}));
  EXPECT_TRUE(IsCuratedTargetStatement("drug targets gene", {"primekg"}));
  // Measured binding and Hetionet's merged roles are not; nor is another relation.
  EXPECT_FALSE(IsCuratedTargetStatement("drug binds gene", {"bindingdb", "hetionet"}));
  EXPECT_FALSE(IsCuratedTargetStatement("drug binds gene", {}));
  EXPECT_FALSE(IsCuratedTargetStatement("drug is metabolized by gene", {"drugbank-proteins"}));
}

}  // namespace
}  // namespace ibgraphrag::common
