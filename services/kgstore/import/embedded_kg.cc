#include "services/kgstore/import/embedded_kg.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "services/kgstore/import/annotation_importers.h"
#include "services/kgstore/import/drug_importers.h"
#include "services/kgstore/import/expression_importers.h"
#include "services/kgstore/import/gene_importers.h"
#include "services/kgstore/import/hetionet_importer.h"
#include "services/kgstore/import/ontology_importers.h"
#include "services/kgstore/kg_builder.h"

namespace ibgraphrag::kgstore::import_ {
namespace {

constexpr char kDoObo[] = "vocab/doid-2024-01-31.obo.gz";
constexpr char kDoXrefs[] = "vocab/do-allXREFinDO.tsv";
constexpr char kHpObo[] = "vocab/hp-2017-04-13.obo.gz";
constexpr char kHpoLay[] = "vocab/hpo-layperson-synonyms.tsv";
constexpr char kHetionetNodes[] = "kg/hetionet-v1.0-nodes.tsv";
constexpr char kHetionetMetaedges[] = "kg/hetionet-metaedges.tsv";
constexpr char kHetionetEdges[] = "kg/hetionet-v1.0-edges-5k.sif.gz";
constexpr char kHetionetDag[] = "kg/hetionet-DaG-association.tsv";
constexpr char kPharmacotherapyDb[] = "kg/pharmacotherapydb-indications.tsv";
constexpr char kHsdn[] = "kg/hsdn-symptoms-DO.tsv";
constexpr char kDoSymptoms[] = "kg/do-disease-symptom.tsv";
constexpr char kDoAxioms[] = "kg/do-subclassof-anonymous.tsv";
constexpr char kHpoGenes[] = "kg/hpo-genes_to_phenotype.txt.gz";
constexpr char kHpoa[] = "kg/hpo-phenotype.hpoa.gz";
constexpr char kDisGeNet[] = "kg/disgenet-curated_gene_disease_associations.txt.gz";
constexpr char kAbbreviations[] = "vocab/wikipedia-medical-abbreviations.csv";
// Issue 14 sources. Id bridges first: HGNC symbols and STRING proteins onto Entrez genes,
// DrugBank drugs, then STITCH/PubChem (SIDER indications) and UniProt (DrugBank proteins).
constexpr char kHgncFamilies[] = "kg/hgnc-gene-families.tsv";
constexpr char kStringMap[] = "kg/diseases-entrez_gene_id.vs.string.v9.05.txt";
constexpr char kDrugBankDrugs[] = "kg/drugbank-drugs.tsv";
constexpr char kSiderIndications[] = "kg/sider4-indications.tsv";
constexpr char kDrugBankProteins[] = "kg/drugbank-proteins.tsv";
constexpr char kDrugCentralTargets[] = "kg/drugcentral-targets.tsv";
constexpr char kDrugCentralClasses[] = "kg/drugcentral-drug-to-class.tsv";
constexpr char kDrugCentralIndications[] = "kg/drugcentral-indications.tsv";
constexpr char kBindingDb[] = "kg/bindingdb-drugbank-gene.tsv";
constexpr char kSiderSideEffects[] = "kg/sider4-meddra_all_se.tsv.gz";
constexpr char kDiseasesKnowledge[] = "kg/diseases-knowledge_full.tsv.gz";
constexpr char kDiseasesExperiments[] = "kg/diseases-experiments_full.tsv.gz";
constexpr char kGwasCurated[] = "kg/gwas-catalog-gene-associations.tsv";
constexpr char kPpi[] = "kg/ppi-hetio-ind.tsv";
constexpr char kPathways[] = "kg/pathways.tsv";
constexpr char kGoAnnotations[] = "kg/go-annotations-9606-direct-expev.tsv";
constexpr char kUberonTerms[] = "kg/uberon-terms.tsv";
constexpr char kBgeePresent[] = "kg/bgee-present-in-adult.tsv.gz";
constexpr char kBgeeDiffex[] = "kg/bgee-diffex.tsv.gz";
constexpr char kGwasCatalog[] = "kg/gwas-catalog-v1.0.1-2015-06-08.tsv.gz";

template <typename Map>
std::vector<std::pair<std::string, int64_t>> ByCountDescending(const Map& counts) {
  std::vector<std::pair<std::string, int64_t>> sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return sorted;
}

}  // namespace

const std::vector<std::string>& EmbeddedKgSourceFiles() {
  static const auto* const files = new std::vector<std::string>{kDoObo,
                                                                kDoXrefs,
                                                                kHpObo,
                                                                kHpoLay,
                                                                kHetionetNodes,
                                                                kHetionetMetaedges,
                                                                kHetionetEdges,
                                                                kHetionetDag,
                                                                kHgncFamilies,
                                                                kStringMap,
                                                                kDrugBankDrugs,
                                                                kSiderIndications,
                                                                kDrugBankProteins,
                                                                kPharmacotherapyDb,
                                                                kHsdn,
                                                                kDoSymptoms,
                                                                kDoAxioms,
                                                                kHpoGenes,
                                                                kHpoa,
                                                                kDisGeNet,
                                                                kDrugCentralTargets,
                                                                kDrugCentralClasses,
                                                                kDrugCentralIndications,
                                                                kBindingDb,
                                                                kSiderSideEffects,
                                                                kDiseasesKnowledge,
                                                                kDiseasesExperiments,
                                                                kGwasCurated,
                                                                kPpi,
                                                                kPathways,
                                                                kGoAnnotations,
                                                                kUberonTerms,
                                                                kBgeePresent,
                                                                kBgeeDiffex,
                                                                kGwasCatalog,
                                                                kAbbreviations};
  return *files;
}

namespace {

using FileOf = std::function<std::string(const char*)>;

// Gene and drug nodes with their cross-reference aliases, which later sources resolve through;
// `drug_join` takes SIDER's labels on to its side-effect file.
absl::Status ImportIdBridges(const FileOf& file, KgBuilder& builder, const ImportOptions& options,
                             DrugJoin& drug_join) {
  IBGR_RETURN_IF_ERROR(ImportHgncGeneFamilies(file(kHgncFamilies), builder, options));
  IBGR_RETURN_IF_ERROR(ImportStringGeneMap(file(kStringMap), builder, options));
  IBGR_RETURN_IF_ERROR(ImportDrugBankDrugs(file(kDrugBankDrugs), builder, options, drug_join));
  IBGR_RETURN_IF_ERROR(
      ImportSiderIndications(file(kSiderIndications), builder, options, drug_join));
  return ImportDrugBankProteins(file(kDrugBankProteins), builder, options);
}

// The issue 14 fact tables: drugs, disease-gene associations, gene networks, expression, and
// the GWAS free-text traits last (their mapper indexes every disease name imported before).
absl::Status ImportIssue14Facts(const FileOf& file, KgBuilder& builder,
                                const ImportOptions& options, const DrugJoin& drug_join,
                                GwasTraitCounts* gwas_counts) {
  IBGR_RETURN_IF_ERROR(ImportDrugCentralTargets(file(kDrugCentralTargets), builder, options));
  IBGR_RETURN_IF_ERROR(ImportDrugCentralClasses(file(kDrugCentralClasses), builder, options));
  IBGR_RETURN_IF_ERROR(ImportDrugBankCategories(builder, drug_join));
  IBGR_RETURN_IF_ERROR(
      ImportDrugCentralIndications(file(kDrugCentralIndications), builder, options));
  IBGR_RETURN_IF_ERROR(ImportBindingDb(file(kBindingDb), builder, options));
  IBGR_RETURN_IF_ERROR(
      ImportSiderSideEffects(file(kSiderSideEffects), builder, options, drug_join));
  IBGR_RETURN_IF_ERROR(
      ImportDiseasesChannel(file(kDiseasesKnowledge), "knowledge", builder, options));
  IBGR_RETURN_IF_ERROR(
      ImportDiseasesChannel(file(kDiseasesExperiments), "experiments", builder, options));
  IBGR_RETURN_IF_ERROR(ImportGwasGeneAssociations(file(kGwasCurated), builder, options));
  IBGR_RETURN_IF_ERROR(ImportHumanPpi(file(kPpi), builder, options));
  IBGR_RETURN_IF_ERROR(ImportPathways(file(kPathways), builder, options));
  IBGR_RETURN_IF_ERROR(ImportGoAnnotations(file(kGoAnnotations), builder, options));
  AnatomyNames anatomy_names;
  IBGR_RETURN_IF_ERROR(ImportUberonTerms(file(kUberonTerms), builder, options, &anatomy_names));
  IBGR_RETURN_IF_ERROR(ImportBgeePresence(file(kBgeePresent), anatomy_names, builder, options));
  IBGR_RETURN_IF_ERROR(ImportBgeeDiffex(file(kBgeeDiffex), anatomy_names, builder, options));
  // After every importer that adds anatomy (Hetionet, the DO axioms, Bgee's UBERON columns).
  IBGR_RETURN_IF_ERROR(ImportDoDefinitionLocations(file(kDoObo), anatomy_names, builder, options));
  std::unique_ptr<TraitMapper> mapper;
  if (options.trait_mapper_factory) {
    IBGR_ASSIGN_OR_RETURN(mapper, options.trait_mapper_factory(builder));
  } else {
    mapper = std::make_unique<NameTraitMapper>(builder, NameTraitMapper::Options());
  }
  return ImportGwasCatalog(file(kGwasCatalog), *mapper, builder, options, gwas_counts);
}

}  // namespace

absl::StatusOr<KgData> BuildEmbeddedKg(const ImportOptions& options, GwasTraitCounts* gwas_counts) {
  if (options.data_dir.empty()) {
    return absl::InvalidArgumentError("ImportOptions.data_dir is empty");
  }
  const FileOf file = [&](const char* relative) {
    return absl::StrCat(options.data_dir, "/", relative);
  };
  KgBuilder builder;
  IBGR_RETURN_IF_ERROR(ImportDiseaseOntologyObo(file(kDoObo), builder, options));
  IBGR_RETURN_IF_ERROR(ImportDoXrefs(file(kDoXrefs), builder, options));
  IBGR_RETURN_IF_ERROR(ImportHpoObo(file(kHpObo), builder, options));
  IBGR_RETURN_IF_ERROR(ImportHpoLaySynonyms(file(kHpoLay), builder, options));
  IBGR_RETURN_IF_ERROR(ImportHetionetNodes(file(kHetionetNodes), builder, options));
  IBGR_RETURN_IF_ERROR(
      ImportHetionetEdges(file(kHetionetEdges), file(kHetionetMetaedges), builder, options));
  IBGR_RETURN_IF_ERROR(ImportHetionetDiseaseGene(file(kHetionetDag), builder, options));
  DrugJoin drug_join;
  IBGR_RETURN_IF_ERROR(ImportIdBridges(file, builder, options, drug_join));
  IBGR_RETURN_IF_ERROR(ImportPharmacotherapyDb(file(kPharmacotherapyDb), builder, options));
  IBGR_RETURN_IF_ERROR(ImportHsdnSymptoms(file(kHsdn), builder, options));
  IBGR_RETURN_IF_ERROR(ImportDoDiseaseSymptoms(file(kDoSymptoms), builder, options));
  IBGR_RETURN_IF_ERROR(ImportDoLogicalAxioms(file(kDoAxioms), builder, options));
  // Genes-to-phenotype before the disease annotations: it names HP terms newer than the HPO
  // release, which the annotations then resolve.
  IBGR_RETURN_IF_ERROR(ImportHpoGenesToPhenotype(file(kHpoGenes), builder, options));
  IBGR_RETURN_IF_ERROR(ImportHpoAnnotations(file(kHpoa), builder, options));
  IBGR_RETURN_IF_ERROR(ImportDisGeNet(file(kDisGeNet), builder, options));
  IBGR_RETURN_IF_ERROR(ImportIssue14Facts(file, builder, options, drug_join, gwas_counts));
  IBGR_RETURN_IF_ERROR(ImportAbbreviations(file(kAbbreviations), builder, options));
  return builder.Finish(options.license_filter);
}

std::string FormatKgSummary(const KgData& kg) {
  const KgCounts counts = CountKg(kg);
  std::string out = absl::StrFormat("%d entities, %d relations, %d triples\n", counts.entities,
                                    counts.relations, counts.triples);
  absl::StrAppend(&out, "entities by type:\n");
  for (const auto& [type, n] : ByCountDescending(counts.entities_by_type)) {
    absl::StrAppendFormat(&out, "  %-28s %9d\n", type.empty() ? "(untyped)" : type, n);
  }
  absl::StrAppend(&out, "triples by relation:\n");
  for (const auto& [relation, n] : ByCountDescending(counts.triples_by_relation)) {
    absl::StrAppendFormat(&out, "  %-58s %9d\n", relation, n);
  }
  absl::StrAppend(&out, "sources:\n");
  absl::StrAppendFormat(&out, "  %-24s %10s %8s %9s %9s %9s  %s\n", "source", "rows", "skipped",
                        "unmapped", "triples", "merged", "file");
  for (const SourceReport& r : kg.reports) {
    absl::StrAppendFormat(&out, "  %-24s %10d %8d %9d %9d %9d  %s\n", r.source, r.rows_read,
                          r.rows_skipped, r.unmapped_ids, r.triples_added, r.triples_merged,
                          r.path);
    for (const std::string& error : r.errors) absl::StrAppend(&out, "      ", error, "\n");
  }
  return out;
}

}  // namespace ibgraphrag::kgstore::import_
