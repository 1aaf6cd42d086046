// Loaders for the question-answering benchmarks `ibgr eval` runs through the gateway: MedQA
// JSONL, MedMCQA JSONL, PubMedQA JSON, MMLU CSV, BiomixQA multiple-choice CSV and the BiomixQA
// true/false CSV. Each file becomes a list of QaItems with the question, options, task and gold
// answer; malformed input is an INVALID_ARGUMENT naming the file and line.
#ifndef IBGRAPHRAG_COMMON_QA_QA_DATASETS_H_
#define IBGRAPHRAG_COMMON_QA_QA_DATASETS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ibgraphrag/v1/common.pb.h"

namespace ibgraphrag::eval {

enum class DatasetFormat {
  kAuto,       // detect from the file name and first record
  kMedQa,      // JSON lines: question, options {"A": ..}, answer_idx "A" (and/or answer text)
  kMedMcqa,    // JSON lines: question, opa..opd, cop (1-based: 1 = opa)
  kPubMedQa,   // JSON object id -> {QUESTION, CONTEXTS, final_decision yes|no|maybe}
  kMmlu,       // CSV without header: question, A, B, C, D, answer letter
  kBiomixMcq,  // CSV with header: ...,correct_node,...,options_combined,text
  kTrueFalse,  // CSV with header: ,text,label (True/False)
  // JSON lines: id, split, kind (open | multiple_choice | yes_no), relation, question, accepted
  // [, options, answer] (the clinical lookup set, tools/eval/lookup/README.md)
  kLookup,
  // CSV with header: claim,label (true | false | mixture | unproven): PubHealth (factcheck/)
  kPubHealth,
};

// "auto", "medqa", "medmcqa", "pubmedqa", "mmlu", "biomixqa_mcq", "truefalse", "lookup",
// "pubhealth".
absl::string_view DatasetFormatName(DatasetFormat format);
// Inverse of DatasetFormatName; INVALID_ARGUMENT listing the accepted names otherwise.
absl::StatusOr<DatasetFormat> ParseDatasetFormat(absl::string_view name);

// One benchmark question with its gold answer.
struct QaItem {
  // Stable id within the file: the dataset's own id when it has one, else "line:N".
  std::string id;
  // 1-based line where the record starts in the source file (for messages).
  int line = 0;
  std::string question;
  // Answer options in file order (A, B, ...); empty for fact verification.
  std::vector<std::string> options;
  v1::Task task = v1::TASK_UNSPECIFIED;
  // Multiple choice: 0-based index of the gold option.
  int gold_index = -1;
  // Fact verification: FACT_LABEL_SUPPORTED (true) or FACT_LABEL_REFUTED (false).
  v1::FactLabel gold_label = v1::FACT_LABEL_UNSPECIFIED;
  // The gold answer as text: the gold option's text, or "true"/"false" for claims.
  std::string gold_text;
  // Whether gold_text names something that can appear as a KG entity (drug, gene, disease...).
  // False for yes/no/maybe and true/false answers: they are excluded from the answer-entity
  // hit rate.
  bool gold_is_entity = false;
  // Lookup sets: every accepted answer (lower case; open questions list all the correct
  // entities, so the first five answers can be judged), the relation kind asked about
  // ("treats", ...), the part the file puts the question in ("dev" / "test"), whether the topic
  // is a hub. Empty / false for the other formats.
  std::vector<std::string> accepted;
  std::string relation;
  std::string file_split;
  bool hub = false;
  // Lookup sets: the answer's entity type as the file names it ("drug", "gene", ...).
  std::string answer_type;
  // The expert's explanation of the answer where the set has one (MedMCQA `exp`), else empty.
  // Training may use it as part of the IB target text; evaluation names the entities it names.
  std::string explanation;
};

struct QaDataset {
  std::string path;
  // File name without directory and extension, e.g. "medmcqa-dev".
  std::string name;
  DatasetFormat format = DatasetFormat::kAuto;
  std::vector<QaItem> items;
};

// Parsers over a file's whole content; `path` is used in error messages only.
absl::StatusOr<std::vector<QaItem>> ParseMedQa(absl::string_view content, const std::string& path);
absl::StatusOr<std::vector<QaItem>> ParseMedMcqa(absl::string_view content,
                                                 const std::string& path);
absl::StatusOr<std::vector<QaItem>> ParsePubMedQa(absl::string_view content,
                                                  const std::string& path);
absl::StatusOr<std::vector<QaItem>> ParseMmlu(absl::string_view content, const std::string& path);
absl::StatusOr<std::vector<QaItem>> ParseBiomixMcq(absl::string_view content,
                                                   const std::string& path);
absl::StatusOr<std::vector<QaItem>> ParseTrueFalse(absl::string_view content,
                                                   const std::string& path);
// PubHealth claims (Kotonya & Toni 2020; `claim,label`): TASK_FACT_VERIFICATION with the verdict
// the paper's three-way reading gives: true -> SUPPORTED, false -> REFUTED, mixture and unproven
// -> UNKNOWN (NOT ENOUGH EVIDENCE: neither verdict holds as stated). gold_text keeps the
// four-way label. file_split comes from the file name ("-train" train, "-dev" dev, "-test" test),
// so --qa_split=validation selects the dev file and the held-out test file stays out of reach.
absl::StatusOr<std::vector<QaItem>> ParsePubHealth(absl::string_view content,
                                                   const std::string& path);

// Open questions are TASK_OPEN (gold_text = the first accepted answer), multiple choice
// TASK_MULTIPLE_CHOICE (answer = the gold letter), yes_no TASK_FACT_VERIFICATION (yes =
// SUPPORTED, no = REFUTED).
absl::StatusOr<std::vector<QaItem>> ParseLookup(absl::string_view content, const std::string& path);

// A lookup set as multiple choice (the KG-lookup class's calibration examples and figures,
// issue 26): the set's own multiple-choice questions, then, per open question, up to
// `per_question` four-option questions (id "<id>/mc<k>") whose right option is one of its
// accepted answers (the first, then spread over the list) and whose three distractors are
// accepted answers of other open questions of the same answer type and file split that this
// question does not accept (no word set of one contains the other's). Deterministic; the
// right option's position varies. Yes/no questions, and open questions without three
// distractors, are left out.
std::vector<QaItem> LookupAsChoices(const std::vector<QaItem>& items, int per_question);

// The format of a file from its name (.jsonl / .json / .csv) and its first record; INVALID_ARGUMENT
// naming the file when it matches none.
absl::StatusOr<DatasetFormat> DetectDatasetFormat(const std::string& path,
                                                  absl::string_view content);

// Reads and parses one file. NOT_FOUND when it cannot be read; INVALID_ARGUMENT naming the file
// and line for malformed content or an undetectable format.
absl::StatusOr<QaDataset> LoadDataset(const std::string& path,
                                      DatasetFormat format = DatasetFormat::kAuto);

// Just the question texts of a dataset file, for load generators that replay them;
// INVALID_ARGUMENT naming the file when it holds no question.
absl::StatusOr<std::vector<std::string>> LoadQuestionTexts(const std::string& path,
                                                           DatasetFormat format);

// The files `spec` names: a file; a directory (its *.jsonl, *.json and *.csv files, sorted by
// name); or a comma-separated list of those. NOT_FOUND naming the missing path.
absl::StatusOr<std::vector<std::string>> ExpandDatasetPaths(const std::string& spec);

}  // namespace ibgraphrag::eval

#endif  // IBGRAPHRAG_COMMON_QA_QA_DATASETS_H_
