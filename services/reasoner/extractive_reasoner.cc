#include "services/reasoner/extractive_reasoner.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/question_intent.h"
#include "common/source_lineage.h"
#include "services/reasoner/prompt_builder.h"
#include "services/reasoner/text_util.h"

namespace ibgraphrag::reasoner {
namespace {

// Words naming entity types say nothing about which relation a sentence states.
bool IsTypeWord(absl::string_view stem) {
  static const auto* const kTypeWords = new absl::flat_hash_set<absl::string_view>({
      "disease",   "gene",     "drug",      "compound", "symptom",       "anatomy", "protein",
      "phenotype", "side",     "effect",    "pathway",  "biological",    "process", "molecular",
      "function",  "cellular", "component", "class",    "pharmacologic", "entity",
  });
  return kTypeWords->contains(stem);
}

// Function words dropped from names before matching. Deliberately short: single letters and
// numbers distinguish entities ("vitamin A", "hepatitis B", "type 2 diabetes").
bool IsNameStopWord(absl::string_view word) {
  return word == "of" || word == "the" || word == "and" || word == "in" || word == "with" ||
         word == "to" || word == "for" || word == "by" || word == "on" || word == "or";
}

// Normalised name plus sorted unique content words and numbers, for NameMatch.
struct NameInfo {
  std::string norm;
  std::vector<std::string> words;
  std::vector<std::string> numbers;
};

NameInfo MakeNameInfo(absl::string_view text) {
  NameInfo info;
  info.norm = NormalizeText(text);
  for (absl::string_view word : absl::StrSplit(info.norm, ' ', absl::SkipEmpty())) {
    if (IsNameStopWord(word)) continue;
    if (IsNumberWord(word)) info.numbers.emplace_back(word);
    info.words.push_back(StemWord(word));
  }
  std::sort(info.words.begin(), info.words.end());
  info.words.erase(std::unique(info.words.begin(), info.words.end()), info.words.end());
  std::sort(info.numbers.begin(), info.numbers.end());
  info.numbers.erase(std::unique(info.numbers.begin(), info.numbers.end()), info.numbers.end());
  return info;
}

size_t SortedIntersection(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  size_t count = 0;
  auto i = a.begin();
  auto j = b.begin();
  while (i != a.end() && j != b.end()) {
    const int cmp = i->compare(*j);
    if (cmp == 0) {
      ++count;
      ++i;
      ++j;
    } else if (cmp < 0) {
      ++i;
    } else {
      ++j;
    }
  }
  return count;
}

double NameMatch(const NameInfo& a, const NameInfo& b) {
  if (a.norm.empty() || b.norm.empty()) return 0.0;
  if (a.norm == b.norm) return 1.0;
  if (a.words.empty() || b.words.empty()) return 0.0;
  if (!a.numbers.empty() && !b.numbers.empty() && a.numbers != b.numbers) return 0.0;
  const size_t shared = SortedIntersection(a.words, b.words);
  if (shared == 0) return 0.0;
  const size_t smaller = std::min(a.words.size(), b.words.size());
  const size_t larger = std::max(a.words.size(), b.words.size());
  if (shared == smaller) return 0.6 + 0.4 * static_cast<double>(shared) / larger;
  return static_cast<double>(shared) /
         static_cast<double>(a.words.size() + b.words.size() - shared);
}

struct Node {
  std::string display;
  NameInfo name;
  bool topic = false;
  // Which request topic entity the node stands for, entities of the same name as one (the
  // gateway sends "diabetes mellitus" the disease and the phenotype); 0 for every stand-in named
  // in the question; -1 for non-topics.
  int topic_group = -1;
};

// How far each node is from a set of source (topic) nodes: the best score-weighted,
// length-discounted path, with the is_a closure of the sources anchored first.
struct Reach {
  std::vector<double> value;  // per node
  std::vector<int> via;       // per node: triple that set its value; -1 for sources
  // Per node: a source, or a sub/supertype of one reached along is_a only. The next step from
  // an anchored node carries no hop decay (a subtype's facts count as the topic's own).
  std::vector<bool> anchored;
};

// The evidence as a graph over interned entities, with per-triple weights and reach values.
struct EvidenceGraph {
  std::vector<Node> nodes;
  std::vector<std::pair<int, int>> ends;  // (head node, tail node) per triple
  std::vector<double> score;              // clamped retriever score per triple
  std::vector<double> weight;             // score * relation-match bonus
  std::vector<bool> subtype;              // per triple: "head is a subtype of tail" (is_a)
  int topic_groups = 0;                   // distinct topic groups among the nodes
  Reach reach;                            // from every topic node
};

std::string EntityKey(const EntityRef& entity) {
  return entity.id.empty() ? absl::StrCat("n:", NormalizeText(entity.name))
                           : absl::StrCat("i:", entity.id);
}

int Intern(const EntityRef& entity, absl::flat_hash_map<std::string, int>* index,
           std::vector<Node>* nodes) {
  auto [it, inserted] = index->try_emplace(EntityKey(entity), static_cast<int>(nodes->size()));
  if (inserted) {
    Node& node = nodes->emplace_back();
    node.display = entity.name.empty() ? entity.id : entity.name;
    node.name = MakeNameInfo(node.display);
  }
  return it->second;
}

absl::flat_hash_set<std::string> ContentWordSet(absl::string_view text) {
  absl::flat_hash_set<std::string> set;
  for (std::string& word : ContentWords(text)) set.insert(std::move(word));
  return set;
}

std::vector<std::string> RelationWords(absl::string_view relation) {
  std::vector<std::string> words;
  for (std::string& word : ContentWords(relation)) {
    if (!IsTypeWord(word)) words.push_back(std::move(word));
  }
  const std::string norm = NormalizeText(relation);
  for (absl::string_view phrase : {"is a", "isa", "subclass", "type of", "kind of", "subtype"}) {
    if (ContainsPhrase(norm, phrase)) {
      words.push_back("isa");
      break;
    }
  }
  return words;
}

// DO / HPO is_a: "disease is a subtype of disease" (head = subtype, tail = parent).
bool IsSubtypeRelation(absl::string_view relation) {
  const std::string norm = NormalizeText(relation);
  return ContainsPhrase(norm, "is a subtype of") || ContainsPhrase(norm, "subclass of") ||
         norm == "is a" || norm == "isa";
}

// Anchors the is_a closure of the sources: subtypes down to max_subtype_depth levels at
// subtype_weight per level, supertypes up to max_supertype_depth levels at supertype_weight per
// level. Down and up walks are separate, so siblings (up then down) are never anchored.
void AnchorOntology(const EvidenceGraph& graph, const ExtractiveOptions& options, Reach* reach) {
  for (const bool down : {true, false}) {
    const int depth = down ? options.max_subtype_depth : options.max_supertype_depth;
    const double weight = down ? options.subtype_weight : options.supertype_weight;
    std::vector<bool> frontier(graph.nodes.size(), false);
    for (size_t n = 0; n < graph.nodes.size(); ++n) {
      frontier[n] = reach->via[n] == -1 && reach->anchored[n];  // the sources
    }
    for (int level = 0; level < depth; ++level) {
      std::vector<bool> next(graph.nodes.size(), false);
      for (size_t t = 0; t < graph.ends.size(); ++t) {
        if (!graph.subtype[t]) continue;
        const auto [sub, parent] = graph.ends[t];
        const int from = down ? parent : sub;
        const int to = down ? sub : parent;
        if (!frontier[from] || reach->value[from] <= 0.0 || reach->via[to] == -1) continue;
        const double value = reach->value[from] * weight;
        if (value <= reach->value[to]) continue;
        reach->value[to] = value;
        reach->via[to] = static_cast<int>(t);
        reach->anchored[to] = true;
        next[to] = true;
      }
      frontier.swap(next);
    }
  }
}

// Reach from the nodes flagged in `sources`: the is_a closure (AnchorOntology), then over up to
// max_hops rounds reach(v) = max over triples (u, v) of reach(u) * w * (u anchored ? 1 :
// hop_decay). Anchored nodes keep their value; nodes in `blocked` are never entered.
Reach ComputeReach(const EvidenceGraph& graph, const std::vector<bool>& sources,
                   const std::vector<bool>& blocked, const ExtractiveOptions& options) {
  const size_t n = graph.nodes.size();
  Reach reach{std::vector<double>(n, 0.0), std::vector<int>(n, -2), std::vector<bool>(n, false)};
  for (size_t i = 0; i < n; ++i) {
    if (!sources[i]) continue;
    reach.value[i] = 1.0;
    reach.via[i] = -1;
    reach.anchored[i] = true;
  }
  AnchorOntology(graph, options, &reach);
  std::vector<double> next;
  for (int round = 0; round < options.max_hops; ++round) {
    next = reach.value;
    bool changed = false;
    for (size_t t = 0; t < graph.ends.size(); ++t) {
      const auto [head, tail] = graph.ends[t];
      if (head == tail) continue;
      for (const auto& [from, to] : {std::pair<int, int>{head, tail}, {tail, head}}) {
        if (reach.value[from] <= 0.0 || reach.anchored[to] || blocked[to]) continue;
        const double decay = reach.anchored[from] ? 1.0 : options.hop_decay;
        const double value = reach.value[from] * graph.weight[t] * decay;
        if (value > next[to]) {
          next[to] = value;
          reach.via[to] = static_cast<int>(t);
          changed = true;
        }
      }
    }
    reach.value.swap(next);
    if (!changed) break;
  }
  for (int& via : reach.via) via = std::max(via, -1);
  return reach;
}

// Reach from the topic nodes of one question entity (`group`), or of all (-1). A per-entity
// reach never passes through another entity's topic nodes, so an option counts as connected to
// an entity only through evidence of its own.
Reach TopicReach(const EvidenceGraph& graph, int group, const ExtractiveOptions& options) {
  std::vector<bool> sources(graph.nodes.size(), false), blocked(graph.nodes.size(), false);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& node = graph.nodes[i];
    sources[i] = node.topic && (group < 0 || node.topic_group == group);
    blocked[i] = node.topic && !sources[i];
  }
  return ComputeReach(graph, sources, blocked, options);
}

// Topic entities: by id, then by name; failing both, evidence entities named in the question
// (one group). Counts the topic groups found (topic_groups).
void MarkTopics(const ReasonRequest& request, const absl::flat_hash_map<std::string, int>& index,
                EvidenceGraph* graph) {
  absl::flat_hash_set<int> groups;
  absl::flat_hash_map<std::string, int> group_of_name;
  const bool by_mention = request.topic_mentions.size() == request.topic_entities.size() &&
                          !request.topic_mentions.empty();
  for (size_t t = 0; t < request.topic_entities.size(); ++t) {
    const EntityRef& topic = request.topic_entities[t];
    // One group per question mention when the caller says which mention each entity came from
    // (the senses MSCA kept for one mention are one question entity), else per name.
    const std::string key = by_mention           ? absl::StrCat("m:", request.topic_mentions[t])
                            : topic.name.empty() ? EntityKey(topic)
                                                 : NormalizeText(topic.name);
    const int g =
        group_of_name.try_emplace(key, static_cast<int>(group_of_name.size())).first->second;
    auto mark = [&](Node& node) {
      node.topic = true;
      if (node.topic_group < 0) node.topic_group = g;
      groups.insert(node.topic_group);
    };
    if (!topic.id.empty()) {
      auto it = index.find(absl::StrCat("i:", topic.id));
      if (it != index.end()) {
        mark(graph->nodes[it->second]);
        continue;
      }
    }
    const std::string norm = NormalizeText(topic.name);
    if (norm.empty()) continue;
    for (Node& node : graph->nodes) {
      if (node.name.norm == norm) mark(node);
    }
  }
  graph->topic_groups = static_cast<int>(groups.size());
  if (!groups.empty()) return;
  const std::string question = NormalizeText(request.question);
  for (Node& node : graph->nodes) {
    if (node.name.norm.size() >= 2 && ContainsPhrase(question, node.name.norm)) {
      node.topic = true;
      node.topic_group = 0;
      graph->topic_groups = 1;
    }
  }
}

EvidenceGraph BuildGraph(const ReasonRequest& request, const common::QuestionIntent& intent,
                         const ExtractiveOptions& options) {
  EvidenceGraph graph;
  const size_t n = request.evidence.size();
  absl::flat_hash_map<std::string, int> index;
  graph.ends.reserve(n);
  graph.score.reserve(n);
  graph.weight.reserve(n);
  bool any_positive = false;
  for (const EvidenceTriple& t : request.evidence) any_positive |= t.score > 0.0;
  const absl::flat_hash_set<std::string> question_words = ContentWordSet(request.question);
  absl::flat_hash_map<absl::string_view, double> relation_bonus;
  for (const EvidenceTriple& t : request.evidence) {
    const int head = Intern(t.head, &index, &graph.nodes);
    const int tail = Intern(t.tail, &index, &graph.nodes);
    graph.ends.emplace_back(head, tail);
    // Unscored evidence (every score 0) still counts, uniformly.
    const double score = any_positive ? std::clamp(t.score, 0.0, 1.0) : 1.0;
    auto [it, inserted] = relation_bonus.try_emplace(t.relation, 0.0);
    if (inserted) {
      const std::vector<std::string> words = RelationWords(t.relation);
      size_t found = 0;
      for (const std::string& word : words) found += question_words.contains(word) ? 1 : 0;
      it->second = words.empty() ? 0.0 : static_cast<double>(found) / words.size();
    }
    graph.score.push_back(score);
    // The relation the question's intent names counts as fully named, and more.
    const bool asked = intent.AsksFor(t.relation);
    const double match = asked ? 1.0 : it->second;
    graph.weight.push_back(score * (1.0 + options.relation_match_bonus * match) *
                           (asked ? options.intent_relation_weight : 1.0));
    graph.subtype.push_back(IsSubtypeRelation(t.relation));
  }

  MarkTopics(request, index, &graph);
  graph.reach = TopicReach(graph, /*group=*/-1, options);
  return graph;
}

// Distinct sources of a triple (its `sources`, or `source` alone).
std::vector<std::string> TripleSources(const EvidenceTriple& t) {
  std::vector<std::string> out = t.sources;
  if (out.empty() && !t.source.empty()) out.push_back(t.source);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// How strongly one triple backs an answer, the reach of its topic end aside: its retriever score,
// more for each independent source (source_lineage.h: a compilation and the primary file it was
// compiled from count once), and up to half more for its source's own score. `sources` is
// TripleSources(e), which the callers keep too.
double TripleStrength(const EvidenceGraph& graph, const EvidenceTriple& e, int t,
                      const std::vector<std::string>& sources) {
  const double source_score = e.source_score >= 0.0 ? std::clamp(e.source_score, 0.0, 1.0) : 0.0;
  return graph.score[t] *
         (1.0 + static_cast<double>(common::IndependentSourceCount(sources, e.relation))) *
         (1.0 + 0.5 * source_score);
}

std::string TripleLine(const EvidenceTriple& t) {
  return absl::StrFormat("(%s, %s, %s) [score %.2f]", t.head.name.empty() ? t.head.id : t.head.name,
                         t.relation, t.tail.name.empty() ? t.tail.id : t.tail.name, t.score);
}

// The triples that reached `from` from a topic (is_a steps included), topic end first.
std::vector<int> ChainTo(const EvidenceGraph& graph, int from) {
  std::vector<int> chain;
  int node = from;
  for (int guard = 0; guard < 16 && node >= 0 && !graph.nodes[node].topic; ++guard) {
    const int via = graph.reach.via[node];
    if (via < 0) break;
    chain.push_back(via);
    const auto [head, tail] = graph.ends[via];
    node = head == node ? tail : head;
  }
  std::reverse(chain.begin(), chain.end());
  return chain;
}

// Adds triple `t` and, before it, the chain of triples that reached `from` from a topic.
void AddWithChain(const EvidenceGraph& graph, int t, int from, std::vector<int>* used,
                  absl::flat_hash_set<int>* seen) {
  for (int c : ChainTo(graph, from)) {
    if (seen->insert(c).second) used->push_back(c);
  }
  if (seen->insert(t).second) used->push_back(t);
}

std::string Rationale(const ReasonRequest& request, const std::vector<int>& used,
                      absl::string_view heading) {
  std::string out(heading);
  for (int t : used) absl::StrAppend(&out, "\n", TripleLine(request.evidence[t]));
  return out;
}

bool AskForException(absl::string_view question) {
  for (const std::string& word : Words(question)) {
    if (word == "not" || word == "except" || word == "least" || word == "incorrect" ||
        word == "false" || word == "untrue") {
      return true;
    }
  }
  return false;
}

ReasonResult BaseResult() {
  ReasonResult result;
  result.backend = std::string(kExtractiveBackend);
  result.used_llm = false;
  result.prompt_version = kExtractivePromptVersion;
  result.parse_status = ParseStatus::kOk;
  result.agreement = 1.0;
  return result;
}

// Calibration signals (reasoner_types.h ExtractiveSignals).
// Distinct topic groups among the nodes whose flag is set in `touched` (all topics when null).
int CountTopicGroups(const EvidenceGraph& graph, const std::vector<bool>* touched) {
  absl::flat_hash_set<int> groups;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    if (graph.nodes[n].topic && (touched == nullptr || (*touched)[n])) {
      groups.insert(graph.nodes[n].topic_group);
    }
  }
  return static_cast<int>(groups.size());
}

std::string RenderPath(const ReasonRequest& request, const EvidenceGraph& graph,
                       const std::vector<int>& triples);

// "\nPath: topic <-[is a subtype of]- subtype <-[relation]- option" when the chain from a topic
// to triple `t` takes an is_a step (the step the plain triple list does not make obvious);
// empty otherwise.
std::string OntologyPathLine(const ReasonRequest& request, const EvidenceGraph& graph, int t,
                             int from) {
  std::vector<int> path = ChainTo(graph, from);
  const bool via_is_a =
      std::any_of(path.begin(), path.end(), [&](int c) { return graph.subtype[c]; });
  if (!via_is_a) return "";
  path.push_back(t);
  return absl::StrCat("\nPath: ", RenderPath(request, graph, path));
}

struct Contribution {
  double value;
  int triple;
  int from;  // the reached end
};

// Per node: how well the option names it (0 below min_name_match).
std::vector<double> OptionMatch(absl::string_view option_text, const EvidenceGraph& graph,
                                const ExtractiveOptions& options) {
  const NameInfo option = MakeNameInfo(option_text);
  std::vector<double> match(graph.nodes.size());
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const double m = NameMatch(option, graph.nodes[n].name);
    match[n] = m >= options.min_name_match ? m : 0.0;
  }
  return match;
}

// Sum over triples (u, e), e named by the option, u reached and not named by it, of
// match * reach(u) * w * (u anchored ? 1 : hop_decay); each term goes to `contributions`.
double OptionSupport(const EvidenceGraph& graph, const Reach& reach,
                     const std::vector<double>& match, const ExtractiveOptions& options,
                     std::vector<Contribution>* contributions) {
  double support = 0.0;
  for (size_t t = 0; t < graph.ends.size(); ++t) {
    const auto [head, tail] = graph.ends[t];
    for (const auto& [named, other] : {std::pair<int, int>{head, tail}, {tail, head}}) {
      if (match[named] <= 0.0 || match[other] > 0.0 || reach.value[other] <= 0.0) continue;
      const double decay = reach.anchored[other] ? 1.0 : options.hop_decay;
      const double value = match[named] * reach.value[other] * graph.weight[t] * decay;
      support += value;
      if (contributions != nullptr) contributions->push_back({value, static_cast<int>(t), other});
    }
  }
  return support;
}

// The question entities in the evidence and, per option, how many of them its support reaches.
struct Connections {
  // Question entities the ranking counts (0 when prefer_connected_to_all is off), and per option
  // the connection count the ranking uses.
  int entities = 0;
  std::vector<int> per_option;
  // For the calibration signals, whatever the ranking does: the question-entity groups in the
  // evidence and, per option, how many of them reach it.
  int question_groups = 0;
  std::vector<int> groups_reaching;
};

// Question entities: the topic groups no option names (the gateway sends option entities as
// topics too; an option is not connected to itself). Each counts for an option when the option
// has support from that entity's topic nodes alone (TopicReach). With fewer than two entities:
// 1 for a supported option, 0 otherwise, so the ranking is by support alone.
// The question entities: topic groups with a node no option names, ascending. A group of one
// name is named or not as a whole; a group of one mention keeps its question entity when one of
// its senses is an option ("epilepsy" kept as the disease and as the phenotype "Seizures", with
// "Seizures" an option: the question still asks about epilepsy).
std::vector<int> QuestionGroups(const EvidenceGraph& graph,
                                const std::vector<std::vector<double>>& matches) {
  absl::flat_hash_set<int> groups;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    if (!graph.nodes[n].topic) continue;
    bool named = false;
    for (const std::vector<double>& match : matches) named = named || match[n] > 0.0;
    if (!named) groups.insert(graph.nodes[n].topic_group);
  }
  std::vector<int> out(groups.begin(), groups.end());
  std::sort(out.begin(), out.end());
  return out;
}

Connections TopicsConnected(const EvidenceGraph& graph,
                            const std::vector<std::vector<double>>& matches,
                            const std::vector<int>& groups, const std::vector<double>& support,
                            const ExtractiveOptions& options) {
  Connections out;
  out.per_option.assign(support.size(), 0);
  out.question_groups = static_cast<int>(groups.size());
  out.groups_reaching.assign(support.size(), 0);
  for (int group : groups) {
    const Reach reach = TopicReach(graph, group, options);
    for (size_t o = 0; o < support.size(); ++o) {
      if (support[o] > 0.0 && OptionSupport(graph, reach, matches[o], options, nullptr) > 0.0) {
        ++out.groups_reaching[o];
      }
    }
  }
  out.entities = options.prefer_connected_to_all ? out.question_groups : 0;
  for (size_t o = 0; o < support.size(); ++o) {
    out.per_option[o] = out.entities >= 2 ? out.groups_reaching[o] : (support[o] > 0.0 ? 1 : 0);
  }
  return out;
}

// The rationale of a chosen option: its strongest contributing triples, each after the chain
// that reached it from a topic, at most max_rationale_lines, then the is_a path of the strongest
// when it takes one. Sets `result`'s evidence_used and rationale.
void ExplainChoice(const ReasonRequest& request, const EvidenceGraph& graph,
                   std::vector<Contribution> list, absl::string_view heading,
                   const ExtractiveOptions& options, ReasonResult* result) {
  std::stable_sort(list.begin(), list.end(),
                   [](const Contribution& a, const Contribution& b) { return a.value > b.value; });
  std::vector<int> used;
  absl::flat_hash_set<int> seen;
  for (const Contribution& c : list) {
    if (static_cast<int>(used.size()) >= options.max_rationale_lines) break;
    AddWithChain(graph, c.triple, c.from, &used, &seen);
  }
  if (static_cast<int>(used.size()) > options.max_rationale_lines) {
    used.resize(options.max_rationale_lines);
  }
  result->evidence_used = used;
  result->rationale = Rationale(request, used, heading);
  if (!list.empty()) {
    absl::StrAppend(&result->rationale,
                    OntologyPathLine(request, graph, list.front().triple, list.front().from));
  }
}

// KG-lookup multiple choice (issue 26): per option, the question entities linked to it by one
// triple of a relation the intent asks about (the option's entity at the relation's answer end
// and of a type the intent accepts; the other end the question entity's topic node or one of
// its is_a anchors, never another option), and the strength of those triples.
struct IntentLinks {
  std::vector<int> groups;                         // per option: question entities linked
  std::vector<double> strength;                    // per option: sum of match * TripleStrength
  std::vector<std::vector<Contribution>> triples;  // per option: the linking triples
  std::vector<int> sources;                        // per option: distinct sources of them
};

IntentLinks LinkOptionsByIntent(const ReasonRequest& request, const EvidenceGraph& graph,
                                const common::QuestionIntent& intent,
                                const std::vector<std::vector<double>>& matches,
                                const std::vector<int>& question_groups,
                                const ExtractiveOptions& options) {
  const size_t num_options = matches.size();
  IntentLinks links;
  links.groups.assign(num_options, 0);
  links.strength.assign(num_options, 0.0);
  links.triples.resize(num_options);
  links.sources.assign(num_options, 0);
  std::vector<absl::flat_hash_set<std::string>> sources(num_options);
  for (int group : question_groups) {
    const Reach reach = TopicReach(graph, group, options);
    std::vector<bool> linked(num_options, false);
    for (size_t t = 0; t < request.evidence.size(); ++t) {
      const EvidenceTriple& e = request.evidence[t];
      if (!intent.AsksFor(e.relation)) continue;
      const common::QuestionIntent::AnswerEnds ends = intent.AnswerEndsOf(e.relation);
      const auto [head, tail] = graph.ends[t];
      const std::vector<std::string> triple_sources = TripleSources(e);
      const double strength = TripleStrength(graph, e, static_cast<int>(t), triple_sources);
      for (const auto& [answer, other, ref, allowed, head_end] :
           {std::tuple{tail, head, &e.tail, ends.tail, false},
            std::tuple{head, tail, &e.head, ends.head, true}}) {
        if (!allowed || answer == other || !reach.anchored[other]) continue;
        // As for open questions: the relation's declared end type, else the entity's.
        if (!intent.AcceptsEnd(e.relation, head_end, ref->type)) continue;
        for (size_t o = 0; o < num_options; ++o) {
          if (matches[o][answer] <= 0.0 || matches[o][other] > 0.0) continue;
          const double value = matches[o][answer] * strength;
          links.strength[o] += value;
          links.triples[o].push_back({value, static_cast<int>(t), other});
          sources[o].insert(triple_sources.begin(), triple_sources.end());
          linked[o] = true;
        }
      }
    }
    for (size_t o = 0; o < num_options; ++o) links.groups[o] += linked[o] ? 1 : 0;
  }
  for (size_t o = 0; o < num_options; ++o) {
    links.sources[o] = static_cast<int>(sources[o].size());
  }
  return links;
}

// Signals of a multiple-choice answer, describing option `subject` (the best-ranked option, or
// an exception question's unsupported one): its support against the best other option's, and
// the question-entity groups reaching it. `candidate` is `subject` when it is an answer, else -1.
ExtractiveSignals ChoiceSignals(const ReasonRequest& request, const std::vector<double>& support,
                                int subject, int candidate, const Connections& connections) {
  ExtractiveSignals signals;
  signals.present = true;
  signals.task = Task::kMultipleChoice;
  signals.num_options = static_cast<int>(support.size());
  for (double s : support) signals.options_supported += s > 0.0 ? 1 : 0;
  signals.topics_present = connections.question_groups;
  signals.evidence_count = static_cast<int>(request.evidence.size());
  signals.candidate_index = candidate;
  if (subject < 0) return signals;
  signals.top_support = support[subject];
  for (size_t o = 0; o < support.size(); ++o) {
    if (static_cast<int>(o) != subject) {
      signals.runner_up_support = std::max(signals.runner_up_support, support[o]);
    }
  }
  if (signals.top_support > 0.0) {
    signals.margin =
        std::max(0.0, (signals.top_support - signals.runner_up_support) / signals.top_support);
  }
  signals.topics_connected = connections.groups_reaching[subject];
  return signals;
}

// KG-lookup multiple choice decided by the intent (issue 26): the option linked to the most
// question entities through a relation the question asks about wins (IntentLinks), evidence
// strength breaking ties; an exception question's answer is the only option not so linked while
// every other is. The result says why. Without signals (signals.present false) when the links
// decide nothing (no option linked; an exception question with other than one unlinked option):
// the caller then ranks by reach.
ReasonResult LookupChoice(const ReasonRequest& request, const EvidenceGraph& graph,
                          const common::QuestionIntent& intent,
                          const std::vector<std::vector<double>>& matches,
                          const std::vector<double>& support,
                          const std::vector<int>& question_groups, const Connections& connections,
                          bool exception, const ExtractiveOptions& options) {
  const IntentLinks links =
      LinkOptionsByIntent(request, graph, intent, matches, question_groups, options);
  const int num_options = static_cast<int>(links.groups.size());
  const int max_groups = *std::max_element(links.groups.begin(), links.groups.end());
  if (max_groups == 0) return BaseResult();
  ReasonResult result = BaseResult();
  const int entities = static_cast<int>(question_groups.size());
  const std::string kinds = absl::StrJoin(intent.kinds, ", ");
  auto explain = [&](int o, absl::string_view heading) {
    ExplainChoice(request, graph, links.triples[o], heading, options, &result);
  };

  if (exception) {
    std::vector<int> unlinked;
    int weakest_sources = -1;
    for (int o = 0; o < num_options; ++o) {
      if (links.groups[o] == 0) {
        unlinked.push_back(o);
      } else if (weakest_sources < 0 || links.sources[o] < weakest_sources) {
        weakest_sources = links.sources[o];
      }
    }
    if (unlinked.size() != 1) return BaseResult();
    const int candidate = unlinked.front();
    result.signals = ChoiceSignals(request, support, candidate, candidate, connections);
    result.signals.exception_question = true;
    result.signals.intent_linked = 1.0;  // every other option is linked
    result.signals.linked_options = 1;   // the candidate alone is not
    result.signals.candidate_sources = std::max(weakest_sources, 0);
    result.option_index = candidate;
    result.option_letter = OptionLetter(candidate);
    result.confidence = 1.0;
    result.answer = absl::StrCat(
        result.option_letter, ") ", request.options[candidate],
        ". The question asks for the exception, and this is the only option the evidence does not "
        "link to the question's entities through ",
        kinds, " (extractive backend; no LLM was used).");
    const int example = candidate == 0 && num_options > 1 ? 1 : 0;
    explain(example, absl::StrCat("Every other option is linked through ", kinds, ", e.g. option ",
                                  OptionLetter(example), ":"));
    return result;
  }

  std::vector<int> order(num_options);
  for (int o = 0; o < num_options; ++o) order[o] = o;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if (links.groups[a] != links.groups[b]) return links.groups[a] > links.groups[b];
    return links.strength[a] > links.strength[b];
  });
  const int best = order.front();
  const int runner = num_options > 1 && links.groups[order[1]] == max_groups ? order[1] : -1;
  const int linked_options =
      static_cast<int>(std::count(links.groups.begin(), links.groups.end(), max_groups));
  const bool tie = runner >= 0 && links.strength[runner] >= links.strength[best] * (1.0 - 1e-9);
  result.signals = ChoiceSignals(request, support, best, tie ? -1 : best, connections);
  result.signals.intent_linked = static_cast<double>(max_groups) / entities;
  result.signals.linked_options = linked_options;
  result.signals.candidate_sources = links.sources[best];
  const std::string linked_to =
      entities > 1 ? absl::StrCat(max_groups, " of the question's ", entities, " entities")
                   : "the question's entity";
  if (tie) {
    std::vector<std::string> tied;
    for (int o : order) {
      if (links.groups[o] == max_groups &&
          links.strength[o] >= links.strength[best] * (1.0 - 1e-9)) {
        tied.push_back(OptionLetter(o));
      }
    }
    result.low_confidence = true;
    result.answer = absl::StrCat("No option chosen: the evidence links options ",
                                 absl::StrJoin(tied, ", "), " to ", linked_to, " through ", kinds,
                                 " equally strongly (extractive backend; no LLM was used).");
    explain(best, absl::StrCat("Evidence for option ", OptionLetter(best), ":"));
    return result;
  }
  result.confidence = links.strength[best];
  result.low_confidence =
      runner >= 0 && links.strength[runner] >= options.low_confidence_ratio * links.strength[best];
  result.option_index = best;
  result.option_letter = OptionLetter(best);
  std::vector<std::string> best_sources;
  {
    absl::flat_hash_set<std::string> seen;
    for (const Contribution& c : links.triples[best]) {
      for (std::string& source : TripleSources(request.evidence[c.triple])) {
        if (seen.insert(source).second) best_sources.push_back(std::move(source));
      }
    }
    std::sort(best_sources.begin(), best_sources.end());
  }
  const std::string why =
      runner < 0
          ? absl::StrCat("the only option the evidence links to ", linked_to, " through ", kinds)
          : absl::StrCat("linked to ", linked_to, " through ", kinds,
                         absl::StrFormat(", with stronger evidence than option %s "
                                         "(%.2f against %.2f)",
                                         OptionLetter(runner), links.strength[best],
                                         links.strength[runner]));
  result.answer = absl::StrCat(
      result.option_letter, ") ", request.options[best], ". Chosen as ", why,
      "; sources: ", best_sources.empty() ? "unknown" : absl::StrJoin(best_sources, ", "),
      " (extractive backend; no LLM was used).");
  explain(best, "Evidence used:");
  return result;
}

// `question_class` in: the class ClassifyQuestion read from the wording; out: kClinicalReasoning
// when a kg_lookup question's asked relation links no option to its entities, so the answer comes
// from topic connections, which is a guess the KG does not decide (calibrated and abstained on as
// clinical reasoning, never with the lookup class's threshold).
ReasonResult MultipleChoice(const ReasonRequest& request, const EvidenceGraph& graph,
                            const common::QuestionIntent& intent, QuestionClass* question_class,
                            const ExtractiveOptions& options) {
  ReasonResult result = BaseResult();
  const int num_options = static_cast<int>(request.options.size());
  std::vector<double> support(num_options, 0.0);
  std::vector<std::vector<Contribution>> contributions(num_options);
  std::vector<std::vector<double>> matches(num_options);
  for (int o = 0; o < num_options; ++o) {
    matches[o] = OptionMatch(request.options[o], graph, options);
    support[o] = OptionSupport(graph, graph.reach, matches[o], options, &contributions[o]);
  }
  const std::vector<int> question_groups = QuestionGroups(graph, matches);
  const Connections connections =
      TopicsConnected(graph, matches, question_groups, support, options);
  const std::vector<int>& connected = connections.per_option;
  const bool exception =
      AskForException(request.question) || intent.constraint == common::IntentConstraint::kExcept;
  if (*question_class == QuestionClass::kKgLookup) {
    if (!intent.relations.empty() && !question_groups.empty()) {
      ReasonResult by_intent = LookupChoice(request, graph, intent, matches, support,
                                            question_groups, connections, exception, options);
      if (by_intent.signals.present) return by_intent;
    }
    *question_class = QuestionClass::kClinicalReasoning;
  }

  // Options connected to more of the question's entities first, then by support.
  std::vector<int> order(num_options);
  for (int o = 0; o < num_options; ++o) order[o] = o;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if (connected[a] != connected[b]) return connected[a] > connected[b];
    return support[a] > support[b];
  });
  const int best = order[0];
  const double best_support = support[best];
  // The runner-up competes only when it is connected to as many entities as the winner.
  const double second_support =
      num_options > 1 && connected[order[1]] == connected[best] ? support[order[1]] : 0.0;
  result.signals =
      ChoiceSignals(request, support, best, best_support > 0.0 ? best : -1, connections);

  auto explain = [&](int o, absl::string_view heading) {
    ExplainChoice(request, graph, contributions[o], heading, options, &result);
    if (connections.entities >= 2) {
      absl::StrAppend(&result.rationale, "\nConnected to ", connected[o], " of ",
                      connections.entities, " question entities.");
    }
  };

  if (exception) {
    int unsupported = -1;
    int unsupported_count = 0;
    for (int o = 0; o < num_options; ++o) {
      if (support[o] <= 0.0) {
        unsupported = o;
        ++unsupported_count;
      }
    }
    result.low_confidence = true;
    // The signals describe the option answered (the unsupported one), not the best supported.
    const int candidate = unsupported_count == 1 ? unsupported : -1;
    result.signals = ChoiceSignals(request, support, candidate, candidate, connections);
    result.signals.exception_question = true;
    if (unsupported_count == 1) {
      result.option_index = unsupported;
      result.option_letter = OptionLetter(unsupported);
      result.answer = absl::StrCat(result.option_letter, ") ", request.options[unsupported],
                                   ". The question asks for the exception and this is the only "
                                   "option the retrieved evidence does not support (extractive "
                                   "backend; no LLM was used).");
      result.confidence = 0.0;
      explain(best, absl::StrCat("Every other option is supported by the evidence, e.g. option ",
                                 OptionLetter(best), ":"));
      return result;
    }
    result.insufficient_evidence = unsupported_count > 1;
    result.answer =
        "No option chosen: the question asks for the exception, and the retrieved evidence does "
        "not single out exactly one unsupported option (extractive backend; no LLM was used).";
    result.rationale = absl::StrCat(unsupported_count, " of ", num_options,
                                    " options have no supporting evidence.");
    return result;
  }

  if (best_support <= 0.0) {
    result.insufficient_evidence = true;
    result.answer = request.evidence.empty()
                        ? "No option chosen: no evidence was retrieved (extractive backend; no "
                          "LLM was used)."
                        : "No option chosen: no retrieved evidence connects any option to the "
                          "question's topic entities (extractive backend; no LLM was used).";
    result.rationale = "No evidence triple links an option to a topic entity.";
    return result;
  }
  result.confidence = best_support;
  if (second_support >= best_support * (1.0 - 1e-9)) {
    std::vector<std::string> tied;
    for (int o : order) {
      if (connected[o] == connected[best] && support[o] >= best_support * (1.0 - 1e-9)) {
        tied.push_back(OptionLetter(o));
      }
    }
    result.low_confidence = true;
    result.answer =
        absl::StrCat("No option chosen: the evidence supports options ", absl::StrJoin(tied, ", "),
                     " equally (extractive backend; no LLM was used).");
    explain(best, absl::StrCat("Evidence for option ", OptionLetter(best), ":"));
    return result;
  }
  result.low_confidence = second_support >= options.low_confidence_ratio * best_support;
  result.option_index = best;
  result.option_letter = OptionLetter(best);
  result.answer = absl::StrCat(result.option_letter, ") ", request.options[best],
                               ". Chosen by the extractive backend from the evidence that "
                               "connects it to the question's topic entities; no LLM was used.");
  explain(best, "Evidence used:");
  return result;
}

bool HasNegation(const std::vector<std::string>& words) {
  for (const std::string& word : words) {
    if (word == "not" || word == "no" || word == "never" || word == "cannot" || word == "doesn" ||
        word == "isn" || word == "aren" || word == "don" || word == "didn" || word == "wasn" ||
        word == "weren" || word == "nor" || word == "non") {
      return true;
    }
  }
  return false;
}

bool ClaimSaysIsA(const std::vector<std::string>& words) {
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    const std::string& w = words[i];
    if (w == "is" || w == "are") {
      size_t j = i + 1;
      if (j < words.size() && words[j] == "not") ++j;
      if (j < words.size() && (words[j] == "a" || words[j] == "an")) return true;
    }
    if ((w == "type" || w == "kind" || w == "form" || w == "subclass" || w == "subtype") &&
        words[i + 1] == "of") {
      return true;
    }
  }
  return false;
}

// True when a claim word and a relation word are opposites.
bool Antonyms(const absl::flat_hash_set<std::string>& claim_words,
              const std::vector<std::string>& relation_words) {
  static constexpr std::pair<absl::string_view, absl::string_view> kPairs[] = {
      {"upregulat", "downregulat"}, {"increas", "decreas"},     {"activat", "inhibit"},
      {"agonist", "antagonist"},    {"treat", "contraindicat"}, {"induc", "suppress"}};
  for (const auto& [a, b] : kPairs) {
    for (const std::string& word : relation_words) {
      const bool rel_a = absl::StartsWith(word, a);
      const bool rel_b = absl::StartsWith(word, b);
      if (!rel_a && !rel_b) continue;
      for (const std::string& claim_word : claim_words) {
        if ((rel_a && absl::StartsWith(claim_word, b)) ||
            (rel_b && absl::StartsWith(claim_word, a))) {
          return true;
        }
      }
    }
  }
  return false;
}

// Signals of a verdict from `agree` / `contradict` weight and the deciding triples.
ExtractiveSignals VerdictSignals(const ReasonRequest& request, const EvidenceGraph& graph,
                                 double agree, double contradict,
                                 const std::vector<std::pair<double, int>>& agreeing,
                                 const std::vector<std::pair<double, int>>& contradicting) {
  ExtractiveSignals signals;
  signals.present = true;
  signals.task = Task::kFactVerification;
  signals.num_options = 2;
  signals.top_support = std::max(agree, contradict);
  signals.runner_up_support = std::min(agree, contradict);
  if (signals.top_support > 0.0) {
    signals.margin = (signals.top_support - signals.runner_up_support) / signals.top_support;
  }
  signals.options_supported = (agree > 0.0 ? 1 : 0) + (contradict > 0.0 ? 1 : 0);
  signals.candidate_label = agree > contradict   ? FactLabel::kSupported
                            : contradict > agree ? FactLabel::kRefuted
                                                 : FactLabel::kUnknown;
  // Both counted in claim-entity groups, like multiple choice's question entities.
  signals.topics_present = CountTopicGroups(graph, nullptr);
  std::vector<bool> touched(graph.nodes.size(), false);
  for (const auto* list : {&agreeing, &contradicting}) {
    for (const auto& [score, t] : *list) {
      const auto [head, tail] = graph.ends[t];
      touched[head] = true;
      touched[tail] = true;
    }
  }
  signals.topics_connected = CountTopicGroups(graph, &touched);
  signals.evidence_count = static_cast<int>(request.evidence.size());
  return signals;
}

// A triple linking two claim entities decides the claim when its relation is the claim's: named
// by one of the claim's words ("associated"), or, for a yes/no question, the relation its intent
// asks about (common/question_intent.h: "Can atorvastatin cause rhabdomyolysis?" asks for 'drug
// causes side effect', "Is tremor a symptom of Parkinson's disease?" for 'disease presents
// symptom', words the question does not repeat). Only a question asks that: read into a
// statement, the intent's looser reading supported headlines no relation of the KG decides
// ("Asthma pill could reduce symptoms in severe sufferers", PubHealth's validation part). Absence
// of such a triple is never read as REFUTED.
ReasonResult FactVerification(const ReasonRequest& request, const EvidenceGraph& graph,
                              const common::QuestionIntent& intent,
                              const ExtractiveOptions& options) {
  ReasonResult result = BaseResult();
  const std::string claim = NormalizeText(request.question);
  const std::vector<std::string> claim_word_list = Words(request.question);
  absl::flat_hash_set<std::string> claim_words = ContentWordSet(request.question);
  if (ClaimSaysIsA(claim_word_list)) claim_words.insert("isa");
  const bool claim_negated = HasNegation(claim_word_list);
  // A yes/no question ("Can atorvastatin cause rhabdomyolysis?") asks whether its relation links
  // its entities, and is answered in its own words.
  const bool yes_no = common::IsYesNoQuestion(request.question);

  std::vector<bool> in_claim(graph.nodes.size(), false);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    in_claim[n] =
        node.topic || (node.name.norm.size() >= 2 && ContainsPhrase(claim, node.name.norm));
  }
  double agree = 0.0;
  double contradict = 0.0;
  std::vector<std::pair<double, int>> agreeing, contradicting, related;
  for (size_t t = 0; t < graph.ends.size(); ++t) {
    const auto [head, tail] = graph.ends[t];
    if (head == tail || !in_claim[head] || !in_claim[tail]) continue;
    const EvidenceTriple& triple = request.evidence[t];
    const std::vector<std::string> relation_words = RelationWords(triple.relation);
    const bool relation_negated = HasNegation(Words(triple.relation));
    bool direct = yes_no && intent.AsksFor(triple.relation);
    for (const std::string& word : relation_words) direct |= claim_words.contains(word);
    const double s = graph.score[t];
    if (direct) {
      if (relation_negated == claim_negated) {
        agree += s;
        agreeing.emplace_back(s, static_cast<int>(t));
      } else {
        contradict += s;
        contradicting.emplace_back(s, static_cast<int>(t));
      }
    } else if (!claim_negated && Antonyms(claim_words, relation_words)) {
      contradict += s;
      contradicting.emplace_back(s, static_cast<int>(t));
    } else {
      related.emplace_back(s, static_cast<int>(t));
    }
  }
  auto by_score = [](const std::pair<double, int>& a, const std::pair<double, int>& b) {
    return a.first > b.first;
  };
  std::stable_sort(agreeing.begin(), agreeing.end(), by_score);
  std::stable_sort(contradicting.begin(), contradicting.end(), by_score);
  std::stable_sort(related.begin(), related.end(), by_score);
  std::vector<int> used;
  auto take = [&](const std::vector<std::pair<double, int>>& list) {
    for (const auto& [s, t] : list) {
      if (static_cast<int>(used.size()) >= options.max_rationale_lines) return;
      used.push_back(t);
    }
  };

  const double lo = std::min(agree, contradict);
  const double hi = std::max(agree, contradict);
  result.signals = VerdictSignals(request, graph, agree, contradict, agreeing, contradicting);
  if (agree > contradict) {
    result.fact_label = FactLabel::kSupported;
    result.answer = yes_no ? "SUPPORTED (yes): the retrieved evidence states it "
                             "(extractive backend; no LLM was used)."
                           : "SUPPORTED: the retrieved evidence states the relation the claim "
                             "makes (extractive backend; no LLM was used).";
    take(agreeing);
    take(contradicting);
  } else if (contradict > agree) {
    result.fact_label = FactLabel::kRefuted;
    result.answer = yes_no ? "REFUTED (no): the retrieved evidence states the opposite "
                             "(extractive backend; no LLM was used)."
                           : "REFUTED: the retrieved evidence states the opposite of the claim "
                             "(extractive backend; no LLM was used).";
    take(contradicting);
    take(agreeing);
  } else {
    result.fact_label = FactLabel::kUnknown;
    result.insufficient_evidence = hi <= 0.0;
    if (hi > 0.0) {
      result.answer = yes_no ? "UNKNOWN: the retrieved evidence says yes and no equally "
                               "(extractive backend; no LLM was used)."
                             : "UNKNOWN: the retrieved evidence both supports and contradicts "
                               "the claim equally (extractive backend; no LLM was used).";
    } else {
      result.answer = yes_no ? "UNKNOWN: no retrieved evidence states or denies it; what the "
                               "knowledge graph does not hold is not read as a no (extractive "
                               "backend; no LLM was used)."
                             : "UNKNOWN: no retrieved evidence states or denies the claim's "
                               "relation between its entities (extractive backend; no LLM was "
                               "used).";
    }
    take(agreeing);
    take(contradicting);
    take(related);
  }
  result.confidence = hi;
  result.low_confidence = result.fact_label == FactLabel::kUnknown ||
                          (lo > 0.0 && lo >= options.low_confidence_ratio * hi);
  result.evidence_used = used;
  result.rationale = used.empty() ? "No evidence triple links two entities of the claim."
                                  : Rationale(request, used, "Evidence used:");
  return result;
}

// "a -[r]-> b <-[s]- c": a path walked from its topic end, each triple oriented as walked.
std::string RenderPath(const ReasonRequest& request, const EvidenceGraph& graph,
                       const std::vector<int>& triples) {
  if (triples.empty()) return "";
  const auto [first_head, first_tail] = graph.ends[triples[0]];
  int current = first_head;
  if (triples.size() > 1) {
    const auto [h2, t2] = graph.ends[triples[1]];
    // Start at the end of the first triple not shared with the second.
    current = (first_tail == h2 || first_tail == t2) ? first_head : first_tail;
  } else if (graph.nodes[first_tail].topic && !graph.nodes[first_head].topic) {
    current = first_tail;
  }
  std::string out = graph.nodes[current].display;
  for (int t : triples) {
    const auto [head, tail] = graph.ends[t];
    const std::string& relation = request.evidence[t].relation;
    if (head == current) {
      absl::StrAppend(&out, " -[", relation, "]-> ", graph.nodes[tail].display);
      current = tail;
    } else {
      absl::StrAppend(&out, " <-[", relation, "]- ", graph.nodes[head].display);
      current = head;
    }
  }
  return out;
}

// "drugs", "genes": the answer kind as a reader names it, for the answer's heading.
std::string AnswerNoun(const common::QuestionIntent& intent) {
  static const auto* nouns =
      new absl::flat_hash_map<std::string, std::string>{{"compound", "Drugs"},
                                                        {"gene", "Genes"},
                                                        {"symptom", "Symptoms"},
                                                        {"phenotype", "Phenotypes"},
                                                        {"side_effect", "Side effects"},
                                                        {"disease", "Diseases"},
                                                        {"anatomy", "Anatomy"},
                                                        {"pathway", "Pathways"},
                                                        {"biological_process", "Processes"},
                                                        {"pharmacologic_class", "Drug classes"}};
  if (!intent.answer_types.empty()) {
    auto it = nouns->find(intent.answer_types.front());
    if (it != nouns->end()) return it->second;
  }
  return "Answers";
}

// "Insufficient evidence: no drugs in the evidence link to <whom> through treats (extractive
// backend; no LLM was used)." for an open question whose intent no answer satisfies.
std::string NoAnswerByIntent(const common::QuestionIntent& intent, absl::string_view whom) {
  return absl::StrCat("Insufficient evidence: no ", absl::AsciiStrToLower(AnswerNoun(intent)),
                      " in the evidence link to ", whom, " through ",
                      absl::StrJoin(intent.kinds, ", "), " (extractive backend; no LLM was used).");
}

// Open questions with an intent: the entities of the answer type linked to a topic entity (or
// its is_a anchors) through the relations asked about, ranked by evidence strength; for ALL_OF
// only those linked to every topic group. Empty result (no answer_entities) when the evidence
// holds no such triple; the caller then falls back to listing paths.
ReasonResult OpenByIntent(const ReasonRequest& request, const EvidenceGraph& graph,
                          const common::QuestionIntent& intent, const ExtractiveOptions& options) {
  ReasonResult result = BaseResult();
  struct Candidate {
    int node = -1;
    double support = 0.0;
    std::vector<int> triples;
    absl::flat_hash_set<int> groups;
    std::vector<std::string> sources;
    // With asks_cause: some triple of it has a source beyond population associations (these
    // rank first). Not filled otherwise.
    bool beyond_population = false;
    // With a target asked for: some triple of it states the target as curated knowledge
    // (common::IsCuratedTargetStatement; these rank first). Not filled otherwise.
    bool curated_target = false;
    // With pathways asked for: its name names the topic entity it is linked to ("Signaling by
    // EGFR", "Regulation of TP53 Activity"): a pathway about that gene, ranked first. Not filled
    // otherwise.
    bool names_topic = false;
  };
  const bool asks_target = intent.AsksKind("target");
  const bool asks_pathway = intent.AsksKind("pathway");
  absl::flat_hash_map<int, Candidate> by_node;
  auto near_topic = [&](int n) { return graph.nodes[n].topic || graph.reach.anchored[n]; };
  for (size_t t = 0; t < request.evidence.size(); ++t) {
    const EvidenceTriple& e = request.evidence[t];
    if (!intent.AsksFor(e.relation)) continue;
    const auto [head, tail] = graph.ends[t];
    for (const auto& [answer, other, ref, head_end] :
         {std::tuple{tail, head, &e.tail, false}, std::tuple{head, tail, &e.head, true}}) {
      if (!near_topic(other) || graph.nodes[answer].topic || answer == other) continue;
      // The relation's declared end type, else the entity's (an unknown, empty type is accepted).
      if (!intent.AcceptsEnd(e.relation, head_end, ref->type)) continue;
      Candidate& c = by_node[answer];
      c.node = answer;
      const std::vector<std::string> sources = TripleSources(e);
      // A causal gene asked for: a GWAS locus is no evidence of a cause, so population
      // associations do not count as sources of the triple's strength (they stay listed).
      std::vector<std::string> counted;
      if (intent.asks_cause) {
        std::copy_if(
            sources.begin(), sources.end(), std::back_inserter(counted),
            [](const std::string& s) { return !common::IsPopulationAssociationSource(s); });
      }
      c.support += graph.reach.value[other] * TripleStrength(graph, e, static_cast<int>(t),
                                                             intent.asks_cause ? counted : sources);
      c.triples.push_back(static_cast<int>(t));
      c.groups.insert(graph.nodes[other].topic ? graph.nodes[other].topic_group : -1);
      c.sources.insert(c.sources.end(), sources.begin(), sources.end());
      c.beyond_population = c.beyond_population || !counted.empty();
      c.curated_target = c.curated_target ||
                         (asks_target && common::IsCuratedTargetStatement(e.relation, sources));
      c.names_topic = c.names_topic ||
                      (asks_pathway && graph.nodes[other].topic &&
                       ContainsPhrase(graph.nodes[answer].name.norm, graph.nodes[other].name.norm));
    }
  }
  // Groups a topic end can be linked to (anchors count with their topic's group only when they
  // are topics themselves): ALL_OF needs every one.
  const int groups_needed = std::max(graph.topic_groups, 1);
  std::vector<Candidate> ranked;
  for (auto& [node, c] : by_node) {
    c.groups.erase(-1);
    ranked.push_back(std::move(c));
  }
  auto linked = [](const Candidate& c) { return static_cast<int>(c.groups.size()); };
  std::sort(ranked.begin(), ranked.end(), [&](const Candidate& a, const Candidate& b) {
    if (intent.constraint == common::IntentConstraint::kAllOf && linked(a) != linked(b)) {
      return linked(a) > linked(b);
    }
    // A causal gene asked for: a GWAS locus alone is no answer ahead of curated evidence.
    if (intent.asks_cause && a.beyond_population != b.beyond_population) {
      return a.beyond_population;
    }
    // A target asked for: a measured binding alone is no answer ahead of a curated target.
    if (asks_target && a.curated_target != b.curated_target) return a.curated_target;
    // Pathways asked for: those named after the gene come first ("Which signaling pathways
    // involve EGFR?": "Signaling by EGFR" before "Signaling by GPCR", which every source lists
    // with the same strength).
    if (asks_pathway && a.names_topic != b.names_topic) return a.names_topic;
    if (a.support != b.support) return a.support > b.support;
    return graph.nodes[a.node].display < graph.nodes[b.node].display;
  });
  if (ranked.empty()) return result;
  const bool all_of = intent.constraint == common::IntentConstraint::kAllOf && groups_needed > 1;
  if (all_of) {
    const auto partial = std::find_if(ranked.begin(), ranked.end(), [&](const Candidate& c) {
      return linked(c) < groups_needed;
    });
    if (partial == ranked.begin()) {
      result.insufficient_evidence = true;
      result.answer = NoAnswerByIntent(intent, "every entity of the question");
      result.rationale = Rationale(request, ranked.front().triples, "Closest partial evidence:");
      return result;
    }
    ranked.erase(partial, ranked.end());
  }
  // A target asked for: once the evidence states a curated target, a measured binding alone
  // (BindingDB, Hetionet's merged roles) is no answer at all ("What is the target of omeprazole?"
  // listed the transporter ABCB1 and CYP3A4 after the proton pump); with no curated statement the
  // bindings are all there is, and stay.
  if (asks_target && std::any_of(ranked.begin(), ranked.end(),
                                 [](const Candidate& c) { return c.curated_target; })) {
    ranked.erase(std::remove_if(ranked.begin(), ranked.end(),
                                [](const Candidate& c) { return !c.curated_target; }),
                 ranked.end());
  }
  // A single expected answer lists only those near the best; a list, up to max_open_answers
  // whose support is a fair share of the best's.
  const double floor = ranked.front().support * (intent.single_answer ? options.single_answer_share
                                                                      : options.list_answer_share);
  const int limit = intent.single_answer ? options.max_single_answers : options.max_open_answers;
  // (The first always stays; with asks_cause, a target or pathways asked for the order is not
  // by support alone, so the floor is a filter rather than a cut at the end.)
  ranked.erase(std::remove_if(std::next(ranked.begin()), ranked.end(),
                              [&](const Candidate& c) { return c.support < floor; }),
               ranked.end());
  if (static_cast<int>(ranked.size()) > limit) ranked.resize(static_cast<size_t>(limit));

  // "Which antibiotics treat tuberculosis?" (a class noun, common/question_intent.h): the drugs
  // of the verb's relation that the class named includes. Their line shows the verb's triple
  // (Isoniazid treats tuberculosis), the class membership after it.
  constexpr absl::string_view kClassIncludes = "pharmacologic class includes drug";
  const bool class_members = intent.AsksForClassMembers();
  std::vector<std::string> asked = intent.kinds;
  if (class_members) {
    asked.erase(std::remove(asked.begin(), asked.end(), "drug_class"), asked.end());
  }
  result.answer =
      absl::StrCat(AnswerNoun(intent), " the evidence links to ", absl::StrJoin(asked, ", "),
                   class_members ? ", of the class the question names" : "",
                   " (extractive backend; no LLM was used):");
  absl::flat_hash_set<int> seen;
  for (size_t i = 0; i < ranked.size(); ++i) {
    Candidate& c = ranked[i];
    std::sort(c.sources.begin(), c.sources.end());
    c.sources.erase(std::unique(c.sources.begin(), c.sources.end()), c.sources.end());
    std::stable_sort(c.triples.begin(), c.triples.end(), [&](int a, int b) {
      if (class_members) {
        const bool a_class = request.evidence[a].relation == kClassIncludes;
        const bool b_class = request.evidence[b].relation == kClassIncludes;
        if (a_class != b_class) return b_class;
      }
      return graph.score[a] > graph.score[b];
    });
    const Node& node = graph.nodes[c.node];
    const EvidenceTriple& first = request.evidence[c.triples.front()];
    AnswerEntity entity;
    entity.entity = graph.ends[c.triples.front()].first == c.node ? first.head : first.tail;
    entity.support = c.support;
    entity.evidence = c.triples;
    entity.sources = c.sources;
    entity.topics_linked = linked(c);
    absl::StrAppend(&result.answer, "\n", i + 1, ". ", node.display, " (",
                    RenderPath(request, graph, {c.triples.front()}),
                    "; sources: ", c.sources.empty() ? "unknown" : absl::StrJoin(c.sources, ", "),
                    ")");
    result.answers.push_back(node.display);
    result.answer_entities.push_back(std::move(entity));
    for (int t : c.triples) {
      if (seen.insert(t).second) result.evidence_used.push_back(t);
    }
  }
  result.confidence = graph.score[ranked.front().triples.front()];
  result.raw_confidence = result.confidence;
  result.rationale = Rationale(request, result.evidence_used, "Evidence used:");
  return result;
}

ReasonResult Open(const ReasonRequest& request, const EvidenceGraph& graph,
                  const common::QuestionIntent& intent, const ExtractiveOptions& options) {
  if (!intent.empty()) {
    ReasonResult by_intent = OpenByIntent(request, graph, intent, options);
    if (!by_intent.answer_entities.empty() || by_intent.insufficient_evidence) return by_intent;
  }
  ReasonResult result = BaseResult();
  std::vector<std::vector<int>> chosen;
  std::vector<double> chosen_scores;
  if (!request.paths.empty()) {
    std::vector<int> order(request.paths.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::stable_sort(order.begin(), order.end(), [&request](int a, int b) {
      return request.paths[a].score > request.paths[b].score;
    });
    for (int p : order) {
      if (static_cast<int>(chosen.size()) >= options.max_open_paths) break;
      if (request.paths[p].triple_indices.empty()) continue;
      chosen.push_back(request.paths[p].triple_indices);
      chosen_scores.push_back(request.paths[p].score);
    }
  }
  if (chosen.empty()) {
    // No paths: the best triples that touch a topic entity (any triple when none does).
    const std::vector<int> by_score = EvidenceByScore(request.evidence);
    for (bool require_topic : {true, false}) {
      for (int t : by_score) {
        if (static_cast<int>(chosen.size()) >= options.max_open_paths) break;
        const auto [head, tail] = graph.ends[t];
        if (require_topic && !graph.nodes[head].topic && !graph.nodes[tail].topic) continue;
        chosen.push_back({t});
        chosen_scores.push_back(request.evidence[t].score);
      }
      if (!chosen.empty()) break;
    }
  }
  if (chosen.empty()) {
    result.insufficient_evidence = true;
    result.answer = "No answer: no evidence was retrieved (extractive backend; no LLM was used).";
    result.rationale = "No evidence.";
    return result;
  }
  if (!intent.kinds.empty()) {
    // The question asks for a relation the evidence does not hold around its entities (the KG
    // may not hold it: SIDER lists no side effects of warfarin): say so, then what is there.
    result.insufficient_evidence = true;
    result.answer = absl::StrCat(NoAnswerByIntent(intent, "the question's entities"),
                                 " What the evidence holds about them:");
  } else {
    result.answer = "From the retrieved evidence (extractive backend; no LLM was used):";
  }
  absl::flat_hash_set<int> seen;
  for (size_t i = 0; i < chosen.size(); ++i) {
    absl::StrAppend(&result.answer, "\n", i + 1, ". ", RenderPath(request, graph, chosen[i]),
                    absl::StrFormat(" (score %.2f)", chosen_scores[i]));
    for (int t : chosen[i]) {
      if (seen.insert(t).second) result.evidence_used.push_back(t);
    }
  }
  result.confidence = chosen_scores[0];
  result.rationale = Rationale(request, result.evidence_used, "Evidence used:");
  return result;
}

}  // namespace

ReasonResult ReasonExtractively(const ReasonRequest& request, Task task,
                                const ExtractiveOptions& options) {
  const common::QuestionIntent intent =
      request.intent.has_value() ? *request.intent : common::ReadQuestionIntent(request.question);
  const EvidenceGraph graph = BuildGraph(request, intent, options);
  const Task resolved = task == Task::kUnspecified ? Task::kMultipleChoice : task;
  QuestionClass question_class =
      ClassifyQuestion(request.question, request.options, resolved, intent);
  ReasonResult result;
  switch (resolved) {
    case Task::kFactVerification:
      result = FactVerification(request, graph, intent, options);
      break;
    case Task::kOpen:
      result = Open(request, graph, intent, options);
      break;
    case Task::kMultipleChoice:
    case Task::kUnspecified:
      result = MultipleChoice(request, graph, intent, &question_class, options);
      break;
  }
  result.question_class = std::string(QuestionClassName(question_class));
  if (result.signals.present) result.signals.question_class = result.question_class;
  return result;
}

}  // namespace ibgraphrag::reasoner
