// ILlama's subgraph documents (paper 003, §3.1 and appendix B): a centre triple and its one-hop
// neighbourhood (up to max_neighbors / 2 triples at the centre's entity end, the centre-type
// entity it was chosen for, which may be its head or its tail, the rest at the other end), each
// triple written as a sentence, the sentences of one subgraph forming one document. Built
// offline into the versioned artifact `<base>/documents/<version>/` with the suite's encoder and
// a FAISS inner-product index over the unit document embeddings (alignment::CandidateIndex:
// exact IndexFlatIP, the paper's maximum inner product search, or HNSW; kAuto picks HNSW above
// 50,000 documents), then searched by the retriever's RetrieveDocuments.
//
// Version directory:
//   manifest.json    artifacts.v1.DocumentsManifest (kg version, encoder id, counts, SHA-256)
//   documents.tsv    one line per document: its triples "head,relation,tail" (ids), tab-separated
//   entities.tsv     id, type, external id, name of every entity the documents name
//   relations.tsv    id, name of every relation
//   index.faiss      faiss::write_index of the embeddings; index_rows.bin its row map
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_SUBGRAPH_DOCUMENTS_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_SUBGRAPH_DOCUMENTS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "common/versioned_artifacts.h"
#include "ibgraphrag/artifacts/v1/manifests.pb.h"
#include "services/alignment/candidate_index.h"
#include "services/kgstore/kg_store.h"
#include "services/retriever/text_embedder.h"

namespace ibgraphrag::retriever {

inline constexpr int kDocumentsFormatVersion = 1;

struct DocumentsBuildOptions {
  // Lower-case entity types whose triples become centre triples. The paper makes every triple of
  // its UMLS graph a centre; the suite's KG has 2.7M triples, so centres are the triples of the
  // entities the shared QA sets ask about (diseases by default), which keeps the index small.
  std::vector<std::string> center_types = {"disease"};
  // Centre triples per entity, evenly strided over its edges (all relations get a share).
  int centers_per_entity = 8;
  // Neighbour triples per document (paper: all; capped so a document stays near the paper's
  // ~130 tokens), half at the centre's entity end, the rest at its other end.
  int max_neighbors = 8;
  // Documents at most (entities in id order); 0 = no cap.
  int64_t max_documents = 150000;
  // FAISS index: kAuto (alignment's rule: exact up to 50,000 documents, HNSW above), kFlat
  // (exact inner product, the paper's MIPS; ~10 ms per question at 100k documents of 256 dims,
  // 140-180 ms p50 with 8 calls in flight on 2 cores) or kHnsw (approximate, ~1 ms; the full KG's
  // build takes 23 s instead of 11 s, with the same hit rates on the validation split).
  alignment::IndexKind index_kind = alignment::IndexKind::kAuto;
  // Embedding threads.
  int threads = 2;
  // Recorded in the manifest.
  std::string created_by;
};

// One triple of a document, by id.
struct DocumentTriple {
  uint32_t head = 0;
  uint32_t relation = 0;
  uint32_t tail = 0;
};

// An entity a document names.
struct DocumentEntity {
  std::string type;
  std::string external_id;
  std::string name;
};

// A dense search hit.
struct DocumentHit {
  uint32_t document = 0;
  float similarity = 0;  // inner product of unit vectors
};

// `<base>/documents/<version>/`.
common::VersionedArtifactDir DocumentsArtifacts(const std::string& base);

// "Lung cancer has symptom fatigue.": a triple as the paper's rule-based sentence
// (VerbaliseTriple, relation underscores as spaces, first letter capitalised, full stop).
std::string TripleSentence(absl::string_view head, absl::string_view relation,
                           absl::string_view tail);

// Builds the documents of `store` with `embedder` and publishes the next version under `base`
// (INVALID_ARGUMENT naming the option for bad limits, FAILED_PRECONDITION when no entity has a
// centre type). Returns the published manifest.
absl::StatusOr<artifacts::v1::DocumentsManifest> BuildSubgraphDocuments(
    const kgstore::KgStore& store, const TextEmbedder& embedder,
    const DocumentsBuildOptions& options, const std::string& base);

// A loaded documents version (immutable; thread-safe).
class SubgraphDocuments {
 public:
  // NOT_FOUND for a missing file, DATA_LOSS naming the file for a SHA-256 mismatch or a
  // malformed file (also a manifest whose file_sha256 is not exactly the five files, and a row
  // map entry naming no document), FAILED_PRECONDITION for another format version.
  static absl::StatusOr<std::shared_ptr<const SubgraphDocuments>> Load(const std::string& dir);

  const artifacts::v1::DocumentsManifest& manifest() const { return manifest_; }
  int64_t size() const { return static_cast<int64_t>(offsets_.size()) - 1; }
  // The document's triples, the centre first.
  absl::Span<const DocumentTriple> Triples(uint32_t document) const;
  // The document's sentences, one per triple, newline-separated.
  std::string Text(uint32_t document) const;
  // The entity `id` (empty fields for an id no document names).
  const DocumentEntity& Entity(uint32_t id) const;
  const std::string& RelationName(uint32_t id) const;
  // Best `top_n` documents for a unit query vector of manifest().dim floats.
  absl::StatusOr<std::vector<DocumentHit>> Search(absl::Span<const float> query, int top_n) const;

 private:
  friend absl::StatusOr<artifacts::v1::DocumentsManifest> BuildSubgraphDocuments(
      const kgstore::KgStore& store, const TextEmbedder& embedder,
      const DocumentsBuildOptions& options, const std::string& base);
  SubgraphDocuments() = default;
  absl::Status ReadTables(const std::string& dir);

  artifacts::v1::DocumentsManifest manifest_;
  std::vector<uint32_t> offsets_;  // document i: triples_[offsets_[i], offsets_[i + 1])
  std::vector<DocumentTriple> triples_;
  absl::flat_hash_map<uint32_t, DocumentEntity> entities_;
  std::vector<std::string> relations_;
  std::unique_ptr<alignment::CandidateIndex> index_;
};

}  // namespace ibgraphrag::retriever

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_SUBGRAPH_DOCUMENTS_H_
