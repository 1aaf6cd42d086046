// Generic terms: lexicon names that are not a mention by themselves ("disease", "syndrome",
// "severe", "acute", "proximal"), because used alone in a question they name no particular
// entity. They still match inside longer names ("chronic kidney disease" is one mention). The
// list is computed once, when a bundle is built, from the lexicon and the KG's ontology
// structure, and stored in the bundle (generic_terms.tsv) so it is stable and can be read:
//
//  1. ontology qualifiers and top-level classes (is_a links of the KG): every name of the HPO
//     "Clinical modifier" (HP:0012823) and "Frequency" (HP:0040279) subtrees; the single-word
//     names of the "Mode of inheritance" subtree (HP:0000005: "Inheritance", "Sporadic"; the
//     patterns themselves, "autosomal recessive inheritance", stay entities, HPO annotates
//     diseases with them); the roots of DO and HPO and their direct children ("disease",
//     "syndrome", "All", "Phenotypic abnormality");
//  2. class words: one-word names whose word occurs in at least
//     GenericTermOptions::class_word_min_name_share of all lexicon names (and in at least
//     class_word_min_names of them) ("syndrome" 4.8 %,
//     "disease" 2.0 %; the next one-word names, "carcinoma" 1.1 %, "tumor" 1.0 %, name a
//     particular kind of entity and stay);
//  3. a short curated list of clinical class words that lexicons such as UMLS carry as names
//     (CuratedGenericWords: "patient", "disorder", "finding", ...), for what the data above
//     cannot decide;
//  4. names made only of the words above (and English function words): "severe progressive".
// A name that DO or HPO give to a term outside the parts taken by rule 1 is not made generic by
// a top class or by rule 4 ("neoplasm" is a synonym of a top DO class and HPO's Neoplasm).
// docs/alignment.md ("Generic words") gives the figures that chose the rule.
#ifndef IBGRAPHRAG_SERVICES_ALIGNMENT_GENERIC_TERMS_H_
#define IBGRAPHRAG_SERVICES_ALIGNMENT_GENERIC_TERMS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/alignment/lexicon.h"

namespace ibgraphrag::alignment {

// The child terms (external ids) of an ontology term, from whichever KG the lexicon came from.
using OntologyChildrenFn = std::function<std::vector<std::string>(const std::string& parent_id)>;

// Rule 1: the lexicon entries under the qualifier subtrees and at the top of DO and HPO.
std::vector<GenericEntry> FindGenericOntologyEntries(const Lexicon& lexicon,
                                                     const OntologyChildrenFn& children);

// Rule 3 (lower-case words).
const std::vector<std::string>& CuratedGenericWords();

struct GenericTermOptions {
  // false: no name is generic (the bundle stores an empty list).
  bool enabled = true;
  // Rule 2: a one-word name is a class word when its word occurs in at least this share of the
  // lexicon's distinct normalised names. (0, 1].
  double class_word_min_name_share = 0.015;
  // ... and in at least this many names, so that a small lexicon (a test's, a site's own list)
  // has no class words by accident: in a 4-name lexicon every word is in 25 % of the names.
  int64_t class_word_min_names = 100;
};

// A generic normalised name (NormalizeForMatch) and the rule that made it generic.
struct GenericTerm {
  std::string key;
  std::string reason;
};

// Every generic name of `lexicon` (rules 1-4), sorted by key. Abbreviation-like names are never
// generic: they are matched case-sensitively ("ALL" is a leukemia even though "all" is generic).
std::vector<GenericTerm> ComputeGenericTerms(const Lexicon& lexicon,
                                             const GenericTermOptions& options);

// generic_terms.tsv: "key<TAB>reason" per line, sorted by key.
absl::Status WriteGenericTerms(const std::vector<GenericTerm>& terms, const std::string& path);
// DATA_LOSS naming the line for a malformed file.
absl::StatusOr<std::vector<GenericTerm>> ReadGenericTerms(const std::string& path);

}  // namespace ibgraphrag::alignment

#endif  // IBGRAPHRAG_SERVICES_ALIGNMENT_GENERIC_TERMS_H_
