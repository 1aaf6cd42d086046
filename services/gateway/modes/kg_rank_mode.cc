#include "services/gateway/modes/kg_rank_mode.h"

#include <grpcpp/client_context.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/client.h"
#include "common/text_words.h"
#include "common/utf8.h"
#include "services/gateway/request_validation.h"

namespace ibgraphrag::gateway {
namespace pb = ibgraphrag::v1;
namespace {

void Flag(pb::AnswerResponse* response, std::string reason) {
  AddModeDegradation(response, kModeKgRank, std::move(reason));
}

// Lower-case content words of a triple's text, sorted and unique: MMR's redundancy measure.
std::vector<std::string> TripleWords(const pb::EvidenceTriple& t) {
  const std::string text =
      absl::AsciiStrToLower(absl::StrCat(t.head().name(), " ", t.relation(), " ", t.tail().name()));
  std::vector<std::string> words;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && common::IsWordByte(static_cast<unsigned char>(text[i]))) continue;
    if (i > start) {
      std::string word = text.substr(start, i - start);
      if (!common::IsEnglishStopWord(word)) words.push_back(std::move(word));
    }
    start = i + 1;
  }
  std::sort(words.begin(), words.end());
  words.erase(std::unique(words.begin(), words.end()), words.end());
  return words;
}

double Jaccard(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.empty() && b.empty()) return 1.0;
  std::vector<std::string> common;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(common));
  const size_t united = a.size() + b.size() - common.size();
  return static_cast<double>(common.size()) / static_cast<double>(united);
}

// Maximal marginal relevance as the reference code computes it: the most similar triple first,
// then repeatedly the one maximising relevance - (base + delta * |selected|) * mean redundancy
// to the selected. Relevance is the encoder similarity the retriever returned; redundancy is
// word overlap, as the gateway holds no embeddings.
std::vector<pb::EvidenceTriple> SelectByMmr(std::vector<pb::EvidenceTriple> ranked,
                                            const KgRankOptions& options) {
  const size_t want = std::min(ranked.size(), static_cast<size_t>(options.mmr_top_k));
  std::vector<std::vector<std::string>> words;
  words.reserve(ranked.size());
  for (const pb::EvidenceTriple& t : ranked) words.push_back(TripleWords(t));
  std::vector<int> selected;
  std::vector<double> redundancy(ranked.size(), 0.0);  // summed over the selected
  std::vector<bool> taken(ranked.size(), false);
  while (selected.size() < want) {
    const double weight =
        options.mmr_base_weight + options.mmr_delta_weight * static_cast<double>(selected.size());
    int best = -1;
    double best_score = 0.0;
    for (size_t i = 0; i < ranked.size(); ++i) {
      if (taken[i]) continue;
      const double mean = selected.empty() ? 0.0 : redundancy[i] / selected.size();
      const double score = ranked[i].score() - weight * mean;
      if (best < 0 || score > best_score) {
        best = static_cast<int>(i);
        best_score = score;
      }
    }
    taken[best] = true;
    selected.push_back(best);
    for (size_t i = 0; i < ranked.size(); ++i) {
      if (!taken[i]) redundancy[i] += Jaccard(words[i], words[best]);
    }
  }
  std::vector<pb::EvidenceTriple> out;
  out.reserve(selected.size());
  for (int i : selected) out.push_back(std::move(ranked[i]));
  return out;
}

// The one-hop triples of `entity_id`, scored by the retriever in `mode` against `query`.
grpc::Status RetrieveOneHop(const ModeCall& call, const PipelineStages& stages,
                            const KgRankOptions& options, uint32_t entity_id,
                            const std::string& query, pb::ScoringMode mode, uint32_t top_k,
                            absl::Time until, pb::RetrieveResponse* out) {
  pb::RetrieveRequest retrieve;
  // The baseline retrieves as its paper does, without IBGraphRAG's question intent (the intent
  // reaches its answer through the gateway's reasoner call, AnswerResponse.intent).
  retrieve.set_intent_disabled(true);
  retrieve.set_question(query);
  retrieve.add_topic_entity_ids(entity_id);
  retrieve.set_top_k(top_k);
  retrieve.set_max_hops(1);
  retrieve.set_max_candidates(options.max_candidates);
  retrieve.set_mode(mode);
  std::unique_ptr<grpc::ClientContext> child =
      common::MakeChildContext(call.context, std::max(absl::ZeroDuration(), until - absl::Now()));
  return stages.Retriever().Retrieve(child.get(), retrieve, out);
}

// KG-Rank's Medical NER step, asked in the reasoner's multi-answer format.
constexpr char kNerSystemPrompt[] =
    "You are a medical expert. Extract the medical terminologies (diseases, drugs, genes, "
    "proteins, symptoms, anatomy, procedures) that the question mentions. Do not answer the "
    "question. Your response should be a list of items, each beginning with \"ans:\", one "
    "terminology per item.";

// Distinct entity ids in alignment order, at most `limit`.
std::vector<uint32_t> EntityIds(const google::protobuf::RepeatedPtrField<pb::AlignedEntity>& kept,
                                int limit) {
  std::vector<uint32_t> ids;
  for (const pb::AlignedEntity& e : kept) {
    if (static_cast<int>(ids.size()) >= limit) break;
    const uint32_t id = e.entity().id();
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }
  return ids;
}

// Why the NER step gave no terms, for the response's degradation.
std::string NoTermsReason(const grpc::Status& status, const pb::Answer& answer) {
  if (!status.ok()) return absl::StrCat("failed (", DescribeStatus(status), ")");
  if (!answer.used_llm())
    return absl::StrCat("was answered by '", answer.backend(), "', not an LLM");
  return "listed no terms";
}

}  // namespace

grpc::Status KgRankMode::Run(const ModeCall& call, const PipelineStages& stages) const {
  grpc::Status status = AlignStage(call, stages);
  if (!status.ok()) return status;

  absl::Time started = absl::Now();
  const std::vector<uint32_t> entities = RankingEntities(call, stages);
  stages.FinishStage(call, "extract", started, absl::StrCat(entities.size(), " ranking entities"));

  started = absl::Now();
  const std::string query = ExpandedQuery(call, stages);
  stages.FinishStage(
      call, "draft", started,
      query == call.request.question() ? "answer expansion skipped" : "answer expanded the query");

  started = absl::Now();
  RankEvidence(call, stages, entities, query);
  stages.FinishStage(call, "retrieve", started,
                     absl::StrCat(call.response->evidence_size(), " evidence triples"));
  return ReasonStage(call, stages);
}

// Answer expansion: the reasoner drafts an answer without evidence and the question plus the
// draft becomes the ranking query. Without an LLM (the reasoner answered extractively, or
// failed) the question alone is the query and the response says why.
std::string KgRankMode::ExpandedQuery(const ModeCall& call, const PipelineStages& stages) const {
  pb::AnswerResponse draft;
  const grpc::Status status =
      AskReasoner(call, stages, call.request, nullptr, options_.draft_share, &draft);
  if (!status.ok()) {
    Flag(call.response,
         absl::StrCat("answer expansion skipped: the draft answer failed (", DescribeStatus(status),
                      "); triples ranked against the question"));
    return call.request.question();
  }
  if (!draft.answer().used_llm()) {
    Flag(call.response, absl::StrCat("answer expansion skipped: the draft was answered by '",
                                     draft.answer().backend(),
                                     "', not an LLM; triples ranked against the question only"));
    return call.request.question();
  }
  const std::string expanded = absl::StrCat(call.request.question(), "\n", draft.answer().text(),
                                            "\n", draft.answer().rationale());
  // The retriever refuses questions over its limit (the gateway's, 16 KiB): a long rationale
  // would fail every per-entity retrieval, so the query is cut at a character boundary.
  if (expanded.size() <= kMaxQuestionBytes) return expanded;
  Flag(call.response, absl::StrCat("answer expansion: the expanded query (", expanded.size(),
                                   " bytes) was cut to the retriever's ", kMaxQuestionBytes,
                                   "-byte question limit"));
  return std::string(common::Utf8Prefix(expanded, kMaxQuestionBytes));
}

// KG-Rank's entity step: the LLM lists the question's medical terms (one "ans:" item each) and
// the alignment service maps them to KG entities. Without an LLM, or when no term maps, the
// question's aligned entities, and the response says why.
std::vector<uint32_t> KgRankMode::RankingEntities(const ModeCall& call,
                                                  const PipelineStages& stages) const {
  const std::vector<uint32_t> aligned = EntityIds(call.response->entities(), options_.max_entities);
  pb::AnswerRequest ner_request = call.request;
  ner_request.set_task(pb::TASK_OPEN);
  ner_request.clear_options();
  pb::CallerPrompt prompt;
  prompt.set_version("kg_rank.ner.v1");
  prompt.set_system(kNerSystemPrompt);
  prompt.set_user(absl::StrCat("Question: ", call.request.question()));
  pb::AnswerResponse extracted;
  grpc::Status status =
      AskReasoner(call, stages, ner_request, &prompt, options_.ner_share, &extracted);
  if (!status.ok() || !extracted.answer().used_llm() || extracted.answer().answers().empty()) {
    Flag(call.response, absl::StrCat("entities from the alignment service: the NER step ",
                                     NoTermsReason(status, extracted.answer())));
    return aligned;
  }
  // The terms, one per line, are aligned as a text of their own (mentions map to KG entities).
  pb::AnswerRequest terms;
  terms.set_question(std::string(
      common::Utf8Prefix(absl::StrJoin(extracted.answer().answers(), "\n"), kMaxQuestionBytes)));
  *terms.mutable_pipeline() = call.request.pipeline();
  pb::AnswerResponse mapped;
  status = stages.Align(ModeCall{call.context, call.deadline, terms, &mapped, nullptr});
  const std::vector<uint32_t> ids = EntityIds(mapped.entities(), options_.max_entities);
  if (!status.ok() || ids.empty()) {
    Flag(call.response,
         absl::StrCat("entities from the alignment service: the LLM's ",
                      extracted.answer().answers_size(), " terms mapped to no KG entity",
                      status.ok() ? "" : absl::StrCat(" (", DescribeStatus(status), ")")));
    return aligned;
  }
  return ids;
}

// Per question entity: one-hop triples by similarity to `query` (encoder cosine), MMR, then the
// trained scorer's order; merged over entities, best first.
void KgRankMode::RankEvidence(const ModeCall& call, const PipelineStages& stages,
                              const std::vector<uint32_t>& entities,
                              const std::string& query) const {
  const absl::Time window_end =
      absl::Now() + (call.deadline - absl::Now()) * options_.retrieve_share;
  absl::flat_hash_map<std::string, int> seen;  // triple key -> index in evidence
  std::vector<pb::EvidenceTriple> evidence;
  for (size_t i = 0; i < entities.size(); ++i) {
    // Each entity gets an equal share of what is left of the window, half for each call.
    const absl::Duration share = (window_end - absl::Now()) / (2 * (entities.size() - i));
    std::vector<pb::EvidenceTriple> ranked = RankEntity(call, stages, entities[i], query, share);
    for (pb::EvidenceTriple& t : ranked) {
      const std::string key = EvidenceKey(t);
      auto [it, inserted] = seen.emplace(key, static_cast<int>(evidence.size()));
      if (inserted) {
        evidence.push_back(std::move(t));
      } else if (t.score() > evidence[it->second].score()) {
        evidence[it->second].set_score(t.score());
      }
    }
  }
  std::stable_sort(evidence.begin(), evidence.end(),
                   [](const pb::EvidenceTriple& a, const pb::EvidenceTriple& b) {
                     return a.score() > b.score();
                   });
  for (pb::EvidenceTriple& t : evidence) *call.response->add_evidence() = std::move(t);
}

std::vector<pb::EvidenceTriple> KgRankMode::RankEntity(const ModeCall& call,
                                                       const PipelineStages& stages,
                                                       uint32_t entity, const std::string& query,
                                                       absl::Duration budget) const {
  pb::RetrieveResponse similar;
  grpc::Status status =
      RetrieveOneHop(call, stages, options_, entity, query, pb::SCORING_MODE_COSINE,
                     options_.similarity_top_k, absl::Now() + budget, &similar);
  if (!status.ok()) {
    Flag(call.response, absl::StrCat("entity ", entity, ": similarity ranking failed (",
                                     DescribeStatus(status), "); its triples are left out"));
    return {};
  }
  if (call.response->versions().kg_version().empty()) {
    call.response->mutable_versions()->set_kg_version(similar.kg_version());
  }
  std::vector<pb::EvidenceTriple> selected(similar.mutable_triples()->begin(),
                                           similar.mutable_triples()->end());
  selected = SelectByMmr(std::move(selected), options_);
  if (selected.empty()) return selected;

  // Re-ranking. The paper's medical cross-encoder is not available here. By default the
  // baseline's own stand-in re-ranks: the suite encoder's similarity of each triple to the
  // question itself (the ranking above used the expanded query). "ibrp" is the hybrid: the
  // retriever's trained scorer (IBGraphRAG's) scores the neighbourhood for the question.
  const bool hybrid = call.request.pipeline().kg_rank_reranker() == "ibrp";
  auto by_score = [](const pb::EvidenceTriple& a, const pb::EvidenceTriple& b) {
    return a.score() > b.score();
  };
  if (!hybrid && query == call.request.question()) {
    // Without answer expansion the ranking above already scored every triple against the
    // question itself: its scores are the re-ranker's, no second call needed.
    std::stable_sort(selected.begin(), selected.end(), by_score);
    return selected;
  }
  pb::RetrieveResponse trained;
  status = RetrieveOneHop(call, stages, options_, entity, call.request.question(),
                          hybrid ? pb::SCORING_MODE_IBRP : pb::SCORING_MODE_COSINE, 1000,
                          absl::Now() + budget, &trained);
  if (!status.ok()) {
    Flag(call.response,
         absl::StrCat("entity ", entity, ": re-ranking by ",
                      hybrid ? "the trained scorer (ibrp hybrid)" : "encoder similarity",
                      " failed (", DescribeStatus(status), "); MMR order kept"));
    return selected;
  }
  if (hybrid) {
    call.response->mutable_versions()->set_retriever_model_version(trained.model_version());
  }
  absl::flat_hash_map<std::string, float> scores;
  for (const pb::EvidenceTriple& t : trained.triples()) scores.emplace(EvidenceKey(t), t.score());
  for (pb::EvidenceTriple& t : selected) {
    auto it = scores.find(EvidenceKey(t));
    t.set_score(it == scores.end() ? 0.0f : it->second);
  }
  std::stable_sort(selected.begin(), selected.end(), by_score);
  return selected;
}

}  // namespace ibgraphrag::gateway
