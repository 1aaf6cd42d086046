#include "services/alignment/lexicon.h"

#include <fstream>
#include <memory>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "services/alignment/generic_terms.h"
#include "services/alignment/text_normalize.h"
#include "services/kgstore/import/embedded_kg.h"
#include "services/kgstore/import/line_reader.h"
#include "services/kgstore/kg_store.h"
#include "services/kgstore/snapshot_manifest.h"

namespace ibgraphrag::alignment {
namespace {

LexiconEntry EntryFromEntity(const kgstore::Entity& e) {
  LexiconEntry out;
  out.kg_id = e.id;
  out.external_id = e.external_id;
  out.type = e.type;
  out.name = e.name;
  out.definition = e.definition;
  out.xrefs = e.xrefs;
  for (const std::string& s : e.synonyms) {
    (IsAbbreviationLike(s) ? out.abbreviations : out.synonyms).push_back(s);
  }
  return out;
}

// Relations that link a term to its parent term in an ontology the KG imported (ImportObo's
// is_a_relation: "disease is a subtype of disease", "phenotype is a subtype of phenotype").
bool IsSubtypeRelation(absl::string_view relation_name) {
  return absl::StrContains(relation_name, " is a subtype of ");
}

// Child external ids per parent external id, from an in-memory KG's is_a triples.
OntologyChildrenFn ChildrenInKg(const kgstore::KgData& kg) {
  auto children = std::make_shared<absl::flat_hash_map<std::string, std::vector<std::string>>>();
  for (const kgstore::Triple& t : kg.triples) {
    if (!IsSubtypeRelation(kg.relations[t.relation].name)) continue;
    (*children)[kg.entities[t.tail].external_id].push_back(kg.entities[t.head].external_id);
  }
  return [children](const std::string& parent) {
    auto it = children->find(parent);
    return it == children->end() ? std::vector<std::string>() : it->second;
  };
}

// The same over a KG store: in-edges of the parent along the is_a relations. Errors (a parent
// the store does not know) give no children: the lexicon then simply has fewer generic entries.
OntologyChildrenFn ChildrenInStore(const kgstore::KgStore& store) {
  std::vector<kgstore::RelationId> relations;
  for (const char* name :
       {"disease is a subtype of disease", "phenotype is a subtype of phenotype"}) {
    absl::StatusOr<kgstore::Relation> r = store.FindRelation(name);
    if (r.ok()) relations.push_back(r->id);
  }
  return [&store, relations](const std::string& parent) {
    std::vector<std::string> out;
    absl::StatusOr<kgstore::EntityId> id = store.ResolveExternalId(parent);
    if (relations.empty() || !id.ok()) return out;
    kgstore::NeighborQuery q;
    q.entity = *id;
    q.direction = kgstore::Direction::kIn;
    q.relations = relations;
    q.limit = kgstore::kMaxNeighborLimit;
    std::vector<kgstore::EntityId> ids;
    do {
      absl::StatusOr<kgstore::NeighborPage> page = store.Neighbors(q);
      if (!page.ok()) break;
      for (const kgstore::Triple& t : page->triples) ids.push_back(t.head);
      q.offset = page->next_offset;
    } while (q.offset > 0);
    absl::StatusOr<std::vector<kgstore::Entity>> entities = store.GetEntities(ids);
    if (entities.ok()) {
      for (const kgstore::Entity& e : *entities) out.push_back(e.external_id);
    }
    return out;
  };
}

}  // namespace

std::string LexiconEntry::EnrichedText() const {
  std::string out = name;
  for (const auto* list : {&synonyms, &abbreviations}) {
    for (const std::string& s : *list) absl::StrAppend(&out, "; ", s);
  }
  if (!definition.empty()) absl::StrAppend(&out, ". ", definition);
  return out;
}

std::vector<std::string> LexiconEntry::AllNames() const {
  std::vector<std::string> out;
  out.reserve(1 + synonyms.size() + abbreviations.size());
  out.push_back(name);
  out.insert(out.end(), synonyms.begin(), synonyms.end());
  out.insert(out.end(), abbreviations.begin(), abbreviations.end());
  return out;
}

bool LexiconEntry::HasName(absl::string_view candidate) const {
  if (absl::EqualsIgnoreCase(name, candidate)) return true;
  for (const auto* list : {&synonyms, &abbreviations}) {
    for (const std::string& s : *list) {
      if (absl::EqualsIgnoreCase(s, candidate)) return true;
    }
  }
  return false;
}

Lexicon LexiconFromKg(const kgstore::KgData& kg, const std::string& source) {
  Lexicon lexicon;
  lexicon.source = source;
  lexicon.entries.reserve(kg.entities.size());
  for (const kgstore::Entity& e : kg.entities) lexicon.entries.push_back(EntryFromEntity(e));
  std::string hashes;
  for (const kgstore::SourceReport& r : kg.reports)
    absl::StrAppend(&hashes, r.path, "=", r.sha256, "\n");
  lexicon.source_hash = common::Sha256Hex(hashes);
  lexicon.generic_entries = FindGenericOntologyEntries(lexicon, ChildrenInKg(kg));
  return lexicon;
}

absl::StatusOr<Lexicon> LexiconFromSnapshot(const std::string& snapshot_dir) {
  kgstore::KgStoreOptions options;
  options.snapshot_dir = snapshot_dir;
  options.read_only = true;
  IBGR_ASSIGN_OR_RETURN(std::unique_ptr<kgstore::KgStore> store, kgstore::KgStore::Open(options));
  Lexicon lexicon;
  lexicon.source = absl::StrCat("kg-snapshot:", snapshot_dir);
  lexicon.source_kg_version = absl::StrCat(store->manifest().version);
  lexicon.source_hash = common::Sha256Hex(kgstore::SnapshotManifestToJson(store->manifest()));
  const int64_t n = store->num_entities();
  lexicon.entries.reserve(n);
  constexpr int64_t kChunk = 10000;
  std::vector<kgstore::EntityId> ids;
  for (int64_t start = 0; start < n; start += kChunk) {
    ids.clear();
    for (int64_t i = start; i < std::min(n, start + kChunk); ++i) {
      ids.push_back(static_cast<kgstore::EntityId>(i));
    }
    IBGR_ASSIGN_OR_RETURN(std::vector<kgstore::Entity> entities, store->GetEntities(ids));
    for (const kgstore::Entity& e : entities) lexicon.entries.push_back(EntryFromEntity(e));
  }
  lexicon.generic_entries = FindGenericOntologyEntries(lexicon, ChildrenInStore(*store));
  return lexicon;
}

absl::StatusOr<Lexicon> LexiconFromDataDir(const std::string& data_dir) {
  kgstore::import_::ImportOptions options;
  options.data_dir = data_dir;
  IBGR_ASSIGN_OR_RETURN(kgstore::KgData kg, kgstore::import_::BuildEmbeddedKg(options));
  return LexiconFromKg(kg, absl::StrCat("data-dir:", data_dir));
}

absl::StatusOr<UmlsImportReport> ImportUmlsRrf(const UmlsImportOptions& options, Lexicon* lexicon) {
  using kgstore::import_::LineReader;
  UmlsImportReport report;
  absl::flat_hash_map<std::string, std::vector<size_t>> by_cui;
  for (size_t i = 0; i < lexicon->entries.size(); ++i) {
    const LexiconEntry& e = lexicon->entries[i];
    auto add = [&](absl::string_view id) {
      if (absl::StartsWith(id, "UMLS:")) by_cui[id.substr(5)].push_back(i);
    };
    add(e.external_id);
    for (const std::string& x : e.xrefs) add(x);
  }
  const absl::flat_hash_set<std::string> languages(options.languages.begin(),
                                                   options.languages.end());
  absl::flat_hash_set<std::string> joined;
  const std::string mrconso = absl::StrCat(options.rrf_dir, "/MRCONSO.RRF");
  {
    IBGR_ASSIGN_OR_RETURN(std::unique_ptr<LineReader> reader, LineReader::Open(mrconso));
    absl::string_view line;
    while (reader->Next(&line)) {
      if (line.empty()) continue;
      ++report.mrconso_rows;
      std::vector<absl::string_view> f = absl::StrSplit(line, '|');
      if (f.size() < 15) {
        ++report.rows_skipped;
        continue;
      }
      if (!languages.empty() && !languages.contains(f[1])) continue;
      if (options.skip_suppressed && f.size() > 16 && !f[16].empty() && f[16] != "N") continue;
      auto it = by_cui.find(f[0]);
      if (it == by_cui.end()) continue;
      joined.insert(std::string(f[0]));
      const absl::string_view str = absl::StripAsciiWhitespace(f[14]);
      if (str.empty()) continue;
      for (size_t idx : it->second) {
        LexiconEntry& e = lexicon->entries[idx];
        if (e.HasName(str)) continue;
        if (IsAbbreviationLike(str)) {
          e.abbreviations.emplace_back(str);
          ++report.abbreviations_added;
        } else if (static_cast<int>(e.synonyms.size()) < options.max_synonyms_per_entry) {
          e.synonyms.emplace_back(str);
          ++report.synonyms_added;
        }
      }
    }
    IBGR_RETURN_IF_ERROR(reader->status());
  }
  std::error_code ec;
  const std::string mrdef = absl::StrCat(options.rrf_dir, "/MRDEF.RRF");
  if (std::ifstream(mrdef).good()) {
    IBGR_ASSIGN_OR_RETURN(std::unique_ptr<LineReader> reader, LineReader::Open(mrdef));
    absl::string_view line;
    while (reader->Next(&line)) {
      if (line.empty()) continue;
      ++report.mrdef_rows;
      std::vector<absl::string_view> f = absl::StrSplit(line, '|');
      if (f.size() < 6) {
        ++report.rows_skipped;
        continue;
      }
      if (options.skip_suppressed && f.size() > 6 && !f[6].empty() && f[6] != "N") continue;
      auto it = by_cui.find(f[0]);
      if (it == by_cui.end() || f[5].empty()) continue;
      joined.insert(std::string(f[0]));
      for (size_t idx : it->second) {
        LexiconEntry& e = lexicon->entries[idx];
        if (e.definition.empty()) {
          e.definition = std::string(f[5]);
          ++report.definitions_added;
        } else if (!options.definitions_only_when_missing &&
                   !absl::StrContains(e.definition, f[5])) {
          absl::StrAppend(&e.definition, " ", f[5]);
          ++report.definitions_added;
        }
      }
    }
    IBGR_RETURN_IF_ERROR(reader->status());
  }
  const std::string mrsty = absl::StrCat(options.rrf_dir, "/MRSTY.RRF");
  if (std::ifstream(mrsty).good()) {
    IBGR_ASSIGN_OR_RETURN(std::unique_ptr<LineReader> reader, LineReader::Open(mrsty));
    absl::string_view line;
    while (reader->Next(&line)) {
      if (line.empty()) continue;
      ++report.mrsty_rows;
      std::vector<absl::string_view> f = absl::StrSplit(line, '|');
      if (f.size() < 4) {
        ++report.rows_skipped;
        continue;
      }
      auto it = by_cui.find(f[0]);
      if (it == by_cui.end() || f[3].empty()) continue;
      joined.insert(std::string(f[0]));
      for (size_t idx : it->second) {
        LexiconEntry& e = lexicon->entries[idx];
        if (std::find(e.semantic_types.begin(), e.semantic_types.end(), f[3]) !=
            e.semantic_types.end()) {
          continue;
        }
        e.semantic_types.emplace_back(f[3]);
        ++report.semantic_types_added;
      }
    }
    IBGR_RETURN_IF_ERROR(reader->status());
  }
  report.cuis_joined = static_cast<int64_t>(joined.size());
  absl::StrAppend(&lexicon->source, " + umls:", options.rrf_dir);
  return report;
}

absl::Status WriteLexicon(const Lexicon& lexicon, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return absl::InternalError(absl::StrCat(path, ": cannot open for writing"));
  try {
    nlohmann::json head = {{"source", lexicon.source},
                           {"source_kg_version", lexicon.source_kg_version},
                           {"source_hash", lexicon.source_hash},
                           {"entries", lexicon.entries.size()}};
    out << head.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    for (const LexiconEntry& e : lexicon.entries) {
      nlohmann::json j = {{"id", e.kg_id},     {"x", e.external_id}, {"t", e.type},
                          {"n", e.name},       {"s", e.synonyms},    {"a", e.abbreviations},
                          {"d", e.definition}, {"r", e.xrefs},       {"st", e.semantic_types}};
      out << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    }
    out << nlohmann::json({{"end", lexicon.entries.size()}}).dump() << "\n";
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat(path, ": ", e.what()));
  }
  out.flush();
  if (!out) return absl::InternalError(absl::StrCat(path, ": write failed"));
  return absl::OkStatus();
}

absl::StatusOr<Lexicon> ReadLexicon(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  Lexicon lexicon;
  std::string line;
  int64_t line_no = 0;
  bool ended = false;
  try {
    while (std::getline(in, line)) {
      ++line_no;
      nlohmann::json j = nlohmann::json::parse(line);
      if (line_no == 1) {
        lexicon.source = j.at("source").get<std::string>();
        lexicon.source_kg_version = j.at("source_kg_version").get<std::string>();
        lexicon.source_hash = j.at("source_hash").get<std::string>();
        lexicon.entries.reserve(j.at("entries").get<size_t>());
        continue;
      }
      if (j.contains("end")) {
        if (j.at("end").get<size_t>() != lexicon.entries.size()) {
          return absl::DataLossError(absl::StrCat(path, ":", line_no, ": entry count mismatch"));
        }
        ended = true;
        break;
      }
      LexiconEntry e;
      e.kg_id = j.at("id").get<uint32_t>();
      e.external_id = j.at("x").get<std::string>();
      e.type = j.at("t").get<std::string>();
      e.name = j.at("n").get<std::string>();
      e.synonyms = j.at("s").get<std::vector<std::string>>();
      e.abbreviations = j.at("a").get<std::vector<std::string>>();
      e.definition = j.at("d").get<std::string>();
      e.xrefs = j.at("r").get<std::vector<std::string>>();
      e.semantic_types = j.at("st").get<std::vector<std::string>>();
      lexicon.entries.push_back(std::move(e));
    }
  } catch (const std::exception& e) {
    return absl::DataLossError(absl::StrCat(path, ":", line_no, ": ", e.what()));
  }
  if (!ended) return absl::DataLossError(absl::StrCat(path, ": truncated (no end line)"));
  return lexicon;
}

}  // namespace ibgraphrag::alignment
