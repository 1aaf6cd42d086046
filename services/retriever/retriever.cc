#include "services/retriever/retriever.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/source_lineage.h"
#include "common/status_macros.h"
#include "services/alignment/trained_encoder.h"
#include "services/retriever/alignment_embedder.h"

namespace ibgraphrag::retriever {
namespace {

double MsSince(absl::Time start) { return absl::ToDoubleMilliseconds(absl::Now() - start); }

absl::Status CheckRange(const char* field, int value, int lo, int hi) {
  if (value < lo || value > hi) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": ", value, " outside ", lo, "..", hi));
  }
  return absl::OkStatus();
}

// kgstore errors as the retriever's callers should see them.
absl::Status MapSourceError(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kNotFound:
      return absl::NotFoundError(absl::StrCat("topic_entity_ids: ", s.message()));
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kCancelled:
      return absl::UnavailableError(absl::StrCat("kgstore unavailable: ", s.message()));
    default:
      return s;
  }
}

float Cosine(const float* a, const float* b, int n) {
  double dot = 0, na = 0, nb = 0;
  for (int i = 0; i < n; ++i) {
    dot += static_cast<double>(a[i]) * b[i];
    na += static_cast<double>(a[i]) * a[i];
    nb += static_cast<double>(b[i]) * b[i];
  }
  if (na == 0 || nb == 0) return 0.0f;
  return static_cast<float>(dot / std::sqrt(na * nb));
}

// A version's scorers, the one requests naming no variant get first.
using HeldScorers = std::vector<std::pair<ScorerVariant, const ScorerParams*>>;

// The default first: `default_variant` (the server's --scorer) when given, else the manifest's
// (model.bin). FAILED_PRECONDITION naming the variant when the version lacks it.
absl::StatusOr<HeldScorers> ScorersDefaultFirst(const LoadedRetrieverVersion& v,
                                                std::optional<ScorerVariant> default_variant) {
  HeldScorers held = {{VariantOfConfig(v.params.config), &v.params}};
  for (const auto& [variant, params] : v.other_variants) held.push_back({variant, &params});
  if (!default_variant.has_value()) return held;
  auto it = std::find_if(held.begin(), held.end(),
                         [&](const auto& h) { return h.first == *default_variant; });
  if (it == held.end()) {
    std::vector<std::string> names;
    for (const auto& h : held) names.push_back(ScorerVariantName(h.first));
    return absl::FailedPreconditionError(absl::StrCat(
        "scorer: model version ", v.manifest.version, " has no ",
        ScorerVariantName(*default_variant), " scorer (it holds ", absl::StrJoin(names, ", "),
        "); train it with `retriever_train --variants=residual,plain`"));
  }
  std::rotate(held.begin(), it, it + 1);
  return held;
}

}  // namespace

const char* ScoringModeName(ScoringMode mode) {
  switch (mode) {
    case ScoringMode::kIbrp:
      return "ibrp";
    case ScoringMode::kShortestPath:
      return "shortest_path";
    case ScoringMode::kCosine:
      return "cosine";
  }
  return "unknown";
}

// ---- RetrieverModel ----

absl::StatusOr<std::shared_ptr<const RetrieverModel>> RetrieverModel::Load(const std::string& dir,
                                                                           const Options& options,
                                                                           TextEmbedder embedder) {
  IBGR_ASSIGN_OR_RETURN(LoadedRetrieverVersion version, LoadRetrieverVersion(dir));
  Options with_base = options;
  if (with_base.encoder_base_path.empty()) {
    with_base.encoder_base_path = alignment::ArtifactBaseOfVersionDir(dir);
  }
  return FromParts(std::move(version), with_base, std::move(embedder));
}

absl::StatusOr<std::shared_ptr<const RetrieverModel>> RetrieverModel::FromParts(
    LoadedRetrieverVersion version, const Options& options, TextEmbedder embedder) {
  if (!embedder.embed) {
    absl::StatusOr<TextEmbedder> builtin =
        EmbedderForId(options.encoder_base_path, version.manifest.encoder_id);
    if (!builtin.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("encoder: ", builtin.status().message(), "; pass it to the server"));
    }
    embedder = *std::move(builtin);
  }
  if (embedder.id != version.manifest.encoder_id ||
      embedder.dim != version.params.config.text_dim) {
    return absl::FailedPreconditionError(
        absl::StrCat("encoder: artifacts were built with \"", version.manifest.encoder_id,
                     "\" but the retriever runs \"", embedder.id, "\"; rebuild the artifacts"));
  }
  std::shared_ptr<RetrieverModel> model(new RetrieverModel());
  model->version_ = std::move(version);
  model->candidate_cap_ = TrainedCandidateCap(model->version_.manifest);
  model->max_scored_ = TrainedMaxScored(model->version_.manifest);
  model->ontology_expansion_ = TrainedOntologyExpansion(model->version_.manifest);
  IBGR_ASSIGN_OR_RETURN(model->device_, ResolveScoringDevice(options.backend, options.device));
  if (options.force_backend_scoring && options.backend == nullptr) {
    return absl::FailedPreconditionError(
        "force_backend_scoring: this binary links no scoring backend (LibTorch)");
  }
  IBGR_ASSIGN_OR_RETURN(const HeldScorers held,
                        ScorersDefaultFirst(model->version_, options.default_variant));
  for (const auto& [variant, params] : held) {
    IBGR_RETURN_IF_ERROR(model->AddScorer(variant, *params, options));
  }
  model->embedder_ = std::move(embedder);
  return std::shared_ptr<const RetrieverModel>(std::move(model));
}

absl::Status RetrieverModel::AddScorer(ScorerVariant variant, const ScorerParams& params,
                                       const Options& options) {
  VariantScorer scorer;
  scorer.variant = variant;
  scorer.config = params.config;
  if (device_ != "cpu" || options.force_backend_scoring) {
    IBGR_ASSIGN_OR_RETURN(
        scorer.device,
        options.backend->CreateScorer(params, *version_.entities, *version_.relations, device_));
  } else {
    IBGR_ASSIGN_OR_RETURN(std::shared_ptr<const ScorerProjections> projections,
                          ComputeProjections(params, *version_.entities, *version_.relations));
    scorer.fused = std::make_unique<FusedScorer>(std::move(projections));
  }
  scorers_.push_back(std::move(scorer));
  return absl::OkStatus();
}

const RetrieverModel::VariantScorer* RetrieverModel::FindScorer(ScorerVariant variant) const {
  for (const VariantScorer& s : scorers_) {
    if (s.variant == variant) return &s;
  }
  return nullptr;
}

std::vector<ScorerVariant> RetrieverModel::variants() const {
  std::vector<ScorerVariant> out;
  for (const VariantScorer& s : scorers_) out.push_back(s.variant);
  return out;
}

absl::StatusOr<ScorerVariant> RetrieverModel::ResolveVariant(
    std::optional<ScorerVariant> requested) const {
  if (!requested.has_value()) return default_variant();
  if (FindScorer(*requested) != nullptr) return *requested;
  std::vector<std::string> held;
  for (const VariantScorer& s : scorers_) held.push_back(ScorerVariantName(s.variant));
  return absl::FailedPreconditionError(
      absl::StrCat("scorer_variant: model version ", version(), " has no ",
                   ScorerVariantName(*requested), " scorer (it holds ", absl::StrJoin(held, ", "),
                   "); train it with `retriever_train --variants=residual,plain`"));
}

const ScorerConfig& RetrieverModel::scorer_config(ScorerVariant variant) const {
  const VariantScorer* s = FindScorer(variant);
  return (s != nullptr ? s : &scorers_.front())->config;
}

absl::Status RetrieverModel::Score(ScorerVariant variant, const CandidateBatch& batch,
                                   absl::Span<float> out) const {
  const VariantScorer* s = FindScorer(variant);
  if (s == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("scorer_variant: no ", ScorerVariantName(variant), " scorer loaded"));
  }
  if (s->device != nullptr) return s->device->Score(batch, out);
  thread_local FusedScratch scratch;
  return s->fused->Score(batch, out, &scratch);
}

// ---- Helpers ----

namespace {

// A partial reasoning path of the beam search: the triples walked from a topic entity.
struct PathState {
  uint32_t node;
  std::vector<uint32_t> steps;
  std::vector<bool> reversed;
  std::vector<uint32_t> visited;
  double log_sum = 0;
  int hops = 0;  // steps other than is_a steps (those are free: a subtype stands for its topic)
  // Geometric-mean score of the steps, in log space (paths of any length compare fairly).
  double MeanLog() const { return log_sum / static_cast<double>(steps.size()); }
};

// Entity -> (triple index, walked tail-to-head) for every kept triple, both ways.
using PathAdjacency = absl::flat_hash_map<uint32_t, std::vector<std::pair<uint32_t, bool>>>;

PathAdjacency BuildPathAdjacency(const std::vector<ScoredTriple>& triples) {
  PathAdjacency adj;
  for (uint32_t i = 0; i < triples.size(); ++i) {
    adj[triples[i].head].push_back({i, false});
    adj[triples[i].tail].push_back({i, true});
  }
  return adj;
}

// The is_a relations of a candidate set's anchor chains: path steps along them are free.
struct PathLimits {
  int max_hops = 0;
  absl::flat_hash_set<uint32_t> free_relations;
  int max_free_steps = 0;  // the longest anchor chain
};

// One hop of the beam: every extension of a frontier path to an entity it has not visited
// (within max_hops non-free steps), the best `beam` of them.
std::vector<PathState> ExtendPaths(const std::vector<PathState>& frontier,
                                   const std::vector<ScoredTriple>& triples,
                                   const PathAdjacency& adj, size_t beam,
                                   const PathLimits& limits) {
  std::vector<PathState> next;
  for (const PathState& s : frontier) {
    auto it = adj.find(s.node);
    if (it == adj.end()) continue;
    for (const auto& [idx, rev] : it->second) {
      const uint32_t other = rev ? triples[idx].head : triples[idx].tail;
      if (std::find(s.visited.begin(), s.visited.end(), other) != s.visited.end()) continue;
      const bool free = limits.free_relations.contains(triples[idx].relation);
      if (!free && s.hops >= limits.max_hops) continue;
      PathState n = s;
      n.hops += free ? 0 : 1;
      n.node = other;
      n.steps.push_back(idx);
      n.reversed.push_back(rev);
      n.visited.push_back(other);
      n.log_sum += std::log(std::max(1e-6f, triples[idx].score));
      next.push_back(std::move(n));
    }
  }
  std::sort(next.begin(), next.end(),
            [](const PathState& a, const PathState& b) { return a.MeanLog() > b.MeanLog(); });
  if (next.size() > beam) next.resize(beam);
  return next;
}

// The best `max_paths` paths (longer first on ties), skipping a path that is a prefix of one
// already taken (it adds nothing to read).
std::vector<ScoredPath> SelectPaths(std::vector<PathState> paths, int max_paths) {
  std::stable_sort(paths.begin(), paths.end(), [](const PathState& a, const PathState& b) {
    const double sa = a.MeanLog(), sb = b.MeanLog();
    if (sa != sb) return sa > sb;
    return a.steps.size() > b.steps.size();
  });
  std::vector<ScoredPath> out;
  for (const PathState& s : paths) {
    if (static_cast<int>(out.size()) >= max_paths) break;
    const bool prefix = std::any_of(out.begin(), out.end(), [&](const ScoredPath& p) {
      return p.triple_indices.size() >= s.steps.size() &&
             std::equal(s.steps.begin(), s.steps.end(), p.triple_indices.begin());
    });
    if (prefix) continue;
    ScoredPath p;
    p.triple_indices = s.steps;
    p.reversed = s.reversed;
    p.score = static_cast<float>(std::exp(s.MeanLog()));
    out.push_back(std::move(p));
  }
  return out;
}

// Beam search for chains of up to `max_hops` triples (plus free is_a steps) starting at a topic
// entity, over the kept triples; a step may walk a triple either way but never revisits an
// entity.
std::vector<ScoredPath> RankPaths(const std::vector<ScoredTriple>& triples,
                                  absl::Span<const uint32_t> topics, const PathLimits& limits,
                                  int max_paths) {
  const PathAdjacency adj = BuildPathAdjacency(triples);
  const size_t beam = static_cast<size_t>(std::max(4 * max_paths, 16));
  std::vector<PathState> frontier, done;
  for (uint32_t t : topics) frontier.push_back({t, {}, {}, {t}, 0.0});
  const int max_steps = limits.max_hops + limits.max_free_steps;
  for (int depth = 0; depth < max_steps && !frontier.empty(); ++depth) {
    frontier = ExtendPaths(frontier, triples, adj, beam, limits);
    done.insert(done.end(), frontier.begin(), frontier.end());
  }
  return SelectPaths(std::move(done), max_paths);
}

std::string RenderPath(const ScoredPath& path, const std::vector<ScoredTriple>& triples,
                       const absl::flat_hash_map<uint32_t, EntityInfo>& entities,
                       const absl::flat_hash_map<uint32_t, RelationInfo>& relations) {
  auto name = [&](uint32_t id) {
    auto it = entities.find(id);
    return it == entities.end() ? absl::StrCat("#", id) : it->second.name;
  };
  auto rel = [&](uint32_t id) {
    auto it = relations.find(id);
    return it == relations.end() ? absl::StrCat("#", id) : it->second.name;
  };
  std::string out;
  for (size_t i = 0; i < path.triple_indices.size(); ++i) {
    const ScoredTriple& t = triples[path.triple_indices[i]];
    const bool rev = path.reversed[i];
    if (i == 0) out = name(rev ? t.tail : t.head);
    if (rev) {
      absl::StrAppend(&out, " <-[", rel(t.relation), "]- ", name(t.head));
    } else {
      absl::StrAppend(&out, " -[", rel(t.relation), "]-> ", name(t.tail));
    }
  }
  return out;
}

}  // namespace

// ---- Retriever ----

Retriever::Retriever(const Options& options, std::shared_ptr<SubgraphSource> source,
                     std::shared_ptr<const ModelHolder> models,
                     std::function<absl::Status()> model_status)
    : options_(options),
      source_(std::move(source)),
      models_(std::move(models)),
      model_status_(std::move(model_status)) {}

namespace {
std::shared_ptr<const ModelHolder> FixedModel(std::shared_ptr<const RetrieverModel> model) {
  auto holder = std::make_shared<ModelHolder>();
  if (model != nullptr) holder->Swap(std::move(model), 0);
  return holder;
}
}  // namespace

Retriever::Retriever(const Options& options, std::shared_ptr<SubgraphSource> source,
                     std::shared_ptr<const RetrieverModel> model, std::string model_error)
    : Retriever(options, std::move(source), FixedModel(std::move(model)),
                [error = std::move(model_error)] {
                  return error.empty() ? absl::OkStatus() : absl::UnavailableError(error);
                }) {}

std::string Retriever::ModelError() const {
  const absl::Status status = model_status_ ? model_status_() : absl::OkStatus();
  return status.ok() ? "none configured" : status.ToString();
}

// ---- Retrieve's steps ----

namespace {

// The query's limits with defaults filled in.
struct RetrieveLimits {
  int top_k = 0;
  int hops = 0;
  int max_candidates = 0;
  int max_paths = 0;
};

// `default_candidates`: the cap for max_candidates 0 (the served model's trained cap).
absl::StatusOr<RetrieveLimits> CheckRetrieveQuery(const RetrieveQuery& query,
                                                  int default_candidates) {
  if (query.question.size() > kMaxQuestionBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("question: ", query.question.size(), " bytes, at most ", kMaxQuestionBytes));
  }
  const int topics = static_cast<int>(query.topic_ids.size() + query.topic_external_ids.size());
  if (topics == 0) {
    return absl::InvalidArgumentError(
        "topic_entity_ids: at least one topic entity (id or external id) is required");
  }
  IBGR_RETURN_IF_ERROR(CheckRange("topic_entity_ids", topics, 1, kMaxTopicEntities));
  RetrieveLimits limits;
  limits.top_k = query.top_k == 0 ? kDefaultTopK : query.top_k;
  limits.hops = query.max_hops == 0 ? kDefaultHops : query.max_hops;
  limits.max_candidates = query.max_candidates == 0 ? default_candidates : query.max_candidates;
  limits.max_paths = query.max_paths == 0 ? kDefaultMaxPaths : query.max_paths;
  IBGR_RETURN_IF_ERROR(CheckRange("top_k", limits.top_k, 1, kMaxTopK));
  IBGR_RETURN_IF_ERROR(CheckRange("max_hops", limits.hops, 1, kMaxHops));
  IBGR_RETURN_IF_ERROR(CheckRange("max_candidates", limits.max_candidates, 1, kMaxCandidates));
  IBGR_RETURN_IF_ERROR(CheckRange("max_paths", limits.max_paths, 1, kMaxPathsLimit));
  return limits;
}

// Train/serve parity: a served model expands only when its manifest says it was trained so;
// the server's option and the request can turn expansion off, never on. Without a model (only
// SHORTEST_PATH) the server's option decides.
bool ExpandOntologyFor(const Retriever::Options& options, const RetrieveQuery& query,
                       const RetrieverModel* model) {
  bool enabled = options.ontology.enabled;
  if (model != nullptr) enabled = enabled && model->ontology_expansion();
  if (query.ontology_expansion.has_value()) enabled = enabled && *query.ontology_expansion;
  return enabled;
}

// The candidate set around the topic entities (candidate_set.h: the same one the trainer
// builds), the subgraph call within the subgraph budget. Records the "subgraph" and "dde"
// (all feature work) stages.
absl::StatusOr<CandidateSet> FetchCandidates(SubgraphSource& source,
                                             const Retriever::Options& options,
                                             const RetrieveQuery& query,
                                             const RetrieveLimits& limits,
                                             const RetrieverModel* model, RetrieveResult* result) {
  CandidateSetOptions co;
  co.max_hops = limits.hops;
  co.max_candidates = limits.max_candidates;
  co.max_fanout_per_node = options.max_fanout_per_node;
  // Pruning is for the trained scorer only (the baselines rank every candidate), and never
  // below top_k, so a request can still get top_k triples.
  const int max_scored = options.max_scored_candidates >= 0 ? options.max_scored_candidates
                         : model != nullptr                 ? model->max_scored()
                                                            : 0;
  co.max_scored =
      query.mode != ScoringMode::kIbrp || max_scored == 0 ? 0 : std::max(max_scored, limits.top_k);
  co.with_dde = query.mode == ScoringMode::kIbrp;
  if (model != nullptr) co.dde = model->manifest().dde;
  co.with_structure_features =
      co.with_dde && model->scorer_config(*result->scorer_variant).prior_dim > 0;
  co.ontology = options.ontology;
  co.ontology.enabled = ExpandOntologyFor(options, query, model);
  result->intent =
      query.intent.has_value() ? *query.intent : common::ReadQuestionIntent(query.question);
  co.intent_relations = IntentRelations(result->intent);
  co.deadline = std::min(query.deadline, absl::Now() + options.subgraph_budget);
  absl::StatusOr<CandidateSet> set =
      BuildCandidateSet(source, query.topic_ids, query.topic_external_ids, co);
  if (!set.ok()) return MapSourceError(set.status());
  result->timings_ms.push_back({"subgraph", set->extract_ms});
  result->timings_ms.push_back({"dde", set->features_ms});
  result->kg_version = set->kg_version;
  result->subgraph_truncated = set->truncated;
  result->subgraph_triples = set->subgraph_triples;
  result->subgraph_entities = static_cast<int64_t>(set->graph.nodes.size());
  result->topic_ids = set->topic_ids;
  result->ontology_anchors = static_cast<int64_t>(set->anchors.size());
  result->intent_added = set->intent_added;
  result->intent_triples = set->intent_triples;
  if (!set->intent_skipped.empty()) {
    result->skipped_steps.push_back(absl::StrCat("intent candidates: ", set->intent_skipped));
    result->timings_ms.push_back({"intent_skipped", 0});
  }
  if (!set->ontology_skipped.empty()) {
    result->skipped_steps.push_back(absl::StrCat("ontology expansion: ", set->ontology_skipped));
    result->timings_ms.push_back({"ontology_skipped", 0});
  }
  return set;
}

// Indices of the candidates the model has embeddings for: those newer than the embeddings
// (ingested after training) cannot be scored by it and keep score 0.
std::vector<uint32_t> EmbeddedCandidates(const RetrieverModel& model, const CandidateSet& cs) {
  std::vector<uint32_t> index;
  index.reserve(cs.size());
  const int64_t ne = model.entities().rows(), nr = model.relations().rows();
  for (size_t i = 0; i < cs.size(); ++i) {
    if (cs.heads[i] < ne && cs.tails[i] < ne && cs.relations[i] < nr) index.push_back(i);
  }
  return index;
}

// COSINE baseline: similarity of the question to head + relation + tail embeddings.
void ScoreByCosine(const RetrieverModel& model, const std::vector<float>& question,
                   const CandidateSet& cs, const std::vector<uint32_t>& index,
                   std::vector<float>* scores) {
  const int d = model.entities().dim();
  std::vector<float> sum(d);
  for (uint32_t i : index) {
    const float* h = model.entities().row(cs.heads[i]);
    const float* r = model.relations().row(cs.relations[i]);
    const float* t = model.entities().row(cs.tails[i]);
    for (int k = 0; k < d; ++k) sum[k] = h[k] + r[k] + t[k];
    (*scores)[i] = 0.5f * (1.0f + Cosine(question.data(), sum.data(), d));
  }
}

// The embedded candidates' columns, copied only when some candidates are left out.
struct CandidateColumns {
  std::vector<uint32_t> heads, relations, tails;
  std::vector<int32_t> head_nodes, tail_nodes;
  std::vector<float> prior;
};

void GatherColumns(const CandidateSet& cs, const std::vector<uint32_t>& index,
                   CandidateColumns* columns) {
  const size_t pd = cs.structure_features.empty() ? 0 : kPriorFeatureDim;
  for (uint32_t i : index) {
    columns->heads.push_back(cs.heads[i]);
    columns->relations.push_back(cs.relations[i]);
    columns->tails.push_back(cs.tails[i]);
    columns->head_nodes.push_back(cs.graph.heads[i]);
    columns->tail_nodes.push_back(cs.graph.tails[i]);
    columns->prior.insert(columns->prior.end(), cs.structure_features.begin() + i * pd,
                          cs.structure_features.begin() + (i + 1) * pd);
  }
}

// IBRP: the trained scorer over the candidate set's DDE (and structure) features.
absl::Status ScoreByModel(const RetrieverModel& model, ScorerVariant variant,
                          const std::vector<float>& question, const CandidateSet& cs,
                          const std::vector<uint32_t>& index, std::vector<float>* scores) {
  const bool all = index.size() == cs.size();
  CandidateColumns columns;
  if (!all) GatherColumns(cs, index, &columns);
  auto pick = [all](const auto& whole, const auto& part) {
    return all ? absl::MakeConstSpan(whole) : absl::MakeConstSpan(part);
  };
  CandidateBatch batch;
  batch.question = question;
  batch.heads = pick(cs.heads, columns.heads);
  batch.relations = pick(cs.relations, columns.relations);
  batch.tails = pick(cs.tails, columns.tails);
  batch.head_nodes = pick(cs.graph.heads, columns.head_nodes);
  batch.tail_nodes = pick(cs.graph.tails, columns.tail_nodes);
  batch.dde = &cs.dde;
  batch.prior = pick(cs.structure_features, columns.prior);
  std::vector<float> out(index.size());
  IBGR_RETURN_IF_ERROR(model.Score(variant, batch, absl::MakeSpan(out)));
  for (size_t j = 0; j < index.size(); ++j) (*scores)[index[j]] = out[j];
  return absl::OkStatus();
}

// One score per candidate, by the query's mode; `model` is null only in SHORTEST_PATH mode.
// Records the "score" stage.
absl::StatusOr<std::vector<float>> ScoreCandidates(const RetrieverModel* model,
                                                   const RetrieveQuery& query,
                                                   const CandidateSet& cs, RetrieveResult* result) {
  const absl::Time t0 = absl::Now();
  if (query.mode == ScoringMode::kShortestPath) {
    // The prior, with the intent's answer triples (the asked relation at a topic) between the
    // topic-topic shortest paths (~0.98) and the other hop-1 triples (0.5).
    std::vector<float> scores = cs.prior_scores;
    for (uint32_t i : cs.intent_answers) scores[i] = std::max(scores[i], kIntentAnswerPrior);
    result->timings_ms.push_back({"score", MsSince(t0)});
    return scores;
  }
  std::vector<float> scores(cs.size(), 0.0f);
  const std::vector<uint32_t> index = EmbeddedCandidates(*model, cs);
  result->unembedded_candidates = static_cast<int64_t>(cs.size() - index.size());
  const std::vector<float> question = model->embedder().embed(query.question);
  if (query.mode == ScoringMode::kCosine) {
    ScoreByCosine(*model, question, cs, index, &scores);
  } else {
    IBGR_RETURN_IF_ERROR(
        ScoreByModel(*model, *result->scorer_variant, question, cs, index, &scores));
  }
  result->timings_ms.push_back({"score", MsSince(t0)});
  return scores;
}

// Adds to `top` (candidate indices) the is_a chains of the anchors its triples touch, in place
// of its lowest-scored other triples (at most half of them), so a subtype's fact in the
// evidence shows how it hangs on its topic entity.
void KeepAnchorChains(const CandidateSet& cs, std::vector<uint32_t>* top) {
  if (cs.anchors.empty()) return;
  absl::flat_hash_map<uint32_t, size_t> anchor_index;
  for (size_t i = 0; i < cs.anchors.size(); ++i) anchor_index.try_emplace(cs.anchors[i], i);
  absl::flat_hash_set<uint32_t> in_top(top->begin(), top->end()), protect;
  std::vector<uint32_t> missing;
  for (uint32_t j : *top) {
    for (uint32_t end : {cs.heads[j], cs.tails[j]}) {
      auto it = anchor_index.find(end);
      if (it == anchor_index.end()) continue;
      for (uint32_t c : cs.anchor_chains[it->second]) {
        if (!protect.insert(c).second) continue;
        if (!in_top.contains(c)) missing.push_back(c);
      }
    }
  }
  size_t replaceable = top->size() / 2;
  for (uint32_t c : missing) {
    auto victim =
        std::find_if(top->rbegin(), top->rend(), [&](uint32_t j) { return !protect.contains(j); });
    if (replaceable == 0 || victim == top->rend()) break;
    *victim = c;
    protect.insert(c);
    --replaceable;
  }
}

// The path limits of a candidate set: its anchors' is_a relations are free steps.
PathLimits LimitsOfPaths(const RetrieveLimits& limits, const CandidateSet& cs) {
  PathLimits out;
  out.max_hops = limits.hops;
  for (const std::vector<uint32_t>& chain : cs.anchor_chains) {
    for (uint32_t c : chain) out.free_relations.insert(cs.relations[c]);
    out.max_free_steps = std::max(out.max_free_steps, static_cast<int>(chain.size()));
  }
  return out;
}

// The best top_k candidates by score (ties: BFS order), with the anchors' is_a chains they need,
// and the paths they form. The set is what the reasoner receives; a novelty reordering inside it
// was measured and removed (it cannot change the gateway's top-100 set and lowered hit@10 on
// validation; docs/retriever.md).
void SelectTopTriples(const RetrieveLimits& limits, const CandidateSet& cs,
                      const std::vector<float>& scores, RetrieveResult* result) {
  const absl::Time t0 = absl::Now();
  auto better = [&](uint32_t a, uint32_t b) {
    if (scores[a] != scores[b]) return scores[a] > scores[b];
    return a < b;  // BFS order: nearer hops first
  };
  std::vector<uint32_t> order = TopWithAnswerShare(scores, cs.intent_answers, limits.top_k);
  const size_t k = order.size();
  KeepAnchorChains(cs, &order);
  std::sort(order.begin(), order.end(), better);
  result->triples.reserve(k);
  for (const uint32_t j : order) {
    result->triples.push_back({cs.heads[j], cs.relations[j], cs.tails[j], scores[j], cs.hops[j]});
  }
  result->paths =
      RankPaths(result->triples, cs.topic_ids, LimitsOfPaths(limits, cs), limits.max_paths);
  result->timings_ms.push_back({"rank", MsSince(t0)});
}

// Names of every entity and relation the result mentions, and the paths rendered with them.
absl::Status DescribeResult(SubgraphSource& source, absl::Time deadline, CandidateSet* cs,
                            RetrieveResult* result) {
  const absl::Time t0 = absl::Now();
  std::vector<uint32_t> ids;
  absl::flat_hash_set<uint32_t> seen;
  for (const ScoredTriple& t : result->triples) {
    if (seen.insert(t.head).second) ids.push_back(t.head);
    if (seen.insert(t.tail).second) ids.push_back(t.tail);
  }
  for (uint32_t t : cs->topic_ids) {
    if (seen.insert(t).second) ids.push_back(t);
  }
  absl::StatusOr<std::vector<EntityInfo>> infos = source.Describe(ids, deadline);
  if (!infos.ok()) return MapSourceError(infos.status());
  for (EntityInfo& e : *infos) result->entities[e.id] = std::move(e);
  for (RelationInfo& r : cs->relation_info) result->relations[r.id] = std::move(r);
  for (ScoredPath& p : result->paths) {
    p.text = RenderPath(p, result->triples, result->entities, result->relations);
  }
  result->timings_ms.push_back({"describe", MsSince(t0)});
  return absl::OkStatus();
}

// Provenance already read this request, by (head, relation, tail).
using ProvenanceByTriple =
    absl::flat_hash_map<std::tuple<uint32_t, uint32_t, uint32_t>, TripleSources>;
std::tuple<uint32_t, uint32_t, uint32_t> TripleKeyOf(uint32_t head, uint32_t relation,
                                                     uint32_t tail) {
  return {head, relation, tail};
}

// Where each selected triple comes from (sources, licences, score, note): one batched read for the
// returned triples only, never for the candidates, less those `known` already holds (the
// evidence-strength step read the intent's answer triples). A failed read is recorded in
// result->skipped_steps, never fails the retrieval.
void DescribeTripleSources(SubgraphSource& source, absl::Time deadline,
                           const ProvenanceByTriple& known, RetrieveResult* result) {
  const absl::Time t0 = absl::Now();
  const size_t n = result->triples.size();
  result->triple_sources.assign(n, TripleSources());
  // Only what the evidence-strength step has not read already.
  std::vector<size_t> missing;
  std::vector<uint32_t> heads, relations, tails;
  for (size_t i = 0; i < n; ++i) {
    const ScoredTriple& t = result->triples[i];
    if (auto it = known.find(TripleKeyOf(t.head, t.relation, t.tail)); it != known.end()) {
      result->triple_sources[i] = it->second;
      continue;
    }
    missing.push_back(i);
    heads.push_back(t.head);
    relations.push_back(t.relation);
    tails.push_back(t.tail);
  }
  if (!missing.empty()) {
    absl::StatusOr<std::vector<TripleSources>> sources =
        source.DescribeTriples(heads, relations, tails, deadline);
    if (!sources.ok() || sources->size() != missing.size()) {
      // Provenance is annotation: the evidence stands without it (empty sources per triple).
      result->triple_sources.assign(n, TripleSources());
      result->skipped_steps.push_back(
          absl::StrCat("provenance: ", sources.ok() ? std::string("provenance size mismatch")
                                                    : MapSourceError(sources.status()).ToString()));
      result->timings_ms.push_back({"provenance_skipped", MsSince(t0)});
      return;
    }
    for (size_t k = 0; k < missing.size(); ++k) {
      result->triple_sources[missing[k]] = std::move((*sources)[k]);
    }
  }
  result->timings_ms.push_back({"provenance", MsSince(t0)});
}

// The evidence strength of the intent's answer triples orders them among themselves: the scorer
// gives the asked relation's triples near-equal scores (0.98-0.995 for asthma's 150 symptoms), so
// which of them reach the top k would be arbitrary. strength = ½·min(independent sources, 3)/3 +
// ½·source score (HSDN tf-idf, DisGeNET, GWAS confidence, SIDER's label base rate, a DrugCentral
// class's specificity; 0 when none).
// Independent as the extractive reasoner counts them (common/source_lineage.h): Hetionet's
// side-effect edges are a random 5,000-pair sample of SIDER's, and counting them as a second
// source put that sample first. The answer triples keep the score
// values the scorer gave them, handed out again in order of (strength, score): the scorer still
// decides where the asked relation stands among the other triples, evidence strength decides
// which of its triples come first (Respiratory Sounds, 2 sources, tf-idf 1,967, before a symptom
// one source names with tf-idf 3). Before strength comes one thing: an answer triple whose two
// ends are both topic entities (a question entity linked to an option through the asked relation,
// "Metformin -[drug causes side effect]-> Diarrhea" for "What are the adverse effects of
// metformin?" with the option "diarrhea") ranks ahead of the answers at one topic. It is the
// triple that decides a multiple-choice question, and by strength alone it lost its place in the
// top k to the options' own neighbourhoods (the hundreds of drugs that cause diarrhea). One
// provenance read for those triples; optional (a failed read: timing "intent_strength_skipped";
// the links between topics still come first, the rest keep their order). A question asking for a
// causal gene (QuestionIntent::asks_cause) then puts the answers that only population
// associations (GWAS loci) back after the others: BCL11A's locus is no answer to "Which gene is
// mutated in sickle cell anemia?" ahead of HBB. And a question asking for what its entities share
// (ALL_OF, "Which drugs treat both hypertension and heart failure?") puts first, after the links
// between topics, the answers linked to the most topic entities: by strength alone,
// hypertension's 68 best-sourced drugs filled the top k and heart failure's none.
void RankAnswersByStrength(SubgraphSource& source, absl::Time deadline, const CandidateSet& cs,
                           std::vector<float>* scores, ProvenanceByTriple* read,
                           RetrieveResult* result) {
  // Triples the model could not score (ingested after training: score 0) keep their 0.
  std::vector<uint32_t> answers;
  for (uint32_t i : cs.intent_answers) {
    if ((*scores)[i] > 0.0f) answers.push_back(i);
  }
  if (answers.empty()) return;
  const absl::Time t0 = absl::Now();
  const size_t n = answers.size();
  std::vector<uint32_t> heads(n), relations(n), tails(n);
  for (size_t k = 0; k < n; ++k) {
    const uint32_t i = answers[k];
    heads[k] = cs.heads[i];
    relations[k] = cs.relations[i];
    tails[k] = cs.tails[i];
  }
  // Links between topics need no provenance: they come first even when the read fails.
  std::vector<char> between_topics(n, 0);
  // "Both X and Y" (ALL_OF): per answer triple, how many topic entities its answer end is linked
  // to by the asked relations; the answers shared by the topics come next.
  std::vector<int> topics_linked(n, 0);
  if (cs.graph.topics.size() > 1) {
    std::vector<char> is_topic(cs.graph.nodes.size(), 0);
    for (int32_t t : cs.graph.topics) is_topic[t] = 1;
    for (size_t k = 0; k < n; ++k) {
      between_topics[k] =
          is_topic[cs.graph.heads[answers[k]]] && is_topic[cs.graph.tails[answers[k]]];
    }
    if (result->intent.constraint == common::IntentConstraint::kAllOf) {
      // Per answer triple its answer end (the end that is not a topic; -1 for none or both).
      std::vector<int32_t> answer_end(n, -1);
      absl::flat_hash_map<int32_t, absl::flat_hash_set<int32_t>> topics_of;
      for (size_t k = 0; k < n; ++k) {
        const int32_t h = cs.graph.heads[answers[k]], t = cs.graph.tails[answers[k]];
        if (is_topic[h] == is_topic[t]) continue;
        answer_end[k] = is_topic[h] ? t : h;
        topics_of[answer_end[k]].insert(is_topic[h] ? h : t);
      }
      for (size_t k = 0; k < n; ++k) {
        if (answer_end[k] >= 0) {
          topics_linked[k] = static_cast<int>(topics_of[answer_end[k]].size());
        }
      }
    }
  }
  std::vector<double> strength(n, 0.0);
  // A causal gene asked for (QuestionIntent::asks_cause): answers whose every source is a
  // population association (a GWAS locus) come after the others, as in the extractive backend.
  std::vector<char> population_only(n, 0);
  // A target asked for: answers that only a measured binding or Hetionet's merged roles state
  // come after the curated targets (common::IsCuratedTargetStatement), as in the extractive
  // backend.
  const bool asks_target = result->intent.AsksKind("target");
  std::vector<char> binding_only(n, 0);
  std::vector<float> values(n);
  for (size_t k = 0; k < n; ++k) values[k] = (*scores)[answers[k]];
  absl::StatusOr<std::vector<TripleSources>> sources =
      source.DescribeTriples(heads, relations, tails, deadline);
  const bool read_ok = sources.ok() && sources->size() == n;
  if (read_ok) {
    // Relation names, for which sources are one lineage (common/source_lineage.h).
    absl::flat_hash_map<uint32_t, absl::string_view> relation_name;
    for (const RelationInfo& r : cs.relation_info) relation_name.emplace(r.id, r.name);
    for (size_t k = 0; k < n; ++k) {
      const TripleSources& s = (*sources)[k];
      auto name = relation_name.find(relations[k]);
      const absl::string_view relation =
          name == relation_name.end() ? absl::string_view() : name->second;
      strength[k] = AnswerEvidenceStrength(s, relation);
      population_only[k] = result->intent.asks_cause && !s.sources.empty() &&
                           std::all_of(s.sources.begin(), s.sources.end(), [](const auto& source) {
                             return common::IsPopulationAssociationSource(source);
                           });
      binding_only[k] = asks_target && relation == "drug binds gene" &&
                        !common::IsCuratedTargetStatement(relation, s.sources);
      read->emplace(TripleKeyOf(heads[k], relations[k], tails[k]), s);
    }
  } else {
    result->skipped_steps.push_back(absl::StrCat(
        "intent strength: ",
        sources.ok() ? "provenance size mismatch" : MapSourceError(sources.status()).ToString()));
  }
  std::vector<size_t> order(n);
  for (size_t k = 0; k < n; ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (between_topics[a] != between_topics[b]) return between_topics[a] > between_topics[b];
    if (topics_linked[a] != topics_linked[b]) return topics_linked[a] > topics_linked[b];
    if (population_only[a] != population_only[b]) return population_only[a] < population_only[b];
    if (binding_only[a] != binding_only[b]) return binding_only[a] < binding_only[b];
    if (strength[a] != strength[b]) return strength[a] > strength[b];
    return values[a] > values[b];
  });
  std::vector<float> sorted_values = values;
  std::sort(sorted_values.begin(), sorted_values.end(), std::greater<float>());
  // Equal values would hand the order back to the top-k's tie rule (BFS order): SHORTEST_PATH
  // gives every answer triple kIntentAnswerPrior, so the strongest were kept only by chance. A tie
  // steps down one float ulp per rank (0.75 becomes 0.74999994, ...; ~2e-5 over 400 answers).
  for (size_t rank = 1; rank < n; ++rank) {
    if (sorted_values[rank] >= sorted_values[rank - 1] && sorted_values[rank - 1] > 0.0f) {
      sorted_values[rank] = std::nextafter(sorted_values[rank - 1], 0.0f);
    }
  }
  for (size_t rank = 0; rank < n; ++rank) {
    (*scores)[answers[order[rank]]] = sorted_values[rank];
  }
  result->timings_ms.push_back(
      {read_ok ? "intent_strength" : "intent_strength_skipped", MsSince(t0)});
}

}  // namespace

double AnswerEvidenceStrength(const TripleSources& sources, absl::string_view relation) {
  const int independent = common::IndependentSourceCount(sources.sources, relation);
  const double count = std::min<double>(static_cast<double>(independent), 3.0) / 3.0;
  const double source_score =
      std::isnan(sources.score) ? 0.0 : std::clamp<double>(sources.score, 0.0, 1.0);
  return 0.5 * count + 0.5 * source_score;
}

std::vector<uint32_t> TopWithAnswerShare(absl::Span<const float> scores,
                                         absl::Span<const uint32_t> answers, size_t k) {
  auto better = [&](uint32_t a, uint32_t b) {
    if (scores[a] != scores[b]) return scores[a] > scores[b];
    return a < b;
  };
  std::vector<uint32_t> top(scores.size());
  std::iota(top.begin(), top.end(), 0u);
  k = std::min(k, top.size());
  std::partial_sort(top.begin(), top.begin() + k, top.end(), better);
  top.resize(k);
  std::vector<uint32_t> best;
  for (uint32_t i : answers) {
    if (i < scores.size() && scores[i] > 0.0f) best.push_back(i);
  }
  std::sort(best.begin(), best.end(), better);
  best.erase(std::unique(best.begin(), best.end()), best.end());
  best.resize(std::min(best.size(), k / 2));
  if (best.empty() || !better(top.back(), best.back())) return top;  // all of them are in
  const absl::flat_hash_set<uint32_t> is_answer(answers.begin(), answers.end());
  const absl::flat_hash_set<uint32_t> in_top(top.begin(), top.end());
  std::vector<uint32_t> missing;  // best first
  for (uint32_t i : best) {
    if (!in_top.contains(i)) missing.push_back(i);
  }
  // The lowest-scored other triples make room, the best missing answer taking the highest slot.
  size_t next = 0;
  std::vector<size_t> slots;
  for (size_t j = top.size(); j-- > 0 && slots.size() < missing.size();) {
    if (!is_answer.contains(top[j])) slots.push_back(j);
  }
  std::reverse(slots.begin(), slots.end());
  for (size_t j : slots) top[j] = missing[next++];
  std::sort(top.begin(), top.end(), better);
  return top;
}

absl::StatusOr<RetrieveResult> Retriever::Retrieve(const RetrieveQuery& query) const {
  const absl::Time start = absl::Now();
  RetrieveResult result;
  result.mode = query.mode;
  // One model for the whole request, even if a new version is swapped in meanwhile.
  const std::shared_ptr<const RetrieverModel> model = models_->Get();
  IBGR_ASSIGN_OR_RETURN(
      const RetrieveLimits limits,
      CheckRetrieveQuery(query, model != nullptr ? model->candidate_cap() : kDefaultMaxCandidates));
  result.max_candidates = limits.max_candidates;
  if (model == nullptr && query.mode != ScoringMode::kShortestPath) {
    return absl::FailedPreconditionError(absl::StrCat("no retriever model loaded (", ModelError(),
                                                      "); only mode SHORTEST_PATH is available"));
  }
  if (model != nullptr) result.model_version = model->version();
  if (query.mode == ScoringMode::kIbrp) {
    IBGR_ASSIGN_OR_RETURN(result.scorer_variant, model->ResolveVariant(query.scorer_variant));
  }
  if (absl::Now() >= query.deadline) {
    return absl::DeadlineExceededError("deadline passed before the subgraph was requested");
  }
  // One KG snapshot for the whole request too (a source with several pins the current one).
  const std::shared_ptr<SubgraphSource> pinned = source_->PinSnapshot();
  SubgraphSource& source = pinned != nullptr ? *pinned : *source_;
  IBGR_ASSIGN_OR_RETURN(CandidateSet cs,
                        FetchCandidates(source, options_, query, limits, model.get(), &result));
  IBGR_ASSIGN_OR_RETURN(std::vector<float> scores,
                        ScoreCandidates(model.get(), query, cs, &result));
  // Provenance read once: the strength step's answers are not read again for the evidence.
  ProvenanceByTriple provenance;
  RankAnswersByStrength(source, query.deadline, cs, &scores, &provenance, &result);
  SelectTopTriples(limits, cs, scores, &result);
  IBGR_RETURN_IF_ERROR(DescribeResult(source, query.deadline, &cs, &result));
  DescribeTripleSources(source, query.deadline, provenance, &result);
  result.timings_ms.push_back({"retrieve", MsSince(start)});
  return result;
}

absl::StatusOr<std::vector<float>> Retriever::ScoreTriples(const ScoreTriplesQuery& query) const {
  return ScoreTriples(query, models_->Get());
}

absl::StatusOr<std::vector<float>> Retriever::ScoreTriples(
    const ScoreTriplesQuery& query, const std::shared_ptr<const RetrieverModel>& model) const {
  if (query.question.size() > kMaxQuestionBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("question: ", query.question.size(), " bytes, at most ", kMaxQuestionBytes));
  }
  IBGR_RETURN_IF_ERROR(CheckRange("topic_entity_ids", static_cast<int>(query.topic_ids.size()), 1,
                                  kMaxTopicEntities));
  const size_t m = query.heads.size();
  if (query.relations.size() != m || query.tails.size() != m) {
    return absl::InvalidArgumentError("triples: head/relation/tail lengths differ");
  }
  IBGR_RETURN_IF_ERROR(CheckRange(
      "triples", static_cast<int>(std::min<size_t>(m, kMaxScoreTriples + 1)), 1, kMaxScoreTriples));
  if (model == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("no retriever model loaded (", ModelError(), ")"));
  }
  const int64_t ne = model->entities().rows(), nr = model->relations().rows();
  std::vector<uint32_t> unknown;
  for (uint32_t t : query.topic_ids) {
    if (t >= ne) unknown.push_back(t);
  }
  if (!unknown.empty()) {
    return absl::NotFoundError(
        absl::StrCat("topic_entity_ids: unknown entity id(s) ", absl::StrJoin(unknown, ", ")));
  }
  for (size_t i = 0; i < m; ++i) {
    if (query.heads[i] >= ne || query.tails[i] >= ne || query.relations[i] >= nr) {
      return absl::NotFoundError(absl::StrCat("triples[", i, "]: unknown entity or relation id (",
                                              query.heads[i], ", ", query.relations[i], ", ",
                                              query.tails[i], ")"));
    }
  }
  const LocalGraph graph = BuildLocalGraph(query.topic_ids, query.heads, query.tails);
  IBGR_ASSIGN_OR_RETURN(DdeFeatures dde,
                        ComputeDde(static_cast<int>(graph.nodes.size()), graph.heads, graph.tails,
                                   graph.topics, model->manifest().dde));
  const std::vector<float> question = model->embedder().embed(query.question);
  CandidateBatch batch;
  batch.question = question;
  batch.heads = query.heads;
  batch.relations = query.relations;
  batch.tails = query.tails;
  batch.head_nodes = graph.heads;
  batch.tail_nodes = graph.tails;
  batch.dde = &dde;
  std::vector<float> prior;
  if (model->scorer_config(model->default_variant()).prior_dim > 0) {
    prior = PriorFeatures(graph, /*hops=*/{});
    batch.prior = prior;
  }
  std::vector<float> scores(m);
  IBGR_RETURN_IF_ERROR(model->Score(batch, absl::MakeSpan(scores)));
  return scores;
}

}  // namespace ibgraphrag::retriever
