#include "services/kgstore/import/hetionet_importer.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"

namespace ibgraphrag::kgstore::import_ {
namespace {

constexpr absl::string_view kSource = "hetionet";

struct MetaedgeName {
  absl::string_view abbreviation;
  absl::string_view relation;
};

constexpr MetaedgeName kMetaedgeNames[] = {
    {"AdG", "anatomy downregulates gene"},
    {"AeG", "anatomy expresses gene"},
    {"AuG", "anatomy upregulates gene"},
    {"CbG", "drug binds gene"},
    {"CcSE", "drug causes side effect"},
    {"CdG", "drug downregulates gene"},
    {"CpD", "drug palliates disease"},
    {"CrC", "drug resembles drug"},
    {"CtD", "drug treats disease"},
    {"CuG", "drug upregulates gene"},
    {"DaG", "disease associated with gene"},
    {"DdG", "disease downregulates gene"},
    {"DlA", "disease localizes to anatomy"},
    {"DpS", "disease presents symptom"},
    {"DrD", "disease resembles disease"},
    {"DuG", "disease upregulates gene"},
    {"GcG", "gene covaries with gene"},
    {"GiG", "gene interacts with gene"},
    {"GpBP", "gene participates in biological process"},
    {"GpCC", "gene participates in cellular component"},
    {"GpMF", "gene participates in molecular function"},
    {"GpPW", "gene participates in pathway"},
    {"Gr>G", "gene regulates gene"},
    {"PCiC", "pharmacologic class includes drug"},
};

struct Metaedge {
  std::string source_kind;
  std::string target_kind;
  RelationId relation = 0;
  SourceId source = 0;  // "hetionet" under this metaedge's licence
};

// The licence of a metaedge's edges. Hetionet is published as CC0, but its compiled edges come
// from resources under their own licences: where one upstream is known it decides (CcSE is
// SIDER 4.1's side effects: CC BY-NC-SA 4.0). Other metaedges mix resources (DaG, GiG, GpPW,
// binding) or come from Hetionet's own work and stay "CC0"; docs/kgstore.md names this caveat.
absl::string_view MetaedgeLicense(absl::string_view abbreviation) {
  if (abbreviation == "CcSE") return "CC BY-NC-SA 4.0";
  return "CC0";
}

// "Compound - treats - Disease" or "Gene > regulates > Gene" -> {source kind, verb, target kind}.
bool SplitMetaedge(absl::string_view metaedge, std::string* source, std::string* verb,
                   std::string* target) {
  for (absl::string_view separator : {" - ", " > "}) {
    std::vector<std::string> parts = absl::StrSplit(metaedge, separator);
    if (parts.size() == 3) {
      *source = parts[0];
      *verb = parts[1];
      *target = parts[2];
      return true;
    }
  }
  return false;
}

// Licence of one resource named in the DaG file's `sources` column, as the file itself gives it
// on single-resource rows; "" (unknown) for DOAF and anything else.
absl::string_view DagResourceLicense(absl::string_view resource) {
  if (resource == "DISEASES" || resource == "GWAS Catalog") return "CC BY 4.0";
  if (resource == "DisGeNET") return "ODbL 1.0";
  return "";
}

}  // namespace

std::string HetionetKindToType(absl::string_view kind) {
  std::string type = absl::AsciiStrToLower(absl::StripAsciiWhitespace(kind));
  absl::StrReplaceAll({{" ", "_"}}, &type);
  return type;
}

absl::string_view HetionetRelationName(absl::string_view abbreviation) {
  for (const MetaedgeName& m : kMetaedgeNames) {
    if (m.abbreviation == abbreviation) return m.relation;
  }
  return "";
}

std::string HetionetCanonicalId(absl::string_view hetionet_id) {
  const size_t separator = hetionet_id.find("::");
  if (separator == absl::string_view::npos) return "";
  const absl::string_view kind = hetionet_id.substr(0, separator);
  const absl::string_view local = hetionet_id.substr(separator + 2);
  if (local.empty()) return "";
  if (kind == "Gene") return absl::StrCat("Entrez:", local);
  if (kind == "Compound") return absl::StrCat("DrugBank:", local);
  if (kind == "Symptom") return absl::StrCat("MESH:", local);
  if (kind == "Side Effect") return absl::StrCat("UMLS:", local);
  if (kind == "Pharmacologic Class") return absl::StrCat("NDFRT:", local);
  if (kind == "Pathway") {
    if (absl::StartsWith(local, "WP")) return absl::StrCat("WikiPathways:", local);
    if (absl::StartsWith(local, "PC")) return absl::StrCat("PathwayCommons:", local);
  }
  // Disease (DOID:), Anatomy (UBERON:) and the GO kinds already carry a prefix.
  if (local.find(':') != absl::string_view::npos) return std::string(local);
  return absl::StrCat(absl::StrReplaceAll(kind, {{" ", ""}}), ":", local);
}

absl::Status ImportHetionetNodes(const std::string& path, KgBuilder& builder,
                                 const ImportOptions& options) {
  TabularSpec spec;
  spec.source = "hetionet-nodes";
  spec.min_fields = 3;
  spec.expected_header = {"id", "name", "kind"};
  spec.comment = 0;
  return ImportTabularFile(
      path, spec, builder, options,
      [&](const std::vector<absl::string_view>& f, RowContext& ctx) -> absl::Status {
        const std::string id = HetionetCanonicalId(f[0]);
        if (id.empty()) return ctx.Malformed("id is not of the form Kind::identifier");
        if (!absl::StartsWith(f[0], absl::StrCat(f[2], "::"))) {
          return ctx.Malformed(absl::StrCat("kind '", f[2], "' does not match id '", f[0], "'"));
        }
        AddEntityFromSource(builder, id, HetionetKindToType(f[2]), f[1], kSource);
        return absl::OkStatus();
      });
}

absl::Status ImportHetionetEdges(const std::string& edges_path, const std::string& metaedges_path,
                                 KgBuilder& builder, const ImportOptions& options) {
  absl::flat_hash_map<std::string, Metaedge> metaedges;
  TabularSpec meta_spec;
  meta_spec.source = "hetionet-metaedges";
  meta_spec.min_fields = 2;
  meta_spec.expected_header = {"metaedge", "abbreviation"};
  meta_spec.comment = 0;
  IBGR_RETURN_IF_ERROR(ImportTabularFile(
      metaedges_path, meta_spec, builder, options,
      [&](const std::vector<absl::string_view>& f, RowContext& ctx) -> absl::Status {
        std::string source_kind, verb, target_kind;
        if (!SplitMetaedge(f[0], &source_kind, &verb, &target_kind)) {
          return ctx.Malformed("metaedge is not 'Source - verb - Target'");
        }
        const std::string head_type = HetionetKindToType(source_kind);
        const std::string tail_type = HetionetKindToType(target_kind);
        std::string name(HetionetRelationName(f[1]));
        // A metaedge newer than v1.0 still gets a readable name from its own words.
        if (name.empty()) {
          name = absl::StrCat(absl::StrReplaceAll(head_type, {{"_", " "}}), " ", verb, " ",
                              absl::StrReplaceAll(tail_type, {{"_", " "}}));
        }
        Metaedge& m = metaedges[std::string(f[1])];
        m.source_kind = source_kind;
        m.target_kind = target_kind;
        m.relation = AddKnownRelation(builder, name, head_type, tail_type);
        m.source = builder.AddSource(BuilderArg(kSource), BuilderArg(MetaedgeLicense(f[1])));
        return absl::OkStatus();
      }));

  TabularSpec spec;
  spec.source = "hetionet-edges";
  spec.min_fields = 3;
  spec.expected_header = {"source", "metaedge", "target"};
  spec.comment = 0;
  return ImportTabularFile(
      edges_path, spec, builder, options,
      [&](const std::vector<absl::string_view>& f, RowContext& ctx) -> absl::Status {
        const auto it = metaedges.find(f[1]);
        if (it == metaedges.end()) {
          return ctx.Malformed(absl::StrCat("unknown metaedge '", f[1], "'"));
        }
        const Metaedge& m = it->second;
        if (!absl::StartsWith(f[0], absl::StrCat(m.source_kind, "::")) ||
            !absl::StartsWith(f[2], absl::StrCat(m.target_kind, "::"))) {
          return ctx.Malformed(absl::StrCat("endpoints do not match metaedge ", f[1], " (",
                                            m.source_kind, " -> ", m.target_kind, ")"));
        }
        const std::optional<EntityId> head = builder.Resolve(BuilderArg(HetionetCanonicalId(f[0])));
        const std::optional<EntityId> tail = builder.Resolve(BuilderArg(HetionetCanonicalId(f[2])));
        if (!head || !tail) {
          ctx.Unmapped();
          return absl::OkStatus();
        }
        builder.AddTriple(*head, m.relation, *tail, m.source);
        return absl::OkStatus();
      });
}

absl::Status ImportHetionetDiseaseGene(const std::string& path, KgBuilder& builder,
                                       const ImportOptions& options) {
  constexpr absl::string_view kDagSource = "hetionet-dag";
  const RelationId relation = AddKnownRelation(builder, "disease associated with gene");
  TabularSpec spec;
  spec.source = std::string(kDagSource);
  spec.min_fields = 4;
  spec.expected_header = {"doid_id", "doid_name", "entrez_gene_id", "gene_symbol"};
  spec.comment = 0;
  return ImportTabularFile(
      path, spec, builder, options,
      [&](const std::vector<absl::string_view>& f, RowContext& ctx) -> absl::Status {
        if (!absl::StartsWith(f[0], "DOID:")) return ctx.Malformed("doid_id is not a DOID");
        if (f[2].empty() || !std::all_of(f[2].begin(), f[2].end(), absl::ascii_isdigit)) {
          return ctx.Malformed("entrez_gene_id is not a number");
        }
        const std::optional<EntityId> disease = builder.Resolve(BuilderArg(f[0]));
        if (!disease) {
          ctx.Unmapped();
          return absl::OkStatus();
        }
        const EntityId gene =
            AddEntityFromSource(builder, absl::StrCat("Entrez:", f[2]), "gene", f[3], kDagSource);
        builder.AddEntitySource(*disease, BuilderArg(kDagSource));
        // The file names a licence per row (CC BY 4.0 for DISEASES, ODbL 1.0 for DisGeNET rows)
        // and leaves it empty where several resources are combined: such a fact is under each
        // resource's licence, so it gets one source per resource. DOAF publishes no licence
        // (stays unknown).
        const absl::string_view license = f.size() > 5 ? f[5] : absl::string_view();
        if (!license.empty() || f.size() < 5 || f[4].empty()) {
          builder.AddTriple(*disease, relation, gene,
                            builder.AddSource(BuilderArg(kDagSource), BuilderArg(license)));
          return absl::OkStatus();
        }
        for (absl::string_view resource : absl::StrSplit(f[4], '|')) {
          builder.AddTriple(
              *disease, relation, gene,
              builder.AddSource(BuilderArg(kDagSource), BuilderArg(DagResourceLicense(resource))));
        }
        return absl::OkStatus();
      });
}

}  // namespace ibgraphrag::kgstore::import_
