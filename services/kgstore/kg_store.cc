// KgStore: opening a snapshot, loading the in-memory view, and the point accessors.
// WriteSnapshot lives in kg_store_snapshot.cc, Ingest/CompactOverlay in kg_store_ingest.cc and
// the traversals in kg_store_query.cc.
#include "services/kgstore/kg_store.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/parallel_for.h"
#include "common/status_macros.h"
#include "rocksdb/db.h"
#include "services/kgstore/kg_store_codec.h"
#include "services/kgstore/kg_store_strings.h"

namespace ibgraphrag::kgstore {
namespace {

namespace fs = std::filesystem;
using internal::FromRocks;

// "3, 7, 9 (and 4 more)": error messages name the offending ids without growing unbounded.
template <typename T>
std::string ListForError(const std::vector<T>& items, size_t max_items = 20) {
  std::vector<std::string> shown;
  for (size_t i = 0; i < items.size() && i < max_items; ++i)
    shown.push_back(absl::StrCat(items[i]));
  std::string out = absl::StrJoin(shown, ", ");
  if (items.size() > max_items) absl::StrAppend(&out, " (and ", items.size() - max_items, " more)");
  return out;
}

// Runs `tasks` on up to `threads` threads; returns the first failure in task order.
absl::Status RunParallel(const std::vector<std::function<absl::Status()>>& tasks, int threads) {
  std::vector<absl::Status> results(tasks.size());
  common::ParallelFor(tasks.size(), threads, [&](size_t i) { results[i] = tasks[i](); });
  for (absl::Status& s : results) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

// Reads the source names, their licences and the provenance groups. Snapshots written before
// provenance groups existed have names only and store a source id per edge: their licences read
// as unknown and group i is {i}, so they open unchanged.
absl::Status LoadProvenance(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* meta,
                            std::vector<SourceInfo>* sources,
                            std::vector<std::vector<SourceId>>* provenance) {
  auto read_optional = [&](std::string_view key, std::string* value) -> absl::StatusOr<bool> {
    const rocksdb::Status s =
        db->Get(rocksdb::ReadOptions(), meta, rocksdb::Slice(key.data(), key.size()), value);
    if (s.IsNotFound()) return false;
    IBGR_ROCKS_RETURN_IF_ERROR(s, absl::StrCat("read metadata '", AsAbsl(key), "'"));
    return true;
  };
  std::string value;
  IBGR_ASSIGN_OR_RETURN(const bool have_names, read_optional(internal::kMetaSources, &value));
  std::vector<std::string> names;
  if (have_names) {
    IBGR_ASSIGN_OR_RETURN(names, internal::DecodeStringList(value));
  }
  std::vector<std::string> licenses;
  IBGR_ASSIGN_OR_RETURN(const bool have_licenses,
                        read_optional(internal::kMetaSourceLicenses, &value));
  if (have_licenses) {
    IBGR_ASSIGN_OR_RETURN(licenses, internal::DecodeStringList(value));
    if (licenses.size() != names.size()) {
      return absl::DataLossError(
          absl::StrCat("corrupt metadata 'source_licenses': ", licenses.size(), " licences for ",
                       names.size(), " sources in 'sources'"));
    }
  }
  if (names.size() > size_t{std::numeric_limits<SourceId>::max()} + 1) {
    return absl::DataLossError(absl::StrCat("corrupt metadata 'sources': ", names.size(),
                                            " sources, more than the limit of 65536"));
  }
  sources->clear();
  for (size_t i = 0; i < names.size(); ++i) {
    sources->push_back(SourceInfo{names[i], i < licenses.size() ? licenses[i] : ""});
  }
  IBGR_ASSIGN_OR_RETURN(const bool have_groups, read_optional(internal::kMetaProvenance, &value));
  if (have_groups) {
    IBGR_ASSIGN_OR_RETURN(*provenance, internal::DecodeProvenance(value));
  } else {
    provenance->clear();
    for (size_t i = 0; i < names.size(); ++i) {
      provenance->push_back({static_cast<SourceId>(i)});
    }
  }
  for (size_t g = 0; g < provenance->size(); ++g) {
    for (SourceId s : (*provenance)[g]) {
      if (s >= sources->size()) {
        return absl::DataLossError(absl::StrCat("corrupt metadata 'provenance': group ", g,
                                                " names source ", s, " of ", sources->size(),
                                                " in 'sources'"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

// ---- EntityIndex ----

KgStore::StrRef KgStore::EntityIndex::Add(std::string_view s) {
  StrRef ref{arena.size(), static_cast<uint32_t>(s.size())};
  arena.append(s.data(), s.size());
  return ref;
}

uint16_t KgStore::EntityIndex::TypeIndex(std::string_view type) {
  if (auto it = type_by_name.find(AsAbsl(type)); it != type_by_name.end()) return it->second;
  // More than 65535 distinct entity types is not a KG anyone builds; fold the excess into the
  // last slot rather than fail an open.
  const auto index = static_cast<uint16_t>(std::min<size_t>(types.size(), 65535));
  if (index == types.size()) types.emplace_back(type);
  type_by_name.emplace(std::string(type), index);
  return index;
}

void KgStore::EntityIndex::Append(std::string_view external_id, std::string_view type,
                                  std::string_view name) {
  external_ids.push_back(Add(external_id));
  names.push_back(Add(name));
  type_index.push_back(TypeIndex(type));
}

size_t KgStore::EntityIndex::MemoryBytes() const {
  return arena.capacity() + (external_ids.capacity() + names.capacity()) * sizeof(StrRef) +
         type_index.capacity() * sizeof(uint16_t);
}

// ---- Open ----

KgStore::KgStore(const KgStoreOptions& options) : options_(options) {}

KgStore::~KgStore() {
  if (db_ == nullptr) return;
  {
    absl::MutexLock lock(&mu_);
    if (read_snapshot_ != nullptr) db_->ReleaseSnapshot(read_snapshot_);
    read_snapshot_ = nullptr;
  }
  for (rocksdb::ColumnFamilyHandle* h : cf_) db_->DestroyColumnFamilyHandle(h);
  cf_.clear();
  db_->Close().PermitUncheckedError();  // nothing useful to do with a failure here
  db_.reset();
}

absl::StatusOr<std::unique_ptr<KgStore>> KgStore::Open(const KgStoreOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  if (options.snapshot_dir.empty()) {
    return absl::InvalidArgumentError("options.snapshot_dir must not be empty");
  }
  if (options.block_cache_bytes < 0 || options.max_path_edge_scans <= 0 ||
      options.load_threads < 1 || options.compact_overlay_at_open_edges < 0) {
    return absl::InvalidArgumentError(
        "options: block_cache_bytes and compact_overlay_at_open_edges must be >= 0, "
        "max_path_edge_scans > 0 and load_threads >= 1");
  }
  const std::string db_path = options.snapshot_dir + "/db";
  std::error_code ec;
  if (!fs::is_directory(db_path, ec)) {
    return absl::NotFoundError(absl::StrCat("no KG snapshot database at ", db_path));
  }
  std::unique_ptr<KgStore> store(new KgStore(options));
  store->block_cache_ = rocksdb::NewLRUCache(
      static_cast<size_t>(std::max<int64_t>(options.block_cache_bytes, 1 << 20)));
  const auto descriptors = internal::MakeColumnFamilyDescriptors(store->block_cache_);
  rocksdb::DBOptions db_options = internal::MakeDbOptions();
  rocksdb::DB* raw = nullptr;
  const rocksdb::Status s =
      options.read_only
          ? rocksdb::DB::OpenForReadOnly(db_options, db_path, descriptors, &store->cf_, &raw)
          : rocksdb::DB::Open(db_options, db_path, descriptors, &store->cf_, &raw);
  store->db_.reset(raw);
  IBGR_ROCKS_RETURN_IF_ERROR(s, absl::StrCat("open KG database ", db_path));
  IBGR_RETURN_IF_ERROR(store->LoadState());
  store->open_seconds_ =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return store;
}

absl::Status KgStore::LoadState() {
  absl::MutexLock lock(&mu_);
  rocksdb::ReadOptions ro;
  auto get_meta = [&](std::string_view key, std::string* value) -> absl::Status {
    IBGR_ROCKS_RETURN_IF_ERROR(
        db_->Get(ro, cf_[internal::kCfMeta], rocksdb::Slice(key.data(), key.size()), value),
        absl::StrCat("read metadata '", AsAbsl(key), "' of ", options_.snapshot_dir));
    return absl::OkStatus();
  };
  std::string value;
  IBGR_RETURN_IF_ERROR(get_meta(internal::kMetaFormatVersion, &value));
  int format = 0;
  if (!absl::SimpleAtoi(value, &format) || format != kSnapshotFormatVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat("snapshot ", options_.snapshot_dir, " has format version '", value,
                     "'; this build reads version ", kSnapshotFormatVersion));
  }
  IBGR_RETURN_IF_ERROR(get_meta(internal::kMetaGeneration, &value));
  if (!absl::SimpleAtoi(value, &generation_) || generation_ < 0) {
    return absl::DataLossError(absl::StrCat("corrupt generation '", value, "'"));
  }
  IBGR_RETURN_IF_ERROR(get_meta(internal::kMetaCounts, &value));
  IBGR_ASSIGN_OR_RETURN(counts_, internal::DecodeCounts(value));
  IBGR_RETURN_IF_ERROR(LoadProvenance(db_.get(), cf_[internal::kCfMeta], &sources_, &provenance_));
  IBGR_RETURN_IF_ERROR(get_meta(internal::kMetaManifest, &value));
  IBGR_ASSIGN_OR_RETURN(manifest_, SnapshotManifestFromJson(value));

  {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf_[internal::kCfRelations]));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      const rocksdb::Slice k = it->key();
      if (k.size() != 4 || internal::GetBe32(k.data()) != relations_.size()) {
        return absl::DataLossError("relation ids are not dense");
      }
      IBGR_ASSIGN_OR_RETURN(Relation r,
                            internal::DecodeRelation(it->value().ToStringView(),
                                                     static_cast<RelationId>(relations_.size())));
      relation_by_name_.emplace(r.name, r.id);
      relations_.push_back(std::move(r));
    }
    IBGR_ROCKS_RETURN_IF_ERROR(it->status(), "read relations");
  }

  // The CSR header decides how the adjacency is loaded: straight from blobs when present.
  bool have_blobs = true;
  internal::CsrHeader header;
  {
    const rocksdb::Status s =
        db_->Get(ro, cf_[internal::kCfCsr], std::string(internal::kCsrHeaderKey), &value);
    if (s.IsNotFound()) {
      have_blobs = false;
    } else {
      IBGR_ROCKS_RETURN_IF_ERROR(s, "read CSR header");
      IBGR_ASSIGN_OR_RETURN(header, internal::DecodeCsrHeader(value));
      if (header.generation > generation_) {
        return absl::DataLossError(absl::StrCat("CSR generation ", header.generation,
                                                " is newer than the store's ", generation_));
      }
    }
  }

  std::vector<std::function<absl::Status()>> tasks;
  tasks.push_back([this]() ABSL_NO_THREAD_SAFETY_ANALYSIS -> absl::Status {
    rocksdb::ReadOptions scan;
    scan.fill_cache = false;
    scan.readahead_size = size_t{4} << 20;
    entities_.external_ids.reserve(static_cast<size_t>(std::max<int64_t>(counts_.entities, 0)));
    entities_.names.reserve(entities_.external_ids.capacity());
    entities_.type_index.reserve(entities_.external_ids.capacity());
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(scan, cf_[internal::kCfEntities]));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      const rocksdb::Slice k = it->key();
      if (k.size() != 4 || internal::GetBe32(k.data()) != entities_.size()) {
        return absl::DataLossError(
            absl::StrCat("entity ids are not dense at position ", entities_.size()));
      }
      std::string_view ext, type, name;
      IBGR_RETURN_IF_ERROR(
          internal::DecodeEntityHead(it->value().ToStringView(), &ext, &type, &name));
      entities_.Append(ext, type, name);
    }
    IBGR_ROCKS_RETURN_IF_ERROR(it->status(), "read entities");
    return absl::OkStatus();
  });
  std::vector<CsrChunk> chunks;
  if (have_blobs) {
    csr_ = CsrGraph::Allocate(header.num_nodes, header.num_edges);
    chunks = csr_.MutableChunks(header.chunk_bytes);
    for (const CsrChunk& chunk : chunks) {
      tasks.push_back([this, &chunk, &header]() -> absl::Status {
        rocksdb::ReadOptions read;
        read.fill_cache = false;  // read once; caching 16 MB values would evict useful blocks
        rocksdb::PinnableSlice bytes;
        const std::string key = internal::CsrChunkKey(header.generation, chunk.name);
        IBGR_ROCKS_RETURN_IF_ERROR(db_->Get(read, cf_[internal::kCfCsr], key, &bytes),
                                   absl::StrCat("read CSR chunk ", key));
        if (bytes.size() != chunk.size) {
          return absl::DataLossError(absl::StrCat("CSR chunk ", key, " has ", bytes.size(),
                                                  " bytes, expected ", chunk.size));
        }
        std::memcpy(chunk.data, bytes.data(), chunk.size);
        return absl::OkStatus();
      });
    }
  }
  IBGR_RETURN_IF_ERROR(RunParallel(tasks, options_.load_threads));

  if (have_blobs) {
    if (csr_.num_nodes() > entities_.size()) {
      return absl::DataLossError(absl::StrCat("CSR covers ", csr_.num_nodes(),
                                              " entities but the store has ", entities_.size()));
    }
    IBGR_RETURN_IF_ERROR(csr_.Validate(relations_.size(), provenance_.size()));
    csr_.BuildGroupIndexes(options_.load_threads > 1);
    csr_generation_ = header.generation;
    csr_blobs_present_ = true;
    IBGR_RETURN_IF_ERROR(ReplayIngestLog(csr_generation_));
  } else {
    IBGR_RETURN_IF_ERROR(RebuildCsrFromAdjacency());
  }
  if (!options_.read_only) read_snapshot_ = db_->GetSnapshot();
  if (!options_.read_only &&
      (!have_blobs || (options_.compact_overlay_at_open_edges > 0 &&
                       overlay_.edges >= options_.compact_overlay_at_open_edges))) {
    mu_.Unlock();  // CompactOverlay takes the locks itself
    absl::Status s = CompactOverlay();
    mu_.Lock();
    IBGR_RETURN_IF_ERROR(s);
  }
  return absl::OkStatus();
}

absl::Status KgStore::ReplayIngestLog(int64_t after_generation) {
  rocksdb::ReadOptions ro;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf_[internal::kCfIngestLog]));
  for (it->Seek(internal::GenerationKey(static_cast<uint64_t>(after_generation) + 1)); it->Valid();
       it->Next()) {
    IBGR_ASSIGN_OR_RETURN(std::vector<Triple> triples,
                          internal::DecodeTripleLog(it->value().ToStringView()));
    for (const Triple& t : triples) {
      if (t.head >= entities_.size() || t.tail >= entities_.size() || t.head == t.tail ||
          t.relation >= relations_.size() || t.provenance >= provenance_.size()) {
        return absl::DataLossError("ingest log refers to unknown ids");
      }
    }
    ApplyOverlayEdges(triples);
  }
  IBGR_ROCKS_RETURN_IF_ERROR(it->status(), "read ingest log");
  return absl::OkStatus();
}

absl::Status KgStore::RebuildCsrFromAdjacency() {
  // The adjacency family is the source of truth; its keys are already (head, relation, tail)
  // ordered, which is exactly what CsrGraph::Build wants.
  rocksdb::ReadOptions scan;
  scan.fill_cache = false;
  scan.readahead_size = size_t{4} << 20;
  std::vector<Triple> triples;
  triples.reserve(static_cast<size_t>(std::max<int64_t>(counts_.triples, 0)));
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(scan, cf_[internal::kCfOut]));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const rocksdb::Slice k = it->key();
    const rocksdb::Slice v = it->value();
    if (k.size() != 12) return absl::DataLossError("corrupt adjacency key");
    IBGR_ASSIGN_OR_RETURN(const internal::AdjacencyValue value,
                          internal::DecodeAdjacencyValue(v.ToStringView()));
    Triple t{internal::GetBe32(k.data()), internal::GetBe32(k.data() + 4),
             internal::GetBe32(k.data() + 8), value.group};
    if (t.head >= entities_.size() || t.tail >= entities_.size() ||
        t.relation >= relations_.size() || t.provenance >= provenance_.size()) {
      return absl::DataLossError("adjacency refers to unknown ids");
    }
    triples.push_back(t);
  }
  IBGR_ROCKS_RETURN_IF_ERROR(it->status(), "read adjacency");
  csr_ = CsrGraph::Build(entities_.size(), relations_.size(), triples);
  csr_.BuildGroupIndexes(options_.load_threads > 1);
  csr_generation_ = generation_;
  overlay_ = Overlay();
  return absl::OkStatus();
}

// ---- Overlay ----

void KgStore::ApplyOverlayEdges(const std::vector<Triple>& triples) {
  if (triples.empty()) return;
  std::vector<EntityId> touched_out, touched_in;
  touched_out.reserve(triples.size());
  touched_in.reserve(triples.size());
  for (const Triple& t : triples) {
    const auto group = static_cast<SourceId>(t.provenance);
    overlay_.out[t.head].edges.push_back(PackEdge(t.relation, t.tail, group));
    overlay_.in[t.tail].edges.push_back(PackEdge(t.relation, t.head, group));
    touched_out.push_back(t.head);
    touched_in.push_back(t.tail);
  }
  overlay_.edges += static_cast<int64_t>(triples.size());
  // Keep each run sorted like a CSR run; only the runs this batch appended to need sorting.
  auto sort_run = [](OverlayRun& run) { std::sort(run.edges.begin(), run.edges.end()); };
  for (auto* touched : {&touched_out, &touched_in}) {
    std::sort(touched->begin(), touched->end());
    touched->erase(std::unique(touched->begin(), touched->end()), touched->end());
  }
  for (EntityId n : touched_out) sort_run(overlay_.out[n]);
  for (EntityId n : touched_in) sort_run(overlay_.in[n]);
}

KgStore::NodeRuns KgStore::GatherRuns(EntityId node, Direction direction) const {
  NodeRuns r;
  auto add = [&r](EdgeRun run, bool out, bool csr) {
    if (run.size == 0) return;
    r.runs[r.count] = run;
    r.out[r.count] = out;
    r.csr[r.count] = csr;
    ++r.count;
  };
  if (direction != Direction::kIn) {
    add(csr_.out().Run(node), true, true);
    if (!overlay_.empty()) {
      if (auto it = overlay_.out.find(node); it != overlay_.out.end()) {
        add(it->second.run(), true, false);
      }
    }
  }
  if (direction != Direction::kOut) {
    add(csr_.in().Run(node), false, true);
    if (!overlay_.empty()) {
      if (auto it = overlay_.in.find(node); it != overlay_.in.end()) {
        add(it->second.run(), false, false);
      }
    }
  }
  return r;
}

bool KgStore::ContainsEdge(EntityId head, RelationId relation, EntityId tail) const {
  if (csr_.Contains(head, relation, tail)) return true;
  if (overlay_.empty()) return false;
  auto it = overlay_.out.find(head);
  if (it == overlay_.out.end()) return false;
  const EdgeRun run = it->second.run();
  return run.Find(relation, tail) != run.size;
}

absl::Status KgStore::CheckEntities(absl::Span<const EntityId> ids, std::string_view field) const {
  std::vector<EntityId> unknown;
  for (EntityId id : ids) {
    if (id >= entities_.size()) unknown.push_back(id);
  }
  if (unknown.empty()) return absl::OkStatus();
  return absl::NotFoundError(absl::StrCat("unknown entity id", unknown.size() > 1 ? "s" : "",
                                          " in ", AsAbsl(field), ": ", ListForError(unknown)));
}

absl::Status KgStore::CheckRelations(absl::Span<const RelationId> ids,
                                     std::string_view field) const {
  if (ids.size() > static_cast<size_t>(kMaxRelationFilter)) {
    return absl::InvalidArgumentError(absl::StrCat(AsAbsl(field), " has ", ids.size(),
                                                   " entries; the limit is ", kMaxRelationFilter));
  }
  std::vector<RelationId> unknown;
  for (RelationId id : ids) {
    if (id >= relations_.size()) unknown.push_back(id);
  }
  if (unknown.empty()) return absl::OkStatus();
  return absl::NotFoundError(absl::StrCat("unknown relation id", unknown.size() > 1 ? "s" : "",
                                          " in ", AsAbsl(field), ": ", ListForError(unknown)));
}

// ---- Point accessors ----

absl::StatusOr<Entity> KgStore::GetEntity(EntityId id) const {
  absl::ReaderMutexLock lock(&mu_);
  IBGR_RETURN_IF_ERROR(CheckEntities({id}, "id"));
  rocksdb::ReadOptions ro;
  ro.snapshot = read_snapshot_;
  rocksdb::PinnableSlice value;
  IBGR_ROCKS_RETURN_IF_ERROR(
      db_->Get(ro, cf_[internal::kCfEntities], internal::EntityKey(id), &value),
      absl::StrCat("read entity ", id));
  return internal::DecodeEntity(value.ToStringView(), id);
}

absl::StatusOr<std::vector<Entity>> KgStore::GetEntities(absl::Span<const EntityId> ids) const {
  absl::ReaderMutexLock lock(&mu_);
  IBGR_RETURN_IF_ERROR(CheckEntities(ids, "ids"));
  rocksdb::ReadOptions ro;
  ro.snapshot = read_snapshot_;
  std::vector<std::string> keys;
  keys.reserve(ids.size());
  for (EntityId id : ids) keys.push_back(internal::EntityKey(id));
  std::vector<rocksdb::Slice> key_slices(keys.begin(), keys.end());
  std::vector<rocksdb::ColumnFamilyHandle*> cfs(ids.size(), cf_[internal::kCfEntities]);
  std::vector<std::string> values;
  const std::vector<rocksdb::Status> statuses = db_->MultiGet(ro, cfs, key_slices, &values);
  std::vector<Entity> out;
  out.reserve(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    IBGR_ROCKS_RETURN_IF_ERROR(statuses[i], absl::StrCat("read entity ", ids[i]));
    IBGR_ASSIGN_OR_RETURN(Entity e, internal::DecodeEntity(values[i], ids[i]));
    out.push_back(std::move(e));
  }
  return out;
}

absl::StatusOr<EntityId> KgStore::ResolveExternalId(std::string_view external_id) const {
  const std::string id(external_id);
  IBGR_ASSIGN_OR_RETURN(std::vector<EntityId> ids, ResolveExternalIds({&id, 1}));
  return ids[0];
}

absl::StatusOr<std::vector<EntityId>> KgStore::ResolveExternalIds(
    absl::Span<const std::string> external_ids) const {
  for (size_t i = 0; i < external_ids.size(); ++i) {
    if (external_ids[i].empty() || external_ids[i].size() > kMaxExternalIdBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("external_ids[", i, "] must have 1..", kMaxExternalIdBytes, " bytes"));
    }
  }
  absl::ReaderMutexLock lock(&mu_);
  rocksdb::ReadOptions ro;
  ro.snapshot = read_snapshot_;
  std::vector<rocksdb::Slice> keys(external_ids.begin(), external_ids.end());
  std::vector<rocksdb::ColumnFamilyHandle*> cfs(keys.size(), cf_[internal::kCfExternalIds]);
  std::vector<std::string> values;
  const std::vector<rocksdb::Status> statuses = db_->MultiGet(ro, cfs, keys, &values);
  std::vector<EntityId> ids(keys.size(), kInvalidEntity);
  std::vector<std::string> unknown;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (statuses[i].IsNotFound()) {
      unknown.push_back(absl::StrCat("'", external_ids[i], "'"));
      continue;
    }
    IBGR_ROCKS_RETURN_IF_ERROR(statuses[i], absl::StrCat("resolve '", external_ids[i], "'"));
    if (values[i].size() != 4) return absl::DataLossError("corrupt external-id index entry");
    ids[i] = internal::GetBe32(values[i].data());
    if (ids[i] >= entities_.size()) return absl::DataLossError("external-id index out of range");
  }
  if (!unknown.empty()) {
    return absl::NotFoundError(absl::StrCat("unknown external id", unknown.size() > 1 ? "s" : "",
                                            ": ", ListForError(unknown)));
  }
  return ids;
}

absl::Status KgStore::VisitEntitySummaries(
    absl::Span<const EntityId> ids, absl::FunctionRef<void(const EntitySummaryView&)> fn) const {
  absl::ReaderMutexLock lock(&mu_);
  IBGR_RETURN_IF_ERROR(CheckEntities(ids, "ids"));
  for (EntityId id : ids) {
    fn(EntitySummaryView{id, entities_.Get(entities_.external_ids[id]),
                         entities_.types[entities_.type_index[id]],
                         entities_.Get(entities_.names[id])});
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<EntitySummary>> KgStore::DescribeEntities(
    absl::Span<const EntityId> ids) const {
  std::vector<EntitySummary> out;
  out.reserve(ids.size());
  IBGR_RETURN_IF_ERROR(VisitEntitySummaries(ids, [&out](const EntitySummaryView& v) {
    out.push_back(
        EntitySummary{v.id, std::string(v.external_id), std::string(v.type), std::string(v.name)});
  }));
  return out;
}

int64_t KgStore::num_entities() const {
  absl::ReaderMutexLock lock(&mu_);
  return static_cast<int64_t>(entities_.size());
}

absl::StatusOr<Relation> KgStore::GetRelation(RelationId id) const {
  absl::ReaderMutexLock lock(&mu_);
  if (id >= relations_.size()) return absl::NotFoundError(absl::StrCat("unknown relation id ", id));
  return relations_[id];
}

absl::StatusOr<Relation> KgStore::FindRelation(std::string_view name) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = relation_by_name_.find(AsAbsl(name));
  if (it == relation_by_name_.end()) {
    return absl::NotFoundError(absl::StrCat("unknown relation '", AsAbsl(name), "'"));
  }
  return relations_[it->second];
}

std::vector<Relation> KgStore::relations() const {
  absl::ReaderMutexLock lock(&mu_);
  return relations_;
}

std::vector<SourceInfo> KgStore::sources() const {
  absl::ReaderMutexLock lock(&mu_);
  return sources_;
}

std::vector<std::vector<SourceId>> KgStore::provenance() const {
  absl::ReaderMutexLock lock(&mu_);
  return provenance_;
}

void KgStore::VisitProvenanceTables(
    absl::FunctionRef<void(const std::vector<SourceInfo>&,
                           const std::vector<std::vector<SourceId>>&)>
        fn) const {
  absl::ReaderMutexLock lock(&mu_);
  fn(sources_, provenance_);
}

void KgStore::VisitRelations(absl::FunctionRef<void(const Relation&)> fn) const {
  absl::ReaderMutexLock lock(&mu_);
  for (const Relation& r : relations_) fn(r);
}

absl::StatusOr<std::vector<TripleAnnotation>> KgStore::GetTripleAnnotations(
    absl::Span<const Triple> triples) const {
  if (triples.size() > static_cast<size_t>(kMaxSubgraphTriples)) {
    return absl::InvalidArgumentError(
        absl::StrCat("triples: ", triples.size(), " exceed the limit of ", kMaxSubgraphTriples));
  }
  std::vector<std::string> keys(triples.size(), std::string(12, '\0'));
  std::vector<rocksdb::Slice> slices;
  slices.reserve(triples.size());
  for (size_t i = 0; i < triples.size(); ++i) {
    internal::EncodeAdjacencyKey(triples[i].head, triples[i].relation, triples[i].tail,
                                 keys[i].data());
    slices.emplace_back(keys[i]);
  }
  std::vector<rocksdb::PinnableSlice> values(triples.size());
  std::vector<rocksdb::Status> statuses(triples.size());
  {
    absl::ReaderMutexLock lock(&mu_);
    rocksdb::ReadOptions ro;
    ro.snapshot = read_snapshot_;
    db_->MultiGet(ro, cf_[internal::kCfOut], slices.size(), slices.data(), values.data(),
                  statuses.data());
  }
  std::vector<TripleAnnotation> out(triples.size());
  for (size_t i = 0; i < triples.size(); ++i) {
    if (statuses[i].IsNotFound()) continue;
    IBGR_ROCKS_RETURN_IF_ERROR(statuses[i], "read triple annotations");
    IBGR_ASSIGN_OR_RETURN(const internal::AdjacencyValue v,
                          internal::DecodeAdjacencyValue(values[i].ToStringView()));
    out[i].found = true;
    out[i].provenance = v.group;
    out[i].score = v.score;
    out[i].note = std::string(v.note);
  }
  return out;
}

KgCounts KgStore::counts() const {
  absl::ReaderMutexLock lock(&mu_);
  return counts_;
}

KgStoreStats KgStore::stats() const {
  absl::ReaderMutexLock lock(&mu_);
  KgStoreStats s;
  s.snapshot_dir = options_.snapshot_dir;
  s.read_only = options_.read_only;
  s.generation = generation_;
  s.csr_generation = csr_generation_;
  s.overlay_edges = overlay_.edges;
  s.csr_bytes = static_cast<int64_t>(csr_.MemoryBytes());
  s.entity_index_bytes = static_cast<int64_t>(entities_.MemoryBytes());
  s.open_seconds = open_seconds_;
  return s;
}

}  // namespace ibgraphrag::kgstore
