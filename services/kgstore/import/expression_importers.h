// Importers for gene expression by anatomy (issue 14): Uberon term names and the two Bgee
// matrices (presence in adult tissues, differential expression). Columns are UBERON/CL ids; rows
// are Entrez genes. Facts merge with Hetionet's AeG / AuG / AdG edges (same relation names, same
// "UBERON:..." anatomy ids), which Hetionet derived from the same Bgee release.
#ifndef IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_EXPRESSION_IMPORTERS_H_
#define IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_EXPRESSION_IMPORTERS_H_

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "services/kgstore/import/import_common.h"
#include "services/kgstore/kg_builder.h"

namespace ibgraphrag::kgstore::import_ {

// Uberon id -> name.
using AnatomyNames = absl::flat_hash_map<std::string, std::string>;

// uberon-terms.tsv (uberon_id, uberon_name) into `names` (no entities: Uberon's 13k terms would
// be isolated nodes; the Bgee importers create the anatomy entities their columns need).
absl::Status ImportUberonTerms(const std::string& path, KgBuilder& builder,
                               const ImportOptions& options, AnatomyNames* names);

// bgee-present-in-adult.tsv (entrez_gene_id, then one 0/1 column per UBERON/CL id): "anatomy
// expresses gene" for every 1. bgee-diffex.tsv (GeneID, then 1/0/-1 columns): 1 -> "anatomy
// upregulates gene", -1 -> "anatomy downregulates gene". Anatomy entities are the column ids,
// named from `names` (or an existing entity); columns with no known name (the CL cell types: the
// data has no CL names) are left out and listed once in the report's errors. Genes must exist;
// rows of unknown genes count as unmapped. Licence CC0 (dhimmel/bgee; Bgee data is CC0).
absl::Status ImportBgeePresence(const std::string& path, const AnatomyNames& names,
                                KgBuilder& builder, const ImportOptions& options);
absl::Status ImportBgeeDiffex(const std::string& path, const AnatomyNames& names,
                              KgBuilder& builder, const ImportOptions& options);

}  // namespace ibgraphrag::kgstore::import_

#endif  // IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_EXPRESSION_IMPORTERS_H_
