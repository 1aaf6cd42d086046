#include "services/retriever/document_retrieval.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/error_echo.h"
#include "common/status_macros.h"
#include "services/alignment/text_encoder.h"

namespace ibgraphrag::retriever {
namespace {

absl::Status CheckDocumentsQuery(const DocumentsQuery& query) {
  if (query.question.empty() || query.question.size() > kMaxQuestionBytes) {
    return absl::InvalidArgumentError(absl::StrCat("question: ", query.question.size(),
                                                   " bytes, must be 1..", kMaxQuestionBytes));
  }
  if (query.top_n < 1 || query.top_n > kMaxDocumentsTopN) {
    return absl::InvalidArgumentError(
        absl::StrCat("top_n: ", query.top_n, ", must be 1..", kMaxDocumentsTopN));
  }
  if (query.rerank_k < 1 || query.rerank_k > query.top_n) {
    return absl::InvalidArgumentError(
        absl::StrCat("rerank_k: ", query.rerank_k, ", must be 1..top_n (", query.top_n, ")"));
  }
  if (query.topic_ids.size() > static_cast<size_t>(kMaxTopicEntities)) {
    return absl::InvalidArgumentError(absl::StrCat("topic_entity_ids: ", query.topic_ids.size(),
                                                   ", at most ", kMaxTopicEntities));
  }
  return absl::OkStatus();
}

// Documents of `ranked` (a prefix) whose triples fit kMaxRerankTriples.
size_t RerankPrefix(const SubgraphDocuments& documents, const std::vector<RankedDocument>& ranked) {
  size_t triples = 0, count = 0;
  for (; count < ranked.size(); ++count) {
    triples += documents.Triples(ranked[count].document).size();
    if (triples > static_cast<size_t>(kMaxRerankTriples)) break;
  }
  return count;
}

// Gives the leading best.size() documents of `ranked` their re-rank scores, the rest the lowest of
// them (they follow in dense order), and orders the leading ones by it (ties: dense order).
void OrderByRerankScores(const std::vector<float>& best, std::vector<RankedDocument>* ranked) {
  float lowest = 0;
  for (size_t d = 0; d < best.size(); ++d) {
    (*ranked)[d].rerank_score = best[d];
    lowest = d == 0 ? best[d] : std::min(lowest, best[d]);
  }
  for (size_t d = best.size(); d < ranked->size(); ++d) (*ranked)[d].rerank_score = lowest;
  std::stable_sort(ranked->begin(), ranked->begin() + best.size(),
                   [](const RankedDocument& a, const RankedDocument& b) {
                     return a.rerank_score > b.rerank_score;
                   });
}

// Re-ranks the leading documents of `ranked` that fit kMaxRerankTriples by the trained scorer's
// best triple score per document; the rest follow in dense order.
absl::Status RerankByScorer(const SubgraphDocuments& documents, const Retriever& retriever,
                            const std::shared_ptr<const RetrieverModel>& model,
                            const DocumentsQuery& query, std::vector<RankedDocument>* ranked) {
  const size_t rerank = RerankPrefix(documents, *ranked);
  if (rerank == 0) return absl::OkStatus();
  ScoreTriplesQuery score;
  score.question = query.question;
  score.topic_ids = query.topic_ids;
  for (size_t d = 0; d < rerank; ++d) {
    for (const DocumentTriple& t : documents.Triples((*ranked)[d].document)) {
      score.heads.push_back(t.head);
      score.relations.push_back(t.relation);
      score.tails.push_back(t.tail);
    }
  }
  IBGR_ASSIGN_OR_RETURN(std::vector<float> scores, retriever.ScoreTriples(score, model));
  std::vector<float> best(rerank, 0.0f);
  size_t next = 0;
  for (size_t d = 0; d < rerank; ++d) {
    for (size_t i = 0; i < documents.Triples((*ranked)[d].document).size(); ++i) {
      best[d] = std::max(best[d], scores[next++]);
    }
  }
  OrderByRerankScores(best, ranked);
  return absl::OkStatus();
}

// Re-ranks the same leading documents by their best sentence's cosine to the question under the
// encoder that embedded the question (unit vectors: the inner product). INTERNAL, order
// untouched, when the encoder returns the wrong number of floats.
absl::Status RerankByEncoder(const SubgraphDocuments& documents, const TextEmbedder& embedder,
                             const std::vector<float>& question,
                             std::vector<RankedDocument>* ranked) {
  const size_t rerank = RerankPrefix(documents, *ranked);
  std::vector<std::string> sentences;
  for (size_t d = 0; d < rerank; ++d) {
    for (const DocumentTriple& t : documents.Triples((*ranked)[d].document)) {
      sentences.push_back(TripleSentence(documents.Entity(t.head).name,
                                         documents.RelationName(t.relation),
                                         documents.Entity(t.tail).name));
    }
  }
  // One batched call: the documents' sentences are at most kMaxRerankTriples.
  const std::vector<float> rows = embedder.EmbedBatch(sentences);
  const size_t dim = question.size();
  if (rows.size() != sentences.size() * dim) {
    return absl::InternalError(absl::StrCat("the encoder returned ", rows.size(), " floats for ",
                                            sentences.size(), " sentences of ", dim));
  }
  std::vector<float> best(rerank, -1.0f);
  size_t next = 0;
  for (size_t d = 0; d < rerank; ++d) {
    for (size_t i = 0; i < documents.Triples((*ranked)[d].document).size(); ++i, ++next) {
      best[d] = std::max(best[d], alignment::Dot(rows.data() + next * dim, question.data(),
                                                 static_cast<int>(dim)));
    }
  }
  OrderByRerankScores(best, ranked);
  return absl::OkStatus();
}

// Why the trained scorer must not re-rank these documents now (empty: it may).
std::string WhyNotTheScorer(const SubgraphDocuments& documents, const RetrieverModel& model,
                            const DocumentsQuery& query) {
  if (query.topic_ids.empty()) return "no topic entities for the trained scorer";
  if (documents.manifest().kg_version() != model.manifest().kg_version) {
    return absl::StrCat("documents built from KG ", documents.manifest().kg_version(),
                        ", the model from KG ", model.manifest().kg_version,
                        " (rebuild: ibgr docs build)");
  }
  if (absl::Now() >= query.deadline) return "deadline reached before re-ranking";
  return "";
}

}  // namespace

absl::StatusOr<DocumentsReranker> ParseDocumentsReranker(absl::string_view name,
                                                         absl::string_view field) {
  if (name.empty() || name == "encoder") return DocumentsReranker::kEncoder;
  if (name == "ibrp") return DocumentsReranker::kTrainedScorer;
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": \"", common::EchoForError(name),
                   "\" is not encoder or ibrp (the trained-scorer hybrid)"));
}

absl::StatusOr<DocumentsResult> RetrieveDocuments(const SubgraphDocuments& documents,
                                                  const Retriever& retriever,
                                                  const DocumentsQuery& in) {
  DocumentsQuery query = in;
  if (query.top_n == 0) query.top_n = kDefaultDocumentsTopN;
  if (query.rerank_k == 0) query.rerank_k = std::min(kDefaultDocumentsRerankK, query.top_n);
  IBGR_RETURN_IF_ERROR(CheckDocumentsQuery(query));
  const std::shared_ptr<const RetrieverModel> model = retriever.model();
  if (model == nullptr) {
    return absl::FailedPreconditionError(
        "no retriever model loaded: its encoder embeds the question for the documents search");
  }
  if (model->embedder().id != documents.manifest().encoder_id()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "documents artifact was built with encoder '", documents.manifest().encoder_id(),
        "', the served model uses '", model->embedder().id, "' (rebuild: ibgr docs build)"));
  }
  const std::vector<float> embedding = model->embedder().embed(query.question);
  IBGR_ASSIGN_OR_RETURN(std::vector<DocumentHit> hits, documents.Search(embedding, query.top_n));
  DocumentsResult result;
  for (const DocumentHit& hit : hits) {
    result.documents.push_back({hit.document, hit.similarity, hit.similarity});
  }
  if (!result.documents.empty()) {
    if (query.reranker == DocumentsReranker::kEncoder) {
      if (absl::Now() >= query.deadline) {
        result.dense_reason = "deadline reached before re-ranking";
      } else if (const absl::Status reranked =
                     RerankByEncoder(documents, model->embedder(), embedding, &result.documents);
                 reranked.ok()) {
        result.reranked_by = "encoder";
      } else {
        result.dense_reason = absl::StrCat("encoder re-ranking failed: ", reranked.message());
      }
    } else {
      result.dense_reason = WhyNotTheScorer(documents, *model, query);
      if (result.dense_reason.empty()) {
        const absl::Status reranked =
            RerankByScorer(documents, retriever, model, query, &result.documents);
        // A scorer failure (an entity the model predates) keeps the dense order, as documented.
        if (reranked.ok()) {
          result.reranked_by = "trained_scorer";
        } else {
          result.dense_reason = absl::StrCat("trained scorer failed: ", reranked.message());
          for (RankedDocument& d : result.documents) d.rerank_score = d.dense_score;
        }
      }
    }
    if (result.reranked_by != "dense") result.model_version = model->version();
  }
  if (result.documents.size() > static_cast<size_t>(query.rerank_k)) {
    result.documents.resize(query.rerank_k);
  }
  return result;
}

}  // namespace ibgraphrag::retriever
