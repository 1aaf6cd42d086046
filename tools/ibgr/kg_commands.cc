#include "tools/ibgr/kg_commands.h"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>

#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/grpc_status.h"
#include "common/status_macros.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "ibgraphrag/v1/kgstore.grpc.pb.h"
#include "services/alignment/encoder_trait_mapper.h"
#include "services/kgstore/import/embedded_kg.h"
#include "services/kgstore/import/hetionet_importer.h"
#include "services/kgstore/import/ontology_importers.h"
#include "services/kgstore/import/synthetic_kg.h"
#include "services/kgstore/import/tabular_importers.h"
#include "services/kgstore/kg_builder.h"
#include "services/kgstore/kg_store.h"
#include "tools/ibgr/cli_common.h"

ABSL_FLAG(std::string, data_dir, "", "data directory (default $IBGR_DATA_DIR or ../shared/data)");
ABSL_FLAG(std::string, base, "artifacts", "artifact base directory (snapshots in kg/<version>/)");
ABSL_FLAG(int64_t, kg_version, 0, "snapshot version to write or read (default: next / newest)");
ABSL_FLAG(std::string, snapshot_dir, "", "read exactly this snapshot directory");
ABSL_FLAG(bool, strict, false, "abort on the first malformed source row instead of skipping it");
ABSL_FLAG(bool, if_missing, false, "kg build: do nothing when a snapshot already exists");
ABSL_FLAG(std::string, primekg, "", "kg build: PrimeKG kg.csv to import");
ABSL_FLAG(std::string, hetionet_nodes, "", "kg build: Hetionet nodes TSV");
ABSL_FLAG(std::string, hetionet_edges, "",
          "kg build: Hetionet SIF edges (needs --hetionet_metaedges)");
ABSL_FLAG(std::string, hetionet_metaedges, "", "kg build: Hetionet metaedges TSV");
ABSL_FLAG(std::vector<std::string>, tsv, {}, "kg build: generic head/relation/tail TSV files");
ABSL_FLAG(std::vector<std::string>, obo, {}, "kg build: OBO ontologies (doid or hp by file name)");
ABSL_FLAG(
    std::string, tsv_license, "",
    "kg build: licence of the --tsv files as published (e.g. \"CC BY 4.0\"); empty = unknown");
ABSL_FLAG(std::string, licenses, "",
          "kg build: keep only sources under these licences, ';'-separated and matched whole, "
          "case-insensitive (e.g. \"CC0;CC BY 4.0;ODbL 1.0\"; \"unknown\" = no licence recorded)");
ABSL_FLAG(std::string, exclude_licenses, "",
          "kg build: drop sources whose licence equals, or has a word equal to, one of these "
          "';'-separated patterns (\"NC\" drops CC BY-NC* sources such as SIDER and DrugBank)");
ABSL_FLAG(double, gwas_trait_min_cosine, 0.92,
          "kg build: GWAS free-text traits that match no disease name or synonym map to the "
          "nearest disease name by hash n-gram encoder cosine at or above this; 0 = names only");
ABSL_FLAG(int64_t, synth_entities, 129375, "kg synth: entities");
ABSL_FLAG(int64_t, synth_triples, 8100498, "kg synth: triples");
ABSL_FLAG(uint64_t, synth_seed, 20240131, "kg synth: random seed");
ABSL_FLAG(std::string, tsv_out, "",
          "kg build/synth: also write the triples as TSV (PostgreSQL COPY text format)");
ABSL_FLAG(std::string, entities_tsv_out, "",
          "kg build/synth: also write the entities as TSV (id, external id, type, name)");
ABSL_FLAG(bool, tsv_internal_ids, true,
          "kg build/synth: TSV triples with numeric ids (false: external ids, relation names)");
ABSL_FLAG(bool, write_snapshot, true,
          "kg build/synth: write the snapshot (false: import or generate, print counts and "
          "timings, write only the TSV files; profiling and benchmark fixtures)");
ABSL_FLAG(std::string, target, "", "server address host:port (query commands)");
ABSL_FLAG(int, hops, 2, "kg subgraph: hops");
ABSL_FLAG(int, max_triples, 50, "kg subgraph: triples to print");
ABSL_FLAG(int, max_length, 3, "kg paths: longest path");
ABSL_FLAG(int, max_paths, 5, "kg paths: paths to print");
ABSL_FLAG(std::string, service, "", "health: service name to check (default: the whole server)");

namespace ibgraphrag::cli {
namespace {

namespace pb = ::ibgraphrag::v1;
using kgstore::KgData;
using kgstore::KgStore;

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "error: %s\n", status.ToString().c_str());
  return 1;
}

double SecondsSince(absl::Time start) { return absl::ToDoubleSeconds(absl::Now() - start); }

// Imports the sources named by flags; false when none is named.
absl::StatusOr<bool> ImportExplicitSources(kgstore::KgBuilder& builder,
                                           const kgstore::import_::ImportOptions& options) {
  namespace imp = kgstore::import_;
  bool any = false;
  for (const std::string& path : absl::GetFlag(FLAGS_obo)) {
    any = true;
    const bool hpo = path.find("hp") != std::string::npos && path.find("doid") == std::string::npos;
    absl::Status s = hpo ? imp::ImportHpoObo(path, builder, options)
                         : imp::ImportDiseaseOntologyObo(path, builder, options);
    if (!s.ok()) return s;
  }
  if (!absl::GetFlag(FLAGS_hetionet_nodes).empty()) {
    any = true;
    if (auto s = imp::ImportHetionetNodes(absl::GetFlag(FLAGS_hetionet_nodes), builder, options);
        !s.ok()) {
      return s;
    }
  }
  if (!absl::GetFlag(FLAGS_hetionet_edges).empty()) {
    any = true;
    if (absl::GetFlag(FLAGS_hetionet_metaedges).empty()) {
      return absl::InvalidArgumentError("--hetionet_edges needs --hetionet_metaedges");
    }
    if (auto s =
            imp::ImportHetionetEdges(absl::GetFlag(FLAGS_hetionet_edges),
                                     absl::GetFlag(FLAGS_hetionet_metaedges), builder, options);
        !s.ok()) {
      return s;
    }
  }
  if (!absl::GetFlag(FLAGS_primekg).empty()) {
    any = true;
    if (auto s = imp::ImportPrimeKgCsv(absl::GetFlag(FLAGS_primekg), builder, options); !s.ok()) {
      return s;
    }
  }
  for (const std::string& path : absl::GetFlag(FLAGS_tsv)) {
    any = true;
    if (auto s =
            imp::ImportTsvTriples(path, builder, options, "tsv", absl::GetFlag(FLAGS_tsv_license));
        !s.ok()) {
      return s;
    }
  }
  return any;
}

// The filter named by --licenses / --exclude_licenses. Licence names contain spaces and commas
// are rare in them, but ';' keeps "CC BY 4.0" whole without shell gymnastics.
kgstore::LicenseFilter LicenseFilterFromFlags() {
  kgstore::LicenseFilter filter;
  auto split = [](const std::string& flag) {
    std::vector<std::string> out;
    for (absl::string_view part : absl::StrSplit(flag, ';', absl::SkipWhitespace())) {
      out.emplace_back(absl::StripAsciiWhitespace(part));
    }
    return out;
  };
  filter.allow = split(absl::GetFlag(FLAGS_licenses));
  filter.exclude = split(absl::GetFlag(FLAGS_exclude_licenses));
  return filter;
}

void PrintCountMap(const char* title, const google::protobuf::Map<std::string, uint64_t>& counts) {
  if (counts.empty()) return;
  std::printf("\n%s:\n", title);
  std::vector<std::pair<uint64_t, std::string>> rows;
  for (const auto& [name, n] : counts) rows.emplace_back(n, name);
  std::sort(rows.rbegin(), rows.rend());
  for (const auto& [n, name] : rows) {
    std::printf("  %-48s %10llu\n", name.c_str(), static_cast<unsigned long long>(n));
  }
}

// Triples by source and by licence of a freshly built graph (a triple counts once per source).
void PrintProvenanceSummary(const KgData& kg) {
  const kgstore::KgCounts counts = kgstore::CountKg(kg);
  std::printf("triples by source:\n");
  for (const auto& [name, n] : counts.triples_by_source) {
    std::printf("  %-36s %10lld\n", name.c_str(), static_cast<long long>(n));
  }
  std::printf("triples by licence:\n");
  for (const auto& [license, n] : counts.triples_by_license) {
    std::printf("  %-36s %10lld\n", license.c_str(), static_cast<long long>(n));
  }
  std::printf("provenance groups (distinct source sets): %zu of at most %zu\n",
              kg.provenance.size(), kgstore::kMaxProvenanceGroups);
  if (!kg.license_filter.empty()) std::printf("licence filter: %s\n", kg.license_filter.c_str());
}

// Writes the TSV files asked for by --tsv_out / --entities_tsv_out.
absl::Status WriteTsvFiles(const KgData& kg) {
  kgstore::import_::TsvWriteOptions tsv;
  tsv.internal_ids = absl::GetFlag(FLAGS_tsv_internal_ids);
  if (const std::string path = absl::GetFlag(FLAGS_tsv_out); !path.empty()) {
    const absl::Time start = absl::Now();
    if (auto s = kgstore::import_::WriteTriplesTsv(kg, path, tsv); !s.ok()) return s;
    std::printf("tsv: %s (written in %.1f s)\n", path.c_str(), SecondsSince(start));
  }
  if (const std::string path = absl::GetFlag(FLAGS_entities_tsv_out); !path.empty()) {
    if (auto s = kgstore::import_::WriteEntitiesTsv(kg, path, tsv); !s.ok()) return s;
    std::printf("entities tsv: %s\n", path.c_str());
  }
  return absl::OkStatus();
}

// Writes `kg` as the next (or --kg_version) snapshot under --base and prints where.
int WriteSnapshot(const KgData& kg, const std::string& created_by) {
  const std::string base = absl::GetFlag(FLAGS_base);
  int64_t version = absl::GetFlag(FLAGS_kg_version);
  if (version <= 0) {
    auto next = kgstore::NextSnapshotVersion(base);
    if (!next.ok()) return Fail(next.status());
    version = *next;
  }
  kgstore::SnapshotManifestInfo info;
  info.version = version;
  info.created_by = created_by;
  const std::string dir = kgstore::SnapshotDir(base, version);
  const absl::Time start = absl::Now();
  if (absl::Status s = KgStore::WriteSnapshot(kg, info, dir); !s.ok()) return Fail(s);
  std::printf("snapshot: %s (written in %.1f s)\n", dir.c_str(), SecondsSince(start));
  return 0;
}

// What kg build and kg synth do with the graph they made: TSV files, then the snapshot.
int WriteOutputs(const KgData& kg, const std::string& created_by) {
  if (absl::Status s = WriteTsvFiles(kg); !s.ok()) return Fail(s);
  if (!absl::GetFlag(FLAGS_write_snapshot)) {
    std::printf("snapshot: not written (--nowrite_snapshot)\n");
    return 0;
  }
  return WriteSnapshot(kg, created_by);
}

// The embedded build's GWAS trait mapper: names first, then the hash n-gram encoder (no weights,
// deterministic) over the disease names, so the default KG does not depend on a trained model.
kgstore::import_::TraitMapperFactory EncoderTraitMapperFactory(float min_cosine) {
  return [min_cosine](const kgstore::KgBuilder& builder)
             -> absl::StatusOr<std::unique_ptr<kgstore::import_::TraitMapper>> {
    IBGR_ASSIGN_OR_RETURN(
        std::unique_ptr<alignment::HashNgramEncoder> encoder,
        alignment::HashNgramEncoder::Create(alignment::HashNgramEncoderOptions()));
    alignment::EncoderTraitMapperOptions options;
    options.min_cosine = min_cosine;
    IBGR_ASSIGN_OR_RETURN(
        std::unique_ptr<alignment::EncoderTraitMapper> mapper,
        alignment::EncoderTraitMapper::Create(builder, std::move(encoder), options));
    return std::unique_ptr<kgstore::import_::TraitMapper>(std::move(mapper));
  };
}

}  // namespace

int KgBuild(const std::vector<std::string>& args) {
  if (!args.empty()) {
    std::fprintf(stderr, "ibgr kg build takes flags only (see --help)\n");
    return 2;
  }
  if (absl::GetFlag(FLAGS_if_missing)) {
    auto versions = kgstore::ListSnapshotVersions(absl::GetFlag(FLAGS_base));
    if (versions.ok() && !versions->empty()) {
      std::printf("snapshot exists: %s (--if_missing: nothing to do)\n",
                  kgstore::SnapshotDir(absl::GetFlag(FLAGS_base), versions->back()).c_str());
      return 0;
    }
  }
  kgstore::import_::ImportOptions options;
  options.data_dir =
      absl::GetFlag(FLAGS_data_dir).empty() ? DefaultDataDir() : absl::GetFlag(FLAGS_data_dir);
  options.strict = absl::GetFlag(FLAGS_strict);
  options.license_filter = LicenseFilterFromFlags();
  const double min_cosine = absl::GetFlag(FLAGS_gwas_trait_min_cosine);
  if (!(min_cosine >= 0 && min_cosine <= 1)) {  // NaN fails too
    return Fail(absl::InvalidArgumentError(absl::StrCat("--gwas_trait_min_cosine=", min_cosine,
                                                        " is outside [0, 1] (0 = names only)")));
  }
  if (min_cosine > 0) {
    options.trait_mapper_factory = EncoderTraitMapperFactory(static_cast<float>(min_cosine));
  }
  const absl::Time start = absl::Now();
  kgstore::KgBuilder builder;
  auto explicit_sources = ImportExplicitSources(builder, options);
  if (!explicit_sources.ok()) return Fail(explicit_sources.status());
  KgData kg;
  std::string created_by;
  if (*explicit_sources) {
    kg = builder.Finish(options.license_filter);
    created_by = "ibgr kg build (explicit sources)";
  } else {
    std::printf("building the embedded default KG from %s\n", options.data_dir.c_str());
    kgstore::import_::GwasTraitCounts gwas_counts;
    auto built = kgstore::import_::BuildEmbeddedKg(options, &gwas_counts);
    if (!built.ok()) return Fail(built.status());
    kg = *std::move(built);
    std::printf("%s", kgstore::import_::FormatGwasTraitCounts(gwas_counts).c_str());
    created_by = "ibgr kg build (embedded default from " + options.data_dir + ")";
  }
  if (!kg.license_filter.empty()) {
    std::printf("licence filter %s applied: %zu triples kept\n", kg.license_filter.c_str(),
                kg.triples.size());
  }
  std::printf("imported in %.1f s\n%s", SecondsSince(start),
              kgstore::import_::FormatKgSummary(kg).c_str());
  PrintProvenanceSummary(kg);
  const int rc = WriteOutputs(kg, created_by);
  if (rc == 0) std::printf("total %.1f s\n", SecondsSince(start));
  return rc;
}

int KgSynth(const std::vector<std::string>&) {
  kgstore::import_::SyntheticKgOptions options;
  options.num_entities = absl::GetFlag(FLAGS_synth_entities);
  options.num_triples = absl::GetFlag(FLAGS_synth_triples);
  options.seed = absl::GetFlag(FLAGS_synth_seed);
  const absl::Time start = absl::Now();
  KgData kg = kgstore::import_::GenerateSyntheticPrimeKg(options);
  std::printf("generated %zu entities, %zu triples in %.1f s\n", kg.entities.size(),
              kg.triples.size(), SecondsSince(start));
  return WriteOutputs(kg, "ibgr kg synth");
}

int KgStats(const std::vector<std::string>&) {
  pb::StatsResponse stats;
  if (!absl::GetFlag(FLAGS_target).empty()) {
    auto channel = ChannelTo(absl::GetFlag(FLAGS_target));
    if (!channel.ok()) return Fail(channel.status());
    auto stub = pb::KgStoreService::NewStub(*channel);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::Status s = stub->Stats(&ctx, pb::StatsRequest(), &stats);
    if (!s.ok()) return Fail(common::FromGrpcStatus(s));
  } else {
    std::string dir = absl::GetFlag(FLAGS_snapshot_dir);
    if (dir.empty()) {
      std::optional<int64_t> pinned;
      if (absl::GetFlag(FLAGS_kg_version) > 0) pinned = absl::GetFlag(FLAGS_kg_version);
      auto resolved = kgstore::ResolveSnapshotDir(absl::GetFlag(FLAGS_base), pinned);
      if (!resolved.ok()) return Fail(resolved.status());
      dir = *resolved;
    }
    kgstore::KgStoreOptions options;
    options.snapshot_dir = dir;
    options.read_only = true;
    auto store = KgStore::Open(options);
    if (!store.ok()) return Fail(store.status());
    const kgstore::KgCounts counts = (*store)->counts();
    stats.set_kg_version(absl::StrCat((*store)->manifest().version));
    stats.set_entities(counts.entities);
    stats.set_relations(counts.relations);
    stats.set_triples(counts.triples);
    for (const auto& [k, v] : counts.entities_by_type) (*stats.mutable_entities_by_type())[k] = v;
    for (const auto& [k, v] : counts.triples_by_relation) {
      (*stats.mutable_triples_by_relation())[k] = v;
    }
    for (const auto& s : (*store)->manifest().sources) {
      auto* p = stats.add_sources();
      p->set_name(s.source);
      p->set_rows_read(s.rows_read);
      p->set_rows_skipped(s.rows_skipped);
      p->set_unmapped_ids(s.unmapped_ids);
      p->set_triples_added(s.triples_added);
      p->set_triples_merged(s.triples_merged);
    }
    for (const auto& [k, v] : counts.triples_by_source) (*stats.mutable_triples_by_source())[k] = v;
    for (const auto& [k, v] : counts.triples_by_license) {
      (*stats.mutable_triples_by_license())[k] = v;
    }
    for (const kgstore::SourceInfo& s : (*store)->sources()) {
      pb::SourceRef* ref = stats.add_source_refs();
      ref->set_name(s.name);
      ref->set_license(s.license);
    }
    stats.set_license_filter((*store)->manifest().license_filter);
    std::printf("snapshot %s opened in %.2f s\n", dir.c_str(), (*store)->stats().open_seconds);
  }
  std::printf("kg version %s: %llu entities, %llu relations, %llu triples\n",
              stats.kg_version().c_str(), static_cast<unsigned long long>(stats.entities()),
              static_cast<unsigned long long>(stats.relations()),
              static_cast<unsigned long long>(stats.triples()));
  std::printf("\nentities by type:\n");
  for (const auto& [type, n] : stats.entities_by_type()) {
    std::printf("  %-28s %10llu\n", type.c_str(), static_cast<unsigned long long>(n));
  }
  std::printf("\ntriples by relation:\n");
  std::vector<std::pair<uint64_t, std::string>> relations;
  for (const auto& [name, n] : stats.triples_by_relation()) relations.emplace_back(n, name);
  std::sort(relations.rbegin(), relations.rend());
  for (const auto& [n, name] : relations) {
    std::printf("  %-48s %10llu\n", name.c_str(), static_cast<unsigned long long>(n));
  }
  if (stats.sources_size() > 0) {
    std::printf("\nsource files (rows read / skipped / unmapped ids / triples added / merged):\n");
    for (const auto& s : stats.sources()) {
      std::printf("  %-36s %9llu %7llu %7llu %9llu %9llu\n", s.name().c_str(),
                  static_cast<unsigned long long>(s.rows_read()),
                  static_cast<unsigned long long>(s.rows_skipped()),
                  static_cast<unsigned long long>(s.unmapped_ids()),
                  static_cast<unsigned long long>(s.triples_added()),
                  static_cast<unsigned long long>(s.triples_merged()));
    }
  }
  PrintCountMap("triples by source (a triple counts once per source)", stats.triples_by_source());
  PrintCountMap("triples by licence (once per distinct licence)", stats.triples_by_license());
  if (stats.source_refs_size() > 0) {
    std::printf("\nsources and licences:\n");
    for (const auto& s : stats.source_refs()) {
      std::printf("  %-36s %s\n", s.name().c_str(),
                  s.license().empty() ? "(unknown)" : s.license().c_str());
    }
  }
  if (!stats.license_filter().empty()) {
    std::printf("\nbuilt with licence filter: %s\n", stats.license_filter().c_str());
  }
  return 0;
}

namespace {

absl::StatusOr<std::unique_ptr<pb::KgStoreService::Stub>> KgStub() {
  if (absl::GetFlag(FLAGS_target).empty()) {
    return absl::InvalidArgumentError("--target: required (kgstore address, e.g. 127.0.0.1:50052)");
  }
  auto channel = ChannelTo(absl::GetFlag(FLAGS_target));
  if (!channel.ok()) return channel.status();
  return pb::KgStoreService::NewStub(*channel);
}

std::string EntityLabel(const google::protobuf::RepeatedPtrField<pb::EntityRef>& entities,
                        uint32_t id) {
  for (const auto& e : entities) {
    if (e.id() == id) return absl::StrCat(e.name(), " [", e.external_id(), "]");
  }
  return absl::StrCat("#", id);
}

std::string RelationName(const google::protobuf::RepeatedPtrField<pb::Relation>& relations,
                         uint32_t id) {
  for (const auto& r : relations) {
    if (r.id() == id) return r.name();
  }
  return absl::StrCat("relation#", id);
}

// "hetionet, disgenet" for triple i of a response asked with include_sources.
std::string SourceList(const pb::ExtractSubgraphResponse& response, int i) {
  const auto& t = response.triples();
  if (i >= t.provenance_size() || t.provenance(i) >= response.provenance_size()) return "";
  std::vector<std::string> names;
  for (uint32_t s : response.provenance(t.provenance(i)).sources()) {
    if (s < static_cast<uint32_t>(response.sources_size())) names.push_back(response.sources(s));
  }
  return absl::StrJoin(names, ", ");
}

}  // namespace

int KgSubgraph(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::fprintf(stderr, "usage: ibgr kg subgraph --target=HOST:PORT EXTERNAL_ID...\n");
    return 2;
  }
  auto stub = KgStub();
  if (!stub.ok()) return Fail(stub.status());
  pb::ExtractSubgraphRequest request;
  for (const auto& id : args) request.add_seed_external_ids(id);
  request.set_max_hops(absl::GetFlag(FLAGS_hops));
  request.set_max_triples(absl::GetFlag(FLAGS_max_triples));
  request.set_entity_detail(pb::ENTITY_DETAIL_REFS);
  request.set_include_sources(true);
  pb::ExtractSubgraphResponse response;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::Status s = (*stub)->ExtractSubgraph(&ctx, request, &response);
  if (!s.ok()) return Fail(common::FromGrpcStatus(s));
  const auto& t = response.triples();
  for (int i = 0; i < t.head_size(); ++i) {
    std::printf("hop %u  %s  -[%s]->  %s  (%s)\n", t.hop(i),
                EntityLabel(response.entities(), t.head(i)).c_str(),
                RelationName(response.relations(), t.relation(i)).c_str(),
                EntityLabel(response.entities(), t.tail(i)).c_str(),
                SourceList(response, i).c_str());
  }
  std::printf("%d triples, %d entities%s (kg version %s)\n", t.head_size(),
              response.entities_size(), response.truncated() ? ", truncated" : "",
              response.kg_version().c_str());
  return 0;
}

int KgPaths(const std::vector<std::string>& args) {
  if (args.size() != 2) {
    std::fprintf(stderr, "usage: ibgr kg paths --target=HOST:PORT FROM_ID TO_ID\n");
    return 2;
  }
  auto stub = KgStub();
  if (!stub.ok()) return Fail(stub.status());
  pb::ShortestPathsRequest request;
  request.add_source_external_ids(args[0]);
  request.add_target_external_ids(args[1]);
  request.set_max_length(absl::GetFlag(FLAGS_max_length));
  request.set_max_paths(absl::GetFlag(FLAGS_max_paths));
  pb::ShortestPathsResponse response;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::Status s = (*stub)->ShortestPaths(&ctx, request, &response);
  if (!s.ok()) return Fail(common::FromGrpcStatus(s));
  for (const auto& path : response.paths()) {
    std::string line;
    for (int i = 0; i < path.steps_size(); ++i) {
      const auto& step = path.steps(i);
      const uint32_t from = step.reversed() ? step.tail() : step.head();
      const uint32_t to = step.reversed() ? step.head() : step.tail();
      if (i == 0) line = EntityLabel(response.entities(), from);
      absl::StrAppend(&line, step.reversed() ? " <-[" : " -[",
                      RelationName(response.relations(), step.relation()),
                      step.reversed() ? "]- " : "]-> ", EntityLabel(response.entities(), to));
    }
    std::printf("%s\n", line.c_str());
  }
  std::printf("%d path(s)%s\n", response.paths_size(),
              response.truncated() ? " (search capped)" : "");
  return 0;
}

int Health(const std::vector<std::string>&) {
  if (absl::GetFlag(FLAGS_target).empty()) {
    std::fprintf(stderr, "usage: ibgr health --target=HOST:PORT [--service=NAME]\n");
    return 2;
  }
  auto channel = ChannelTo(absl::GetFlag(FLAGS_target));
  if (!channel.ok()) return Fail(channel.status());
  auto stub = grpc::health::v1::Health::NewStub(*channel);
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(absl::GetFlag(FLAGS_service));
  grpc::health::v1::HealthCheckResponse response;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(3));
  grpc::Status s = stub->Check(&ctx, request, &response);
  if (!s.ok()) return Fail(common::FromGrpcStatus(s));
  std::printf("%s\n",
              grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status()).c_str());
  return response.status() == grpc::health::v1::HealthCheckResponse::SERVING ? 0 : 1;
}

}  // namespace ibgraphrag::cli
