#include "services/retriever/trainer.h"

#include <time.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <numeric>
#include <optional>
#include <random>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/parallel_for.h"
#include "common/question_intent.h"
#include "common/status_macros.h"
#include "services/retriever/candidate_set.h"
#include "services/retriever/evaluation.h"
#include "services/retriever/ib_objective.h"
#include "services/retriever/retriever.h"
#include "services/retriever/scorer_module.h"
#include "services/retriever/subgraph_source.h"
#include "services/retriever/torch_scorer.h"
#include "services/retriever/triple_text.h"

namespace ibgraphrag::retriever {
namespace {

namespace F = torch::nn::functional;
using internal::TorchGuard;

// One training question, with its candidate subgraph materialised as ids + DDE.
struct Sample {
  std::vector<float> question;     // z_q, text_dim
  std::vector<float> answer_text;  // f_θ(y), text_dim
  std::vector<uint32_t> heads, relations, tails;
  std::vector<int32_t> head_nodes, tail_nodes;
  DdeFeatures dde;
  std::vector<float> prior;              // [candidates x prior_dim] structure features
  std::vector<uint32_t> positives;       // candidate indices on a supervision path (sorted)
  std::vector<uint32_t> pool_negatives;  // the fixed IB pool's negatives (kFixedPositives)
  std::vector<uint32_t> hard_negatives;  // other candidates with a positive's relation
  std::vector<uint32_t> negatives;       // the rest
  // kFixedPositives: texts to embed (IB pool: positives, then pool_negatives; then y) and, once
  // embedded, f_θ of the pool's triples, [(positives + pool_negatives) x text_dim].
  // kRetrievalTopK: texts = y only; every candidate's f_θ is a row of the shared TripleTexts.
  std::vector<std::string> texts;
  std::vector<float> pool_text;
  std::vector<int32_t> text_row;  // kRetrievalTopK: each candidate's TripleTexts row
  std::vector<uint32_t> top_k;    // kRetrievalTopK: this epoch's IB pool, best first
};

// kRetrievalTopK: f_θ of every distinct candidate triple of the training questions, embedded
// once (f_θ is frozen), [rows x text_dim]; samples refer to rows by Sample::text_row.
struct TripleTexts {
  int dim = 0;  // the encoder's width: floats per row
  absl::flat_hash_map<std::array<uint32_t, 3>, int32_t> row_of;
  std::vector<std::string> texts;  // until embedded
  std::vector<float> rows;
};

absl::Status ValidateOptions(const TrainerOptions& o) {
  auto bad = [](absl::string_view field, absl::string_view rule) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": must be ", rule));
  };
  if (o.epochs < 0) return bad("epochs", ">= 0");
  if (o.batch_size < 1) return bad("batch_size", ">= 1");
  if (!(o.learning_rate > 0)) return bad("learning_rate", "> 0");
  if (o.lambda1 < 0) return bad("lambda1", ">= 0");
  if (o.lambda2 < 0) return bad("lambda2", ">= 0");
  if (o.lambda2 > 0 && !(o.beta > 1.0)) return bad("beta", "> 1");
  if (o.hidden < 1) return bad("hidden", ">= 1");
  if (o.decoder_hidden < 1) return bad("decoder_hidden", ">= 1");
  if (o.negatives_per_question < 0) return bad("negatives_per_question", ">= 0");
  if (o.ib_negatives < 0 || o.ib_negatives > o.negatives_per_question) {
    return bad("ib_negatives", "in [0, negatives_per_question]");
  }
  if (o.ib_top_k < 1) return bad("ib_top_k", ">= 1");
  if (o.bce_warmup_epochs < 0) return bad("bce_warmup_epochs", ">= 0");
  if (o.patience < 0) return bad("patience", ">= 0");
  if (o.max_scored < 0) return bad("max_scored", ">= 0");
  if (o.diagnostics_every < 0) return bad("diagnostics_every", ">= 0");
  if (o.build_threads < 1) return bad("build_threads", ">= 1");
  if (o.cpu_optimise_threads < 0) return bad("cpu_optimise_threads", ">= 0");
  if (o.entity_text_dropout < 0 || o.entity_text_dropout >= 1) {
    return bad("entity_text_dropout", "in [0, 1)");
  }
  if (o.max_pos_weight < 1) return bad("max_pos_weight", ">= 1");
  return absl::OkStatus();
}

// Splits the non-positive candidates into hard negatives (a positive's relation) and the rest.
void ClassifyCandidates(Sample& s, const absl::flat_hash_set<std::array<uint32_t, 3>>& evidence) {
  absl::flat_hash_set<uint32_t> positive_relations;
  for (uint32_t i = 0; i < s.heads.size(); ++i) {
    if (evidence.contains({s.heads[i], s.relations[i], s.tails[i]})) {
      s.positives.push_back(i);
      positive_relations.insert(s.relations[i]);
    }
  }
  for (uint32_t i = 0, p = 0; i < s.heads.size(); ++i) {
    if (p < s.positives.size() && s.positives[p] == i) {
      ++p;
      continue;
    }
    (positive_relations.contains(s.relations[i]) ? s.hard_negatives : s.negatives).push_back(i);
  }
}

// Samples up to `count` negatives, up to half of them hard (a positive's relation elsewhere in
// the subgraph: the same kind of fact about a neighbour), the rest uniform. With `remove`, the
// picked ones leave their lists (the fixed IB pool is never drawn again as a fresh negative).
template <typename Rng>
void SampleNegatives(std::vector<uint32_t>& hard_list, std::vector<uint32_t>& plain_list, int count,
                     Rng& rng, bool remove, std::vector<uint32_t>* out) {
  const size_t hard = std::min(hard_list.size(), static_cast<size_t>(count / 2));
  const size_t start = out->size();
  std::sample(hard_list.begin(), hard_list.end(), std::back_inserter(*out), hard, rng);
  const size_t mid = out->size();
  std::sample(plain_list.begin(), plain_list.end(), std::back_inserter(*out),
              static_cast<size_t>(count) - hard, rng);
  if (!remove) return;
  auto erase = [](std::vector<uint32_t>& list, auto begin, auto end) {
    const absl::flat_hash_set<uint32_t> picked(begin, end);
    list.erase(
        std::remove_if(list.begin(), list.end(), [&](uint32_t c) { return picked.contains(c); }),
        list.end());
  };
  erase(hard_list, out->begin() + start, out->begin() + mid);
  erase(plain_list, out->begin() + mid, out->end());
}

// y's text: the gold answer text, else the answer entities' names joined with ", "; then, as
// `target` asks, the expert explanation (where the question has one) and the question.
std::string TargetText(const GeneratedQuestion& q,
                       const absl::flat_hash_map<uint32_t, std::string>& names,
                       TrainerOptions::IbTargetText target) {
  std::string y = q.answer_text;
  if (y.empty()) {
    std::vector<std::string> parts;
    for (uint32_t a : q.answers) {
      auto it = names.find(a);
      if (it != names.end()) parts.push_back(it->second);
    }
    y = absl::StrJoin(parts, ", ");
  }
  using T = TrainerOptions::IbTargetText;
  if (target != T::kAnswer && !q.explanation.empty()) absl::StrAppend(&y, ". ", q.explanation);
  if (target == T::kAnswerExplanationQuestion) absl::StrAppend(&y, ". ", q.text);
  return y;
}

// The texts f_θ embeds, with entity names from the KG snapshot as served
// (SubgraphSource::Describe): kFixedPositives, the IB pool's verbalised triples (positives, then
// pool negatives) into s.texts; kRetrievalTopK, every candidate's, each distinct triple once
// into `shared`. Then y into s.texts.
absl::Status CollectTexts(SubgraphSource& source, const GeneratedQuestion& q,
                          absl::Span<const RelationInfo> relation_info,
                          const TrainerOptions& options, TripleTexts* shared, Sample& s) {
  const bool top_k = options.ib_pool == TrainerOptions::IbPool::kRetrievalTopK;
  std::vector<uint32_t> pool;
  if (top_k) {
    s.text_row.resize(s.heads.size());
    for (uint32_t c = 0; c < s.heads.size(); ++c) {
      auto [it, inserted] = shared->row_of.try_emplace(
          std::array<uint32_t, 3>{s.heads[c], s.relations[c], s.tails[c]},
          static_cast<int32_t>(shared->row_of.size()));
      s.text_row[c] = it->second;
      if (inserted) pool.push_back(c);
    }
  } else {
    pool = s.positives;
    pool.insert(pool.end(), s.pool_negatives.begin(), s.pool_negatives.end());
  }
  absl::flat_hash_set<uint32_t> ids(q.answers.begin(), q.answers.end());
  for (uint32_t c : pool) ids.insert({s.heads[c], s.tails[c]});
  const std::vector<uint32_t> id_list(ids.begin(), ids.end());
  IBGR_ASSIGN_OR_RETURN(std::vector<EntityInfo> infos,
                        source.Describe(id_list, absl::InfiniteFuture()));
  absl::flat_hash_map<uint32_t, std::string> names;
  for (EntityInfo& e : infos) names[e.id] = std::move(e.name);
  absl::flat_hash_map<uint32_t, absl::string_view> relation_names;
  for (const RelationInfo& r : relation_info) relation_names[r.id] = r.name;
  std::vector<std::string>& triple_texts = top_k ? shared->texts : s.texts;
  for (uint32_t c : pool) {
    triple_texts.push_back(
        VerbaliseTriple(names[s.heads[c]], relation_names[s.relations[c]], names[s.tails[c]]));
  }
  s.texts.push_back(TargetText(q, names, options.ib_target_text));
  return absl::OkStatus();
}

// One question's sample, or nullopt when no supervision triple lies in its candidate set. The
// candidate set is built exactly as Retrieve builds it (candidate_set.h).
absl::StatusOr<std::optional<Sample>> BuildSample(SubgraphSource& source,
                                                  const GeneratedQuestion& q, size_t index,
                                                  const TextEmbedder& embedder,
                                                  const TrainerOptions& options,
                                                  TripleTexts* shared) {
  CandidateSetOptions co;
  co.max_hops = options.max_hops;
  co.max_candidates = options.max_candidates;
  co.max_scored = options.max_scored;
  co.ontology.enabled = options.ontology_expansion;
  co.dde = options.dde;
  co.with_structure_features = options.residual_prior;
  // The question's intent, read from its text as Retrieve reads it (train/serve parity).
  co.intent_relations = IntentRelations(common::ReadQuestionIntent(q.text));
  IBGR_ASSIGN_OR_RETURN(CandidateSet cs, BuildCandidateSet(source, q.topics, {}, co));
  Sample s;
  s.heads = std::move(cs.heads);
  s.relations = std::move(cs.relations);
  s.tails = std::move(cs.tails);
  ClassifyCandidates(s, {q.evidence.begin(), q.evidence.end()});
  if (s.positives.empty()) return std::nullopt;
  if (options.ib_pool == TrainerOptions::IbPool::kFixedPositives) {
    // The pool is drawn from the question's own stream, so it does not depend on λ2 or order.
    std::mt19937_64 pool_rng(options.seed * 0x9E3779B97F4A7C15ull + index);
    SampleNegatives(s.hard_negatives, s.negatives, options.ib_negatives, pool_rng,
                    /*remove=*/true, &s.pool_negatives);
  }
  s.dde = std::move(cs.dde);
  s.prior = std::move(cs.structure_features);
  s.head_nodes = std::move(cs.graph.heads);
  s.tail_nodes = std::move(cs.graph.tails);
  s.question = embedder.embed(q.text);
  IBGR_RETURN_IF_ERROR(CollectTexts(source, q, cs.relation_info, options, shared, s));
  return s;
}

// f_θ of every sample's texts and of the shared triple texts, once, on `threads` threads (the
// encoder is thread-safe).
void EmbedTexts(std::vector<Sample>& samples, TripleTexts& shared, const TextEmbedder& embedder,
                int threads) {
  const size_t d = static_cast<size_t>(embedder.dim);
  shared.dim = embedder.dim;
  shared.rows.resize(shared.texts.size() * d);
  common::ParallelFor(shared.texts.size(), threads, [&](size_t i) {
    const std::vector<float> v = embedder.embed(shared.texts[i]);
    std::copy(v.begin(), v.end(), shared.rows.begin() + static_cast<std::ptrdiff_t>(i * d));
  });
  shared.texts.clear();
  shared.texts.shrink_to_fit();
  common::ParallelFor(samples.size(), threads, [&](size_t i) {
    Sample& s = samples[i];
    s.pool_text.reserve((s.texts.size() - 1) * d);
    for (size_t t = 0; t + 1 < s.texts.size(); ++t) {
      const std::vector<float> v = embedder.embed(s.texts[t]);
      s.pool_text.insert(s.pool_text.end(), v.begin(), v.end());
    }
    s.answer_text = embedder.embed(s.texts.back());
    s.texts.clear();
    s.texts.shrink_to_fit();
  });
}

absl::StatusOr<std::vector<Sample>> BuildSamples(SubgraphSource& source,
                                                 const std::vector<GeneratedQuestion>& questions,
                                                 const TextEmbedder& embedder,
                                                 const TrainerOptions& options,
                                                 TripleTexts* shared) {
  std::vector<Sample> out;
  out.reserve(questions.size());
  for (size_t i = 0; i < questions.size(); ++i) {
    IBGR_ASSIGN_OR_RETURN(std::optional<Sample> s,
                          BuildSample(source, questions[i], i, embedder, options, shared));
    if (s.has_value()) out.push_back(std::move(*s));
  }
  EmbedTexts(out, *shared, embedder, options.build_threads);
  return out;
}

// One optimiser step's inputs on the host (see internal::FactorisedInputs). Per question its rows
// are those of TrainingRows: kFixedPositives [positives | IB pool negatives | fresh negatives],
// all BCE rows, the first two parts the IB pool; kRetrievalTopK [positives | fresh negatives]
// as BCE rows, then the epoch's top K as the IB pool.
struct StepData {
  int64_t questions = 0, positives = 0;
  std::vector<float> z_q, z_r, heads, tails, prior;
  std::vector<int64_t> pair_question, pair_relation, question_relation, head, tail;
  absl::flat_hash_map<uint32_t, int64_t> relation_row;
  // The rows the BCE runs over and their labels (kRetrievalTopK adds IB rows outside the BCE,
  // so that the BCE sees the same candidates whatever λ2 is).
  std::vector<int64_t> bce_rows;
  std::vector<float> labels;
  // IB pool rows: their indices in the step, question, target p(x|q) and f_θ(triple).
  std::vector<int64_t> ib_rows, ib_segment;
  std::vector<float> ib_target, ib_text, answer_text;
};

struct StepContext {
  const EmbeddingTable& entities;
  const EmbeddingTable& relations;
  const TrainerOptions& options;
  int dde_dim, prior_dim;
  const TripleTexts& triple_texts;
};

// One question's rows in a step: candidate indices, the first `bce` of which enter the BCE, and
// the slice [ib_begin, ib_end) that forms the IB pool.
struct QuestionRows {
  std::vector<uint32_t> candidates;
  size_t bce = 0, ib_begin = 0, ib_end = 0;
};

// The rows of a training step for `s`: kFixedPositives, [positives | pool negatives | fresh
// negatives], all in the BCE, the first two parts the IB pool; kRetrievalTopK, [positives |
// fresh negatives] in the BCE, then this epoch's top K as the IB pool.
template <typename Rng>
QuestionRows TrainingRows(const Sample& s, const TrainerOptions& options, Rng& rng) {
  QuestionRows r;
  r.candidates = s.positives;
  std::vector<uint32_t> hard = s.hard_negatives, plain = s.negatives;
  if (options.ib_pool == TrainerOptions::IbPool::kFixedPositives) {
    r.candidates.insert(r.candidates.end(), s.pool_negatives.begin(), s.pool_negatives.end());
    r.ib_end = r.candidates.size();
    SampleNegatives(hard, plain, options.negatives_per_question - options.ib_negatives, rng,
                    /*remove=*/false, &r.candidates);
    r.bce = r.candidates.size();
    return r;
  }
  SampleNegatives(hard, plain, options.negatives_per_question, rng, /*remove=*/false,
                  &r.candidates);
  r.bce = r.ib_begin = r.candidates.size();
  r.candidates.insert(r.candidates.end(), s.top_k.begin(), s.top_k.end());
  r.ib_end = r.candidates.size();
  return r;
}

// Row of `key` in a table filled on first use by `append`.
template <typename Key, typename Append>
int64_t RowOf(Key key, absl::flat_hash_map<Key, int64_t>& rows, int64_t next, Append append) {
  auto [it, inserted] = rows.try_emplace(key, next);
  if (inserted) append();
  return it->second;
}

// Rows [z_e ‖ s_node] per (question, subgraph node), for heads or tails. With entity-text
// dropout a row's z_e is zeroed with probability p (the kept ones scaled by 1 / (1 - p)), so the
// scorer cannot lean only on the names of entities seen in training.
template <typename Rng>
class NodeRows {
 public:
  NodeRows(const Sample& s, const StepContext& ctx, Rng& rng, std::vector<float>& out, bool dropout)
      : s_(s), ctx_(ctx), rng_(rng), out_(out), dropout_(dropout) {}

  int64_t Row(uint32_t entity, int32_t node) {
    const int64_t next = static_cast<int64_t>(out_.size()) / (ctx_.entities.dim() + ctx_.dde_dim);
    return RowOf(node, rows_, next, [&] {
      const float* z = ctx_.entities.row(entity);
      const size_t at = out_.size();
      out_.insert(out_.end(), z, z + ctx_.entities.dim());
      const double p = dropout_ ? ctx_.options.entity_text_dropout : 0.0;
      if (p > 0) {
        const float scale = unit_(rng_) < p ? 0.0f : static_cast<float>(1.0 / (1.0 - p));
        for (size_t k = at; k < out_.size(); ++k) out_[k] *= scale;
      }
      out_.insert(out_.end(), s_.dde.row(node), s_.dde.row(node) + ctx_.dde_dim);
    });
  }

 private:
  const Sample& s_;
  const StepContext& ctx_;
  Rng& rng_;
  std::vector<float>& out_;
  const bool dropout_;
  absl::flat_hash_map<int32_t, int64_t> rows_;
  std::uniform_real_distribution<double> unit_{0.0, 1.0};
};

// Adds question `s` with the candidate rows `rows` to `step`. `training` false: every row is
// scored as served (no entity-text dropout), for the top-K refresh.
template <typename Rng>
void AddQuestion(const Sample& s, const QuestionRows& rows, const StepContext& ctx, Rng& rng,
                 bool training, StepData& step) {
  const int64_t qi = step.questions++;
  step.z_q.insert(step.z_q.end(), s.question.begin(), s.question.end());
  step.answer_text.insert(step.answer_text.end(), s.answer_text.begin(), s.answer_text.end());
  step.positives += static_cast<int64_t>(s.positives.size());
  NodeRows<Rng> heads(s, ctx, rng, step.heads, training), tails(s, ctx, rng, step.tails, training);
  absl::flat_hash_map<uint32_t, int64_t> pairs;  // relation -> (question, relation) pair row
  const bool top_k = ctx.options.ib_pool == TrainerOptions::IbPool::kRetrievalTopK;
  const float inv_pos = 1.0f / static_cast<float>(s.positives.size());
  const size_t d = static_cast<size_t>(ctx.triple_texts.dim);
  for (size_t j = 0; j < rows.candidates.size(); ++j) {
    const uint32_t c = rows.candidates[j];
    const int64_t row = static_cast<int64_t>(step.head.size());
    const int64_t r = RowOf(s.relations[c], step.relation_row,
                            static_cast<int64_t>(step.relation_row.size()), [&] {
                              const float* z = ctx.relations.row(s.relations[c]);
                              step.z_r.insert(step.z_r.end(), z, z + ctx.relations.dim());
                            });
    step.question_relation.push_back(
        RowOf(s.relations[c], pairs, static_cast<int64_t>(step.pair_question.size()), [&] {
          step.pair_question.push_back(qi);
          step.pair_relation.push_back(r);
        }));
    step.head.push_back(heads.Row(s.heads[c], s.head_nodes[c]));
    step.tail.push_back(tails.Row(s.tails[c], s.tail_nodes[c]));
    if (ctx.prior_dim > 0) {
      const auto at = s.prior.begin() + static_cast<size_t>(c) * ctx.prior_dim;
      step.prior.insert(step.prior.end(), at, at + ctx.prior_dim);
    }
    const bool positive = std::binary_search(s.positives.begin(), s.positives.end(), c);
    if (j < rows.bce) {
      step.bce_rows.push_back(row);
      step.labels.push_back(positive ? 1.0f : 0.0f);
    }
    if (j >= rows.ib_begin && j < rows.ib_end) {
      step.ib_rows.push_back(row);
      step.ib_segment.push_back(qi);
      // kRetrievalTopK: p(x|q) comes from the logits at step time (IbInputs::retrieval_target).
      step.ib_target.push_back(!top_k && positive ? inv_pos : 0.0f);
      if (top_k) {
        const float* z = ctx.triple_texts.rows.data() + static_cast<size_t>(s.text_row[c]) * d;
        step.ib_text.insert(step.ib_text.end(), z, z + d);
      }
    }
  }
  if (!top_k && rows.ib_end > rows.ib_begin) {
    step.ib_text.insert(step.ib_text.end(), s.pool_text.begin(), s.pool_text.end());
  }
}

// Host vectors -> tensors on `device` (from_blob views: `step` must outlive them on CPU).
struct StepTensors {
  internal::FactorisedInputs scorer;
  torch::Tensor bce_rows, labels, ib_rows;
  internal::IbInputs ib;
};

StepTensors ToTensors(StepData& step, int text_dim, int dde_dim, bool retrieval_target,
                      const torch::Device& device) {
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
  const auto i64 = torch::TensorOptions().dtype(torch::kInt64);
  auto floats = [&](std::vector<float>& v, int64_t cols) {
    return torch::from_blob(v.data(), {static_cast<int64_t>(v.size()) / cols, cols}, f32)
        .to(device);
  };
  auto flat = [&](std::vector<float>& v) {
    return torch::from_blob(v.data(), {static_cast<int64_t>(v.size())}, f32).to(device);
  };
  auto ids = [&](std::vector<int64_t>& v) {
    return torch::from_blob(v.data(), {static_cast<int64_t>(v.size())}, i64).to(device);
  };
  const int64_t n = static_cast<int64_t>(step.head.size());
  StepTensors t;
  t.scorer.questions = floats(step.z_q, text_dim);
  t.scorer.relations = floats(step.z_r, text_dim);
  t.scorer.pair_question = ids(step.pair_question);
  t.scorer.pair_relation = ids(step.pair_relation);
  t.scorer.heads = floats(step.heads, text_dim + dde_dim);
  t.scorer.tails = floats(step.tails, text_dim + dde_dim);
  t.scorer.question_relation = ids(step.question_relation);
  t.scorer.head = ids(step.head);
  t.scorer.tail = ids(step.tail);
  if (!step.prior.empty()) {
    t.scorer.prior = floats(step.prior, static_cast<int64_t>(step.prior.size()) / n);
  }
  t.bce_rows = ids(step.bce_rows);
  t.labels = flat(step.labels);
  t.ib_rows = ids(step.ib_rows);
  t.ib.questions = step.questions;
  t.ib.retrieval_target = retrieval_target;
  t.ib.segment = ids(step.ib_segment);
  t.ib.target = flat(step.ib_target);
  t.ib.triple_text = floats(step.ib_text, text_dim);
  t.ib.question = t.scorer.questions;
  t.ib.answer = floats(step.answer_text, text_dim);
  return t;
}

// L2 norm of d(term)/d(params) (0 when the term does not depend on them).
double GradNorm(const torch::Tensor& term, const std::vector<torch::Tensor>& params) {
  if (!term.defined() || !term.requires_grad()) return 0.0;
  const std::vector<torch::Tensor> grads =
      torch::autograd::grad({term}, params, /*grad_outputs=*/{}, /*retain_graph=*/true,
                            /*create_graph=*/false, /*allow_unused=*/true);
  double sq = 0;
  for (const torch::Tensor& g : grads) {
    if (g.defined()) sq += g.pow(2).sum().item<double>();
  }
  return std::sqrt(sq);
}

// Sums of the logged quantities over an epoch's steps (diagnostics over diagnostic steps).
struct EpochStats {
  double loss = 0, bce = 0, l_sim = 0, compression = 0, decoder_nll = 0, l_ib = 0, entropy = 0;
  double grad_bce = 0, grad_l_sim = 0, grad_compression = 0;
  int steps = 0, ib_steps = 0, diagnostic_steps = 0;
  int64_t candidates = 0;
};

// Everything one epoch of optimisation needs.
struct TrainingState {
  internal::ScorerModule module;
  internal::VariationalDecoder decoder;
  std::unique_ptr<torch::optim::Adam> adam;
  torch::Device device;
  std::mt19937_64 rng;
};

// One optimiser step over `step`; adds to `stats`.
// `lambda2` is this phase's IB weight (0 in the BCE warm-up); the decoder's own ML fit runs
// whenever the run has λ2 > 0 (it moves ψ only), so that ψ is fitted when the joint phase starts.
void RunStep(TrainingState& st, const StepTensors& t, int64_t positives, bool diagnostics,
             double lambda2, const TrainerOptions& options, EpochStats& stats) {
  const int64_t n = t.labels.size(0);
  const torch::Tensor all_logits = st.module->forward_factorised(t.scorer);
  const torch::Tensor logits = all_logits.index_select(0, t.bce_rows);
  const double pos_weight =
      std::min(options.max_pos_weight,
               std::max(1.0, static_cast<double>(n - positives) / std::max<int64_t>(1, positives)));
  // Eq. 3, first term: BCE against "on a supervision path", positives up-weighted.
  const torch::Tensor bce =
      F::binary_cross_entropy_with_logits(logits, t.labels,
                                          F::BinaryCrossEntropyWithLogitsFuncOptions().pos_weight(
                                              torch::full({1}, pos_weight, logits.options())));
  torch::Tensor loss = options.lambda1 * bce;
  std::optional<internal::IbTerms> ib;
  const bool fit_decoder = options.lambda2 > 0;
  if (fit_decoder || diagnostics) {
    ib = internal::ComputeIbTerms(all_logits.index_select(0, t.ib_rows), t.ib, st.decoder,
                                  options.beta);
    stats.entropy +=
        internal::MeanSelectionEntropy(ib->log_selection, t.ib.segment, t.ib.questions);
    ++stats.ib_steps;
  }
  // Eq. 3, second term, plus ψ's own maximum-likelihood loss (it moves ψ only).
  if (lambda2 > 0) loss = loss + lambda2 * ib->l_ib;
  if (fit_decoder) loss = loss + ib->decoder_nll;
  if (diagnostics) {
    const std::vector<torch::Tensor> params = st.module->parameters();
    stats.grad_bce += GradNorm(bce, params);
    stats.grad_l_sim += GradNorm(ib->l_sim, params);
    stats.grad_compression += GradNorm(ib->compression, params);
    ++stats.diagnostic_steps;
  }
  st.adam->zero_grad();
  loss.backward();
  st.adam->step();
  stats.loss += loss.item<double>();
  stats.bce += bce.item<double>();
  if (ib.has_value()) {
    stats.l_sim += ib->l_sim.item<double>();
    stats.compression += ib->compression.item<double>();
    stats.decoder_nll += ib->decoder_nll.item<double>();
    stats.l_ib += ib->l_ib.item<double>();
  }
  ++stats.steps;
  stats.candidates += t.scorer.head.size(0);  // every row scored: BCE rows and IB pool rows
}

EpochStats RunEpoch(TrainingState& st, const std::vector<Sample>& samples,
                    std::vector<size_t>& order, const StepContext& ctx, int text_dim,
                    double lambda2, int64_t& step_counter) {
  const TrainerOptions& options = ctx.options;
  const bool retrieval_target = options.ib_pool == TrainerOptions::IbPool::kRetrievalTopK;
  st.module->train();
  std::shuffle(order.begin(), order.end(), st.rng);
  EpochStats stats;
  for (size_t b0 = 0; b0 < order.size(); b0 += options.batch_size) {
    const size_t b1 = std::min(order.size(), b0 + options.batch_size);
    StepData step;
    for (size_t bi = b0; bi < b1; ++bi) {
      const Sample& s = samples[order[bi]];
      AddQuestion(s, TrainingRows(s, options, st.rng), ctx, st.rng, /*training=*/true, step);
    }
    const StepTensors t = ToTensors(step, text_dim, ctx.dde_dim, retrieval_target, st.device);
    const bool diagnostics =
        options.diagnostics_every > 0 && step_counter % options.diagnostics_every == 0;
    RunStep(st, t, step.positives, diagnostics, lambda2, options, stats);
    ++step_counter;
  }
  return stats;
}

// kRetrievalTopK: every sample's IB pool becomes the current scorer's top `ib_top_k` of all its
// candidates (scored as served: eval mode, no dropout, no gradient). The training RNG is not
// touched, so λ2 = 0 and λ2 > 0 runs draw the same negatives.
void RefreshTopK(TrainingState& st, std::vector<Sample>& samples, const StepContext& ctx,
                 int text_dim) {
  torch::NoGradGuard no_grad;
  st.module->eval();
  std::mt19937_64 unused_rng(0);
  constexpr size_t kQuestionsPerPass = 64;
  for (size_t b0 = 0; b0 < samples.size(); b0 += kQuestionsPerPass) {
    const size_t b1 = std::min(samples.size(), b0 + kQuestionsPerPass);
    StepData step;
    for (size_t i = b0; i < b1; ++i) {
      QuestionRows all;
      all.candidates.resize(samples[i].heads.size());
      std::iota(all.candidates.begin(), all.candidates.end(), 0u);
      AddQuestion(samples[i], all, ctx, unused_rng, /*training=*/false, step);
    }
    const StepTensors t = ToTensors(step, text_dim, ctx.dde_dim, true, st.device);
    const torch::Tensor logits =
        st.module->forward_factorised(t.scorer).to(torch::kCPU).contiguous();
    const float* score = logits.data_ptr<float>();
    for (size_t i = b0; i < b1; ++i) {
      Sample& s = samples[i];
      const size_t n = s.heads.size();
      const size_t k = std::min(n, static_cast<size_t>(ctx.options.ib_top_k));
      s.top_k.resize(n);
      std::iota(s.top_k.begin(), s.top_k.end(), 0u);
      std::partial_sort(s.top_k.begin(), s.top_k.begin() + static_cast<std::ptrdiff_t>(k),
                        s.top_k.end(), [&](uint32_t a, uint32_t b) {
                          return score[a] != score[b] ? score[a] > score[b] : a < b;
                        });
      s.top_k.resize(k);
      score += n;
    }
  }
  st.module->train();
}

// CPU time of the whole process (all threads), seconds: on a shared machine wall time also
// counts waiting for the cores, CPU time does not.
double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Per-epoch curves into `metrics` and one log line.
std::string RecordEpoch(int epoch, const EpochStats& s, double seconds, double cpu_seconds,
                        size_t questions, std::map<std::string, double>& metrics) {
  auto mean = [](double sum, int count) { return count > 0 ? sum / count : 0.0; };
  const std::string p = absl::StrCat("epoch", epoch, "/");
  metrics[p + "loss"] = mean(s.loss, s.steps);
  metrics[p + "bce"] = mean(s.bce, s.steps);
  metrics[p + "l_sim"] = mean(s.l_sim, s.ib_steps);
  metrics[p + "compression"] = mean(s.compression, s.ib_steps);
  metrics[p + "decoder_nll"] = mean(s.decoder_nll, s.ib_steps);
  metrics[p + "l_ib"] = mean(s.l_ib, s.ib_steps);
  metrics[p + "selection_entropy"] = mean(s.entropy, s.ib_steps);
  metrics[p + "grad_norm_bce"] = mean(s.grad_bce, s.diagnostic_steps);
  metrics[p + "grad_norm_l_sim"] = mean(s.grad_l_sim, s.diagnostic_steps);
  metrics[p + "grad_norm_compression"] = mean(s.grad_compression, s.diagnostic_steps);
  metrics[p + "questions_per_second"] = questions / seconds;
  metrics[p + "cpu_ms_per_question"] = 1e3 * cpu_seconds / questions;
  return absl::StrFormat(
      "epoch %d loss %.4f (bce %.4f, L_sim %.4f, compression %.4f, L_IB %.4f, decoder NLL "
      "%.4f) selection entropy %.3f | grad norms bce %.3g L_sim %.3g compression %.3g | "
      "%.1f questions/s %.0f candidates/s (%.1fs; %.2f CPU ms/question)",
      epoch, metrics[p + "loss"], metrics[p + "bce"], metrics[p + "l_sim"],
      metrics[p + "compression"], metrics[p + "l_ib"], metrics[p + "decoder_nll"],
      metrics[p + "selection_entropy"], metrics[p + "grad_norm_bce"],
      metrics[p + "grad_norm_l_sim"], metrics[p + "grad_norm_compression"], questions / seconds,
      s.candidates / seconds, seconds, metrics[p + "cpu_ms_per_question"]);
}

// The validation evaluation through the real Retrieve path, and the best-epoch bookkeeping.
class EpochSelector {
 public:
  EpochSelector(std::shared_ptr<SubgraphSource> source, const std::vector<GeneratedQuestion>& val,
                std::shared_ptr<const EmbeddingTable> entities,
                std::shared_ptr<const EmbeddingTable> relations, const TextEmbedder& embedder,
                const TrainerOptions& options, TrainResult& result)
      : source_(std::move(source)),
        validation_(SelectionQuestions(val, options)),
        entities_(std::move(entities)),
        relations_(std::move(relations)),
        embedder_(embedder),
        options_(options),
        result_(result) {}

  int questions() const { return static_cast<int>(validation_.size()); }

  // Whether `params` is the best so far. `selectable` false: logged only (the residual start,
  // which ranks like SHORTEST_PATH, is never kept as "the trained model" when epochs > 0).
  absl::StatusOr<bool> Consider(const ScorerParams& params, int epoch, bool selectable) {
    IBGR_ASSIGN_OR_RETURN(EvalMetrics m, Evaluate(params));
    const double key = m.recall_at_10 + 1e-3 * m.recall_at_100;
    const bool best = selectable && key > best_key_;
    result_.metrics[absl::StrCat("epoch", epoch, "/validation_recall@10")] = m.recall_at_10;
    if (options_.log) {
      options_.log(absl::StrFormat(
          "epoch %d validation: recall@10 %.4f recall@50 %.4f recall@100 %.4f "
          "evidence_precision@10 %.4f (%d questions, %.1f ms/question)%s",
          epoch, m.recall_at_10, m.recall_at_50, m.recall_at_100, m.evidence_precision_at_10,
          m.questions, m.mean_retrieve_ms, best ? "  [best]" : (selectable ? "" : "  [start]")));
    }
    if (best) {
      best_key_ = key;
      result_.best_params = params;
      result_.best_epoch = epoch;
      for (const auto& [k, v] : m.ToMap("validation_")) result_.metrics[k] = v;
    }
    return best;
  }

 private:
  // The validation questions the key is computed on: the real QA ones when asked (and present).
  static std::vector<GeneratedQuestion> SelectionQuestions(
      const std::vector<GeneratedQuestion>& validation, const TrainerOptions& options) {
    if (!options.select_on_real_questions) return validation;
    std::vector<GeneratedQuestion> real;
    for (const GeneratedQuestion& q : validation) {
      if (absl::StartsWith(q.source, "qa/")) real.push_back(q);
    }
    return real.empty() ? validation : real;
  }

  absl::StatusOr<EvalMetrics> Evaluate(const ScorerParams& params) {
    LoadedRetrieverVersion v;
    v.manifest.encoder_id = embedder_.id;
    v.manifest.scorer = params.config;
    v.manifest.dde = options_.dde;
    v.manifest.version = 0;
    // Validation serves the model as the server will: expansion follows the manifest.
    v.manifest.training["ontology_expansion"] = options_.ontology_expansion ? "true" : "false";
    v.params = params;
    v.entities = entities_;
    v.relations = relations_;
    RetrieverModel::Options mo;
    mo.device = "cpu";
    IBGR_ASSIGN_OR_RETURN(auto model, RetrieverModel::FromParts(std::move(v), mo, embedder_));
    Retriever::Options ro;
    ro.max_scored_candidates = options_.max_scored;  // the candidate set as served
    ro.ontology.enabled = options_.ontology_expansion;
    Retriever retriever(ro, source_, model);
    EvalOptions eo;
    eo.mode = ScoringMode::kIbrp;
    eo.max_hops = options_.max_hops;
    eo.max_candidates = options_.max_candidates;
    eo.max_questions = options_.max_dev_questions;
    return EvaluateRetriever(retriever, validation_, eo);
  }

  std::shared_ptr<SubgraphSource> source_;
  const std::vector<GeneratedQuestion> validation_;
  std::shared_ptr<const EmbeddingTable> entities_, relations_;
  const TextEmbedder& embedder_;
  const TrainerOptions& options_;
  TrainResult& result_;
  double best_key_ = -1;
};

ScorerConfig MakeConfig(const TextEmbedder& embedder, const TrainerOptions& options) {
  ScorerConfig config;
  config.text_dim = embedder.dim;
  config.dde_dim = options.dde.node_dim();
  config.hidden = options.hidden;
  config.prior_dim = options.residual_prior ? kPriorFeatureDim : 0;
  return config;
}

// The optimisation loop: an optional BCE warm-up phase, then the joint phase, every epoch judged
// on validation; each phase stops early after `patience` epochs without a new best.
absl::Status Optimise(std::vector<Sample>& samples, const StepContext& ctx,
                      const std::string& device_name, EpochSelector& selector,
                      TrainResult& result) {
  const TrainerOptions& options = ctx.options;
  const int process_threads = torch::get_num_threads();
  const bool set_threads = device_name == "cpu" && options.cpu_optimise_threads > 0;
  if (set_threads) torch::set_num_threads(options.cpu_optimise_threads);
  absl::Status status = TorchGuard("TrainRetriever", [&]() -> absl::Status {
    torch::manual_seed(options.seed);
    const ScorerConfig& config = result.best_params.config;
    TrainingState st{internal::ScorerModule(config),
                     internal::VariationalDecoder(config.text_dim, options.decoder_hidden,
                                                  options.decoder_condition_on_y),
                     nullptr, torch::Device(device_name), std::mt19937_64(options.seed)};
    internal::CopyParamsIn(result.best_params, st.module);
    st.module->to(st.device);
    st.decoder->to(st.device);
    auto fresh_optimiser = [&] {
      std::vector<torch::Tensor> params = st.module->parameters();
      if (options.lambda2 > 0) {
        for (const auto& p : st.decoder->parameters()) params.push_back(p);
      }
      st.adam = std::make_unique<torch::optim::Adam>(
          params, torch::optim::AdamOptions(options.learning_rate));
    };
    fresh_optimiser();
    const bool top_k = options.ib_pool == TrainerOptions::IbPool::kRetrievalTopK;
    std::vector<size_t> order(samples.size());
    std::iota(order.begin(), order.end(), 0);
    double train_seconds = 0, refresh_seconds = 0;
    int64_t step_counter = 0, candidates = 0;
    int epoch = 0;
    // One phase of at most `max_epochs` epochs with IB weight `lambda2`.
    auto run_phase = [&](int max_epochs, double lambda2, const char* name) -> absl::Status {
      int since_best = 0;
      for (int e = 1; e <= max_epochs; ++e) {
        ++epoch;
        if (top_k) {
          const absl::Time refresh_start = absl::Now();
          RefreshTopK(st, samples, ctx, config.text_dim);
          refresh_seconds += absl::ToDoubleSeconds(absl::Now() - refresh_start);
        }
        const absl::Time start = absl::Now();
        const double cpu_start = ProcessCpuSeconds();
        const EpochStats stats =
            RunEpoch(st, samples, order, ctx, config.text_dim, lambda2, step_counter);
        const double seconds = std::max(1e-9, absl::ToDoubleSeconds(absl::Now() - start));
        train_seconds += seconds;
        candidates += stats.candidates;
        const std::string line = RecordEpoch(epoch, stats, seconds, ProcessCpuSeconds() - cpu_start,
                                             samples.size(), result.metrics);
        result.metrics[absl::StrCat("epoch", epoch, "/lambda2")] = lambda2;
        if (options.log) {
          options.log(absl::StrCat(line, " [", name, " ", e, "/", max_epochs, "]"));
        }
        st.module->eval();
        IBGR_ASSIGN_OR_RETURN(const bool best, selector.Consider(internal::CopyParamsOut(st.module),
                                                                 epoch, /*selectable=*/true));
        since_best = best ? 0 : since_best + 1;
        if (options.patience > 0 && since_best >= options.patience) {
          if (options.log) {
            options.log(absl::StrFormat("%s: stopped after %d epochs, %d without a new best", name,
                                        e, since_best));
          }
          break;
        }
      }
      return absl::OkStatus();
    };
    if (options.bce_warmup_epochs > 0) {
      IBGR_RETURN_IF_ERROR(run_phase(options.bce_warmup_epochs, 0.0, "BCE warm-up"));
      result.warmup_epochs_run = epoch;
      // The joint phase starts from the best warm-up checkpoint, with fresh optimiser moments
      // (the decoder keeps its fit of the last warm-up epoch: it is refitted every step).
      if (result.best_epoch > 0) {
        internal::CopyParamsIn(result.best_params, st.module);
        st.module->to(st.device);
      }
      fresh_optimiser();
    }
    IBGR_RETURN_IF_ERROR(
        run_phase(options.epochs, options.lambda2, options.lambda2 > 0 ? "BCE + IB" : "BCE"));
    result.metrics["warmup_epochs_run"] = result.warmup_epochs_run;
    result.metrics["epochs_run"] = epoch;
    result.metrics["train_questions_per_second"] =
        samples.size() * epoch / std::max(1e-9, train_seconds);
    result.metrics["train_candidates_per_second"] = candidates / std::max(1e-9, train_seconds);
    if (top_k) result.metrics["top_k_refresh_seconds"] = refresh_seconds;
    return absl::OkStatus();
  });
  if (set_threads) torch::set_num_threads(process_threads);
  return status;
}

}  // namespace

absl::StatusOr<TrainResult> TrainRetriever(std::shared_ptr<const kgstore::KgStore> store,
                                           const QuestionSet& data,
                                           std::shared_ptr<const EmbeddingTable> entities,
                                           std::shared_ptr<const EmbeddingTable> relations,
                                           const TextEmbedder& embedder,
                                           const TrainerOptions& options) {
  IBGR_RETURN_IF_ERROR(ValidateOptions(options));
  if (entities->dim() != embedder.dim || relations->dim() != embedder.dim) {
    return absl::InvalidArgumentError("embeddings: width differs from the encoder's");
  }
  const ScorerConfig config = MakeConfig(embedder, options);
  IBGR_RETURN_IF_ERROR(ValidateScorerConfig(config));
  IBGR_ASSIGN_OR_RETURN(std::string device_name, ResolveDevice(options.device));
  auto source = std::make_shared<InProcessSubgraphSource>(store);
  const std::vector<GeneratedQuestion>& validation = data.validation;
  const absl::Time build_start = absl::Now();
  TripleTexts triple_texts;
  IBGR_ASSIGN_OR_RETURN(std::vector<Sample> samples,
                        BuildSamples(*source, data.train, embedder, options, &triple_texts));
  if (samples.empty()) return absl::FailedPreconditionError("no usable training questions");
  TrainResult result;
  result.train_questions_used = static_cast<int>(samples.size());
  result.best_params = InitScorerParams(config, options.seed);
  if (options.residual_prior) ResidualPriorInit(&result.best_params);
  EpochSelector selector(source, validation, entities, relations, embedder, options, result);
  const auto explained =
      std::count_if(data.train.begin(), data.train.end(),
                    [](const GeneratedQuestion& q) { return !q.explanation.empty(); });
  result.metrics["train_questions_with_explanation"] = static_cast<double>(explained);
  if (options.log) {
    options.log(absl::StrFormat(
        "training: %d of %d train questions have a positive in their subgraph "
        "(built and IB texts embedded in %.1fs; %d distinct candidate triples embedded; %d "
        "with an expert explanation); %d validation questions, %d of them choose the epoch; "
        "device %s",
        samples.size(), data.train.size(), absl::ToDoubleSeconds(absl::Now() - build_start),
        triple_texts.row_of.size(), explained, validation.size(), selector.questions(),
        device_name));
  }
  if (options.epochs == 0 && options.bce_warmup_epochs == 0) {
    IBGR_RETURN_IF_ERROR(selector.Consider(result.best_params, 0, /*selectable=*/true).status());
    return result;
  }
  if (options.residual_prior) {
    IBGR_RETURN_IF_ERROR(selector.Consider(result.best_params, 0, /*selectable=*/false).status());
  }
  const StepContext ctx{*entities,      *relations,       options,
                        config.dde_dim, config.prior_dim, triple_texts};
  IBGR_RETURN_IF_ERROR(Optimise(samples, ctx, device_name, selector, result));
  result.metrics["best_epoch"] = result.best_epoch;
  // 1 when no joint epoch beat the BCE warm-up: the kept model is BCE alone.
  result.metrics["best_in_warmup"] =
      result.warmup_epochs_run > 0 && result.best_epoch <= result.warmup_epochs_run ? 1 : 0;
  result.metrics["validation_selected_on_real"] =
      options.select_on_real_questions && selector.questions() < static_cast<int>(validation.size())
          ? 1
          : 0;
  return result;
}

}  // namespace ibgraphrag::retriever
