// On-disk layout of a KG snapshot database: column family names, key and value encodings, and the
// one place where rocksdb::Status becomes absl::Status. Internal to kgstore_core; exposed in a
// header so tests can inspect or damage a database on purpose.
//
// Keys that must scan in id order are big-endian fixed width (memcmp order == numeric order).
// Values are a compact length-prefixed binary form rather than JSON: the entity column is read
// in full at every open, and decoding varints is several times cheaper than parsing JSON.
#ifndef IBGRAPHRAG_SERVICES_KGSTORE_KG_STORE_CODEC_H_
#define IBGRAPHRAG_SERVICES_KGSTORE_KG_STORE_CODEC_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "rocksdb/cache.h"
#include "rocksdb/db.h"
#include "rocksdb/options.h"
#include "rocksdb/status.h"
#include "services/kgstore/csr_graph.h"
#include "services/kgstore/kg_types.h"

namespace ibgraphrag::kgstore::internal {

// Column families, in the order KgStore opens them (index == position in the handle vector).
enum ColumnFamily : int {
  kCfDefault = 0,  // unused; RocksDB requires it
  kCfEntities,     // BE32 entity id -> EncodeEntity
  kCfExternalIds,  // canonical id or xref alias -> BE32 entity id
  kCfOut,          // BE32 head + BE32 relation + BE32 tail -> EncodeAdjacencyValue
  kCfIn,           // BE32 tail + BE32 relation + BE32 head -> BE16 provenance group
  kCfRelations,    // BE32 relation id -> EncodeRelation
  kCfMeta,         // kMeta* keys below
  kCfBatches,      // ingest batch id -> EncodeIngestMarker
  kCfIngestLog,    // BE64 generation -> EncodeTripleLog (triples added by that batch)
  kCfCsr,          // kCsrHeaderKey -> header JSON; CsrChunkKey(...) -> raw array bytes
  kNumColumnFamilies
};
const char* ColumnFamilyName(int cf);

// Metadata keys (values are decimal text or JSON, small and rarely written).
inline constexpr std::string_view kMetaFormatVersion = "format_version";
inline constexpr std::string_view kMetaGeneration = "generation";  // ingested batches so far
inline constexpr std::string_view kMetaCounts = "counts";          // KgCounts JSON (live)
inline constexpr std::string_view kMetaSources = "sources";        // JSON array of names
// JSON array of licences parallel to kMetaSources; absent in snapshots written before
// provenance groups existed (licences then read as unknown).
inline constexpr std::string_view kMetaSourceLicenses = "source_licenses";
// JSON array of provenance groups (arrays of source ids); absent in older snapshots, whose
// adjacency values hold a source id: those read as singleton groups {0}, {1}, ...
inline constexpr std::string_view kMetaProvenance = "provenance";
inline constexpr std::string_view kMetaManifest = "manifest";  // SnapshotManifest JSON
inline constexpr std::string_view kCsrHeaderKey = "header";

void PutBe16(std::string* out, uint16_t v);
void PutBe32(std::string* out, uint32_t v);
void PutBe64(std::string* out, uint64_t v);
uint16_t GetBe16(const char* p);
uint32_t GetBe32(const char* p);
uint64_t GetBe64(const char* p);

std::string EntityKey(EntityId id);
std::string RelationKey(RelationId id);
std::string GenerationKey(uint64_t generation);
// Writes the 12-byte adjacency key (first, relation, second) into `buf`.
void EncodeAdjacencyKey(EntityId first, RelationId relation, EntityId second, char buf[12]);

std::string EncodeEntity(const Entity& e);
// Decodes a full record; `id` is the key the record was stored under.
absl::StatusOr<Entity> DecodeEntity(std::string_view value, EntityId id);
// Decodes only the leading fields the in-memory index keeps (much cheaper than DecodeEntity).
absl::Status DecodeEntityHead(std::string_view value, std::string_view* external_id,
                              std::string_view* type, std::string_view* name);

std::string EncodeRelation(const Relation& r);
absl::StatusOr<Relation> DecodeRelation(std::string_view value, RelationId id);

std::string EncodeCounts(const KgCounts& counts);
absl::StatusOr<KgCounts> DecodeCounts(std::string_view json);
std::string EncodeStringList(const std::vector<std::string>& list);
absl::StatusOr<std::vector<std::string>> DecodeStringList(std::string_view json);

// Provenance groups as JSON ([[0], [0, 3], ...]).
std::string EncodeProvenance(const std::vector<std::vector<SourceId>>& groups);
absl::StatusOr<std::vector<std::vector<SourceId>>> DecodeProvenance(std::string_view json);

// The out-adjacency value: BE16 provenance group, then only when the triple has a score or a
// note: BE32 float bits of the score (NaN = none) and the note bytes. Older snapshots store the
// 2-byte form only, which decodes the same.
std::string EncodeAdjacencyValue(ProvenanceId group, float score, std::string_view note);
struct AdjacencyValue {
  ProvenanceId group = 0;
  float score = kNoTripleScore;
  std::string_view note;  // points into the decoded bytes
};
absl::StatusOr<AdjacencyValue> DecodeAdjacencyValue(std::string_view value);

// Triples of one ingest batch, 14 bytes each, replayed at open after the CSR blob's generation.
std::string EncodeTripleLog(const std::vector<Triple>& triples);
absl::StatusOr<std::vector<Triple>> DecodeTripleLog(std::string_view value);

// The marker stored under an applied batch id, so a repeated batch returns the same result.
struct IngestMarker {
  int64_t generation = 0;
  int64_t entities_added = 0;
  int64_t entities_updated = 0;
  int64_t relations_added = 0;
  int64_t triples_added = 0;
  int64_t triples_existing = 0;
  std::vector<EntityId> entity_ids;
};
std::string EncodeIngestMarker(const IngestMarker& m);
absl::StatusOr<IngestMarker> DecodeIngestMarker(std::string_view value);

// Which persisted CSR is current. Chunk keys carry the generation in their prefix, so a newer CSR
// is ingested beside the old one and the header switch is one atomic key write.
struct CsrHeader {
  int64_t generation = 0;  // ingest generation the arrays include
  uint64_t num_nodes = 0;
  uint64_t num_edges = 0;
  uint64_t chunk_bytes = CsrGraph::kDefaultChunkBytes;
};
std::string EncodeCsrHeader(const CsrHeader& h);
absl::StatusOr<CsrHeader> DecodeCsrHeader(std::string_view json);
// "g<20-digit generation>/", the prefix of every chunk key of that generation.
std::string CsrGenerationPrefix(int64_t generation);
std::string CsrChunkKey(int64_t generation, std::string_view chunk_name);

// Options shared by snapshot writing and opening, so SST files built offline match the column
// family configuration they are ingested into.
rocksdb::DBOptions MakeDbOptions();
rocksdb::ColumnFamilyOptions MakeColumnFamilyOptions(int cf,
                                                     const std::shared_ptr<rocksdb::Cache>& cache);
std::vector<rocksdb::ColumnFamilyDescriptor> MakeColumnFamilyDescriptors(
    const std::shared_ptr<rocksdb::Cache>& cache);

// Writes the CSR header and every chunk of `graph` into one SST file for the `csr` family, so
// ingesting it switches the persisted CSR atomically.
absl::Status WriteCsrSstFile(const rocksdb::Options& options, const std::string& path,
                             const CsrGraph& graph, int64_t generation);

// RocksDB status -> absl::Status, prefixed with what was being done ("open /x/db").
absl::Status FromRocks(const rocksdb::Status& s, std::string_view context);

}  // namespace ibgraphrag::kgstore::internal

// Returns FromRocks(status, context) from the enclosing function when `expr` (a rocksdb::Status)
// fails. `context` is only evaluated on failure, so it may be an expensive StrCat.
#define IBGR_ROCKS_RETURN_IF_ERROR(expr, context)                                       \
  do {                                                                                  \
    const ::rocksdb::Status ibgr_rocks_status_ = (expr);                                \
    if (!ibgr_rocks_status_.ok()) {                                                     \
      return ::ibgraphrag::kgstore::internal::FromRocks(ibgr_rocks_status_, (context)); \
    }                                                                                   \
  } while (0)

#endif  // IBGRAPHRAG_SERVICES_KGSTORE_KG_STORE_CODEC_H_
