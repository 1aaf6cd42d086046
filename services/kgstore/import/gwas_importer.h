// GWAS Catalog importers (issue 14): the curated DO-mapped gene associations, and the full 2015
// download whose DISEASE/TRAIT column is free text. Free-text traits are mapped to Disease
// Ontology diseases through a TraitMapper: the import library's default maps by exact name or
// synonym and then by word overlap above a threshold; `ibgr kg build` may inject another (an
// encoder-backed one) without this library depending on the alignment service.
#ifndef IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_GWAS_IMPORTER_H_
#define IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_GWAS_IMPORTER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "services/kgstore/import/import_common.h"
#include "services/kgstore/kg_builder.h"

namespace ibgraphrag::kgstore::import_ {

// A trait text mapped to a disease entity.
struct TraitMatch {
  EntityId entity = kInvalidEntity;
  // 0..1; kept on the triple as its score.
  float confidence = 0;
  // How it matched: "exact" (the disease's preferred name), "synonym", "word overlap", or what
  // an injected mapper calls its method ("encoder").
  std::string method;
};

// Maps free-text trait names ("Type 2 diabetes", "Alzheimer's disease (late onset)") to diseases.
class TraitMapper {
 public:
  virtual ~TraitMapper() = default;
  // The best disease for `trait`, or nullopt when none passes the mapper's threshold.
  virtual std::optional<TraitMatch> Map(absl::string_view trait) const = 0;
  // Map() of each trait. Mappers that search vectors override it to search all at once; their
  // encoder or index errors come back here (the GWAS import fails with them) instead of reading
  // as "no match".
  virtual absl::StatusOr<std::vector<std::optional<TraitMatch>>> MapBatch(
      absl::Span<const std::string> traits) const;
};

// The default mapper over the Disease Ontology diseases of a builder (DOID entities: their names
// and synonyms, including those other sources added): exact name (confidence 1.0), synonym
// (0.95), the same after dropping
// parenthesised qualifiers ("(late onset)": 0.9), else the best Dice word overlap of content words
// (stop words dropped) scaled by 0.9 when it reaches `min_word_overlap` and the disease name adds
// no word beyond the trait's except generic ones ("disease", "disorder", "syndrome", "mellitus",
// ...), so a trait never maps to a more specific disease than it names.
class NameTraitMapper final : public TraitMapper {
 public:
  struct Options {
    // Least Dice coefficient (2|A∩B| / (|A|+|B|)) between the trait's and a name's content words
    // for a word-overlap match. 0.85 accepts "type 2 diabetes" -> "type 2 diabetes mellitus"
    // (0.86) and rejects "blood pressure" -> "blood pressure disease" (0.8).
    float min_word_overlap = 0.85f;
  };
  // Indexes the disease entities present in `builder` now.
  NameTraitMapper(const KgBuilder& builder, Options options);
  std::optional<TraitMatch> Map(absl::string_view trait) const override;

 private:
  std::optional<TraitMatch> MapByName(absl::string_view text, float scale) const;
  std::optional<TraitMatch> MapByWordOverlap(absl::string_view text) const;

  struct IndexedName {
    EntityId entity;
    bool is_name;                    // preferred name (else a synonym)
    std::vector<std::string> words;  // content words, sorted
  };
  const KgBuilder& builder_;
  Options options_;
  NameIndex names_;
  std::vector<IndexedName> indexed_;                                 // disease names, synonyms
  absl::flat_hash_map<std::string, std::vector<uint32_t>> by_word_;  // word -> indexed_ entries
};

// How the distinct trait texts of a GWAS file were mapped (a row is mapped by its DISEASE/TRAIT
// text, else by its MAPPED_TRAIT EFO label).
struct GwasTraitCounts {
  absl::flat_hash_map<std::string, int64_t> traits_by_method;  // method -> distinct traits
  int64_t traits_unmapped = 0;
  int64_t rows_without_gene = 0;  // intergenic SNPs (no SNP_GENE_IDS)
};

// "GWAS Catalog traits: 57 exact, 12 synonym, ... , 1100 unmapped; 38125 rows without a gene",
// methods in name order, for `ibgr kg build`.
std::string FormatGwasTraitCounts(const GwasTraitCounts& counts);

// gwas-catalog-gene-associations.tsv (doid_code, doid_name, locus, high_confidence, primary,
// status, gene, symbol): "disease associated with gene", score 1.0 for high-confidence loci and
// 0.5 for low, note "GWAS locus <status>". Genes are created from the symbol; unknown DOIDs
// count as unmapped. Licence CC BY 4.0.
absl::Status ImportGwasGeneAssociations(const std::string& path, KgBuilder& builder,
                                        const ImportOptions& options);

// gwas_catalog_v1.0.1 full download (36 columns; DISEASE/TRAIT, SNP_GENE_IDS ';'-separated
// Entrez ids, P-VALUE, MAPPED_TRAIT): "disease associated with gene" for each gene of the SNP,
// score = the trait mapping's confidence, note "GWAS trait '<text>' -> <DOID> (<method>, <conf>);
// p=<p>". Rows whose trait maps to no disease, or without a gene, or whose genes are not in the
// KG count as unmapped. `counts` (optional) receives the per-method trait counts. The file is read
// twice: first for its distinct trait texts, mapped in one MapBatch call, then for the rows.
absl::Status ImportGwasCatalog(const std::string& path, const TraitMapper& mapper,
                               KgBuilder& builder, const ImportOptions& options,
                               GwasTraitCounts* counts = nullptr);

}  // namespace ibgraphrag::kgstore::import_

#endif  // IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_GWAS_IMPORTER_H_
