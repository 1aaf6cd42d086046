#include "services/kgstore/kg_store_codec.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "rocksdb/convenience.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/sst_file_writer.h"
#include "rocksdb/table.h"
#include "services/kgstore/kg_store_strings.h"

namespace ibgraphrag::kgstore::internal {
namespace {

using nlohmann::json;

constexpr char kEntityEncodingVersion = 1;
constexpr char kRelationEncodingVersion = 1;
constexpr char kMarkerEncodingVersion = 1;

void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void PutString(std::string* out, std::string_view s) {
  PutVarint(out, s.size());
  out->append(s.data(), s.size());
}

void PutStringList(std::string* out, const std::vector<std::string>& list) {
  PutVarint(out, list.size());
  for (const std::string& s : list) PutString(out, s);
}

// Bounds-checked reader: every Get* fails instead of reading past the end, so a damaged value
// becomes DATA_LOSS rather than a crash.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  bool Varint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= data_.size()) return false;
      const auto byte = static_cast<uint8_t>(data_[pos_++]);
      *v |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;
  }
  bool String(std::string_view* s) {
    uint64_t n = 0;
    if (!Varint(&n) || n > data_.size() - pos_) return false;
    *s = data_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  bool StringList(std::vector<std::string>* list) {
    uint64_t n = 0;
    if (!Varint(&n) || n > data_.size() - pos_) return false;  // each item takes >= 1 byte
    list->clear();
    list->reserve(n);
    for (uint64_t i = 0; i < n; ++i) {
      std::string_view s;
      if (!String(&s)) return false;
      list->emplace_back(s);
    }
    return true;
  }
  bool Byte(char* c) {
    if (pos_ >= data_.size()) return false;
    *c = data_[pos_++];
    return true;
  }
  bool done() const { return pos_ == data_.size(); }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

}  // namespace

const char* ColumnFamilyName(int cf) {
  switch (cf) {
    case kCfDefault:
      return "default";
    case kCfEntities:
      return "entities";
    case kCfExternalIds:
      return "external_ids";
    case kCfOut:
      return "adjacency_out";
    case kCfIn:
      return "adjacency_in";
    case kCfRelations:
      return "relations";
    case kCfMeta:
      return "meta";
    case kCfBatches:
      return "ingest_batches";
    case kCfIngestLog:
      return "ingest_log";
    case kCfCsr:
      return "csr";
    default:
      return "?";
  }
}

void PutBe16(std::string* out, uint16_t v) {
  out->push_back(static_cast<char>(v >> 8));
  out->push_back(static_cast<char>(v));
}
void PutBe32(std::string* out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<char>(v >> shift));
}
void PutBe64(std::string* out, uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) out->push_back(static_cast<char>(v >> shift));
}
uint16_t GetBe16(const char* p) {
  const auto* u = reinterpret_cast<const uint8_t*>(p);
  return static_cast<uint16_t>((u[0] << 8) | u[1]);
}
uint32_t GetBe32(const char* p) {
  const auto* u = reinterpret_cast<const uint8_t*>(p);
  return (static_cast<uint32_t>(u[0]) << 24) | (static_cast<uint32_t>(u[1]) << 16) |
         (static_cast<uint32_t>(u[2]) << 8) | u[3];
}
uint64_t GetBe64(const char* p) {
  return (static_cast<uint64_t>(GetBe32(p)) << 32) | GetBe32(p + 4);
}

std::string EntityKey(EntityId id) {
  std::string k;
  PutBe32(&k, id);
  return k;
}
std::string RelationKey(RelationId id) {
  std::string k;
  PutBe32(&k, id);
  return k;
}
std::string GenerationKey(uint64_t generation) {
  std::string k;
  PutBe64(&k, generation);
  return k;
}

void EncodeAdjacencyKey(EntityId first, RelationId relation, EntityId second, char buf[12]) {
  const uint32_t parts[3] = {first, relation, second};
  for (int i = 0; i < 3; ++i) {
    buf[4 * i] = static_cast<char>(parts[i] >> 24);
    buf[4 * i + 1] = static_cast<char>(parts[i] >> 16);
    buf[4 * i + 2] = static_cast<char>(parts[i] >> 8);
    buf[4 * i + 3] = static_cast<char>(parts[i]);
  }
}

std::string EncodeEntity(const Entity& e) {
  std::string out;
  out.reserve(16 + e.external_id.size() + e.type.size() + e.name.size() + e.definition.size());
  out.push_back(kEntityEncodingVersion);
  // The fields DecodeEntityHead needs come first so it can stop early.
  PutString(&out, e.external_id);
  PutString(&out, e.type);
  PutString(&out, e.name);
  PutString(&out, e.definition);
  PutStringList(&out, e.synonyms);
  PutStringList(&out, e.xrefs);
  PutStringList(&out, e.sources);
  return out;
}

absl::Status DecodeEntityHead(std::string_view value, std::string_view* external_id,
                              std::string_view* type, std::string_view* name) {
  Reader r(value);
  char version = 0;
  if (!r.Byte(&version) || version != kEntityEncodingVersion || !r.String(external_id) ||
      !r.String(type) || !r.String(name)) {
    return absl::DataLossError("corrupt entity record");
  }
  return absl::OkStatus();
}

absl::StatusOr<Entity> DecodeEntity(std::string_view value, EntityId id) {
  Reader r(value);
  Entity e;
  e.id = id;
  char version = 0;
  std::string_view ext, type, name, definition;
  if (!r.Byte(&version) || version != kEntityEncodingVersion || !r.String(&ext) ||
      !r.String(&type) || !r.String(&name) || !r.String(&definition) ||
      !r.StringList(&e.synonyms) || !r.StringList(&e.xrefs) || !r.StringList(&e.sources) ||
      !r.done()) {
    return absl::DataLossError(absl::StrCat("corrupt record of entity ", id));
  }
  e.external_id = std::string(ext);
  e.type = std::string(type);
  e.name = std::string(name);
  e.definition = std::string(definition);
  return e;
}

std::string EncodeRelation(const Relation& rel) {
  std::string out;
  out.push_back(kRelationEncodingVersion);
  PutString(&out, rel.name);
  PutString(&out, rel.head_type);
  PutString(&out, rel.tail_type);
  PutString(&out, rel.description);
  return out;
}

absl::StatusOr<Relation> DecodeRelation(std::string_view value, RelationId id) {
  Reader r(value);
  char version = 0;
  std::string_view name, head_type, tail_type, description;
  if (!r.Byte(&version) || version != kRelationEncodingVersion || !r.String(&name) ||
      !r.String(&head_type) || !r.String(&tail_type) || !r.String(&description) || !r.done()) {
    return absl::DataLossError(absl::StrCat("corrupt record of relation ", id));
  }
  Relation rel;
  rel.id = id;
  rel.name = std::string(name);
  rel.head_type = std::string(head_type);
  rel.tail_type = std::string(tail_type);
  rel.description = std::string(description);
  return rel;
}

std::string EncodeCounts(const KgCounts& c) {
  json j;
  j["entities"] = c.entities;
  j["relations"] = c.relations;
  j["triples"] = c.triples;
  j["entities_by_type"] = c.entities_by_type;
  j["triples_by_relation"] = c.triples_by_relation;
  j["triples_by_source"] = c.triples_by_source;
  j["triples_by_license"] = c.triples_by_license;
  return j.dump();
}

absl::StatusOr<KgCounts> DecodeCounts(std::string_view text) {
  json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return absl::DataLossError("corrupt counts metadata");
  try {
    KgCounts c;
    c.entities = j.at("entities").get<int64_t>();
    c.relations = j.at("relations").get<int64_t>();
    c.triples = j.at("triples").get<int64_t>();
    c.entities_by_type = j.at("entities_by_type").get<std::map<std::string, int64_t>>();
    c.triples_by_relation = j.at("triples_by_relation").get<std::map<std::string, int64_t>>();
    // Absent in snapshots written before provenance existed.
    using CountMap = std::map<std::string, int64_t>;
    c.triples_by_source = j.value("triples_by_source", CountMap());
    c.triples_by_license = j.value("triples_by_license", CountMap());
    return c;
  } catch (const std::exception& e) {
    return absl::DataLossError(absl::StrCat("corrupt counts metadata: ", e.what()));
  }
}

std::string EncodeStringList(const std::vector<std::string>& list) { return json(list).dump(); }

std::string EncodeProvenance(const std::vector<std::vector<SourceId>>& groups) {
  return json(groups).dump();
}

absl::StatusOr<std::vector<std::vector<SourceId>>> DecodeProvenance(std::string_view text) {
  // Metadata is untrusted input: every id is range-checked before it narrows to 16 bits.
  auto corrupt = [](absl::string_view why) {
    return absl::DataLossError(absl::StrCat("corrupt metadata 'provenance': ", why));
  };
  json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_array()) return corrupt("not a JSON array");
  if (j.size() > kMaxProvenanceGroups) {
    return corrupt(
        absl::StrCat(j.size(), " groups, more than the limit of ", kMaxProvenanceGroups));
  }
  std::vector<std::vector<SourceId>> groups(j.size());
  for (size_t g = 0; g < j.size(); ++g) {
    const json& group = j[g];
    if (!group.is_array() || group.empty()) {
      return corrupt(absl::StrCat("group ", g, " is not a non-empty array"));
    }
    for (const json& id : group) {
      if (!id.is_number_unsigned() || id.get<uint64_t>() > std::numeric_limits<SourceId>::max()) {
        return corrupt(
            absl::StrCat("group ", g, " names source '", id.dump(), "', not an id in [0, 65535]"));
      }
      groups[g].push_back(static_cast<SourceId>(id.get<uint64_t>()));
    }
  }
  return groups;
}

std::string EncodeAdjacencyValue(ProvenanceId group, float score, std::string_view note) {
  std::string out;
  PutBe16(&out, static_cast<uint16_t>(group));
  if (std::isnan(score) && note.empty()) return out;
  uint32_t bits = 0;
  static_assert(sizeof(bits) == sizeof(score));
  std::memcpy(&bits, &score, sizeof(bits));
  PutBe32(&out, bits);
  out.append(note.data(), note.size());
  return out;
}

absl::StatusOr<AdjacencyValue> DecodeAdjacencyValue(std::string_view value) {
  if (value.size() != 2 && value.size() < 6) {
    return absl::DataLossError(absl::StrCat("corrupt adjacency value of ", value.size(), " bytes"));
  }
  AdjacencyValue v;
  v.group = GetBe16(value.data());
  if (value.size() == 2) return v;
  const uint32_t bits = GetBe32(value.data() + 2);
  std::memcpy(&v.score, &bits, sizeof(bits));
  v.note = value.substr(6);
  return v;
}

absl::StatusOr<std::vector<std::string>> DecodeStringList(std::string_view text) {
  json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_array()) return absl::DataLossError("corrupt string list");
  try {
    return j.get<std::vector<std::string>>();
  } catch (const std::exception& e) {
    return absl::DataLossError(absl::StrCat("corrupt string list: ", e.what()));
  }
}

std::string EncodeTripleLog(const std::vector<Triple>& triples) {
  std::string out;
  out.reserve(triples.size() * 14);
  for (const Triple& t : triples) {
    PutBe32(&out, t.head);
    PutBe32(&out, t.relation);
    PutBe32(&out, t.tail);
    PutBe16(&out, static_cast<uint16_t>(t.provenance));
  }
  return out;
}

absl::StatusOr<std::vector<Triple>> DecodeTripleLog(std::string_view value) {
  if (value.size() % 14 != 0) return absl::DataLossError("corrupt ingest log entry");
  std::vector<Triple> triples(value.size() / 14);
  const char* p = value.data();
  for (Triple& t : triples) {
    t.head = GetBe32(p);
    t.relation = GetBe32(p + 4);
    t.tail = GetBe32(p + 8);
    t.provenance = GetBe16(p + 12);
    p += 14;
  }
  return triples;
}

std::string EncodeIngestMarker(const IngestMarker& m) {
  std::string out;
  out.push_back(kMarkerEncodingVersion);
  PutVarint(&out, static_cast<uint64_t>(m.generation));
  PutVarint(&out, static_cast<uint64_t>(m.entities_added));
  PutVarint(&out, static_cast<uint64_t>(m.entities_updated));
  PutVarint(&out, static_cast<uint64_t>(m.relations_added));
  PutVarint(&out, static_cast<uint64_t>(m.triples_added));
  PutVarint(&out, static_cast<uint64_t>(m.triples_existing));
  PutVarint(&out, m.entity_ids.size());
  for (EntityId id : m.entity_ids) PutVarint(&out, id);
  return out;
}

absl::StatusOr<IngestMarker> DecodeIngestMarker(std::string_view value) {
  Reader r(value);
  IngestMarker m;
  char version = 0;
  uint64_t fields[7];
  bool ok = r.Byte(&version) && version == kMarkerEncodingVersion;
  for (int i = 0; ok && i < 7; ++i) ok = r.Varint(&fields[i]);
  if (ok) {
    m.generation = static_cast<int64_t>(fields[0]);
    m.entities_added = static_cast<int64_t>(fields[1]);
    m.entities_updated = static_cast<int64_t>(fields[2]);
    m.relations_added = static_cast<int64_t>(fields[3]);
    m.triples_added = static_cast<int64_t>(fields[4]);
    m.triples_existing = static_cast<int64_t>(fields[5]);
    ok = fields[6] <= value.size();
    for (uint64_t i = 0; ok && i < fields[6]; ++i) {
      uint64_t id = 0;
      ok = r.Varint(&id) && id < kInvalidEntity;
      m.entity_ids.push_back(static_cast<EntityId>(id));
    }
  }
  if (!ok || !r.done()) return absl::DataLossError("corrupt ingest batch marker");
  return m;
}

std::string EncodeCsrHeader(const CsrHeader& h) {
  json j;
  j["generation"] = h.generation;
  j["num_nodes"] = h.num_nodes;
  j["num_edges"] = h.num_edges;
  j["chunk_bytes"] = h.chunk_bytes;
  return j.dump();
}

absl::StatusOr<CsrHeader> DecodeCsrHeader(std::string_view text) {
  json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return absl::DataLossError("corrupt CSR header");
  try {
    CsrHeader h;
    h.generation = j.at("generation").get<int64_t>();
    h.num_nodes = j.at("num_nodes").get<uint64_t>();
    h.num_edges = j.at("num_edges").get<uint64_t>();
    h.chunk_bytes = j.at("chunk_bytes").get<uint64_t>();
    if (h.generation < 0 || h.chunk_bytes < 8 || h.num_nodes >= kInvalidEntity) {
      return absl::DataLossError("CSR header values out of range");
    }
    return h;
  } catch (const std::exception& e) {
    return absl::DataLossError(absl::StrCat("corrupt CSR header: ", e.what()));
  }
}

std::string CsrGenerationPrefix(int64_t generation) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "g%020lld/", static_cast<long long>(generation));
  return buf;
}

std::string CsrChunkKey(int64_t generation, std::string_view chunk_name) {
  return absl::StrCat(CsrGenerationPrefix(generation), AsAbsl(chunk_name));
}

rocksdb::DBOptions MakeDbOptions() {
  rocksdb::DBOptions db;
  db.max_background_jobs = 2;
  // Ingest memtables are small; bound their total so a serving replica stays within budget.
  db.db_write_buffer_size = size_t{64} << 20;
  db.keep_log_file_num = 3;
  db.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  return db;
}

rocksdb::ColumnFamilyOptions MakeColumnFamilyOptions(int cf,
                                                     const std::shared_ptr<rocksdb::Cache>& cache) {
  rocksdb::ColumnFamilyOptions o;
  o.write_buffer_size = size_t{16} << 20;
  rocksdb::BlockBasedTableOptions t;
  t.block_cache = cache;
  t.cache_index_and_filter_blocks = true;
  t.pin_l0_filter_and_index_blocks_in_cache = true;
  t.format_version = 5;
  switch (cf) {
    case kCfOut:
    case kCfIn:
      // Only scanned (fallback CSR rebuild, audits), never point-read: no filter, bigger
      // blocks, and no compression so an 8M-edge snapshot writes at memory speed.
      t.block_size = 32 << 10;
      o.compression = rocksdb::kNoCompression;
      break;
    case kCfCsr:
      // Values are 16 MB array chunks read once at open, bypassing the cache.
      o.compression = rocksdb::kNoCompression;
      break;
    case kCfIngestLog:
      break;
    default: {
      // Point lookups by id or external id: a whole-key bloom filter saves most disk reads.
      t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
      const auto supported = rocksdb::GetSupportedCompressions();
      o.compression =
          std::find(supported.begin(), supported.end(), rocksdb::kLZ4Compression) != supported.end()
              ? rocksdb::kLZ4Compression
              : rocksdb::kNoCompression;
      break;
    }
  }
  o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
  return o;
}

std::vector<rocksdb::ColumnFamilyDescriptor> MakeColumnFamilyDescriptors(
    const std::shared_ptr<rocksdb::Cache>& cache) {
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  for (int cf = 0; cf < kNumColumnFamilies; ++cf) {
    cfs.emplace_back(ColumnFamilyName(cf), MakeColumnFamilyOptions(cf, cache));
  }
  return cfs;
}

absl::Status WriteCsrSstFile(const rocksdb::Options& options, const std::string& path,
                             const CsrGraph& graph, int64_t generation) {
  CsrHeader header;
  header.generation = generation;
  header.num_nodes = graph.num_nodes();
  header.num_edges = graph.num_edges();
  std::vector<CsrChunk> chunks = graph.Chunks(header.chunk_bytes);
  std::vector<std::pair<std::string, size_t>> keys;  // key -> chunk index; SSTs need sorted keys
  keys.reserve(chunks.size());
  for (size_t i = 0; i < chunks.size(); ++i) {
    keys.emplace_back(CsrChunkKey(generation, chunks[i].name), i);
  }
  std::sort(keys.begin(), keys.end());
  rocksdb::SstFileWriter writer(rocksdb::EnvOptions(), options);
  IBGR_ROCKS_RETURN_IF_ERROR(writer.Open(path), absl::StrCat("create ", path));
  for (const auto& [key, index] : keys) {
    const CsrChunk& c = chunks[index];
    IBGR_ROCKS_RETURN_IF_ERROR(writer.Put(key, rocksdb::Slice(c.data, c.size)),
                               absl::StrCat("write ", path));
  }
  // "header" sorts after every "g..." chunk key.
  IBGR_ROCKS_RETURN_IF_ERROR(writer.Put(std::string(kCsrHeaderKey), EncodeCsrHeader(header)),
                             absl::StrCat("write ", path));
  IBGR_ROCKS_RETURN_IF_ERROR(writer.Finish(), absl::StrCat("finish ", path));
  return absl::OkStatus();
}

absl::Status FromRocks(const rocksdb::Status& s, std::string_view context) {
  if (s.ok()) return absl::OkStatus();
  const std::string msg = absl::StrCat(AsAbsl(context), ": ", s.ToString());
  if (s.IsNotFound()) return absl::NotFoundError(msg);
  if (s.IsCorruption()) return absl::DataLossError(msg);
  if (s.IsInvalidArgument()) return absl::InvalidArgumentError(msg);
  if (s.IsNotSupported()) return absl::UnimplementedError(msg);
  if (s.IsNoSpace() || s.IsMemoryLimit()) return absl::ResourceExhaustedError(msg);
  // EFBIG (a file-size limit or quota) is storage running out as much as ENOSPC is, but RocksDB
  // reports it as a plain IOError.
  if (s.IsIOError() && s.ToString().find("File too large") != std::string::npos) {
    return absl::ResourceExhaustedError(msg);
  }
  if (s.IsBusy() || s.IsTimedOut() || s.IsTryAgain()) return absl::UnavailableError(msg);
  if (s.IsAborted()) return absl::AbortedError(msg);
  // Another process holding the database's LOCK file is an operator problem, not a crash.
  if (s.IsIOError() && s.ToString().find("lock") != std::string::npos) {
    return absl::FailedPreconditionError(msg);
  }
  return absl::InternalError(msg);
}

}  // namespace ibgraphrag::kgstore::internal
