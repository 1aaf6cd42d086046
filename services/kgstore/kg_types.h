// Plain data types of the knowledge graph, shared by the importers, the RocksDB store and the
// service layer. No gRPC, no RocksDB here.
#ifndef IBGRAPHRAG_SERVICES_KGSTORE_KG_TYPES_H_
#define IBGRAPHRAG_SERVICES_KGSTORE_KG_TYPES_H_

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace ibgraphrag::kgstore {

// Dense internal ids: entities and relations are numbered 0..N-1 in a snapshot, so adjacency can
// be stored in flat arrays (CSR). External ids ("DOID:9352", "Entrez:1017") are the stable names.
using EntityId = uint32_t;
using RelationId = uint32_t;
using SourceId = uint16_t;
inline constexpr EntityId kInvalidEntity = std::numeric_limits<EntityId>::max();

struct Entity {
  EntityId id = kInvalidEntity;
  // Canonical external id, "<PREFIX>:<local>", e.g. "DOID:9352", "Entrez:1017", "DrugBank:DB00945",
  // "HP:0001945", "MESH:D003920". Unique in a snapshot.
  std::string external_id;
  // Lower-case entity type: disease, gene, compound, phenotype, symptom, anatomy, pathway,
  // biological_process, cellular_component, molecular_function, pharmacologic_class, side_effect, ...
  std::string type;
  std::string name;                   // preferred name
  std::vector<std::string> synonyms;  // other names (exact, related, lay); no duplicates of name
  // Other external ids of the same concept ("UMLS:C0011849", "OMIM:222100", "MESH:D003920"); each
  // resolves to this entity through the store's external-id index.
  std::vector<std::string> xrefs;
  std::string definition;             // free text, may be empty
  std::vector<std::string> sources;   // data sources that mention this entity ("hetionet", "doid")
};

struct Relation {
  RelationId id = 0;
  // Readable relation name used in prompts, e.g. "drug treats disease". Unique in a snapshot.
  std::string name;
  std::string head_type;    // expected head entity type ("compound"); empty when mixed
  std::string tail_type;    // expected tail entity type ("disease")
  std::string description;  // one sentence for prompts, e.g. "the drug is indicated for the disease"
};

// One directed edge. 12 bytes + source; triples of a snapshot are unique on (head, relation, tail).
struct Triple {
  EntityId head = 0;
  RelationId relation = 0;
  EntityId tail = 0;
  SourceId source = 0;  // index into KgData::sources (first source that asserted the triple)
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
  int64_t rows_skipped = 0;    // malformed rows (reported with line numbers in `errors`)
  int64_t unmapped_ids = 0;    // rows whose ids did not resolve to a KG entity
  std::vector<std::string> errors;  // first few "file:line: reason" messages
};

// A whole graph in memory, as produced by importers and consumed by snapshot writers.
struct KgData {
  std::vector<Entity> entities;       // entities[i].id == i
  std::vector<Relation> relations;    // relations[i].id == i
  std::vector<std::string> sources;   // SourceId -> name
  std::vector<Triple> triples;        // sorted by (head, relation, tail), unique
  std::vector<SourceReport> reports;  // one per imported file
};

// Counts used in manifests, Stats and `ibgr kg stats`.
struct KgCounts {
  int64_t entities = 0;
  int64_t relations = 0;
  int64_t triples = 0;
  std::map<std::string, int64_t> entities_by_type;
  std::map<std::string, int64_t> triples_by_relation;  // by relation name
};
KgCounts CountKg(const KgData& kg);

}  // namespace ibgraphrag::kgstore

#endif  // IBGRAPHRAG_SERVICES_KGSTORE_KG_TYPES_H_
