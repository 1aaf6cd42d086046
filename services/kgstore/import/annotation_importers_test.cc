#include "services/kgstore/import/annotation_importers.h"

#include <map>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/kgstore/import/hetionet_importer.h"
#include "services/kgstore/import/import_test_util.h"
#include "services/kgstore/import/ontology_importers.h"

namespace ibgraphrag::kgstore::import_ {
namespace {

using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::Contains;
using ::testing::HasSubstr;
using testing_util::DataFile;

// The DO/HPO/Hetionet backbone plus every annotation source, imported once for the suite in the
// embedded build's order.
class AnnotationImportersTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    KgBuilder builder;
    ImportOptions options;
    auto run = [](const absl::Status& status) { ASSERT_OK(status); };
    run(ImportDiseaseOntologyObo(DataFile("vocab/doid-2024-01-31.obo.gz"), builder, options));
    run(ImportDoXrefs(DataFile("vocab/do-allXREFinDO.tsv"), builder, options));
    run(ImportHpoObo(DataFile("vocab/hp-2017-04-13.obo.gz"), builder, options));
    run(ImportHetionetNodes(DataFile("kg/hetionet-v1.0-nodes.tsv"), builder, options));
    run(ImportHetionetEdges(DataFile("kg/hetionet-v1.0-edges-5k.sif.gz"),
                            DataFile("kg/hetionet-metaedges.tsv"), builder, options));
    run(ImportPharmacotherapyDb(DataFile("kg/pharmacotherapydb-indications.tsv"), builder,
                                options));
    run(ImportHsdnSymptoms(DataFile("kg/hsdn-symptoms-DO.tsv"), builder, options));
    run(ImportDoDiseaseSymptoms(DataFile("kg/do-disease-symptom.tsv"), builder, options));
    run(ImportDoLogicalAxioms(DataFile("kg/do-subclassof-anonymous.tsv"), builder, options));
    run(ImportHpoGenesToPhenotype(DataFile("kg/hpo-genes_to_phenotype.txt.gz"), builder, options));
    run(ImportHpoAnnotations(DataFile("kg/hpo-phenotype.hpoa.gz"), builder, options));
    run(ImportDisGeNet(DataFile("kg/disgenet-curated_gene_disease_associations.txt.gz"), builder,
                       options));
    run(ImportAbbreviations(DataFile("vocab/wikipedia-medical-abbreviations.csv"), builder,
                            options));
    kg_ = new KgData(builder.Finish());
    for (const Entity& e : kg_->entities) {
      (*by_id_)[e.external_id] = e.id;
      for (const std::string& xref : e.xrefs) (*by_id_)[xref] = e.id;
    }
  }
  static void TearDownTestSuite() { delete kg_; }

  static EntityId Id(const std::string& external_id) {
    const auto it = by_id_->find(external_id);
    EXPECT_NE(it, by_id_->end()) << external_id;
    return it == by_id_->end() ? kInvalidEntity : it->second;
  }
  static bool Has(const std::string& head, absl::string_view relation, const std::string& tail) {
    const EntityId h = Id(head), t = Id(tail);
    for (const Triple& triple : kg_->triples) {
      if (triple.head == h && triple.tail == t &&
          kg_->relations[triple.relation].name == relation) {
        return true;
      }
    }
    return false;
  }
  static const SourceReport& Report(absl::string_view source) {
    for (const SourceReport& r : kg_->reports) {
      if (r.source == source) return r;
    }
    ADD_FAILURE() << "no report " << source;
    return kg_->reports.front();
  }
  static int RelationsNamed(absl::string_view name) {
    int n = 0;
    for (const Relation& r : kg_->relations) n += r.name == name;
    return n;
  }
  static std::map<std::string, int64_t> RelationCountBySource(absl::string_view relation) {
    std::map<std::string, int64_t> counts;
    for (const Triple& t : kg_->triples) {
      // The first source registered among the triple's sources: the one that added it.
      if (kg_->relations[t.relation].name == relation) {
        ++counts[kg_->sources[kg_->provenance[t.provenance].front()].name];
      }
    }
    return counts;
  }

  static KgData* kg_;
  static std::map<std::string, EntityId>* by_id_;
};
KgData* AnnotationImportersTest::kg_ = nullptr;
std::map<std::string, EntityId>* AnnotationImportersTest::by_id_ =
    new std::map<std::string, EntityId>();

TEST_F(AnnotationImportersTest, DisGeNetUmlsDiseasesMapOntoDoDiseases) {
  // umls:C0011860 (Diabetes Mellitus, Type 2) - IRS1 (Entrez 3667).
  EXPECT_TRUE(Has("DOID:9352", "disease associated with gene", "Entrez:3667"));
  const SourceReport& report = Report("disgenet");
  EXPECT_EQ(report.rows_read, 26'522);
  EXPECT_EQ(report.rows_skipped, 0);
  EXPECT_GT(report.unmapped_ids, 0);                 // CUIs without a DO disease
  EXPECT_LT(report.unmapped_ids, report.rows_read);  // ... but most join
  EXPECT_GT(report.triples_added, 5'000);
  // DisGeNET and Hetionet DaG share one relation.
  EXPECT_EQ(RelationsNamed("disease associated with gene"), 1);
  const auto by_source = RelationCountBySource("disease associated with gene");
  EXPECT_EQ(by_source.at("hetionet"), 5'000);
  EXPECT_EQ(by_source.at("disgenet"), report.triples_added);
  // The row's score is the triple's, its publications and evidence sources the note: HBB in
  // sickle cell anemia (0.503, ClinVar among its sources) scores above CAD (0.21, CTD alone).
  const int64_t hbb =
      testing_util::FindTriple(*kg_, "DOID:10923", "disease associated with gene", "Entrez:3043");
  const int64_t cad =
      testing_util::FindTriple(*kg_, "DOID:10923", "disease associated with gene", "Entrez:790");
  ASSERT_GE(hbb, 0);
  ASSERT_GE(cad, 0);
  EXPECT_NEAR(TripleScoreAt(*kg_, hbb), 0.5034, 1e-4);
  EXPECT_NEAR(TripleScoreAt(*kg_, cad), 0.21, 1e-4);
  EXPECT_THAT(std::string(TripleNoteAt(*kg_, hbb)),
              HasSubstr("DisGeNET score 0.50, 128 publications; evidence: BeFree, CLINVAR"));
}

TEST_F(AnnotationImportersTest, HsdnAndHetionetSymptomsMergeIntoOneRelation) {
  EXPECT_EQ(RelationsNamed("disease presents symptom"), 1);
  const auto by_source = RelationCountBySource("disease presents symptom");
  // A few Hetionet DpS edges fold together where two MeSH symptoms are one HPO concept.
  EXPECT_LE(by_source.at("hetionet"), 3'357);
  EXPECT_GE(by_source.at("hetionet"), 3'300);
  const SourceReport& hsdn = Report("hsdn");
  EXPECT_EQ(hsdn.rows_read, 10'465);
  EXPECT_EQ(by_source.at("hsdn"), hsdn.triples_added);
  // Hetionet's DpS edges come from HSDN, so many HSDN rows repeat an existing triple.
  EXPECT_LT(hsdn.triples_added, hsdn.rows_read - hsdn.unmapped_ids - 2'000);
  EXPECT_GT(by_source.at("do-disease-symptom"), 0);
  // HSDN's TF-IDF ranks a disease's symptoms by how characteristic they are: asthma's
  // Respiratory Sounds (tf-idf 1,967) scores above its Birth Weight (107).
  const int64_t sounds =
      testing_util::FindTriple(*kg_, "DOID:2841", "disease presents symptom", "MESH:D012135");
  const int64_t weight =
      testing_util::FindTriple(*kg_, "DOID:2841", "disease presents symptom", "MESH:D001724");
  ASSERT_GE(sounds, 0);
  ASSERT_GE(weight, 0);
  EXPECT_NEAR(TripleScoreAt(*kg_, sounds), 1967.12 / 2067.12, 1e-4);
  EXPECT_GT(TripleScoreAt(*kg_, sounds), TripleScoreAt(*kg_, weight));
  EXPECT_THAT(std::string(TripleNoteAt(*kg_, sounds)),
              HasSubstr("HSDN tf-idf 1967, 1200 co-occurrences"));
}

TEST_F(AnnotationImportersTest, IndicationsShareHetionetTreatsAndPalliates) {
  EXPECT_TRUE(Has("DrugBank:DB00843", "drug treats disease", "DOID:10652"));  // donepezil, AD
  EXPECT_EQ(RelationsNamed("drug treats disease"), 1);
  EXPECT_EQ(RelationsNamed("drug palliates disease"), 1);
  const SourceReport& report = Report("pharmacotherapydb");
  EXPECT_EQ(report.rows_read, 1'388);
  // Hetionet CtD/CpD are PharmacotherapyDB's DM/SYM indications: nothing new.
  EXPECT_EQ(report.triples_added, 0);
}

TEST_F(AnnotationImportersTest, HpoAnnotationsResolveOmimThroughDoXrefs) {
  EXPECT_TRUE(Has("DOID:9352", "disease has phenotype", "HP:0005978"));
  EXPECT_TRUE(Has("DOID:9352", "disease has mode of inheritance", "HP:0000006"));
  EXPECT_TRUE(Has("DOID:9352", "disease has clinical course", "HP:0003584"));
  // NOT annotations are their own relation.
  EXPECT_TRUE(Has("OMIM:617816", "disease does not have phenotype", "HP:0003155"));
  EXPECT_FALSE(Has("OMIM:617816", "disease has phenotype", "HP:0003155"));
  // OMIM:617816 is a DO xref: the annotation lands on the DO disease.
  EXPECT_TRUE(absl::StartsWith(kg_->entities[Id("OMIM:617816")].external_id, "DOID:"));
  // A disease without a DO xref becomes its own entity, named from the file.
  const Entity& created = kg_->entities[Id("OMIM:108450")];
  EXPECT_EQ(created.external_id, "OMIM:108450");
  EXPECT_EQ(created.type, "disease");
  EXPECT_EQ(created.name, "Asymmetric short stature syndrome");
  EXPECT_TRUE(Has("OMIM:108450", "disease does not have phenotype", "HP:0001249"));
  const SourceReport& report = Report("hpo-annotations");
  EXPECT_GT(report.rows_read, 250'000);
  EXPECT_GT(report.unmapped_ids, 0);
  EXPECT_LT(report.unmapped_ids, report.rows_read);
}

TEST_F(AnnotationImportersTest, GenesToPhenotypeLinksEntrezGenesToHpoTerms) {
  EXPECT_TRUE(Has("Entrez:8192", "gene associated with phenotype", "HP:0000013"));
  const SourceReport& report = Report("hpo-genes-to-phenotype");
  EXPECT_EQ(report.rows_read, 268'983);  // the #Format line is a comment
  EXPECT_GT(report.triples_added, 100'000);
}

TEST_F(AnnotationImportersTest, DoSymptomsJoinSymptomsByNameAndAxiomsBecomeTriples) {
  // SYMP:0000613 "fever" joins the HPO/MeSH fever entity instead of duplicating it.
  EXPECT_EQ(Id("SYMP:0000613"), Id("HP:0001945"));
  EXPECT_EQ(Id("MESH:D005334"), Id("HP:0001945"));
  EXPECT_TRUE(Has("DOID:0050012", "disease presents symptom", "HP:0001945"));
  // 'has material basis in' some 'autosomal recessive inheritance' -> mode of inheritance.
  const SourceReport& axioms = Report("do-axioms");
  EXPECT_EQ(axioms.rows_read, 6'064);
  EXPECT_GT(axioms.triples_added, 1'000);
  EXPECT_GT(axioms.unmapped_ids, 0);  // organisms, cell types, life stages are not in the KG
  const auto inheritance = RelationCountBySource("disease has mode of inheritance");
  EXPECT_GT(inheritance.at("do-axioms"), 1'000);
  EXPECT_GT(RelationCountBySource("disease localizes to anatomy").at("do-axioms"), 0);
}

TEST_F(AnnotationImportersTest, AbbreviationsBecomeSynonymsOfTheirLongForm) {
  const SourceReport& report = Report("abbreviations");
  EXPECT_EQ(report.rows_read, 2'693);
  EXPECT_LT(report.unmapped_ids, report.rows_read);
  int64_t with_abbreviation = 0;
  for (const Entity& e : kg_->entities) {
    for (const std::string& s : e.synonyms) with_abbreviation += s == "COPD";
  }
  EXPECT_GE(with_abbreviation, 1);
}

TEST(AnnotationMalformedRowTest, SkipsAndReportsFileLineOrAbortsWhenStrict) {
  const std::string path = testing_util::TempPath("hsdn-fixture.tsv");
  const std::string head = testing_util::HeadLines(DataFile("kg/hsdn-symptoms-DO.tsv"), 3);
  const std::string rest =
      testing_util::HeadLines(DataFile("kg/hsdn-symptoms-DO.tsv"), 6).substr(head.size());
  testing_util::WriteFile(path, head + "only\ttwo fields\n" + rest);
  KgBuilder builder;
  ImportOptions options;
  ASSERT_OK(ImportDiseaseOntologyObo(DataFile("vocab/doid-2024-01-31.obo.gz"), builder, options));
  const absl::Status lenient = ImportHsdnSymptoms(path, builder, options);
  ASSERT_OK(lenient);
  KgData kg = builder.Finish();
  const SourceReport& report = kg.reports.back();
  EXPECT_EQ(report.rows_read, 6);
  EXPECT_EQ(report.rows_skipped, 1);
  ASSERT_EQ(report.errors.size(), 1u);
  EXPECT_EQ(report.errors[0], absl::StrCat(path, ":4: expected at least 7 fields, got 2"));
  EXPECT_EQ(report.triples_added, 5);

  KgBuilder strict_builder;
  options.strict = true;
  const absl::Status strict = ImportHsdnSymptoms(path, strict_builder, options);
  EXPECT_THAT(strict, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(strict.message(), absl::StrCat(path, ":4: expected at least 7 fields, got 2"));
}

TEST(AnnotationMalformedRowTest, WrongFileIsRejectedByItsHeader) {
  KgBuilder builder;
  const absl::Status status =
      ImportHsdnSymptoms(DataFile("kg/do-disease-symptom.tsv"), builder, ImportOptions());
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument,
                               HasSubstr("do-disease-symptom.tsv:1: unexpected header")));
}

TEST(AnnotationMalformedRowTest, MaxErrorsReportedCapsMessagesNotCounts) {
  std::string content = "doid_id\tdrugbank_id\tdisease\tdrug\tcategory\n";
  for (int i = 0; i < 10; ++i) absl::StrAppend(&content, "DOID:1\tDB1\td\tx\tBOGUS\n");
  const std::string path = testing_util::TempPath("indications.tsv");
  testing_util::WriteFile(path, content);
  KgBuilder builder;
  ImportOptions options;
  options.max_errors_reported = 3;
  ASSERT_OK(ImportPharmacotherapyDb(path, builder, options));
  KgData kg = builder.Finish();
  EXPECT_EQ(kg.reports[0].rows_skipped, 10);
  ASSERT_EQ(kg.reports[0].errors.size(), 3u);
  EXPECT_EQ(kg.reports[0].errors[2], absl::StrCat(path, ":4: unknown category 'BOGUS'"));
}

}  // namespace
}  // namespace ibgraphrag::kgstore::import_
