// Everyday clinical names the KG's sources do not carry, added to the alignment lexicon.
//
// The embedded KG names a drug by its DrugBank name, usually the INN ("Acetylsalicylic acid",
// "Salbutamol", "Rifampicin"), and imports no synonym list for drugs, so the names clinicians and
// patients use ("aspirin", "albuterol", "rifampin", "Tylenol") align to nothing and a question
// about them gets no evidence. Drug classes have the same gap: the KG's classes are NDF-RT and
// MeSH names ("HMG-CoA Reductase Inhibitor"), not "statins" or "beta blockers". Genes too: the KG
// names them by HGNC symbol only ("HMGCR"), so "Which drugs inhibit HMG-CoA reductase?" found no
// entity; and a few diseases go by everyday names neither DO nor HPO lists ("sickle cell
// disease", "high blood pressure", "COPD", "HIV").
//
// The table (common_names.cc) is written from pharmacology references, not read out of the KG:
// the US / British / international name pairs (USAN vs INN vs BAN), the best-known brand names,
// the everyday names of the common drug classes, of common diseases, and the protein names of
// genes that drugs act on or whose mutation causes a disease. Each row names the KG entity by
// external id AND preferred name, so a row whose id no longer means that entity in a newer KG is
// reported as unmatched instead of adding a wrong synonym.
#ifndef IBGRAPHRAG_SERVICES_ALIGNMENT_COMMON_NAMES_H_
#define IBGRAPHRAG_SERVICES_ALIGNMENT_COMMON_NAMES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "services/alignment/lexicon.h"

namespace ibgraphrag::alignment {

struct CommonNameRow {
  // The KG entity: external id ("DrugBank:DB00945") and its preferred name, compared
  // case-insensitively ("Acetylsalicylic acid").
  const char* external_id;
  const char* kg_name;
  // Names to add ("aspirin"). Names that read as abbreviations (IsAbbreviationLike: "SSRI",
  // "NSAID"; not "NSAIDs", which has a lower-case letter) become abbreviations, matched
  // case-sensitively like every other abbreviation.
  std::vector<const char*> names;
};

// The built-in table (drugs, drug classes, diseases, genes).
const std::vector<CommonNameRow>& ClinicalCommonNames();

struct CommonNamesReport {
  int64_t rows = 0;
  int64_t rows_matched = 0;
  // Names added as synonyms / abbreviations (names the entry already had are not counted).
  int64_t synonyms_added = 0;
  int64_t abbreviations_added = 0;
  // "<external id> (<kg name>)" of the rows no entry matched by id and name.
  std::vector<std::string> unmatched;
};

// A fingerprint of the rows ("table-" and 16 hex digits of a 64-bit FNV-1a over ids, KG names
// and names): a bundle built from another version of the table is stale (`ibgr artifacts build`
// rebuilds it, BundleProblem in tools/ibgr/artifacts_commands.cc).
std::string CommonNamesTableTag(const std::vector<CommonNameRow>& rows);

// Adds the rows' names to the entries they match (by external id and preferred name, both).
// Appends " + common-names:<rows matched> <CommonNamesTableTag(rows)>" to lexicon->source so
// bundle manifests say so.
CommonNamesReport AddCommonNames(const std::vector<CommonNameRow>& rows, Lexicon* lexicon);

}  // namespace ibgraphrag::alignment

#endif  // IBGRAPHRAG_SERVICES_ALIGNMENT_COMMON_NAMES_H_
