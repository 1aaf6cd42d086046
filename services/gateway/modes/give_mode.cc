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
// yes / no / maybe, as the paper's Algorithm 1 asks: "maybe" (the LLM's knowledge does not
// decide the link) puts the link in neither set.
constexpr char kCheckPrompt[] =
    "You are a medical expert. Decide from your medical knowledge whether the statement is "
    "true. Answer \"ans: yes\", \"ans: no\", or \"ans: maybe\" when your knowledge does not "
    "decide it.";

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

// The `top_k` best triples within `hops` of `topics`, in `budget` (shortest-path scoring ranks
// the triples on topic-topic paths first, so these survive the top-k).
grpc::Status RetrieveAround(const ModeCall& call, const PipelineStages& stages,
                            std::vector<uint32_t> topics, int hops, int top_k,
                            absl::Duration budget, pb::RetrieveResponse* out) {
  pb::RetrieveRequest retrieve;
  // The baseline retrieves as its paper does, without IBGraphRAG's question intent (the intent
  // reaches its answer through the gateway's reasoner call, AnswerResponse.intent).
  retrieve.set_intent_disabled(true);
  retrieve.set_question(call.request.question());
  std::sort(topics.begin(), topics.end());
  for (uint32_t id : topics) retrieve.add_topic_entity_ids(id);
  retrieve.set_top_k(top_k);
  retrieve.set_max_hops(hops);
  retrieve.set_max_candidates(5000);
  retrieve.set_mode(pb::SCORING_MODE_SHORTEST_PATH);
  std::unique_ptr<grpc::ClientContext> child =
      common::MakeChildContext(call.context, std::max(absl::ZeroDuration(), budget));
  return stages.Retriever().Retrieve(child.get(), retrieve, out);
}

// The KG triples among the groups' members (one hop around every member, both ends members).
grpc::Status KgLinks(const ModeCall& call, const PipelineStages& stages,
                     const absl::flat_hash_map<uint32_t, int>& group_of,
                     std::vector<pb::EvidenceTriple>* out) {
  if (group_of.empty()) return grpc::Status::OK;
  std::vector<uint32_t> topics;
  for (const auto& [id, group] : group_of) topics.push_back(id);
  pb::RetrieveResponse retrieved;
  const grpc::Status status = RetrieveAround(call, stages, std::move(topics), 1, 1000,
                                             (call.deadline - absl::Now()) / 4, &retrieved);
  if (!status.ok()) return status;
  for (pb::EvidenceTriple& t : *retrieved.mutable_triples()) {
    if (group_of.contains(t.head().id()) && group_of.contains(t.tail().id())) {
      out->push_back(std::move(t));
    }
  }
  return grpc::Status::OK;
}

// Pairs of groups (a < b) no KG link joins, in either direction.
std::vector<std::pair<int, int>> UnlinkedPairs(int group_count,
                                               const absl::flat_hash_map<uint32_t, int>& group_of,
                                               const std::vector<pb::EvidenceTriple>& kg) {
  std::set<std::pair<int, int>> linked;
  for (const pb::EvidenceTriple& t : kg) {
    const int from = group_of.at(t.head().id()), to = group_of.at(t.tail().id());
    linked.insert({std::min(from, to), std::max(from, to)});
  }
  std::vector<std::pair<int, int>> pairs;
  for (int a = 0; a < group_count; ++a) {
    for (int b = a + 1; b < group_count; ++b) {
      if (linked.count({a, b}) == 0) pairs.push_back({a, b});
    }
  }
  return pairs;
}

// Triples read around an unlinked pair of groups (shortest-path scoring ranks the 2-hop paths
// between them first): 200 halves the mode's latency against 1000 at a few intermediates fewer
// (docs/modes.md, give).
constexpr int kPathTopK = 200;

// A KG entity on 2-hop paths between two groups, with its triples to them.
struct Intermediate {
  Member member;
  float score = 0;  // best triple score to the first group + best to the second
  std::vector<pb::EvidenceTriple> path;
};

// The intermediates between groups `a` and `b` in a 2-hop retrieval around their members: the
// entities outside every group with a KG triple to a member of each, best score first (ties:
// retrieval order), at most `max`.
std::vector<Intermediate> FindIntermediates(const pb::RetrieveResponse& retrieved, int a, int b,
                                            const absl::flat_hash_map<uint32_t, int>& members,
                                            int max) {
  struct Seen {
    Intermediate found;
    float best[2] = {-1, -1};  // per side; -1: no triple to that group
  };
  std::vector<Seen> seen;
  absl::flat_hash_map<uint32_t, size_t> index;
  for (const pb::EvidenceTriple& t : retrieved.triples()) {
    for (const bool member_is_head : {true, false}) {
      const pb::EntityRef& member = member_is_head ? t.head() : t.tail();
      const pb::EntityRef& other = member_is_head ? t.tail() : t.head();
      const auto group = members.find(member.id());
      if (group == members.end() || (group->second != a && group->second != b)) continue;
      if (members.contains(other.id())) continue;
      const auto [it, added] = index.emplace(other.id(), seen.size());
      if (added) {
        seen.emplace_back();
        seen.back().found.member = {other.id(), other.name()};
      }
      Seen& s = seen[it->second];
      float& best = s.best[group->second == a ? 0 : 1];
      best = std::max(best, t.score());
      s.found.path.push_back(t);
    }
  }
  std::vector<Intermediate> out;
  for (Seen& s : seen) {
    if (s.best[0] < 0 || s.best[1] < 0) continue;
    s.found.score = s.best[0] + s.best[1];
    out.push_back(std::move(s.found));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Intermediate& x, const Intermediate& y) { return x.score > y.score; });
  if (static_cast<int>(out.size()) > max) out.resize(static_cast<size_t>(std::max(0, max)));
  return out;
}

// Intermediate entity groups (paper 3.4.2): for each pair of groups the KG does not link
// directly, the KG entities on 2-hop paths between them (one retrieval around both groups'
// members), each a group of its own; their triples to the two groups join the KG knowledge, so
// the candidate links to and from them follow as across any two groups. A failed read leaves
// that pair without intermediates; the answer says how many.
void AddIntermediateGroups(const ModeCall& call, const PipelineStages& stages,
                           const GiveOptions& options, std::vector<Group>* groups,
                           absl::flat_hash_map<uint32_t, int>* group_of,
                           std::vector<pb::EvidenceTriple>* kg) {
  const absl::flat_hash_map<uint32_t, int> members = *group_of;  // the question's groups only
  const std::vector<std::pair<int, int>> pairs =
      UnlinkedPairs(static_cast<int>(groups->size()), members, *kg);
  if (pairs.empty() || options.max_intermediates <= 0) return;
  std::set<std::tuple<uint32_t, std::string, uint32_t>> stated;
  for (const pb::EvidenceTriple& t : *kg) {
    stated.insert({t.head().id(), t.relation(), t.tail().id()});
  }
  const absl::Time window_end = absl::Now() + (call.deadline - absl::Now()) / 4;
  size_t failed = 0;
  grpc::Status last_failure;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const auto [a, b] = pairs[i];
    std::vector<uint32_t> topics;
    for (const Member& m : (*groups)[a]) topics.push_back(m.id);
    for (const Member& m : (*groups)[b]) topics.push_back(m.id);
    pb::RetrieveResponse retrieved;
    const absl::Duration budget =
        (window_end - absl::Now()) / static_cast<int64_t>(pairs.size() - i);
    const grpc::Status status =
        RetrieveAround(call, stages, std::move(topics), 2, kPathTopK, budget, &retrieved);
    if (!status.ok()) {
      ++failed;
      last_failure = status;
      continue;
    }
    for (Intermediate& x : FindIntermediates(retrieved, a, b, members, options.max_intermediates)) {
      if (group_of->emplace(x.member.id, static_cast<int>(groups->size())).second) {
        groups->push_back(Group{x.member});
      }
      for (pb::EvidenceTriple& t : x.path) {
        if (stated.insert({t.head().id(), t.relation(), t.tail().id()}).second) {
          kg->push_back(std::move(t));
        }
      }
    }
  }
  if (failed > 0) {
    AddModeDegradation(call.response, kModeGive,
                       absl::StrCat("intermediate groups for ", failed, " of ", pairs.size(),
                                    " unlinked group pairs could not be read (",
                                    DescribeStatus(last_failure), ")"));
  }
}

// Candidate links: within each group, the queried entity and each added concept (unless the KG
// links them already); across groups, every relation the KG has from one group to the other,
// for every member pair it does not already link. Links to and from intermediate groups (index
// `question_groups` on) come last, so the check cap leaves them out first.
std::vector<Link> CandidateLinks(const std::vector<Group>& groups, int question_groups,
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
  std::stable_partition(candidates.begin(), candidates.end(), [&](const Link& l) {
    return group_of.at(l.head) < question_groups && group_of.at(l.tail) < question_groups;
  });
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
    } else if (out.answer().label() == pb::FACT_LABEL_UNKNOWN) {
      knowledge->undecided.push_back(link);  // "maybe": in neither set
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

  // Entity groups, the KG links among them, then the intermediate groups between the groups
  // the KG does not link directly.
  absl::Time started = absl::Now();
  std::vector<Group> groups = EntityGroups(*call.response, std::move(rejected), options_);
  const size_t question_groups = groups.size();
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
  } else {
    AddIntermediateGroups(call, stages, options_, &groups, &group_of, &knowledge.kg);
  }
  for (const pb::EvidenceTriple& t : knowledge.kg) *call.response->add_evidence() = t;
  stages.FinishStage(
      call, "retrieve", started,
      absl::StrCat(question_groups, " entity groups, ", groups.size() - question_groups,
                   " intermediate groups, ", knowledge.kg.size(), " KG links"));

  // Veracity extrapolation: the LLM checks every candidate link (up to max_checks).
  started = absl::Now();
  std::vector<Link> candidates =
      CandidateLinks(groups, static_cast<int>(question_groups), group_of, knowledge.kg);
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
  stages.FinishStage(
      call, "extrapolate", started,
      absl::StrCat(knowledge.affirmative.size(), " affirmed, ", knowledge.counterfactual.size(),
                   " rejected, ", knowledge.undecided.size(), " undecided (maybe) links"));
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
