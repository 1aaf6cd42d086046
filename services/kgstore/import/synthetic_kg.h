// A synthetic knowledge graph with PrimeKG's size, node-type counts and relation mix, for
// benchmarks where the real PrimeKG (8.1M edges) cannot be shipped. Endpoints follow a per-type
// power-law degree distribution, so hubs and long tails look like a real biomedical KG.
#ifndef IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_SYNTHETIC_KG_H_
#define IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_SYNTHETIC_KG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "services/kgstore/kg_types.h"

namespace ibgraphrag::kgstore::import_ {

struct SyntheticKgOptions {
  // Total entities. PrimeKG's node-type proportions are kept; every type gets at least 2 nodes.
  int64_t num_entities = 129'375;
  // Total triples (unique on head, relation, tail; no self-loops). PrimeKG's relation mix is kept;
  // a relation that cannot hold its share (more triples than head x tail pairs, which happens
  // when num_triples is not scaled down with num_entities squared) is capped and the rest spread
  // over the others, so fewer triples come out only when every relation is full.
  int64_t num_triples = 8'100'498;
  // Same options and seed give the same graph.
  uint64_t seed = 20'240'131;
  // Exponent gamma of each type's degree distribution, P(degree = k) ~ k^-gamma; real biomedical
  // KGs sit around 2.1-2.5. Must be > 1.
  double degree_exponent = 2.2;
};

// PrimeKG's node types with their real counts (suite type names: gene, compound, phenotype, ...).
struct SyntheticNodeType {
  absl::string_view primekg_type;  // "gene/protein"
  absl::string_view type;          // "gene"
  int64_t count;                   // 27,671
};
const std::vector<SyntheticNodeType>& PrimeKgNodeTypes();

// PrimeKG's relations with their real edge counts (kg.csv rows; 8,100,498 in all).
struct SyntheticRelationMix {
  absl::string_view relation;          // PrimeKG relation column ("drug_drug")
  absl::string_view display_relation;  // PrimeKG display_relation ("synergistic interaction")
  int64_t count;                       // 2,672,628
};
const std::vector<SyntheticRelationMix>& PrimeKgRelationMix();

// Generates the graph described by `options`. KgData invariants hold: dense entity and relation
// ids, triples sorted by (head, relation, tail) and unique; one source "synthetic-primekg" and
// one SourceReport. Readable relation names are the PrimeKG importer's ("drug interacts with
// drug"); entities are "SYN_<TYPE>:<n>" named "synthetic <type> <n>".
KgData GenerateSyntheticPrimeKg(const SyntheticKgOptions& options);

struct TsvWriteOptions {
  // First line names the columns (for COPY ... WITH (FORMAT csv, DELIMITER E'\t', HEADER) or
  // humans); PostgreSQL's text format wants none.
  bool header = false;
  // Write dense numeric ids instead of external ids and relation names (smaller, faster COPY).
  bool internal_ids = false;
};

// Writes one `head<TAB>relation<TAB>tail` line per triple (external ids and relation names, or
// numeric ids), escaped for PostgreSQL's COPY text format (backslash, tab, newline).
absl::Status WriteTriplesTsv(const KgData& kg, const std::string& path,
                             const TsvWriteOptions& options = {});
// Writes one `id<TAB>external_id<TAB>type<TAB>name` line per entity, same escaping.
absl::Status WriteEntitiesTsv(const KgData& kg, const std::string& path,
                              const TsvWriteOptions& options = {});

}  // namespace ibgraphrag::kgstore::import_

#endif  // IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_SYNTHETIC_KG_H_
