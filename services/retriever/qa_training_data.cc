#include "services/retriever/qa_training_data.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/openai_client.h"
#include "common/parallel_for.h"
#include "common/status_macros.h"
#include "common/topic_rule.h"
#include "services/alignment/alignment_api.h"

namespace ibgraphrag::retriever {
namespace {

using eval::QaItem;
using kgstore::KgStore;

// Byte span [begin, end) of a part of the aligned text.
struct Span {
  uint32_t begin = 0;
  uint32_t end = 0;
  bool Contains(const AlignedEntity& e) const { return e.begin >= begin && e.end <= end; }
};

// The spans of the question and of each option inside common::AlignmentText(question, options):
// the question, then "\n" + option per option. No option spans when the text fell back to the
// question alone (too long).
void PartSpans(const QaItem& item, const std::string& text, Span* question,
               std::vector<Span>* options) {
  *question = {0, static_cast<uint32_t>(item.question.size())};
  options->clear();
  if (text.size() == item.question.size()) return;
  uint32_t at = question->end;
  for (const std::string& option : item.options) {
    options->push_back({at + 1, static_cast<uint32_t>(at + 1 + option.size())});
    at = options->back().end;
  }
}

// NOT_FOUND / FAILED_PRECONDITION when an aligned id is not the KG's entity of that external id.
absl::Status CheckAgainstKg(const KgStore& store, const std::vector<AlignedEntity>& kept) {
  std::vector<kgstore::EntityId> ids;
  for (const AlignedEntity& e : kept) {
    if (e.kg_id >= store.num_entities()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "alignment bundle entity ", e.external_id, " has KG id ", e.kg_id, " but the KG has ",
          store.num_entities(), " entities (rebuild the bundle from this KG snapshot)"));
    }
    ids.push_back(e.kg_id);
  }
  size_t i = 0;
  std::string mismatch;
  IBGR_RETURN_IF_ERROR(store.VisitEntitySummaries(ids, [&](const kgstore::EntitySummaryView& v) {
    if (mismatch.empty() && v.external_id != kept[i].external_id) {
      mismatch = absl::StrCat("KG id ", v.id, " is ", std::string(v.external_id), " in the KG but ",
                              kept[i].external_id, " in the alignment bundle");
    }
    ++i;
  }));
  if (!mismatch.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(mismatch, " (rebuild the bundle from this KG snapshot)"));
  }
  return absl::OkStatus();
}

std::vector<uint32_t> Ids(const std::vector<AlignedEntity>& kept) {
  std::vector<uint32_t> ids;
  for (const AlignedEntity& e : kept) ids.push_back(e.kg_id);
  return ids;
}

// Multiple choice: the answer is the first kept entity (highest C) inside the gold option's
// line; the question entities are those inside the question part. Returns a skip reason or "".
std::string MultipleChoiceRoles(const QaItem& item, const std::string& text,
                                const std::vector<AlignedEntity>& kept, GeneratedQuestion* q) {
  Span question;
  std::vector<Span> options;
  PartSpans(item, text, &question, &options);
  if (item.gold_index < 0 || item.gold_index >= static_cast<int>(options.size())) {
    return "answer_unaligned";
  }
  const AlignedEntity* answer = nullptr;
  for (const AlignedEntity& e : kept) {
    if (options[item.gold_index].Contains(e)) {
      answer = &e;
      break;
    }
  }
  if (answer == nullptr) return "answer_unaligned";
  q->answers = {answer->kg_id};
  q->answer_text = item.options[item.gold_index];
  for (const AlignedEntity& e : kept) {
    if (question.Contains(e) && e.kg_id != answer->kg_id) q->question_entities.push_back(e.kg_id);
  }
  return "";
}

// True claims: the answer is the entity mentioned last (the claim's object); every other kept
// entity is a question entity.
std::string ClaimRoles(const std::vector<AlignedEntity>& kept, GeneratedQuestion* q) {
  if (kept.size() < 2) return "answer_unaligned";
  const AlignedEntity* answer = &kept.front();
  for (const AlignedEntity& e : kept) {
    if (e.begin > answer->begin) answer = &e;  // ties keep the higher-scoring (earlier) one
  }
  q->answers = {answer->kg_id};
  q->answer_text = answer->name;
  for (const AlignedEntity& e : kept) {
    if (e.kg_id != answer->kg_id) q->question_entities.push_back(e.kg_id);
  }
  return "";
}

void Deduplicate(std::vector<uint32_t>* ids) {
  absl::flat_hash_set<uint32_t> seen;
  std::vector<uint32_t> out;
  for (uint32_t id : *ids) {
    if (seen.insert(id).second) out.push_back(id);
  }
  *ids = std::move(out);
}

bool IsClaim(const QaItem& item) { return item.task == v1::TASK_FACT_VERIFICATION; }

// Why a question of this kind cannot be an example before it is aligned, or "".
std::string SkipBeforeAligning(const QaItem& item) {
  if (IsClaim(item)) return item.gold_label == v1::FACT_LABEL_SUPPORTED ? "" : "false_claim";
  // yes / no / maybe answers (PubMedQA) are no entity; the loader marks them.
  if (!item.gold_is_entity || item.options.empty() || item.gold_index < 0) {
    return "no_entity_answer";
  }
  return "";
}

// The file names (stems) chosen by `wanted`, INVALID_ARGUMENT naming one that is not there.
absl::StatusOr<std::vector<std::string>> ChosenPaths(const QaExampleOptions& options) {
  IBGR_ASSIGN_OR_RETURN(std::vector<std::string> paths, eval::ExpandDatasetPaths(options.qa_dir));
  if (options.sets.empty()) return paths;
  std::vector<std::string> chosen, stems;
  for (const std::string& path : paths) {
    std::string stem = path.substr(path.find_last_of('/') + 1);
    stem = stem.substr(0, stem.find_last_of('.'));
    stems.push_back(stem);
    if (std::find(options.sets.begin(), options.sets.end(), stem) != options.sets.end()) {
      chosen.push_back(path);
    }
  }
  for (const std::string& wanted : options.sets) {
    if (std::find(stems.begin(), stems.end(), wanted) == stems.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("qa_sets: no set \"", wanted, "\" in ", options.qa_dir,
                       " (there are: ", absl::StrJoin(stems, ", "), ")"));
    }
  }
  return chosen;
}

// Examples of one set, in file order, added to `out` with their skip counts.
absl::Status AddSet(const KgStore& store, const AlignTextFn& align, const eval::QaDataset& set,
                    const QaExampleOptions& options, QuestionSet* out) {
  const std::string source = absl::StrCat("qa/", set.name);
  std::vector<absl::StatusOr<QaExampleOutcome>> outcomes(set.items.size(),
                                                         absl::UnknownError("not built"));
  common::ParallelFor(set.items.size(), options.threads, [&](size_t i) {
    outcomes[i] = ExampleFromQaItem(store, align, set.items[i], set.name, options);
  });
  for (size_t i = 0; i < outcomes.size(); ++i) {
    if (!outcomes[i].ok()) return outcomes[i].status();
    QaExampleOutcome& o = *outcomes[i];
    if (!o.skip_reason.empty()) {
      ++out->skipped[absl::StrCat(source, "/", o.skip_reason)];
      continue;
    }
    const eval::QaSplit part = eval::SplitOfQuestion(set.items[i].question, options.split_seed);
    AddQuestion(part, std::move(o.question), out);
  }
  return absl::OkStatus();
}

// One log line per source: "<source>: train T, validation V, test X; skipped reason n, ...".
void LogCounts(const QuestionSet& set, const std::function<void(const std::string&)>& log) {
  if (!log) return;
  for (const auto& [source, c] : set.split_counts) {
    std::string line = absl::StrFormat("  %s: train %d, validation %d, test %d", source, c.train,
                                       c.validation, c.test);
    std::vector<std::string> skips;
    for (const auto& [key, n] : set.skipped) {
      if (key.rfind(source + "/", 0) == 0) {
        skips.push_back(absl::StrCat(key.substr(source.size() + 1), " ", n));
      }
    }
    if (!skips.empty()) absl::StrAppend(&line, "; skipped ", absl::StrJoin(skips, ", "));
    log(line);
  }
  for (const auto& [key, n] : set.skipped) {
    const std::string source = key.substr(0, key.find_last_of('/'));
    if (set.split_counts.count(source) == 0) log(absl::StrCat("  ", key, ": ", n, " (none kept)"));
  }
}

absl::StatusOr<QuestionSet> QaPart(const KgStore& store, const TrainingDataOptions& options) {
  absl::Time start = absl::Now();
  IBGR_ASSIGN_OR_RETURN(std::unique_ptr<alignment::Aligner> aligner, OpenTrainingAligner(options));
  const double open_s = absl::ToDoubleSeconds(absl::Now() - start);
  start = absl::Now();
  QaExampleOptions qo = options.qa_options;
  qo.max_hops = options.template_options.max_hops;
  qo.max_paths_per_question = options.template_options.max_paths_per_question;
  qo.split_seed = options.template_options.split_seed;
  auto degradations = std::make_shared<AlignmentDegradations>();
  IBGR_ASSIGN_OR_RETURN(
      QuestionSet qa,
      BuildQaExamples(store, AlignWithAligner(std::move(aligner), degradations), qo));
  const int64_t texts = degradations->texts.load();
  const int64_t degraded = degradations->degraded.load();
  if (degraded > kMaxDegradedAlignmentShare * static_cast<double>(texts)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "alignment's LLM step failed on %d of %d QA texts (more than %.0f%%): the model would "
        "be trained on topics the served alignment does not give; fix the LLM in "
        "--alignment_config or leave its llm block out",
        degraded, texts, 100 * kMaxDegradedAlignmentShare));
  }
  if (degraded > 0 && options.log) {
    options.log(
        absl::StrFormat("alignment's LLM step failed on %d of %d QA texts (aligned "
                        "without it)",
                        degraded, texts));
  }
  if (options.log) {
    options.log(absl::StrFormat(
        "QA examples from %s: %d train, %d validation, %d test in %.1fs (+%.1fs opening the "
        "alignment bundle)",
        qo.qa_dir, qa.train.size(), qa.validation.size(), qa.test.size(),
        absl::ToDoubleSeconds(absl::Now() - start), open_s));
  }
  return qa;
}

}  // namespace

absl::StatusOr<std::unique_ptr<alignment::Aligner>> OpenTrainingAligner(
    const TrainingDataOptions& options) {
  alignment::LocalAlignerOptions lo;
  lo.base_path = options.alignment_base;
  if (options.alignment_setup.has_value()) {
    const alignment::AlignmentSetup& setup = *options.alignment_setup;
    lo.encoder = setup.encoder;
    lo.aligner = setup.aligner;
    lo.index = setup.index;
    if (setup.llm.has_value()) {
      IBGR_ASSIGN_OR_RETURN(lo.llm, common::OpenAiClient::Create(*setup.llm));
    }
  }
  return alignment::OpenLocalAligner(lo);
}

absl::StatusOr<QuestionSet> BuildTrainingData(const KgStore& store,
                                              const TrainingDataOptions& options) {
  if (!options.templates && !options.qa) {
    return absl::InvalidArgumentError(
        "training data: neither templates nor QA sets are enabled (--templates, --qa_sets)");
  }
  QuestionSet data;
  if (options.templates) {
    const absl::Time start = absl::Now();
    IBGR_ASSIGN_OR_RETURN(data, GenerateQuestions(store, options.template_options));
    if (options.log) {
      options.log(absl::StrFormat("template questions: %d train, %d validation, %d test in %.1fs",
                                  data.train.size(), data.validation.size(), data.test.size(),
                                  absl::ToDoubleSeconds(absl::Now() - start)));
    }
  }
  if (options.qa) {
    IBGR_ASSIGN_OR_RETURN(QuestionSet qa, QaPart(store, options));
    MergeQuestionSets(std::move(qa), &data);
  }
  data.hash = HashQuestionSet(data);
  LogCounts(data, options.log);
  return data;
}

AlignTextFn AlignWithAligner(std::shared_ptr<const alignment::Aligner> aligner,
                             std::shared_ptr<AlignmentDegradations> degradations) {
  return [aligner,
          degradations](absl::string_view text) -> absl::StatusOr<std::vector<AlignedEntity>> {
    IBGR_ASSIGN_OR_RETURN(alignment::AlignResult r,
                          aligner->Align(text, aligner->options().defaults));
    if (degradations != nullptr) {
      ++degradations->texts;
      if (!r.degraded.empty()) ++degradations->degraded;
    }
    std::vector<AlignedEntity> kept;
    for (const alignment::ScoredEntity& e : r.kept) {
      const alignment::Mention& m = r.mentions.at(e.mention_index);
      kept.push_back(
          {e.candidate.kg_id, e.candidate.external_id, e.candidate.name, m.begin, m.end});
    }
    return kept;
  };
}

absl::StatusOr<QaExampleOutcome> ExampleFromQaItem(const KgStore& store, const AlignTextFn& align,
                                                   const QaItem& item, const std::string& set_name,
                                                   const QaExampleOptions& options) {
  QaExampleOutcome out;
  out.skip_reason = SkipBeforeAligning(item);
  if (!out.skip_reason.empty()) return out;
  const std::string text = common::AlignmentText(item.question, item.options);
  absl::StatusOr<std::vector<AlignedEntity>> kept = align(text);
  if (absl::IsInvalidArgument(kept.status())) {
    out.skip_reason = "align_refused";
    return out;
  }
  if (!kept.ok()) return kept.status();
  IBGR_RETURN_IF_ERROR(CheckAgainstKg(store, *kept));
  GeneratedQuestion& q = out.question;
  out.skip_reason =
      IsClaim(item) ? ClaimRoles(*kept, &q) : MultipleChoiceRoles(item, text, *kept, &q);
  if (!out.skip_reason.empty()) return out;
  Deduplicate(&q.question_entities);
  if (q.question_entities.empty()) {
    out.skip_reason = "no_question_entity";
    return out;
  }
  IBGR_ASSIGN_OR_RETURN(
      q.evidence, ShortestPathEvidence(store, q.question_entities, q.answers, options.max_hops,
                                       options.max_paths_per_question));
  if (q.evidence.empty()) {
    out.skip_reason = "no_path";
    return out;
  }
  q.text = item.question;
  q.options = item.options;
  q.source = absl::StrCat("qa/", set_name);
  q.topics = common::TopicEntityIds(Ids(*kept));
  if (!item.explanation.empty()) {
    q.explanation = item.explanation;
    // The entities the explanation names, as the alignment service reads them; an explanation
    // the aligner refuses (too long) keeps its text but names none.
    absl::StatusOr<std::vector<AlignedEntity>> named = align(item.explanation);
    if (named.ok()) {
      q.explanation_entities = Ids(*named);
      Deduplicate(&q.explanation_entities);
    } else if (!absl::IsInvalidArgument(named.status())) {
      return named.status();
    }
  }
  return out;
}

absl::StatusOr<QuestionSet> BuildQaExamples(const KgStore& store, const AlignTextFn& align,
                                            const QaExampleOptions& options) {
  IBGR_RETURN_IF_ERROR(ValidateSupervision(options.max_hops, options.max_paths_per_question));
  IBGR_ASSIGN_OR_RETURN(std::vector<std::string> paths, ChosenPaths(options));
  QuestionSet out;
  for (const std::string& path : paths) {
    IBGR_ASSIGN_OR_RETURN(eval::QaDataset set, eval::LoadDataset(path));
    IBGR_RETURN_IF_ERROR(AddSet(store, align, set, options, &out));
  }
  out.hash = HashQuestionSet(out);
  return out;
}

}  // namespace ibgraphrag::retriever
