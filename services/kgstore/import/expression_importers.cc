#include "services/kgstore/import/expression_importers.h"

#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ibgraphrag::kgstore::import_ {
namespace {

constexpr absl::string_view kBgeeLicense = "CC0";

// What one matrix file means: its source name, first header column, and the relation a cell value
// of 1 and of -1 asserts (nullopt: that value asserts nothing).
struct BgeeMatrixSpec {
  absl::string_view source;
  absl::string_view gene_column;
  std::optional<RelationId> on_plus_one;
  std::optional<RelationId> on_minus_one;
};

// The anatomy entity of each column (nullopt for columns without a known name), from the header.
std::vector<std::optional<EntityId>> AnatomyColumns(const std::vector<absl::string_view>& header,
                                                    const AnatomyNames& names,
                                                    absl::string_view source, KgBuilder& builder,
                                                    std::vector<std::string>* unnamed) {
  std::vector<std::optional<EntityId>> columns(header.size());
  for (size_t i = 1; i < header.size(); ++i) {
    const std::string id(header[i]);
    std::optional<EntityId> anatomy = builder.Resolve(BuilderArg(id));
    if (const auto it = names.find(id); !anatomy && it != names.end()) {
      anatomy = AddEntityFromSource(builder, id, "anatomy", it->second, source);
    }
    if (anatomy) {
      builder.AddEntitySource(*anatomy, BuilderArg(source));
    } else {
      unnamed->push_back(id);
    }
    columns[i] = anatomy;
  }
  return columns;
}

absl::Status ImportBgeeMatrix(const std::string& path, const BgeeMatrixSpec& matrix,
                              const AnatomyNames& names, KgBuilder& builder,
                              const ImportOptions& options) {
  const SourceId source = builder.AddSource(BuilderArg(matrix.source), BuilderArg(kBgeeLicense));
  TabularSpec spec;
  spec.source = std::string(matrix.source);
  spec.min_fields = 2;
  // The header names the columns, so the row callback reads it itself.
  spec.has_header = false;
  spec.comment = 0;
  std::vector<std::optional<EntityId>> columns;
  return ImportTabularFile(
      path, spec, builder, options,
      [&](const std::vector<absl::string_view>& f, RowContext& ctx) -> absl::Status {
        if (columns.empty()) {
          --ctx.report().rows_read;
          if (f[0] != matrix.gene_column) {
            return absl::InvalidArgumentError(absl::StrCat(path, ":", ctx.line_number(),
                                                           ": unexpected header, expected ",
                                                           matrix.gene_column, " first"));
          }
          std::vector<std::string> unnamed;
          columns = AnatomyColumns(f, names, matrix.source, builder, &unnamed);
          if (!unnamed.empty()) {
            ctx.report().errors.push_back(absl::StrCat(
                path, ":", ctx.line_number(), ": ", unnamed.size(),
                " columns without an anatomy name left out: ", absl::StrJoin(unnamed, ",")));
          }
          return absl::OkStatus();
        }
        if (f.size() != columns.size()) {
          return ctx.Malformed(
              absl::StrCat("expected ", columns.size(), " fields, got ", f.size()));
        }
        const std::optional<EntityId> gene = GeneFromEntrez(builder, f[0], "", "");
        if (!gene) {
          ctx.Unmapped();
          return absl::OkStatus();
        }
        for (size_t i = 1; i < f.size(); ++i) {
          if (f[i] != "0" && f[i] != "1" && f[i] != "-1") {
            return ctx.Malformed(absl::StrCat("column ", i + 1, " is not 0, 1 or -1"));
          }
        }
        for (size_t i = 1; i < f.size(); ++i) {
          const std::optional<RelationId>& relation =
              f[i] == "1" ? matrix.on_plus_one
                          : (f[i] == "-1" ? matrix.on_minus_one : std::optional<RelationId>());
          if (relation && columns[i]) {
            builder.AddTriple(*columns[i], *relation, *gene, source, kNoTripleScore, {});
          }
        }
        return absl::OkStatus();
      });
}

}  // namespace

absl::Status ImportUberonTerms(const std::string& path, KgBuilder& builder,
                               const ImportOptions& options, AnatomyNames* names) {
  TabularSpec spec;
  spec.source = "uberon-terms";
  spec.min_fields = 2;
  spec.expected_header = {"uberon_id", "uberon_name"};
  spec.comment = 0;
  return ImportTabularFile(
      path, spec, builder, options,
      [&](const std::vector<absl::string_view>& f, RowContext& ctx) -> absl::Status {
        if (!absl::StartsWith(f[0], "UBERON:")) return ctx.Malformed("uberon_id is not UBERON:");
        if (f[1].empty()) return ctx.Malformed("uberon_name is empty");
        names->emplace(std::string(f[0]), std::string(f[1]));
        return absl::OkStatus();
      });
}

absl::Status ImportBgeePresence(const std::string& path, const AnatomyNames& names,
                                KgBuilder& builder, const ImportOptions& options) {
  BgeeMatrixSpec matrix;
  matrix.source = "bgee-present";
  matrix.gene_column = "entrez_gene_id";
  matrix.on_plus_one = AddKnownRelation(builder, "anatomy expresses gene");
  return ImportBgeeMatrix(path, matrix, names, builder, options);
}

absl::Status ImportBgeeDiffex(const std::string& path, const AnatomyNames& names,
                              KgBuilder& builder, const ImportOptions& options) {
  BgeeMatrixSpec matrix;
  matrix.source = "bgee-diffex";
  matrix.gene_column = "GeneID";
  matrix.on_plus_one = AddKnownRelation(builder, "anatomy upregulates gene");
  matrix.on_minus_one = AddKnownRelation(builder, "anatomy downregulates gene");
  return ImportBgeeMatrix(path, matrix, names, builder, options);
}

}  // namespace ibgraphrag::kgstore::import_
