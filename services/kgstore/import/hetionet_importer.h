// Hetionet v1.0 importers: nodes TSV, SIF edges with the metaedge table, and the complete
// disease-gene association table. Hetionet ids become the suite's canonical external ids so that
// its diseases land on the Disease Ontology entities and its genes on Entrez ids.
#ifndef IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_HETIONET_IMPORTER_H_
#define IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_HETIONET_IMPORTER_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "services/kgstore/import/import_common.h"
#include "services/kgstore/kg_builder.h"

namespace ibgraphrag::kgstore::import_ {

// "Disease::DOID:9352" -> "DOID:9352", "Gene::1017" -> "Entrez:1017", "Compound::DB00945" ->
// "DrugBank:DB00945", "Symptom::D000006" -> "MESH:D000006", "Side Effect::C0000727" ->
// "UMLS:C0000727", "Pharmacologic Class::N0000000069" -> "NDFRT:N0000000069",
// "Pathway::PC7_7459" -> "PathwayCommons:PC7_7459", "Pathway::WP100_r1" -> "WikiPathways:WP100_r1";
// GO and UBERON ids are kept. "" when the id has no "Kind::" part.
std::string HetionetCanonicalId(absl::string_view hetionet_id);
// Hetionet kind -> lower-case snake entity type ("Side Effect" -> "side_effect").
std::string HetionetKindToType(absl::string_view kind);
// Readable relation name for a metaedge abbreviation ("CtD" -> "drug treats disease"); "" when
// the abbreviation is not one of Hetionet v1.0's 24.
absl::string_view HetionetRelationName(absl::string_view abbreviation);

// hetionet-v1.0-nodes.tsv (id, name, kind): one entity per node, merged with already imported
// concepts through their ids and aliases (DOIDs, MeSH symptoms, UMLS side effects).
absl::Status ImportHetionetNodes(const std::string& path, KgBuilder& builder,
                                 const ImportOptions& options);
// Edges in SIF form (source, metaedge, target; plain or gzip) typed by the metaedges table
// (metaedge, abbreviation, ...). Endpoints must be imported nodes (others count as unmapped) and
// of the kinds the metaedge names (otherwise the row is malformed). Adds one report per file.
absl::Status ImportHetionetEdges(const std::string& edges_path, const std::string& metaedges_path,
                                 KgBuilder& builder, const ImportOptions& options);
// DaG-association.tsv (doid_id, doid_name, entrez_gene_id, gene_symbol, sources, license): the
// complete disease-gene association set, as "disease associated with gene". Unknown genes are
// created from their symbol; unknown DOIDs count as unmapped.
absl::Status ImportHetionetDiseaseGene(const std::string& path, KgBuilder& builder,
                                       const ImportOptions& options);

}  // namespace ibgraphrag::kgstore::import_

#endif  // IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_HETIONET_IMPORTER_H_
