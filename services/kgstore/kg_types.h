// Plain data types of the knowledge graph, shared by the importers, the RocksDB store and the
// service layer. No gRPC, no RocksDB here.
#ifndef IBGRAPHRAG_SERVICES_KGSTORE_KG_TYPES_H_
#define IBGRAPHRAG_SERVICES_KGSTORE_KG_TYPES_H_

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ibgraphrag::kgstore {

// Dense internal ids: entities and relations are numbered 0..N-1 in a snapshot, so adjacency can
// be stored in flat arrays (CSR). External ids ("DOID:9352", "Entrez:1017") are the stable names.
using EntityId = uint32_t;
using RelationId = uint32_t;
using SourceId = uint16_t;
// A provenance group: one distinct set of sources (KgData::provenance). Few distinct sets exist
// (hundreds), so a triple carries a group id instead of a list; the CSR edge packs it in 16 bits.
using ProvenanceId = uint32_t;
inline constexpr EntityId kInvalidEntity = std::numeric_limits<EntityId>::max();
// "No score" for a triple (scores are source-specific evidence values, e.g. a GWAS p-value mapped
// to a confidence, a DISEASES z-score, an alignment confidence).
inline constexpr float kNoTripleScore = std::numeric_limits<float>::quiet_NaN();
// Notes of one triple from all its sources, joined with "; ", are capped at this many bytes.
inline constexpr size_t kMaxTripleNoteBytes = 200;
// Most provenance groups a snapshot can hold (the CSR edge carries 16 bits of group id).
inline constexpr size_t kMaxProvenanceGroups = 65536;

// A data source and its licence as published ("CC BY 4.0", "CC BY-NC-SA 4.0", "CC0", "ODbL 1.0",
// "HPO license"); an empty licence means unknown. One name may appear with several licences when
// a file carries a licence per row (Hetionet DaG, pathways).
struct SourceInfo {
  std::string name;
  std::string license;
  friend bool operator==(const SourceInfo& a, const SourceInfo& b) {
    return a.name == b.name && a.license == b.license;
  }
};

struct Entity {
  EntityId id = kInvalidEntity;
  // Canonical external id, "<PREFIX>:<local>", e.g. "DOID:9352", "Entrez:1017", "DrugBank:DB00945",
  // "HP:0001945", "MESH:D003920". Unique in a snapshot.
  std::string external_id;
  // Lower-case entity type: disease, gene, compound, phenotype, symptom, anatomy, pathway,
  // biological_process, cellular_component, molecular_function, pharmacologic_class, side_effect,
  // ...
  std::string type;
  std::string name;                   // preferred name
  std::vector<std::string> synonyms;  // other names (exact, related, lay); no duplicates of name
  // Other external ids of the same concept ("UMLS:C0011849", "OMIM:222100", "MESH:D003920"); each
  // resolves to this entity through the store's external-id index.
  std::vector<std::string> xrefs;
  std::string definition;            // free text, may be empty
  std::vector<std::string> sources;  // data sources that mention this entity ("hetionet", "doid")
};

struct Relation {
  RelationId id = 0;
  // Readable relation name used in prompts, e.g. "drug treats disease". Unique in a snapshot.
  std::string name;
  std::string head_type;  // expected head entity type ("compound"); empty when mixed
  std::string tail_type;  // expected tail entity type ("disease")
  std::string
      description;  // one sentence for prompts, e.g. "the drug is indicated for the disease"
};

// One directed edge, 16 bytes; triples of a snapshot are unique on (head, relation, tail).
struct Triple {
  EntityId head = 0;
  RelationId relation = 0;
  EntityId tail = 0;
  ProvenanceId provenance = 0;  // index into KgData::provenance (every source that asserted it)
  friend bool operator==(const Triple& a, const Triple& b) {
    return a.head == b.head && a.relation == b.relation && a.tail == b.tail;
  }
  friend bool operator<(const Triple& a, const Triple& b) {
    if (a.head != b.head) return a.head < b.head;
    if (a.relation != b.relation) return a.relation < b.relation;
    return a.tail < b.tail;
  }
};

// What an import did, per source file: kept rows, skipped rows and ids that could not be mapped.
struct SourceReport {
  std::string source;          // short source name ("hetionet-edges")
  std::string path;            // file read
  std::string sha256;          // hex digest of the file bytes
  int64_t rows_read = 0;       // data rows seen (header excluded)
  int64_t triples_added = 0;   // new unique triples this source contributed
  int64_t triples_merged = 0;  // existing triples (from other sources) this source also asserted
  int64_t rows_skipped = 0;    // malformed rows (reported with line numbers in `errors`)
  int64_t unmapped_ids = 0;    // rows whose ids did not resolve to a KG entity
  std::vector<std::string> errors;  // first few "file:line: reason" messages
};

// A whole graph in memory, as produced by importers and consumed by snapshot writers.
struct KgData {
  std::vector<Entity> entities;     // entities[i].id == i
  std::vector<Relation> relations;  // relations[i].id == i
  std::vector<SourceInfo> sources;  // SourceId -> name and licence
  // ProvenanceId -> sorted distinct SourceIds; every group is non-empty.
  std::vector<std::vector<SourceId>> provenance;
  std::vector<Triple> triples;  // sorted by (head, relation, tail), unique
  // Parallel to `triples` (kNoTripleScore = none); may be shorter (missing = none).
  std::vector<float> triple_scores;
  // (index into `triples`, note) sorted by index; only triples with a note appear.
  std::vector<std::pair<uint32_t, std::string>> triple_notes;
  std::vector<SourceReport> reports;  // one per imported file
  std::string license_filter;         // the licence filter Finish applied ("" = none)
};
// The score of triples[i] (kNoTripleScore when none) and its note ("" when none).
float TripleScoreAt(const KgData& kg, size_t i);
std::string_view TripleNoteAt(const KgData& kg, size_t i);

// Counts used in manifests, Stats and `ibgr kg stats`.
struct KgCounts {
  int64_t entities = 0;
  int64_t relations = 0;
  int64_t triples = 0;
  std::map<std::string, int64_t> entities_by_type;
  std::map<std::string, int64_t> triples_by_relation;  // by relation name
  // A triple counts once per source that asserted it, and once per distinct licence among them.
  std::map<std::string, int64_t> triples_by_source;   // by source name
  std::map<std::string, int64_t> triples_by_license;  // by licence ("unknown" when empty)
};
KgCounts CountKg(const KgData& kg);
// Adds triples_by_source / triples_by_license from per-group triple counts (index = ProvenanceId).
void AddProvenanceCounts(const std::vector<SourceInfo>& sources,
                         const std::vector<std::vector<SourceId>>& provenance,
                         const std::vector<int64_t>& triples_per_group, KgCounts* counts);

}  // namespace ibgraphrag::kgstore

#endif  // IBGRAPHRAG_SERVICES_KGSTORE_KG_TYPES_H_
