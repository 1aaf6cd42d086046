#include "services/kgstore/import/drug_importers.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/delimited_reader.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "services/kgstore/import/annotation_importers.h"

namespace ibgraphrag::kgstore::import_ {
namespace {

constexpr absl::string_view kDrugBankLicense = "CC BY-NC 4.0";
constexpr absl::string_view kSiderLicense = "CC BY-NC-SA 4.0";
constexpr absl::string_view kDrugCentralLicense = "CC BY 4.0";

bool IsDrugBankId(absl::string_view id) { return id.size() == 7 && absl::StartsWith(id, "DB"); }

std::string DrugBankExternalId(absl::string_view id) { return absl::StrCat("DrugBank:", id); }

// The compound for a DrugBank id, created when unknown (named by the id when the row has no name).
EntityId NamedDrug(KgBuilder& builder, absl::string_view id, absl::string_view name,
                   absl::string_view source) {
  const std::string external_id = DrugBankExternalId(id);
  if (name.empty()) {
    if (const std::optional<EntityId> known = builder.Resolve(BuilderArg(external_id))) {
      builder.AddEntitySource(*known, BuilderArg(source));
      return *known;
    }
    name = id;
  }
  return AddEntityFromSource(builder, external_id, "compound", name, source);
}

// One drugbank-drugs.tsv record (already split) into a compound entity.
absl::Status AddDrugBankRecord(const common::DelimitedRecord& record, KgBuilder& builder,
                               RowContext& ctx, DrugJoin& join) {
  const std::vector<std::string>& f = record.fields;
  if (f.size() < 9) {
    return ctx.MalformedAt(record.line, absl::StrCat("expected at least 9 fields, got ", f.size()));
  }
  if (!IsDrugBankId(f[0])) return ctx.MalformedAt(record.line, "drugbank_id is not a DrugBank id");
  if (f[1].empty()) return ctx.MalformedAt(record.line, "name is empty");
  const EntityId drug =
      AddEntityFromSource(builder, DrugBankExternalId(f[0]), "compound", f[1], ctx.report().source);
  if (!f[6].empty()) builder.AddAlias(drug, BuilderArg(absl::StrCat("InChIKey:", f[6])));
  if (!f[8].empty()) builder.SetDefinition(drug, BuilderArg(f[8]));
  for (absl::string_view group : absl::StrSplit(f[3], '|')) {
    if (group == "approved" || group == "withdrawn") {
      join.marketed.insert(f[0]);
      break;
    }
  }
  for (absl::string_view category : absl::StrSplit(f[5], '|', absl::SkipWhitespace())) {
    join.categories[f[0]].emplace_back(absl::StripAsciiWhitespace(category));
  }
  return absl::OkStatus();
}

// One row of SIDER's indications file, kept until the whole file has named each label's drugs.
struct SiderIndicationRow {
  std::string drugbank_id, drugbank_name, pubchem_id, stitch_id, cui_from_label, method,
      cui_from_meddra;
};

// STITCH flat id -> the DrugBank ids its label is about, by DrugJoin::stitch's rule, from the
// rows in file order.
absl::flat_hash_map<std::string, absl::flat_hash_set<std::string>> SiderLabelDrugs(
    const std::vector<SiderIndicationRow>& rows, const DrugJoin& join) {
  absl::flat_hash_map<std::string, std::vector<std::string>> named;  // first-seen order
  for (const SiderIndicationRow& r : rows) {
    std::vector<std::string>& ids = named[r.stitch_id];
    if (std::find(ids.begin(), ids.end(), r.drugbank_id) == ids.end()) {
      ids.push_back(r.drugbank_id);
    }
  }
  absl::flat_hash_map<std::string, absl::flat_hash_set<std::string>> out;
  for (auto& [stitch, ids] : named) {
    std::vector<std::string> pool;
    if (ids.size() > 1) {
      for (const std::string& id : ids) {
        if (join.marketed.contains(id)) pool.push_back(id);
      }
    }
    if (pool.empty()) pool = std::move(ids);
    if (pool.size() > DrugJoin::kMaxDrugsPerLabel) continue;
    out[stitch].insert(pool.begin(), pool.end());
  }
  return out;
}

}  // namespace

absl::Status ImportDrugBankDrugs(const std::string& path, KgBuilder& builder,
                                 const ImportOptions& options, DrugJoin& join) {
  constexpr absl::string_view kSource = "drugbank-drugs";
  builder.AddSource(BuilderArg(kSource), BuilderArg(kDrugBankLicense));
  // Descriptions are quoted and span lines, so this small file is parsed whole rather than
  // streamed line by line like the other tables.
  IBGR_ASSIGN_OR_RETURN(const std::string text, common::ReadFileToString(path));
  IBGR_ASSIGN_OR_RETURN(std::vector<common::DelimitedRecord> records,
                        common::ParseDelimitedText(text, path, '\t'));
  RowContext ctx(kSource, path, options);
  // Descriptions and InChIKeys are DrugBank's.
  builder.SetAttributeSource(BuilderArg(kSource), BuilderArg(kDrugBankLicense));
  absl::Cleanup no_attribute_source = [&] { builder.SetAttributeSource(""); };
  const std::vector<std::string> expected = {"drugbank_id", "name", "type"};
  if (records.empty() || records[0].fields.size() < expected.size() ||
      !std::equal(expected.begin(), expected.end(), records[0].fields.begin())) {
    return absl::InvalidArgumentError(
        absl::StrCat(path,
                     ":1: unexpected header, expected columns starting drugbank_id,name,type"
                     " (is this the right file?)"));
  }
  for (size_t i = 1; i < records.size(); ++i) {
    ++ctx.report().rows_read;
    IBGR_RETURN_IF_ERROR(AddDrugBankRecord(records[i], builder, ctx, join));
  }
  ctx.report().sha256 = common::Sha256Hex(text);
  join.drugbank_drugs_path = path;
  join.drugbank_drugs_sha256 = ctx.report().sha256;
  builder.AddReport(std::move(ctx.report()));
  return absl::OkStatus();
}

absl::Status ImportSiderIndications(const std::string& path, KgBuilder& builder,
                                    const ImportOptions& options, DrugJoin& join) {
  constexpr absl::string_view kSource = "sider-indications";
  const SourceId source = builder.AddSource(BuilderArg(kSource), BuilderArg(kSiderLicense));
  const RelationId indication = AddKnownRelation(builder, "drug indicated for condition");
  // SIDER's text_mention rows say only that the label's text names the condition: as a warning
  // ("use with caution in asthma": betaxolol), a test (methacholine) or in passing (thiamine for
  // hyperthyroidism) as often as an indication. They are no indication statement, so they are a
  // relation of their own that no question intent asks for.
  const RelationId mention = AddKnownRelation(builder, "drug label mentions condition");
  TabularSpec spec;
  spec.source = std::string(kSource);
  spec.min_fields = 10;
  spec.expected_header = {"drugbank_id",    "drugbank_name",       "pubchem_id",
                          "stitch_id_flat", "umls_cui_from_label", "method"};
  spec.comment = 0;
  // A label's drugs are known only once every row has been read: rows wait in `rows`.
  std::vector<SiderIndicationRow> rows;
  return ImportTabularFile(
      path, spec, builder, options,
      [&](const std::vector<absl::string_view>& f, RowContext& ctx) -> absl::Status {
        if (!IsDrugBankId(f[0])) return ctx.Malformed("drugbank_id is not a DrugBank id");
        if (!absl::StartsWith(f[3], "CID")) return ctx.Malformed("stitch_id_flat is not a CID");
        rows.push_back({std::string(f[0]), std::string(f[1]), std::string(f[2]), std::string(f[3]),
                        std::string(f[4]), std::string(f[5]), std::string(f[8])});
        return absl::OkStatus();
      },
      [&](RowContext& ctx) -> absl::Status {
        const auto label_drugs = SiderLabelDrugs(rows, join);
        for (const SiderIndicationRow& r : rows) {
          const auto about = label_drugs.find(r.stitch_id);
          if (about == label_drugs.end() || !about->second.contains(r.drugbank_id)) {
            ctx.Unmapped();  // another entry of the label's structure, or an ion's fan-out
            continue;
          }
          const EntityId drug = NamedDrug(builder, r.drugbank_id, r.drugbank_name, kSource);
          std::vector<EntityId>& joined = join.stitch[r.stitch_id];
          if (std::find(joined.begin(), joined.end(), drug) == joined.end()) joined.push_back(drug);
          builder.AddAlias(joined.front(), BuilderArg(absl::StrCat("STITCH:", r.stitch_id)));
          if (IsDigits(r.pubchem_id)) {
            builder.AddAlias(joined.front(), BuilderArg(absl::StrCat("PubChem:", r.pubchem_id)));
          }
          if (r.method == "NLP_precondition") continue;
          std::optional<EntityId> condition =
              builder.Resolve(BuilderArg(absl::StrCat("UMLS:", r.cui_from_label)));
          if (!condition) {
            condition = builder.Resolve(BuilderArg(absl::StrCat("UMLS:", r.cui_from_meddra)));
          }
          if (!condition || *condition == drug) {
            ctx.Unmapped();
            continue;
          }
          builder.AddEntitySource(*condition, BuilderArg(kSource));
          builder.AddTriple(drug, r.method == "text_mention" ? mention : indication, *condition,
                            source, kNoTripleScore, BuilderArg(absl::StrCat("SIDER ", r.method)));
        }
        return absl::OkStatus();
      });
}

absl::Status ImportSiderSideEffects(const std::string& path, KgBuilder& builder,
                                    const ImportOptions& options, const DrugJoin& join) {
  constexpr absl::string_view kSource = "sider-side-effects";
  const SourceId source = builder.AddSource(BuilderArg(kSource), BuilderArg(kSiderLicense));
  const RelationId relation = AddKnownRelation(builder, "drug causes side effect");
  // (drug, side effect) pairs; the triples are added after the last row, with their score.
  absl::flat_hash_set<std::pair<EntityId, EntityId>> pairs;
  TabularSpec spec;
  spec.source = std::string(kSource);
  spec.min_fields = 6;
  spec.has_header = false;
  spec.comment = 0;
  return ImportTabularFile(
      path, spec, builder, options,
      [&](const std::vector<absl::string_view>& f, RowContext& ctx) -> absl::Status {
        if (!absl::StartsWith(f[0], "CID")) return ctx.Malformed("STITCH flat id is not a CID");
        if (f[3] != "PT") return absl::OkStatus();  // LLT rows repeat a preferred term
        if (!absl::StartsWith(f[4], "C")) return ctx.Malformed("MedDRA UMLS CUI is not a CUI");
        const auto drugs = join.stitch.find(f[0]);
        if (drugs == join.stitch.end() || drugs->second.empty()) {
          ctx.Unmapped();
          return absl::OkStatus();
        }
        const EntityId effect =
            AddEntityFromSource(builder, absl::StrCat("UMLS:", f[4]), "side_effect", f[5], kSource);
        for (const EntityId drug : drugs->second) pairs.insert({drug, effect});
        return absl::OkStatus();
      },
      [&](RowContext&) {
        // Each pair's score: the share of the file's drugs whose labels list that side effect.
        absl::flat_hash_set<EntityId> drugs;
        absl::flat_hash_map<EntityId, int> labelled;
        for (const auto& [drug, effect] : pairs) {
          drugs.insert(drug);
          ++labelled[effect];
        }
        std::vector<std::pair<EntityId, EntityId>> ordered(pairs.begin(), pairs.end());
        std::sort(ordered.begin(), ordered.end());
        const double total = static_cast<double>(drugs.size());
        for (const auto& [drug, effect] : ordered) {
          const int n = labelled[effect];
          builder.AddTriple(drug, relation, effect, source, static_cast<float>(n / total),
                            BuilderArg(absl::StrCat("SIDER labels of ", n, " of ", drugs.size(),
                                                    " drugs list it")));
        }
        return absl::OkStatus();
      });
}

absl::Status ImportDrugBankProteins(const std::string& path, KgBuilder& builder,
                                    const ImportOptions& options) {
  constexpr absl::string_view kSource = "drugbank-proteins";
  const SourceId source = builder.AddSource(BuilderArg(kSource), BuilderArg(kDrugBankLicense));
  // DrugBank's four roles of a protein for a drug. Only a target is what the drug acts on; the
  // enzymes that metabolise it, its transporters and carriers are pharmacokinetics, and as "binds"
  // they answered "What is the target of omeprazole?" with CYP3A4 and ABCB1. (PrimeKG's names for
  // the same split; Hetionet's CbG merges all four and stays "drug binds gene".)
  const RelationId target = AddKnownRelation(builder, "drug binds gene");
  const RelationId enzyme = AddKnownRelation(builder, "drug is metabolized by gene");
  const RelationId transporter = AddKnownRelation(builder, "drug is transported by gene");
  const RelationId carrier = AddKnownRelation(builder, "drug has carrier gene");
  TabularSpec spec;
  spec.source = std::string(kSource);
  spec.min_fields = 7;
  spec.expected_header = {"drugbank_id", "category", "uniprot_id", "entrez_gene_id", "organism"};
  spec.comment = 0;
  return ImportTabularFile(
      path, spec, builder, options,
      [&](const std::vector<absl::string_view>& f, RowContext& ctx) -> absl::Status {
        if (!IsDrugBankId(f[0])) return ctx.Malformed("drugbank_id is not a DrugBank id");
        RelationId relation = target;
        if (f[1] == "enzyme") {
          relation = enzyme;
        } else if (f[1] == "transporter") {
          relation = transporter;
        } else if (f[1] == "carrier") {
          relation = carrier;
        } else if (f[1] != "target") {
          return ctx.Malformed(absl::StrCat("unknown category '", f[1], "'"));
        }
        const std::optional<EntityId> drug = builder.Resolve(BuilderArg(DrugBankExternalId(f[0])));
        const std::optional<EntityId> gene =
            f[4] == "Human" ? GeneFromEntrez(builder, f[3], "", "") : std::nullopt;
        if (!drug || !gene) {
          ctx.Unmapped();
          return absl::OkStatus();
        }
        if (!f[2].empty()) builder.AddAlias(*gene, BuilderArg(absl::StrCat("UniProt:", f[2])));
        // known_action "yes": DrugBank states that the drug's pharmacological action goes through
        // this protein (rituximab's MS4A1), which for the drug's other proteins (its Fc receptors
        // and complement proteins, "unknown") is not known; the score ranks it first among them.
        const bool known_action = f[5] == "yes";
        std::string note = f[6].empty() ? std::string(f[1]) : absl::StrCat(f[1], " (", f[6], ")");
        if (known_action) absl::StrAppend(&note, ", known action");
        builder.AddTriple(*drug, relation, *gene, source, known_action ? 1.0f : kNoTripleScore,
                          BuilderArg(note));
        return absl::OkStatus();
      });
}

absl::Status ImportDrugCentralTargets(const std::string& path, KgBuilder& builder,
                                      const ImportOptions& options) {
  constexpr absl::string_view kSource = "drugcentral-targets";
  const SourceId source = builder.AddSource(BuilderArg(kSource), BuilderArg(kDrugCentralLicense));
  const RelationId relation = AddKnownRelation(builder, "drug binds gene");
  TabularSpec spec;
  spec.source = std::string(kSource);
  spec.min_fields = 6;
  spec.expected_header = {"GeneID",     "drugbank_id", "drugbank_name",
                          "pubmed_ids", "sources",     "actions"};
  spec.comment = 0;
  return ImportTabularFile(
      path, spec, builder, options,
      [&](const std::vector<absl::string_view>& f, RowContext& ctx) -> absl::Status {
        if (!IsDrugBankId(f[1])) return ctx.Malformed("drugbank_id is not a DrugBank id");
        if (!IsDigits(f[0])) return ctx.Malformed("GeneID is not a number");
        const std::optional<EntityId> gene = GeneFromEntrez(builder, f[0], "", "");
        if (!gene) {
          ctx.Unmapped();
          return absl::OkStatus();
        }
        const EntityId drug = NamedDrug(builder, f[1], f[2], kSource);
        builder.AddTriple(
            drug, relation, *gene, source, kNoTripleScore,
            BuilderArg(f[5].empty() ? std::string(f[4]) : absl::StrCat(f[4], ": ", f[5])));
        return absl::OkStatus();
      });
}

absl::Status ImportDrugCentralClasses(const std::string& path, KgBuilder& builder,
                                      const ImportOptions& options) {
  constexpr absl::string_view kSource = "drugcentral-classes";
  const SourceId source = builder.AddSource(BuilderArg(kSource), BuilderArg(kDrugCentralLicense));
  const RelationId relation = AddKnownRelation(builder, "pharmacologic class includes drug");
  // (class, drug) pairs; the triples are added after the last row, with their score.
  absl::flat_hash_set<std::pair<EntityId, EntityId>> pairs;
  TabularSpec spec;
  spec.source = std::string(kSource);
  spec.min_fields = 4;
  spec.expected_header = {"drugbank_id", "drugbank_name", "class_id", "class_name"};
  spec.comment = 0;
  return ImportTabularFile(
      path, spec, builder, options,
      [&](const std::vector<absl::string_view>& f, RowContext& ctx) -> absl::Status {
        if (!IsDrugBankId(f[0])) return ctx.Malformed("drugbank_id is not a DrugBank id");
        std::string class_id;
        if (absl::StartsWith(f[2], "N")) {
          class_id = absl::StrCat("NDFRT:", f[2]);
        } else if (absl::StartsWith(f[2], "D")) {
          class_id = absl::StrCat("MESH:", f[2]);
        } else if (absl::StartsWith(f[2], "CHEBI:")) {
          class_id = std::string(f[2]);
        } else {
          return ctx.Malformed(absl::StrCat("unknown class_id scheme '", f[2], "'"));
        }
        const EntityId drug = NamedDrug(builder, f[0], f[1], kSource);
        const EntityId pharmacologic_class =
            AddEntityFromSource(builder, class_id, "pharmacologic_class", f[3], kSource);
        pairs.insert({pharmacologic_class, drug});
        return absl::OkStatus();
      },
      [&](RowContext&) {
        // Each pair's score: the class's specificity, 1 / the drugs the file puts in it. Asked
        // "What class of drug is lisinopril?", the answer is ACE inhibitors (12 drugs) before
        // enzyme inhibitors (279): the evidence-strength order reads the score.
        absl::flat_hash_map<EntityId, int> members;
        for (const auto& [pharmacologic_class, drug] : pairs) ++members[pharmacologic_class];
        std::vector<std::pair<EntityId, EntityId>> ordered(pairs.begin(), pairs.end());
        std::sort(ordered.begin(), ordered.end());
        for (const auto& [pharmacologic_class, drug] : ordered) {
          const int n = members[pharmacologic_class];
          builder.AddTriple(pharmacologic_class, relation, drug, source,
                            static_cast<float>(1.0 / n),
                            BuilderArg(absl::StrCat("DrugCentral class of ", n, " drugs")));
        }
        return absl::OkStatus();
      });
}

absl::Status ImportDrugBankCategories(KgBuilder& builder, const DrugJoin& join) {
  constexpr absl::string_view kSource = "drugbank-categories";
  const SourceId source = builder.AddSource(BuilderArg(kSource), BuilderArg(kDrugBankLicense));
  const RelationId relation = AddKnownRelation(builder, "pharmacologic class includes drug");
  SourceReport report;
  report.source = std::string(kSource);
  report.path = join.drugbank_drugs_path;  // read again, from DrugJoin
  report.sha256 = join.drugbank_drugs_sha256;
  // The classes by lower-case name; a name two classes share (an NDF-RT and a MeSH entry) names
  // both.
  absl::flat_hash_map<std::string, std::vector<EntityId>> classes;
  for (size_t id = 0; id < builder.num_entities(); ++id) {
    const Entity& e = builder.entity(static_cast<EntityId>(id));
    if (e.type == "pharmacologic_class") {
      classes[absl::AsciiStrToLower(e.name)].push_back(static_cast<EntityId>(id));
    }
  }
  // (class, drug) pairs in a stable order, then each class's size as DrugBank draws it.
  std::vector<std::pair<EntityId, EntityId>> pairs;
  std::vector<std::string> ids;
  for (const auto& [id, categories] : join.categories) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  for (const std::string& id : ids) {
    const std::optional<EntityId> drug = builder.Resolve(BuilderArg(DrugBankExternalId(id)));
    for (const std::string& category : join.categories.at(id)) {
      ++report.rows_read;
      const auto named = classes.find(absl::AsciiStrToLower(category));
      if (!drug.has_value() || named == classes.end()) {
        ++report.unmapped_ids;
        continue;
      }
      for (EntityId pharmacologic_class : named->second) {
        pairs.emplace_back(pharmacologic_class, *drug);
      }
    }
  }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  absl::flat_hash_map<EntityId, int> members;
  for (const auto& [pharmacologic_class, drug] : pairs) ++members[pharmacologic_class];
  for (const auto& [pharmacologic_class, drug] : pairs) {
    const int n = members[pharmacologic_class];
    const std::string note = absl::StrCat("DrugBank category of ", n, " drugs");
    // A pair DrugCentral has keeps DrugCentral's score: the same MeSH class read from a second
    // file is no stronger (one lineage), and max-merging two files' specificities would rank a
    // class by which file counted fewer drugs in it. A new pair takes DrugBank's specificity.
    const bool added = builder.AddTriple(pharmacologic_class, relation, drug, source,
                                         kNoTripleScore, BuilderArg(note));
    if (added) {
      builder.AddTriple(pharmacologic_class, relation, drug, source, static_cast<float>(1.0 / n),
                        {});
    }
    ++(added ? report.triples_added : report.triples_merged);
  }
  builder.AddReport(std::move(report));
  return absl::OkStatus();
}

absl::Status ImportDrugCentralIndications(const std::string& path, KgBuilder& builder,
                                          const ImportOptions& options) {
  return ImportDrugDiseaseIndications(path, "drugcentral-indications", kDrugCentralLicense, builder,
                                      options);
}

absl::Status ImportBindingDb(const std::string& path, KgBuilder& builder,
                             const ImportOptions& options) {
  constexpr absl::string_view kSource = "bindingdb";
  const SourceId source_by = builder.AddSource(BuilderArg(kSource), BuilderArg("CC BY 3.0"));
  const SourceId source_by_sa = builder.AddSource(BuilderArg(kSource), BuilderArg("CC BY-SA 3.0"));
  const RelationId relation = AddKnownRelation(builder, "drug binds gene");
  TabularSpec spec;
  spec.source = std::string(kSource);
  spec.min_fields = 9;
  spec.expected_header = {"drugbank_id", "entrez_gene", "affinity_nM", "n_pairs", "sources"};
  spec.comment = 0;
  return ImportTabularFile(
      path, spec, builder, options,
      [&](const std::vector<absl::string_view>& f, RowContext& ctx) -> absl::Status {
        if (!IsDrugBankId(f[0])) return ctx.Malformed("drugbank_id is not a DrugBank id");
        double affinity_nm = 0;
        // SimpleAtod accepts "nan" and "inf"; neither is an affinity.
        if (!absl::SimpleAtod(f[2], &affinity_nm) || !std::isfinite(affinity_nm) ||
            affinity_nm <= 0) {
          return ctx.Malformed("affinity_nM is not a positive number");
        }
        const std::optional<EntityId> gene = GeneFromEntrez(builder, f[1], f[8], kSource);
        if (!gene) return ctx.Malformed("entrez_gene is not a number");
        const EntityId drug = NamedDrug(builder, f[0], f[6], kSource);
        const float score =
            static_cast<float>(std::clamp(1.0 - std::log10(affinity_nm) / 5.0, 0.0, 1.0));
        builder.AddTriple(drug, relation, *gene,
                          absl::StrContains(f[4], "ChEMBL") ? source_by_sa : source_by, score,
                          BuilderArg(absl::StrCat("affinity ", f[2], " nM")));
        return absl::OkStatus();
      });
}

}  // namespace ibgraphrag::kgstore::import_
