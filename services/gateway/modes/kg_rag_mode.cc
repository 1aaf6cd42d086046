#include "services/gateway/modes/kg_rag_mode.h"

#include <grpcpp/client_context.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/client.h"
#include "nlohmann/json.hpp"

namespace ibgraphrag::gateway {
namespace pb = ibgraphrag::v1;
namespace {

using OrderedJson = nlohmann::ordered_json;

// The paper's mode 2/3 prior knowledge, word for word.
constexpr const char* kPriorKnowledge[] = {
    "Provenance & Symptoms information is useless.",
    "Similar diseases tend to have similar gene associations."};

// KG-RAG's system prompts (BaranziniLab/KG_RAG system_prompts.yaml): MCQ_QUESTION,
// TRUE_FALSE_QUESTION, and for open questions KG_RAG_BASED_TEXT_GENERATION with the JSON answer
// format of the other two (so the parser reads it).
std::string SystemPrompt(pb::Task task) {
  constexpr char kIntro[] =
      "You are an expert biomedical researcher. For answering the Question at the end, you need "
      "to first read the Context provided.\n";
  switch (task) {
    case pb::TASK_FACT_VERIFICATION:
      return absl::StrCat(
          kIntro,
          "Based on that Context, provide your answer in the following JSON "
          "format:\n{\n  \"answer\": \"True\"\n}\nOR\n{\n  \"answer\": \"False\"\n}");
    case pb::TASK_OPEN:
      return absl::StrCat(kIntro,
                          "Then give your final answer briefly, by citing the Provenance "
                          "information from the context, in the following JSON format:\n{\n  "
                          "\"answer\": <answer>\n}");
    default:
      return absl::StrCat(kIntro,
                          "Based on that Context, provide your answer in the following JSON "
                          "format for the Question asked.\n{\n  \"answer\": <correct answer>\n}");
  }
}

pb::Task ResolvedTask(const pb::AnswerRequest& request) {
  if (request.task() != pb::TASK_UNSPECIFIED) return request.task();
  return request.options_size() > 0 ? pb::TASK_MULTIPLE_CHOICE : pb::TASK_OPEN;
}

// The option an aligned entity was found in (mentions index the question, then one line per
// option: common::AlignmentText); -1 for the question itself.
int OptionOf(const pb::AlignedEntity& entity, const pb::AnswerRequest& request) {
  size_t line_start = request.question().size() + 1;
  if (entity.mention().begin() < line_start) return -1;
  for (int i = 0; i < request.options_size(); ++i) {
    const size_t line_end = line_start + request.options(i).size();
    if (entity.mention().begin() < line_end) return i;
    line_start = line_end + 1;
  }
  return -1;
}

// numpy.percentile's default (linear interpolation between the closest ranks).
double Percentile(std::vector<double> values, double percent) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const double rank = percent / 100.0 * static_cast<double>(values.size() - 1);
  const size_t low = static_cast<size_t>(std::floor(rank));
  const size_t high = std::min(low + 1, values.size() - 1);
  return values[low] + (rank - static_cast<double>(low)) * (values[high] - values[low]);
}

// A triple as a KG-RAG context sentence ("Disease X associates Gene Y and Provenance of this
// association is Z").
std::string Sentence(const pb::EvidenceTriple& t) {
  std::string sentence = absl::StrCat(t.head().name(), " ", t.relation(), " ", t.tail().name());
  std::vector<std::string> sources(t.sources().begin(), t.sources().end());
  if (sources.empty() && !t.source().empty()) sources.push_back(t.source());
  if (!sources.empty()) {
    absl::StrAppend(&sentence, " and Provenance of this association is ",
                    absl::StrJoin(sources, ", "));
  }
  return sentence;
}

// The paper's context score: its length, +100 per option (first five) and +50 per disease it
// mentions; 0 for a context under 30 characters.
double ContextQuality(const std::string& text, const pb::AnswerRequest& request,
                      const std::vector<std::string>& diseases) {
  if (text.size() < 30) return 0.0;
  const std::string lower = absl::AsciiStrToLower(text);
  double score = static_cast<double>(text.size());
  for (int i = 0; i < std::min(5, request.options_size()); ++i) {
    if (absl::StrContains(lower, absl::AsciiStrToLower(request.options(i)))) score += 100;
  }
  for (const std::string& disease : diseases) {
    if (absl::StrContains(lower, absl::AsciiStrToLower(disease))) score += 50;
  }
  return score;
}

// Context quality tiers (paper 004 Table 2) and the reasoning each asks for.
struct Tier {
  const char* name;
  const char* strategy;
};

Tier TierFor(double best_score, bool any_context) {
  if (!any_context) {
    return {"NONE",
            "No relevant context was retrieved: rely on established biomedical knowledge and "
            "acknowledge low confidence."};
  }
  if (best_score > 500) {
    return {"HIGH",
            "Evidence-based: score each option using the retrieved facts and trust the context "
            "over general knowledge."};
  }
  if (best_score > 200) {
    return {"MEDIUM",
            "Evidence-based: score each option using the retrieved facts and trust the context "
            "over general knowledge."};
  }
  return {"LOW",
          "Balanced: use the sparse context together with established biomedical principles."};
}

// The user message of paper mode 0-3 with the tier's guidance.
std::string UserPrompt(int mode, const std::string& context, const Tier& tier, int sources,
                       const pb::AnswerRequest& request) {
  const std::string quality = absl::StrCat(tier.name, " - context from ", sources, " sources");
  std::string rendered;
  if (mode == 1 || mode == 3) {
    OrderedJson json;
    json["retrieved_information"] = context;
    if (mode == 3) json["prior_knowledge_notes"] = {kPriorKnowledge[0], kPriorKnowledge[1]};
    json["context_quality"] = quality;
    json["reasoning_strategy"] = tier.strategy;
    rendered = json.dump(2);
  } else {
    rendered = context;
    if (mode == 2) absl::StrAppend(&rendered, " ", kPriorKnowledge[0], " ", kPriorKnowledge[1]);
    absl::StrAppend(&rendered, "\nContext quality: ", quality, ". ", tier.strategy);
  }
  std::string question = request.question();
  if (request.options_size() > 0 && !absl::StrContains(question, "Given list")) {
    absl::StrAppend(&question, " Given list is: ", absl::StrJoin(request.options(), ", "));
  }
  return absl::StrCat("Context: ", rendered, "\nQuestion: ", question);
}

}  // namespace

std::vector<KgRagMode::Strategy> KgRagMode::Strategies(const ModeCall& call) const {
  const pb::AnswerRequest& request = call.request;
  std::vector<std::pair<uint32_t, std::string>> diseases;  // question's disease entities
  std::vector<std::pair<int, uint32_t>> options;           // (option, entity) in option order
  for (const pb::AlignedEntity& e : call.response->entities()) {
    const int option = OptionOf(e, request);
    if (option >= 0) {
      const bool seen = std::any_of(options.begin(), options.end(),
                                    [option](const auto& o) { return o.first == option; });
      if (!seen) options.emplace_back(option, e.entity().id());
    } else if (e.entity().type() == "disease") {
      diseases.emplace_back(e.entity().id(), e.entity().name());
    }
  }
  std::sort(options.begin(), options.end());
  const int volume = options_.context_volume;
  const double minimum = request.pipeline().has_kg_rag_minimum_similarity()
                             ? request.pipeline().kg_rag_minimum_similarity()
                             : options_.minimum_similarity;
  std::vector<Strategy> strategies;
  Strategy full{"full_question", request.question(), {}, volume, minimum};
  for (const auto& [id, name] : diseases) full.nodes.push_back(id);
  strategies.push_back(full);
  if (ResolvedTask(request) != pb::TASK_MULTIPLE_CHOICE) return strategies;
  // The paper's multi-strategy retrieval for multiple choice, with its relaxed thresholds.
  for (size_t i = 0; i < diseases.size(); ++i) {
    strategies.push_back({absl::StrCat("disease_", i + 1),
                          diseases[i].second,
                          {diseases[i].first},
                          volume / 2,
                          minimum * 0.7});
  }
  for (size_t i = 0; i < options.size() && i < 3; ++i) {
    const auto& [option, id] = options[i];
    strategies.push_back({absl::StrCat("option_", std::string(1, static_cast<char>('A' + option))),
                          absl::StrCat(request.options(option), " disease association"),
                          {id},
                          volume / 3,
                          minimum * 0.6});
  }
  if (diseases.size() >= 2) {
    strategies.push_back(
        {"disease_combined",
         absl::StrCat(diseases[0].second, " ", diseases[1].second, " shared genetic basis"),
         {diseases[0].first, diseases[1].first},
         volume,
         minimum * 0.75});
  }
  return strategies;
}

// KG-RAG's context pruning per node: cosine of each one-hop sentence to the query; keep those
// above both the node's percentile and the minimum, best first, volume / nodes per node.
KgRagMode::Context KgRagMode::Retrieve(const ModeCall& call, const PipelineStages& stages,
                                       const Strategy& strategy, absl::Time until) const {
  Context context;
  context.name = strategy.name;
  if (strategy.nodes.empty()) return context;
  const size_t per_node = std::max<size_t>(1, strategy.volume / strategy.nodes.size());
  std::vector<std::string> sentences;
  for (size_t n = 0; n < strategy.nodes.size(); ++n) {
    pb::RetrieveRequest retrieve;
    // The baseline retrieves as its paper does, without IBGraphRAG's question intent (the intent
    // reaches its answer through the gateway's reasoner call, AnswerResponse.intent).
    retrieve.set_intent_disabled(true);
    retrieve.set_question(strategy.query);
    retrieve.add_topic_entity_ids(strategy.nodes[n]);
    retrieve.set_top_k(1000);
    retrieve.set_max_hops(1);
    retrieve.set_max_candidates(options_.max_candidates);
    retrieve.set_mode(pb::SCORING_MODE_COSINE);
    const absl::Duration budget = (until - absl::Now()) / (strategy.nodes.size() - n);
    if (budget <= absl::ZeroDuration()) {  // the window is spent: no doomed calls
      AddModeDegradation(call.response, kModeKgRag,
                         absl::StrCat("strategy ", strategy.name, ": ", strategy.nodes.size() - n,
                                      " entities not retrieved: the retrieval window was spent"));
      break;
    }
    std::unique_ptr<grpc::ClientContext> child = common::MakeChildContext(call.context, budget);
    pb::RetrieveResponse retrieved;
    const grpc::Status status = stages.Retriever().Retrieve(child.get(), retrieve, &retrieved);
    if (!status.ok()) {
      AddModeDegradation(
          call.response, kModeKgRag,
          absl::StrCat("strategy ", strategy.name, ": retrieval for entity ", strategy.nodes[n],
                       " failed (", DescribeStatus(status), "); its context is left out"));
      continue;
    }
    // The retriever's COSINE score is (1 + cosine) / 2; the thresholds are on the cosine.
    std::vector<double> cosines;
    for (const pb::EvidenceTriple& t : retrieved.triples()) cosines.push_back(2.0 * t.score() - 1);
    const double threshold =
        std::max(Percentile(cosines, options_.similarity_percentile), strategy.minimum_similarity);
    size_t kept = 0;
    for (int i = 0; i < retrieved.triples_size() && kept < per_node; ++i) {  // best first
      if (cosines[i] <= threshold) continue;
      sentences.push_back(Sentence(retrieved.triples(i)));
      context.triples.push_back(retrieved.triples(i));
      ++kept;
    }
  }
  if (!sentences.empty()) context.text = absl::StrCat(absl::StrJoin(sentences, ". "), ".");
  return context;
}

// Every strategy's context, scored; the best three make the evidence and the prompt's context.
KgRagMode::Selection KgRagMode::SelectContexts(const ModeCall& call,
                                               const PipelineStages& stages) const {
  const std::vector<Strategy> strategies = Strategies(call);
  std::vector<std::string> diseases;
  for (const pb::AlignedEntity& e : call.response->entities()) {
    if (OptionOf(e, call.request) < 0 && e.entity().type() == "disease") {
      diseases.push_back(e.entity().name());
    }
  }
  const absl::Time until = absl::Now() + (call.deadline - absl::Now()) * options_.retrieve_share;
  std::vector<Context> contexts;
  for (size_t i = 0; i < strategies.size(); ++i) {
    // A spent retrieval window leaves the remaining strategies out (their calls could only time
    // out) and keeps the rest of the deadline for the answer.
    if (absl::Now() >= until) {
      AddModeDegradation(call.response, kModeKgRag,
                         absl::StrCat(strategies.size() - i, " of ", strategies.size(),
                                      " retrieval strategies were not run: the retrieval window (",
                                      options_.retrieve_share, " of the time left) was spent"));
      break;
    }
    const absl::Time share = absl::Now() + (until - absl::Now()) / (strategies.size() - i);
    contexts.push_back(Retrieve(call, stages, strategies[i], share));
    contexts.back().quality = ContextQuality(contexts.back().text, call.request, diseases);
  }
  std::stable_sort(contexts.begin(), contexts.end(),
                   [](const Context& a, const Context& b) { return a.quality > b.quality; });
  Selection selection;
  selection.strategies = static_cast<int>(strategies.size());
  absl::flat_hash_set<std::string> seen;
  for (size_t i = 0; i < contexts.size() && i < 3 && contexts[i].quality > 0; ++i) {
    selection.texts.push_back(contexts[i].text);
    for (pb::EvidenceTriple& t : contexts[i].triples) {
      if (seen.insert(EvidenceKey(t)).second) *call.response->add_evidence() = std::move(t);
    }
  }
  selection.best_quality = contexts.empty() ? 0.0 : contexts.front().quality;
  return selection;
}

grpc::Status KgRagMode::Run(const ModeCall& call, const PipelineStages& stages) const {
  const grpc::Status status = AlignStage(call, stages);
  if (!status.ok()) return status;

  const absl::Time started = absl::Now();
  const Selection selection = SelectContexts(call, stages);
  const Tier tier = TierFor(selection.best_quality, !selection.texts.empty());
  stages.FinishStage(call, "retrieve", started,
                     absl::StrCat(selection.strategies, " strategies, context quality ", tier.name,
                                  ", ", call.response->evidence_size(), " evidence triples"));

  // The paper's prompt mode, answered by self-consistency over its temperatures.
  const pb::PipelineOptions& p = call.request.pipeline();
  const int mode =
      p.has_kg_rag_prompt_mode() ? static_cast<int>(p.kg_rag_prompt_mode()) : options_.prompt_mode;
  pb::CallerPrompt prompt;
  prompt.set_version(absl::StrCat("kg_rag.mode", mode, ".", absl::AsciiStrToLower(tier.name)));
  prompt.set_system(SystemPrompt(ResolvedTask(call.request)));
  prompt.set_user(UserPrompt(mode,
                             absl::StrJoin(selection.texts, "\n\n=== RETRIEVED CONTEXT ===\n"),
                             tier, static_cast<int>(selection.texts.size()), call.request));
  pb::AnswerRequest request = call.request;
  pb::SelfConsistency* sc = request.mutable_pipeline()->mutable_self_consistency();
  if (sc->samples() == 0 && sc->temperatures().empty()) {
    for (double t : options_.temperatures) sc->add_temperatures(static_cast<float>(t));
  }
  return ReasonStage(
      ModeCall{call.context, call.deadline, request, call.response, call.sink, &prompt}, stages);
}

}  // namespace ibgraphrag::gateway
