#include "services/alignment/aligner.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/error_echo.h"
#include "common/openai_client.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "services/alignment/abbreviation_senses.h"
#include "services/alignment/calibrated_scores.h"
#include "services/alignment/llm_selection.h"
#include "services/alignment/text_normalize.h"

namespace ibgraphrag::alignment {
namespace {

class StageClock {
 public:
  explicit StageClock(std::vector<StageTiming>* out) : out_(out), start_(absl::Now()) {}
  void Lap(absl::string_view stage) {
    const absl::Time now = absl::Now();
    out_->push_back({std::string(stage), absl::ToDoubleMilliseconds(now - start_)});
    start_ = now;
  }

 private:
  std::vector<StageTiming>* out_;
  absl::Time start_;
};

bool ByConsistency(const ScoredEntity& a, const ScoredEntity& b) {
  if (a.consistency != b.consistency) return a.consistency > b.consistency;
  return a.candidate.external_id < b.candidate.external_id;
}

// The JSON object or string inside an LLM answer (models wrap JSON in prose or code fences).
std::string StripToJson(absl::string_view answer, char open, char close) {
  const size_t b = answer.find(open);
  const size_t e = answer.rfind(close);
  if (b == absl::string_view::npos || e == absl::string_view::npos || e < b) return "";
  return std::string(answer.substr(b, e - b + 1));
}

}  // namespace

absl::Status ValidateText(absl::string_view text, absl::string_view field) {
  if (text.empty()) return absl::InvalidArgumentError(absl::StrCat(field, ": must not be empty"));
  if (text.size() > kMaxTextBytes) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": ", text.size(),
                                                   " bytes exceeds the limit of ", kMaxTextBytes,
                                                   " bytes (16 KiB)"));
  }
  if (!IsValidUtf8(text)) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": not valid UTF-8"));
  }
  return absl::OkStatus();
}

absl::string_view LlmStepName(LlmStep step) {
  switch (step) {
    case LlmStep::kBeforeFilter:
      return "before_filter";
    case LlmStep::kRescueRejected:
      return "rescue_rejected";
  }
  return "before_filter";
}

absl::StatusOr<LlmStep> ParseLlmStep(absl::string_view name, absl::string_view field) {
  for (LlmStep step : {LlmStep::kBeforeFilter, LlmStep::kRescueRejected}) {
    if (name == LlmStepName(step)) return step;
  }
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": \"", common::EchoForError(name),
                   "\" is not an LLM step (before_filter, rescue_rejected)"));
}

absl::Status ValidateMscaOptions(const MscaOptions& o) {
  if (!(o.lambda >= 0.0f && o.lambda <= 1.0f)) {
    return absl::InvalidArgumentError(
        absl::StrCat("options.lambda: ", o.lambda, " outside [0, 1]"));
  }
  if (!(o.tau >= 0.0f && o.tau <= 1.0f)) {
    return absl::InvalidArgumentError(absl::StrCat("options.tau: ", o.tau, " outside [0, 1]"));
  }
  if (o.top_k < 1 || o.top_k > kMaxTopK) {
    return absl::InvalidArgumentError(
        absl::StrCat("options.top_k: ", o.top_k, " outside 1..", kMaxTopK));
  }
  if (o.llm_choice_below < 0 || o.llm_choice_below > kMaxTopK) {
    return absl::InvalidArgumentError(
        absl::StrCat("options.llm_choice_below: ", o.llm_choice_below, " outside 0..", kMaxTopK));
  }
  return absl::OkStatus();
}

Aligner::Aligner(std::shared_ptr<const AlignmentBundle> bundle,
                 std::shared_ptr<const TextEncoder> encoder,
                 std::shared_ptr<const common::OpenAiClient> llm, const AlignerOptions& options)
    : bundle_(std::move(bundle)),
      encoder_(std::move(encoder)),
      llm_(std::move(llm)),
      options_(options) {}

absl::StatusOr<std::unique_ptr<Aligner>> Aligner::Create(
    std::shared_ptr<const AlignmentBundle> bundle, std::shared_ptr<const TextEncoder> encoder,
    std::shared_ptr<const common::OpenAiClient> llm, const AlignerOptions& options) {
  if (bundle == nullptr || encoder == nullptr) {
    return absl::InvalidArgumentError("Aligner: bundle and encoder are required");
  }
  if (encoder->id() != bundle->manifest.encoder_id || encoder->dim() != bundle->manifest.dim) {
    return absl::FailedPreconditionError(absl::StrCat(
        "bundle ", bundle->dir, " was built with encoder \"", bundle->manifest.encoder_id,
        "\" (d=", bundle->manifest.dim, ") but the configured encoder is \"", encoder->id(),
        "\" (d=", encoder->dim(), "); rebuild the bundle or change the encoder config"));
  }
  IBGR_RETURN_IF_ERROR(ValidateMscaOptions(options.defaults));
  IBGR_RETURN_IF_ERROR(ValidateLlmSelectionLimits(options));
  return std::unique_ptr<Aligner>(
      new Aligner(std::move(bundle), std::move(encoder), std::move(llm), options));
}

LinkedCandidate Aligner::MakeCandidate(uint32_t entry, uint32_t name_index,
                                       float similarity) const {
  const LexiconEntry& e = bundle_->lexicon.entries[entry];
  LinkedCandidate c;
  c.entry = entry;
  c.kg_id = e.kg_id;
  c.external_id = e.external_id;
  c.name = e.name;
  c.type = e.type;
  c.similarity = similarity;
  // Name index in AllNames() order (name, synonyms, abbreviations), without copying them all.
  size_t i = name_index;
  if (i == 0) {
    c.matched_name = e.name;
  } else if (--i < e.synonyms.size()) {
    c.matched_name = e.synonyms[i];
  } else if ((i -= e.synonyms.size()) < e.abbreviations.size()) {
    c.matched_name = e.abbreviations[i];
  } else {
    c.matched_name = e.name;
  }
  return c;
}

absl::StatusOr<ExtractResult> Aligner::ExtractMentions(absl::string_view text, bool llm_mentions,
                                                       absl::Time deadline) const {
  IBGR_RETURN_IF_ERROR(ValidateText(text));
  ExtractResult out;
  out.mentions = bundle_->extractor->Extract(text, options_.report_generic_terms);
  IBGR_RETURN_IF_ERROR(ChooseAbbreviationSensesOfText(*bundle_, *encoder_, text, &out.mentions));
  if (llm_mentions) {
    if (llm_ == nullptr) {
      out.degraded.push_back({"alignment_llm",
                              "llm_mentions requested but no LLM is configured; "
                              "dictionary mentions only"});
    } else if (absl::Status s = LlmMentions(text, deadline, &out.mentions); !s.ok()) {
      out.degraded.push_back(
          {"alignment_llm", absl::StrCat("LLM mention extraction failed (", s.ToString(),
                                         "); dictionary mentions only")});
    }
  }
  return out;
}

absl::Status Aligner::LlmMentions(absl::string_view text, absl::Time deadline,
                                  std::vector<Mention>* mentions) const {
  common::ChatRequest request;
  request.messages.push_back(
      {"system",
       "You extract medical entities (diseases, symptoms, findings, drugs, genes, anatomy, "
       "procedures) from text. Answer with a JSON array of strings, each copied exactly from "
       "the text, and nothing else."});
  request.messages.push_back({"user", std::string(text)});
  IBGR_ASSIGN_OR_RETURN(
      common::ChatResponse response,
      llm_->Complete(request, std::min(deadline, absl::Now() + options_.llm_timeout)));
  std::vector<std::string> spans;
  try {
    const nlohmann::json j = nlohmann::json::parse(StripToJson(response.content, '[', ']'));
    for (const auto& s : j) {
      if (s.is_string()) spans.push_back(s.get<std::string>());
    }
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("LLM answer is not a JSON array: ", e.what()));
  }
  const std::string lower_text = absl::AsciiStrToLower(text);
  std::vector<Mention> added;
  for (const std::string& span : spans) {
    if (span.empty()) continue;
    const size_t pos = lower_text.find(absl::AsciiStrToLower(span));
    if (pos == std::string::npos) continue;  // not in the text: hallucinated, dropped
    const uint32_t b = static_cast<uint32_t>(pos), e = static_cast<uint32_t>(pos + span.size());
    bool overlaps = false;
    for (const auto* list : {mentions, &added}) {
      for (const Mention& m : *list) overlaps = overlaps || (b < m.end && m.begin < e);
    }
    if (overlaps) continue;
    Mention m;
    m.begin = b;
    m.end = e;
    m.text = std::string(text.substr(b, e - b));
    m.normalized = NormalizeForMatch(m.text);
    m.origin = "llm";
    added.push_back(std::move(m));
  }
  bundle_->extractor->FlagContext(text, &added);
  mentions->insert(mentions->end(), added.begin(), added.end());
  std::sort(mentions->begin(), mentions->end(),
            [](const Mention& a, const Mention& b) { return a.begin < b.begin; });
  return absl::OkStatus();
}

absl::Status Aligner::LinkMentions(const std::vector<Mention>& mentions, int top_k,
                                   std::vector<MentionLink>* links) const {
  const int dim = encoder_->dim();
  // Queries: the mention text, or for an abbreviation the name it expands to ("MI" encodes
  // badly; "myocardial infarction" encodes like the lexicon's names). Then the names that
  // matched in the dictionary, so exact matches get a similarity even when FAISS misses them.
  std::vector<std::string> texts;
  // (mention, name, named in the dictionary) per extra text; an abbreviation's other senses
  // (abbreviation_senses.h) are candidates that its text does not name in this context.
  std::vector<std::tuple<size_t, NameRef, bool>> dictionary;
  for (const Mention& m : mentions) {
    if (!m.expanded_from.empty() && !m.expansion.empty()) {
      texts.push_back(m.expansion);  // the sense chosen by context (abbreviation_senses.h)
    } else if (!m.expanded_from.empty() && !m.matches.empty()) {
      texts.push_back(bundle_->lexicon.entries[m.matches[0].entry].name);
    } else {
      texts.push_back(m.text);
    }
  }
  for (size_t i = 0; i < mentions.size(); ++i) {
    for (const NameRef& r : mentions[i].matches) {
      dictionary.emplace_back(i, r, true);
      texts.push_back(MakeCandidate(r.entry, r.name_index, 0).matched_name);
    }
    for (const NameRef& r : mentions[i].other_senses) {
      dictionary.emplace_back(i, r, false);
      texts.push_back(bundle_->lexicon.entries[r.entry].name);
    }
  }
  std::vector<float> vectors(texts.size() * dim);
  IBGR_RETURN_IF_ERROR(encoder_->EncodeBatch(texts, absl::MakeSpan(vectors)));
  IBGR_ASSIGN_OR_RETURN(std::vector<std::vector<NameHit>> hits,
                        bundle_->index->Search(
                            absl::MakeConstSpan(vectors).subspan(0, mentions.size() * dim), top_k));
  links->clear();
  links->resize(mentions.size());
  for (size_t i = 0; i < mentions.size(); ++i) {
    MentionLink& link = (*links)[i];
    link.mention = mentions[i];
    absl::flat_hash_map<uint32_t, size_t> at;
    for (const NameHit& h : hits[i]) {
      at[h.entry] = link.candidates.size();
      link.candidates.push_back(MakeCandidate(h.entry, h.name_index, h.similarity));
    }
    for (size_t d = 0; d < dictionary.size(); ++d) {
      const auto& [mention, r, named] = dictionary[d];
      if (mention != i) continue;
      const float sim =
          Dot(vectors.data() + i * dim, vectors.data() + (mentions.size() + d) * dim, dim);
      auto it = at.find(r.entry);
      if (it != at.end()) {
        if (named) link.candidates[it->second].dictionary_match = true;
        continue;
      }
      at[r.entry] = link.candidates.size();
      LinkedCandidate c = MakeCandidate(r.entry, r.name_index, sim);
      c.dictionary_match = named;
      link.candidates.push_back(std::move(c));
    }
    // Best first; an exact dictionary match wins ties (same text, same vector).
    std::stable_sort(link.candidates.begin(), link.candidates.end(),
                     [](const LinkedCandidate& a, const LinkedCandidate& b) {
                       if (a.similarity != b.similarity) return a.similarity > b.similarity;
                       return a.dictionary_match && !b.dictionary_match;
                     });
    if (static_cast<int>(link.candidates.size()) > top_k) link.candidates.resize(top_k);
  }
  return absl::OkStatus();
}

absl::StatusOr<LinkResult> Aligner::Link(absl::string_view text, int top_k,
                                         absl::Time deadline) const {
  IBGR_RETURN_IF_ERROR(ValidateText(text));
  if (top_k < 1 || top_k > kMaxTopK) {
    return absl::InvalidArgumentError(absl::StrCat("top_k: ", top_k, " outside 1..", kMaxTopK));
  }
  LinkResult out;
  StageClock clock(&out.timings);
  std::vector<Mention> mentions = bundle_->extractor->Extract(text, options_.report_generic_terms);
  IBGR_RETURN_IF_ERROR(ChooseAbbreviationSensesOfText(*bundle_, *encoder_, text, &mentions));
  clock.Lap("mentions");
  IBGR_RETURN_IF_ERROR(LinkMentions(mentions, top_k, &out.links));
  clock.Lap("candidates");
  return out;
}

namespace {

// Align's candidate set: every entity proposed for any mention, once, attributed to the mention
// that linked it best (on a tie, the one that names it in the dictionary: the LLM selection step
// asks per mention, so an entity belongs with the words that name it).
struct CandidateSet {
  std::vector<ScoredEntity> entities;
  // Per entity: proposed only by mentions that name another entity exactly (look-alikes).
  std::vector<bool> lookalike;
  // Per entity: the mention it is attributed to names it in the dictionary.
  std::vector<bool> named_by_attributed;
};

// Takes the links by value: their candidates are moved into the set, not copied.
CandidateSet MergeCandidates(std::vector<MentionLink> links) {
  CandidateSet set;
  absl::flat_hash_map<uint32_t, size_t> at;
  for (size_t i = 0; i < links.size(); ++i) {
    bool named = false;
    for (const LinkedCandidate& c : links[i].candidates) named = named || c.dictionary_match;
    for (LinkedCandidate& c : links[i].candidates) {
      auto [it, inserted] = at.try_emplace(c.entry, set.entities.size());
      if (inserted) {
        set.lookalike.push_back(named);
        set.named_by_attributed.push_back(c.dictionary_match);
      }
      if (!named) set.lookalike[it->second] = false;
      if (!inserted) {
        ScoredEntity& existing = set.entities[it->second];
        const bool dictionary = existing.candidate.dictionary_match || c.dictionary_match;
        const bool tie_named = c.similarity == existing.candidate.similarity &&
                               c.dictionary_match && !set.named_by_attributed[it->second];
        if (c.similarity > existing.candidate.similarity || tie_named) {
          set.named_by_attributed[it->second] = c.dictionary_match;
          existing.candidate = std::move(c);
          existing.mention_index = static_cast<int>(i);
        }
        existing.candidate.dictionary_match = dictionary;
        continue;
      }
      ScoredEntity s;
      s.candidate = std::move(c);
      s.mention_index = static_cast<int>(i);
      set.entities.push_back(std::move(s));
    }
  }
  return set;
}

// Raw S (cosine with the question) and raw R (mean cosine with the other candidates); only the
// question is encoded per request, the entity vectors come precomputed from the bundle.
void RawSimilarities(const AlignmentBundle& bundle, const std::vector<float>& question, int dim,
                     std::vector<ScoredEntity>* candidates) {
  const size_t n = candidates->size();
  std::vector<double> related_sum(n, 0.0);
  for (size_t a = 0; a < n; ++a) {
    const float* va = bundle.enriched_row((*candidates)[a].candidate.entry);
    (*candidates)[a].raw_question_similarity = Dot(va, question.data(), dim);
    for (size_t b = a + 1; b < n; ++b) {
      const float cos = Dot(va, bundle.enriched_row((*candidates)[b].candidate.entry), dim);
      related_sum[a] += cos;
      related_sum[b] += cos;
    }
  }
  for (size_t a = 0; a < n; ++a) {
    (*candidates)[a].raw_relatedness =
        n > 1 ? static_cast<float>(related_sum[a] / static_cast<double>(n - 1)) : 0.0f;
  }
}

// Calibrated S and R of one candidate among `n` (calibrated_scores.h).
void CalibrateScores(const ScoreCalibration& cal, const QuestionNull& null, size_t n,
                     bool lookalike, ScoredEntity* s) {
  s->lookalike = lookalike && !s->candidate.dictionary_match;
  s->question_similarity =
      CalibratedS(s->raw_question_similarity, null, cal.question_full_z, cal.dictionary_evidence,
                  s->candidate.dictionary_match, lookalike);
  s->relatedness = CalibratedR(s->raw_relatedness, cal.relatedness_null_mean,
                               cal.relatedness_null_sd, cal.relatedness_full_z, n);
}

// The external id and xrefs of a scored entity.
void AddSourceIds(const AlignmentBundle& bundle, ScoredEntity* s) {
  const LexiconEntry& e = bundle.lexicon.entries[s->candidate.entry];
  s->source_ids.push_back(e.external_id);
  s->source_ids.insert(s->source_ids.end(), e.xrefs.begin(), e.xrefs.end());
}

// What scoring needs besides the candidates: the question vector, its null (calibrated only).
struct ScoringContext {
  const AlignmentBundle& bundle;
  const std::vector<float>& question;
  int dim = 0;
  const MscaOptions& options;
  bool calibrate = false;
  QuestionNull null;
};

void FormConsistency(const MscaOptions& options, ScoredEntity* s) {
  s->consistency = Consistency(s->question_similarity, s->relatedness, options.lambda);
}

// S, R and the consistency C = (1 - lambda) S + lambda R of every candidate, plus its ids.
void ScoreCandidates(const ScoringContext& ctx, CandidateSet* set) {
  const size_t n = set->entities.size();
  RawSimilarities(ctx.bundle, ctx.question, ctx.dim, &set->entities);
  for (size_t a = 0; a < n; ++a) {
    ScoredEntity& s = set->entities[a];
    if (ctx.calibrate) {
      CalibrateScores(ctx.bundle.manifest.calibration, ctx.null, n, set->lookalike[a], &s);
    } else {
      s.question_similarity = s.raw_question_similarity;
      s.relatedness = s.raw_relatedness;
    }
    FormConsistency(ctx.options, &s);
    AddSourceIds(ctx.bundle, &s);
  }
}

// The candidates the LLM did not pick (LlmStep::kBeforeFilter), scored for the caller to see:
// S against the question, R against the set the filter saw (they are not part of it), once
// each (an entity some mention still proposes is in the set, not here).
std::vector<ScoredEntity> ScoreExcluded(const ScoringContext& ctx, const CandidateSet& set,
                                        LlmPreselection preselection) {
  absl::flat_hash_set<uint32_t> seen;
  for (const ScoredEntity& s : set.entities) seen.insert(s.candidate.entry);
  std::vector<ScoredEntity> out;
  for (auto& [mention, candidate] : preselection.excluded) {
    if (!seen.insert(candidate.entry).second) continue;
    ScoredEntity s;
    const float* v = ctx.bundle.enriched_row(candidate.entry);
    s.raw_question_similarity = Dot(v, ctx.question.data(), ctx.dim);
    double related = 0;
    for (const ScoredEntity& other : set.entities) {
      related += Dot(v, ctx.bundle.enriched_row(other.candidate.entry), ctx.dim);
    }
    const size_t n = set.entities.size();
    s.raw_relatedness = n > 0 ? static_cast<float>(related / static_cast<double>(n)) : 0.0f;
    const bool lookalike =
        !candidate.dictionary_match && preselection.named_mentions.count(mention);
    s.candidate = std::move(candidate);
    s.mention_index = mention;
    s.excluded_by_llm = true;
    if (ctx.calibrate) {
      CalibrateScores(ctx.bundle.manifest.calibration, ctx.null, n + 1, lookalike, &s);
    } else {
      s.question_similarity = s.raw_question_similarity;
      s.relatedness = s.raw_relatedness;
    }
    FormConsistency(ctx.options, &s);
    AddSourceIds(ctx.bundle, &s);
    out.push_back(std::move(s));
  }
  return out;
}

// Kept (C >= tau, or everything without MSCA) and rejected, each best first.
void SplitByThreshold(const MscaOptions& options, std::vector<ScoredEntity> candidates,
                      AlignResult* out) {
  for (ScoredEntity& s : candidates) {
    (!options.msca_enabled || s.consistency >= options.tau ? out->kept : out->rejected)
        .push_back(std::move(s));
  }
  std::sort(out->kept.begin(), out->kept.end(), ByConsistency);
  std::sort(out->rejected.begin(), out->rejected.end(), ByConsistency);
}

}  // namespace

absl::StatusOr<AlignResult> Aligner::Align(absl::string_view text, const MscaOptions& options,
                                           absl::Time deadline) const {
  IBGR_RETURN_IF_ERROR(ValidateText(text));
  IBGR_RETURN_IF_ERROR(ValidateMscaOptions(options));
  AlignResult out;
  out.effective = options;
  out.bundle_version = bundle_->manifest.version;
  out.encoder_id = encoder_->id();
  StageClock clock(&out.timings);

  IBGR_ASSIGN_OR_RETURN(ExtractResult extracted,
                        ExtractMentions(text, options.llm_mentions, deadline));
  out.mentions = std::move(extracted.mentions);
  out.degraded = std::move(extracted.degraded);
  clock.Lap("mentions");

  std::vector<MentionLink> links;
  IBGR_RETURN_IF_ERROR(
      LinkMentions(out.mentions, options.msca_enabled ? options.top_k : 1, &links));
  clock.Lap("candidates");

  // The paper's order: the LLM narrows each mention's top-K to its pick before MSCA scores.
  const bool llm_step = options.msca_enabled && options.llm_choice_below > 0 && llm_ != nullptr;
  LlmPreselection preselection;
  if (llm_step && options.llm_step == LlmStep::kBeforeFilter) {
    preselection = PreselectWithLlm(*llm_, bundle_->lexicon, text, options.llm_choice_below,
                                    options_, deadline, &links, &out.degraded);
    if (preselection.calls > 0) clock.Lap("llm");
  }

  CandidateSet candidates = MergeCandidates(std::move(links));
  for (ScoredEntity& s : candidates.entities) {
    s.chosen_by_llm = preselection.chosen.contains(s.candidate.entry);
  }
  IBGR_ASSIGN_OR_RETURN(std::vector<float> question, encoder_->Encode(text));
  const bool calibrate = options.calibrated && bundle_->manifest.calibration.method == "null-z-v1";
  out.effective.calibrated = calibrate;
  ScoringContext ctx{*bundle_, question, encoder_->dim(), options, calibrate, {}};
  if (calibrate && (!candidates.entities.empty() || !preselection.excluded.empty())) {
    ctx.null = QuestionNullOf(*bundle_, question.data());
  }
  ScoreCandidates(ctx, &candidates);
  std::vector<ScoredEntity> excluded = ScoreExcluded(ctx, candidates, std::move(preselection));
  SplitByThreshold(options, std::move(candidates.entities), &out);
  if (!excluded.empty()) {
    for (ScoredEntity& s : excluded) out.rejected.push_back(std::move(s));
    std::sort(out.rejected.begin(), out.rejected.end(), ByConsistency);
  }
  clock.Lap("score");

  // The earlier order: the LLM adds one of each weakly supported mention's rejected candidates.
  // Without an LLM the step does not exist: not a degradation (Degradation means "did not work
  // as configured"); a configured LLM that fails is one (RunLlmSelection reports it).
  if (llm_step && options.llm_step == LlmStep::kRescueRejected) {
    if (RunLlmSelection(*llm_, bundle_->lexicon, text, options.llm_choice_below, options_, deadline,
                        &out) > 0) {
      clock.Lap("llm");
    }
  }
  return out;
}

std::string FormatAlignResultTable(const AlignResult& r) {
  std::string out = absl::StrFormat(
      "bundle v%d  encoder %s  lambda=%.2f tau=%.2f top_k=%d msca=%s scores=%s llm_step=%s  "
      "mentions=%d\n",
      r.bundle_version, r.encoder_id, r.effective.lambda, r.effective.tau, r.effective.top_k,
      r.effective.msca_enabled ? "on" : "off", r.effective.calibrated ? "calibrated" : "raw",
      LlmStepName(r.effective.llm_step), r.mentions.size());
  auto section = [&](absl::string_view title, const std::vector<ScoredEntity>& list) {
    absl::StrAppendFormat(&out, "%s (%d)\n", title, list.size());
    if (list.empty()) return;
    absl::StrAppendFormat(&out, "  %-7s %-7s %-7s %-6s %-18s %-12s %-36s %s\n", "C", "S", "R",
                          "link", "id", "type", "name", "mention");
    for (const ScoredEntity& s : list) {
      const Mention& m = r.mentions[s.mention_index];
      std::string flags = m.negated ? " [negated]" : (m.uncertain ? " [uncertain]" : "");
      if (s.chosen_by_llm) flags += " [llm]";
      if (s.excluded_by_llm) flags += " [passed over by llm]";
      if (s.candidate.dictionary_match) flags += " [dict]";
      if (s.lookalike) flags += " [look-alike]";
      absl::StrAppendFormat(&out, "  %-7.3f %-7.3f %-7.3f %-6.3f %-18s %-12s %-36s \"%s\"%s\n",
                            s.consistency, s.question_similarity, s.relatedness,
                            s.candidate.similarity, s.candidate.external_id, s.candidate.type,
                            s.candidate.name.substr(0, 36), m.text, flags);
    }
  };
  section("kept", r.kept);
  section("rejected", r.rejected);
  for (const Degradation& d : r.degraded) {
    absl::StrAppend(&out, "degraded: ", d.component, ": ", d.reason, "\n");
  }
  for (const StageTiming& t : r.timings) {
    absl::StrAppendFormat(&out, "%s=%.2fms ", t.stage, t.duration_ms);
  }
  out += "\n";
  return out;
}

std::string FormatAlignResultJson(const AlignResult& r) {
  auto mention_json = [](const Mention& m) {
    return nlohmann::json{{"begin", m.begin},         {"end", m.end},
                          {"text", m.text},           {"normalized", m.normalized},
                          {"negated", m.negated},     {"uncertain", m.uncertain},
                          {"origin", m.origin},       {"expanded_from", m.expanded_from},
                          {"expansion", m.expansion}, {"expansion_id", m.expansion_id}};
  };
  auto entity_json = [&](const ScoredEntity& s) {
    return nlohmann::json{{"id", s.candidate.kg_id},
                          {"external_id", s.candidate.external_id},
                          {"name", s.candidate.name},
                          {"type", s.candidate.type},
                          {"mention", mention_json(r.mentions[s.mention_index])},
                          {"question_similarity", s.question_similarity},
                          {"relatedness", s.relatedness},
                          {"raw_question_similarity", s.raw_question_similarity},
                          {"raw_relatedness", s.raw_relatedness},
                          {"dictionary_match", s.candidate.dictionary_match},
                          {"lookalike", s.lookalike},
                          {"consistency", s.consistency},
                          {"link_similarity", s.candidate.similarity},
                          {"matched_name", s.candidate.matched_name},
                          {"chosen_by_llm", s.chosen_by_llm},
                          {"excluded_by_llm", s.excluded_by_llm},
                          {"source_ids", s.source_ids}};
  };
  nlohmann::json j;
  j["bundle_version"] = r.bundle_version;
  j["encoder_id"] = r.encoder_id;
  j["lambda"] = r.effective.lambda;
  j["tau"] = r.effective.tau;
  j["top_k"] = r.effective.top_k;
  j["msca_enabled"] = r.effective.msca_enabled;
  j["calibrated"] = r.effective.calibrated;
  j["llm_step"] = std::string(LlmStepName(r.effective.llm_step));
  j["mentions"] = nlohmann::json::array();
  for (const Mention& m : r.mentions) j["mentions"].push_back(mention_json(m));
  j["kept"] = nlohmann::json::array();
  for (const ScoredEntity& s : r.kept) j["kept"].push_back(entity_json(s));
  j["rejected"] = nlohmann::json::array();
  for (const ScoredEntity& s : r.rejected) j["rejected"].push_back(entity_json(s));
  j["degraded"] = nlohmann::json::array();
  for (const Degradation& d : r.degraded) {
    j["degraded"].push_back({{"component", d.component}, {"reason", d.reason}});
  }
  j["timings_ms"] = nlohmann::json::object();
  for (const StageTiming& t : r.timings) j["timings_ms"][t.stage] = t.duration_ms;
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace ibgraphrag::alignment
