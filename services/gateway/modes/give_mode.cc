#include "services/gateway/modes/give_mode.h"

#include <grpcpp/client_context.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/client.h"

namespace ibgraphrag::gateway {
namespace pb = ibgraphrag::v1;
namespace {

using Link = GiveMode::Link;
using Knowledge = GiveMode::Knowledge;

struct Member {
  uint32_t id = 0;
  std::string name;
};
using Group = std::vector<Member>;  // the queried entity first

constexpr char kRelationPrompt[] =
    "You are a medical expert. Name the relation between the two medical concepts from your "
    "knowledge, as a short phrase, in the form \"ans: <relation>\". Answer \"ans: none\" when "
    "they are not related.";
constexpr char kCheckPrompt[] =
    "You are a medical expert. Decide from your medical knowledge whether the statement is "
    "true. Answer \"ans: yes\" or \"ans: no\".";

// Entity groups: each aligned entity (alignment order) with the nearest KG concepts alignment
// proposed for the same mention and rejected, best link similarity first; no entity twice.
std::vector<Group> EntityGroups(const pb::AnswerResponse& response,
                                std::vector<pb::AlignedEntity> rejected,
                                const GiveOptions& options) {
  std::stable_sort(rejected.begin(), rejected.end(),
                   [](const pb::AlignedEntity& a, const pb::AlignedEntity& b) {
                     return a.link_similarity() > b.link_similarity();
                   });
  absl::flat_hash_set<uint32_t> used;
  std::vector<Group> groups;
  for (const pb::AlignedEntity& e : response.entities()) {
    if (static_cast<int>(groups.size()) >= options.max_groups) break;
    if (!used.insert(e.entity().id()).second) continue;
    Group group = {{e.entity().id(), e.entity().name()}};
    for (const pb::AlignedEntity& r : rejected) {
      if (static_cast<int>(group.size()) > options.group_size) break;
      if (r.mention().begin() != e.mention().begin() || r.mention().end() != e.mention().end()) {
        continue;
      }
      if (used.insert(r.entity().id()).second) {
        group.push_back({r.entity().id(), r.entity().name()});
      }
    }
    groups.push_back(std::move(group));
  }
  return groups;
}

// The KG triples among the groups' members (one hop around every member, both ends members).
grpc::Status KgLinks(const ModeCall& call, const PipelineStages& stages,
                     const absl::flat_hash_map<uint32_t, int>& group_of,
                     std::vector<pb::EvidenceTriple>* out) {
  if (group_of.empty()) return grpc::Status::OK;
  pb::RetrieveRequest retrieve;
  retrieve.set_question(call.request.question());
  for (const auto& [id, group] : group_of) retrieve.add_topic_entity_ids(id);
  std::sort(retrieve.mutable_topic_entity_ids()->begin(),
            retrieve.mutable_topic_entity_ids()->end());
  retrieve.set_top_k(1000);
  retrieve.set_max_hops(1);
  retrieve.set_max_candidates(5000);
  retrieve.set_mode(pb::SCORING_MODE_SHORTEST_PATH);
  const absl::Duration budget = std::max(absl::ZeroDuration(), (call.deadline - absl::Now()) / 4);
  std::unique_ptr<grpc::ClientContext> child = common::MakeChildContext(call.context, budget);
  pb::RetrieveResponse retrieved;
  const grpc::Status status = stages.Retriever().Retrieve(child.get(), retrieve, &retrieved);
  if (!status.ok()) return status;
  for (pb::EvidenceTriple& t : *retrieved.mutable_triples()) {
    if (group_of.contains(t.head().id()) && group_of.contains(t.tail().id())) {
      out->push_back(std::move(t));
    }
  }
  return grpc::Status::OK;
}

// Candidate links: within each group, the queried entity and each added concept (unless the KG
// links them already); across groups, every relation the KG has from one group to the other,
// for every member pair it does not already link.
std::vector<Link> CandidateLinks(const std::vector<Group>& groups,
                                 const absl::flat_hash_map<uint32_t, int>& group_of,
                                 const std::vector<pb::EvidenceTriple>& kg) {
  std::set<std::pair<uint32_t, uint32_t>> linked;                  // either direction
  std::set<std::tuple<uint32_t, std::string, uint32_t>> facts;     // (head, relation, tail)
  std::map<std::pair<int, int>, std::set<std::string>> relations;  // (from, to) group
  for (const pb::EvidenceTriple& t : kg) {
    linked.insert({t.head().id(), t.tail().id()});
    linked.insert({t.tail().id(), t.head().id()});
    facts.insert({t.head().id(), t.relation(), t.tail().id()});
    const int from = group_of.at(t.head().id()), to = group_of.at(t.tail().id());
    if (from != to) relations[{from, to}].insert(t.relation());
  }
  std::vector<Link> candidates;
  for (const Group& group : groups) {
    for (size_t k = 1; k < group.size(); ++k) {
      if (linked.count({group[0].id, group[k].id}) == 0) {
        candidates.push_back({group[0].id, group[0].name, "", group[k].id, group[k].name, true});
      }
    }
  }
  for (const auto& [pair, names] : relations) {
    for (const Member& u : groups[pair.first]) {
      for (const Member& v : groups[pair.second]) {
        for (const std::string& r : names) {
          if (facts.count({u.id, r, v.id}) == 0) {
            candidates.push_back({u.id, u.name, r, v.id, v.name, false});
          }
        }
      }
    }
  }
  return candidates;
}

std::string LinkLine(const Link& l) {
  return absl::StrCat("(", l.head_name, ", ", l.relation, ", ", l.tail_name, ")");
}

std::string TaskFormat(const pb::AnswerRequest& request) {
  if (request.task() == pb::TASK_FACT_VERIFICATION) {
    return "There is exactly one item: \"ans: SUPPORTED\" or \"ans: REFUTED\".";
  }
  if (request.options_size() > 0) {
    return "There is exactly one item: \"ans: <letter>) <option text>\".";
  }
  return "One item per answer.";
}

// The paper's progressive answer prompts: step 1 the affirmative knowledge; step 2 adds the
// first answer and the counterfactual knowledge; step 3 the refined answer and the KG facts.
pb::CallerPrompt AnswerPrompt(const pb::AnswerRequest& request, const Knowledge& knowledge,
                              int step, const std::vector<std::string>& previous) {
  pb::CallerPrompt prompt;
  prompt.set_version(absl::StrCat("give.answer", step, ".v1"));
  prompt.set_system(absl::StrCat(
      "You are a medical expert. Answer the question with the knowledge given and your own, "
      "reasoning step by step first. Your response should end with a list of items, each "
      "beginning with \"ans:\". ",
      TaskFormat(request)));
  std::string user = absl::StrCat("Question: ", request.question(), "\n");
  if (request.options_size() > 0) {
    absl::StrAppend(&user, "Options:\n");
    for (int i = 0; i < request.options_size(); ++i) {
      absl::StrAppend(&user, std::string(1, static_cast<char>('A' + i)), ") ", request.options(i),
                      "\n");
    }
  }
  absl::StrAppend(&user, "Affirmative knowledge (links your medical knowledge confirmed):\n");
  for (const Link& l : knowledge.affirmative) absl::StrAppend(&user, LinkLine(l), "\n");
  if (step >= 2) {
    absl::StrAppend(&user, "Your answer from it: ", previous[0], "\n",
                    "Counterfactual knowledge (links your medical knowledge rejected; they do "
                    "not hold):\n");
    for (const Link& l : knowledge.counterfactual) absl::StrAppend(&user, LinkLine(l), "\n");
  }
  if (step >= 3) {
    absl::StrAppend(&user, "Your refined answer: ", previous[1], "\n",
                    "Knowledge graph facts (certain):\n");
    for (const pb::EvidenceTriple& t : knowledge.kg) {
      absl::StrAppend(&user, "(", t.head().name(), ", ", t.relation(), ", ", t.tail().name(),
                      ")\n");
    }
  }
  absl::StrAppend(&user, step < 3 ? "Answer the question." : "Give your final answer.");
  prompt.set_user(std::move(user));
  return prompt;
}

}  // namespace

bool GiveMode::CheckLinks(const ModeCall& call, const PipelineStages& stages,
                          const std::vector<Link>& candidates, Knowledge* knowledge) const {
  const absl::Time window_end = absl::Now() + (call.deadline - absl::Now()) * options_.check_share;
  for (size_t i = 0; i < candidates.size(); ++i) {
    // A spent window leaves the rest unchecked (a check issued now could only time out, and
    // would eat the answers' time); the LLM answered so far, so the answers still use it.
    const absl::Time now = absl::Now();
    if (now >= window_end) {
      AddModeDegradation(call.response, kModeGive,
                         absl::StrCat(candidates.size() - i, " of ", candidates.size(),
                                      " candidate links were not checked: the check window (",
                                      options_.check_share, " of the time left) was spent"));
      break;
    }
    const Link& link = candidates[i];
    pb::AnswerRequest request = call.request;
    request.clear_options();
    pb::CallerPrompt prompt;
    if (link.inner) {
      request.set_task(pb::TASK_OPEN);
      request.set_question(absl::StrCat("How is ", link.head_name, " related to ", link.tail_name));
      prompt.set_version("give.relation.v1");
      prompt.set_system(kRelationPrompt);
      prompt.set_user(absl::StrCat("Concept A: ", link.head_name, "\nConcept B: ", link.tail_name));
    } else {
      request.set_task(pb::TASK_FACT_VERIFICATION);
      request.set_question(LinkLine(link));
      prompt.set_version("give.check.v1");
      prompt.set_system(kCheckPrompt);
      prompt.set_user(absl::StrCat("Statement: ", LinkLine(link)));
    }
    // now < window_end <= deadline: both durations are positive.
    const double share = absl::FDivDuration(window_end - now, call.deadline - now) /
                         static_cast<double>(candidates.size() - i);
    pb::AnswerResponse out;
    const grpc::Status status =
        AskReasoner(call, stages, request, &prompt, std::max(0.0, share), &out);
    if (!status.ok() || !out.answer().used_llm()) return false;
    if (!out.answer().parsed()) continue;  // neither affirmed nor rejected
    if (link.inner) {
      const std::string relation(absl::StripAsciiWhitespace(out.answer().text()));
      if (absl::AsciiStrToLower(relation) == "none") continue;
      Link named = link;
      named.relation = relation;
      knowledge->affirmative.push_back(std::move(named));
    } else if (out.answer().label() == pb::FACT_LABEL_SUPPORTED) {
      knowledge->affirmative.push_back(link);
    } else if (out.answer().label() == pb::FACT_LABEL_REFUTED) {
      knowledge->counterfactual.push_back(link);
    }
  }
  return true;
}

grpc::Status GiveMode::Run(const ModeCall& call, const PipelineStages& stages) const {
  std::vector<pb::AlignedEntity> rejected;
  ModeCall align_call = call;
  align_call.align_rejected = &rejected;
  grpc::Status status = AlignStage(align_call, stages);
  if (!status.ok()) return status;

  // Entity groups and the KG links among them.
  absl::Time started = absl::Now();
  const std::vector<Group> groups = EntityGroups(*call.response, std::move(rejected), options_);
  absl::flat_hash_map<uint32_t, int> group_of;
  for (size_t g = 0; g < groups.size(); ++g) {
    for (const Member& m : groups[g]) group_of.emplace(m.id, static_cast<int>(g));
  }
  Knowledge knowledge;
  status = KgLinks(call, stages, group_of, &knowledge.kg);
  if (!status.ok()) {
    AddModeDegradation(call.response, kModeGive,
                       absl::StrCat("KG links among the entity groups could not be read (",
                                    DescribeStatus(status), "); none are used"));
  }
  for (const pb::EvidenceTriple& t : knowledge.kg) *call.response->add_evidence() = t;
  stages.FinishStage(
      call, "retrieve", started,
      absl::StrCat(groups.size(), " entity groups, ", knowledge.kg.size(), " KG links"));

  // Veracity extrapolation: the LLM checks every candidate link (up to max_checks).
  started = absl::Now();
  std::vector<Link> candidates = CandidateLinks(groups, group_of, knowledge.kg);
  const size_t unchecked = candidates.size() > static_cast<size_t>(options_.max_checks)
                               ? candidates.size() - static_cast<size_t>(options_.max_checks)
                               : 0;
  candidates.resize(candidates.size() - unchecked);
  const bool llm = CheckLinks(call, stages, candidates, &knowledge);
  if (unchecked > 0) {
    AddModeDegradation(call.response, kModeGive,
                       absl::StrCat(unchecked, " candidate links beyond ", options_.max_checks,
                                    " were not checked"));
  }
  stages.FinishStage(call, "extrapolate", started,
                     absl::StrCat(knowledge.affirmative.size(), " affirmed, ",
                                  knowledge.counterfactual.size(), " rejected links"));
  return Answer(call, stages, knowledge, llm);
}

// The progressive answer; without an LLM the reasoner answers from the KG links alone.
grpc::Status GiveMode::Answer(const ModeCall& call, const PipelineStages& stages,
                              const Knowledge& knowledge, bool llm) const {
  std::vector<std::string> previous;
  for (int step = 1; llm && step <= 2; ++step) {
    const pb::CallerPrompt prompt = AnswerPrompt(call.request, knowledge, step, previous);
    pb::AnswerResponse out;
    const grpc::Status status =
        AskReasoner(call, stages, call.request, &prompt, options_.answer_share, &out);
    if (!status.ok() || !out.answer().used_llm()) {
      llm = false;
      break;
    }
    previous.push_back(out.answer().text());
  }
  if (!llm) {
    AddModeDegradation(call.response, kModeGive,
                       absl::StrCat("no LLM answered: only the ", knowledge.kg.size(),
                                    " links present in the KG are kept (no veracity "
                                    "extrapolation, no counterfactual knowledge)"));
    return ReasonStage(call, stages);
  }
  const pb::CallerPrompt prompt = AnswerPrompt(call.request, knowledge, 3, previous);
  return ReasonStage(
      ModeCall{call.context, call.deadline, call.request, call.response, call.sink, &prompt},
      stages);
}

}  // namespace ibgraphrag::gateway
