// The alignment lexicon: one entry per KG entity with every name the tagger matches and the text
// MSCA enriches candidates with. Built from an in-memory KG (KgData), a KG snapshot on disk, or
// the shared data directory, optionally extended with UMLS (MRCONSO/MRDEF/MRSTY .RRF files).
#ifndef IBGRAPHRAG_SERVICES_ALIGNMENT_LEXICON_H_
#define IBGRAPHRAG_SERVICES_ALIGNMENT_LEXICON_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/kgstore/kg_types.h"

namespace ibgraphrag::alignment {

struct LexiconEntry {
  // Internal id of the entity in the source KG snapshot (EntityRef.id); the entry's position
  // when the lexicon did not come from a KG.
  uint32_t kg_id = 0;
  // Stable external id ("DOID:9352").
  std::string external_id;
  // Lower-case entity type ("disease").
  std::string type;
  // Preferred name.
  std::string name;
  // Other names (exact, related, lay synonyms, UMLS strings); abbreviations are kept apart.
  std::vector<std::string> synonyms;
  // Names that read as abbreviations or symbols (see IsAbbreviationLike), matched
  // case-sensitively.
  std::vector<std::string> abbreviations;
  std::string definition;
  // Other external ids ("UMLS:C0011860", "MESH:D003924").
  std::vector<std::string> xrefs;
  // UMLS semantic types ("Disease or Syndrome"), from MRSTY.
  std::vector<std::string> semantic_types;

  // name + synonyms + abbreviations + definition: the text MSCA encodes as v_e.
  std::string EnrichedText() const;
  // All names: name, synonyms, abbreviations, in that order (the index rows of the entry).
  std::vector<std::string> AllNames() const;
  // Whether `name` is already one of them, compared case-insensitively.
  bool HasName(absl::string_view name) const;
};

// An entry whose names are ontology qualifiers or top-level classes ("Severe", "disease"), found
// from the KG's is_a links when the lexicon is built (generic_terms.h, rule 1). Only bundle
// builds use it; lexicon.jsonl does not store it (the bundle stores the resulting list).
struct GenericEntry {
  uint32_t entry = 0;
  // Only the entry's one-word names are generic ("Sporadic", not "autosomal recessive
  // inheritance").
  bool single_word_names_only = false;
  // A top class of an ontology ("disease of cellular proliferation"): its names yield to the
  // same name on a specific DO or HPO term (its synonym "neoplasm" is HPO's Neoplasm).
  bool top_class = false;
  std::string reason;
};

struct Lexicon {
  std::vector<LexiconEntry> entries;
  // See GenericEntry; empty for lexicons read from a file or built without a KG.
  std::vector<GenericEntry> generic_entries;
  // Where it came from, for manifests: "kg-snapshot:<dir> version 3", "data-dir:<dir>".
  std::string source;
  // KG version the kg_ids refer to ("" when not a snapshot).
  std::string source_kg_version;
  // SHA-256 (hex) identifying the source data: over the source files' hashes for KgData, over
  // the snapshot manifest for snapshots.
  std::string source_hash;
};

// Entries from an in-memory KG (all entities; synonyms that read as abbreviations move to
// `abbreviations`). `source_hash` is computed from kg.reports.
Lexicon LexiconFromKg(const kgstore::KgData& kg, const std::string& source);

// Entries from a KG snapshot directory (`<base>/kg/<version>`), opened read-only.
absl::StatusOr<Lexicon> LexiconFromSnapshot(const std::string& snapshot_dir);

// Builds the embedded KG from the shared data directory (~3 s) and takes its entities.
absl::StatusOr<Lexicon> LexiconFromDataDir(const std::string& data_dir);

// ---- UMLS ----
struct UmlsImportOptions {
  // Directory with MRCONSO.RRF (required), MRDEF.RRF and MRSTY.RRF (optional, skipped when
  // absent), as in a MetamorphoSys subset's META/ folder.
  std::string rrf_dir;
  // MRCONSO LAT values kept; strings in other languages would only add noise to English text.
  std::vector<std::string> languages = {"ENG"};
  // Skip rows whose SUPPRESS column is not "N" (obsolete or suppressible strings).
  bool skip_suppressed = true;
  // Upper bound on synonyms per entry after the import, so a concept with hundreds of UMLS
  // strings does not drown its enriched text.
  int max_synonyms_per_entry = 50;
  // Replace an empty definition with the first MRDEF definition; with false, append UMLS
  // definitions after existing ones.
  bool definitions_only_when_missing = true;
};

struct UmlsImportReport {
  int64_t mrconso_rows = 0;
  int64_t mrdef_rows = 0;
  int64_t mrsty_rows = 0;
  // Distinct CUIs that matched at least one entry through its "UMLS:<CUI>" xref.
  int64_t cuis_joined = 0;
  int64_t synonyms_added = 0;
  int64_t abbreviations_added = 0;
  int64_t definitions_added = 0;
  int64_t semantic_types_added = 0;
  // Malformed rows skipped.
  int64_t rows_skipped = 0;
};

// Adds UMLS strings, definitions and semantic types to entries that carry a "UMLS:<CUI>" xref
// (or whose external id is one). NOT_FOUND when MRCONSO.RRF is missing.
absl::StatusOr<UmlsImportReport> ImportUmlsRrf(const UmlsImportOptions& options, Lexicon* lexicon);

// ---- Storage (one JSON object per line, then a trailing {"end": <count>} line). ----
absl::Status WriteLexicon(const Lexicon& lexicon, const std::string& path);
// DATA_LOSS naming the line for malformed or truncated files.
absl::StatusOr<Lexicon> ReadLexicon(const std::string& path);

}  // namespace ibgraphrag::alignment

#endif  // IBGRAPHRAG_SERVICES_ALIGNMENT_LEXICON_H_
