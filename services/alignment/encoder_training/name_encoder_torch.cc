// The one file of the name-encoder trainer that includes <torch/torch.h>.
#include <faiss/IndexFlat.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/torch_guard.h"
#include "services/alignment/encoder_training/name_encoder_model.h"

namespace ibgraphrag::alignment::training {
namespace {

namespace F = torch::nn::functional;
using common::TorchGuard;

// Featurized names in CSR form: name i has features [offsets[i], offsets[i + 1]) with weights
// already divided by their sum (the model's weighted mean is then an EmbeddingBag "sum").
struct FeaturizedNames {
  std::vector<int64_t> ids;
  std::vector<float> weights;
  std::vector<int64_t> offsets = {0};
  std::vector<uint32_t> group;  // the concept of each name

  size_t size() const { return group.size(); }
  // Appends `text`; false (nothing appended) when it has no features.
  bool Add(const NameFeaturizer& featurizer, const std::string& text, uint32_t g) {
    std::vector<int32_t> f;
    std::vector<float> w;
    featurizer.Featurize(text, &f, &w);
    double sum = 0;
    for (float x : w) sum += x;
    if (f.empty() || sum <= 0) return false;
    for (size_t i = 0; i < f.size(); ++i) {
      ids.push_back(f[i]);
      weights.push_back(static_cast<float>(w[i] / sum));
    }
    offsets.push_back(static_cast<int64_t>(ids.size()));
    group.push_back(g);
    return true;
  }
};

// The weighted-mean bags of the names `rows` (rows.size() x dim): the model's first stage,
// computed by hand from the table (see TableTrainer for why the table lives outside autograd).
torch::Tensor ComputeBags(const std::vector<float>& table, int dim, const FeaturizedNames& names,
                          const std::vector<uint32_t>& rows) {
  torch::Tensor out = torch::zeros({static_cast<int64_t>(rows.size()), dim});
  float* o = out.data_ptr<float>();
  for (size_t i = 0; i < rows.size(); ++i) {
    float* dst = o + i * dim;
    for (int64_t f = names.offsets[rows[i]]; f < names.offsets[rows[i] + 1]; ++f) {
      const float w = names.weights[f];
      const float* src = table.data() + names.ids[f] * dim;
      for (int k = 0; k < dim; ++k) dst[k] += w * src[k];
    }
  }
  return out;
}

// bag -> bag + W2 relu(W1 bag + b1) + b2 -> L2 norm: the architecture of trained_encoder.h after
// the embedding bag.
struct MlpHeadImpl : torch::nn::Module {
  MlpHeadImpl(int dim, int hidden) : hidden(hidden) {
    if (hidden > 0) {
      fc1 = register_module("fc1", torch::nn::Linear(dim, hidden));
      fc2 = register_module("fc2", torch::nn::Linear(hidden, dim));
    }
  }
  torch::Tensor forward(const torch::Tensor& bag) {
    torch::Tensor h = bag;
    if (hidden > 0) h = h + fc2->forward(torch::relu(fc1->forward(h)));
    return F::normalize(h, F::NormalizeFuncOptions().dim(1));
  }

  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
  int hidden;
};
TORCH_MODULE(MlpHead);

// The embedding table and its row-wise Adagrad state, updated by hand: LibTorch's sparse
// EmbeddingBag gradient materialises one dim-wide row per feature occurrence (~100k x 256 floats
// a batch) and its sparse Adagrad coalesces and squares them in fresh tensors, which made a step
// ~0.45 s (dense Adam over the table: ~0.55 s). Summing the batch's gradient per touched row and
// updating only those rows takes a few milliseconds and is deterministic.
class TableTrainer {
 public:
  TableTrainer(int buckets, int dim, double init_std, double learning_rate)
      : dim_(dim), learning_rate_(learning_rate), sum_squares_(buckets, 0.0f) {
    torch::Tensor init = torch::randn({buckets, dim}) * init_std;
    table_.assign(init.data_ptr<float>(), init.data_ptr<float>() + init.numel());
  }
  const std::vector<float>& table() const { return table_; }
  std::vector<float>& mutable_table() { return table_; }

  // Applies d(loss)/d(bag) `bag_grad` (rows.size() x dim) of the names `rows`.
  void Step(const FeaturizedNames& names, const std::vector<uint32_t>& rows,
            const torch::Tensor& bag_grad) {
    const torch::Tensor g = bag_grad.contiguous();
    const float* grad = g.data_ptr<float>();
    slot_of_.clear();
    touched_.clear();
    row_grads_.clear();
    for (size_t i = 0; i < rows.size(); ++i) {
      for (int64_t f = names.offsets[rows[i]]; f < names.offsets[rows[i] + 1]; ++f) {
        auto [it, fresh] = slot_of_.try_emplace(names.ids[f], touched_.size());
        if (fresh) {
          touched_.push_back(names.ids[f]);
          row_grads_.resize(row_grads_.size() + dim_, 0.0f);
        }
        float* dst = row_grads_.data() + it->second * dim_;
        const float w = names.weights[f];
        for (int k = 0; k < dim_; ++k) dst[k] += w * grad[i * dim_ + k];
      }
    }
    for (size_t s = 0; s < touched_.size(); ++s)
      ApplyRow(touched_[s], row_grads_.data() + s * dim_);
  }

 private:
  void ApplyRow(int64_t id, const float* grad) {
    double squares = 0;
    for (int k = 0; k < dim_; ++k) squares += static_cast<double>(grad[k]) * grad[k];
    sum_squares_[id] += static_cast<float>(squares / dim_);
    const float scale = static_cast<float>(learning_rate_ / (std::sqrt(sum_squares_[id]) + 1e-10));
    float* row = table_.data() + id * dim_;
    for (int k = 0; k < dim_; ++k) row[k] -= scale * grad[k];
  }

  int dim_;
  double learning_rate_;
  std::vector<float> table_;
  std::vector<float> sum_squares_;  // one Adagrad accumulator per row
  absl::flat_hash_map<int64_t, size_t> slot_of_;
  std::vector<int64_t> touched_;
  std::vector<float> row_grads_;
};

std::vector<float> Flat(const torch::Tensor& t) {
  torch::Tensor c = t.detach().to(torch::kCPU).contiguous();
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

TrainedEncoderWeights WeightsOf(const TableTrainer& table, MlpHead& head, int dim,
                                const NameFeaturizerOptions& features) {
  torch::NoGradGuard no_grad;
  TrainedEncoderWeights w;
  w.features = features;
  w.dim = dim;
  w.hidden = head->hidden;
  w.embedding = table.table();
  if (head->hidden > 0) {
    w.w1 = Flat(head->fc1->weight);
    w.b1 = Flat(head->fc1->bias);
    w.w2 = Flat(head->fc2->weight);
    w.b2 = Flat(head->fc2->bias);
  }
  return w;
}

void CopyHeadIn(const TrainedEncoderWeights& w, MlpHead& head) {
  torch::NoGradGuard no_grad;
  auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
  auto copy = [&](torch::Tensor& dst, const std::vector<float>& src) {
    dst.copy_(torch::from_blob(const_cast<float*>(src.data()), dst.sizes(), f32));
  };
  if (w.hidden > 0) {
    copy(head->fc1->weight, w.w1);
    copy(head->fc1->bias, w.b1);
    copy(head->fc2->weight, w.w2);
    copy(head->fc2->bias, w.b2);
  }
}

// The current embeddings of all names (no gradient), names.size() x dim.
torch::Tensor EmbedAll(const TableTrainer& table, MlpHead& head, int dim,
                       const FeaturizedNames& names) {
  torch::NoGradGuard no_grad;
  constexpr uint32_t kChunk = 8192;
  std::vector<torch::Tensor> parts;
  for (uint32_t b = 0; b < names.size(); b += kChunk) {
    std::vector<uint32_t> rows;
    for (uint32_t r = b; r < std::min<uint32_t>(names.size(), b + kChunk); ++r) rows.push_back(r);
    parts.push_back(head->forward(ComputeBags(table.table(), dim, names, rows)));
  }
  return torch::cat(parts, 0);
}

// For each concept with >= 2 names, its nearest other concepts (by the normalised mean of its
// names' current embeddings), nearest first, among all concepts: exact FAISS inner-product search
// (BLAS), queried with the multi-name concepts only.
std::vector<std::vector<uint32_t>> MineNeighbours(
    const TableTrainer& table, MlpHead& head, int dim, const FeaturizedNames& names,
    const std::vector<std::vector<uint32_t>>& by_group, int k) {
  const uint32_t groups = static_cast<uint32_t>(by_group.size());
  const torch::Tensor x = EmbedAll(table, head, dim, names);
  auto index_of = torch::tensor(std::vector<int64_t>(names.group.begin(), names.group.end()));
  torch::Tensor centroids = torch::zeros({groups, dim}).index_add_(0, index_of, x);
  centroids = F::normalize(centroids, F::NormalizeFuncOptions().dim(1)).contiguous();
  std::vector<uint32_t> queries;
  for (uint32_t g = 0; g < groups; ++g) {
    if (by_group[g].size() >= 2) queries.push_back(g);
  }
  const torch::Tensor q =
      centroids.index_select(0, torch::tensor(std::vector<int64_t>(queries.begin(), queries.end())))
          .contiguous();
  const int64_t kk = std::min<int64_t>(k + 1, groups);
  std::vector<float> distances(queries.size() * kk);
  std::vector<faiss::Index::idx_t> labels(queries.size() * kk);
  faiss::IndexFlatIP index(dim);
  index.add(groups, centroids.data_ptr<float>());
  index.search(static_cast<faiss::Index::idx_t>(queries.size()), q.data_ptr<float>(), kk,
               distances.data(), labels.data());
  std::vector<std::vector<uint32_t>> out(groups);
  for (size_t i = 0; i < queries.size(); ++i) {
    for (int64_t j = 0; j < kk; ++j) {
      const auto l = labels[i * kk + j];
      if (l >= 0 && static_cast<uint32_t>(l) != queries[i]) {
        out[queries[i]].push_back(static_cast<uint32_t>(l));
      }
    }
  }
  return out;
}

// The names of each concept (indexes into FeaturizedNames).
std::vector<std::vector<uint32_t>> NamesByGroup(const FeaturizedNames& names, uint32_t groups) {
  std::vector<std::vector<uint32_t>> by_group(groups);
  for (uint32_t i = 0; i < names.size(); ++i) by_group[names.group[i]].push_back(i);
  return by_group;
}

// One epoch's batches of concepts: seeds in shuffled order, each followed by up to
// `per_seed` of its mined neighbours while neighbours fill at most `hard_fraction` of the batch.
// A concept with >= 2 names appears once per epoch; one-name concepts only as neighbours.
std::vector<std::vector<uint32_t>> ComposeBatches(
    const std::vector<std::vector<uint32_t>>& by_group,
    const std::vector<std::vector<uint32_t>>& neighbours, const NameEncoderTrainOptions& o,
    std::mt19937_64& rng) {
  std::vector<uint32_t> seeds;
  for (uint32_t g = 0; g < by_group.size(); ++g) {
    if (by_group[g].size() >= 2) seeds.push_back(g);
  }
  std::shuffle(seeds.begin(), seeds.end(), rng);
  const int max_hard = static_cast<int>(o.hard_negative_fraction * o.batch_concepts);
  std::vector<char> used(by_group.size(), 0);
  std::vector<std::vector<uint32_t>> batches;
  std::vector<uint32_t> batch;
  std::vector<uint32_t> in_batch(by_group.size(), UINT32_MAX);  // batch number holding it
  const std::vector<uint32_t> none;
  int hard = 0;
  auto add = [&](uint32_t g) {
    batch.push_back(g);
    in_batch[g] = static_cast<uint32_t>(batches.size());
    if (by_group[g].size() >= 2) used[g] = 1;
  };
  for (uint32_t seed : seeds) {
    if (used[seed]) continue;
    add(seed);
    int taken = 0;
    for (uint32_t n : neighbours.empty() ? none : neighbours[seed]) {
      if (taken >= o.hard_negatives_per_concept || hard >= max_hard ||
          static_cast<int>(batch.size()) >= o.batch_concepts) {
        break;
      }
      if (used[n] || in_batch[n] == batches.size()) continue;
      add(n);
      ++taken;
      ++hard;
    }
    if (static_cast<int>(batch.size()) >= o.batch_concepts) {
      batches.push_back(std::move(batch));
      batch.clear();
      hard = 0;
    }
  }
  if (batch.size() >= 2) batches.push_back(std::move(batch));
  return batches;
}

// The model being trained: the hand-updated table and the torch MLP head with its optimiser.
struct Model {
  Model(const NameEncoderTrainOptions& o)
      : dim(o.dim),
        table((torch::manual_seed(o.seed), o.features.buckets), o.dim, o.init_std,
              o.table_learning_rate),
        head(o.dim, o.hidden) {
    if (o.hidden > 0) {
      torch::NoGradGuard no_grad;  // the MLP starts as the identity: h = bag
      head->fc2->weight.zero_();
      head->fc2->bias.zero_();
      head_optimizer = std::make_unique<torch::optim::Adam>(
          head->parameters(), torch::optim::AdamOptions(o.mlp_learning_rate));
    }
  }
  int dim;
  TableTrainer table;
  MlpHead head;
  std::unique_ptr<torch::optim::Adam> head_optimizer;
};

// Two names per multi-name concept (each the other's positive), one per one-name concept
// (negative only): the rows of a batch and each row's target (-100: none).
void SampleBatchNames(const std::vector<std::vector<uint32_t>>& by_group,
                      const std::vector<uint32_t>& batch, std::mt19937_64& rng,
                      std::vector<uint32_t>* rows, std::vector<int64_t>* targets) {
  for (uint32_t g : batch) {
    const auto& members = by_group[g];
    if (members.size() < 2) {
      rows->push_back(members[0]);
      targets->push_back(-100);
      continue;
    }
    const size_t a = rng() % members.size();
    size_t b = rng() % (members.size() - 1);
    if (b >= a) ++b;
    const int64_t at = static_cast<int64_t>(rows->size());
    rows->push_back(members[a]);
    rows->push_back(members[b]);
    targets->push_back(at + 1);
    targets->push_back(at);
  }
}

// One optimiser step on a batch (NT-Xent: every name against all other names of the batch);
// returns the loss.
double TrainStep(Model& m, const FeaturizedNames& names,
                 const std::vector<std::vector<uint32_t>>& by_group,
                 const std::vector<uint32_t>& batch, double temperature, std::mt19937_64& rng) {
  std::vector<uint32_t> rows;
  std::vector<int64_t> targets;
  SampleBatchNames(by_group, batch, rng, &rows, &targets);
  torch::Tensor bag = ComputeBags(m.table.table(), m.dim, names, rows).requires_grad_(true);
  const torch::Tensor x = m.head->forward(bag);
  const int64_t n = x.size(0);
  torch::Tensor logits = torch::matmul(x, x.t()) / temperature;
  logits = logits.masked_fill(torch::eye(n, torch::kBool), -1e9);
  torch::Tensor loss = F::cross_entropy(logits, torch::tensor(targets),
                                        F::CrossEntropyFuncOptions().ignore_index(-100));
  if (m.head_optimizer) m.head_optimizer->zero_grad();
  loss.backward();
  if (m.head_optimizer) m.head_optimizer->step();
  m.table.Step(names, rows, bag.grad());
  return loss.item<double>();
}

FeaturizedNames FeaturizeGroups(const std::vector<std::vector<std::string>>& groups,
                                const NameFeaturizerOptions& features) {
  const NameFeaturizer featurizer(features);
  FeaturizedNames names;
  for (uint32_t g = 0; g < groups.size(); ++g) {
    for (const std::string& text : groups[g]) names.Add(featurizer, text, g);
  }
  return names;
}

// One epoch: mine, compose, step through the batches; returns the mean loss.
double RunEpoch(Model& m, const FeaturizedNames& names,
                const std::vector<std::vector<uint32_t>>& by_group,
                const NameEncoderTrainOptions& o, std::mt19937_64& rng,
                std::vector<std::vector<uint32_t>>& neighbours, NameEncoderTrainResult* result) {
  if (o.hard_negative_fraction > 0 && result->epochs_run % o.mine_every_epochs == 0) {
    const absl::Time t = absl::Now();
    neighbours =
        MineNeighbours(m.table, m.head, m.dim, names, by_group, o.hard_negatives_per_concept);
    result->mining_seconds += absl::ToDoubleSeconds(absl::Now() - t);
  }
  double total = 0;
  int count = 0;
  for (const auto& batch : ComposeBatches(by_group, neighbours, o, rng)) {
    total += TrainStep(m, names, by_group, batch, o.temperature, rng);
    ++count;
    ++result->steps;
  }
  return count > 0 ? total / count : 0.0;
}

}  // namespace

absl::Status ValidateNameEncoderTrainOptions(const NameEncoderTrainOptions& o) {
  if (auto s = ValidateNameFeaturizerOptions(o.features); !s.ok()) return s;
  if (o.dim < 8 || o.dim > 4096) return absl::InvalidArgumentError("dim: must be in [8, 4096]");
  if (o.hidden < 0 || o.hidden > 8192) {
    return absl::InvalidArgumentError("hidden: must be in [0, 8192]");
  }
  if (o.epochs < 0) return absl::InvalidArgumentError("epochs: must be >= 0");
  if (o.max_seconds < 0) return absl::InvalidArgumentError("max_seconds: must be >= 0");
  if (o.batch_concepts < 2) return absl::InvalidArgumentError("batch_concepts: must be >= 2");
  if (!(o.temperature > 0)) return absl::InvalidArgumentError("temperature: must be > 0");
  if (!(o.table_learning_rate > 0) || !(o.mlp_learning_rate > 0)) {
    return absl::InvalidArgumentError("table_learning_rate, mlp_learning_rate: must be > 0");
  }
  if (!(o.hard_negative_fraction >= 0 && o.hard_negative_fraction < 1)) {
    return absl::InvalidArgumentError("hard_negative_fraction: must be in [0, 1)");
  }
  if (o.hard_negatives_per_concept < 1 || o.hard_negatives_per_concept > 32) {
    return absl::InvalidArgumentError("hard_negatives_per_concept: must be in [1, 32]");
  }
  if (!(o.init_std > 0)) return absl::InvalidArgumentError("init_std: must be > 0");
  if (o.mine_every_epochs < 1) return absl::InvalidArgumentError("mine_every_epochs: must be >= 1");
  if (o.threads < 1 || o.threads > 256) {
    return absl::InvalidArgumentError("threads: must be in [1, 256]");
  }
  return absl::OkStatus();
}

absl::StatusOr<NameEncoderTrainResult> TrainNameEncoder(
    const std::vector<std::vector<std::string>>& groups, const NameEncoderTrainOptions& options) {
  if (auto s = ValidateNameEncoderTrainOptions(options); !s.ok()) return s;
  const FeaturizedNames names = FeaturizeGroups(groups, options.features);
  const auto by_group = NamesByGroup(names, static_cast<uint32_t>(groups.size()));
  if (std::none_of(by_group.begin(), by_group.end(), [](const auto& g) { return g.size() >= 2; })) {
    return absl::InvalidArgumentError("groups: no concept has two names with features");
  }
  NameEncoderTrainResult result;
  absl::Status status = TorchGuard("TrainNameEncoder", [&]() -> absl::Status {
    torch::set_num_threads(options.threads);
    Model m(options);
    std::mt19937_64 rng(options.seed);
    std::vector<std::vector<uint32_t>> neighbours;  // of the last mining
    const absl::Time start = absl::Now();
    while (result.epochs_run < options.epochs) {
      const double loss = RunEpoch(m, names, by_group, options, rng, neighbours, &result);
      result.epoch_loss.push_back(loss);
      ++result.epochs_run;
      result.seconds = absl::ToDoubleSeconds(absl::Now() - start);
      if (options.log) {
        options.log(absl::StrFormat("epoch %d: loss %.4f, %lld steps, %.1f s (mining %.1f s)",
                                    result.epochs_run, loss, static_cast<long long>(result.steps),
                                    result.seconds, result.mining_seconds));
      }
      if (options.max_seconds > 0 && result.seconds >= options.max_seconds) break;
    }
    result.weights = WeightsOf(m.table, m.head, m.dim, options.features);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return result;
}

absl::StatusOr<std::vector<float>> TorchEncode(const TrainedEncoderWeights& weights,
                                               const std::vector<std::string>& texts) {
  if (auto s = ValidateTrainedEncoderWeights(weights); !s.ok()) return s;
  std::vector<float> out(texts.size() * weights.dim, 0.0f);
  absl::Status status = TorchGuard("TorchEncode", [&]() -> absl::Status {
    MlpHead head(weights.dim, weights.hidden);
    CopyHeadIn(weights, head);
    const NameFeaturizer featurizer(weights.features);
    FeaturizedNames names;
    std::vector<uint32_t> rows, positions;
    for (uint32_t i = 0; i < texts.size(); ++i) {
      // Text without features encodes to zeros (left as they are).
      if (names.Add(featurizer, texts[i], 0)) {
        rows.push_back(static_cast<uint32_t>(rows.size()));
        positions.push_back(i);
      }
    }
    if (rows.empty()) return absl::OkStatus();
    torch::NoGradGuard no_grad;
    const torch::Tensor x =
        head->forward(ComputeBags(weights.embedding, weights.dim, names, rows)).contiguous();
    const float* p = x.data_ptr<float>();
    for (size_t r = 0; r < rows.size(); ++r) {
      std::copy(p + r * weights.dim, p + (r + 1) * weights.dim,
                out.begin() + static_cast<size_t>(positions[r]) * weights.dim);
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return out;
}

}  // namespace ibgraphrag::alignment::training
