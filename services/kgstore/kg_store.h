// KgStore: the durable knowledge graph behind the kgstore service (plain C++, no gRPC).
//
// Storage. A snapshot is `<base>/kg/<version>/{db/, manifest.json}`. RocksDB is the durable
// store, one column family per kind of record (see kg_store_codec.h): entities by internal id,
// the external-id index (canonical ids and every xref alias), adjacency out and in keyed
// big-endian (entity, relation, other end) so prefix scans work, relations, metadata, applied
// ingest batch ids, an ingest log, and `csr`. WAL is on; every ingest batch is one synced
// WriteBatch.
//
// Why CSR blobs. Queries never touch RocksDB adjacency: they walk an in-memory CSR (csr_graph.h).
// Rebuilding that CSR at open means iterating every adjacency key, decoding it and re-sorting
// the in direction (measured on 8.1M triples pinned to two cores: 3.1 s, plus a transient copy
// of every triple), so WriteSnapshot also persists the finished CSR arrays as a few 16 MB
// values in the `csr` family, tagged with the ingest generation they reflect. Open reads those
// values straight into the arrays (one memcpy each; the whole open then takes 0.3 s), then
// replays the ingest log entries newer than that generation into a small overlay. The adjacency
// families stay the source of truth: if the blobs are missing the CSR is rebuilt from
// `adjacency_out` (and re-persisted by a read-write open). CompactOverlay() folds the overlay
// back into fresh blobs so replay stays short on a store that ingests a lot.
//
// Concurrency. Readers take `mu_` shared for the whole query; Ingest validates and writes to
// RocksDB holding only `ingest_mu_` (so queries keep running during the fsync), then takes `mu_`
// exclusively for the in-memory apply, which is a few hash-map and vector appends. Point reads
// of RocksDB (GetEntity, ResolveExternalId) use a RocksDB snapshot taken at that same apply, so a
// batch becomes visible everywhere at once: never half of it, never its entities before its edges.
// The traversal hot path is lock-shared CSR scans plus a thread-local epoch-stamped visited
// array: no hashing and no allocation per triple. With an empty overlay (the normal case after
// open) a node's edges are exactly its CSR runs.
#ifndef IBGRAPHRAG_SERVICES_KGSTORE_KG_STORE_H_
#define IBGRAPHRAG_SERVICES_KGSTORE_KG_STORE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "services/kgstore/csr_graph.h"
#include "services/kgstore/kg_types.h"
#include "services/kgstore/snapshot_manifest.h"

namespace rocksdb {
class Cache;
class ColumnFamilyHandle;
class DB;
class Snapshot;
class WriteBatch;
}  // namespace rocksdb

namespace ibgraphrag::kgstore {

// Query limits; requests outside them get INVALID_ARGUMENT naming the field and the limit.
inline constexpr int kMaxNeighborLimit = 10000;
inline constexpr int kMaxSubgraphSeeds = 1000;
inline constexpr int kMaxSubgraphHops = 4;
inline constexpr int kMaxSubgraphTriples = 100000;
inline constexpr int kMaxFanoutPerNode = 100000;
// max_fanout_per_node == 0 ("auto") spreads the remaining triple budget over the nodes of the
// hop being expanded, clamped to [kAutoFanoutMin, kAutoFanoutMax]: a hub seed keeps up to 1000
// edges, while 3000 hop-1 nodes sharing a 7000-triple budget each keep ~8 instead of the first
// few nodes eating it all.
inline constexpr int kAutoFanoutMin = 8;
inline constexpr int kAutoFanoutMax = 1000;
inline constexpr int kMaxPathEndpoints = 100;  // per side (sources, targets)
inline constexpr int kMaxPathLength = 6;
inline constexpr int kMaxPaths = 1000;
inline constexpr int kMaxRelationFilter = 1000;
// Ingest limits.
inline constexpr size_t kMaxBatchIdBytes = 128;
inline constexpr size_t kMaxExternalIdBytes = 256;
inline constexpr size_t kMaxNameBytes = 4096;         // names, synonyms, types, relation names
inline constexpr size_t kMaxDefinitionBytes = 65536;  // definitions, relation descriptions
inline constexpr size_t kMaxIngestEntities = 100000;
inline constexpr size_t kMaxIngestTriples = 1000000;

enum class Direction {
  kOut,   // edges whose head is the entity
  kIn,    // edges whose tail is the entity
  kBoth,  // out edges, then in edges
};

struct NeighborQuery {
  EntityId entity = kInvalidEntity;
  Direction direction = Direction::kBoth;
  std::vector<RelationId> relations;  // only these relations; empty means all
  int limit = 100;                    // page size, 1..kMaxNeighborLimit
  int64_t offset = 0;                 // >= 0; pass the previous page's next_offset
};

struct NeighborPage {
  // Out edges first, then in edges; within a direction snapshot edges sorted by (relation, other
  // end), then edges ingested since, sorted the same way. Stable while no ingest intervenes.
  std::vector<Triple> triples;
  int64_t total = 0;        // matching edges across all pages
  int64_t next_offset = 0;  // offset of the next page; 0 when this page is the last
};

struct SubgraphQuery {
  std::vector<EntityId> seeds;  // 1..kMaxSubgraphSeeds; duplicates are ignored
  int max_hops = 2;             // 1..kMaxSubgraphHops
  int max_triples = 10000;      // 1..kMaxSubgraphTriples
  // Edges taken per expanded node, 0..kMaxFanoutPerNode; 0 = auto (see kAutoFanoutMin). When a
  // node has more eligible edges, a relation-balanced spread is taken: each (direction, relation)
  // group gets an equal share of the cap (small groups whole, the rest split evenly), and within
  // a group evenly strided positions. Deterministic, and rare relations are not crowded out.
  int max_fanout_per_node = 0;
  std::vector<RelationId> allow_relations;  // only these; empty means all
  std::vector<RelationId> deny_relations;   // never these (applied after allow)
};

struct SubgraphTriple {
  Triple triple;
  // 1 + the hop of the endpoint it was reached from: edges at a seed have hop 1.
  int32_t hop = 0;
};
struct SubgraphEntity {
  EntityId id = kInvalidEntity;
  int32_t hop = 0;  // BFS distance from the nearest seed; seeds have 0
};

struct Subgraph {
  std::vector<SubgraphTriple> triples;   // unique, in BFS order: hop 1 first, then hop 2, ...
  std::vector<SubgraphEntity> entities;  // seeds first, then in discovery order
  bool truncated = false;                // stopped at max_triples with edges left to add
  int64_t capped_nodes = 0;              // expanded nodes whose edges were cut by the fan-out cap
};

struct PathQuery {
  std::vector<EntityId> sources;            // 1..kMaxPathEndpoints; duplicates ignored
  std::vector<EntityId> targets;            // 1..kMaxPathEndpoints; duplicates ignored
  int max_length = 3;                       // edges per path, 1..kMaxPathLength
  int max_paths = 10;                       // 1..kMaxPaths, over all pairs
  bool undirected = true;                   // false: only follow edges head -> tail
  std::vector<RelationId> allow_relations;  // only these; empty means all
  std::vector<RelationId> deny_relations;   // never these
};

struct PathStep {
  Triple triple;
  bool forward = true;  // traversed head -> tail; false: walked the edge tail -> head
};
struct Path {
  EntityId source = kInvalidEntity;
  EntityId target = kInvalidEntity;
  std::vector<PathStep> steps;  // from source to target; steps.size() is the length
};

struct PathResult {
  // For each (source, target) pair (source != target) connected within max_length, the paths of
  // that pair's minimal length. Shorter pairs come first; pairs of equal length share the
  // max_paths budget round-robin so one hub-rich pair cannot starve the others.
  std::vector<Path> paths;
  // The search hit KgStoreOptions::max_path_edge_scans: pairs not reached yet may still be
  // connected. Paths returned are shortest for their pair all the same.
  bool truncated = false;
  int64_t edges_scanned = 0;
};

// A triple to ingest, by external ids and names. Ids resolve through canonical ids and aliases,
// in the store or among the same batch's entities.
struct IngestTriple {
  std::string head;      // external id
  std::string relation;  // relation name; an unknown name creates a relation
  std::string tail;      // external id
  std::string source;    // source name; empty means "ingest"; an unknown name is added
  // The source's licence ("" = unknown); (source, license) names one source, as in KgBuilder.
  std::string license;
  float score = kNoTripleScore;  // evidence score; NaN = none, otherwise finite
  std::string note;              // at most kMaxTripleNoteBytes
};

struct IngestBatch {
  // Required, 1..kMaxBatchIdBytes bytes. A batch id already applied makes the call a no-op that
  // reports already_applied, so clients can retry after any failure.
  std::string batch_id;
  // Upserts, matched by external_id (canonical or alias; the `id` field is ignored). A new one
  // gets the next internal id and needs a type; an existing one gets missing fields filled and
  // names, synonyms, xrefs and sources merged (a different name becomes a synonym). An xref
  // already bound to another entity keeps that binding, as in KgBuilder.
  std::vector<Entity> entities;
  // Relations to create with types and description; existing names are left unchanged.
  std::vector<Relation> relations;
  std::vector<IngestTriple> triples;  // triples already in the store are counted, not re-added
};

struct IngestResult {
  bool already_applied = false;  // batch_id was applied before; nothing changed now
  int64_t generation = 0;        // store generation that includes the batch
  int64_t entities_added = 0;
  int64_t entities_updated = 0;
  int64_t relations_added = 0;
  int64_t triples_added = 0;
  // In the store already or repeated in the batch. Such a triple keeps its stored provenance,
  // score and note: ingest adds facts, it does not re-attribute stored ones.
  int64_t triples_existing = 0;
  std::vector<EntityId> entity_ids;  // internal id of each batch entity, in batch order
};

// What the service shows next to ids (names for prompts and responses).
struct EntitySummary {
  EntityId id = kInvalidEntity;
  std::string external_id;
  std::string type;
  std::string name;
};
// Zero-copy variant for callers that fill protos; views are valid during the callback only.
struct EntitySummaryView {
  EntityId id = kInvalidEntity;
  std::string_view external_id;
  std::string_view type;
  std::string_view name;
};

// A triple's provenance group, score and note as stored in its out-adjacency entry.
struct TripleAnnotation {
  bool found = false;  // false: the store has no such triple (the rest is default)
  ProvenanceId provenance = 0;
  float score = kNoTripleScore;  // NaN = none
  std::string note;              // "" = none
};

struct KgStoreStats {
  std::string snapshot_dir;
  bool read_only = false;
  int64_t generation = 0;          // ingest batches applied since the snapshot was built
  int64_t csr_generation = 0;      // generation the persisted CSR blobs reflect
  int64_t overlay_edges = 0;       // ingested edges not yet compacted into the CSR
  int64_t csr_bytes = 0;           // memory held by the CSR arrays
  int64_t entity_index_bytes = 0;  // memory held by in-memory names and ids
  double open_seconds = 0;         // time Open took
};

struct KgStoreOptions {
  // Snapshot directory `<base>/kg/<version>` (see ResolveSnapshotDir); the database is `db/`.
  std::string snapshot_dir;
  // Open with rocksdb::DB::OpenForReadOnly (replicas, many processes on one snapshot). Ingest
  // and CompactOverlay then fail with FAILED_PRECONDITION.
  bool read_only = false;
  // RocksDB block cache shared by all column families, for entity records and the id index.
  // Traversals never use it (they run on the CSR), so it can stay small.
  int64_t block_cache_bytes = int64_t{64} << 20;
  // Upper bound on adjacency entries one ShortestPaths call may scan, across all its searches
  // (one bidirectional BFS per source-target pair) and path enumeration; reaching it sets
  // PathResult::truncated. An 8.1M-triple graph has 16.2M entries, so the default stops a search
  // after about a quarter of a full sweep.
  int64_t max_path_edge_scans = 4'000'000;
  // Read-write opens fold ingested edges into fresh CSR blobs when the overlay replayed at open
  // holds at least this many edges; 0 never does it automatically.
  int64_t compact_overlay_at_open_edges = 1'000'000;
  // Threads used to load the CSR and entity table at open (>= 1).
  int load_threads = 2;
};

class KgStore {
 public:
  // Writes `kg` as a new snapshot at `dir` (normally SnapshotDir(base, info.version)). Builds in
  // a sibling temp directory (`dir.tmp-<pid>-<random>`) with SST files bulk-loaded by
  // IngestExternalFile, fsyncs, then renames into place: `dir` appears complete or not at all.
  // ALREADY_EXISTS when `dir` exists; INVALID_ARGUMENT when `kg` breaks its invariants (ids
  // dense, triples sorted, unique and without self-loops, ids in range, canonical external ids
  // unique, at most kMaxCsrRelations relations and 65536 sources); FAILED_PRECONDITION when it
  // has more than kMaxProvenanceGroups provenance groups. Any failure
  // removes the temp directory.
  static absl::Status WriteSnapshot(const KgData& kg, const SnapshotManifestInfo& info,
                                    const std::string& dir);

  static absl::StatusOr<std::unique_ptr<KgStore>> Open(const KgStoreOptions& options);

  KgStore(const KgStore&) = delete;
  KgStore& operator=(const KgStore&) = delete;
  ~KgStore();

  // ---- Entities, relations, metadata. All thread-safe. ----
  // Full record from RocksDB; NOT_FOUND naming the id.
  absl::StatusOr<Entity> GetEntity(EntityId id) const;
  // Records for many ids in one read; NOT_FOUND listing every unknown id.
  absl::StatusOr<std::vector<Entity>> GetEntities(absl::Span<const EntityId> ids) const;
  // Canonical id or alias -> internal id; NOT_FOUND naming it.
  absl::StatusOr<EntityId> ResolveExternalId(std::string_view external_id) const;
  // Many at once; NOT_FOUND listing every unknown one.
  absl::StatusOr<std::vector<EntityId>> ResolveExternalIds(
      absl::Span<const std::string> external_ids) const;
  // In-memory id/type/name; NOT_FOUND listing unknown ids.
  absl::StatusOr<std::vector<EntitySummary>> DescribeEntities(absl::Span<const EntityId> ids) const;
  // Calls `fn` for each id under one shared lock; NOT_FOUND (before any call) listing unknowns.
  absl::Status VisitEntitySummaries(absl::Span<const EntityId> ids,
                                    absl::FunctionRef<void(const EntitySummaryView&)> fn) const;
  int64_t num_entities() const;

  absl::StatusOr<Relation> GetRelation(RelationId id) const;
  absl::StatusOr<Relation> FindRelation(std::string_view name) const;
  std::vector<Relation> relations() const;
  std::vector<SourceInfo> sources() const;  // SourceId -> name, licence
  // ProvenanceId -> sorted SourceIds (Triple::provenance indexes it).
  std::vector<std::vector<SourceId>> provenance() const;
  // Both provenance tables (SourceId -> name and licence; ProvenanceId -> sorted SourceIds) lent
  // to `fn` under one lock, so every group's ids index `sources` even while an ingest appends to
  // them (two separate copies could see different generations), and without copying them (per
  // request paths: the copy was ~1 % of an answer's CPU). `fn` must not call into this store (the
  // lock is not reentrant).
  void VisitProvenanceTables(
      absl::FunctionRef<void(const std::vector<SourceInfo>& sources,
                             const std::vector<std::vector<SourceId>>& groups)>
          fn) const;
  // Calls `fn` for each relation, in id order, under one shared lock (no copy of the table); as
  // above, `fn` must not call into this store.
  void VisitRelations(absl::FunctionRef<void(const Relation&)> fn) const;
  KgCounts counts() const;                                        // live: includes ingested data
  const SnapshotManifest& manifest() const { return manifest_; }  // as built; immutable
  KgStoreStats stats() const;

  // ---- Traversal. All const, thread-safe, run concurrently with each other. ----
  absl::StatusOr<NeighborPage> Neighbors(const NeighborQuery& query) const;
  absl::StatusOr<Subgraph> ExtractSubgraph(const SubgraphQuery& query) const;
  absl::StatusOr<PathResult> ShortestPaths(const PathQuery& query) const;
  // Provenance group, score and note of each triple, in order (one batched RocksDB read; at most
  // kMaxSubgraphTriples). A triple the store lacks comes back with found == false.
  absl::StatusOr<std::vector<TripleAnnotation>> GetTripleAnnotations(
      absl::Span<const Triple> triples) const;

  // ---- Writes. ----
  // Validates the whole batch first (nothing is written on error), then writes it as one synced
  // RocksDB WriteBatch together with its batch-id marker, then makes it visible. Concurrent
  // calls are serialised. Errors: INVALID_ARGUMENT naming the field for empty or over-long
  // strings, counts over the kMaxIngest* limits, a new entity without a type, a self-loop, or
  // more than kMaxCsrRelations relations / 65536 sources; NOT_FOUND listing the triples'
  // external ids that resolve neither in the store nor in the batch; FAILED_PRECONDITION on a
  // read-only store.
  absl::StatusOr<IngestResult> Ingest(const IngestBatch& batch);
  // Ingest's checks without the write: OK when Ingest would apply `batch` against the current
  // store (a batch id already applied is not looked up), else the error Ingest would return.
  // Works on a read-only store too (a dry run, and the ingest fuzzer). Waits for an Ingest in
  // progress (it plans against the same state Ingest would).
  absl::Status CheckIngest(const IngestBatch& batch) const;
  // Folds ingested edges into the CSR and persists fresh CSR blobs, so the next open replays
  // nothing. Readers keep running meanwhile; ingests wait. FAILED_PRECONDITION when read-only.
  absl::Status CompactOverlay();

 private:
  // Packed string storage for the in-memory entity index: one arena, (offset, size) per entry.
  struct StrRef {
    uint64_t offset = 0;
    uint32_t size = 0;
  };
  struct EntityIndex {
    std::string arena;
    std::vector<StrRef> external_ids;
    std::vector<StrRef> names;
    std::vector<uint16_t> type_index;  // into `types`
    std::vector<std::string> types;
    absl::flat_hash_map<std::string, uint16_t> type_by_name;

    size_t size() const { return names.size(); }
    std::string_view Get(StrRef r) const {
      return std::string_view(arena).substr(r.offset, r.size);
    }
    StrRef Add(std::string_view s);
    uint16_t TypeIndex(std::string_view type);
    void Append(std::string_view external_id, std::string_view type, std::string_view name);
    size_t MemoryBytes() const;
  };
  // Edges ingested after the CSR blobs' generation, per node and direction, each run sorted like
  // a CSR run so traversal code treats both alike.
  struct OverlayRun {
    std::vector<uint64_t> edges;
    EdgeRun run() const { return {edges.data(), edges.size()}; }
  };
  struct Overlay {
    absl::flat_hash_map<EntityId, OverlayRun> out;
    absl::flat_hash_map<EntityId, OverlayRun> in;
    int64_t edges = 0;
    bool empty() const { return edges == 0; }
  };
  // Up to four runs of a node's edges: CSR out/in and overlay out/in. `out` says whether the
  // node is the head of the run's edges.
  struct NodeRuns {
    EdgeRun runs[4];
    bool out[4];
    bool csr[4];  // a CSR run (its relation groups are indexed) rather than an overlay run
    int count = 0;
  };

  explicit KgStore(const KgStoreOptions& options);

  absl::Status LoadState();
  absl::Status RebuildCsrFromAdjacency();
  absl::Status ReplayIngestLog(int64_t after_generation);
  absl::Status PersistCsr(const CsrGraph& graph, int64_t generation, int64_t old_generation);
  absl::Status CompactOverlayLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(ingest_mu_);

  NodeRuns GatherRuns(EntityId node, Direction direction) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  bool ContainsEdge(EntityId head, RelationId relation, EntityId tail) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  absl::Status CheckEntities(absl::Span<const EntityId> ids, std::string_view field) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  absl::Status CheckRelations(absl::Span<const RelationId> ids, std::string_view field) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  void ApplyOverlayEdges(const std::vector<Triple>& triples) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // One ExtractSubgraph traversal (kg_store_query.cc).
  class SubgraphExpander;

  // Ingest's steps (kg_store_ingest.cc), run under ingest_mu_: plan (shared mu_), write (no
  // mu_: queries keep running during the fsync), apply (exclusive mu_).
  struct IngestPlan;
  class IngestPlanner;
  // The result recorded for `batch_id` when that batch was applied before; nullopt otherwise.
  absl::StatusOr<std::optional<IngestResult>> FindAppliedBatch(const std::string& batch_id) const;
  absl::Status PlanIngest(const IngestBatch& batch, IngestPlan* plan) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(ingest_mu_) ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status PutEntityRecords(IngestPlan* plan, rocksdb::WriteBatch* wb) const;
  void PutGraphRecords(const IngestPlan& plan, rocksdb::WriteBatch* wb) const;
  // Sources, licences and provenance groups including the plan's new ones.
  void PutProvenanceMeta(const IngestPlan& plan, rocksdb::WriteBatch* wb) const
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status WriteIngest(const std::string& batch_id, IngestPlan* plan) ABSL_LOCKS_EXCLUDED(mu_);
  void ApplyIngest(IngestPlan* plan) ABSL_LOCKS_EXCLUDED(mu_);

  const KgStoreOptions options_;
  SnapshotManifest manifest_;  // set once in Open
  double open_seconds_ = 0;

  std::shared_ptr<rocksdb::Cache> block_cache_;
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> cf_;  // indexed by internal::ColumnFamily

  // Serialises writers (Ingest, CompactOverlay) and CheckIngest's planning, which reads the
  // latest database state and so must not see a written but not yet applied batch; never held
  // by queries.
  mutable absl::Mutex ingest_mu_;
  // Guards the in-memory view. Readers hold it shared for a whole query.
  mutable absl::Mutex mu_;
  CsrGraph csr_ ABSL_GUARDED_BY(mu_);
  Overlay overlay_ ABSL_GUARDED_BY(mu_);
  EntityIndex entities_ ABSL_GUARDED_BY(mu_);
  std::vector<Relation> relations_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, RelationId> relation_by_name_ ABSL_GUARDED_BY(mu_);
  std::vector<SourceInfo> sources_ ABSL_GUARDED_BY(mu_);
  std::vector<std::vector<SourceId>> provenance_ ABSL_GUARDED_BY(mu_);
  KgCounts counts_ ABSL_GUARDED_BY(mu_);
  int64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t csr_generation_ ABSL_GUARDED_BY(mu_) = 0;
  // False after a CSR rebuilt from the adjacency family; CompactOverlay then persists it.
  bool csr_blobs_present_ ABSL_GUARDED_BY(mu_) = false;
  // RocksDB point reads see exactly the batches applied in memory; null on read-only stores,
  // whose database cannot change underneath.
  const rocksdb::Snapshot* read_snapshot_ ABSL_GUARDED_BY(mu_) = nullptr;
};

}  // namespace ibgraphrag::kgstore

#endif  // IBGRAPHRAG_SERVICES_KGSTORE_KG_STORE_H_
