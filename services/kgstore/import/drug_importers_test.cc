#include "services/kgstore/import/drug_importers.h"

#include <string>

#include "common/source_lineage.h"
#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/kgstore/import/import_test_util.h"

namespace ibgraphrag::kgstore::import_ {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;
using testing_util::FindReport;
using testing_util::FindTriple;
using testing_util::TempPath;
using testing_util::TripleSources;
using testing_util::WriteFile;
using testing_util::WriteGzipFile;

// Hetionet-like nodes: a drug, a gene, a disease with its UMLS xref and a side effect.
void AddBackbone(KgBuilder& builder) {
  builder.AddEntity("DrugBank:DB00014", "compound", "Goserelin");
  builder.AddEntity("Entrez:2147", "gene", "F2");
  const EntityId breast = builder.AddEntity("DOID:1612", "disease", "breast cancer");
  builder.AddAlias(breast, "UMLS:C0006142");
  builder.AddEntity("UMLS:C0000737", "side_effect", "Abdominal pain");
}

// SIDER's two files through one DrugJoin, as the embedded build imports them (after DrugBank's
// drugs, which fill `join.marketed`, when the test has them).
void ImportSider(const std::string& indications, const std::string& side_effects,
                 KgBuilder& builder, DrugJoin& join) {
  ASSERT_OK(ImportSiderIndications(indications, builder, ImportOptions(), join));
  ASSERT_OK(ImportSiderSideEffects(side_effects, builder, ImportOptions(), join));
}

TEST(DrugImportersTest, DrugBankDrugsReadQuotedMultiLineDescriptions) {
  const std::string path = TempPath("drugs.tsv");
  WriteFile(path,
            "drugbank_id\tname\ttype\tgroups\tatc_codes\tcategories\tinchikey\tinchi\tdescription\n"
            "DB00001\tLepirudin\tbiotech\tapproved\tB01AE02\tAntithrombins\t\t\t\"Lepirudin is "
            "identical\nto natural hirudin.\"\n"
            "DB00014\tGoserelin\tbiotech\tapproved\t\t\tKEY-A\t\tA GnRH agonist.\n"
            "XX\tBroken\tbiotech\t\t\t\t\t\tx\n");
  KgBuilder builder;
  AddBackbone(builder);
  DrugJoin join;
  ASSERT_OK(ImportDrugBankDrugs(path, builder, ImportOptions(), join));
  EXPECT_THAT(join.marketed, UnorderedElementsAre("DB00001", "DB00014"));
  const KgData kg = builder.Finish();
  const Entity* lepirudin = nullptr;
  for (const Entity& e : kg.entities) {
    if (e.external_id == "DrugBank:DB00001") lepirudin = &e;
  }
  ASSERT_NE(lepirudin, nullptr);
  EXPECT_EQ(lepirudin->definition, "Lepirudin is identical\nto natural hirudin.");
  EXPECT_THAT(kg.entities[0].xrefs, Contains("InChIKey:KEY-A"));
  const SourceReport* report = FindReport(kg, "drugbank-drugs");
  ASSERT_NE(report, nullptr);
  EXPECT_EQ(report->rows_read, 3);
  EXPECT_EQ(report->sha256.size(), 64u);
  // The broken record starts on line 5 (the description above spans two lines).
  EXPECT_THAT(report->errors, ElementsAre(HasSubstr("drugs.tsv:5: drugbank_id is not")));
}

TEST(DrugImportersTest, SiderSideEffectsLandOnDrugBankThroughStitchIds) {
  const std::string indications = TempPath("indications.tsv");
  WriteFile(indications,
            "drugbank_id\tdrugbank_name\tpubchem_id\tstitch_id_flat\tumls_cui_from_label\tmethod\t"
            "concept_name\tmeddra_type\tumls_cui_from_meddra\tmeddra_name\n"
            "DB00014\tGoserelin\t47725\tCID100047725\tC0006142\tNLP_indication\tBreast cancer\tPT\t"
            "C0006142\tBreast cancer\n"
            "DB00014\tGoserelin\t47725\tCID100047725\tC0002871\tNLP_precondition\tAnemia\tPT\t"
            "C0002871\tAnaemia\n"
            "DB00014\tGoserelin\t47725\tCID100047725\tC9999999\ttext_mention\tUnknown\tPT\t"
            "C9999999\tUnknown\n"
            "DB00014\tGoserelin\t47725\tCID100047725\tC0000737\ttext_mention\tAbdominal pain\t"
            "PT\tC0000737\tAbdominal pain\n");
  const std::string side_effects = TempPath("se.tsv.gz");
  WriteGzipFile(side_effects,
                "CID100047725\tCID000047725\tC0000737\tPT\tC0000737\tAbdominal pain\n"
                "CID100047725\tCID000047725\tC0000729\tLLT\tC0000737\tAbdominal cramps\n"
                "CID100047725\tCID000047725\tC0015967\tPT\tC0015967\tPyrexia\n"
                "CID100000001\tCID000000001\tC0015967\tPT\tC0015967\tPyrexia\n");
  KgBuilder builder;
  AddBackbone(builder);
  DrugJoin join;
  ASSERT_NO_FATAL_FAILURE(ImportSider(indications, side_effects, builder, join));
  const KgData kg = builder.Finish();
  EXPECT_THAT(kg.entities[0].xrefs, Contains("STITCH:CID100047725"));
  EXPECT_THAT(kg.entities[0].xrefs, Contains("PubChem:47725"));
  const int64_t indication =
      FindTriple(kg, "DrugBank:DB00014", "drug indicated for condition", "DOID:1612");
  ASSERT_GE(indication, 0);
  EXPECT_THAT(TripleSources(kg, indication), ElementsAre("sider-indications (CC BY-NC-SA 4.0)"));
  EXPECT_EQ(FindReport(kg, "sider-indications")->unmapped_ids, 1);  // C9999999
  // A text_mention row is the label naming the condition, not an indication.
  EXPECT_LT(FindTriple(kg, "DrugBank:DB00014", "drug indicated for condition", "UMLS:C0000737"), 0);
  EXPECT_GE(FindTriple(kg, "DrugBank:DB00014", "drug label mentions condition", "UMLS:C0000737"),
            0);
  // An existing side effect merges; an unknown CUI becomes a new side effect.
  EXPECT_GE(FindTriple(kg, "DrugBank:DB00014", "drug causes side effect", "UMLS:C0000737"), 0);
  EXPECT_GE(FindTriple(kg, "DrugBank:DB00014", "drug causes side effect", "UMLS:C0015967"), 0);
  const SourceReport* report = FindReport(kg, "sider-side-effects");
  EXPECT_EQ(report->rows_read, 4);
  EXPECT_EQ(report->unmapped_ids, 1);  // CID100000001 has no DrugBank id
  EXPECT_EQ(report->triples_added, 2);
}

// SIDER gives no per-drug frequency: a side effect's score is the share of the file's drugs whose
// labels list it, so a drug's common reactions rank before its rare ones.
TEST(DrugImportersTest, SiderSideEffectsScoreIsTheShareOfDrugsLabelledWithThem) {
  const std::string indications = TempPath("indications_rate.tsv");
  WriteFile(
      indications,
      "drugbank_id\tdrugbank_name\tpubchem_id\tstitch_id_flat\tumls_cui_from_label\tmethod\t"
      "concept_name\tmeddra_type\tumls_cui_from_meddra\tmeddra_name\n"
      "DB00001\tDrug one\t1\tCID100000001\tC0006142\tNLP_precondition\tx\tPT\tC0006142\tx\n"
      "DB00002\tDrug two\t2\tCID100000002\tC0006142\tNLP_precondition\tx\tPT\tC0006142\tx\n"
      "DB00003\tDrug three\t3\tCID100000003\tC0006142\tNLP_precondition\tx\tPT\tC0006142\tx\n"
      "DB00004\tDrug four\t4\tCID100000004\tC0006142\tNLP_precondition\tx\tPT\tC0006142\tx\n");
  // Nausea on all four drugs' labels (drug one twice: two stereo ids), tremor on drug one's only;
  // an LLT row repeats a PT and counts for nothing.
  const std::string side_effects = TempPath("se_rate.tsv.gz");
  WriteGzipFile(side_effects,
                "CID100000001\tCID000000001\tC0027497\tPT\tC0027497\tNausea\n"
                "CID100000001\tCID000000011\tC0027497\tPT\tC0027497\tNausea\n"
                "CID100000001\tCID000000001\tC0040822\tPT\tC0040822\tTremor\n"
                "CID100000001\tCID000000001\tC0040823\tLLT\tC0040822\tShaking\n"
                "CID100000002\tCID000000002\tC0027497\tPT\tC0027497\tNausea\n"
                "CID100000003\tCID000000003\tC0027497\tPT\tC0027497\tNausea\n"
                "CID100000004\tCID000000004\tC0027497\tPT\tC0027497\tNausea\n");
  KgBuilder builder;
  DrugJoin join;
  ASSERT_NO_FATAL_FAILURE(ImportSider(indications, side_effects, builder, join));
  const KgData kg = builder.Finish();
  const int64_t nausea =
      FindTriple(kg, "DrugBank:DB00001", "drug causes side effect", "UMLS:C0027497");
  const int64_t tremor =
      FindTriple(kg, "DrugBank:DB00001", "drug causes side effect", "UMLS:C0040822");
  ASSERT_GE(nausea, 0);
  ASSERT_GE(tremor, 0);
  EXPECT_FLOAT_EQ(TripleScoreAt(kg, nausea), 1.0f);
  EXPECT_FLOAT_EQ(TripleScoreAt(kg, tremor), 0.25f);
  EXPECT_EQ(std::string(TripleNoteAt(kg, tremor)), "SIDER labels of 1 of 4 drugs list it");
  EXPECT_EQ(std::string(TripleNoteAt(kg, nausea)), "SIDER labels of 4 of 4 drugs list it");
  // Counted once per pair, whatever the stereo ids and LLT rows.
  EXPECT_EQ(FindReport(kg, "sider-side-effects")->triples_added, 5);
  EXPECT_EQ(FindReport(kg, "sider-side-effects")->rows_read, 7);
}

TEST(DrugImportersTest, TargetSourcesMergeIntoOneBindsTripleWithScoresAndNotes) {
  const std::string proteins = TempPath("proteins.tsv");
  WriteFile(proteins,
            "drugbank_id\tcategory\tuniprot_id\tentrez_gene_id\torganism\tknown_action\tactions\t"
            "pubmed_ids\n"
            "DB00014\ttarget\tP00734\t2147\tHuman\tyes\tinhibitor\t1\n"
            "DB00014\tenzyme\tP12345\t947\tEscherichia coli\tunknown\t\t\n");
  const std::string drugcentral = TempPath("targets.tsv");
  WriteFile(drugcentral,
            "GeneID\tdrugbank_id\tdrugbank_name\tpubmed_ids\tsources\tactions\turls\n"
            "2147\tDB00014\tGoserelin\t\tDrugCentral (ChEMBL)\tinhibitor\turl\n");
  const std::string bindingdb = TempPath("bindingdb.tsv");
  WriteFile(bindingdb,
            "drugbank_id\tentrez_gene\taffinity_nM\tn_pairs\tsources\tpubmeds\tdrugbank_name\t"
            "drugbank_approved\tgene_symbol\n"
            "DB00014\t2147\t100\t1\tChEMBL\t1\tGoserelin\t1\tF2\n"
            "DB00035\t552\t1\t1\tBindingDB\t1\tDesmopressin\t1\tAVPR1A\n"
            "DB00035\t553\t-3\t1\tBindingDB\t1\tDesmopressin\t1\tAVPR1B\n"
            "DB00035\t554\tnan\t1\tBindingDB\t1\tDesmopressin\t1\tAVPR2\n"
            "DB00035\t555\tinf\t1\tBindingDB\t1\tDesmopressin\t1\tAVPR3\n");
  KgBuilder builder;
  AddBackbone(builder);
  ASSERT_OK(ImportDrugBankProteins(proteins, builder, ImportOptions()));
  ASSERT_OK(ImportDrugCentralTargets(drugcentral, builder, ImportOptions()));
  ASSERT_OK(ImportBindingDb(bindingdb, builder, ImportOptions()));
  const KgData kg = builder.Finish();
  const int64_t i = FindTriple(kg, "DrugBank:DB00014", "drug binds gene", "UniProt:P00734");
  ASSERT_GE(i, 0);
  EXPECT_THAT(TripleSources(kg, i),
              UnorderedElementsAre("drugbank-proteins (CC BY-NC 4.0)",
                                   "drugcentral-targets (CC BY 4.0)", "bindingdb (CC BY-SA 3.0)"));
  // DrugBank knows the drug acts through it (score 1), which outranks BindingDB's 100 nM (0.6).
  EXPECT_FLOAT_EQ(TripleScoreAt(kg, i), 1.0f);
  EXPECT_THAT(std::string(TripleNoteAt(kg, i)), HasSubstr("target (inhibitor), known action"));
  EXPECT_THAT(std::string(TripleNoteAt(kg, i)), HasSubstr("affinity 100 nM"));
  const int64_t strong = FindTriple(kg, "DrugBank:DB00035", "drug binds gene", "Entrez:552");
  ASSERT_GE(strong, 0);
  EXPECT_FLOAT_EQ(TripleScoreAt(kg, strong), 1.0f);
  EXPECT_THAT(TripleSources(kg, strong), ElementsAre("bindingdb (CC BY 3.0)"));
  EXPECT_EQ(FindReport(kg, "drugbank-proteins")->unmapped_ids, 1);  // the E. coli enzyme
  // A negative, a NaN and an infinite affinity are malformed, never a score.
  EXPECT_EQ(FindReport(kg, "bindingdb")->rows_skipped, 3);
  EXPECT_LT(FindTriple(kg, "DrugBank:DB00035", "drug binds gene", "Entrez:554"), 0);
}

TEST(DrugImportersTest, DrugBankEnzymesTransportersAndCarriersAreNotTargets) {
  const std::string proteins = TempPath("roles.tsv");
  WriteFile(proteins,
            "drugbank_id\tcategory\tuniprot_id\tentrez_gene_id\torganism\tknown_action\tactions\t"
            "pubmed_ids\n"
            "DB00014\ttarget\tP00734\t2147\tHuman\tyes\tinhibitor\t1\n"
            "DB00014\tenzyme\tP08684\t1576\tHuman\tunknown\tsubstrate\t\n"
            "DB00014\ttransporter\tP08183\t5243\tHuman\tunknown\tsubstrate\t\n"
            "DB00014\tcarrier\tP02768\t213\tHuman\tunknown\t\t\n"
            "DB00014\tregulator\tP02768\t213\tHuman\tunknown\t\t\n");
  KgBuilder builder;
  AddBackbone(builder);
  for (const char* gene : {"Entrez:1576", "Entrez:5243", "Entrez:213"}) {
    builder.AddEntity(gene, "gene", gene);
  }
  ASSERT_OK(ImportDrugBankProteins(proteins, builder, ImportOptions()));
  const KgData kg = builder.Finish();
  EXPECT_GE(FindTriple(kg, "DrugBank:DB00014", "drug binds gene", "Entrez:2147"), 0);
  const int64_t enzyme =
      FindTriple(kg, "DrugBank:DB00014", "drug is metabolized by gene", "Entrez:1576");
  ASSERT_GE(enzyme, 0);
  EXPECT_EQ(std::string(TripleNoteAt(kg, enzyme)), "enzyme (substrate)");
  EXPECT_GE(FindTriple(kg, "DrugBank:DB00014", "drug is transported by gene", "Entrez:5243"), 0);
  EXPECT_GE(FindTriple(kg, "DrugBank:DB00014", "drug has carrier gene", "Entrez:213"), 0);
  // None of the three is a "binds" triple: a target question does not see them.
  for (const char* gene : {"Entrez:1576", "Entrez:5243", "Entrez:213"}) {
    EXPECT_LT(FindTriple(kg, "DrugBank:DB00014", "drug binds gene", gene), 0) << gene;
  }
  // A role DrugBank does not have is a malformed row, not a target.
  EXPECT_EQ(FindReport(kg, "drugbank-proteins")->rows_skipped, 1);
}

TEST(DrugImportersTest, ClassesAndIndicationsUseHetionetRelations) {
  const std::string classes = TempPath("classes.tsv");
  WriteFile(classes,
            "drugbank_id\tdrugbank_name\tclass_id\tclass_name\n"
            "DB00014\tGoserelin\tN0000175655\tGnRH Receptor Agonist\n"
            "DB00014\tGoserelin\tCHEBI:35610\tantineoplastic agent\n"
            "DB00014\tGoserelin\tATC:L02AE03\tGonadotropin releasing hormone analogues\n"
            "DB00331\tMetformin\tCHEBI:35610\tantineoplastic agent\n");
  const std::string indications = TempPath("indications.tsv");
  WriteFile(indications,
            "doid_id\tdrugbank_id\tdisease\tdrug\tcategory\n"
            "DOID:1612\tDB00014\tbreast cancer\tGoserelin\tDM\n"
            "DOID:1612\tDB00945\tbreast cancer\tAspirin\tSYM\n"
            "DOID:1612\tDB00331\tbreast cancer\tMetformin\tNOT\n"
            "DOID:0000000\tDB00014\tnothing\tGoserelin\tDM\n");
  KgBuilder builder;
  AddBackbone(builder);
  ASSERT_OK(ImportDrugCentralClasses(classes, builder, ImportOptions()));
  ASSERT_OK(ImportDrugCentralIndications(indications, builder, ImportOptions()));
  const KgData kg = builder.Finish();
  EXPECT_GE(
      FindTriple(kg, "NDFRT:N0000175655", "pharmacologic class includes drug", "DrugBank:DB00014"),
      0);
  const int64_t agonist =
      FindTriple(kg, "NDFRT:N0000175655", "pharmacologic class includes drug", "DrugBank:DB00014");
  const int64_t antineoplastic =
      FindTriple(kg, "CHEBI:35610", "pharmacologic class includes drug", "DrugBank:DB00014");
  ASSERT_GE(antineoplastic, 0);
  // A class's score is its specificity, 1 / its drugs: the narrower class first.
  EXPECT_FLOAT_EQ(TripleScoreAt(kg, agonist), 1.0f);
  EXPECT_FLOAT_EQ(TripleScoreAt(kg, antineoplastic), 0.5f);
  EXPECT_EQ(std::string(TripleNoteAt(kg, antineoplastic)), "DrugCentral class of 2 drugs");
  EXPECT_EQ(FindReport(kg, "drugcentral-classes")->rows_skipped, 1);
  EXPECT_GE(FindTriple(kg, "DrugBank:DB00014", "drug treats disease", "DOID:1612"), 0);
  EXPECT_GE(FindTriple(kg, "DrugBank:DB00945", "drug palliates disease", "DOID:1612"), 0);
  EXPECT_LT(FindTriple(kg, "DrugBank:DB00331", "drug treats disease", "DOID:1612"), 0);
  EXPECT_EQ(FindReport(kg, "drugcentral-indications")->unmapped_ids, 1);
}

// DrugBank's categories join the classes DrugCentral named (case-insensitively), with their own
// specificity; categories that name no class add nothing and count as unmapped; a pair DrugCentral
// already has gains the source but no independent evidence.
TEST(DrugImportersTest, DrugBankCategoriesJoinTheClassesDrugCentralNamed) {
  const std::string drugs = TempPath("drugs_categories.tsv");
  WriteFile(drugs,
            "drugbank_id\tname\ttype\tgroups\tatc_codes\tcategories\tinchikey\tinchi\tdescription\n"
            "DB01109\tHeparin\tsmall molecule\tapproved\tB01AB01\t"
            "Fibrinolytic Agents|anticoagulants|Heparins\t\t\t\n"
            "DB00682\tWarfarin\tsmall molecule\tapproved\tB01AA03\tAnticoagulants|"
            "Cytochrome P-450 CYP2C9 Substrates\t\t\t\n"
            "DB00331\tMetformin\tsmall molecule\tapproved\tA10BA02\t\t\t\t\n");
  const std::string classes = TempPath("classes_categories.tsv");
  WriteFile(classes,
            "drugbank_id\tdrugbank_name\tclass_id\tclass_name\n"
            "DB00682\tWarfarin\tD000925\tAnticoagulants\n"
            "DB00331\tMetformin\tD007004\tHypoglycemic Agents\n");
  KgBuilder builder;
  DrugJoin join;
  ASSERT_OK(ImportDrugBankDrugs(drugs, builder, ImportOptions(), join));
  EXPECT_THAT(join.categories.at("DB01109"),
              ::testing::ElementsAre("Fibrinolytic Agents", "anticoagulants", "Heparins"));
  EXPECT_FALSE(join.categories.contains("DB00331"));  // no categories
  ASSERT_OK(ImportDrugCentralClasses(classes, builder, ImportOptions()));
  ASSERT_OK(ImportDrugBankCategories(builder, join));
  const KgData kg = builder.Finish();
  const int64_t heparin =
      FindTriple(kg, "MESH:D000925", "pharmacologic class includes drug", "DrugBank:DB01109");
  ASSERT_GE(heparin, 0);  // heparin had no class from DrugCentral
  // Two drugs in DrugBank's "Anticoagulants": specificity 1/2.
  EXPECT_FLOAT_EQ(TripleScoreAt(kg, heparin), 0.5f);
  EXPECT_EQ(std::string(TripleNoteAt(kg, heparin)), "DrugBank category of 2 drugs");
  const SourceReport* report = FindReport(kg, "drugbank-categories");
  ASSERT_NE(report, nullptr);
  EXPECT_EQ(report->rows_read, 5);
  EXPECT_EQ(report->path, drugs);  // the categories are drugbank-drugs.tsv's, read once
  EXPECT_EQ(report->sha256, FindReport(kg, "drugbank-drugs")->sha256);
  // Fibrinolytic Agents and Heparins (no such class in the KG), the CYP2C9 substrates.
  EXPECT_EQ(report->unmapped_ids, 3);
  EXPECT_EQ(report->triples_added, 1);   // heparin
  EXPECT_EQ(report->triples_merged, 1);  // warfarin, which DrugCentral had
  // ... and which keeps DrugCentral's score (its only Anticoagulant there), not DrugBank's 1/2.
  const int64_t warfarin =
      FindTriple(kg, "MESH:D000925", "pharmacologic class includes drug", "DrugBank:DB00682");
  ASSERT_GE(warfarin, 0);
  EXPECT_FLOAT_EQ(TripleScoreAt(kg, warfarin), 1.0f);
  EXPECT_EQ(std::string(TripleNoteAt(kg, warfarin)),
            "DrugCentral class of 1 drugs; DrugBank category of 2 drugs");
  EXPECT_EQ(common::IndependentSourceCount({"drugcentral-classes", "drugbank-categories"},
                                           "pharmacologic class includes drug"),
            1);
}

// SIDER's join names every DrugBank entry of a label's flat structure. The label is about the
// marketed one when some are (rivaroxaban, not its experimental twin), about each of a few marketed
// ones (two enantiomers), and about none of an ion's many salts.
TEST(DrugImportersTest, SiderLabelsLandOnTheMarketedDrugsTheyAreAbout) {
  const std::string drugs = TempPath("drugs_join.tsv");
  WriteFile(
      drugs,
      "drugbank_id\tname\ttype\tgroups\tatc_codes\tcategories\tinchikey\tinchi\tdescription\n"
      "DB06228\tRivaroxaban\tsmall molecule\tapproved\t\t\t\t\t\n"
      "DB08477\t5-chloro-N-(...)thiophene-2-carboxamide\tsmall molecule\texperimental\t\t\t\t\t\n"
      "DB00215\tCitalopram\tsmall molecule\tapproved\t\t\t\t\t\n"
      "DB01175\tEscitalopram\tsmall molecule\tapproved|investigational\t\t\t\t\t\n"
      "DB00411\tCarbachol\tsmall molecule\tapproved\t\t\t\t\t\n"
      "DB00515\tCisplatin\tsmall molecule\tapproved\t\t\t\t\t\n"
      "DB00761\tPotassium Chloride\tsmall molecule\tapproved|withdrawn\t\t\t\t\t\n"
      "DB01164\tCalcium Chloride\tsmall molecule\tapproved\t\t\t\t\t\n");
  const std::string header =
      "drugbank_id\tdrugbank_name\tpubchem_id\tstitch_id_flat\tumls_cui_from_label\tmethod\t"
      "concept_name\tmeddra_type\tumls_cui_from_meddra\tmeddra_name\n";
  auto row = [](const std::string& drug, const std::string& stitch) {
    return drug + "\tx\t1\t" + stitch + "\tC0006142\tNLP_indication\tx\tPT\tC0006142\tx\n";
  };
  const std::string indications = TempPath("indications_join.tsv");
  WriteFile(indications, header + row("DB06228", "CID106433119") + row("DB08477", "CID106433119") +
                             row("DB00215", "CID100002771") + row("DB01175", "CID100002771") +
                             row("DB00411", "CID100000312") + row("DB00515", "CID100000312") +
                             row("DB00761", "CID100000312") + row("DB01164", "CID100000312"));
  const std::string side_effects = TempPath("se_join.tsv.gz");
  WriteGzipFile(side_effects,
                "CID106433119\tCID106433119\tC0019080\tPT\tC0019080\tHaemorrhage\n"
                "CID100002771\tCID100002771\tC0027497\tPT\tC0027497\tNausea\n"
                "CID100000312\tCID100000312\tC0040822\tPT\tC0040822\tTremor\n");
  KgBuilder builder;
  AddBackbone(builder);
  DrugJoin join;
  ASSERT_OK(ImportDrugBankDrugs(drugs, builder, ImportOptions(), join));
  ASSERT_NO_FATAL_FAILURE(ImportSider(indications, side_effects, builder, join));
  const KgData kg = builder.Finish();
  constexpr char kIndicated[] = "drug indicated for condition";
  constexpr char kCauses[] = "drug causes side effect";
  EXPECT_GE(FindTriple(kg, "DrugBank:DB06228", kIndicated, "DOID:1612"), 0);
  EXPECT_GE(FindTriple(kg, "DrugBank:DB06228", kCauses, "UMLS:C0019080"), 0);
  EXPECT_LT(FindTriple(kg, "DrugBank:DB08477", kIndicated, "DOID:1612"), 0);
  EXPECT_LT(FindTriple(kg, "DrugBank:DB08477", kCauses, "UMLS:C0019080"), 0);
  for (const char* enantiomer : {"DrugBank:DB00215", "DrugBank:DB01175"}) {
    EXPECT_GE(FindTriple(kg, enantiomer, kIndicated, "DOID:1612"), 0) << enantiomer;
    EXPECT_GE(FindTriple(kg, enantiomer, kCauses, "UMLS:C0027497"), 0) << enantiomer;
  }
  for (const char* salt : {"DrugBank:DB00411", "DrugBank:DB00515", "DrugBank:DB00761"}) {
    EXPECT_LT(FindTriple(kg, salt, kIndicated, "DOID:1612"), 0) << salt;
    EXPECT_LT(FindTriple(kg, salt, kCauses, "UMLS:C0040822"), 0) << salt;
  }
  // The experimental twin's row and the four salts' rows join nothing.
  EXPECT_EQ(FindReport(kg, "sider-indications")->unmapped_ids, 5);
  EXPECT_EQ(FindReport(kg, "sider-side-effects")->unmapped_ids, 1);
  EXPECT_EQ(join.stitch.count("CID100000312"), 0u);
}

}  // namespace
}  // namespace ibgraphrag::kgstore::import_
