#include "services/kgstore/import/tabular_importers.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/kgstore/import/import_test_util.h"

namespace ibgraphrag::kgstore::import_ {
namespace {

using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::HasSubstr;

constexpr char kPrimeKgHeader[] =
    "relation,display_relation,x_index,x_id,x_type,x_name,x_source,y_index,y_id,y_type,y_name,"
    "y_source\n";

const Entity* FindEntity(const KgData& kg, absl::string_view external_id) {
  for (const Entity& e : kg.entities) {
    if (e.external_id == external_id) return &e;
  }
  return nullptr;
}

bool Has(const KgData& kg, absl::string_view head, absl::string_view relation,
         absl::string_view tail) {
  const Entity* h = FindEntity(kg, head);
  const Entity* t = FindEntity(kg, tail);
  if (h == nullptr || t == nullptr) return false;
  for (const Triple& triple : kg.triples) {
    if (triple.head == h->id && triple.tail == t->id &&
        kg.relations[triple.relation].name == relation) {
      return true;
    }
  }
  return false;
}

TEST(PrimeKgIdsTest, NormalisesSourcesAndPadsOntologyIds) {
  EXPECT_EQ(PrimeKgExternalId("7157", "NCBI"), "Entrez:7157");
  EXPECT_EQ(PrimeKgExternalId("DB00945", "DrugBank"), "DrugBank:DB00945");
  EXPECT_EQ(PrimeKgExternalId("5148", "MONDO"), "MONDO:0005148");
  EXPECT_EQ(PrimeKgExternalId("1945", "HPO"), "HP:0001945");
  EXPECT_EQ(PrimeKgExternalId("8150", "GO"), "GO:0008150");
  EXPECT_EQ(PrimeKgExternalId("2107", "UBERON"), "UBERON:0002107");
  EXPECT_EQ(PrimeKgExternalId("D000082", "CTD"), "MESH:D000082");
  EXPECT_EQ(PrimeKgExternalId("R-HSA-109581", "REACTOME"), "REACTOME:R-HSA-109581");
  EXPECT_EQ(PrimeKgExternalId("13924_12592", "MONDO_grouped"), "MONDO_grouped:13924_12592");
  EXPECT_EQ(PrimeKgEntityType("gene/protein"), "gene");
  EXPECT_EQ(PrimeKgEntityType("drug"), "compound");
  EXPECT_EQ(PrimeKgEntityType("effect/phenotype"), "phenotype");
  EXPECT_EQ(PrimeKgEntityType("biological_process"), "biological_process");
}

TEST(PrimeKgImportTest, ImportsFixtureWithReadableRelationsAndFoldsReverseCopies) {
  const std::string path = testing_util::TempPath("kg.csv");
  testing_util::WriteFile(
      path,
      absl::StrCat(
          kPrimeKgHeader,
          "protein_protein,ppi,0,7157,gene/protein,TP53,NCBI,1,4193,gene/protein,MDM2,NCBI\n",
          "protein_protein,ppi,1,4193,gene/protein,MDM2,NCBI,0,7157,gene/protein,TP53,NCBI\n",
          "indication,indication,2,DB00331,drug,Metformin,DrugBank,3,5148,disease,"
          "\"diabetes mellitus, type 2\",MONDO\n",
          // The reverse copy of a cross-type edge folds back onto the canonical direction.
          "indication,indication,3,5148,disease,\"diabetes mellitus, type 2\",MONDO,2,DB00331,"
          "drug,Metformin,DrugBank\n",
          "disease_phenotype_positive,phenotype present,3,5148,disease,"
          "\"diabetes mellitus, type 2\",MONDO,4,1945,effect/phenotype,Fever,HPO\n",
          "drug_protein,enzyme,2,DB00331,drug,Metformin,DrugBank,5,1576,gene/protein,CYP3A4,NCBI\n",
          "anatomy_protein_present,expression present,6,2107,anatomy,liver,UBERON,0,7157,"
          "gene/protein,TP53,NCBI\n",
          "exposure_disease,linked to,7,D000082,exposure,Acetaminophen,CTD,3,5148,disease,"
          "\"diabetes mellitus, type 2\",MONDO\n"));
  KgBuilder builder;
  ASSERT_OK(ImportPrimeKgCsv(path, builder, ImportOptions()));
  KgData kg = builder.Finish();
  EXPECT_TRUE(Has(kg, "Entrez:7157", "gene interacts with gene", "Entrez:4193"));
  EXPECT_TRUE(Has(kg, "Entrez:4193", "gene interacts with gene", "Entrez:7157"));
  EXPECT_TRUE(Has(kg, "DrugBank:DB00331", "drug treats disease", "MONDO:0005148"));
  EXPECT_FALSE(Has(kg, "MONDO:0005148", "drug treats disease", "DrugBank:DB00331"));
  EXPECT_TRUE(Has(kg, "MONDO:0005148", "disease has phenotype", "HP:0001945"));
  EXPECT_TRUE(Has(kg, "DrugBank:DB00331", "drug is metabolized by gene", "Entrez:1576"));
  EXPECT_TRUE(Has(kg, "UBERON:0002107", "anatomy expresses gene", "Entrez:7157"));
  EXPECT_TRUE(Has(kg, "MESH:D000082", "exposure linked to disease", "MONDO:0005148"));
  const Entity* t2d = FindEntity(kg, "MONDO:0005148");
  ASSERT_NE(t2d, nullptr);
  EXPECT_EQ(t2d->name, "diabetes mellitus, type 2");
  EXPECT_EQ(t2d->type, "disease");
  EXPECT_EQ(FindEntity(kg, "DrugBank:DB00331")->type, "compound");
  EXPECT_EQ(FindEntity(kg, "HP:0001945")->type, "phenotype");
  ASSERT_EQ(kg.reports.size(), 1u);
  EXPECT_EQ(kg.reports[0].rows_read, 8);
  EXPECT_EQ(kg.reports[0].triples_added, 7);
  EXPECT_EQ(kg.triples.size(), 7u);
}

TEST(PrimeKgImportTest, MalformedRowsAreSkippedWithFileAndLine) {
  const std::string path = testing_util::TempPath("kg.csv");
  testing_util::WriteFile(
      path, absl::StrCat(kPrimeKgHeader,
                         "protein_protein,ppi,0,1,gene/protein,A,NCBI,1,2,gene/protein,B,NCBI\n",
                         "protein_protein,ppi,0,1,gene/protein,\"unclosed,NCBI\n",
                         "made_up,thing,0,1,gene/protein,A,NCBI,1,2,gene/protein,B,NCBI\n",
                         "indication,indication,0,1,gene/protein,A,NCBI,1,2,gene/protein,B,NCBI\n",
                         "protein_protein,ppi,0,1,gene/protein,A,NCBI\n"));
  KgBuilder builder;
  ASSERT_OK(ImportPrimeKgCsv(path, builder, ImportOptions()));
  KgData kg = builder.Finish();
  const SourceReport& report = kg.reports[0];
  EXPECT_EQ(report.rows_read, 5);
  EXPECT_EQ(report.rows_skipped, 4);
  ASSERT_EQ(report.errors.size(), 4u);
  EXPECT_EQ(report.errors[0], path + ":3: unbalanced quotes in CSV row");
  EXPECT_EQ(report.errors[1], path + ":4: unknown relation 'made_up'/'thing'");
  EXPECT_THAT(report.errors[2], HasSubstr(path + ":5: types gene/protein -> gene/protein"));
  EXPECT_EQ(report.errors[3], path + ":6: expected at least 12 fields, got 7");
  ImportOptions strict;
  strict.strict = true;
  KgBuilder strict_builder;
  EXPECT_EQ(ImportPrimeKgCsv(path, strict_builder, strict).message(),
            path + ":3: unbalanced quotes in CSV row");
}

TEST(PrimeKgImportTest, GzipFileAndWrongHeaderAreHandled) {
  const std::string gz = testing_util::TempPath("kg.csv.gz");
  testing_util::WriteGzipFile(
      gz, absl::StrCat(kPrimeKgHeader,
                       "drug_drug,synergistic interaction,0,DB1,drug,A,DrugBank,1,DB2,drug,B,"
                       "DrugBank\n"));
  KgBuilder builder;
  ASSERT_OK(ImportPrimeKgCsv(gz, builder, ImportOptions()));
  EXPECT_EQ(builder.num_triples(), 1u);
  const std::string wrong = testing_util::TempPath("wrong.csv");
  testing_util::WriteFile(wrong, "a,b,c\n1,2,3\n");
  EXPECT_THAT(ImportPrimeKgCsv(wrong, builder, ImportOptions()),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(PrimeKgSchemaTest, DrugProteinDisplayNamesPickTheirRelation) {
  EXPECT_EQ(FindPrimeKgRelation("drug_protein", "target")->name, "drug targets gene");
  EXPECT_EQ(FindPrimeKgRelation("drug_protein", "transporter")->name,
            "drug is transported by gene");
  EXPECT_EQ(FindPrimeKgRelation("drug_protein", "unknown"), nullptr);
  EXPECT_EQ(FindPrimeKgRelation("off-label use", "off-label use")->name,
            "drug used off-label for disease");
  EXPECT_EQ(FindPrimeKgRelation("nope", "nope"), nullptr);
}

TEST(TsvTriplesTest, HeaderlessRowsWithOptionalTypesAndNames) {
  const std::string path = testing_util::TempPath("triples.tsv");
  testing_util::WriteFile(path,
                          "# comment\n"
                          "DOID:9352\tdisease associated with gene\tEntrez:3667\tdisease\tgene\t"
                          "type 2 diabetes mellitus\tIRS1\n"
                          "Entrez:3667\tgene interacts with gene\tEntrez:3630\n"
                          "\trelation\tEntrez:1\n");
  KgBuilder builder;
  ASSERT_OK(ImportTsvTriples(path, builder, ImportOptions()));
  KgData kg = builder.Finish();
  EXPECT_TRUE(Has(kg, "DOID:9352", "disease associated with gene", "Entrez:3667"));
  EXPECT_TRUE(Has(kg, "Entrez:3667", "gene interacts with gene", "Entrez:3630"));
  EXPECT_EQ(FindEntity(kg, "Entrez:3667")->name, "IRS1");
  EXPECT_EQ(FindEntity(kg, "Entrez:3667")->type, "gene");
  // A catalogue relation keeps its catalogue description.
  for (const Relation& r : kg.relations) EXPECT_FALSE(r.description.empty()) << r.name;
  EXPECT_EQ(kg.reports[0].rows_read, 3);
  EXPECT_EQ(kg.reports[0].rows_skipped, 1);
  EXPECT_EQ(kg.reports[0].errors[0], path + ":4: empty head, relation or tail");
}

TEST(TsvTriplesTest, HeaderNamesColumnsInAnyOrderAndReusesKnownIds) {
  const std::string path = testing_util::TempPath("triples.tsv");
  testing_util::WriteFile(path,
                          "subject\tobject\tpredicate\tsubject_name\n"
                          "X:1\tX:2\tlinks to\tfirst\n"
                          "X:2\tX:1\tlinks to\tsecond\n");
  KgBuilder builder;
  const EntityId existing = builder.AddEntity("X:2", "thing", "already here");
  ASSERT_OK(ImportTsvTriples(path, builder, ImportOptions(), "my-kg"));
  EXPECT_EQ(builder.num_entities(), 2u);
  KgData kg = builder.Finish();
  EXPECT_TRUE(Has(kg, "X:1", "links to", "X:2"));
  EXPECT_TRUE(Has(kg, "X:2", "links to", "X:1"));
  EXPECT_EQ(kg.entities[existing].name, "already here");
  EXPECT_EQ(FindEntity(kg, "X:1")->name, "first");
  EXPECT_EQ(kg.reports[0].source, "my-kg");
  EXPECT_EQ(kg.reports[0].rows_read, 2);
}

}  // namespace
}  // namespace ibgraphrag::kgstore::import_
