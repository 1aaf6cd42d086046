#include "services/retriever/scorer_params.h"

#include <cmath>
#include <cstring>
#include <random>

#include "absl/strings/str_cat.h"

namespace ibgraphrag::retriever {
namespace {

constexpr char kMagic[8] = {'I', 'B', 'G', 'R', 'M', 'L', 'P', '1'};

size_t ExpectedFloats(const ScorerConfig& c) {
  const size_t h = c.hidden;
  return h * c.input_dim() + h + h + 1;
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
  return p;
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
  put_floats(p.w1.data(), p.w1.size());
  put_floats(p.b1.data(), p.b1.size());
  put_floats(p.w2.data(), p.w2.size());
  put_floats(&p.b2, 1);
  return out;
}

absl::StatusOr<ScorerParams> ParseScorerParams(std::string_view bytes) {
  if (bytes.size() < 20 || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return absl::DataLossError("model.bin: not a scorer checkpoint (bad magic)");
  }
  uint32_t dims[3];
  std::memcpy(dims, bytes.data() + 8, 12);
  ScorerParams p;
  p.config.text_dim = static_cast<int>(dims[0]);
  p.config.dde_dim = static_cast<int>(dims[1]);
  p.config.hidden = static_cast<int>(dims[2]);
  if (absl::Status s = ValidateScorerConfig(p.config); !s.ok()) {
    return absl::DataLossError(absl::StrCat("model.bin: ", s.message()));
  }
  const size_t n = ExpectedFloats(p.config);
  if (bytes.size() != 20 + n * sizeof(float)) {
    return absl::DataLossError(absl::StrCat("model.bin: ", bytes.size(), " bytes, expected ",
                                            20 + n * sizeof(float), " (truncated?)"));
  }
  std::vector<float> all(n);
  std::memcpy(all.data(), bytes.data() + 20, n * sizeof(float));
  for (float x : all) {
    if (!std::isfinite(x)) return absl::DataLossError("model.bin: non-finite parameter");
  }
  const size_t h = p.config.hidden, w1n = h * p.config.input_dim();
  p.w1.assign(all.begin(), all.begin() + w1n);
  p.b1.assign(all.begin() + w1n, all.begin() + w1n + h);
  p.w2.assign(all.begin() + w1n + h, all.begin() + w1n + 2 * h);
  p.b2 = all.back();
  return p;
}

}  // namespace ibgraphrag::retriever
