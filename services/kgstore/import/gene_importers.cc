#include "services/kgstore/import/gene_importers.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "services/kgstore/import/hetionet_importer.h"

namespace ibgraphrag::kgstore::import_ {
namespace {

constexpr absl::string_view kCc0 = "CC0";
constexpr absl::string_view kCcBy4 = "CC BY 4.0";

// DOID:4 "disease" and its direct children. DISEASES propagates every association up the DO, so
// edges to these would make each of them a hub linked to almost every disease gene.
bool IsDoUpperLevelClass(absl::string_view doid) {
  static const auto* const kClasses = new absl::flat_hash_set<absl::string_view>{
      "DOID:4",   "DOID:0014667", "DOID:0050117", "DOID:0080015", "DOID:14566",
      "DOID:150", "DOID:225",     "DOID:630",     "DOID:7"};
  return kClasses->contains(doid);
}

// "a|b|c" -> {"a", "b", "c"}; empty input -> {}.
std::vector<absl::string_view> SplitList(absl::string_view list) {
  if (list.empty()) return {};
  return absl::StrSplit(list, '|');
}

std::string GoRelationName(absl::string_view domain) {
  return absl::StrCat("gene participates in ", absl::StrReplaceAll(domain, {{"_", " "}}));
}

// Gene symbol -> gene, for the symbols that name exactly one gene of the builder (a symbol two
// genes share names neither).
absl::flat_hash_map<std::string, EntityId> UniqueGeneSymbols(const KgBuilder& builder) {
  absl::flat_hash_map<std::string, EntityId> genes;
  absl::flat_hash_set<std::string> shared;
  for (size_t i = 0; i < builder.num_entities(); ++i) {
    const Entity& e = builder.entity(static_cast<EntityId>(i));
    if (e.type != "gene" || e.name.empty() || shared.contains(e.name)) continue;
    const auto [it, inserted] = genes.emplace(e.name, static_cast<EntityId>(i));
    if (!inserted) {
      genes.erase(it);
      shared.insert(e.name);
    }
  }
  return genes;
}

}  // namespace

absl::Status ImportHgncGeneFamilies(const std::string& path, KgBuilder& builder,
                                    const ImportOptions& options) {
  constexpr absl::string_view kSource = "hgnc-families";
  const SourceId source = builder.AddSource(BuilderArg(kSource), BuilderArg(kCc0));
  const RelationId relation = AddKnownRelation(builder, "gene belongs to gene family");
  TabularSpec spec;
  spec.source = std::string(kSource);
  spec.min_fields = 6;
  spec.expected_header = {"family_id", "family_name",    "root",
                          "leaf",      "entrez_gene_id", "gene_symbol"};
  spec.comment = 0;
  return ImportTabularFile(
      path, spec, builder, options,
      [&](const std::vector<absl::string_view>& f, RowContext& ctx) -> absl::Status {
        if (!IsDigits(f[0])) return ctx.Malformed("family_id is not a number");
        if (f[1].empty()) return ctx.Malformed("family_name is empty");
        const std::optional<EntityId> gene = GeneFromEntrez(builder, f[4], f[5], kSource);
        if (!gene) return ctx.Malformed("entrez_gene_id is not a number");
        const EntityId family = AddEntityFromSource(builder, absl::StrCat("HGNC_FAMILY:", f[0]),
                                                    "gene_family", f[1], kSource);
        builder.AddTriple(*gene, relation, family, source, kNoTripleScore, {});
        return absl::OkStatus();
      });
}

absl::Status ImportStringGeneMap(const std::string& path, KgBuilder& builder,
                                 const ImportOptions& options) {
  TabularSpec spec;
  spec.source = "diseases-string-map";
  spec.min_fields = 2;
  spec.expected_header = {"Entrez_Gene_ID", "STRING_Locus_ID"};
  spec.comment = 0;
  return ImportTabularFile(
      path, spec, builder, options,
      [&](const std::vector<absl::string_view>& f, RowContext& ctx) -> absl::Status {
        if (!absl::StartsWith(f[1], "9606.ENSP")) {
          return ctx.Malformed("STRING_Locus_ID is not a human 9606.ENSP id");
        }
        if (!IsDigits(f[0])) return ctx.Malformed("Entrez_Gene_ID is not a number");
        const std::optional<EntityId> gene = GeneFromEntrez(builder, f[0], "", "");
        if (!gene) {
          ctx.Unmapped();
          return absl::OkStatus();
        }
        builder.AddAlias(*gene, BuilderArg(absl::StrCat("STRING:", f[1])));
        return absl::OkStatus();
      });
}

absl::Status ImportDiseasesChannel(const std::string& path, absl::string_view channel,
                                   KgBuilder& builder, const ImportOptions& options) {
  const std::string source_name = absl::StrCat("diseases-", channel);
  const SourceId source = builder.AddSource(BuilderArg(source_name), BuilderArg(kCcBy4));
  const RelationId relation = AddKnownRelation(builder, "disease associated with gene");
  TabularSpec spec;
  spec.source = source_name;
  spec.min_fields = 7;
  spec.has_header = false;
  spec.comment = 0;
  // The channels name proteins by STRING ids, some newer than the STRING v9.05 -> Entrez map (12 %
  // of the knowledge rows; PAH's for phenylketonuria among them): such a row's gene symbol still
  // names its gene when exactly one gene carries it.
  const absl::flat_hash_map<std::string, EntityId> symbols = UniqueGeneSymbols(builder);
  return ImportTabularFile(
      path, spec, builder, options,
      [&](const std::vector<absl::string_view>& f, RowContext& ctx) -> absl::Status {
        double confidence = 0;
        // SimpleAtod accepts "nan" and "inf"; they must not become scores.
        if (!absl::SimpleAtod(f[6], &confidence) || !std::isfinite(confidence) || confidence < 0 ||
            confidence > 5) {
          return ctx.Malformed("confidence is not a number in 0..5");
        }
        if (!absl::StartsWith(f[0], "ENSP")) return ctx.Malformed("protein id is not an ENSP id");
        if (confidence < kMinDiseasesConfidence || IsDoUpperLevelClass(f[2])) {
          return absl::OkStatus();
        }
        std::optional<EntityId> gene =
            builder.Resolve(BuilderArg(absl::StrCat("STRING:9606.", f[0])));
        if (!gene) {
          const auto by_symbol = symbols.find(f[1]);
          if (by_symbol != symbols.end()) gene = by_symbol->second;
        }
        const std::optional<EntityId> disease =
            absl::StartsWith(f[2], "DOID:") ? builder.Resolve(BuilderArg(f[2])) : std::nullopt;
        if (!gene || !disease) {
          ctx.Unmapped();
          return absl::OkStatus();
        }
        builder.AddEntitySource(*disease, BuilderArg(source_name));
        builder.AddTriple(*disease, relation, *gene, source, static_cast<float>(confidence / 5),
                          BuilderArg(absl::StrCat(channel, ": ", f[4], " ", f[5])));
        return absl::OkStatus();
      });
}

absl::Status ImportHumanPpi(const std::string& path, KgBuilder& builder,
                            const ImportOptions& options) {
  constexpr absl::string_view kSource = "ppi-hetio-ind";
  const SourceId source = builder.AddSource(BuilderArg(kSource), BuilderArg(kCcBy4));
  const RelationId relation = AddKnownRelation(builder, "gene interacts with gene");
  TabularSpec spec;
  spec.source = std::string(kSource);
  spec.min_fields = 4;
  spec.expected_header = {"gene_0", "gene_1", "sources", "unbiased"};
  spec.comment = 0;
  return ImportTabularFile(
      path, spec, builder, options,
      [&](const std::vector<absl::string_view>& f, RowContext& ctx) -> absl::Status {
        int sources = 0;
        if (!absl::SimpleAtoi(f[2], &sources) || sources < 1) {
          return ctx.Malformed("sources is not a positive count");
        }
        if (!IsDigits(f[0]) || !IsDigits(f[1])) return ctx.Malformed("gene id is not a number");
        const std::optional<EntityId> a = GeneFromEntrez(builder, f[0], "", "");
        const std::optional<EntityId> b = GeneFromEntrez(builder, f[1], "", "");
        if (!a || !b) {
          ctx.Unmapped();
          return absl::OkStatus();
        }
        const float score = static_cast<float>(1.0 - std::ldexp(1.0, -sources));
        builder.AddTriple(
            *a, relation, *b, source, score,
            BuilderArg(absl::StrCat(sources, sources == 1 ? " PPI resource" : " PPI resources",
                                    f[3] == "1" ? ", systematic screen" : "")));
        return absl::OkStatus();
      });
}

absl::Status ImportPathways(const std::string& path, KgBuilder& builder,
                            const ImportOptions& options) {
  constexpr absl::string_view kSource = "pathways";
  const RelationId relation = AddKnownRelation(builder, "gene participates in pathway");
  absl::flat_hash_map<std::string, SourceId> sources;  // "<source>\t<licence>" -> id
  TabularSpec spec;
  spec.source = std::string(kSource);
  spec.min_fields = 8;
  spec.expected_header = {"identifier",     "name",   "url",     "n_genes",
                          "n_coding_genes", "source", "license", "genes"};
  spec.comment = 0;
  return ImportTabularFile(
      path, spec, builder, options,
      [&](const std::vector<absl::string_view>& f, RowContext& ctx) -> absl::Status {
        const std::string id = HetionetCanonicalId(absl::StrCat("Pathway::", f[0]));
        if (f[0].empty() || f[5].empty()) return ctx.Malformed("identifier or source is empty");
        const std::string source_name = absl::StrCat(kSource, "-", f[5]);
        auto [it, inserted] = sources.try_emplace(absl::StrCat(source_name, "\t", f[6]), 0);
        if (inserted) it->second = builder.AddSource(BuilderArg(source_name), BuilderArg(f[6]));
        const EntityId pathway = AddEntityFromSource(builder, id, "pathway", f[1], source_name);
        for (absl::string_view entrez : SplitList(f[7])) {
          const std::optional<EntityId> gene = GeneFromEntrez(builder, entrez, "", "");
          if (!gene) {
            ctx.Unmapped();
            continue;
          }
          builder.AddTriple(*gene, relation, pathway, it->second, kNoTripleScore, {});
        }
        return absl::OkStatus();
      });
}

absl::Status ImportGoAnnotations(const std::string& path, KgBuilder& builder,
                                 const ImportOptions& options) {
  constexpr absl::string_view kSource = "go-annotations";
  const SourceId source = builder.AddSource(BuilderArg(kSource), BuilderArg(kCcBy4));
  TabularSpec spec;
  spec.source = std::string(kSource);
  spec.min_fields = 8;
  spec.expected_header = {"go_id",           "go_name", "go_domain", "tax_id",
                          "annotation_type", "size",    "gene_ids",  "gene_symbols"};
  spec.comment = 0;
  return ImportTabularFile(
      path, spec, builder, options,
      [&](const std::vector<absl::string_view>& f, RowContext& ctx) -> absl::Status {
        if (!absl::StartsWith(f[0], "GO:")) return ctx.Malformed("go_id is not a GO id");
        if (f[2] != "biological_process" && f[2] != "molecular_function" &&
            f[2] != "cellular_component") {
          return ctx.Malformed(absl::StrCat("unknown go_domain '", f[2], "'"));
        }
        const std::vector<absl::string_view> ids = SplitList(f[6]);
        const std::vector<absl::string_view> symbols = SplitList(f[7]);
        if (ids.size() != symbols.size()) {
          return ctx.Malformed("gene_ids and gene_symbols differ in length");
        }
        // The whole row is validated first: a malformed row adds nothing.
        for (absl::string_view id : ids) {
          if (!IsDigits(absl::StripAsciiWhitespace(id))) {
            return ctx.Malformed(absl::StrCat("gene id '", id, "' is not a number"));
          }
        }
        const RelationId relation = AddKnownRelation(builder, GoRelationName(f[2]));
        const EntityId term = AddEntityFromSource(builder, f[0], f[2], f[1], kSource);
        for (size_t i = 0; i < ids.size(); ++i) {
          const std::optional<EntityId> gene = GeneFromEntrez(builder, ids[i], symbols[i], kSource);
          if (!gene) return ctx.Malformed(absl::StrCat("gene id '", ids[i], "' is not a number"));
          builder.AddTriple(*gene, relation, term, source, kNoTripleScore, {});
        }
        return absl::OkStatus();
      });
}

}  // namespace ibgraphrag::kgstore::import_
