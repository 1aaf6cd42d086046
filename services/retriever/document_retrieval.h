// ILlama's document retrieval (paper 003, §3.1.4 and §3.2) over a loaded SubgraphDocuments:
// dense search by the served model's encoder, then re-ranking. Plain C++; the service's
// RetrieveDocuments RPC translates to and from it.
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_DOCUMENT_RETRIEVAL_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_DOCUMENT_RETRIEVAL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "services/retriever/retriever.h"
#include "services/retriever/subgraph_documents.h"

namespace ibgraphrag::retriever {

// RetrieveDocuments limits (the paper's values are the defaults).
inline constexpr int kDefaultDocumentsTopN = 50;
inline constexpr int kDefaultDocumentsRerankK = 10;
inline constexpr int kMaxDocumentsTopN = 1000;
// Triples the re-ranker scores at most per request: top_n 1000 x 65 triples would be ~65k (the
// scorer's own cap is kMaxScoreTriples); past this the leading documents that fit are re-ranked
// and the rest follow in dense order.
inline constexpr int kMaxRerankTriples = 8192;

// What re-ranks the dense top_n (RetrieveDocumentsRequest.reranker).
enum class DocumentsReranker {
  // ILlama's own stand-in for its paper's cross-encoder: a document scores its best sentence's
  // cosine to the question under the served model's encoder.
  kEncoder,
  // The hybrid: the retriever's trained scorer (IBGraphRAG's) rates every triple.
  kTrainedScorer,
};

// "" / "encoder" / "ibrp" -> the reranker; INVALID_ARGUMENT naming `field` otherwise.
absl::StatusOr<DocumentsReranker> ParseDocumentsReranker(absl::string_view name,
                                                         absl::string_view field);

struct DocumentsQuery {
  // UTF-8, at most kMaxQuestionBytes. Patient data: never logged.
  std::string question;
  // Question entities for the re-ranker, 0..kMaxTopicEntities.
  std::vector<uint32_t> topic_ids;
  int top_n = 0;     // 1..kMaxDocumentsTopN; 0 = 50
  int rerank_k = 0;  // 1..top_n; 0 = 10
  DocumentsReranker reranker = DocumentsReranker::kEncoder;
  // Past it the dense order is kept rather than re-ranking (the caller's RPC deadline).
  absl::Time deadline = absl::InfiniteFuture();
};

struct RankedDocument {
  uint32_t document = 0;
  float dense_score = 0;
  float rerank_score = 0;
};

struct DocumentsResult {
  std::vector<RankedDocument> documents;  // best first
  // "encoder" or "trained_scorer" when re-ranked; "dense" = dense order.
  std::string reranked_by = "dense";
  // Why the dense order was kept (empty otherwise): for the trained scorer, no topic entities,
  // the scorer failed, or the documents' KG version is not the model's; for either, the deadline
  // passed.
  std::string dense_reason;
  std::string model_version;
};

// ILlama's retrieval: the question embedded by the served model's encoder (FAILED_PRECONDITION
// when no model is loaded or its encoder is not the documents'), dense top_n, then re-ranked to
// rerank_k; the leading documents whose triples fit kMaxRerankTriples are re-ranked, the rest
// follow in dense order, and ties keep dense order. The paper's cross-encoder re-ranker is not
// available here. kEncoder, the baseline's own: every sentence of those documents is embedded
// by the same encoder and a document scores its best sentence's cosine to the question (a
// finer-grained signal than the dense search's one vector per document). kTrainedScorer, the
// hybrid: the retriever's trained scorer (the same pinned model version) rates every triple for
// the question and its entities and a document scores its best triple; it keeps the dense order,
// with dense_reason, without topic entities (the scorer's DDE features need them), when the
// documents were built from another KG version than the model's (their triple ids would name
// other entities), or when the scorer fails. Either keeps the dense order past the deadline.
absl::StatusOr<DocumentsResult> RetrieveDocuments(const SubgraphDocuments& documents,
                                                  const Retriever& retriever,
                                                  const DocumentsQuery& query);

}  // namespace ibgraphrag::retriever

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_DOCUMENT_RETRIEVAL_H_
