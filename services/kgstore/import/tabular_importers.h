// Importers for knowledge graphs that users bring: PrimeKG's kg.csv and generic TSV triples.
// The PrimeKG schema helpers are shared with the synthetic PrimeKG-scale generator so both speak
// the same entity types and relation names.
#ifndef IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_TABULAR_IMPORTERS_H_
#define IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_TABULAR_IMPORTERS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "services/kgstore/import/import_common.h"
#include "services/kgstore/kg_builder.h"

namespace ibgraphrag::kgstore::import_ {

// One PrimeKG relation ("relation" + "display_relation" columns) in its canonical direction.
struct PrimeKgRelation {
  absl::string_view relation;          // PrimeKG relation column ("drug_protein")
  absl::string_view display_relation;  // PrimeKG display_relation column ("target")
  absl::string_view name;              // readable relation name ("drug targets gene")
  absl::string_view head_type;         // suite entity type of the head ("compound")
  absl::string_view tail_type;         // suite entity type of the tail ("gene")
};

// The canonical relation for a kg.csv row; nullptr for a combination PrimeKG does not have.
// display_relation only matters for drug_protein (target, carrier, enzyme, transporter).
const PrimeKgRelation* FindPrimeKgRelation(absl::string_view relation,
                                           absl::string_view display_relation);
// PrimeKG node type -> suite entity type ("gene/protein" -> "gene", "drug" -> "compound",
// "effect/phenotype" -> "phenotype"; others lower-case snake).
std::string PrimeKgEntityType(absl::string_view node_type);
// "<source>:<id>" normalised: NCBI -> "Entrez:", DrugBank -> "DrugBank:", MONDO -> "MONDO:" and
// HPO -> "HP:", GO, UBERON zero-padded to 7 digits, CTD (MeSH exposures) -> "MESH:".
std::string PrimeKgExternalId(absl::string_view id, absl::string_view source);

// PrimeKG kg.csv (header relation,display_relation,x_index,x_id,x_type,x_name,x_source,y_index,
// y_id,y_type,y_name,y_source; quoted CSV; plain or gzip). Each row becomes one triple with a
// readable relation; PrimeKG lists undirected edges in both directions, and the reverse copy of a
// cross-type edge is turned back into the canonical direction, so it merges with its twin.
// Rows whose types do not fit their relation are malformed.
absl::Status ImportPrimeKgCsv(const std::string& path, KgBuilder& builder,
                              const ImportOptions& options);

// Generic triples: `head<TAB>relation<TAB>tail[<TAB>head_type<TAB>tail_type[<TAB>head_name<TAB>
// tail_name]]`, '#' comments, optional header (detected when the first row names its columns
// head/subject, relation/predicate, tail/object; with a header the optional columns are found by
// name: head_type, tail_type, head_name, tail_name). Head and tail are external ids; ids already
// known (also as aliases) are reused, others are created. `source` names the report and the
// triples' provenance; `license` is its licence as published ("" = unknown).
absl::Status ImportTsvTriples(const std::string& path, KgBuilder& builder,
                              const ImportOptions& options, absl::string_view source = "tsv",
                              absl::string_view license = "");

}  // namespace ibgraphrag::kgstore::import_

#endif  // IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_TABULAR_IMPORTERS_H_
