#include "services/retriever/training_data.h"

#include <algorithm>
#include <random>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "common/topic_rule.h"

namespace ibgraphrag::retriever {
namespace {

using eval::QaSplit;
using kgstore::Direction;
using kgstore::EntityId;
using kgstore::KgStore;
using kgstore::RelationId;

// Names, external ids and types of every entity, and the entities of each type.
struct EntityCatalog {
  std::vector<std::string> names;
  std::vector<std::string> external;
  std::vector<std::string> types;
  absl::flat_hash_map<std::string, std::vector<EntityId>> by_type;
};

absl::StatusOr<EntityCatalog> ReadCatalog(const KgStore& store) {
  const int64_t n = store.num_entities();
  std::vector<EntityId> all(n);
  for (int64_t i = 0; i < n; ++i) all[i] = static_cast<EntityId>(i);
  EntityCatalog c;
  c.names.resize(n);
  c.external.resize(n);
  c.types.resize(n);
  IBGR_RETURN_IF_ERROR(store.VisitEntitySummaries(all, [&](const kgstore::EntitySummaryView& e) {
    c.names[e.id] = std::string(e.name);
    c.external[e.id] = std::string(e.external_id);
    c.types[e.id] = std::string(e.type);
  }));
  for (int64_t i = 0; i < n; ++i) c.by_type[c.types[i]].push_back(static_cast<EntityId>(i));
  return c;
}

// Every triple of `relations` at `entity` in `direction`, as (head, relation, tail).
absl::StatusOr<std::vector<std::array<uint32_t, 3>>> AllTriples(
    const KgStore& store, EntityId entity, Direction direction,
    const std::vector<RelationId>& relations) {
  std::vector<std::array<uint32_t, 3>> out;
  kgstore::NeighborQuery q;
  q.entity = entity;
  q.direction = direction;
  q.relations = relations;
  q.limit = kgstore::kMaxNeighborLimit;
  while (true) {
    IBGR_ASSIGN_OR_RETURN(kgstore::NeighborPage page, store.Neighbors(q));
    for (const kgstore::Triple& t : page.triples) out.push_back({t.head, t.relation, t.tail});
    if (page.next_offset == 0) break;
    q.offset = page.next_offset;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

absl::StatusOr<std::vector<EntityId>> AllNeighbors(const KgStore& store, EntityId entity,
                                                   Direction direction,
                                                   const std::vector<RelationId>& relations) {
  IBGR_ASSIGN_OR_RETURN(const auto triples, AllTriples(store, entity, direction, relations));
  std::vector<EntityId> out;
  for (const auto& t : triples) out.push_back(t[0] == entity ? t[2] : t[0]);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<RelationId> RelationIds(const KgStore& store,
                                    std::initializer_list<const char*> names) {
  std::vector<RelationId> out;
  for (const char* n : names) {
    auto r = store.FindRelation(n);
    if (r.ok()) out.push_back(r->id);
  }
  return out;
}

struct TemplateRelations {
  std::vector<RelationId> treats, assoc, presents;
};

// A template question before evidence, options and split: text, question entities, answers.
GeneratedQuestion Draft(std::string text, absl::string_view template_name,
                        std::vector<EntityId> asked, std::vector<EntityId> answers) {
  GeneratedQuestion q;
  q.text = std::move(text);
  q.source = absl::StrCat("template/", template_name);
  q.question_entities = std::move(asked);
  q.answers = std::move(answers);
  return q;
}

// "drug_treats" and "phenotypes" questions of every disease; fills the disease <-> gene maps the
// shared-gene template pairs diseases with.
absl::Status PerDiseaseQuestions(
    const KgStore& store, const EntityCatalog& catalog, const TemplateRelations& rel,
    int max_answers, std::vector<GeneratedQuestion>* drug, std::vector<GeneratedQuestion>* pheno,
    absl::flat_hash_map<EntityId, std::vector<EntityId>>* genes_of,
    absl::flat_hash_map<EntityId, std::vector<EntityId>>* diseases_of) {
  auto it = catalog.by_type.find("disease");
  if (it == catalog.by_type.end()) return absl::OkStatus();
  for (EntityId d : it->second) {
    const std::string& name = catalog.names[d];
    if (!rel.treats.empty()) {
      IBGR_ASSIGN_OR_RETURN(auto drugs, AllNeighbors(store, d, Direction::kIn, rel.treats));
      if (!drugs.empty() && static_cast<int>(drugs.size()) <= max_answers) {
        drug->push_back(Draft(absl::StrCat("Which drug treats ", name, "?"), "drug_treats", {d},
                              std::move(drugs)));
      }
    }
    if (!rel.presents.empty()) {
      IBGR_ASSIGN_OR_RETURN(auto ph, AllNeighbors(store, d, Direction::kOut, rel.presents));
      if (!ph.empty() && static_cast<int>(ph.size()) <= max_answers) {
        pheno->push_back(Draft(absl::StrCat("Which phenotypes does ", name, " present with?"),
                               "phenotypes", {d}, std::move(ph)));
      }
    }
    if (!rel.assoc.empty()) {
      IBGR_ASSIGN_OR_RETURN(auto genes, AllNeighbors(store, d, Direction::kOut, rel.assoc));
      if (!genes.empty()) {
        for (EntityId g : genes) (*diseases_of)[g].push_back(d);
        (*genes_of)[d] = std::move(genes);
      }
    }
  }
  return absl::OkStatus();
}

// One pair of diseases per gene with >= 2 diseases, sampled deterministically; the answers are
// all genes the pair shares.
std::vector<GeneratedQuestion> SharedGeneQuestions(
    const EntityCatalog& catalog, int max_answers,
    const absl::flat_hash_map<EntityId, std::vector<EntityId>>& genes_of,
    const absl::flat_hash_map<EntityId, std::vector<EntityId>>& diseases_of, std::mt19937_64* rng) {
  std::vector<EntityId> genes;
  for (const auto& [g, ds] : diseases_of) {
    if (ds.size() >= 2) genes.push_back(g);
  }
  std::sort(genes.begin(), genes.end());
  std::vector<GeneratedQuestion> out;
  absl::flat_hash_set<uint64_t> seen_pairs;
  for (EntityId g : genes) {
    std::vector<EntityId> ds = diseases_of.at(g);
    std::sort(ds.begin(), ds.end());
    std::uniform_int_distribution<size_t> pick(0, ds.size() - 1);
    EntityId a = ds[pick(*rng)], b = ds[pick(*rng)];
    if (a == b) continue;
    if (a > b) std::swap(a, b);
    if (!seen_pairs.insert((uint64_t{a} << 32) | b).second) continue;
    const auto& ga = genes_of.at(a);
    const auto& gb = genes_of.at(b);
    std::vector<EntityId> both;
    std::set_intersection(ga.begin(), ga.end(), gb.begin(), gb.end(), std::back_inserter(both));
    if (both.empty() || static_cast<int>(both.size()) > max_answers) continue;
    out.push_back(Draft(absl::StrCat("Which gene is associated with both ", catalog.names[a],
                                     " and ", catalog.names[b], "?"),
                        "shared_gene", {a, b}, std::move(both)));
  }
  return out;
}

// Open questions (issue 25): the answer is NOT a topic entity, so the scorer must follow the
// relation the question names. One template per relation kind of the intent reader
// (common/question_intent.h), each asked from one end of its relations with several wordings
// clinicians use; the supervision is every triple linking the asked entity to an answer through
// those relations (one hop: the direct answers), so the hub's other facts are the negatives.
struct OpenTemplate {
  const char* name;                    // "template/open_<name>"
  std::vector<const char*> relations;  // KG relation names
  Direction direction;                 // from the asked entity to the answers
  const char* asked_type;              // entity type asked about
  std::vector<const char*> wordings;   // "{}" = the asked entity's name
};

const std::vector<OpenTemplate>& OpenTemplates() {
  static const auto* templates = new std::vector<OpenTemplate>{
      {"treats",
       {"drug treats disease"},
       Direction::kIn,
       "disease",
       {"What drugs treat {}?", "Which medications are used to treat {}?",
        "What is prescribed for {}?", "Which drugs are indicated for {}?",
        "What medicines are used for {}?", "What are the treatment options for {}?",
        "Which drugs are used in the management of {}?"}},
      {"indications",
       {"drug treats disease"},
       Direction::kOut,
       "compound",
       {"What is {} used for?", "Which diseases does {} treat?",
        "What conditions is {} indicated for?"}},
      {"side_effects",
       {"drug causes side effect"},
       Direction::kOut,
       "compound",
       {"What are the side effects of {}?", "What adverse effects does {} cause?",
        "Which adverse reactions are reported with {}?", "What side effects can {} have?"}},
      {"symptoms",
       {"disease presents symptom", "disease has phenotype"},
       Direction::kOut,
       "disease",
       {"What are the symptoms of {}?", "How does {} present?",
        "What signs and symptoms are seen in {}?", "What are the clinical features of {}?",
        "Which phenotypes are associated with {}?"}},
      {"genes",
       {"disease associated with gene"},
       Direction::kOut,
       "disease",
       {"Which genes are associated with {}?", "What genes are linked to {}?",
        "Which gene is mutated in {}?", "What are the genetic causes of {}?",
        "Which genes are implicated in {}?"}},
      {"targets",
       {"drug targets gene", "drug binds gene"},
       Direction::kOut,
       "compound",
       {"What does {} target?", "Which proteins does {} bind?",
        "What is the molecular target of {}?", "Which genes does {} act on?"}},
      {"subtypes",
       {"disease is a subtype of disease"},
       Direction::kIn,
       "disease",
       {"What are the subtypes of {}?", "What types of {} are there?",
        "Which diseases are a kind of {}?"}},
      {"class_members",
       {"pharmacologic class includes drug"},
       Direction::kOut,
       "pharmacologic_class",
       {"Which drugs belong to the class {}?", "Which drugs are {}?",
        "Name drugs of the class {}."}},
      {"anatomy",
       {"disease localizes to anatomy"},
       Direction::kOut,
       "disease",
       {"Which organs does {} affect?", "Where in the body is {} localized?",
        "Which tissues are affected by {}?"}},
      {"pathways",
       {"gene participates in pathway"},
       Direction::kOut,
       "gene",
       {"Which pathways is {} involved in?", "In which pathways does {} participate?"}},
  };
  return *templates;
}

// The open questions of one template: up to `cap` asked entities, the hubs (most answers) first
// for a tenth of the cap so every hub size is trained on, the rest sampled; each gets one of the
// template's wordings. The answers are capped at kMaxOpenAnswers (the retriever's intent budget
// keeps about that many triples of a relation at a hub).
constexpr size_t kMaxOpenAnswers = 400;

absl::StatusOr<std::vector<GeneratedQuestion>> OpenQuestions(const KgStore& store,
                                                             const EntityCatalog& catalog,
                                                             const OpenTemplate& t, int cap,
                                                             std::mt19937_64* rng) {
  std::vector<RelationId> relations;
  for (const char* name : t.relations) {
    auto r = store.FindRelation(name);
    if (r.ok()) relations.push_back(r->id);
  }
  auto it = catalog.by_type.find(t.asked_type);
  if (relations.empty() || it == catalog.by_type.end()) return std::vector<GeneratedQuestion>{};
  struct Asked {
    EntityId id;
    std::vector<std::array<uint32_t, 3>> triples;
  };
  std::vector<Asked> asked;
  for (EntityId e : it->second) {
    IBGR_ASSIGN_OR_RETURN(auto triples, AllTriples(store, e, t.direction, relations));
    if (!triples.empty()) asked.push_back({e, std::move(triples)});
  }
  std::sort(asked.begin(), asked.end(), [](const Asked& a, const Asked& b) {
    return a.triples.size() != b.triples.size() ? a.triples.size() > b.triples.size() : a.id < b.id;
  });
  const size_t hubs = std::min(asked.size(), static_cast<size_t>(std::max(1, cap / 10)));
  std::shuffle(asked.begin() + hubs, asked.end(), *rng);
  if (cap > 0 && asked.size() > static_cast<size_t>(cap)) asked.resize(cap);
  std::vector<GeneratedQuestion> out;
  std::uniform_int_distribution<size_t> wording(0, t.wordings.size() - 1);
  for (Asked& a : asked) {
    if (a.triples.size() > kMaxOpenAnswers) {
      std::shuffle(a.triples.begin(), a.triples.end(), *rng);
      a.triples.resize(kMaxOpenAnswers);
      std::sort(a.triples.begin(), a.triples.end());
    }
    std::vector<EntityId> answers;
    for (const auto& tr : a.triples) answers.push_back(tr[0] == a.id ? tr[2] : tr[0]);
    std::sort(answers.begin(), answers.end());
    answers.erase(std::unique(answers.begin(), answers.end()), answers.end());
    std::string text = t.wordings[wording(*rng)];
    text.replace(text.find("{}"), 2, catalog.names[a.id]);
    GeneratedQuestion q =
        Draft(std::move(text), absl::StrCat("open_", t.name), {a.id}, std::move(answers));
    q.evidence = std::move(a.triples);
    std::vector<std::string> names;
    for (size_t i = 0; i < q.answers.size() && i < 20; ++i)
      names.push_back(catalog.names[q.answers[i]]);
    q.answer_text = absl::StrJoin(names, "; ");
    q.topics = common::TopicEntityIds(q.question_entities);
    out.push_back(std::move(q));
  }
  return out;
}

// `count` entities of the first answer's type that are not answers: first from the question
// entities' 2-hop neighbourhood (so a distractor is plausible, not trivially far), then from all
// entities of that type. Deterministic for a given rng state.
absl::StatusOr<std::vector<EntityId>> PickDistractors(const KgStore& store,
                                                      const EntityCatalog& catalog,
                                                      const GeneratedQuestion& q, int count,
                                                      std::mt19937_64* rng) {
  if (count <= 0 || q.answers.empty()) return std::vector<EntityId>{};
  const std::string& type = catalog.types[q.answers.front()];
  absl::flat_hash_set<EntityId> excluded(q.answers.begin(), q.answers.end());
  excluded.insert(q.question_entities.begin(), q.question_entities.end());
  kgstore::SubgraphQuery sq;
  sq.seeds = q.question_entities;
  sq.max_hops = 2;
  sq.max_triples = 2000;
  IBGR_ASSIGN_OR_RETURN(kgstore::Subgraph sub, store.ExtractSubgraph(sq));
  std::vector<EntityId> near;
  for (const kgstore::SubgraphEntity& e : sub.entities) {
    if (catalog.types[e.id] == type && !excluded.contains(e.id)) near.push_back(e.id);
  }
  std::shuffle(near.begin(), near.end(), *rng);
  std::vector<EntityId> picked;
  for (EntityId e : near) {
    if (static_cast<int>(picked.size()) == count) break;
    picked.push_back(e);
    excluded.insert(e);
  }
  const std::vector<EntityId>& all = catalog.by_type.at(type);
  std::uniform_int_distribution<size_t> any(0, all.size() - 1);
  // Bounded tries: a type with fewer than count + answers entities gives fewer distractors.
  for (int tries = 0; static_cast<int>(picked.size()) < count && tries < 100; ++tries) {
    const EntityId e = all[any(*rng)];
    if (excluded.insert(e).second) picked.push_back(e);
  }
  return picked;
}

// Options (answers + distractors, shuffled), answer text and topics of a template question: the
// topics are what the gateway would send for it (question entities, then option entities).
absl::Status AddOptions(const KgStore& store, const EntityCatalog& catalog, int distractors,
                        std::mt19937_64* rng, GeneratedQuestion* q) {
  IBGR_ASSIGN_OR_RETURN(std::vector<EntityId> wrong,
                        PickDistractors(store, catalog, *q, distractors, rng));
  std::vector<EntityId> option_ids = q->answers;
  option_ids.insert(option_ids.end(), wrong.begin(), wrong.end());
  std::shuffle(option_ids.begin(), option_ids.end(), *rng);
  std::vector<std::string> answer_names;
  for (EntityId a : q->answers) answer_names.push_back(catalog.names[a]);
  q->answer_text = absl::StrJoin(answer_names, "; ");
  std::vector<uint32_t> kept = q->question_entities;
  for (EntityId o : option_ids) {
    q->options.push_back(catalog.names[o]);
    kept.push_back(o);
  }
  q->topics = common::TopicEntityIds(kept);
  return absl::OkStatus();
}

// The most held-out part among the question entities' parts (by external id).
QaSplit TemplatePart(const EntityCatalog& catalog, const GeneratedQuestion& q, uint64_t seed) {
  QaSplit part = QaSplit::kTrain;
  for (EntityId e : q.question_entities) {
    const QaSplit p = eval::SplitOfKey(catalog.external[e], seed);
    if (p == QaSplit::kTest) return QaSplit::kTest;
    if (p == QaSplit::kValidation) part = QaSplit::kValidation;
  }
  return part;
}

absl::Status ValidateQuestionOptions(const QuestionOptions& o) {
  IBGR_RETURN_IF_ERROR(ValidateSupervision(o.max_hops, o.max_paths_per_question));
  if (o.distractors < 0 || o.distractors > 20) {
    return absl::InvalidArgumentError(
        absl::StrCat("distractors: ", o.distractors, " is outside 0..20"));
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<GeneratedQuestion> QuestionSet::Part(QaSplit part) const {
  switch (part) {
    case QaSplit::kTrain:
      return train;
    case QaSplit::kValidation:
      return validation;
    case QaSplit::kTest:
      return test;
    case QaSplit::kAll:
      break;
  }
  std::vector<GeneratedQuestion> all = train;
  all.insert(all.end(), validation.begin(), validation.end());
  all.insert(all.end(), test.begin(), test.end());
  return all;
}

std::map<std::string, double> QuestionSet::CountsMap() const {
  std::map<std::string, double> out;
  for (const auto& [source, c] : split_counts) {
    out[absl::StrCat("questions/", source, "/train")] = c.train;
    out[absl::StrCat("questions/", source, "/validation")] = c.validation;
    out[absl::StrCat("questions/", source, "/test")] = c.test;
  }
  for (const auto& [key, n] : skipped) out[absl::StrCat("skipped/", key)] = n;
  return out;
}

void AddQuestion(QaSplit part, GeneratedQuestion question, QuestionSet* set) {
  SplitCounts& counts = set->split_counts[question.source];
  switch (part) {
    case QaSplit::kValidation:
      ++counts.validation;
      set->validation.push_back(std::move(question));
      return;
    case QaSplit::kTest:
      ++counts.test;
      set->test.push_back(std::move(question));
      return;
    case QaSplit::kTrain:
    case QaSplit::kAll:
      ++counts.train;
      set->train.push_back(std::move(question));
      return;
  }
}

void MergeQuestionSets(QuestionSet from, QuestionSet* to) {
  for (auto [part, questions] :
       {std::pair{QaSplit::kTrain, &from.train}, std::pair{QaSplit::kValidation, &from.validation},
        std::pair{QaSplit::kTest, &from.test}}) {
    for (GeneratedQuestion& q : *questions) AddQuestion(part, std::move(q), to);
  }
  for (const auto& [key, n] : from.skipped) to->skipped[key] += n;
  to->hash = HashQuestionSet(*to);
}

std::string HashQuestionSet(const QuestionSet& set) {
  common::Sha256Hasher hasher;
  auto triple = [](const std::array<uint32_t, 3>& t) { return absl::StrJoin(t, " "); };
  for (auto [name, questions] :
       {std::pair{"train", &set.train}, std::pair{"validation", &set.validation},
        std::pair{"test", &set.test}}) {
    for (const GeneratedQuestion& q : *questions) {
      // Unit separators keep field boundaries unambiguous whatever the texts contain.
      hasher.Update(absl::StrCat(
          name, "\x1f", q.source, "\x1f", q.text, "\x1f", absl::StrJoin(q.options, "\x1e"), "\x1f",
          q.answer_text, "\x1f", absl::StrJoin(q.question_entities, ","), "\x1f",
          absl::StrJoin(q.topics, ","), "\x1f", absl::StrJoin(q.answers, ","), "\x1f",
          absl::StrJoin(q.evidence, ";",
                        [&](std::string* out, const auto& t) { out->append(triple(t)); })));
      // Only questions with an explanation add to the hash, so sets without one keep theirs.
      if (!q.explanation.empty()) {
        hasher.Update(absl::StrCat("\x1d", q.explanation, "\x1f",
                                   absl::StrJoin(q.explanation_entities, ",")));
      }
      hasher.Update("\n");
    }
  }
  return hasher.HexDigest();
}

absl::Status ValidateSupervision(int max_hops, int max_paths_per_question) {
  if (max_hops < 1 || max_hops > 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_hops: ", max_hops, " is outside 1..4 (supervision path length)"));
  }
  if (max_paths_per_question < 1 || max_paths_per_question > kgstore::kMaxPaths) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_paths_per_question: ", max_paths_per_question, " is outside 1..", kgstore::kMaxPaths));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::array<uint32_t, 3>>> ShortestPathEvidence(
    const KgStore& store, const std::vector<uint32_t>& sources,
    const std::vector<uint32_t>& targets, int max_hops, int max_paths) {
  kgstore::PathQuery pq;
  // ShortestPaths takes at most kMaxPathEndpoints per side; a longer list is cut, not refused.
  pq.sources.assign(sources.begin(),
                    sources.begin() + std::min<size_t>(sources.size(), kgstore::kMaxPathEndpoints));
  pq.targets.assign(targets.begin(),
                    targets.begin() + std::min<size_t>(targets.size(), kgstore::kMaxPathEndpoints));
  pq.max_length = max_hops;
  pq.max_paths = max_paths;
  pq.undirected = true;
  IBGR_ASSIGN_OR_RETURN(kgstore::PathResult paths, store.ShortestPaths(pq));
  absl::flat_hash_set<std::array<uint32_t, 3>> unique;
  for (const kgstore::Path& p : paths.paths) {
    for (const kgstore::PathStep& s : p.steps) {
      unique.insert({s.triple.head, s.triple.relation, s.triple.tail});
    }
  }
  std::vector<std::array<uint32_t, 3>> evidence(unique.begin(), unique.end());
  std::sort(evidence.begin(), evidence.end());
  return evidence;
}

absl::StatusOr<QuestionSet> GenerateQuestions(const KgStore& store,
                                              const QuestionOptions& options) {
  IBGR_RETURN_IF_ERROR(ValidateQuestionOptions(options));
  TemplateRelations rel;
  rel.treats = RelationIds(store, {"drug treats disease"});
  rel.assoc = RelationIds(store, {"disease associated with gene"});
  rel.presents = RelationIds(store, {"disease presents symptom", "disease has phenotype"});
  if (rel.treats.empty() && rel.assoc.empty() && rel.presents.empty()) {
    return absl::FailedPreconditionError(
        "KG has none of the relations the question templates use (drug treats disease, disease "
        "associated with gene, disease presents symptom / has phenotype)");
  }
  IBGR_ASSIGN_OR_RETURN(const EntityCatalog catalog, ReadCatalog(store));
  std::vector<GeneratedQuestion> drug, pheno;
  absl::flat_hash_map<EntityId, std::vector<EntityId>> genes_of, diseases_of;
  IBGR_RETURN_IF_ERROR(PerDiseaseQuestions(store, catalog, rel, options.max_answers, &drug, &pheno,
                                           &genes_of, &diseases_of));
  std::mt19937_64 rng(options.seed);
  std::vector<GeneratedQuestion> shared =
      SharedGeneQuestions(catalog, options.max_answers, genes_of, diseases_of, &rng);

  QuestionSet out;
  for (auto* qs : {&drug, &shared, &pheno}) {
    std::shuffle(qs->begin(), qs->end(), rng);
    if (options.max_per_template > 0 && static_cast<int>(qs->size()) > options.max_per_template) {
      qs->resize(options.max_per_template);
    }
    for (GeneratedQuestion& q : *qs) {
      IBGR_ASSIGN_OR_RETURN(
          q.evidence, ShortestPathEvidence(store, q.question_entities, q.answers, options.max_hops,
                                           options.max_paths_per_question));
      if (q.evidence.empty()) {
        ++out.skipped[q.source + "/no_path"];
        continue;
      }
      IBGR_RETURN_IF_ERROR(AddOptions(store, catalog, options.distractors, &rng, &q));
      const QaSplit part = TemplatePart(catalog, q, options.split_seed);
      AddQuestion(part, std::move(q), &out);
    }
  }
  for (const OpenTemplate& t : OpenTemplates()) {
    IBGR_ASSIGN_OR_RETURN(std::vector<GeneratedQuestion> open,
                          OpenQuestions(store, catalog, t, options.max_per_open_template, &rng));
    for (GeneratedQuestion& q : open) {
      const QaSplit part = TemplatePart(catalog, q, options.split_seed);
      AddQuestion(part, std::move(q), &out);
    }
  }
  out.hash = HashQuestionSet(out);
  return out;
}

}  // namespace ibgraphrag::retriever
