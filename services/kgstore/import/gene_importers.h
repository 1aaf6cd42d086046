// Importers for the gene-centred sources of issue 14: HGNC gene families, the Entrez -> STRING map,
// the JensenLab DISEASES channels, the human PPI network, pathway gene sets and GO experimental
// annotations. Genes are "Entrez:<id>" entities (Hetionet's ids); the id bridges (HGNC symbols,
// STRING proteins) become synonyms and aliases of those genes, so later sources keyed by them
// resolve through KgBuilder::Resolve. Every triple carries its source, licence, score and note.
#ifndef IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_GENE_IMPORTERS_H_
#define IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_GENE_IMPORTERS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "services/kgstore/import/import_common.h"
#include "services/kgstore/kg_builder.h"

namespace ibgraphrag::kgstore::import_ {

// hgnc-gene-families.tsv (family_id, family_name, root, leaf, entrez_gene_id, gene_symbol):
// "gene belongs to gene family" to a "HGNC_FAMILY:<id>" gene_family entity (membership is
// propagated up the family tree by the source). Unknown genes are created from the symbol, and
// the HGNC symbol becomes a synonym of known ones. Licence CC0.
absl::Status ImportHgncGeneFamilies(const std::string& path, KgBuilder& builder,
                                    const ImportOptions& options);

// diseases-entrez_gene_id.vs.string (#Entrez_Gene_ID, STRING_Locus_ID "9606.ENSP..."): adds the
// alias "STRING:9606.ENSP..." to the gene; no triples. Genes not in the KG count as unmapped.
absl::Status ImportStringGeneMap(const std::string& path, KgBuilder& builder,
                                 const ImportOptions& options);

// JensenLab DISEASES *_full.tsv (no header: ENSP id, symbol, disease id, disease name, source,
// evidence, confidence 0-5) as "disease associated with gene", score = confidence / 5, note =
// "<channel>: <source> <evidence>". `channel` is "knowledge" or "experiments" (source name
// "diseases-<channel>", licence CC BY 4.0). Genes resolve through the STRING aliases (import the
// STRING map first); rows keyed by ICD10 rather than a DOID, or whose gene or DOID is unknown,
// count as unmapped. Rows below kMinDiseasesConfidence and rows naming a DO upper-level class
// ("disease", "disease of anatomical entity", ...: the source propagates every association up
// the DO, so these would link each disease gene to the roots) add nothing.
inline constexpr int kMinDiseasesConfidence = 1;
absl::Status ImportDiseasesChannel(const std::string& path, absl::string_view channel,
                                   KgBuilder& builder, const ImportOptions& options);

// ppi-hetio-ind.tsv (gene_0, gene_1, sources, unbiased): "gene interacts with gene", score
// 1 - 2^-sources (1 resource 0.5, 2 -> 0.75, 3 -> 0.875 ...), note "<n> PPI resources" and
// "systematic screen" when unbiased. Genes must exist (no symbols in the file).
absl::Status ImportHumanPpi(const std::string& path, KgBuilder& builder,
                            const ImportOptions& options);

// pathways.tsv (identifier, name, url, n_genes, n_coding_genes, source, license, genes, ...):
// one pathway entity per row ("PathwayCommons:PC7_..." / "WikiPathways:WP..." as Hetionet) and
// "gene participates in pathway" per '|'-separated Entrez id. The source is "pathways-<source>"
// with the row's licence (pid CC0, reactome CC BY 4.0, wikipathways CC BY 3.0). Unknown genes
// count as unmapped (one per gene).
absl::Status ImportPathways(const std::string& path, KgBuilder& builder,
                            const ImportOptions& options);

// go-annotations-9606-direct-expev.tsv (go_id, go_name, go_domain, tax_id, annotation_type, size,
// gene_ids, gene_symbols): "gene participates in biological process | molecular function |
// cellular component" by go_domain, to the GO term entity (created when unknown). Genes are
// created from the symbols given beside the ids. Licence CC BY 4.0.
absl::Status ImportGoAnnotations(const std::string& path, KgBuilder& builder,
                                 const ImportOptions& options);

}  // namespace ibgraphrag::kgstore::import_

#endif  // IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_GENE_IMPORTERS_H_
