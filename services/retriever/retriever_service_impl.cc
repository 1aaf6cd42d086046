#include "services/retriever/retriever_service_impl.h"

#include <chrono>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/blocking_reactor.h"
#include "common/grpc_status.h"
#include "common/interned_evidence.h"
#include "common/question_intent_proto.h"
#include "common/status_macros.h"

namespace ibgraphrag::retriever {
namespace {

namespace pb = ::ibgraphrag::v1;

absl::Time DeadlineOf(const grpc::ServerContextBase& context) {
  const auto deadline = context.deadline();
  if (deadline == std::chrono::system_clock::time_point::max()) return absl::InfiniteFuture();
  return absl::FromChrono(deadline);
}

ScoringMode FromProto(pb::ScoringMode mode) {
  switch (mode) {
    case pb::SCORING_MODE_SHORTEST_PATH:
      return ScoringMode::kShortestPath;
    case pb::SCORING_MODE_COSINE:
      return ScoringMode::kCosine;
    default:
      return ScoringMode::kIbrp;
  }
}

pb::ScoringMode ToProto(ScoringMode mode) {
  switch (mode) {
    case ScoringMode::kShortestPath:
      return pb::SCORING_MODE_SHORTEST_PATH;
    case ScoringMode::kCosine:
      return pb::SCORING_MODE_COSINE;
    case ScoringMode::kIbrp:
      break;
  }
  return pb::SCORING_MODE_IBRP;
}

void FillRef(const RetrieveResult& result, uint32_t id, pb::EntityRef* ref) {
  ref->set_id(id);
  auto it = result.entities.find(id);
  if (it == result.entities.end()) return;
  ref->set_external_id(it->second.external_id);
  ref->set_name(it->second.name);
  ref->set_type(it->second.type);
}

// Values above the limit are clamped to limit + 1 so the core's range check names the limit.
int Clamp(uint32_t v, int limit) {
  return static_cast<int>(std::min<uint32_t>(v, static_cast<uint32_t>(limit) + 1));
}

}  // namespace

absl::StatusOr<std::optional<ScorerVariant>> ScorerVariantFromProto(int variant) {
  switch (variant) {
    case pb::SCORER_VARIANT_UNSPECIFIED:
      return std::optional<ScorerVariant>();
    case pb::SCORER_VARIANT_RESIDUAL:
      return ScorerVariant::kResidual;
    case pb::SCORER_VARIANT_PLAIN:
      return ScorerVariant::kPlain;
    default:
      return absl::InvalidArgumentError(absl::StrCat("scorer_variant: unknown value ", variant,
                                                     " (UNSPECIFIED, RESIDUAL or PLAIN)"));
  }
}

pb::ScorerVariant ScorerVariantToProto(std::optional<ScorerVariant> variant) {
  if (!variant.has_value()) return pb::SCORER_VARIANT_UNSPECIFIED;
  return *variant == ScorerVariant::kPlain ? pb::SCORER_VARIANT_PLAIN : pb::SCORER_VARIANT_RESIDUAL;
}

absl::StatusOr<RetrieveQuery> FromProto(const pb::RetrieveRequest& request, absl::Time deadline) {
  RetrieveQuery q;
  q.question = request.question();
  q.topic_ids.assign(request.topic_entity_ids().begin(), request.topic_entity_ids().end());
  q.topic_external_ids.assign(request.topic_external_ids().begin(),
                              request.topic_external_ids().end());
  q.top_k = Clamp(request.top_k(), kMaxTopK);
  q.max_hops = Clamp(request.max_hops(), kMaxHops);
  q.max_candidates = Clamp(request.max_candidates(), kMaxCandidates);
  q.max_paths = Clamp(request.max_paths(), kMaxPathsLimit);
  q.mode = FromProto(request.mode());
  IBGR_ASSIGN_OR_RETURN(q.scorer_variant, ScorerVariantFromProto(request.scorer_variant()));
  if (request.has_ontology_expansion()) q.ontology_expansion = request.ontology_expansion();
  IBGR_ASSIGN_OR_RETURN(
      q.intent, common::RequestedIntent(request.intent(), request.intent_disabled(), "intent"));
  q.deadline = deadline;
  return q;
}

// Provenance of one evidence triple; `source` keeps the first source for older readers.
void FillSources(const TripleSources& from, pb::EvidenceTriple* e) {
  if (!from.sources.empty()) e->set_source(from.sources.front());
  for (const std::string& s : from.sources) e->add_sources(s);
  for (const std::string& l : from.licenses) e->add_licenses(l);
  if (!std::isnan(from.score)) e->set_source_score(from.score);
  e->set_source_note(from.note);
}

void AddTriples(const RetrieveResult& result, pb::RetrieveResponse* response) {
  response->mutable_triples()->Reserve(static_cast<int>(result.triples.size()));
  for (size_t i = 0; i < result.triples.size(); ++i) {
    const ScoredTriple& t = result.triples[i];
    pb::EvidenceTriple* e = response->add_triples();
    if (i < result.triple_sources.size()) FillSources(result.triple_sources[i], e);
    FillRef(result, t.head, e->mutable_head());
    FillRef(result, t.tail, e->mutable_tail());
    auto rel = result.relations.find(t.relation);
    if (rel != result.relations.end()) {
      e->set_relation(rel->second.name);
      e->set_relation_description(rel->second.description);
    }
    e->set_score(t.score);
    e->set_hop(t.hop);
  }
}

// The same triples as AddTriples, each entity, relation and (source, licence) pair once
// (EVIDENCE_LAYOUT_INTERNED; common::ExpandInternedEvidence gives AddTriples' triples back).
void AddInternedTriples(const RetrieveResult& result, pb::InternedEvidence* out) {
  common::EvidenceInterner interner(out);
  out->mutable_triples()->Reserve(static_cast<int>(result.triples.size()));
  const auto entity = [&](uint32_t id) {
    return interner.Entity(id, [&](pb::EntityRef* ref) { FillRef(result, id, ref); });
  };
  for (size_t i = 0; i < result.triples.size(); ++i) {
    const ScoredTriple& t = result.triples[i];
    pb::InternedTriple* e = interner.AddTriple();
    if (i < result.triple_sources.size()) {
      const TripleSources& from = result.triple_sources[i];
      for (size_t s = 0; s < from.sources.size(); ++s) {
        e->add_sources(interner.Source(
            from.sources[s], s < from.licenses.size() ? from.licenses[s] : absl::string_view()));
      }
      if (!std::isnan(from.score)) e->set_source_score(from.score);
      e->set_source_note(from.note);
    }
    e->set_head(entity(t.head));
    e->set_tail(entity(t.tail));
    absl::string_view name, description;  // a relation the result lacks: "", as AddTriples
    if (auto rel = result.relations.find(t.relation); rel != result.relations.end()) {
      name = rel->second.name;
      description = rel->second.description;
    }
    e->set_relation(interner.Relation(t.relation, name, description));
    e->set_score(t.score);
    e->set_hop(t.hop);
  }
}

void ToProto(const RetrieveResult& result, const std::string& device, pb::EvidenceLayout layout,
             pb::RetrieveResponse* response) {
  if (layout == pb::EVIDENCE_LAYOUT_INTERNED) {
    AddInternedTriples(result, response->mutable_interned_evidence());
  } else {
    AddTriples(result, response);
  }
  for (const ScoredPath& p : result.paths) {
    pb::ReasoningPath* out = response->add_paths();
    for (uint32_t i : p.triple_indices) out->add_triple_indices(i);
    for (bool r : p.reversed) out->add_reversed(r);
    out->set_score(p.score);
    out->set_text(p.text);
  }
  response->set_subgraph_triples(static_cast<uint32_t>(result.subgraph_triples));
  response->set_subgraph_entities(static_cast<uint32_t>(result.subgraph_entities));
  response->set_subgraph_truncated(result.subgraph_truncated);
  for (const auto& [stage, ms] : result.timings_ms) {
    pb::StageTiming* t = response->add_timings();
    t->set_stage(stage);
    t->set_duration_ms(ms);
  }
  response->set_model_version(result.model_version);
  response->set_kg_version(result.kg_version);
  response->set_mode(ToProto(result.mode));
  for (uint32_t id : result.topic_ids) response->add_topic_entity_ids(id);
  response->set_unembedded_candidates(static_cast<uint32_t>(result.unembedded_candidates));
  response->set_device(device);
  response->set_scorer_variant(ScorerVariantToProto(result.scorer_variant));
  response->set_max_candidates(static_cast<uint32_t>(result.max_candidates));
  common::IntentToProto(result.intent, response->mutable_intent());
}

void RetrieverServiceImpl::SetVariantCounters(prometheus::Counter* residual,
                                              prometheus::Counter* plain) {
  variant_counters_[0].store(residual);
  variant_counters_[1].store(plain);
}

grpc::ServerUnaryReactor* RetrieverServiceImpl::Retrieve(grpc::CallbackServerContext* context,
                                                         const grpc::ByteBuffer* request,
                                                         grpc::ByteBuffer* response) {
  return common::RunTypedUnary<pb::RetrieveRequest, pb::RetrieveResponse>(
      context, request, response,
      [this, context](const pb::RetrieveRequest& typed, pb::RetrieveResponse* out) {
        return RetrieveDirect(common::DirectCall{DeadlineOf(*context), ""}, typed, out);
      });
}

grpc::Status RetrieverServiceImpl::RetrieveDirect(const common::DirectCall& call,
                                                  const pb::RetrieveRequest& request,
                                                  pb::RetrieveResponse* response) {
  absl::StatusOr<RetrieveQuery> query = FromProto(request, call.deadline);
  if (!query.ok()) return common::ToGrpcStatus(query.status());
  absl::StatusOr<RetrieveResult> result = retriever_->Retrieve(*query);
  if (!result.ok()) return common::ToGrpcStatus(result.status());
  if (result->scorer_variant.has_value()) {
    prometheus::Counter* counter =
        variant_counters_[*result->scorer_variant == ScorerVariant::kPlain ? 1 : 0].load();
    if (counter != nullptr) counter->Increment();
  }
  std::shared_ptr<const RetrieverModel> model = retriever_->model();
  const std::string device = model == nullptr ? "cpu" : model->device();
  ToProto(*result, device, request.evidence_layout(), response);
  return grpc::Status::OK;
}

grpc::Status RetrieverServiceImpl::ScoreTriples(grpc::ServerContext*,
                                                const pb::ScoreTriplesRequest* request,
                                                pb::ScoreTriplesResponse* response) {
  ScoreTriplesQuery q;
  q.question = request->question();
  q.topic_ids.assign(request->topic_entity_ids().begin(), request->topic_entity_ids().end());
  const int n = request->triples_size();
  q.heads.reserve(n);
  q.relations.reserve(n);
  q.tails.reserve(n);
  for (const pb::TripleRef& t : request->triples()) {
    q.heads.push_back(t.head());
    q.relations.push_back(t.relation());
    q.tails.push_back(t.tail());
  }
  absl::StatusOr<std::vector<float>> scores = retriever_->ScoreTriples(q);
  if (!scores.ok()) return common::ToGrpcStatus(scores.status());
  response->mutable_scores()->Add(scores->begin(), scores->end());
  std::shared_ptr<const RetrieverModel> model = retriever_->model();
  if (model != nullptr) response->set_model_version(model->version());
  return grpc::Status::OK;
}

void RetrieverServiceImpl::SetDocuments(
    std::shared_ptr<const common::ServableHolder<const SubgraphDocuments>> holder,
    std::function<absl::Status()> load_status) {
  documents_ = std::move(holder);
  documents_status_ = std::move(load_status);
}

grpc::Status RetrieverServiceImpl::RetrieveDocuments(grpc::ServerContext* context,
                                                     const pb::RetrieveDocumentsRequest* request,
                                                     pb::RetrieveDocumentsResponse* response) {
  std::shared_ptr<const SubgraphDocuments> documents =
      documents_ != nullptr ? documents_->Get() : nullptr;
  if (documents == nullptr) {
    const absl::Status why = documents_status_ ? documents_status_() : absl::OkStatus();
    return common::ToGrpcStatus(absl::FailedPreconditionError(
        absl::StrCat("no documents artifact; run ibgr docs build",
                     why.ok() ? "" : absl::StrCat(" (", why.message(), ")"))));
  }
  DocumentsQuery query;
  query.question = request->question();
  query.top_n = static_cast<int>(std::min<uint32_t>(request->top_n(), kMaxDocumentsTopN + 1));
  query.rerank_k = static_cast<int>(std::min<uint32_t>(request->rerank_k(), kMaxDocumentsTopN + 1));
  query.topic_ids.assign(request->topic_entity_ids().begin(), request->topic_entity_ids().end());
  absl::StatusOr<DocumentsReranker> reranker =
      ParseDocumentsReranker(request->reranker(), "reranker");
  if (!reranker.ok()) return common::ToGrpcStatus(reranker.status());
  query.reranker = *reranker;
  query.deadline = absl::FromChrono(context->deadline());
  absl::StatusOr<DocumentsResult> result =
      ::ibgraphrag::retriever::RetrieveDocuments(*documents, *retriever_, query);
  if (!result.ok()) return common::ToGrpcStatus(result.status());
  ToProto(*documents, *result, response);
  return grpc::Status::OK;
}

namespace {

void FillEntityRef(const SubgraphDocuments& documents, uint32_t id, pb::EntityRef* ref) {
  const DocumentEntity& entity = documents.Entity(id);
  ref->set_id(id);
  ref->set_external_id(entity.external_id);
  ref->set_name(entity.name);
  ref->set_type(entity.type);
}

}  // namespace

void ToProto(const SubgraphDocuments& documents, const DocumentsResult& result,
             pb::RetrieveDocumentsResponse* response) {
  for (const RankedDocument& ranked : result.documents) {
    pb::SubgraphDocument* out = response->add_documents();
    out->set_index(ranked.document);
    out->set_text(documents.Text(ranked.document));
    out->set_dense_score(ranked.dense_score);
    out->set_rerank_score(ranked.rerank_score);
    bool center = true;
    for (const DocumentTriple& t : documents.Triples(ranked.document)) {
      pb::EvidenceTriple* triple = out->add_triples();
      FillEntityRef(documents, t.head, triple->mutable_head());
      triple->set_relation(documents.RelationName(t.relation));
      FillEntityRef(documents, t.tail, triple->mutable_tail());
      triple->set_score(ranked.rerank_score);
      triple->set_hop(center ? 1 : 2);  // the centre, then its neighbourhood
      center = false;
    }
  }
  const auto& manifest = documents.manifest();
  response->set_documents_version(absl::StrCat(manifest.version()));
  response->set_kg_version(manifest.kg_version());
  response->set_encoder_id(manifest.encoder_id());
  // "dense (<why>)" when the re-ranker could not run.
  std::string reranked_by = result.reranked_by;
  if (!result.dense_reason.empty()) absl::StrAppend(&reranked_by, " (", result.dense_reason, ")");
  response->set_reranked_by(reranked_by);
  response->set_model_version(result.model_version);
}

}  // namespace ibgraphrag::retriever
