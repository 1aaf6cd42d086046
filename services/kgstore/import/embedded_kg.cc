#include "services/kgstore/import/embedded_kg.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "services/kgstore/import/annotation_importers.h"
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

template <typename Map>
std::vector<std::pair<std::string, int64_t>> ByCountDescending(const Map& counts) {
  std::vector<std::pair<std::string, int64_t>> sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return sorted;
}

}  // namespace

const std::vector<std::string>& EmbeddedKgSourceFiles() {
  static const auto* const files =
      new std::vector<std::string>{kDoObo,         kDoXrefs,       kHpObo,
                                   kHpoLay,        kHetionetNodes, kHetionetMetaedges,
                                   kHetionetEdges, kHetionetDag,   kPharmacotherapyDb,
                                   kHsdn,          kDoSymptoms,    kDoAxioms,
                                   kHpoGenes,      kHpoa,          kDisGeNet,
                                   kAbbreviations};
  return *files;
}

absl::StatusOr<KgData> BuildEmbeddedKg(const ImportOptions& options) {
  if (options.data_dir.empty()) {
    return absl::InvalidArgumentError("ImportOptions.data_dir is empty");
  }
  auto file = [&](const char* relative) { return absl::StrCat(options.data_dir, "/", relative); };
  KgBuilder builder;
  IBGR_RETURN_IF_ERROR(ImportDiseaseOntologyObo(file(kDoObo), builder, options));
  IBGR_RETURN_IF_ERROR(ImportDoXrefs(file(kDoXrefs), builder, options));
  IBGR_RETURN_IF_ERROR(ImportHpoObo(file(kHpObo), builder, options));
  IBGR_RETURN_IF_ERROR(ImportHpoLaySynonyms(file(kHpoLay), builder, options));
  IBGR_RETURN_IF_ERROR(ImportHetionetNodes(file(kHetionetNodes), builder, options));
  IBGR_RETURN_IF_ERROR(
      ImportHetionetEdges(file(kHetionetEdges), file(kHetionetMetaedges), builder, options));
  IBGR_RETURN_IF_ERROR(ImportHetionetDiseaseGene(file(kHetionetDag), builder, options));
  IBGR_RETURN_IF_ERROR(ImportPharmacotherapyDb(file(kPharmacotherapyDb), builder, options));
  IBGR_RETURN_IF_ERROR(ImportHsdnSymptoms(file(kHsdn), builder, options));
  IBGR_RETURN_IF_ERROR(ImportDoDiseaseSymptoms(file(kDoSymptoms), builder, options));
  IBGR_RETURN_IF_ERROR(ImportDoLogicalAxioms(file(kDoAxioms), builder, options));
  // Genes-to-phenotype before the disease annotations: it names HP terms newer than the HPO
  // release, which the annotations then resolve.
  IBGR_RETURN_IF_ERROR(ImportHpoGenesToPhenotype(file(kHpoGenes), builder, options));
  IBGR_RETURN_IF_ERROR(ImportHpoAnnotations(file(kHpoa), builder, options));
  IBGR_RETURN_IF_ERROR(ImportDisGeNet(file(kDisGeNet), builder, options));
  IBGR_RETURN_IF_ERROR(ImportAbbreviations(file(kAbbreviations), builder, options));
  return builder.Finish();
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
  absl::StrAppendFormat(&out, "  %-24s %10s %8s %9s %9s  %s\n", "source", "rows", "skipped",
                        "unmapped", "triples", "file");
  for (const SourceReport& r : kg.reports) {
    absl::StrAppendFormat(&out, "  %-24s %10d %8d %9d %9d  %s\n", r.source, r.rows_read,
                          r.rows_skipped, r.unmapped_ids, r.triples_added, r.path);
    for (const std::string& error : r.errors) absl::StrAppend(&out, "      ", error, "\n");
  }
  return out;
}

}  // namespace ibgraphrag::kgstore::import_
