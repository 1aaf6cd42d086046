// KgBuilder provenance: merged triples keep every source, the best score and joined notes; the
// licence filter drops sources, triples and entities.
#include "services/kgstore/kg_builder.h"

#include <cmath>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ibgraphrag::kgstore {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

// The sources of triple i, as "name (licence)".
std::vector<std::string> SourcesOf(const KgData& kg, size_t i) {
  std::vector<std::string> out;
  for (SourceId s : kg.provenance.at(kg.triples.at(i).provenance)) {
    out.push_back(kg.sources[s].name + " (" + kg.sources[s].license + ")");
  }
  return out;
}

// gene -associates-> disease from three sources; gene -binds-> drug from SIDER-like NC only.
struct TwoFacts {
  KgBuilder builder;
  SourceId gwas, diseases, sider;
  EntityId gene, disease, drug, nc_only;
  RelationId associates, binds;
  TwoFacts() {
    gwas = builder.AddSource("gwas-catalog", "CC BY 4.0");
    diseases = builder.AddSource("jensenlab-diseases", "CC BY 4.0");
    sider = builder.AddSource("sider", "CC BY-NC-SA 4.0");
    gene = builder.AddEntity("Entrez:3630", "gene", "INS");
    disease = builder.AddEntity("DOID:9352", "disease", "type 2 diabetes mellitus");
    drug = builder.AddEntity("DrugBank:DB00331", "compound", "Metformin");
    nc_only = builder.AddEntity("UMLS:C0000001", "side_effect", "nausea");
    builder.AddEntitySource(nc_only, "sider");
    builder.AddEntitySource(drug, "sider");
    associates = builder.AddRelation("gene associated with disease", "gene", "disease", "");
    binds = builder.AddRelation("drug causes side effect", "compound", "side_effect", "");
  }
};

KgData FinishExcludingNc(KgBuilder& builder) {
  LicenseFilter filter;
  filter.exclude = {"NC"};
  return builder.Finish(filter);
}

// Looked up by external id: a licence filter renumbers entities.
const Entity* FindEntity(const KgData& kg, const std::string& external_id) {
  for (const Entity& e : kg.entities) {
    if (e.external_id == external_id) return &e;
  }
  return nullptr;
}

TEST(KgBuilderTest, DuplicateFactFromTwoSourcesIsOneTripleWithBothSources) {
  TwoFacts f;
  EXPECT_TRUE(f.builder.AddTriple(f.gene, f.associates, f.disease, f.gwas, 0.4f, "p=3e-12"));
  EXPECT_FALSE(
      f.builder.AddTriple(f.gene, f.associates, f.disease, f.diseases, 0.9f, "z-score 4.1"));
  // The same note again from a third assertion is not repeated; a lower score is not kept.
  EXPECT_FALSE(f.builder.AddTriple(f.gene, f.associates, f.disease, f.gwas, 0.1f, "p=3e-12"));
  EXPECT_EQ(f.builder.num_merges(), 1);  // only the second source was new to the triple
  const KgData kg = f.builder.Finish();
  ASSERT_EQ(kg.triples.size(), 1u);
  EXPECT_THAT(SourcesOf(kg, 0),
              ElementsAre("gwas-catalog (CC BY 4.0)", "jensenlab-diseases (CC BY 4.0)"));
  EXPECT_FLOAT_EQ(TripleScoreAt(kg, 0), 0.9f);
  EXPECT_EQ(TripleNoteAt(kg, 0), "p=3e-12; z-score 4.1");
}

TEST(KgBuilderTest, OldOverloadsMergeSourcesWithoutScoreOrNote) {
  KgBuilder b;
  const SourceId a = b.AddSource("a");
  const SourceId c = b.AddSource("c");
  const EntityId x = b.AddEntity("T:x", "t", "x");
  const EntityId y = b.AddEntity("T:y", "t", "y");
  const RelationId r = b.AddRelation("r", "", "", "");
  EXPECT_TRUE(b.AddTriple(x, r, y, a));
  EXPECT_FALSE(b.AddTriple(x, r, y, c));
  EXPECT_FALSE(b.AddTriple(x, r, x, a));  // self-loop refused
  const KgData kg = b.Finish();
  ASSERT_EQ(kg.triples.size(), 1u);
  EXPECT_THAT(kg.provenance.at(kg.triples[0].provenance), ElementsAre(a, c));
  EXPECT_TRUE(std::isnan(TripleScoreAt(kg, 0)));
  EXPECT_EQ(TripleNoteAt(kg, 0), "");
  EXPECT_EQ(kg.sources[a].license, "");  // unknown
}

TEST(KgBuilderTest, SameNameWithTwoLicencesIsTwoSources) {
  KgBuilder b;
  const SourceId cc_by = b.AddSource("hetionet-dag", "CC BY 4.0");
  const SourceId odbl = b.AddSource("hetionet-dag", "ODbL 1.0");
  EXPECT_NE(cc_by, odbl);
  EXPECT_EQ(b.AddSource("hetionet-dag", "CC BY 4.0"), cc_by);
  EXPECT_EQ(b.sources().size(), 2u);
}

TEST(KgBuilderTest, NotesAreCappedAtAUtf8Boundary) {
  KgBuilder b;
  const SourceId s = b.AddSource("s", "CC0");
  const SourceId t = b.AddSource("t", "CC0");
  const EntityId x = b.AddEntity("T:x", "t", "x");
  const EntityId y = b.AddEntity("T:y", "t", "y");
  const RelationId r = b.AddRelation("r", "", "", "");
  std::string long_note;
  while (long_note.size() < kMaxTripleNoteBytes + 10) long_note += "\xC3\xA9";  // é
  b.AddTriple(x, r, y, s, kNoTripleScore, long_note);
  b.AddTriple(x, r, y, t, kNoTripleScore, "more");  // no room left: dropped, not cut
  const KgData kg = b.Finish();
  const std::string_view note = TripleNoteAt(kg, 0);
  EXPECT_LE(note.size(), kMaxTripleNoteBytes);
  EXPECT_EQ(note.size() % 2, 0u);  // never half a character
  EXPECT_EQ(note.find("more"), std::string_view::npos);
}

TEST(KgBuilderTest, CountsTriplesBySourceAndLicenceOncePerTriple) {
  TwoFacts f;
  f.builder.AddTriple(f.gene, f.associates, f.disease, f.gwas, kNoTripleScore, "");
  f.builder.AddTriple(f.gene, f.associates, f.disease, f.diseases, kNoTripleScore, "");
  f.builder.AddTriple(f.drug, f.binds, f.nc_only, f.sider, kNoTripleScore, "");
  const KgCounts counts = CountKg(f.builder.Finish());
  EXPECT_THAT(counts.triples_by_source,
              UnorderedElementsAre(Pair("gwas-catalog", 1), Pair("jensenlab-diseases", 1),
                                   Pair("sider", 1)));
  // Two CC BY 4.0 sources assert the same triple: it counts once for that licence.
  EXPECT_THAT(counts.triples_by_license,
              UnorderedElementsAre(Pair("CC BY 4.0", 1), Pair("CC BY-NC-SA 4.0", 1)));
}

TEST(KgBuilderTest, ExcludingNcDropsNcOnlyTriplesAndEntitiesAndKeepsSharedFacts) {
  TwoFacts f;
  f.builder.AddTriple(f.gene, f.associates, f.disease, f.gwas, 0.5f, "gwas");
  f.builder.AddTriple(f.gene, f.associates, f.disease, f.sider, 0.7f, "sider");
  f.builder.AddTriple(f.drug, f.binds, f.nc_only, f.sider, kNoTripleScore, "");
  LicenseFilter filter;
  filter.exclude = {"nc"};
  const KgData kg = f.builder.Finish(filter);
  ASSERT_EQ(kg.triples.size(), 1u);
  EXPECT_THAT(SourcesOf(kg, 0), ElementsAre("gwas-catalog (CC BY 4.0)"));
  // Scores and notes are kept per source until Finish: the dropped SIDER's 0.7 and note go.
  EXPECT_FLOAT_EQ(TripleScoreAt(kg, 0), 0.5f);
  EXPECT_EQ(TripleNoteAt(kg, 0), "gwas");
  // nausea and metformin were only known from SIDER and nothing kept touches them.
  std::vector<std::string> ids;
  for (const Entity& e : kg.entities) ids.push_back(e.external_id);
  EXPECT_THAT(ids, ElementsAre("Entrez:3630", "DOID:9352"));
  EXPECT_EQ(kg.triples[0].head, 0u);
  EXPECT_EQ(kg.triples[0].tail, 1u);
  for (const SourceInfo& s : kg.sources) EXPECT_NE(s.name, "sider");
  EXPECT_EQ(kg.license_filter, "exclude=nc");
}

TEST(KgBuilderTest, ExcludedSourceOnlyScoreAndNoteLeaveNoTrace) {
  TwoFacts f;
  f.builder.AddTriple(f.gene, f.associates, f.disease, f.sider, 0.9f, "sider says so");
  f.builder.AddTriple(f.gene, f.associates, f.disease, f.gwas);
  LicenseFilter filter;
  filter.exclude = {"NC"};
  const KgData kg = f.builder.Finish(filter);
  ASSERT_EQ(kg.triples.size(), 1u);
  EXPECT_TRUE(std::isnan(TripleScoreAt(kg, 0)));
  EXPECT_EQ(TripleNoteAt(kg, 0), "");
}

TEST(KgBuilderTest, ExcludedSourcesDefinitionXrefsAndSynonymsAreStripped) {
  TwoFacts f;
  f.builder.SetAttributeSource("sider");
  f.builder.SetDefinition(f.drug, "NC description");
  f.builder.AddAlias(f.drug, "STITCH:CID1");
  f.builder.AddAlias(f.drug, "PubChem:4091");
  f.builder.AddSynonym(f.drug, "glucophage");
  f.builder.SetAttributeSource("gwas-catalog");
  f.builder.SetDefinition(f.drug, "kept description");
  f.builder.AddAlias(f.drug, "PubChem:4091");  // also given by a kept source: stays
  f.builder.SetAttributeSource("");
  f.builder.AddSynonym(f.drug, "dimethylbiguanide");  // no source named: stays
  f.builder.AddEntitySource(f.drug, "gwas-catalog");
  const KgData kg = FinishExcludingNc(f.builder);
  const Entity* drug = FindEntity(kg, "DrugBank:DB00331");
  ASSERT_NE(drug, nullptr);
  EXPECT_EQ(drug->definition, "kept description");
  EXPECT_THAT(drug->xrefs, ElementsAre("PubChem:4091"));
  EXPECT_THAT(drug->synonyms, ElementsAre("dimethylbiguanide"));
}

TEST(KgBuilderTest, AttributeOnlySourceIsFilteredByItsOwnLicence) {
  TwoFacts f;
  // Like drugbank-drugs or do-xrefs: attributes only, no triple source of that name.
  f.builder.SetAttributeSource("nc-xrefs", "CC BY-NC 4.0");
  f.builder.SetDefinition(f.drug, "NC description");
  f.builder.AddAlias(f.drug, "STITCH:CID1");
  f.builder.AddSynonym(f.drug, "glucophage");
  f.builder.SetAttributeSource("cc0-xrefs", "CC0 1.0");
  f.builder.AddAlias(f.drug, "PubChem:4091");
  f.builder.SetAttributeSource("");
  f.builder.AddTriple(f.drug, f.associates, f.disease, f.gwas);
  const KgData kg = FinishExcludingNc(f.builder);
  const Entity* drug = FindEntity(kg, "DrugBank:DB00331");
  ASSERT_NE(drug, nullptr);
  EXPECT_EQ(drug->definition, "");
  EXPECT_THAT(drug->xrefs, ElementsAre("PubChem:4091"));
  EXPECT_TRUE(drug->synonyms.empty());
}

TEST(KgBuilderTest, AttributeSourceLicenceIsRestoredWithItsName) {
  KgBuilder builder;
  builder.SetAttributeSource("do-xrefs", "CC0 1.0");
  EXPECT_EQ(builder.attribute_source(), "do-xrefs");
  EXPECT_EQ(builder.attribute_source_license(), "CC0");
  builder.SetAttributeSource("");
  EXPECT_EQ(builder.attribute_source(), "");
  EXPECT_EQ(builder.attribute_source_license(), "");
}

TEST(KgBuilderTest, UnfilteredFinishKeepsEveryAttribute) {
  TwoFacts f;
  f.builder.SetAttributeSource("sider");
  f.builder.SetDefinition(f.drug, "NC description");
  f.builder.AddAlias(f.drug, "STITCH:CID1");
  const KgData kg = f.builder.Finish();
  EXPECT_EQ(kg.entities.at(f.drug).definition, "NC description");
  EXPECT_THAT(kg.entities.at(f.drug).xrefs, ElementsAre("STITCH:CID1"));
}

TEST(KgBuilderTest, KeptEntitiesStopClaimingDroppedSources) {
  TwoFacts f;
  f.builder.AddEntitySource(f.gene, "sider");
  f.builder.AddEntitySource(f.gene, "gwas-catalog");
  f.builder.AddTriple(f.gene, f.associates, f.disease, f.gwas);
  LicenseFilter filter;
  filter.exclude = {"NC"};
  const KgData kg = f.builder.Finish(filter);
  ASSERT_EQ(kg.entities.at(0).external_id, "Entrez:3630");
  EXPECT_THAT(kg.entities[0].sources, ElementsAre("gwas-catalog"));
}

TEST(KgBuilderTest, AllowListKeepsOnlyNamedLicences) {
  TwoFacts f;
  const SourceId unknown = f.builder.AddSource("mystery");
  f.builder.AddTriple(f.gene, f.associates, f.disease, f.gwas);
  f.builder.AddTriple(f.drug, f.binds, f.nc_only, f.sider);
  f.builder.AddTriple(f.drug, f.associates, f.disease, unknown);
  LicenseFilter filter;
  filter.allow = {"cc by 4.0", "unknown"};
  const KgData kg = f.builder.Finish(filter);
  ASSERT_EQ(kg.triples.size(), 2u);
  EXPECT_EQ(kg.sources.size(), 3u);  // gwas, jensenlab (unused but allowed), mystery
  EXPECT_TRUE(filter.Keeps(""));
  EXPECT_FALSE(filter.Keeps("CC0"));
  EXPECT_EQ(kg.license_filter, "allow=cc by 4.0|unknown");
}

TEST(KgBuilderTest, LicencesAreStoredAndMatchedNormalised) {
  EXPECT_EQ(NormalizeLicense("CC0 1.0"), "CC0");
  EXPECT_EQ(NormalizeLicense(" cc0-1.0 "), "CC0");
  EXPECT_EQ(NormalizeLicense("CC BY  4.0 "), "CC BY 4.0");
  EXPECT_EQ(NormalizeLicense(""), "");
  TwoFacts f;
  const SourceId pid = f.builder.AddSource("pathways", "CC0 1.0");
  EXPECT_EQ(f.builder.AddSource("pathways", "CC0"), pid);  // one source, one spelling
  f.builder.AddTriple(f.gene, f.associates, f.disease, pid);
  LicenseFilter filter;
  filter.allow = {"CC0"};
  const KgData kg = f.builder.Finish(filter);
  ASSERT_EQ(kg.triples.size(), 1u);  // PID's "CC0 1.0" pathways are not silently dropped
  EXPECT_THAT(SourcesOf(kg, 0), ElementsAre("pathways (CC0)"));
  LicenseFilter published_spelling;
  published_spelling.allow = {"cc0 1.0"};
  EXPECT_TRUE(published_spelling.Keeps("CC0"));
}

TEST(KgBuilderTest, ExcludePatternMatchesWholeWordsOnly) {
  LicenseFilter filter;
  filter.exclude = {"NC"};
  EXPECT_FALSE(filter.Keeps("CC BY-NC 4.0"));
  EXPECT_FALSE(filter.Keeps("CC BY-NC-SA 4.0"));
  EXPECT_TRUE(filter.Keeps("CC BY 4.0"));
  EXPECT_TRUE(filter.Keeps("HPO license"));  // "nc" is inside "license" but not a word
  filter.exclude = {"ODbL 1.0"};
  EXPECT_FALSE(filter.Keeps("odbl 1.0"));
}

TEST(KgBuilderTest, ProvenanceGroupsAreNumberedInTripleOrder) {
  KgBuilder b;
  const SourceId a = b.AddSource("a", "CC0");
  const SourceId c = b.AddSource("c", "CC0");
  const EntityId x = b.AddEntity("T:x", "t", "x");
  const EntityId y = b.AddEntity("T:y", "t", "y");
  const EntityId z = b.AddEntity("T:z", "t", "z");
  const RelationId r = b.AddRelation("r", "", "", "");
  b.AddTriple(y, r, z, c);  // imported first, sorts second
  b.AddTriple(x, r, y, a);
  b.AddTriple(x, r, z, c);
  b.AddTriple(x, r, z, a);
  const KgData kg = b.Finish();
  ASSERT_EQ(kg.provenance.size(), 3u);
  EXPECT_THAT(kg.provenance[0], ElementsAre(a));     // (x, r, y)
  EXPECT_THAT(kg.provenance[1], ElementsAre(a, c));  // (x, r, z)
  EXPECT_THAT(kg.provenance[2], ElementsAre(c));     // (y, r, z)
}

}  // namespace
}  // namespace ibgraphrag::kgstore
