// Training data of the name encoder: concepts (groups of names that denote one thing) assembled
// from the alignment lexicon, split by concept into train / validation / test, and the held-out
// strings the evaluation links. Plain C++ (no LibTorch).
#ifndef IBGRAPHRAG_SERVICES_ALIGNMENT_ENCODER_TRAINING_TRAINING_CONCEPTS_H_
#define IBGRAPHRAG_SERVICES_ALIGNMENT_ENCODER_TRAINING_TRAINING_CONCEPTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "services/alignment/lexicon.h"

namespace ibgraphrag::alignment::training {

enum class Split : uint8_t { kTrain = 0, kValidation = 1, kTest = 2 };
const char* SplitName(Split split);

struct Concept {
  // Lexicon entries joined into this concept (ascending): an entry's external id or xref
  // (UMLS CUI, MeSH, HP, DOID, OMIM, ...) shared with another entry joins the two.
  std::vector<uint32_t> entries;
  // The smallest external id of the entries: what the split hashes, so the split does not
  // depend on entry order.
  std::string key;
  // Every distinct name of the entries (name, synonyms, abbreviations, in entry order; the first
  // spelling of each normalised form), the strings the encoder is trained to pull together.
  std::vector<std::string> names;
  Split split = Split::kTrain;
};

struct ConceptOptions {
  // Xref prefixes (before ':', upper-cased) that join entries. ICD and SNOMED codes are left
  // out: they are coarse classes that many distinct DO terms share.
  std::vector<std::string> join_prefixes = {"DOID", "HP",   "UMLS",   "UMLS_CUI", "MESH",
                                            "MIM",  "OMIM", "ORDO",   "GARD",     "SYMP",
                                            "NCI",  "EFO",  "MEDDRA", "ORPHANET", "ORPHA"};
  // An xref shared by more entries than this is ambiguous (a broad MeSH heading, say) and joins
  // nothing.
  int max_entries_per_xref = 3;
  // Joined components larger than this are split back into their entries (chains of xrefs
  // otherwise glue unrelated diseases together).
  int max_entries_per_concept = 6;
};

struct ConceptSet {
  std::vector<Concept> concepts;
  // concept_of_entry[e]: the concept holding lexicon entry e.
  std::vector<uint32_t> concept_of_entry;
};

// Joins entries by shared xrefs (union-find) and collects their names. Deterministic: concepts
// are ordered by their smallest entry.
ConceptSet BuildConcepts(const Lexicon& lexicon, const ConceptOptions& options);

// Assigns each concept a split by a seeded hash of its key: [0, test) -> test,
// [test, test + validation) -> validation, the rest train. INVALID_ARGUMENT for fractions
// outside [0, 0.5].
absl::Status AssignSplits(uint64_t seed, double validation_fraction, double test_fraction,
                          ConceptSet* set);

// One string to link: `text` is removed from lexicon entry `entry` (and from training) and must
// be linked back to it.
struct HeldOutName {
  uint32_t entry = 0;
  std::string text;
};

// What the evaluation links, per split: DO synonyms (entries with a DOID external id and >= 1
// synonym; one synonym each) and HPO lay synonyms (rows of the lay-synonym file whose HP term is
// an entry that lists the lay string as a synonym; one per entry).
struct EvalSamples {
  std::vector<HeldOutName> do_synonyms;
  std::vector<HeldOutName> hpo_lay;
};

// The lay-synonym file's (HP id, lay string) pairs, in file order.
struct LaySynonym {
  std::string hp_id;
  std::string lay;
};
absl::StatusOr<std::vector<LaySynonym>> ReadHpoLaySynonyms(const std::string& path);
// The lexicon entry of each HP id (its external id, else the first entry listing it as xref).
absl::flat_hash_map<std::string, uint32_t> EntriesByHpId(const Lexicon& lexicon);

// Samples up to `samples` (0 = all) DO synonyms and HPO lay synonyms among the entries of concepts
// in `split`, seeded (one string per entry).
EvalSamples SampleEvalNames(const Lexicon& lexicon, const ConceptSet& set,
                            const std::vector<LaySynonym>& lay, Split split, int samples,
                            uint64_t seed);

// Held-out synonyms of seen concepts: for a seeded `fraction` of the train concepts, picks one DO
// synonym or HPO lay synonym (of an entry whose concept has >= 3 names, so training still has a
// pair) to keep out of training. Returns them as eval samples (DO and lay apart).
EvalSamples SampleSeenHoldout(const Lexicon& lexicon, const ConceptSet& set,
                              const std::vector<LaySynonym>& lay, double fraction, uint64_t seed);

// The names each train concept contributes to training: its names minus every held-out string
// (by normalised form), concepts left with no name dropped. Validation and test concepts are
// never included.
std::vector<std::vector<std::string>> TrainingGroups(const ConceptSet& set,
                                                     const std::vector<HeldOutName>& held_out);

// SHA-256 hex over the groups in order (names joined with '\x1f', groups with '\x1e').
std::string TrainingDataDigest(const std::vector<std::vector<std::string>>& groups);

}  // namespace ibgraphrag::alignment::training

#endif  // IBGRAPHRAG_SERVICES_ALIGNMENT_ENCODER_TRAINING_TRAINING_CONCEPTS_H_
