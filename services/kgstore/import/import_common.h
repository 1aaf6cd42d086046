// Pieces every importer shares: options, per-file reports with `file:line: reason` errors, a TSV
// row driver, id normalisation, case-insensitive names and a name index for label-based joins.
#ifndef IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_IMPORT_COMMON_H_
#define IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_IMPORT_COMMON_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "services/kgstore/import/line_reader.h"
#include "services/kgstore/kg_builder.h"
#include "services/kgstore/kg_types.h"

namespace ibgraphrag::kgstore::import_ {

// KgBuilder's signatures take std::string_view while Debian's Abseil has its own
// absl::string_view (no conversion between the two); BuilderArg converts to either, so the
// importers compile whichever of the two the builder settles on.
class BuilderArg {
 public:
  explicit BuilderArg(absl::string_view s) : data_(s.data()), size_(s.size()) {}
  operator std::string_view() const { return {data_, size_}; }   // NOLINT(runtime/explicit)
  operator absl::string_view() const { return {data_, size_}; }  // NOLINT(runtime/explicit)

 private:
  const char* data_;
  size_t size_;
};

class TraitMapper;  // gwas_importer.h
// Builds a TraitMapper over the entities a builder holds at the time it is called.
using TraitMapperFactory =
    std::function<absl::StatusOr<std::unique_ptr<TraitMapper>>(const KgBuilder&)>;

struct ImportOptions {
  // Directory with the kg/ and vocab/ folders of the shared data layout. Only BuildEmbeddedKg
  // reads it; the single-source importers take explicit paths.
  std::string data_dir;
  // true: the first malformed row aborts the import with INVALID_ARGUMENT "file:line: reason".
  // false: malformed rows are skipped and counted in SourceReport::rows_skipped.
  bool strict = false;
  // How many "file:line: reason" messages each SourceReport keeps; counts stay exact beyond it.
  int max_errors_reported = 20;
  // HPO annotations name OMIM/ORPHA/DECIPHER diseases that the Disease Ontology does not
  // cross-reference. true: each becomes its own disease entity ("OMIM:...", "ORDO:..." for ORPHA,
  // "DECIPHER:...", named from the file) so no phenotype annotation is lost; false: such rows are
  // dropped. Either way they are
  // counted in SourceReport::unmapped_ids, which measures how much of a source joined the DO.
  bool create_unresolved_hpo_diseases = true;
  // Builds the mapper of GWAS free-text traits to diseases over the builder's entities at the
  // time the GWAS Catalog is imported. Empty: NameTraitMapper (names, synonyms, word overlap).
  // `ibgr kg build` may inject an encoder-backed one; this library stays free of alignment code.
  TraitMapperFactory trait_mapper_factory;
  // Licence filter BuildEmbeddedKg applies at KgBuilder::Finish (empty = keep everything), so
  // excluded sources leave no scores, notes, synonyms, xrefs or definitions behind.
  LicenseFilter license_filter;
};

// Per-file bookkeeping handed to row callbacks.
class RowContext {
 public:
  RowContext(absl::string_view source, const std::string& path, const ImportOptions& options);

  // Counts a malformed row and keeps "file:line: reason". Returns INVALID_ARGUMENT with that text
  // when options.strict, OK otherwise, so callbacks can `return ctx.Malformed(...)`.
  absl::Status Malformed(absl::string_view reason) { return MalformedAt(line_number(), reason); }
  // The same for a row that started on an earlier line (an OBO stanza).
  absl::Status MalformedAt(int64_t line, absl::string_view reason);
  // Counts a row whose ids did not resolve to a KG entity.
  void Unmapped() { ++report_.unmapped_ids; }
  void set_line(const LineReader* reader) { reader_ = reader; }
  int64_t line_number() const { return reader_ == nullptr ? 0 : reader_->line_number(); }
  SourceReport& report() { return report_; }
  const ImportOptions& options() const { return options_; }

 private:
  const ImportOptions& options_;
  const LineReader* reader_ = nullptr;
  SourceReport report_;
};

// How a delimited file looks.
struct TabularSpec {
  // Short source name for reports, entity sources and triple provenance ("hsdn").
  std::string source;
  // Licence of the source as published; the synonyms, xrefs and definitions the rows add are
  // filtered by it (KgBuilder::SetAttributeSource). Empty = unknown.
  std::string license;
  // Rows with fewer fields are malformed.
  size_t min_fields = 1;
  // The first non-comment line is a header (checked against expected_header, then skipped).
  bool has_header = true;
  // Leading header column names, compared case-insensitively after stripping quotes and a leading
  // '#' or '?'; a mismatch means the wrong file was given (INVALID_ARGUMENT naming file:line).
  std::vector<std::string> expected_header;
  // Lines starting with this character are comments (0: no comments).
  char comment = '#';
  // true: RFC 4180 comma-separated values; false: tab-separated.
  bool csv = false;
  // Strip one pair of surrounding double quotes from TSV fields ("DOID:1" -> DOID:1).
  bool unquote_tsv = false;
};

using RowCallback =
    std::function<absl::Status(const std::vector<absl::string_view>& fields, RowContext& ctx)>;

// Called once after the last row, before the report is counted: for triples that need the whole
// file (a score computed over all rows).
using EndCallback = std::function<absl::Status(RowContext& ctx)>;

// Streams `path` (plain or gzip) through `on_row`, one call per data row, then `on_end` (when
// given), then appends a SourceReport (rows, skipped, unmapped, triples added, SHA-256) to
// `builder`. Rows with too few fields or broken quoting are reported as malformed before reaching
// `on_row`.
absl::Status ImportTabularFile(const std::string& path, const TabularSpec& spec, KgBuilder& builder,
                               const ImportOptions& options, const RowCallback& on_row,
                               const EndCallback& on_end = nullptr);

// Canonical spelling of a cross-reference id, or "" for ids that are not concept identifiers
// (URLs, PMIDs, DOIs). UMLS_CUI:/UMLS: -> "UMLS:", MSH:/MESH: -> "MESH:", MIM:/OMIM: -> "OMIM:",
// ORPHA:/Orphanet:/ORDO: -> "ORDO:" (the Disease Ontology's spelling), SNOMEDCT_US_<date>: ->
// "SNOMEDCT:", ICD-10: -> "ICD10:", NCIT:/NCI: -> "NCIT:"; other prefixes are kept.
std::string NormalizeXref(absl::string_view raw);

// "0001945" style zero padding for ontology ids that lost it ("HP", "1945", 7 -> "HP:0001945").
std::string PadOntologyId(absl::string_view prefix, absl::string_view local, size_t digits);

// True for a non-empty string of ASCII digits (Entrez ids, PubChem CIDs).
bool IsDigits(absl::string_view s);

// The gene entity of an Entrez id ("1017" -> "Entrez:1017"). With a non-empty `symbol` an unknown
// gene is created (named by the symbol, tagged with `source`); without one only existing genes
// are returned. std::nullopt for ids that are not numbers or genes that are neither known nor
// creatable.
std::optional<EntityId> GeneFromEntrez(KgBuilder& builder, absl::string_view entrez,
                                       absl::string_view symbol, absl::string_view source);

// Lower-case ASCII with runs of whitespace collapsed and the ends trimmed: the key for names.
std::string NormalizeName(absl::string_view name);

// Adds `synonym` unless it equals the name or an existing synonym ignoring case and spacing.
void AddSynonymIgnoringCase(KgBuilder& builder, EntityId id, absl::string_view synonym);

// AddEntity + source tag; when the id resolves to an existing entity under another spelling of
// the name, that spelling is kept as a synonym.
EntityId AddEntityFromSource(KgBuilder& builder, absl::string_view external_id,
                             absl::string_view type, absl::string_view name,
                             absl::string_view source);

// Relations the importers use, with their expected types and one-sentence descriptions, so the
// same fact from different sources lands on one relation. Unknown names are added with the given
// types and a generic description.
RelationId AddKnownRelation(KgBuilder& builder, absl::string_view name,
                            absl::string_view head_type = "", absl::string_view tail_type = "");
// The catalogue entry for `name`, if any.
const Relation* FindKnownRelation(absl::string_view name);

// Case- and spacing-insensitive lookup of entities by name or synonym, for sources that refer to
// concepts by label (DO logical axioms, abbreviation lists, SYMP symptom names).
class NameIndex {
 public:
  explicit NameIndex(const KgBuilder& builder);
  // Best entity called `name`: first by position of its type in `types` (entities of other types
  // are ignored unless `types` is empty), then preferred names over synonyms, then lowest id.
  std::optional<EntityId> Find(absl::string_view name,
                               absl::Span<const absl::string_view> types = {}) const;

 private:
  struct Hit {
    EntityId id;
    bool is_name;
  };
  const KgBuilder& builder_;
  absl::flat_hash_map<std::string, std::vector<Hit>> by_name_;
};

}  // namespace ibgraphrag::kgstore::import_

#endif  // IBGRAPHRAG_SERVICES_KGSTORE_IMPORT_IMPORT_COMMON_H_
