// illama: ILlama (paper 003) on the suite's KG. Subgraph documents (a centre triple and its
// one-hop neighbourhood written as sentences) are built offline (`ibgr docs build`) and indexed
// in FAISS with the suite's encoder; per question the retriever's RetrieveDocuments fetches the
// dense top 50 and re-ranks them to 10 (standing in for the paper's cross-encoder: by default
// each document's best sentence's encoder similarity to the question; pipeline.illama_reranker
// "ibrp" is the hybrid in which IBGraphRAG's trained scorer re-ranks), and the reasoner answers
// from the documents: an LLM gets the paper's prompt
// (Table 5: instruction, "### Context", "### Input", "### Response"), the extractive backend the
// documents' triples as evidence. docs/modes.md says what follows the paper and what departs.
#ifndef IBGRAPHRAG_SERVICES_GATEWAY_MODES_ILLAMA_MODE_H_
#define IBGRAPHRAG_SERVICES_GATEWAY_MODES_ILLAMA_MODE_H_

#include <cstdint>

#include "ibgraphrag/v1/reasoner.pb.h"
#include "ibgraphrag/v1/retriever.pb.h"
#include "services/gateway/modes/pipeline_mode.h"

namespace ibgraphrag::gateway {

struct IllamaOptions {
  // Documents fetched by dense search (paper appendix A: 50).
  uint32_t top_n = 50;
  // Documents kept after re-ranking and given to the reasoner (paper §3.2: 10).
  uint32_t rerank_k = 10;
  // Aligned entities passed to the retriever (the hybrid's trained-scorer topic entities), at most.
  int max_topic_entities = 16;
  // Share of the time left that the RetrieveDocuments call may take.
  double retrieve_share = 0.4;
};

class IllamaMode final : public PipelineMode {
 public:
  explicit IllamaMode(const IllamaOptions& options) : options_(options) {}
  // FAILED_PRECONDITION when the retriever has no documents artifact ("run ibgr docs build");
  // other retrieval failures (a model whose encoder is not the documents') degrade, flagged.
  grpc::Status Run(const ModeCall& call, const PipelineStages& stages) const override;

 private:
  // RetrieveDocuments for the question and its aligned entities.
  grpc::Status RetrieveDocuments(const ModeCall& call, const PipelineStages& stages,
                                 ibgraphrag::v1::RetrieveDocumentsResponse* documents) const;

  const IllamaOptions options_;
};

// The paper's generation prompt (Table 5) over `documents`, best first, with the reasoner's
// answer format appended to the instruction (the shared QA sets need a parseable answer).
ibgraphrag::v1::CallerPrompt IllamaPrompt(
    const ibgraphrag::v1::AnswerRequest& request,
    const ibgraphrag::v1::RetrieveDocumentsResponse& documents);

}  // namespace ibgraphrag::gateway

#endif  // IBGRAPHRAG_SERVICES_GATEWAY_MODES_ILLAMA_MODE_H_
