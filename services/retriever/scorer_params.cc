#include "services/retriever/scorer_params.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "absl/strings/str_cat.h"

namespace ibgraphrag::retriever {
namespace {

constexpr char kMagic[8] = {'I', 'B', 'G', 'R', 'M', 'L', 'P', '2'};
constexpr char kOldMagic[8] = {'I', 'B', 'G', 'R', 'M', 'L', 'P', '1'};
constexpr size_t kHeaderBytes = 24;

size_t ExpectedFloats(const ScorerConfig& c) {
  const size_t h = c.hidden;
  return h * c.input_dim() + h + h + 1 + static_cast<size_t>(c.prior_dim);
}

}  // namespace

absl::Status ValidateScorerConfig(const ScorerConfig& c) {
  if (c.text_dim < 1 || c.text_dim > 4096) {
    return absl::InvalidArgumentError(absl::StrCat("text_dim: ", c.text_dim, " outside 1..4096"));
  }
  if (c.dde_dim < 1 || c.dde_dim > 17) {
    return absl::InvalidArgumentError(absl::StrCat("dde_dim: ", c.dde_dim, " outside 1..17"));
  }
  if (c.hidden < 1 || c.hidden > 4096) {
    return absl::InvalidArgumentError(absl::StrCat("hidden: ", c.hidden, " outside 1..4096"));
  }
  if (c.prior_dim != 0 && c.prior_dim != kPriorFeatureDim) {
    return absl::InvalidArgumentError(
        absl::StrCat("prior_dim: ", c.prior_dim, ", this build computes 0 or ", kPriorFeatureDim,
                     c.prior_dim == 6 ? " (a model trained before the question-intent features: "
                                        "retrain it, e.g. `ibgr artifacts build`)"
                                      : ""));
  }
  return absl::OkStatus();
}

ScorerParams InitScorerParams(const ScorerConfig& config, uint64_t seed) {
  ScorerParams p;
  p.config = config;
  std::mt19937_64 rng(seed);
  const float a1 = 1.0f / std::sqrt(static_cast<float>(config.input_dim()));
  const float a2 = 1.0f / std::sqrt(static_cast<float>(config.hidden));
  std::uniform_real_distribution<float> u1(-a1, a1), u2(-a2, a2);
  p.w1.resize(static_cast<size_t>(config.hidden) * config.input_dim());
  for (float& x : p.w1) x = u1(rng);
  p.b1.resize(config.hidden);
  for (float& x : p.b1) x = u1(rng);
  p.w2.resize(config.hidden);
  for (float& x : p.w2) x = u2(rng);
  p.b2 = u2(rng);
  p.w_prior.resize(config.prior_dim);
  for (float& x : p.w_prior) x = u2(rng);
  return p;
}

void ResidualPriorInit(ScorerParams* p) {
  std::fill(p->w2.begin(), p->w2.end(), 0.0f);
  p->b2 = 0.0f;
  std::fill(p->w_prior.begin(), p->w_prior.end(), 0.0f);
  if (!p->w_prior.empty()) p->w_prior[0] = 1.0f;
}

std::string SerializeScorerParams(const ScorerParams& p) {
  std::string out(kMagic, sizeof(kMagic));
  auto put_u32 = [&out](uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); };
  auto put_floats = [&out](const float* v, size_t n) {
    out.append(reinterpret_cast<const char*>(v), n * sizeof(float));
  };
  put_u32(p.config.text_dim);
  put_u32(p.config.dde_dim);
  put_u32(p.config.hidden);
  put_u32(p.config.prior_dim);
  put_floats(p.w1.data(), p.w1.size());
  put_floats(p.b1.data(), p.b1.size());
  put_floats(p.w2.data(), p.w2.size());
  put_floats(&p.b2, 1);
  put_floats(p.w_prior.data(), p.w_prior.size());
  return out;
}

absl::StatusOr<ScorerParams> ParseScorerParams(std::string_view bytes) {
  if (bytes.size() >= 8 && std::memcmp(bytes.data(), kOldMagic, sizeof(kOldMagic)) == 0) {
    return absl::DataLossError(
        "model.bin: checkpoint format IBGRMLP1 (before structure features) is no longer read; "
        "retrain with retriever_train");
  }
  if (bytes.size() < kHeaderBytes || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return absl::DataLossError("model.bin: not a scorer checkpoint (bad magic)");
  }
  uint32_t dims[4];
  std::memcpy(dims, bytes.data() + 8, 16);
  ScorerParams p;
  p.config.text_dim = static_cast<int>(dims[0]);
  p.config.dde_dim = static_cast<int>(dims[1]);
  p.config.hidden = static_cast<int>(dims[2]);
  p.config.prior_dim = static_cast<int>(std::min<uint32_t>(dims[3], 1u << 20));
  if (absl::Status s = ValidateScorerConfig(p.config); !s.ok()) {
    return absl::DataLossError(absl::StrCat("model.bin: ", s.message()));
  }
  const size_t n = ExpectedFloats(p.config);
  if (bytes.size() != kHeaderBytes + n * sizeof(float)) {
    return absl::DataLossError(absl::StrCat("model.bin: ", bytes.size(), " bytes, expected ",
                                            kHeaderBytes + n * sizeof(float), " (truncated?)"));
  }
  std::vector<float> all(n);
  std::memcpy(all.data(), bytes.data() + kHeaderBytes, n * sizeof(float));
  for (float x : all) {
    if (!std::isfinite(x)) return absl::DataLossError("model.bin: non-finite parameter");
  }
  const size_t h = p.config.hidden, w1n = h * p.config.input_dim();
  p.w1.assign(all.begin(), all.begin() + w1n);
  p.b1.assign(all.begin() + w1n, all.begin() + w1n + h);
  p.w2.assign(all.begin() + w1n + h, all.begin() + w1n + 2 * h);
  p.b2 = all[w1n + 2 * h];
  p.w_prior.assign(all.begin() + w1n + 2 * h + 1, all.end());
  return p;
}

}  // namespace ibgraphrag::retriever
