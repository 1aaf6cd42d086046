#include "services/retriever/trainer.h"

#include <torch/torch.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <numeric>
#include <random>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "services/retriever/evaluation.h"
#include "services/retriever/prior_features.h"
#include "services/retriever/retriever.h"
#include "services/retriever/scorer_module.h"
#include "services/retriever/subgraph_source.h"
#include "services/retriever/torch_scorer.h"

namespace ibgraphrag::retriever {
namespace {

namespace F = torch::nn::functional;
using internal::TorchGuard;

// One training question, with its candidate subgraph materialised as ids + DDE.
struct Sample {
  std::vector<float> question;  // text_dim
  std::vector<float> answer;    // text_dim: mean answer-entity embedding
  std::vector<uint32_t> heads, relations, tails;
  std::vector<int32_t> head_nodes, tail_nodes;
  DdeFeatures dde;
  std::vector<float> prior;              // [candidates x prior_dim] structure features
  std::vector<uint32_t> positives;       // candidate indices on a supervision path
  std::vector<uint32_t> hard_negatives;  // other candidates with a positive's relation
  std::vector<uint32_t> negatives;       // the rest
};

// The IB head: projection f, and the variational decoder's encoder/decoder.
struct IbHeadImpl : torch::nn::Module {
  IbHeadImpl(int d, int k)
      : f(register_module("f", torch::nn::Linear(d, k))),
        enc(register_module("enc", torch::nn::Linear(2 * d, 2 * k))),
        dec(register_module("dec", torch::nn::Linear(k, d))),
        latent(k) {}
  torch::nn::Linear f, enc, dec;
  int latent;
};
TORCH_MODULE(IbHead);

absl::StatusOr<std::vector<Sample>> BuildSamples(SubgraphSource& source,
                                                 const std::vector<GeneratedQuestion>& questions,
                                                 const EmbeddingTable& entities,
                                                 const TextEmbedder& embedder,
                                                 const TrainerOptions& options) {
  std::vector<Sample> out;
  out.reserve(questions.size());
  const int d = entities.dim();
  for (const GeneratedQuestion& q : questions) {
    SubgraphRequest req;
    req.seed_ids = q.topics;
    req.max_hops = options.max_hops;
    req.max_triples = options.max_candidates;
    IBGR_ASSIGN_OR_RETURN(CandidateSubgraph sg, source.Extract(req));
    const absl::flat_hash_set<std::array<uint32_t, 3>> evidence(q.evidence.begin(),
                                                                q.evidence.end());
    Sample s;
    s.heads = std::move(sg.heads);
    s.relations = std::move(sg.relations);
    s.tails = std::move(sg.tails);
    absl::flat_hash_set<uint32_t> positive_relations;
    for (uint32_t i = 0; i < s.heads.size(); ++i) {
      if (evidence.contains({s.heads[i], s.relations[i], s.tails[i]})) {
        s.positives.push_back(i);
        positive_relations.insert(s.relations[i]);
      }
    }
    if (s.positives.empty()) continue;
    for (uint32_t i = 0, p = 0; i < s.heads.size(); ++i) {
      if (p < s.positives.size() && s.positives[p] == i) {
        ++p;
        continue;
      }
      (positive_relations.contains(s.relations[i]) ? s.hard_negatives : s.negatives).push_back(i);
    }
    LocalGraph g = BuildLocalGraph(sg.resolved_seeds, s.heads, s.tails);
    IBGR_ASSIGN_OR_RETURN(s.dde, ComputeDde(static_cast<int>(g.nodes.size()), g.heads, g.tails,
                                            g.topics, options.dde));
    if (options.residual_prior) s.prior = PriorFeatures(g, sg.hops);
    s.head_nodes = std::move(g.heads);
    s.tail_nodes = std::move(g.tails);
    s.question = embedder.embed(q.text);
    s.answer.assign(d, 0.0f);
    for (uint32_t a : q.answers) {
      const float* row = entities.row(a);
      for (int k = 0; k < d; ++k) s.answer[k] += row[k] / static_cast<float>(q.answers.size());
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

absl::StatusOr<TrainResult> TrainRetriever(std::shared_ptr<const kgstore::KgStore> store,
                                           const QuestionSet& data,
                                           std::shared_ptr<const EmbeddingTable> entities,
                                           std::shared_ptr<const EmbeddingTable> relations,
                                           const TextEmbedder& embedder,
                                           const TrainerOptions& options) {
  auto log = [&](const std::string& line) {
    if (options.log) options.log(line);
  };
  if (options.epochs < 0 || options.batch_size < 1 || options.learning_rate <= 0) {
    return absl::InvalidArgumentError("epochs >= 0, batch_size >= 1 and lr > 0 are required");
  }
  if (options.entity_text_dropout < 0 || options.entity_text_dropout >= 1) {
    return absl::InvalidArgumentError("entity_text_dropout: must be in [0, 1)");
  }
  if (options.lambda2 > 0 && options.beta <= 1.0) {
    return absl::InvalidArgumentError("beta: must be > 1");
  }
  if (entities->dim() != embedder.dim || relations->dim() != embedder.dim) {
    return absl::InvalidArgumentError("embeddings: width differs from the encoder's");
  }
  IBGR_ASSIGN_OR_RETURN(std::string device_name, ResolveDevice(options.device));
  auto source = std::make_shared<InProcessSubgraphSource>(store);
  const absl::Time build_start = absl::Now();
  IBGR_ASSIGN_OR_RETURN(std::vector<Sample> samples,
                        BuildSamples(*source, data.train, *entities, embedder, options));
  if (samples.empty()) return absl::FailedPreconditionError("no usable training questions");
  log(absl::StrFormat(
      "training: %d of %d train questions have a positive in their subgraph "
      "(built in %.1fs); %d dev questions; device %s",
      samples.size(), data.train.size(), absl::ToDoubleSeconds(absl::Now() - build_start),
      data.dev.size(), device_name));

  ScorerConfig config;
  config.text_dim = embedder.dim;
  config.dde_dim = options.dde.node_dim();
  config.hidden = options.hidden;
  config.prior_dim = options.residual_prior ? kPriorFeatureDim : 0;
  IBGR_RETURN_IF_ERROR(ValidateScorerConfig(config));
  const int d = config.text_dim, in = config.input_dim(), sd = config.dde_dim;
  const int pd = config.prior_dim;

  TrainResult result;
  result.train_questions_used = static_cast<int>(samples.size());
  result.best_params = InitScorerParams(config, options.seed);
  if (options.residual_prior) ResidualPriorInit(&result.best_params);
  double best_key = -1;
  Retriever::Options retriever_options;
  retriever_options.novelty_discount = options.novelty_discount;

  // Evaluates `params` on dev through the real Retrieve path (fused CPU scorer).
  auto evaluate = [&](const ScorerParams& params) -> absl::StatusOr<EvalMetrics> {
    LoadedRetrieverVersion v;
    v.manifest.encoder_id = embedder.id;
    v.manifest.scorer = params.config;
    v.manifest.dde = options.dde;
    v.manifest.version = 0;
    v.params = params;
    v.entities = entities;
    v.relations = relations;
    RetrieverModel::Options mo;
    mo.device = "cpu";
    IBGR_ASSIGN_OR_RETURN(auto model, RetrieverModel::FromParts(std::move(v), mo, embedder));
    Retriever retriever(retriever_options, source, model);
    EvalOptions eo;
    eo.mode = ScoringMode::kIbrp;
    eo.max_hops = options.max_hops;
    eo.max_candidates = options.max_candidates;
    eo.max_questions = options.max_dev_questions;
    return EvaluateRetriever(retriever, data.dev, eo);
  };
  // `selectable` false: logged only (the residual start, which ranks like SHORTEST_PATH, is
  // never kept as "the trained model" when epochs > 0).
  auto consider = [&](const ScorerParams& params, int epoch, bool selectable) -> absl::Status {
    IBGR_ASSIGN_OR_RETURN(EvalMetrics m, evaluate(params));
    const double key = m.recall_at_10 + 1e-3 * m.recall_at_100;
    const bool best = selectable && key > best_key;
    log(
        absl::StrFormat("epoch %d dev: recall@10 %.4f recall@50 %.4f recall@100 %.4f "
                        "evidence_precision@10 %.4f (%d questions, %.1f ms/question)%s",
                        epoch, m.recall_at_10, m.recall_at_50, m.recall_at_100,
                        m.evidence_precision_at_10, m.questions, m.mean_retrieve_ms,
                        best         ? "  [best]"
                        : selectable ? ""
                                     : "  [start]"));
    if (best) {
      best_key = key;
      result.best_params = params;
      result.best_epoch = epoch;
      for (const auto& [k, v] : m.ToMap("dev_")) result.metrics[k] = v;
    }
    return absl::OkStatus();
  };
  if (options.epochs == 0) {
    IBGR_RETURN_IF_ERROR(consider(result.best_params, 0, /*selectable=*/true));
    return result;
  }
  if (options.residual_prior) {
    IBGR_RETURN_IF_ERROR(consider(result.best_params, 0, /*selectable=*/false));
  }

  double train_seconds = 0;
  int64_t questions_seen = 0, candidates_seen = 0;
  absl::Status status = TorchGuard("TrainRetriever", [&]() -> absl::Status {
    torch::manual_seed(options.seed);
    const torch::Device device(device_name);
    internal::ScorerModule module(config);
    internal::CopyParamsIn(result.best_params, module);
    module->to(device);
    IbHead ib(d, options.ib_dim);
    ib->to(device);
    std::vector<torch::Tensor> params = module->parameters();
    if (options.lambda2 > 0) {
      for (const auto& p : ib->parameters()) params.push_back(p);
    }
    torch::optim::Adam adam(params, torch::optim::AdamOptions(options.learning_rate));
    std::mt19937_64 rng(options.seed);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::vector<size_t> order(samples.size());
    std::iota(order.begin(), order.end(), 0);
    const int k = options.ib_dim;

    for (int epoch = 1; epoch <= options.epochs; ++epoch) {
      module->train();
      std::shuffle(order.begin(), order.end(), rng);
      const absl::Time epoch_start = absl::Now();
      double loss_sum = 0, bce_sum = 0, ib_sum = 0;
      int steps = 0;
      int64_t epoch_candidates = 0;
      for (size_t b0 = 0; b0 < order.size(); b0 += options.batch_size) {
        const size_t b1 = std::min(order.size(), b0 + options.batch_size);
        const int64_t batch = static_cast<int64_t>(b1 - b0);
        // Gather the batch: all positives + sampled negatives per question.
        std::vector<float> z, xp, e, labels, zq(batch * d), y(batch * d), xbar(batch * d, 0.0f);
        std::vector<int64_t> seg;
        int64_t positives = 0;
        for (size_t bi = b0; bi < b1; ++bi) {
          const Sample& s = samples[order[bi]];
          const int64_t qi = static_cast<int64_t>(bi - b0);
          std::vector<uint32_t> picked = s.positives;
          positives += static_cast<int64_t>(s.positives.size());
          // Up to half the negatives are hard (a positive's relation elsewhere in the subgraph:
          // the same kind of fact about a neighbour), the rest uniform.
          const size_t hard = std::min(s.hard_negatives.size(),
                                       static_cast<size_t>(options.negatives_per_question / 2));
          std::sample(s.hard_negatives.begin(), s.hard_negatives.end(), std::back_inserter(picked),
                      hard, rng);
          std::sample(s.negatives.begin(), s.negatives.end(), std::back_inserter(picked),
                      options.negatives_per_question - hard, rng);
          std::memcpy(zq.data() + qi * d, s.question.data(), d * sizeof(float));
          std::memcpy(y.data() + qi * d, s.answer.data(), d * sizeof(float));
          for (size_t j = 0; j < picked.size(); ++j) {
            const uint32_t c = picked[j];
            const size_t row = z.size();
            z.resize(row + in);
            float* r = z.data() + row;
            std::memcpy(r + config.q_offset(), s.question.data(), d * sizeof(float));
            std::memcpy(r + config.h_offset(), entities->row(s.heads[c]), d * sizeof(float));
            std::memcpy(r + config.r_offset(), relations->row(s.relations[c]), d * sizeof(float));
            std::memcpy(r + config.t_offset(), entities->row(s.tails[c]), d * sizeof(float));
            if (options.entity_text_dropout > 0) {
              const bool drop = unit(rng) < options.entity_text_dropout;
              const float scale = drop ? 0.0f : 1.0f / (1.0f - options.entity_text_dropout);
              for (int t = 0; t < d; ++t) {
                r[config.h_offset() + t] *= scale;
                r[config.t_offset() + t] *= scale;
              }
            }
            std::memcpy(r + config.sh_offset(), s.dde.row(s.head_nodes[c]), sd * sizeof(float));
            std::memcpy(r + config.st_offset(), s.dde.row(s.tail_nodes[c]), sd * sizeof(float));
            if (pd > 0) {
              xp.insert(xp.end(), s.prior.begin() + static_cast<size_t>(c) * pd,
                        s.prior.begin() + static_cast<size_t>(c + 1) * pd);
            }
            labels.push_back(j < s.positives.size() ? 1.0f : 0.0f);
            seg.push_back(qi);
            if (options.lambda2 > 0) {
              const size_t er = e.size();
              e.resize(er + d);
              for (int t = 0; t < d; ++t) {
                const float v = (r[config.h_offset() + t] + r[config.r_offset() + t] +
                                 r[config.t_offset() + t]) /
                                3.0f;
                e[er + t] = v;
                xbar[qi * d + t] += v / static_cast<float>(picked.size());
              }
            }
          }
        }
        const int64_t n = static_cast<int64_t>(labels.size());
        auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
        const torch::Tensor zt = torch::from_blob(z.data(), {n, in}, f32).to(device);
        const torch::Tensor lt = torch::from_blob(labels.data(), {n}, f32).to(device);
        const torch::Tensor xpt =
            pd > 0 ? torch::from_blob(xp.data(), {n, pd}, f32).to(device) : torch::Tensor();
        const torch::Tensor logits = module->forward(zt, xpt);
        const double pos_weight = std::min(
            options.max_pos_weight,
            std::max(1.0, static_cast<double>(n - positives) / std::max<int64_t>(1, positives)));
        const torch::Tensor bce = F::binary_cross_entropy_with_logits(
            logits, lt,
            F::BinaryCrossEntropyWithLogitsFuncOptions().pos_weight(
                torch::full({1}, pos_weight, f32).to(device)));
        torch::Tensor loss = options.lambda1 * bce;
        double ib_value = 0;
        if (options.lambda2 > 0) {
          const torch::Tensor et = torch::from_blob(e.data(), {n, d}, f32).to(device);
          const torch::Tensor segt = torch::from_blob(seg.data(), {n}, torch::kInt64).to(device);
          const torch::Tensor qt = torch::from_blob(zq.data(), {batch, d}, f32).to(device);
          const torch::Tensor yt = torch::from_blob(y.data(), {batch, d}, f32).to(device);
          const torch::Tensor xbart = torch::from_blob(xbar.data(), {batch, d}, f32).to(device);
          const torch::Tensor p = torch::sigmoid(logits);
          const torch::Tensor num =
              torch::zeros({batch, d}, f32.device(device)).index_add_(0, segt, et * p.unsqueeze(1));
          const torch::Tensor den =
              torch::zeros({batch}, f32.device(device)).index_add_(0, segt, p);
          const torch::Tensor xt = num / (den.unsqueeze(1) + 1e-6);
          const torch::Tensor l_sim = -F::cosine_similarity(ib->f->forward(xt), ib->f->forward(yt),
                                                            F::CosineSimilarityFuncOptions().dim(1))
                                           .mean();
          // Decoder pass: frozen = use detached decoder weights (gradient reaches x̃ only).
          auto decode = [&](const torch::Tensor& x, bool frozen) {
            const torch::Tensor in2 = torch::cat({x, qt}, 1);
            const torch::Tensor h =
                frozen ? F::linear(in2, ib->enc->weight.detach(), ib->enc->bias.detach())
                       : ib->enc->forward(in2);
            const torch::Tensor mu = h.narrow(1, 0, k);
            const torch::Tensor logvar = h.narrow(1, k, k).clamp(-8.0, 8.0);
            const torch::Tensor t = mu + torch::exp(0.5 * logvar) * torch::randn_like(mu);
            const torch::Tensor rec =
                frozen ? F::linear(t, ib->dec->weight.detach(), ib->dec->bias.detach())
                       : ib->dec->forward(t);
            // 1 - cosine: bounded in [0, 2], so the IB term cannot swamp the BCE.
            const torch::Tensor err =
                (1.0 - F::cosine_similarity(rec, xbart, F::CosineSimilarityFuncOptions().dim(1)))
                    .mean();
            const torch::Tensor kl = (-0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(1)).mean();
            return std::make_pair(err, kl);
          };
          auto [dec_err, dec_kl] = decode(xt.detach(), /*frozen=*/false);
          auto [comp_err, unused_kl] = decode(xt, /*frozen=*/true);
          (void)unused_kl;
          const torch::Tensor l_ib = -comp_err + (options.beta - 1.0) * l_sim;
          loss = loss + options.lambda2 * l_ib + dec_err + 1e-3 * dec_kl;
          ib_value = l_ib.item<double>();
        }
        adam.zero_grad();
        loss.backward();
        adam.step();
        loss_sum += loss.item<double>();
        bce_sum += bce.item<double>();
        ib_sum += ib_value;
        ++steps;
        epoch_candidates += n;
        questions_seen += batch;
      }
      const double secs = absl::ToDoubleSeconds(absl::Now() - epoch_start);
      train_seconds += secs;
      candidates_seen += epoch_candidates;
      log(absl::StrFormat(
          "epoch %d/%d loss %.4f (bce %.4f, ib %.4f) %.1f questions/s %.0f candidates/s (%.1fs)",
          epoch, options.epochs, loss_sum / steps, bce_sum / steps, ib_sum / steps,
          samples.size() / secs, epoch_candidates / secs, secs));
      module->eval();
      IBGR_RETURN_IF_ERROR(consider(internal::CopyParamsOut(module), epoch, /*selectable=*/true));
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  result.metrics["train_questions_per_second"] = questions_seen / std::max(1e-9, train_seconds);
  result.metrics["train_candidates_per_second"] = candidates_seen / std::max(1e-9, train_seconds);
  result.metrics["best_epoch"] = result.best_epoch;
  return result;
}

}  // namespace ibgraphrag::retriever
