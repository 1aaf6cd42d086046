#include "services/kgstore/import/ontology_importers.h"

#include <algorithm>
#include <string>

#include "absl/strings/match.h"
#include "common/file_util.h"
#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/kgstore/import/import_test_util.h"

namespace ibgraphrag::kgstore::import_ {
namespace {

using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
using testing_util::DataFile;

constexpr char kDoObo[] = "vocab/doid-2024-01-31.obo.gz";
constexpr char kHpObo[] = "vocab/hp-2017-04-13.obo.gz";

bool HasTriple(const KgData& kg, EntityId head, absl::string_view relation, EntityId tail) {
  for (const Triple& t : kg.triples) {
    if (t.head == head && t.tail == tail && kg.relations[t.relation].name == relation) return true;
  }
  return false;
}

class DiseaseOntologyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const absl::Status status = ImportDiseaseOntologyObo(DataFile(kDoObo), builder_, options_);
    ASSERT_OK(status);
  }
  EntityId MustResolve(const std::string& id) {
    const std::optional<EntityId> e = builder_.Resolve(id);
    EXPECT_TRUE(e.has_value()) << id;
    return e.value_or(kInvalidEntity);
  }
  ImportOptions options_;
  KgBuilder builder_;
};

TEST_F(DiseaseOntologyTest, Type2DiabetesHasNameSynonymsDefinitionAndXrefs) {
  const EntityId t2d = MustResolve("DOID:9352");
  const Entity& e = builder_.entity(t2d);
  EXPECT_EQ(e.type, "disease");
  EXPECT_EQ(e.name, "type 2 diabetes mellitus");
  EXPECT_THAT(e.synonyms, Contains("NIDDM"));
  EXPECT_THAT(e.synonyms, Contains("non-insulin-dependent diabetes mellitus"));
  EXPECT_THAT(e.definition, HasSubstr("insulin resistance"));
  EXPECT_THAT(e.sources, Contains("doid"));
  // Cross-references resolve to the DO concept.
  EXPECT_EQ(MustResolve("UMLS:C0011860"), t2d);
  EXPECT_EQ(MustResolve("MESH:D003924"), t2d);
  EXPECT_EQ(MustResolve("OMIM:125853"), t2d);
  EXPECT_EQ(MustResolve("ICD10CM:E11"), t2d);
  EXPECT_EQ(MustResolve("SNOMEDCT:44054006"), t2d);
  EXPECT_THAT(e.xrefs, Contains("UMLS:C0011860"));
}

TEST_F(DiseaseOntologyTest, KeepsLiveTermsOnlyAndMapsRetiredIds) {
  // 11,501 live DOID terms in the 2024-01-31 release; obsolete ones are not entities.
  EXPECT_EQ(builder_.num_entities(), 11'501u);
  EXPECT_FALSE(builder_.Resolve("DOID:9353").has_value());  // obsolete, no replacement
  // alt_id and replaced_by keep old ids working.
  EXPECT_EQ(MustResolve("DOID:267"), MustResolve("DOID:0001816"));
  EXPECT_EQ(MustResolve("DOID:0080100"), MustResolve("DOID:2106"));
}

TEST_F(DiseaseOntologyTest, IsALinksBecomeSubtypeTriplesAndReportIsFilled) {
  const EntityId t2d = MustResolve("DOID:9352");
  const EntityId diabetes = MustResolve("DOID:9351");
  KgData kg = builder_.Finish();
  EXPECT_TRUE(HasTriple(kg, t2d, "disease is a subtype of disease", diabetes));
  ASSERT_EQ(kg.reports.size(), 1u);
  const SourceReport& report = kg.reports[0];
  EXPECT_EQ(report.source, "doid");
  EXPECT_EQ(report.rows_read, 13'982);  // [Term] stanzas, obsolete included
  EXPECT_EQ(report.rows_skipped, 0);
  EXPECT_EQ(report.triples_added, static_cast<int64_t>(kg.triples.size()));
  EXPECT_GT(report.triples_added, 10'000);
  EXPECT_EQ(report.sha256, common::Sha256HexOfFile(DataFile(kDoObo)).value());
}

// Where DO's definitions put a disease: its own "located_in X", else its nearest ancestor's.
TEST_F(DiseaseOntologyTest, DefinitionsLocateDiseasesInAnatomy) {
  const EntityId liver = AddEntityFromSource(builder_, "UBERON:0002107", "anatomy", "liver", "t");
  const EntityId eye = AddEntityFromSource(builder_, "UBERON:0000970", "anatomy", "eye", "t");
  const EntityId skin =
      AddEntityFromSource(builder_, "UBERON:0002097", "anatomy", "skin of body", "t");
  // A UBERON term no other source made an entity: created when a definition names it.
  const EntityId lung = AddEntityFromSource(builder_, "UBERON:0002048", "anatomy", "lung", "t");
  const EntityId pericardium =
      AddEntityFromSource(builder_, "UBERON:0002407", "anatomy", "pericardium", "t");
  const EntityId kidney = AddEntityFromSource(builder_, "UBERON:0002113", "anatomy", "kidney", "t");
  const EntityId ureter = AddEntityFromSource(builder_, "UBERON:0000056", "anatomy", "ureter", "t");
  const AnatomyNames uberon = {{"UBERON:0000160", "intestine"},
                               {"UBERON:0002107", "liver"},
                               {"UBERON:0002110", "gall bladder"},
                               {"UBERON:0002046", "thyroid gland"}};
  const EntityId hepatitis_b = MustResolve("DOID:2043");  // "inflammation located_in liver"
  const EntityId glaucoma = MustResolve("DOID:1686");     // is_a eye disease ("located_in the eye")
  const EntityId psoriasis = MustResolve("DOID:8893");    // is_a skin disease ("located_in skin")
  const EntityId crohn = MustResolve("DOID:8778");        // "inflammation located_in intestine"
  const EntityId t2d = MustResolve("DOID:9352");          // no location up its lineage here
  // "located_in lungs, located_in lymph nodes, located_in pericardium, ...": the first is main.
  const EntityId tuberculosis = MustResolve("DOID:399");
  // A tuberculosis without a location of its own: of its parent's several sites it has one, so
  // it inherits none.
  const EntityId mdr_tuberculosis = MustResolve("DOID:401");
  // "located_in kidney, ureter, bladder and urethra": a list, read up to its first item that
  // names no entity here ("bladder"). Cystitis (bladder disease, whose "the bladder" names none
  // here) is under it and inherits none of the several.
  const EntityId urinary_system_disease = MustResolve("DOID:18");
  const EntityId cystitis = MustResolve("DOID:1679");
  // "an inflammation that is located in the gallbladder": plain words, UBERON's "gall bladder".
  const EntityId cholecystitis = MustResolve("DOID:1949");
  // is_a thyroid gland disease, "located_in the thyroid": UBERON's "thyroid gland".
  const EntityId thyroiditis = MustResolve("DOID:7166");
  ASSERT_OK(ImportDoDefinitionLocations(DataFile(kDoObo), uberon, builder_, options_));
  const std::optional<EntityId> intestine = builder_.Resolve("UBERON:0000160");
  ASSERT_TRUE(intestine.has_value());
  EXPECT_EQ(builder_.entity(*intestine).type, "anatomy");
  EXPECT_EQ(builder_.entity(*intestine).name, "intestine");
  const std::optional<EntityId> gall_bladder = builder_.Resolve("UBERON:0002110");
  const std::optional<EntityId> thyroid = builder_.Resolve("UBERON:0002046");
  ASSERT_TRUE(gall_bladder.has_value());
  ASSERT_TRUE(thyroid.has_value());

  const KgData kg = builder_.Finish();
  auto find = [&](EntityId head, EntityId tail) -> int {
    for (size_t i = 0; i < kg.triples.size(); ++i) {
      const Triple& t = kg.triples[i];
      if (t.head == head && t.tail == tail &&
          kg.relations[t.relation].name == "disease localizes to anatomy") {
        return static_cast<int>(i);
      }
    }
    return -1;
  };
  const int own = find(hepatitis_b, liver);
  ASSERT_GE(own, 0);
  EXPECT_FLOAT_EQ(TripleScoreAt(kg, own), 1.0f);
  EXPECT_EQ(std::string(TripleNoteAt(kg, own)), "DO definition: located_in liver");
  const int inherited = find(glaucoma, eye);
  ASSERT_GE(inherited, 0);
  EXPECT_FLOAT_EQ(TripleScoreAt(kg, inherited), 0.5f);  // one is_a step up
  EXPECT_EQ(std::string(TripleNoteAt(kg, inherited)),
            "DO definition of eye disease (DOID:5614): located_in eye");
  EXPECT_GE(find(psoriasis, skin), 0);  // "skin" is UBERON's "skin of body"
  EXPECT_GE(find(crohn, *intestine), 0);
  EXPECT_GE(find(urinary_system_disease, kidney), 0);
  EXPECT_GE(find(urinary_system_disease, ureter), 0);
  const int main_site = find(tuberculosis, lung);
  const int later_site = find(tuberculosis, pericardium);
  ASSERT_GE(main_site, 0);
  ASSERT_GE(later_site, 0);
  EXPECT_FLOAT_EQ(TripleScoreAt(kg, main_site), 1.0f);
  // The second location found (lymph nodes, named between them, are no entity here).
  EXPECT_FLOAT_EQ(TripleScoreAt(kg, later_site), 0.99f);
  EXPECT_GE(find(cholecystitis, *gall_bladder), 0);
  EXPECT_GE(find(thyroiditis, *thyroid), 0);
  // Only the nearest located level: glaucoma is not also put where eye disease's ancestors are.
  for (const Triple& t : kg.triples) {
    if (t.head == glaucoma && kg.relations[t.relation].name == "disease localizes to anatomy") {
      EXPECT_EQ(t.tail, eye);
    }
    if (t.head == t2d || t.head == mdr_tuberculosis || t.head == cystitis) {
      EXPECT_NE(kg.relations[t.relation].name, "disease localizes to anatomy");
    }
  }
  const auto report = std::find_if(kg.reports.begin(), kg.reports.end(),
                                   [](const auto& r) { return r.source == "do-definitions"; });
  ASSERT_NE(report, kg.reports.end());
  EXPECT_EQ(report->rows_read, 13'982);  // [Term] stanzas, as for the DO import
  EXPECT_GT(report->unmapped_ids, 0);    // phrases naming no anatomy given here ("lungs", ...)
  EXPECT_EQ(kg.sources[kg.provenance[kg.triples[own].provenance][0]].name, "do-definitions");
}

TEST_F(DiseaseOntologyTest, XrefReportAddsAliasesMissingFromTheObo) {
  EXPECT_FALSE(builder_.Resolve("UMLS:C5680319").has_value());
  const absl::Status status =
      ImportDoXrefs(DataFile("vocab/do-allXREFinDO.tsv"), builder_, options_);
  ASSERT_OK(status);
  EXPECT_EQ(builder_.Resolve("UMLS:C5680319"), builder_.Resolve("DOID:0080643"));
  KgData kg = builder_.Finish();
  const SourceReport& report = kg.reports.back();
  EXPECT_EQ(report.source, "do-xrefs");
  EXPECT_EQ(report.rows_read, 39'264);
  // The report is newer than the obo: its new DOIDs cannot be joined and are counted.
  EXPECT_GT(report.unmapped_ids, 0);
  EXPECT_LT(report.unmapped_ids, report.rows_read / 10);
}

TEST(HpoOboTest, PhenotypesWithSynonymsAliasesAndLaySynonyms) {
  KgBuilder builder;
  ImportOptions options;
  ASSERT_OK(ImportHpoObo(DataFile(kHpObo), builder, options));
  ASSERT_OK(ImportHpoLaySynonyms(DataFile("vocab/hpo-layperson-synonyms.tsv"), builder, options));
  const std::optional<EntityId> fever = builder.Resolve("HP:0001945");
  ASSERT_TRUE(fever.has_value());
  EXPECT_EQ(builder.entity(*fever).name, "Fever");
  EXPECT_EQ(builder.entity(*fever).type, "phenotype");
  EXPECT_THAT(builder.entity(*fever).synonyms, Contains("Pyrexia"));
  EXPECT_EQ(builder.Resolve("MESH:D005334"), fever);
  EXPECT_EQ(builder.Resolve("UMLS:C0015967"), fever);
  const std::optional<EntityId> skull = builder.Resolve("HP:0002648");
  ASSERT_TRUE(skull.has_value());
  EXPECT_THAT(builder.entity(*skull).synonyms, Contains("Abnormally shaped skull"));
  // HPO's disease xrefs (ORPHA, DOID) are not claimed by phenotypes.
  for (EntityId id = 0; id < builder.num_entities(); ++id) {
    for (const std::string& xref : builder.entity(id).xrefs) {
      ASSERT_FALSE(absl::StartsWith(xref, "ORDO:") || absl::StartsWith(xref, "DOID:")) << xref;
    }
  }
  KgData kg = builder.Finish();
  EXPECT_EQ(kg.relations.size(), 1u);
  EXPECT_EQ(kg.relations[0].name, "phenotype is a subtype of phenotype");
  EXPECT_GT(kg.triples.size(), 15'000u);
}

// One concept in two ontologies: HPO's "Heart failure" (HP:0001635) cites the UMLS CUIs the DO's
// "congestive heart failure" (DOID:6000) bound first. The disease gains the phenotype's name and
// EXACT synonyms (a question saying "heart failure" reaches the drugs indicated for it); the CUI
// keeps resolving to the disease; a term that shares only a MeSH descriptor shares nothing.
TEST(HpoOboTest, ATermCitingADiseasesUmlsIdLendsItsNamesToTheDisease) {
  KgBuilder builder;
  ImportOptions options;
  ASSERT_OK(ImportDiseaseOntologyObo(DataFile(kDoObo), builder, options));
  ASSERT_OK(ImportHpoObo(DataFile(kHpObo), builder, options));
  const std::optional<EntityId> chf = builder.Resolve("DOID:6000");
  const std::optional<EntityId> phenotype = builder.Resolve("HP:0001635");
  ASSERT_TRUE(chf.has_value() && phenotype.has_value());
  EXPECT_THAT(builder.entity(*chf).synonyms, Contains("Heart failure"));
  EXPECT_THAT(builder.entity(*chf).synonyms, Contains("Cardiac failure"));
  EXPECT_EQ(builder.Resolve("UMLS:C0018802"), chf);
  // One way: the phenotype does not take the disease's names.
  EXPECT_EQ(builder.entity(*phenotype).name, "Congestive heart failure");
  EXPECT_THAT(builder.entity(*phenotype).synonyms, Not(Contains("Weak heart")));
  // The lent names are HPO's: a build that drops HPO's licence drops them too.
  LicenseFilter no_hpo;
  no_hpo.exclude = {"HPO"};
  {
    KgBuilder filtered;
    ASSERT_OK(ImportDiseaseOntologyObo(DataFile(kDoObo), filtered, options));
    ASSERT_OK(ImportHpoObo(DataFile(kHpObo), filtered, options));
    const EntityId id = *filtered.Resolve("DOID:6000");
    const KgData kg = filtered.Finish(no_hpo);
    EXPECT_EQ(kg.entities.at(id).external_id, "DOID:6000");
    EXPECT_THAT(kg.entities.at(id).synonyms, Not(Contains("Heart failure")));
    EXPECT_THAT(kg.entities.at(id).synonyms, Contains("CHF"));  // the DO's own
  }
  // HP:0000026 "Male hypogonadism" cites only eunuchism's MeSH descriptor (DOID:5003).
  const std::optional<EntityId> eunuchism = builder.Resolve("DOID:5003");
  ASSERT_TRUE(eunuchism.has_value());
  EXPECT_THAT(builder.entity(*eunuchism).synonyms, Not(Contains("Male hypogonadism")));
}

TEST(HpoOboTest, LaySynonymsFollowTheHpoLicenceFilter) {
  // The lay-synonym file adds synonyms only; the phenotype stays because a kept source's triple
  // touches it, so only the licence of the synonyms' own source can strip them.
  auto build = [](const LicenseFilter& filter) {
    KgBuilder builder;
    const EntityId skull = builder.AddEntity("HP:0002648", "phenotype", "Abnormal calvaria");
    const EntityId disease = builder.AddEntity("DOID:9352", "disease", "type 2 diabetes");
    const RelationId has = builder.AddRelation("disease has phenotype", "", "", "");
    builder.AddTriple(disease, has, skull, builder.AddSource("kept", "CC BY 4.0"));
    ImportOptions options;
    EXPECT_OK(ImportHpoLaySynonyms(DataFile("vocab/hpo-layperson-synonyms.tsv"), builder, options));
    KgData kg = builder.Finish(filter);
    EXPECT_EQ(kg.entities.at(skull).external_id, "HP:0002648");
    return kg.entities.at(skull).synonyms;
  };
  EXPECT_THAT(build(LicenseFilter{}), Contains("Abnormally shaped skull"));
  LicenseFilter no_hpo;
  no_hpo.exclude = {"HPO"};
  EXPECT_THAT(build(no_hpo), Not(Contains("Abnormally shaped skull")));
}

TEST(OboTest, GenericImporterReportsMalformedStanzasWithFileAndLine) {
  const std::string path = testing_util::TempPath("mini.obo");
  testing_util::WriteFile(path,
                          "format-version: 1.2\n"
                          "\n"
                          "[Term]\n"
                          "id: X:1\n"
                          "name: root\n"
                          "\n"
                          "[Term]\n"
                          "id: X:2\n"
                          "name: child\n"
                          "def: \"A child \\\"term\\\".\" [ref:1]\n"
                          "synonym: \"kid\" RELATED []\n"
                          "is_a: X:1 ! root\n"
                          "is_a: X:99 ! not in the file\n"
                          "\n"
                          "[Term]\n"
                          "name: no id here\n"
                          "\n"
                          "[Term]\n"
                          "id: X:3\n"
                          "synonym: \"unterminated RELATED []\n");
  OboImportSpec spec;
  spec.source = "mini";
  spec.entity_type = "thing";
  spec.id_prefix = "X:";
  spec.is_a_relation = "thing is a subtype of thing";
  KgBuilder builder;
  ImportOptions options;
  ASSERT_OK(ImportObo(path, spec, builder, options));
  const std::optional<EntityId> child = builder.Resolve("X:2");
  ASSERT_TRUE(child.has_value());
  EXPECT_EQ(builder.entity(*child).definition, "A child \"term\".");
  EXPECT_THAT(builder.entity(*child).synonyms, Contains("kid"));
  KgData kg = builder.Finish();
  ASSERT_EQ(kg.reports.size(), 1u);
  const SourceReport& report = kg.reports[0];
  EXPECT_EQ(report.rows_read, 4);
  EXPECT_EQ(report.rows_skipped, 2);
  EXPECT_EQ(report.unmapped_ids, 1);  // is_a X:99
  EXPECT_EQ(kg.triples.size(), 1u);
  ASSERT_EQ(report.errors.size(), 2u);
  EXPECT_EQ(report.errors[0], path + ":15: [Term] stanza without id");
  EXPECT_THAT(report.errors[1], HasSubstr(path + ":20: synonym"));

  KgBuilder strict_builder;
  options.strict = true;
  const absl::Status strict = ImportObo(path, spec, strict_builder, options);
  EXPECT_THAT(strict, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(strict.message(), path + ":15: [Term] stanza without id");
}

}  // namespace
}  // namespace ibgraphrag::kgstore::import_
