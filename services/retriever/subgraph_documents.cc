#include "services/retriever/subgraph_documents.h"

#include <algorithm>
#include <filesystem>
#include <iterator>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/delimited_reader.h"
#include "common/file_util.h"
#include "common/parallel_for.h"
#include "common/proto_json.h"
#include "common/status_macros.h"
#include "services/retriever/triple_text.h"

namespace ibgraphrag::retriever {
namespace {

namespace av1 = ibgraphrag::artifacts::v1;

constexpr char kDocumentsFile[] = "documents.tsv";
constexpr char kEntitiesFile[] = "entities.tsv";
constexpr char kRelationsFile[] = "relations.tsv";
constexpr char kIndexFile[] = "index.faiss";
constexpr char kIndexRowsFile[] = "index_rows.bin";
// Edges of an entity looked at when choosing its centres or a centre's neighbours.
constexpr int kEdgePage = 1000;

// Tabs and line ends would break the tables; names never need them.
std::string OneLine(std::string_view text) {
  return absl::StrReplaceAll(absl::string_view(text.data(), text.size()),
                             {{"\t", " "}, {"\n", " "}, {"\r", " "}});
}

// `count` edges of `edges`, evenly strided (every relation group gets a share), skipping `skip`.
std::vector<DocumentTriple> Strided(const std::vector<kgstore::Triple>& edges, int count,
                                    const DocumentTriple* skip) {
  std::vector<DocumentTriple> out;
  if (edges.empty() || count <= 0) return out;
  const double step = std::max(1.0, static_cast<double>(edges.size()) / count);
  for (double pos = 0; pos < edges.size() && static_cast<int>(out.size()) < count; pos += step) {
    const kgstore::Triple& t = edges[static_cast<size_t>(pos)];
    if (skip != nullptr && t.head == skip->head && t.relation == skip->relation &&
        t.tail == skip->tail) {
      continue;
    }
    out.push_back({t.head, t.relation, t.tail});
  }
  return out;
}

// Up to kEdgePage / 2 out edges, then as many in edges: a hub's out edges must not crowd out
// its in edges (a disease's "treats" edges point at it).
absl::StatusOr<std::vector<kgstore::Triple>> EdgesOf(const kgstore::KgStore& store,
                                                     uint32_t entity) {
  std::vector<kgstore::Triple> edges;
  for (kgstore::Direction direction : {kgstore::Direction::kOut, kgstore::Direction::kIn}) {
    kgstore::NeighborQuery query;
    query.entity = entity;
    query.direction = direction;
    query.limit = kEdgePage / 2;
    IBGR_ASSIGN_OR_RETURN(kgstore::NeighborPage page, store.Neighbors(query));
    edges.insert(edges.end(), page.triples.begin(), page.triples.end());
  }
  return edges;
}

// The documents' triples: per entity of a centre type (id order), its strided centre triples,
// each followed by neighbours at that entity, then at the centre's other end.
struct DocumentSet {
  std::vector<uint32_t> offsets = {0};
  std::vector<DocumentTriple> triples;
};

absl::StatusOr<std::vector<uint32_t>> CenterEntities(const kgstore::KgStore& store,
                                                     const DocumentsBuildOptions& options) {
  const absl::flat_hash_set<std::string> types(options.center_types.begin(),
                                               options.center_types.end());
  std::vector<kgstore::EntityId> ids(store.num_entities());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<kgstore::EntityId>(i);
  std::vector<uint32_t> centers;
  IBGR_RETURN_IF_ERROR(store.VisitEntitySummaries(ids, [&](const kgstore::EntitySummaryView& e) {
    if (types.contains(absl::AsciiStrToLower(OneLine(e.type)))) centers.push_back(e.id);
  }));
  if (centers.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("center_types: no entity of type ",
                                                      absl::StrJoin(options.center_types, ", "),
                                                      " in the KG"));
  }
  return centers;
}

absl::StatusOr<DocumentSet> CollectDocuments(const kgstore::KgStore& store,
                                             const DocumentsBuildOptions& options) {
  IBGR_ASSIGN_OR_RETURN(std::vector<uint32_t> entities, CenterEntities(store, options));
  DocumentSet set;
  const int head_share = options.max_neighbors / 2;
  for (uint32_t entity : entities) {
    IBGR_ASSIGN_OR_RETURN(std::vector<kgstore::Triple> own, EdgesOf(store, entity));
    for (const DocumentTriple& center : Strided(own, options.centers_per_entity, nullptr)) {
      if (options.max_documents > 0 &&
          static_cast<int64_t>(set.offsets.size()) - 1 >= options.max_documents) {
        return set;
      }
      const uint32_t other = center.head == entity ? center.tail : center.head;
      IBGR_ASSIGN_OR_RETURN(std::vector<kgstore::Triple> far, EdgesOf(store, other));
      std::vector<DocumentTriple> near = Strided(own, head_share, &center);
      std::vector<DocumentTriple> beyond =
          Strided(far, options.max_neighbors - static_cast<int>(near.size()), &center);
      set.triples.push_back(center);
      set.triples.insert(set.triples.end(), near.begin(), near.end());
      set.triples.insert(set.triples.end(), beyond.begin(), beyond.end());
      set.offsets.push_back(static_cast<uint32_t>(set.triples.size()));
    }
  }
  return set;
}

absl::Status CheckBuildOptions(const DocumentsBuildOptions& options) {
  if (options.center_types.empty()) {
    return absl::InvalidArgumentError("center_types: at least one entity type");
  }
  if (options.centers_per_entity < 1 || options.centers_per_entity > kEdgePage) {
    return absl::InvalidArgumentError(absl::StrCat(
        "centers_per_entity: ", options.centers_per_entity, ", must be 1..", kEdgePage));
  }
  if (options.max_neighbors < 0 || options.max_neighbors > 64) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_neighbors: ", options.max_neighbors, ", must be 0..64"));
  }
  if (options.max_documents < 0) {
    return absl::InvalidArgumentError("max_documents: must be >= 0 (0 = no cap)");
  }
  return absl::OkStatus();
}

// Writes documents.tsv, entities.tsv and relations.tsv into `dir`.
absl::Status WriteTables(const kgstore::KgStore& store, const DocumentSet& set,
                         const std::string& dir) {
  std::string docs;
  absl::flat_hash_set<uint32_t> named;
  for (size_t d = 0; d + 1 < set.offsets.size(); ++d) {
    for (uint32_t i = set.offsets[d]; i < set.offsets[d + 1]; ++i) {
      const DocumentTriple& t = set.triples[i];
      absl::StrAppend(&docs, i == set.offsets[d] ? "" : "\t", t.head, ",", t.relation, ",", t.tail);
      named.insert(t.head);
      named.insert(t.tail);
    }
    docs.push_back('\n');
  }
  std::vector<kgstore::EntityId> ids(named.begin(), named.end());
  std::sort(ids.begin(), ids.end());
  std::string entities;
  IBGR_RETURN_IF_ERROR(store.VisitEntitySummaries(ids, [&](const kgstore::EntitySummaryView& e) {
    absl::StrAppend(&entities, e.id, "\t", OneLine(e.type), "\t", OneLine(e.external_id), "\t",
                    OneLine(e.name), "\n");
  }));
  std::string relations;
  for (const kgstore::Relation& r : store.relations()) {
    absl::StrAppend(&relations, r.id, "\t", OneLine(r.name), "\n");
  }
  IBGR_RETURN_IF_ERROR(common::WriteStringToFileAtomic(dir + "/" + kDocumentsFile, docs));
  IBGR_RETURN_IF_ERROR(common::WriteStringToFileAtomic(dir + "/" + kEntitiesFile, entities));
  return common::WriteStringToFileAtomic(dir + "/" + kRelationsFile, relations);
}

// Embeds every document of the staged tables and writes the FAISS index beside them.
absl::StatusOr<std::string> WriteIndex(const SubgraphDocuments& docs, const TextEmbedder& embedder,
                                       const DocumentsBuildOptions& options,
                                       const std::string& dir) {
  const int dim = embedder.dim;
  std::vector<float> embeddings(static_cast<size_t>(docs.size()) * dim);
  common::ParallelFor(docs.size(), options.threads, [&](size_t i) {
    const std::vector<float> v = embedder.embed(docs.Text(static_cast<uint32_t>(i)));
    std::copy_n(v.begin(), std::min<size_t>(v.size(), dim), embeddings.begin() + i * dim);
  });
  std::vector<alignment::NameRef> rows(docs.size());
  for (size_t i = 0; i < rows.size(); ++i) rows[i].entry = static_cast<uint32_t>(i);
  alignment::CandidateIndexOptions index_options;
  index_options.kind = options.index_kind;
  IBGR_ASSIGN_OR_RETURN(
      std::unique_ptr<alignment::CandidateIndex> index,
      alignment::CandidateIndex::Build(std::move(rows), embeddings, dim, index_options));
  IBGR_RETURN_IF_ERROR(index->Write(dir + "/" + kIndexFile, dir + "/" + kIndexRowsFile));
  return index->kind_name();
}

absl::Status ParseTriple(absl::string_view field, DocumentTriple* t) {
  std::vector<absl::string_view> parts = absl::StrSplit(field, ',');
  if (parts.size() != 3 || !absl::SimpleAtoi(parts[0], &t->head) ||
      !absl::SimpleAtoi(parts[1], &t->relation) || !absl::SimpleAtoi(parts[2], &t->tail)) {
    return absl::DataLossError(absl::StrCat(kDocumentsFile, ": malformed triple '", field, "'"));
  }
  return absl::OkStatus();
}

// The files of a documents version, each with its digest in manifest.file_sha256.
std::vector<std::string> DocumentsFiles() {
  return {kDocumentsFile, kEntitiesFile, kRelationsFile, kIndexFile, kIndexRowsFile};
}

// index_rows.bin maps FAISS rows to documents: every entry must name a document, each once, or
// a search hit would index past the documents.
absl::Status CheckRowMap(const std::vector<alignment::NameRef>& rows, int64_t num_documents,
                         const std::string& dir) {
  std::vector<bool> seen(static_cast<size_t>(num_documents), false);
  for (size_t row = 0; row < rows.size(); ++row) {
    const uint32_t document = rows[row].entry;
    if (static_cast<int64_t>(document) >= num_documents || seen[document]) {
      return absl::DataLossError(absl::StrCat(dir, "/", kIndexRowsFile, ": row ", row,
                                              " names document ", document, " (", num_documents,
                                              " documents, each once)"));
    }
    seen[document] = true;
  }
  return absl::OkStatus();
}

}  // namespace

common::VersionedArtifactDir DocumentsArtifacts(const std::string& base) {
  return common::VersionedArtifactDir(
      {base, "documents", "documents artifact", "(run `ibgr docs build --base=...`)"});
}

std::string TripleSentence(absl::string_view head, absl::string_view relation,
                           absl::string_view tail) {
  std::string sentence =
      VerbaliseTriple(head, absl::StrReplaceAll(relation, {{"_", " "}}), tail) + ".";
  if (!sentence.empty()) sentence[0] = absl::ascii_toupper(static_cast<unsigned char>(sentence[0]));
  return sentence;
}

absl::StatusOr<av1::DocumentsManifest> BuildSubgraphDocuments(const kgstore::KgStore& store,
                                                              const TextEmbedder& embedder,
                                                              const DocumentsBuildOptions& options,
                                                              const std::string& base) {
  IBGR_RETURN_IF_ERROR(CheckBuildOptions(options));
  if (!embedder.embed || embedder.dim <= 0) {
    return absl::InvalidArgumentError("embedder: no encoder given");
  }
  const absl::Time started = absl::Now();
  IBGR_ASSIGN_OR_RETURN(DocumentSet set, CollectDocuments(store, options));
  IBGR_ASSIGN_OR_RETURN(common::ArtifactStaging staging,
                        common::ArtifactStaging::CreateVersion(DocumentsArtifacts(base)));
  IBGR_RETURN_IF_ERROR(WriteTables(store, set, staging.dir()));
  av1::DocumentsManifest manifest;
  manifest.set_dim(embedder.dim);
  SubgraphDocuments staged;
  staged.manifest_ = manifest;
  IBGR_RETURN_IF_ERROR(staged.ReadTables(staging.dir()));
  IBGR_ASSIGN_OR_RETURN(std::string kind, WriteIndex(staged, embedder, options, staging.dir()));
  manifest.set_format_version(kDocumentsFormatVersion);
  manifest.set_version(staging.version());
  manifest.set_created_at(absl::FormatTime(absl::RFC3339_sec, absl::Now(), absl::UTCTimeZone()));
  manifest.set_created_by(options.created_by);
  manifest.set_kg_version(absl::StrCat(store.manifest().version));
  manifest.set_encoder_id(embedder.id);
  manifest.set_num_documents(staged.size());
  manifest.set_num_triples(static_cast<int64_t>(set.triples.size()));
  for (const std::string& type : options.center_types) manifest.add_center_types(type);
  manifest.set_centers_per_entity(options.centers_per_entity);
  manifest.set_max_neighbors(options.max_neighbors);
  manifest.set_index_kind(kind);
  IBGR_ASSIGN_OR_RETURN(const auto digests, common::FileDigests(staging.dir(), DocumentsFiles()));
  manifest.mutable_file_sha256()->insert(digests.begin(), digests.end());
  manifest.set_build_seconds(absl::ToDoubleSeconds(absl::Now() - started));
  IBGR_RETURN_IF_ERROR(common::WriteStringToFileAtomic(
      staging.dir() + "/" + common::kArtifactManifestFile, common::ProtoToJson(manifest)));
  IBGR_RETURN_IF_ERROR(staging.Publish());
  return manifest;
}

absl::Status SubgraphDocuments::ReadTables(const std::string& dir) {
  IBGR_ASSIGN_OR_RETURN(std::string docs, common::ReadFileToString(dir + "/" + kDocumentsFile));
  offsets_ = {0};
  std::vector<absl::string_view> fields;
  for (absl::string_view line : absl::StrSplit(docs, '\n', absl::SkipEmpty())) {
    common::SplitUnquotedLine(line, '\t', &fields);
    for (absl::string_view field : fields) {
      DocumentTriple t;
      IBGR_RETURN_IF_ERROR(ParseTriple(field, &t));
      triples_.push_back(t);
    }
    offsets_.push_back(static_cast<uint32_t>(triples_.size()));
  }
  IBGR_ASSIGN_OR_RETURN(std::string entities, common::ReadFileToString(dir + "/" + kEntitiesFile));
  for (absl::string_view line : absl::StrSplit(entities, '\n', absl::SkipEmpty())) {
    common::SplitUnquotedLine(line, '\t', &fields);
    uint32_t id = 0;
    if (fields.size() != 4 || !absl::SimpleAtoi(fields[0], &id)) {
      return absl::DataLossError(absl::StrCat(kEntitiesFile, ": malformed line '", line, "'"));
    }
    entities_[id] = {std::string(fields[1]), std::string(fields[2]), std::string(fields[3])};
  }
  IBGR_ASSIGN_OR_RETURN(std::string relations,
                        common::ReadFileToString(dir + "/" + kRelationsFile));
  for (absl::string_view line : absl::StrSplit(relations, '\n', absl::SkipEmpty())) {
    common::SplitUnquotedLine(line, '\t', &fields);
    uint32_t id = 0;
    if (fields.size() != 2 || !absl::SimpleAtoi(fields[0], &id) || id > 1000000) {
      return absl::DataLossError(absl::StrCat(kRelationsFile, ": malformed line '", line, "'"));
    }
    if (relations_.size() <= id) relations_.resize(id + 1);
    relations_[id] = std::string(fields[1]);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const SubgraphDocuments>> SubgraphDocuments::Load(
    const std::string& dir) {
  std::shared_ptr<SubgraphDocuments> docs(new SubgraphDocuments());
  IBGR_ASSIGN_OR_RETURN(std::string json,
                        common::ReadFileToString(dir + "/" + common::kArtifactManifestFile));
  IBGR_RETURN_IF_ERROR(common::JsonToProto(json, "documents manifest.json", &docs->manifest_));
  if (docs->manifest_.format_version() != kDocumentsFormatVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        dir, ": documents format_version ", docs->manifest_.format_version(), ", this build reads ",
        kDocumentsFormatVersion, " (rebuild: ibgr docs build)"));
  }
  IBGR_RETURN_IF_ERROR(common::CheckFileDigests(
      dir, DocumentsFiles(),
      {docs->manifest_.file_sha256().begin(), docs->manifest_.file_sha256().end()}));
  IBGR_RETURN_IF_ERROR(docs->ReadTables(dir));
  alignment::CandidateIndexOptions index_options;
  index_options.search_omp_threads = 1;
  absl::StatusOr<std::unique_ptr<alignment::CandidateIndex>> index =
      alignment::CandidateIndex::Read(dir + "/" + kIndexFile, dir + "/" + kIndexRowsFile,
                                      index_options);
  if (!index.ok()) {
    return absl::DataLossError(
        absl::StrCat(dir, "/", kIndexFile, ": unreadable index (", index.status().message(), ")"));
  }
  docs->index_ = *std::move(index);
  if (docs->index_->rows() != docs->size() || docs->index_->dim() != docs->manifest_.dim()) {
    return absl::DataLossError(absl::StrCat(dir, ": index has ", docs->index_->rows(), " rows of ",
                                            docs->index_->dim(), " dims, the documents ",
                                            docs->size(), " of ", docs->manifest_.dim()));
  }
  IBGR_RETURN_IF_ERROR(CheckRowMap(docs->index_->row_refs(), docs->size(), dir));
  return docs;
}

absl::Span<const DocumentTriple> SubgraphDocuments::Triples(uint32_t document) const {
  // size_t: document + 1 must not wrap for 0xFFFFFFFF.
  if (static_cast<size_t>(document) + 1 >= offsets_.size()) return {};
  return absl::MakeConstSpan(triples_).subspan(offsets_[document],
                                               offsets_[document + 1] - offsets_[document]);
}

const DocumentEntity& SubgraphDocuments::Entity(uint32_t id) const {
  static const DocumentEntity* const kNone = new DocumentEntity();
  auto it = entities_.find(id);
  return it == entities_.end() ? *kNone : it->second;
}

const std::string& SubgraphDocuments::RelationName(uint32_t id) const {
  static const std::string* const kNone = new std::string();
  return id < relations_.size() ? relations_[id] : *kNone;
}

std::string SubgraphDocuments::Text(uint32_t document) const {
  std::vector<std::string> sentences;
  for (const DocumentTriple& t : Triples(document)) {
    sentences.push_back(
        TripleSentence(Entity(t.head).name, RelationName(t.relation), Entity(t.tail).name));
  }
  return absl::StrJoin(sentences, "\n");
}

absl::StatusOr<std::vector<DocumentHit>> SubgraphDocuments::Search(absl::Span<const float> query,
                                                                   int top_n) const {
  if (static_cast<int>(query.size()) != manifest_.dim()) {
    return absl::FailedPreconditionError(absl::StrCat("question embedding has ", query.size(),
                                                      " dims, the documents ", manifest_.dim()));
  }
  IBGR_ASSIGN_OR_RETURN(std::vector<std::vector<alignment::NameHit>> hits,
                        index_->Search(query, top_n));
  std::vector<DocumentHit> out;
  for (const alignment::NameHit& hit : hits.front()) out.push_back({hit.entry, hit.similarity});
  return out;
}

}  // namespace ibgraphrag::retriever
