// The embedded default medical KG: every source under <data_dir>/kg and <data_dir>/vocab, joined
// into one node per concept through Disease Ontology and HPO cross-references.
#ifndef IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_EMBEDDED_KG_H_
#define IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_EMBEDDED_KG_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "services/kgstore/import/gwas_importer.h"
#include "services/kgstore/import/import_common.h"
#include "services/kgstore/kg_types.h"

namespace ibgraphrag::kgstore::import_ {

// The files BuildEmbeddedKg reads, relative to the data dir, in import order: DO obo and xrefs
// first (UMLS/MeSH/OMIM/ORDO ids then resolve to DOIDs), HPO next, then Hetionet, the gene and
// drug id bridges (HGNC, STRING, DrugBank, SIDER STITCH ids, UniProt), the annotation tables, the
// issue 14 fact tables with the GWAS free-text traits last among them, and the abbreviation list
// last (it can only reach entities that already exist).
const std::vector<std::string>& EmbeddedKgSourceFiles();

// Builds the embedded KG from options.data_dir (NOT_FOUND naming the file when one is missing).
// Malformed rows follow options.strict; every file gets a SourceReport in KgData::reports.
// `gwas_counts` (optional) receives how the GWAS Catalog's free-text traits were mapped.
absl::StatusOr<KgData> BuildEmbeddedKg(const ImportOptions& options,
                                       GwasTraitCounts* gwas_counts = nullptr);

// Human-readable summary for `ibgr kg build`: totals, entities by type, triples by relation
// (largest first) and one line per source with rows read/skipped/unmapped, triples added, triples
// merged into another source's and the first error messages.
std::string FormatKgSummary(const KgData& kg);

}  // namespace ibgraphrag::kgstore::import_

#endif  // IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_EMBEDDED_KG_H_
