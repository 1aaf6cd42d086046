#include "services/retriever/fused_scorer.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

// target_clones adds an AVX2/FMA build of the hot loops picked at load time by an ifunc resolver.
// The clone is named by ISA level (x86-64-v3: AVX2, FMA, ...), which the resolver tests with
// __builtin_cpu_supports (GCC 12+). It used to be "arch=haswell", which GCC resolves with
// __builtin_cpu_is("haswell"): true on Haswell only, false on every AMD CPU (this project's EPYC
// VMs) and on newer Intel models, which then ran the SSE2 build (docs/benchmarks.md, "Issue 30:
// the GPU check"). Clang 14 knows no x86-64-v3 clone: its clone is "avx2" (AVX2 without FMA).
// Under ThreadSanitizer the resolver is instrumented and runs before the TSan runtime is up (a
// segfault in __tsan_func_entry during relocation), so TSan builds get the portable version only.
#if defined(__SANITIZE_THREAD__)
#define IBGR_TARGET_CLONES
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define IBGR_TARGET_CLONES
#endif
#endif
#ifndef IBGR_TARGET_CLONES
#if defined(__clang__)
#define IBGR_TARGET_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define IBGR_TARGET_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#endif
#endif

namespace ibgraphrag::retriever {
namespace {

// relu(a + b + c) · w2 over `h` floats. Eight independent partial sums let the compiler
// vectorise the reduction without -ffast-math; IBGR_TARGET_CLONES adds an AVX2/FMA build.
IBGR_TARGET_CLONES float HiddenDot(const float* __restrict a, const float* __restrict b,
                                   const float* __restrict c, const float* __restrict w2, int h) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int j = 0;
  for (; j + 8 <= h; j += 8) {
    for (int k = 0; k < 8; ++k) {
      const float x = a[j + k] + b[j + k] + c[j + k];
      acc[k] += (x > 0.0f ? x : 0.0f) * w2[j + k];
    }
  }
  float total = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (; j < h; ++j) {
    const float x = a[j] + b[j] + c[j];
    total += (x > 0.0f ? x : 0.0f) * w2[j];
  }
  return total;
}

// a · b over `n` floats with eight partial sums (vectorised without -ffast-math), for the
// per-request q = W_q z_q (hidden x text_dim multiply-adds).
IBGR_TARGET_CLONES float Dot(const float* __restrict a, const float* __restrict b, int n) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int j = 0;
  for (; j + 8 <= n; j += 8) {
    for (int k = 0; k < 8; ++k) acc[k] += a[j + k] * b[j + k];
  }
  float total = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (; j < n; ++j) total += a[j] * b[j];
  return total;
}

// dst = a + b over `h` floats (per-node row setup; AVX2 clone like HiddenDot).
IBGR_TARGET_CLONES void AddRows(float* __restrict dst, const float* __restrict a,
                                const float* __restrict b, int h) {
  for (int j = 0; j < h; ++j) dst[j] = a[j] + b[j];
}

// dst += v * w over `h` floats.
IBGR_TARGET_CLONES void Axpy(float* __restrict dst, float v, const float* __restrict w, int h) {
  for (int j = 0; j < h; ++j) dst[j] += v * w[j];
}

}  // namespace

absl::Status ValidateCandidateBatch(const CandidateBatch& b, const ScorerConfig& config,
                                    int64_t num_entities, int64_t num_relations) {
  const size_t n = b.heads.size();
  if (b.relations.size() != n || b.tails.size() != n || b.head_nodes.size() != n ||
      b.tail_nodes.size() != n) {
    return absl::InvalidArgumentError("candidates: column lengths differ");
  }
  if (static_cast<int>(b.question.size()) != config.text_dim) {
    return absl::InvalidArgumentError(absl::StrCat("question embedding: ", b.question.size(),
                                                   " floats, model expects ", config.text_dim));
  }
  if (b.dde == nullptr || b.dde->dim != config.dde_dim) {
    return absl::InvalidArgumentError(absl::StrCat("dde: width ", b.dde == nullptr ? 0 : b.dde->dim,
                                                   ", model expects ", config.dde_dim,
                                                   " (DDE rounds differ from training?)"));
  }
  if (b.prior.size() != n * static_cast<size_t>(config.prior_dim)) {
    return absl::InvalidArgumentError(absl::StrCat("prior: ", b.prior.size(),
                                                   " floats, model expects ", n, " candidates x ",
                                                   config.prior_dim));
  }
  for (size_t i = 0; i < n; ++i) {
    if (b.heads[i] >= num_entities || b.tails[i] >= num_entities) {
      return absl::InvalidArgumentError(absl::StrCat("candidates[", i, "]: entity id outside the ",
                                                     num_entities, " embedded entities"));
    }
    if (b.relations[i] >= num_relations) {
      return absl::InvalidArgumentError(absl::StrCat(
          "candidates[", i, "]: relation id outside the ", num_relations, " embedded relations"));
    }
    if (b.head_nodes[i] < 0 || b.head_nodes[i] >= b.dde->num_nodes || b.tail_nodes[i] < 0 ||
        b.tail_nodes[i] >= b.dde->num_nodes) {
      return absl::InvalidArgumentError(
          absl::StrCat("candidates[", i, "]: subgraph node index out of range"));
    }
  }
  return absl::OkStatus();
}

ScorerProjections ProjectionsSkeleton(const ScorerParams& params) {
  const ScorerConfig& c = params.config;
  ScorerProjections p;
  p.config = c;
  const int in = c.input_dim();
  p.w_q.resize(static_cast<size_t>(c.hidden) * c.text_dim);
  p.w_sh_t.resize(static_cast<size_t>(c.dde_dim) * c.hidden);
  p.w_st_t.resize(static_cast<size_t>(c.dde_dim) * c.hidden);
  for (int j = 0; j < c.hidden; ++j) {
    const float* row = params.w1.data() + static_cast<size_t>(j) * in;
    std::copy(row + c.q_offset(), row + c.q_offset() + c.text_dim,
              p.w_q.begin() + static_cast<size_t>(j) * c.text_dim);
    for (int k = 0; k < c.dde_dim; ++k) {
      p.w_sh_t[static_cast<size_t>(k) * c.hidden + j] = row[c.sh_offset() + k];
      p.w_st_t[static_cast<size_t>(k) * c.hidden + j] = row[c.st_offset() + k];
    }
  }
  p.b1 = params.b1;
  p.w2 = params.w2;
  p.b2 = params.b2;
  p.w_prior = params.w_prior;
  return p;
}

namespace {

// True when DDE row `s` is all zeros (the node's rows are then plain projection rows).
bool AllZero(const float* s, int n) {
  for (int k = 0; k < n; ++k) {
    if (s[k] != 0.0f) return false;
  }
  return true;
}

// Row of node n in one role: `projection` + sum_k s_k w_t[k]. Points at the projection row
// itself when the node's DDE is all zero (most nodes of a large subgraph), so no row is
// written or re-read for it; otherwise materialised in `scratch_rows`.
const float* NodeRow(const float* projection, const float* s, int s_dim, const float* w_t, int h,
                     float* scratch_row) {
  if (AllZero(s, s_dim)) return projection;
  std::copy(projection, projection + h, scratch_row);
  for (int k = 0; k < s_dim; ++k) {
    if (s[k] != 0.0f) Axpy(scratch_row, s[k], w_t + static_cast<size_t>(k) * h, h);
  }
  return scratch_row;
}

}  // namespace

absl::Status FusedScorer::Score(const CandidateBatch& batch, absl::Span<float> out,
                                FusedScratch* scratch) const {
  const ScorerProjections& p = *p_;
  const ScorerConfig& c = p.config;
  if (absl::Status s = ValidateCandidateBatch(batch, c, p.num_entities, p.num_relations); !s.ok()) {
    return s;
  }
  if (out.size() < batch.heads.size()) return absl::InvalidArgumentError("out: too short");
  IBGR_RETURN_IF_ERROR(MapNodesToEntities(batch, scratch));
  PrepareRelationRows(batch, scratch);
  PrepareNodeRows(batch, scratch);
  const int h = c.hidden, pd = c.prior_dim;
  const size_t m = batch.heads.size();
  for (size_t i = 0; i < m; ++i) {
    float logit =
        HiddenDot(scratch->head_row[batch.head_nodes[i]], scratch->relation_row[batch.relations[i]],
                  scratch->tail_row[batch.tail_nodes[i]], p.w2.data(), h) +
        p.b2;
    const float* x = batch.prior.data() + i * pd;
    for (int k = 0; k < pd; ++k) logit += p.w_prior[k] * x[k];
    out[i] = 1.0f / (1.0f + std::exp(-logit));
  }
  return absl::OkStatus();
}

absl::Status FusedScorer::MapNodesToEntities(const CandidateBatch& batch,
                                             FusedScratch* scratch) const {
  const int nodes = batch.dde->num_nodes;
  scratch->head_entity.assign(nodes, -1);
  scratch->tail_entity.assign(nodes, -1);
  for (size_t i = 0; i < batch.heads.size(); ++i) {
    int64_t& he = scratch->head_entity[batch.head_nodes[i]];
    int64_t& te = scratch->tail_entity[batch.tail_nodes[i]];
    if ((he >= 0 && he != batch.heads[i]) || (te >= 0 && te != batch.tails[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat("candidates[", i, "]: a subgraph node index maps to two entities"));
    }
    he = batch.heads[i];
    te = batch.tails[i];
  }
  return absl::OkStatus();
}

void FusedScorer::PrepareRelationRows(const CandidateBatch& batch, FusedScratch* scratch) const {
  const ScorerProjections& p = *p_;
  const int h = p.config.hidden, d = p.config.text_dim;
  // q = W_q z_q + b1, folded into the rows of the relations this batch uses (a few dozen),
  // so node rows need no copy of q.
  scratch->query.assign(p.b1.begin(), p.b1.end());
  for (int j = 0; j < h; ++j) {
    scratch->query[j] += Dot(p.w_q.data() + static_cast<size_t>(j) * d, batch.question.data(), d);
  }
  scratch->relation_row.assign(p.num_relations, nullptr);
  scratch->relation_rows.clear();
  std::vector<int32_t>& slot = scratch->relation_slot;
  slot.assign(p.num_relations, -1);
  int used = 0;
  for (uint32_t r : batch.relations) {
    if (slot[r] < 0) slot[r] = used++;
  }
  scratch->relation_rows.resize(static_cast<size_t>(used) * h);
  for (int64_t r = 0; r < p.num_relations; ++r) {
    if (slot[r] < 0) continue;
    float* row = scratch->relation_rows.data() + static_cast<size_t>(slot[r]) * h;
    AddRows(row, scratch->query.data(), p.relation.data() + static_cast<size_t>(r) * h, h);
    scratch->relation_row[r] = row;
  }
}

void FusedScorer::PrepareNodeRows(const CandidateBatch& batch, FusedScratch* scratch) const {
  const ScorerProjections& p = *p_;
  const int h = p.config.hidden, s_dim = p.config.dde_dim;
  const int nodes = batch.dde->num_nodes;
  // Per node, everything that does not depend on the relation:
  //   head role: P_head[entity(n)] + W_sh s_n,   tail role: P_tail[entity(n)] + W_st s_n.
  scratch->node_head.resize(static_cast<size_t>(nodes) * h);
  scratch->node_tail.resize(static_cast<size_t>(nodes) * h);
  scratch->head_row.assign(nodes, nullptr);
  scratch->tail_row.assign(nodes, nullptr);
  for (int n = 0; n < nodes; ++n) {
    const float* s = batch.dde->row(n);
    const size_t at = static_cast<size_t>(n) * h;
    if (const int64_t e = scratch->head_entity[n]; e >= 0) {
      scratch->head_row[n] = NodeRow(p.head.data() + static_cast<size_t>(e) * h, s, s_dim,
                                     p.w_sh_t.data(), h, scratch->node_head.data() + at);
    }
    if (const int64_t e = scratch->tail_entity[n]; e >= 0) {
      scratch->tail_row[n] = NodeRow(p.tail.data() + static_cast<size_t>(e) * h, s, s_dim,
                                     p.w_st_t.data(), h, scratch->node_tail.data() + at);
    }
  }
}

}  // namespace ibgraphrag::retriever
