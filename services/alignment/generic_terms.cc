#include "services/alignment/generic_terms.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "common/text_words.h"
#include "services/alignment/text_normalize.h"

namespace ibgraphrag::alignment {
namespace {

// Where rule 1 starts and how much of the ontology below it is generic.
enum class AnchorScope {
  kSubtree,             // the term and all its descendants
  kSubtreeSingleWords,  // one-word names of the term and its descendants
  kSelfAndChildren,     // the term and its direct children (an ontology's top)
};

struct OntologyAnchor {
  const char* id;
  AnchorScope scope;
  const char* reason;
};

const std::vector<OntologyAnchor>& Anchors() {
  static const auto* const kAnchors = new std::vector<OntologyAnchor>{
      {"HP:0012823", AnchorScope::kSubtree, "HPO clinical modifier (HP:0012823)"},
      {"HP:0040279", AnchorScope::kSubtree, "HPO frequency (HP:0040279)"},
      {"HP:0000005", AnchorScope::kSubtreeSingleWords, "HPO mode of inheritance (HP:0000005)"},
      {"HP:0000001", AnchorScope::kSelfAndChildren, "top of HPO (HP:0000001)"},
      {"DOID:4", AnchorScope::kSelfAndChildren, "top of the Disease Ontology (DOID:4)"},
  };
  return *kAnchors;
}

// The terms an anchor covers, as external ids (the anchor first).
std::vector<std::string> CoveredTerms(const OntologyAnchor& anchor,
                                      const OntologyChildrenFn& children) {
  std::vector<std::string> out = {anchor.id};
  if (anchor.scope == AnchorScope::kSelfAndChildren) {
    for (std::string& c : children(anchor.id)) out.push_back(std::move(c));
    return out;
  }
  absl::flat_hash_set<std::string> seen = {anchor.id};
  for (size_t i = 0; i < out.size(); ++i) {  // breadth first; `out` grows as the queue
    for (std::string& c : children(out[i])) {
      if (seen.insert(c).second) out.push_back(std::move(c));
    }
  }
  return out;
}

// Every name of `e` that the folded (case-insensitive) dictionary indexes, with its tokens.
std::vector<std::pair<std::string, std::vector<Token>>> FoldedNames(const LexiconEntry& e) {
  std::vector<std::pair<std::string, std::vector<Token>>> out;
  for (const std::string& name : e.AllNames()) {
    if (IsAbbreviationLike(name)) continue;
    std::vector<Token> tokens = Tokenize(name);
    if (tokens.empty()) continue;
    out.emplace_back(NormalizeForMatch(name), std::move(tokens));
  }
  return out;
}

// Rule 2: one-word names whose word occurs in enough of the distinct names (options).
void AddClassWords(const Lexicon& lexicon, const GenericTermOptions& options,
                   absl::flat_hash_map<std::string, std::string>* generic) {
  absl::flat_hash_map<std::string, int64_t> names_with_word;
  absl::flat_hash_set<std::string> keys, one_word;
  for (const LexiconEntry& e : lexicon.entries) {
    for (const auto& [key, tokens] : FoldedNames(e)) {
      if (!keys.insert(key).second) continue;
      absl::flat_hash_set<absl::string_view> words;
      for (const Token& t : tokens) words.insert(t.key);
      for (absl::string_view w : words) ++names_with_word[w];
      if (tokens.size() == 1) one_word.insert(key);
    }
  }
  for (const std::string& word : one_word) {
    const int64_t names = names_with_word[word];
    const double share = static_cast<double>(names) / keys.size();
    if (share >= options.class_word_min_name_share && names >= options.class_word_min_names &&
        !generic->contains(word)) {
      (*generic)[word] =
          absl::StrFormat("class word: in %.1f%% of the lexicon's names", 100 * share);
    }
  }
}

// Names that DO or HPO give a term that rule 1 leaves specific: "neoplasm" (a synonym of a
// top DO class, but also HPO's Neoplasm), "mitochondrial inheritance" (an inheritance pattern).
// Top classes (rule 1) and rule 4 do not make them generic; the qualifier subtrees do, since
// their words are qualifiers wherever they appear (HP:0031796 "Recurrent", outside the 2017
// hierarchy, is still the clinical modifier "Episodic"'s synonym).
absl::flat_hash_set<std::string> OntologySpecificNames(const Lexicon& lexicon) {
  absl::flat_hash_map<uint32_t, bool> anchored;  // entry -> single_word_names_only
  for (const GenericEntry& g : lexicon.generic_entries)
    anchored[g.entry] = g.single_word_names_only;
  absl::flat_hash_set<std::string> out;
  for (uint32_t i = 0; i < lexicon.entries.size(); ++i) {
    const LexiconEntry& e = lexicon.entries[i];
    if (!absl::StartsWith(e.external_id, "DOID:") && !absl::StartsWith(e.external_id, "HP:")) {
      continue;
    }
    auto it = anchored.find(i);
    for (auto& [key, tokens] : FoldedNames(e)) {
      const bool left_specific = it == anchored.end() || (it->second && tokens.size() > 1);
      if (left_specific) out.insert(std::move(key));
    }
  }
  return out;
}

// Rule 4: names made only of generic one-word names and English function words ("severe and
// progressive"); not the alignment's wider stop words, which hold "down" (Down syndrome).
void AddNamesOfGenericWords(const Lexicon& lexicon,
                            const absl::flat_hash_set<std::string>& specific,
                            absl::flat_hash_map<std::string, std::string>* generic) {
  std::vector<std::pair<std::string, std::string>> found;
  for (const LexiconEntry& e : lexicon.entries) {
    for (const auto& [key, tokens] : FoldedNames(e)) {
      if (tokens.size() < 2 || generic->contains(key) || specific.contains(key)) continue;
      bool all_generic = true, any_generic = false;
      for (const Token& t : tokens) {
        const bool g = generic->contains(t.key);
        any_generic = any_generic || g;
        all_generic = all_generic && (g || common::IsEnglishStopWord(t.lower));
      }
      if (all_generic && any_generic) found.emplace_back(key, "made only of generic words");
    }
  }
  for (auto& [key, reason] : found) generic->try_emplace(key, std::move(reason));
}

}  // namespace

std::vector<GenericEntry> FindGenericOntologyEntries(const Lexicon& lexicon,
                                                     const OntologyChildrenFn& children) {
  absl::flat_hash_map<std::string, uint32_t> entry_of;
  for (uint32_t i = 0; i < lexicon.entries.size(); ++i) {
    entry_of.try_emplace(lexicon.entries[i].external_id, i);
  }
  std::vector<GenericEntry> out;
  absl::flat_hash_set<uint32_t> taken;
  for (const OntologyAnchor& anchor : Anchors()) {
    if (!entry_of.contains(anchor.id)) continue;  // a KG without this ontology
    for (const std::string& id : CoveredTerms(anchor, children)) {
      auto it = entry_of.find(id);
      if (it == entry_of.end() || !taken.insert(it->second).second) continue;
      // The anchor itself is generic whole ("Mode of inheritance").
      const bool single_words = anchor.scope == AnchorScope::kSubtreeSingleWords && id != anchor.id;
      out.push_back(
          {it->second, single_words, anchor.scope == AnchorScope::kSelfAndChildren, anchor.reason});
    }
  }
  return out;
}

const std::vector<std::string>& CuratedGenericWords() {
  // Clinical class words: every one names a kind of thing, never a particular entity, and UMLS
  // (MRCONSO) carries each as a concept name. Adjectives of severity and course come from HPO
  // (rule 1), so they are not repeated here.
  static const auto* const kWords = new std::vector<std::string>{
      "abnormality", "case",   "complication", "condition", "disease", "disorder", "finding",
      "illness",     "lesion", "patient",      "problem",   "sign",    "symptom",  "syndrome"};
  return *kWords;
}

std::vector<GenericTerm> ComputeGenericTerms(const Lexicon& lexicon,
                                             const GenericTermOptions& options) {
  if (!options.enabled) return {};
  const absl::flat_hash_set<std::string> specific = OntologySpecificNames(lexicon);
  absl::flat_hash_map<std::string, std::string> generic;  // key -> reason
  for (const GenericEntry& g : lexicon.generic_entries) {
    for (const auto& [key, tokens] : FoldedNames(lexicon.entries[g.entry])) {
      if (g.single_word_names_only && tokens.size() > 1) continue;
      if (!g.top_class || !specific.contains(key)) generic.try_emplace(key, g.reason);
    }
  }
  AddClassWords(lexicon, options, &generic);
  absl::flat_hash_set<std::string> names;
  for (const LexiconEntry& e : lexicon.entries) {
    for (auto& [key, tokens] : FoldedNames(e)) names.insert(std::move(key));
  }
  for (const std::string& word : CuratedGenericWords()) {
    if (names.contains(word)) generic.try_emplace(word, "curated clinical class word");
  }
  AddNamesOfGenericWords(lexicon, specific, &generic);
  std::vector<GenericTerm> out;
  out.reserve(generic.size());
  for (auto& [key, reason] : generic) out.push_back({key, std::move(reason)});
  std::sort(out.begin(), out.end(),
            [](const GenericTerm& a, const GenericTerm& b) { return a.key < b.key; });
  return out;
}

absl::Status WriteGenericTerms(const std::vector<GenericTerm>& terms, const std::string& path) {
  std::string out;
  for (const GenericTerm& t : terms) absl::StrAppend(&out, t.key, "\t", t.reason, "\n");
  return common::WriteStringToFileAtomic(path, out);
}

absl::StatusOr<std::vector<GenericTerm>> ReadGenericTerms(const std::string& path) {
  IBGR_ASSIGN_OR_RETURN(std::string content, common::ReadFileToString(path));
  std::vector<GenericTerm> out;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(content, '\n', absl::SkipEmpty())) {
    ++line_number;
    std::vector<absl::string_view> fields = absl::StrSplit(line, absl::MaxSplits('\t', 1));
    if (fields.size() != 2 || fields[0].empty()) {
      return absl::DataLossError(
          absl::StrCat(path, ": line ", line_number, ": expected \"key<TAB>reason\""));
    }
    out.push_back({std::string(fields[0]), std::string(fields[1])});
  }
  return out;
}

}  // namespace ibgraphrag::alignment
