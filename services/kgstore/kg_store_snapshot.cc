// KgStore::WriteSnapshot: bulk-loads a KgData into a fresh snapshot directory.
//
// The big column families are written as sorted SST files with rocksdb::SstFileWriter and
// attached with one IngestExternalFiles call (files are moved, not copied, and land directly in
// the bottom level, so there is no memtable, no WAL and no compaction for 16M adjacency keys).
// The out and in directions are produced on two threads: on a two-core machine that halves the
// dominant cost.
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "common/versioned_artifacts.h"
#include "rocksdb/db.h"
#include "rocksdb/sst_file_writer.h"
#include "services/kgstore/csr_graph.h"
#include "services/kgstore/kg_store.h"
#include "services/kgstore/kg_store_codec.h"
#include "services/kgstore/kg_store_strings.h"
#include "services/kgstore/snapshot_manifest.h"

namespace ibgraphrag::kgstore {
namespace {

namespace fs = std::filesystem;
using internal::ColumnFamilyName;
using internal::FromRocks;

// The CSR edge carries 16 bits of provenance group, and every group names known sources.
absl::Status ValidateProvenance(const KgData& kg) {
  if (kg.provenance.size() > kMaxProvenanceGroups) {
    return absl::FailedPreconditionError(absl::StrCat(
        "kg.provenance: ", kg.provenance.size(), " distinct source combinations exceed the ",
        kMaxProvenanceGroups, " a snapshot can address; import fewer distinct source names"));
  }
  for (size_t g = 0; g < kg.provenance.size(); ++g) {
    if (kg.provenance[g].empty()) {
      return absl::InvalidArgumentError(absl::StrCat("kg.provenance[", g, "] is empty"));
    }
    for (SourceId s : kg.provenance[g]) {
      if (s >= kg.sources.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("kg.provenance[", g, "] names source ", s, " of ", kg.sources.size()));
      }
    }
  }
  if (kg.triple_scores.size() > kg.triples.size() ||
      (!kg.triple_notes.empty() && kg.triple_notes.back().first >= kg.triples.size())) {
    return absl::InvalidArgumentError("kg.triple_scores / triple_notes extend past kg.triples");
  }
  for (size_t i = 1; i < kg.triple_notes.size(); ++i) {
    if (kg.triple_notes[i - 1].first >= kg.triple_notes[i].first) {
      return absl::InvalidArgumentError("kg.triple_notes must be sorted by triple index, unique");
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateKgData(const KgData& kg) {
  if (kg.entities.size() >= kInvalidEntity) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kg.entities: ", kg.entities.size(), " entities exceed the limit of ", kInvalidEntity - 1));
  }
  if (kg.relations.size() > kMaxCsrRelations) {
    return absl::InvalidArgumentError(absl::StrCat("kg.relations: ", kg.relations.size(),
                                                   " relations exceed the limit of ",
                                                   kMaxCsrRelations));
  }
  if (kg.sources.size() > 65536) {
    return absl::InvalidArgumentError(
        absl::StrCat("kg.sources: ", kg.sources.size(), " sources exceed the limit of 65536"));
  }
  IBGR_RETURN_IF_ERROR(ValidateProvenance(kg));
  for (size_t i = 0; i < kg.entities.size(); ++i) {
    const Entity& e = kg.entities[i];
    if (e.id != i) {
      return absl::InvalidArgumentError(
          absl::StrCat("kg.entities[", i, "].id is ", e.id, "; ids must equal positions"));
    }
    if (e.external_id.empty() || e.external_id.size() > kMaxExternalIdBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "kg.entities[", i, "].external_id must have 1..", kMaxExternalIdBytes, " bytes"));
    }
  }
  absl::flat_hash_set<std::string_view> relation_names;
  for (size_t i = 0; i < kg.relations.size(); ++i) {
    const Relation& r = kg.relations[i];
    if (r.id != i) {
      return absl::InvalidArgumentError(
          absl::StrCat("kg.relations[", i, "].id is ", r.id, "; ids must equal positions"));
    }
    if (r.name.empty() || !relation_names.insert(r.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("kg.relations[", i, "].name '", r.name, "' is empty or repeated"));
    }
  }
  for (size_t i = 0; i < kg.triples.size(); ++i) {
    const Triple& t = kg.triples[i];
    if (t.head >= kg.entities.size() || t.tail >= kg.entities.size() ||
        t.relation >= kg.relations.size() || t.provenance >= kg.provenance.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("kg.triples[", i, "] (", t.head, ", ", t.relation, ", ", t.tail,
                       ", provenance ", t.provenance, ") refers to an id out of range"));
    }
    if (t.head == t.tail) {
      return absl::InvalidArgumentError(
          absl::StrCat("kg.triples[", i, "] is a self-loop on entity ", t.head));
    }
    if (i > 0 && !(kg.triples[i - 1] < t)) {
      return absl::InvalidArgumentError(
          absl::StrCat("kg.triples[", i, "] is not after kg.triples[", i - 1,
                       "]: triples must be sorted by (head, relation, tail) and unique"));
    }
  }
  return absl::OkStatus();
}

// External-id index entries, sorted for an SST. A canonical id beats an alias with the same
// text, and between aliases the lowest entity id wins, matching KgBuilder's first-binding rule.
absl::StatusOr<std::vector<std::pair<std::string_view, EntityId>>> SortedExternalIds(
    const KgData& kg) {
  struct Entry {
    std::string_view key;
    bool alias;
    EntityId id;
  };
  std::vector<Entry> entries;
  entries.reserve(kg.entities.size() * 2);
  for (const Entity& e : kg.entities) {
    entries.push_back({e.external_id, false, e.id});
    for (const std::string& x : e.xrefs) {
      if (!x.empty() && x.size() <= kMaxExternalIdBytes) entries.push_back({x, true, e.id});
    }
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    if (a.key != b.key) return a.key < b.key;
    if (a.alias != b.alias) return !a.alias;
    return a.id < b.id;
  });
  std::vector<std::pair<std::string_view, EntityId>> out;
  out.reserve(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i > 0 && entries[i].key == entries[i - 1].key) {
      if (!entries[i].alias) {
        return absl::InvalidArgumentError(
            absl::StrCat("kg.entities: external_id '", AsAbsl(entries[i].key),
                         "' is used by entities ", entries[i - 1].id, " and ", entries[i].id));
      }
      continue;
    }
    out.emplace_back(entries[i].key, entries[i].id);
  }
  return out;
}

class SstBuilder {
 public:
  SstBuilder(const rocksdb::Options& options, std::string path)
      : writer_(rocksdb::EnvOptions(), options), path_(std::move(path)) {}
  absl::Status Open() {
    IBGR_ROCKS_RETURN_IF_ERROR(writer_.Open(path_), absl::StrCat("create ", path_));
    return absl::OkStatus();
  }
  absl::Status Put(std::string_view key, std::string_view value) {
    IBGR_ROCKS_RETURN_IF_ERROR(writer_.Put(rocksdb::Slice(key.data(), key.size()),
                                           rocksdb::Slice(value.data(), value.size())),
                               absl::StrCat("write ", path_));
    ++entries_;
    return absl::OkStatus();
  }
  // Finishes (fsyncs) the file; false in *written when it had no entries, which RocksDB cannot
  // represent as an SST, so the caller skips it.
  absl::Status Finish(bool* written) {
    *written = entries_ > 0;
    if (entries_ == 0) return absl::OkStatus();
    IBGR_ROCKS_RETURN_IF_ERROR(writer_.Finish(), absl::StrCat("finish ", path_));
    return absl::OkStatus();
  }
  const std::string& path() const { return path_; }

 private:
  rocksdb::SstFileWriter writer_;
  std::string path_;
  int64_t entries_ = 0;
};

// Writes one adjacency direction from its CSR: keys (node, relation, other) come out in key
// order because each run is sorted by (relation, other). The out direction passes `kg` so each
// value also carries the triple's score and note: its CSR edges are in kg.triples order, so
// edge k of the walk is kg.triples[k].
absl::Status WriteAdjacencySst(const rocksdb::Options& options, const std::string& path,
                               const CsrAdjacency& adj, const KgData* kg, bool* written) {
  SstBuilder sst(options, path);
  IBGR_RETURN_IF_ERROR(sst.Open());
  char key[12];
  size_t edge = 0;
  auto note = kg == nullptr ? decltype(kg->triple_notes.begin())() : kg->triple_notes.begin();
  for (size_t n = 0; n < adj.num_nodes(); ++n) {
    const EdgeRun run = adj.Run(static_cast<EntityId>(n));
    for (size_t i = 0; i < run.size; ++i, ++edge) {
      internal::EncodeAdjacencyKey(static_cast<EntityId>(n), EdgeRelation(run.edges[i]),
                                   EdgeOther(run.edges[i]), key);
      float score = kNoTripleScore;
      std::string_view text;
      if (kg != nullptr) {
        score = TripleScoreAt(*kg, edge);
        if (note != kg->triple_notes.end() && note->first == edge) text = (note++)->second;
      }
      IBGR_RETURN_IF_ERROR(
          sst.Put(std::string_view(key, 12),
                  internal::EncodeAdjacencyValue(EdgeSource(run.edges[i]), score, text)));
    }
  }
  return sst.Finish(written);
}

struct CfFile {
  int cf;
  std::string path;
};

// Everything except the final rename; `tmp` is a fresh empty directory.
absl::Status BuildSnapshotIn(const KgData& kg, const SnapshotManifestInfo& info,
                             const std::string& tmp) {
  IBGR_ASSIGN_OR_RETURN(auto external_ids, SortedExternalIds(kg));
  const std::string db_path = tmp + "/db";
  const std::string sst_dir = tmp + "/sst";
  std::error_code ec;
  fs::create_directory(sst_dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create ", sst_dir, ": ", ec.message()));

  std::shared_ptr<rocksdb::Cache> cache = rocksdb::NewLRUCache(size_t{8} << 20);
  rocksdb::DBOptions db_options = internal::MakeDbOptions();
  db_options.create_if_missing = true;
  db_options.error_if_exists = true;
  db_options.create_missing_column_families = true;
  const std::vector<rocksdb::ColumnFamilyDescriptor> descriptors =
      internal::MakeColumnFamilyDescriptors(cache);
  auto options_for = [&](int cf) { return rocksdb::Options(db_options, descriptors[cf].options); };

  // Out direction and the small families on this thread; in direction on another.
  CsrAdjacency in;
  absl::Status in_status;
  bool in_written = false;
  std::thread in_thread([&] {
    in = CsrGraph::BuildIn(kg.entities.size(), kg.relations.size(), kg.triples);
    in_status = WriteAdjacencySst(options_for(internal::kCfIn), sst_dir + "/in.sst", in, nullptr,
                                  &in_written);
  });
  absl::Status main_status;
  std::vector<CfFile> files;
  CsrAdjacency out;
  auto build_main = [&]() -> absl::Status {
    out = CsrGraph::BuildOut(kg.entities.size(), kg.triples);
    bool written = false;
    IBGR_RETURN_IF_ERROR(
        WriteAdjacencySst(options_for(internal::kCfOut), sst_dir + "/out.sst", out, &kg, &written));
    if (written) files.push_back({internal::kCfOut, sst_dir + "/out.sst"});

    SstBuilder entities(options_for(internal::kCfEntities), sst_dir + "/entities.sst");
    IBGR_RETURN_IF_ERROR(entities.Open());
    for (const Entity& e : kg.entities) {
      IBGR_RETURN_IF_ERROR(entities.Put(internal::EntityKey(e.id), internal::EncodeEntity(e)));
    }
    IBGR_RETURN_IF_ERROR(entities.Finish(&written));
    if (written) files.push_back({internal::kCfEntities, entities.path()});

    SstBuilder xids(options_for(internal::kCfExternalIds), sst_dir + "/external_ids.sst");
    IBGR_RETURN_IF_ERROR(xids.Open());
    std::string value;
    for (const auto& [key, id] : external_ids) {
      value.clear();
      internal::PutBe32(&value, id);
      IBGR_RETURN_IF_ERROR(xids.Put(key, value));
    }
    IBGR_RETURN_IF_ERROR(xids.Finish(&written));
    if (written) files.push_back({internal::kCfExternalIds, xids.path()});
    return absl::OkStatus();
  };
  main_status = build_main();
  in_thread.join();
  IBGR_RETURN_IF_ERROR(main_status);
  IBGR_RETURN_IF_ERROR(in_status);
  if (in_written) files.push_back({internal::kCfIn, sst_dir + "/in.sst"});

  const CsrGraph csr = CsrGraph::FromParts(std::move(out), std::move(in));
  const std::string csr_path = sst_dir + "/csr.sst";
  IBGR_RETURN_IF_ERROR(
      internal::WriteCsrSstFile(options_for(internal::kCfCsr), csr_path, csr, /*generation=*/0));
  files.push_back({internal::kCfCsr, csr_path});

  // Open the database and attach everything.
  rocksdb::DB* raw_db = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  IBGR_ROCKS_RETURN_IF_ERROR(rocksdb::DB::Open(db_options, db_path, descriptors, &handles, &raw_db),
                             absl::StrCat("create database ", db_path));
  std::unique_ptr<rocksdb::DB> db(raw_db);
  auto close_db = [&]() -> absl::Status {
    rocksdb::Status first;
    for (rocksdb::ColumnFamilyHandle* h : handles) {
      rocksdb::Status s = db->DestroyColumnFamilyHandle(h);
      if (first.ok()) first = s;
    }
    handles.clear();
    rocksdb::Status s = db->Close();
    if (first.ok()) first = s;
    db.reset();
    return FromRocks(first, absl::StrCat("close database ", db_path));
  };
  auto attach_and_write = [&]() -> absl::Status {
    std::vector<rocksdb::IngestExternalFileArg> args;
    for (const CfFile& f : files) {
      rocksdb::IngestExternalFileArg arg;
      arg.column_family = handles[f.cf];
      arg.external_files = {f.path};
      arg.options.move_files = true;
      arg.options.write_global_seqno = false;
      args.push_back(std::move(arg));
    }
    if (!args.empty()) {
      IBGR_ROCKS_RETURN_IF_ERROR(db->IngestExternalFiles(args),
                                 absl::StrCat("bulk load into ", db_path));
    }
    rocksdb::WriteBatch batch;
    for (const Relation& r : kg.relations) {
      batch.Put(handles[internal::kCfRelations], internal::RelationKey(r.id),
                internal::EncodeRelation(r));
    }
    const SnapshotManifest manifest = BuildSnapshotManifest(kg, info);
    rocksdb::ColumnFamilyHandle* meta = handles[internal::kCfMeta];
    batch.Put(meta, std::string(internal::kMetaFormatVersion),
              std::to_string(kSnapshotFormatVersion));
    batch.Put(meta, std::string(internal::kMetaGeneration), "0");
    batch.Put(meta, std::string(internal::kMetaCounts), internal::EncodeCounts(manifest.counts));
    std::vector<std::string> names, licenses;
    for (const SourceInfo& s : kg.sources) {
      names.push_back(s.name);
      licenses.push_back(s.license);
    }
    batch.Put(meta, std::string(internal::kMetaSources), internal::EncodeStringList(names));
    batch.Put(meta, std::string(internal::kMetaSourceLicenses),
              internal::EncodeStringList(licenses));
    batch.Put(meta, std::string(internal::kMetaProvenance),
              internal::EncodeProvenance(kg.provenance));
    batch.Put(meta, std::string(internal::kMetaManifest), SnapshotManifestToJson(manifest));
    rocksdb::WriteOptions write_options;
    write_options.sync = true;
    IBGR_ROCKS_RETURN_IF_ERROR(db->Write(write_options, &batch),
                               absl::StrCat("write metadata into ", db_path));
    // Flushing leaves no WAL to replay, so read-only replicas open without recovery work.
    rocksdb::FlushOptions flush;
    flush.wait = true;
    IBGR_ROCKS_RETURN_IF_ERROR(db->Flush(flush, handles), absl::StrCat("flush ", db_path));
    return common::WriteStringToFileAtomic(tmp + "/manifest.json",
                                           SnapshotManifestToJson(manifest));
  };
  absl::Status status = attach_and_write();
  absl::Status close_status = close_db();
  IBGR_RETURN_IF_ERROR(status);
  IBGR_RETURN_IF_ERROR(close_status);
  fs::remove_all(sst_dir, ec);  // files were moved into the database; the directory is empty
  return absl::OkStatus();      // ArtifactStaging::Publish fsyncs every file and directory
}

}  // namespace

absl::Status KgStore::WriteSnapshot(const KgData& kg, const SnapshotManifestInfo& info,
                                    const std::string& dir_in) {
  if (info.version <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("info.version must be > 0, got ", info.version));
  }
  std::string dir = dir_in;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (dir.empty()) return absl::InvalidArgumentError("dir must not be empty");
  IBGR_RETURN_IF_ERROR(ValidateKgData(kg));

  // Built in a staging directory beside `dir`, published with NOREPLACE (an existing or
  // concurrently created `dir` is never replaced: ALREADY_EXISTS).
  IBGR_ASSIGN_OR_RETURN(common::ArtifactStaging staging, common::ArtifactStaging::Create(dir));
  IBGR_RETURN_IF_ERROR(BuildSnapshotIn(kg, info, staging.dir()));
  return staging.Publish();
}

}  // namespace ibgraphrag::kgstore
