// The factorised triple scorer as a fused C++ loop (no LibTorch on the hot path).
//
// The MLP's first layer is linear, so for z = [z_q ‖ z_h ‖ z_r ‖ z_t ‖ s_h ‖ s_t]
//   W1 z + b1 = (W_q z_q + b1) + W_h z_h + W_r z_r + W_t z_t + W_sh s_h + W_st s_t.
// Per model version we precompute P_head = W_h Z_E, P_tail = W_t Z_E (one H-vector per
// entity) and P_rel = W_r Z_R; per request q = W_q z_q + b1 folded into the rows of the
// relations used, R_r = q + P_rel[r], and per subgraph node n with entity e,
// A_n = P_head[e] + W_sh s_n and B_n = P_tail[e] + W_st s_n. A candidate (h, r, t) then costs
// three row reads A_h + R_r + B_t, a ReLU and a dot with w2, plus the prior_dim-term dot
// w_prior · x_p of its structure features: O(H), no per-triple allocation. A node whose DDE
// is all zero (most nodes of a large subgraph) uses the projection row itself as A_n / B_n:
// nothing is copied for it, and its row is read once, by the candidate loop.
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_FUSED_SCORER_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_FUSED_SCORER_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "services/retriever/dde.h"
#include "services/retriever/scorer_params.h"

namespace ibgraphrag::retriever {

// Candidate triples of one request, in the scorers' common input form.
struct CandidateBatch {
  // Question embedding, text_dim floats.
  absl::Span<const float> question;
  // Global (KG snapshot) ids of each candidate's head, relation and tail.
  absl::Span<const uint32_t> heads;
  absl::Span<const uint32_t> relations;
  absl::Span<const uint32_t> tails;
  // Local subgraph node index of each head and tail: rows of `dde`. A node index always
  // stands for the same entity (the fused scorer relies on it).
  absl::Span<const int32_t> head_nodes;
  absl::Span<const int32_t> tail_nodes;
  // Per-node DDE features of the subgraph; dim must equal the model's dde_dim.
  const DdeFeatures* dde = nullptr;
  // Structure features per candidate (PriorFeatures), [n x prior_dim] row-major; empty when
  // the model's prior_dim is 0.
  absl::Span<const float> prior;
};

// Checks lengths, id ranges against the table sizes, the DDE width and the structure
// features' length. INVALID_ARGUMENT.
absl::Status ValidateCandidateBatch(const CandidateBatch& batch, const ScorerConfig& config,
                                    int64_t num_entities, int64_t num_relations);

// Everything the fused loop reads, computed once per model version (see TorchScorer::Precompute).
struct ScorerProjections {
  ScorerConfig config;
  int64_t num_entities = 0;
  int64_t num_relations = 0;
  std::vector<float> head;      // [num_entities x hidden]: W_h z_e
  std::vector<float> tail;      // [num_entities x hidden]: W_t z_e
  std::vector<float> relation;  // [num_relations x hidden]: W_r z_r
  std::vector<float> w_q;       // [hidden x text_dim]: the W_q block of W1
  std::vector<float> w_sh_t;    // [dde_dim x hidden]: W_sh transposed (row k = column k)
  std::vector<float> w_st_t;    // [dde_dim x hidden]: W_st transposed
  std::vector<float> b1;        // [hidden]
  std::vector<float> w2;        // [hidden]
  float b2 = 0.0f;
  std::vector<float> w_prior;  // [prior_dim]
};

// Fills every field except head/tail/relation from `params` (those come from a matmul).
ScorerProjections ProjectionsSkeleton(const ScorerParams& params);

// Reusable per-thread buffers, so steady-state scoring allocates nothing.
struct FusedScratch {
  std::vector<float> query;                // hidden: W_q z_q + b1
  std::vector<float> relation_rows;        // used relations x hidden: q + P_rel[r]
  std::vector<int32_t> relation_slot;      // relation -> row of relation_rows, -1 unused
  std::vector<const float*> relation_row;  // relation -> its row (null: unused)
  std::vector<float> node_head;            // nodes x hidden: P_head[e] + W_sh s (nonzero DDE)
  std::vector<float> node_tail;            // nodes x hidden: P_tail[e] + W_st s (nonzero DDE)
  std::vector<const float*> head_row;      // node -> its head-role row (null: unused)
  std::vector<const float*> tail_row;      // node -> its tail-role row (null: unused)
  std::vector<int64_t> head_entity;        // nodes: entity of the node as a head, -1 unused
  std::vector<int64_t> tail_entity;        // nodes: entity of the node as a tail, -1 unused
};

class FusedScorer {
 public:
  explicit FusedScorer(std::shared_ptr<const ScorerProjections> projections)
      : p_(std::move(projections)) {}

  // Writes sigmoid scores to out[0..n). Validates the batch first (INVALID_ARGUMENT).
  absl::Status Score(const CandidateBatch& batch, absl::Span<float> out,
                     FusedScratch* scratch) const;

  const ScorerProjections& projections() const { return *p_; }

 private:
  // scratch->head_entity / tail_entity; INVALID_ARGUMENT when a node stands for two entities.
  absl::Status MapNodesToEntities(const CandidateBatch& batch, FusedScratch* scratch) const;
  // scratch->query and the q + P_rel[r] row of every relation the batch uses.
  void PrepareRelationRows(const CandidateBatch& batch, FusedScratch* scratch) const;
  // scratch->head_row / tail_row for every node used in that role.
  void PrepareNodeRows(const CandidateBatch& batch, FusedScratch* scratch) const;

  std::shared_ptr<const ScorerProjections> p_;
};

}  // namespace ibgraphrag::retriever

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_FUSED_SCORER_H_
