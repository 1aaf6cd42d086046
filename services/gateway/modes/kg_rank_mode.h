// kg_rank: KG-Rank (Yang et al., paper 001; reference code ruiyang-medinfo/KG-Rank) on the
// suite's KG. Per question entity (the LLM's medical terms mapped by alignment; alignment's own
// entities without an LLM), its one-hop triples ranked by the suite's encoder
// similarity to the question, or to the question plus an LLM-drafted answer (answer expansion),
// then MMR with the reference code's weights, then re-ranked (no medical cross-encoder runs here:
// by the encoder's similarity to the question, or, as the named "ibrp" hybrid, by IBGraphRAG's
// trained scorer), and the reasoner answers from the result. docs/modes.md
// says what follows the paper and what departs.
#ifndef IBGRAPHRAG_SERVICES_GATEWAY_MODES_KG_RANK_MODE_H_
#define IBGRAPHRAG_SERVICES_GATEWAY_MODES_KG_RANK_MODE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "ibgraphrag/v1/common.pb.h"
#include "services/gateway/modes/pipeline_mode.h"

namespace ibgraphrag::gateway {

struct KgRankOptions {
  // Entities whose one-hop triples are ranked, at most this many: those the LLM's terms align to,
  // else the question's aligned entities (alignment order).
  int max_entities = 8;
  // One-hop triples of an entity scored by similarity; the rest are never seen (the reference
  // code reads 20 pages of UMLS relations per concept).
  uint32_t max_candidates = 2000;
  // Triples kept per entity after similarity ranking (reference code: the 200 most similar go to
  // the cross-encoder).
  uint32_t similarity_top_k = 200;
  // Triples MMR selects per entity (reference code: 20), and its redundancy weight
  // base + delta * selected (reference code: 0.1 and 0.01).
  int mmr_top_k = 20;
  double mmr_base_weight = 0.1;
  double mmr_delta_weight = 0.01;
  // Share of the time left that the LLM's entity extraction (NER) may take.
  double ner_share = 0.15;
  // Share of the time left that the answer-expansion draft may take.
  double draft_share = 0.3;
  // Share of the time left that the per-entity retrieval calls may take together.
  double retrieve_share = 0.5;
};

class KgRankMode final : public PipelineMode {
 public:
  explicit KgRankMode(const KgRankOptions& options) : options_(options) {}
  grpc::Status Run(const ModeCall& call, const PipelineStages& stages) const override;

 private:
  // The entities to rank around: the LLM's medical terms mapped by alignment, else alignment's.
  std::vector<uint32_t> RankingEntities(const ModeCall& call, const PipelineStages& stages) const;
  // The ranking query: the question, or the question plus an LLM draft (answer expansion).
  std::string ExpandedQuery(const ModeCall& call, const PipelineStages& stages) const;
  // Fills call.response->evidence from every question entity's ranked one-hop triples.
  void RankEvidence(const ModeCall& call, const PipelineStages& stages,
                    const std::vector<uint32_t>& entities, const std::string& query) const;
  // One entity: similarity ranking, MMR, re-ranking; `budget` for each retriever call.
  std::vector<ibgraphrag::v1::EvidenceTriple> RankEntity(const ModeCall& call,
                                                         const PipelineStages& stages,
                                                         uint32_t entity, const std::string& query,
                                                         absl::Duration budget) const;

  const KgRankOptions options_;
};

}  // namespace ibgraphrag::gateway

#endif  // IBGRAPHRAG_SERVICES_GATEWAY_MODES_KG_RANK_MODE_H_
