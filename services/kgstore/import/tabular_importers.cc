#include "services/kgstore/import/tabular_importers.h"

#include <array>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"

namespace ibgraphrag::kgstore::import_ {
namespace {

constexpr PrimeKgRelation kPrimeKgRelations[] = {
    {"protein_protein", "ppi", "gene interacts with gene", "gene", "gene"},
    {"drug_protein", "target", "drug targets gene", "compound", "gene"},
    {"drug_protein", "carrier", "drug has carrier gene", "compound", "gene"},
    {"drug_protein", "enzyme", "drug is metabolized by gene", "compound", "gene"},
    {"drug_protein", "transporter", "drug is transported by gene", "compound", "gene"},
    {"contraindication", "contraindication", "drug contraindicated for disease", "compound",
     "disease"},
    {"indication", "indication", "drug treats disease", "compound", "disease"},
    {"off-label use", "off-label use", "drug used off-label for disease", "compound", "disease"},
    {"drug_drug", "synergistic interaction", "drug interacts with drug", "compound", "compound"},
    {"drug_effect", "side effect", "drug causes side effect", "compound", "phenotype"},
    {"disease_protein", "associated with", "disease associated with gene", "disease", "gene"},
    {"disease_disease", "parent-child", "disease parent or child of disease", "disease", "disease"},
    {"disease_phenotype_positive", "phenotype present", "disease has phenotype", "disease",
     "phenotype"},
    {"disease_phenotype_negative", "phenotype absent", "disease does not have phenotype", "disease",
     "phenotype"},
    {"bioprocess_protein", "interacts with", "gene participates in biological process", "gene",
     "biological_process"},
    {"molfunc_protein", "interacts with", "gene participates in molecular function", "gene",
     "molecular_function"},
    {"cellcomp_protein", "interacts with", "gene participates in cellular component", "gene",
     "cellular_component"},
    {"pathway_protein", "interacts with", "gene participates in pathway", "gene", "pathway"},
    {"anatomy_protein_present", "expression present", "anatomy expresses gene", "anatomy", "gene"},
    {"anatomy_protein_absent", "expression absent", "anatomy does not express gene", "anatomy",
     "gene"},
    {"phenotype_protein", "associated with", "gene associated with phenotype", "gene", "phenotype"},
    {"bioprocess_bioprocess", "parent-child",
     "biological process parent or child of biological process", "biological_process",
     "biological_process"},
    {"molfunc_molfunc", "parent-child", "molecular function parent or child of molecular function",
     "molecular_function", "molecular_function"},
    {"cellcomp_cellcomp", "parent-child",
     "cellular component parent or child of cellular component", "cellular_component",
     "cellular_component"},
    {"phenotype_phenotype", "parent-child", "phenotype parent or child of phenotype", "phenotype",
     "phenotype"},
    {"anatomy_anatomy", "parent-child", "anatomy parent or child of anatomy", "anatomy", "anatomy"},
    {"pathway_pathway", "parent-child", "pathway parent or child of pathway", "pathway", "pathway"},
    {"exposure_exposure", "parent-child", "exposure parent or child of exposure", "exposure",
     "exposure"},
    {"exposure_disease", "linked to", "exposure linked to disease", "exposure", "disease"},
    {"exposure_bioprocess", "interacts with", "exposure linked to biological process", "exposure",
     "biological_process"},
    {"exposure_protein", "interacts with", "exposure linked to gene", "exposure", "gene"},
    {"exposure_molfunc", "interacts with", "exposure linked to molecular function", "exposure",
     "molecular_function"},
    {"exposure_cellcomp", "interacts with", "exposure linked to cellular component", "exposure",
     "cellular_component"},
};

std::optional<size_t> ColumnIndex(const std::vector<absl::string_view>& header,
                                  std::initializer_list<absl::string_view> names) {
  for (size_t i = 0; i < header.size(); ++i) {
    for (absl::string_view name : names) {
      if (absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(header[i]), name)) return i;
    }
  }
  return std::nullopt;
}

}  // namespace

const PrimeKgRelation* FindPrimeKgRelation(absl::string_view relation,
                                           absl::string_view display_relation) {
  const PrimeKgRelation* first = nullptr;
  for (const PrimeKgRelation& r : kPrimeKgRelations) {
    if (r.relation != relation) continue;
    if (r.display_relation == display_relation) return &r;
    if (first == nullptr) first = &r;
  }
  // drug_protein is the only relation with several display names; other display spellings of a
  // known relation keep its canonical name.
  if (relation == "drug_protein") return nullptr;
  return first;
}

std::string PrimeKgEntityType(absl::string_view node_type) {
  if (node_type == "gene/protein") return "gene";
  if (node_type == "drug") return "compound";
  if (node_type == "effect/phenotype") return "phenotype";
  std::string type = absl::AsciiStrToLower(absl::StripAsciiWhitespace(node_type));
  absl::StrReplaceAll({{" ", "_"}, {"/", "_"}, {"-", "_"}}, &type);
  return type;
}

std::string PrimeKgExternalId(absl::string_view id, absl::string_view source) {
  id = absl::StripAsciiWhitespace(id);
  if (source == "NCBI") return absl::StrCat("Entrez:", id);
  if (source == "DrugBank") return absl::StrCat("DrugBank:", id);
  if (source == "CTD") return absl::StrCat("MESH:", id);
  if (source == "REACTOME") return absl::StrCat("REACTOME:", id);
  absl::string_view prefix = source == "HPO" ? "HP" : source;
  if (source == "MONDO" || source == "HPO" || source == "GO" || source == "UBERON") {
    // Already prefixed ids ("HP:0001945") are kept; bare numbers get their padding back.
    if (absl::StrContains(id, ':')) return std::string(id);
    return PadOntologyId(prefix, id, 7);
  }
  return absl::StrCat(source, ":", id);
}

absl::Status ImportPrimeKgCsv(const std::string& path, KgBuilder& builder,
                              const ImportOptions& options) {
  constexpr absl::string_view kSource = "primekg";
  const SourceId source = builder.AddSource(BuilderArg(kSource));
  absl::flat_hash_map<const PrimeKgRelation*, RelationId> relation_ids;
  TabularSpec spec;
  spec.source = std::string(kSource);
  spec.min_fields = 12;
  spec.expected_header = {"relation", "display_relation", "x_index",  "x_id",
                          "x_type",   "x_name",           "x_source", "y_index",
                          "y_id",     "y_type",           "y_name",   "y_source"};
  spec.csv = true;
  spec.comment = 0;
  std::string x_type, y_type;
  // PrimeKG repeats each node on thousands of rows: remember the ids this import already made
  // so repeats skip id normalisation, the builder's merge logic and the source tag.
  absl::flat_hash_map<std::string, EntityId> seen;
  std::string key;
  auto entity = [&](absl::string_view id, absl::string_view id_source, const std::string& type,
                    absl::string_view name) {
    key.assign(id_source.data(), id_source.size());
    key.push_back('\t');
    key.append(id.data(), id.size());
    if (const auto it = seen.find(key); it != seen.end()) return it->second;
    const EntityId e =
        AddEntityFromSource(builder, PrimeKgExternalId(id, id_source), type, name, kSource);
    seen.emplace(key, e);
    return e;
  };
  return ImportTabularFile(
      path, spec, builder, options,
      [&](const std::vector<absl::string_view>& f, RowContext& ctx) -> absl::Status {
        const PrimeKgRelation* relation = FindPrimeKgRelation(f[0], f[1]);
        if (relation == nullptr) {
          return ctx.Malformed(absl::StrCat("unknown relation '", f[0], "'/'", f[1], "'"));
        }
        if (f[3].empty() || f[8].empty() || f[6].empty() || f[11].empty()) {
          return ctx.Malformed("empty x_id/y_id or x_source/y_source");
        }
        x_type = PrimeKgEntityType(f[4]);
        y_type = PrimeKgEntityType(f[9]);
        bool swap = false;
        if (x_type == relation->head_type && y_type == relation->tail_type) {
          swap = false;
        } else if (x_type == relation->tail_type && y_type == relation->head_type) {
          swap = true;
        } else {
          return ctx.Malformed(
              absl::StrCat("types ", f[4], " -> ", f[9], " do not fit relation ", f[0]));
        }
        const EntityId x = entity(f[3], f[6], x_type, f[5]);
        const EntityId y = entity(f[8], f[11], y_type, f[10]);
        auto [it, inserted] = relation_ids.try_emplace(relation, 0);
        if (inserted) {
          it->second =
              AddKnownRelation(builder, relation->name, relation->head_type, relation->tail_type);
        }
        if (swap) {
          builder.AddTriple(y, it->second, x, source);
        } else {
          builder.AddTriple(x, it->second, y, source);
        }
        return absl::OkStatus();
      });
}

absl::Status ImportTsvTriples(const std::string& path, KgBuilder& builder,
                              const ImportOptions& options, absl::string_view source_name,
                              absl::string_view license) {
  const SourceId source = builder.AddSource(BuilderArg(source_name), BuilderArg(license));
  TabularSpec spec;
  spec.source = std::string(source_name);
  spec.min_fields = 3;
  spec.has_header = false;  // optional; detected on the first row
  bool first_row = true;
  // Column positions; the defaults are the header-less layout.
  size_t head_col = 0, relation_col = 1, tail_col = 2;
  std::optional<size_t> head_type_col = 3, tail_type_col = 4, head_name_col = 5, tail_name_col = 6;
  auto field = [](const std::vector<absl::string_view>& f, std::optional<size_t> col) {
    return col && *col < f.size() ? absl::StripAsciiWhitespace(f[*col]) : absl::string_view();
  };
  return ImportTabularFile(
      path, spec, builder, options,
      [&](const std::vector<absl::string_view>& f, RowContext& ctx) -> absl::Status {
        if (first_row) {
          first_row = false;
          const auto head = ColumnIndex(f, {"head", "subject", "source", "head_id", "h"});
          const auto relation = ColumnIndex(f, {"relation", "predicate", "rel", "edge", "r"});
          const auto tail = ColumnIndex(f, {"tail", "object", "target", "tail_id", "t"});
          if (head && relation && tail) {
            --ctx.report().rows_read;
            head_col = *head;
            relation_col = *relation;
            tail_col = *tail;
            head_type_col = ColumnIndex(f, {"head_type", "subject_type", "source_type"});
            tail_type_col = ColumnIndex(f, {"tail_type", "object_type", "target_type"});
            head_name_col = ColumnIndex(f, {"head_name", "subject_name", "source_name"});
            tail_name_col = ColumnIndex(f, {"tail_name", "object_name", "target_name"});
            return absl::OkStatus();
          }
        }
        const absl::string_view head_id = field(f, head_col);
        const absl::string_view relation_name = field(f, relation_col);
        const absl::string_view tail_id = field(f, tail_col);
        if (head_id.empty() || relation_name.empty() || tail_id.empty()) {
          return ctx.Malformed("empty head, relation or tail");
        }
        const absl::string_view head_type = field(f, head_type_col);
        const absl::string_view tail_type = field(f, tail_type_col);
        const EntityId head =
            AddEntityFromSource(builder, head_id, head_type, field(f, head_name_col), source_name);
        const EntityId tail =
            AddEntityFromSource(builder, tail_id, tail_type, field(f, tail_name_col), source_name);
        const RelationId relation = AddKnownRelation(builder, relation_name, head_type, tail_type);
        builder.AddTriple(head, relation, tail, source);
        return absl::OkStatus();
      });
}

}  // namespace ibgraphrag::kgstore::import_
