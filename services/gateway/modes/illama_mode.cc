#include "services/gateway/modes/illama_mode.h"

#include <grpcpp/client_context.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/client.h"

namespace ibgraphrag::gateway {
namespace pb = ibgraphrag::v1;
namespace {

// ILlama's prompt (paper Table 5), verbatim.
constexpr char kIllamaInstruction[] =
    "You are a medical assistant specializing in providing expert consultations for medical "
    "inquiries. Your role is to deliver accurate, user-friendly medical information, clarify "
    "symptoms, explain potential medical conditions, and recommend next steps with empathy and "
    "professionalism. When formulating your response, to ensure clarity and accuracy, "
    "user-friendly answer in your response.";

// The answer format the reasoner parses, for the task at hand.
std::string AnswerFormat(const pb::AnswerRequest& request) {
  std::string format = " End your response with a list of items, each beginning with \"ans:\". ";
  if (request.task() == pb::TASK_FACT_VERIFICATION) {
    return absl::StrCat(format,
                        "There is exactly one item: \"ans: SUPPORTED\" or "
                        "\"ans: REFUTED\".");
  }
  if (request.options_size() > 0) {
    return absl::StrCat(format, "There is exactly one item: \"ans: <letter>) <option text>\".");
  }
  return absl::StrCat(format, "One item per answer.");
}

// Every aligned entity id once, alignment order, at most `limit`.
std::vector<uint32_t> TopicIds(const pb::AnswerResponse& response, int limit) {
  std::vector<uint32_t> ids;
  for (const pb::AlignedEntity& e : response.entities()) {
    if (static_cast<int>(ids.size()) >= limit) break;
    if (std::find(ids.begin(), ids.end(), e.entity().id()) == ids.end()) {
      ids.push_back(e.entity().id());
    }
  }
  return ids;
}

// The documents' triples as the answer's evidence, document order, each triple once.
void AddDocumentEvidence(const pb::RetrieveDocumentsResponse& documents,
                         pb::AnswerResponse* response) {
  absl::flat_hash_set<std::string> seen;
  for (const pb::SubgraphDocument& document : documents.documents()) {
    for (const pb::EvidenceTriple& triple : document.triples()) {
      if (seen.insert(EvidenceKey(triple)).second) *response->add_evidence() = triple;
    }
  }
}

void Flag(pb::AnswerResponse* response, std::string reason) {
  AddModeDegradation(response, kModeIllama, std::move(reason));
}

// Only a missing documents artifact or a bad request fails the answer; a FAILED_PRECONDITION
// for a model whose encoder is not the documents' (a new model before `ibgr docs build`) must
// degrade like any other retrieval failure rather than fail every illama answer.
bool FailsTheAnswer(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::INVALID_ARGUMENT ||
         (status.error_code() == grpc::StatusCode::FAILED_PRECONDITION &&
          absl::StrContains(status.error_message(), "no documents artifact"));
}

// Why the documents kept their dense order, for the degradation flag.
std::string WhyDense(const pb::RetrieveDocumentsResponse& documents, bool hybrid,
                     const pb::AnswerResponse& response) {
  if (hybrid && response.entities().empty()) {
    return "no aligned entities for the trained re-ranker (ibrp hybrid)";
  }
  // The retriever says "dense (<why>)" when it could not re-rank.
  absl::string_view why = documents.reranked_by();
  if (absl::ConsumePrefix(&why, "dense (") && absl::ConsumeSuffix(&why, ")")) {
    return std::string(why);
  }
  return "the re-ranker was unavailable";
}

// The re-ranker the request asks for: "" / "encoder" (the baseline's own) or "ibrp" (hybrid).
bool Hybrid(const pb::AnswerRequest& request) {
  return request.pipeline().illama_reranker() == "ibrp";
}

}  // namespace

pb::CallerPrompt IllamaPrompt(const pb::AnswerRequest& request,
                              const pb::RetrieveDocumentsResponse& documents) {
  std::string context;
  for (const pb::SubgraphDocument& document : documents.documents()) {
    absl::StrAppend(&context, context.empty() ? "" : "\n\n", document.text());
  }
  std::string input = request.question();
  for (int i = 0; i < request.options_size(); ++i) {
    absl::StrAppend(&input, "\n", std::string(1, static_cast<char>('A' + i)), ") ",
                    request.options(i));
  }
  pb::CallerPrompt prompt;
  prompt.set_version("illama.v1");
  prompt.set_system(absl::StrCat(kIllamaInstruction, AnswerFormat(request)));
  prompt.set_user(
      absl::StrCat("### Context\n", context, "\n\n### Input\n", input, "\n\n### Response\n"));
  return prompt;
}

grpc::Status IllamaMode::RetrieveDocuments(const ModeCall& call, const PipelineStages& stages,
                                           pb::RetrieveDocumentsResponse* documents) const {
  pb::RetrieveDocumentsRequest request;
  request.set_question(call.request.question());
  request.set_top_n(options_.top_n);
  request.set_rerank_k(options_.rerank_k);
  request.set_reranker(Hybrid(call.request) ? "ibrp" : "encoder");
  for (uint32_t id : TopicIds(*call.response, options_.max_topic_entities)) {
    request.add_topic_entity_ids(id);
  }
  const absl::Duration budget =
      std::max(absl::ZeroDuration(), (call.deadline - absl::Now()) * options_.retrieve_share);
  std::unique_ptr<grpc::ClientContext> child = common::MakeChildContext(call.context, budget);
  return stages.Retriever().RetrieveDocuments(child.get(), request, documents);
}

grpc::Status IllamaMode::Run(const ModeCall& call, const PipelineStages& stages) const {
  grpc::Status status = AlignStage(call, stages);
  if (!status.ok()) return status;

  const absl::Time started = absl::Now();
  pb::RetrieveDocumentsResponse documents;
  status = RetrieveDocuments(call, stages, &documents);
  if (FailsTheAnswer(status)) {
    return status;  // no documents artifact (or a bad request): nothing this mode can answer from
  }
  if (!status.ok()) {
    documents.Clear();  // a partial response must not become evidence
    Flag(call.response, absl::StrCat("document retrieval failed (", DescribeStatus(status),
                                     "); answered without documents"));
  } else if (documents.documents_size() > 0 &&
             documents.reranked_by() != (Hybrid(call.request) ? "trained_scorer" : "encoder")) {
    Flag(call.response, absl::StrCat("documents in dense order: ",
                                     WhyDense(documents, Hybrid(call.request), *call.response)));
  }
  if (!documents.kg_version().empty()) {
    call.response->mutable_versions()->set_kg_version(documents.kg_version());
  }
  if (!documents.model_version().empty()) {
    call.response->mutable_versions()->set_retriever_model_version(documents.model_version());
  }
  AddDocumentEvidence(documents, call.response);
  stages.FinishStage(
      call, "retrieve", started,
      absl::StrCat(documents.documents_size(), " documents (",
                   documents.reranked_by().empty() ? "none" : documents.reranked_by(), "), ",
                   call.response->evidence_size(), " evidence triples"));

  const pb::CallerPrompt prompt = IllamaPrompt(call.request, documents);
  return ReasonStage(
      ModeCall{call.context, call.deadline, call.request, call.response, call.sink, &prompt},
      stages);
}

}  // namespace ibgraphrag::gateway
