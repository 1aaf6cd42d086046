#include "services/kgstore/import/import_common.h"

#include <algorithm>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "common/delimited_reader.h"
#include "common/status_macros.h"

namespace ibgraphrag::kgstore::import_ {
namespace {

struct RelationSpec {
  const char* name;
  const char* head_type;
  const char* tail_type;
  const char* description;
};

// Names are "<head> <verb> <tail>" so a prompt line reads as a sentence. Sources that state the
// same fact share a name (Hetionet DaG and DisGeNET, Hetionet DpS and HSDN, CtD and DM
// indications).
constexpr RelationSpec kRelationCatalog[] = {
    // Hetionet's 24 metaedges.
    {"anatomy downregulates gene", "anatomy", "gene",
     "The gene is expressed at lower levels in this anatomical structure than in others."},
    {"anatomy expresses gene", "anatomy", "gene",
     "The gene is expressed in this anatomical structure."},
    {"anatomy upregulates gene", "anatomy", "gene",
     "The gene is expressed at higher levels in this anatomical structure than in others."},
    {"drug binds gene", "compound", "gene",
     "The drug binds the protein encoded by the gene (as target, carrier, transporter or enzyme)."},
    {"drug causes side effect", "compound", "side_effect",
     "The side effect is reported on the drug's label."},
    {"drug downregulates gene", "compound", "gene",
     "The drug lowers the expression of the gene in treated cells."},
    {"drug palliates disease", "compound", "disease",
     "The drug relieves symptoms of the disease without changing its course."},
    {"drug resembles drug", "compound", "compound",
     "The two drugs have similar chemical structures."},
    {"drug treats disease", "compound", "disease",
     "The drug is a disease-modifying treatment indicated for the disease."},
    {"drug upregulates gene", "compound", "gene",
     "The drug raises the expression of the gene in treated cells."},
    {"disease associated with gene", "disease", "gene",
     "Variants in or expression of the gene are associated with the disease."},
    {"disease downregulates gene", "disease", "gene",
     "The gene is under-expressed in tissue affected by the disease."},
    {"disease localizes to anatomy", "disease", "anatomy",
     "The disease affects or is located in this anatomical structure."},
    {"disease presents symptom", "disease", "symptom",
     "The symptom is a manifestation of the disease."},
    {"disease resembles disease", "disease", "disease",
     "The two diseases are similar and often mentioned together in the literature."},
    {"disease upregulates gene", "disease", "gene",
     "The gene is over-expressed in tissue affected by the disease."},
    {"gene covaries with gene", "gene", "gene",
     "The two genes were gained and lost together across species (evolutionary rate covariation)."},
    {"gene interacts with gene", "gene", "gene",
     "The proteins encoded by the two genes physically interact."},
    {"gene participates in biological process", "gene", "biological_process",
     "The gene product takes part in the biological process."},
    {"gene participates in cellular component", "gene", "cellular_component",
     "The gene product is located in or forms part of the cellular component."},
    {"gene participates in molecular function", "gene", "molecular_function",
     "The gene product has the molecular function."},
    {"gene participates in pathway", "gene", "pathway",
     "The gene product takes part in the pathway."},
    {"gene regulates gene", "gene", "gene",
     "Knocking down the first gene changes the expression of the second gene."},
    {"pharmacologic class includes drug", "pharmacologic_class", "compound",
     "The drug belongs to the pharmacologic class."},
    // Gene families, SIDER label indications (issue 14 sources).
    {"gene belongs to gene family", "gene", "gene_family",
     "The gene is a member of the HGNC gene family (or of one of its sub-families)."},
    {"drug indicated for condition", "compound", "",
     "The drug's label names the disease or condition as an indication."},
    {"drug label mentions condition", "compound", "",
     "The drug's label text names the condition: as an indication, a warning or a precaution "
     "alike (SIDER's text_mention)."},
    // Ontology hierarchies.
    {"disease is a subtype of disease", "disease", "disease",
     "The first disease is a more specific kind of the second disease."},
    {"phenotype is a subtype of phenotype", "phenotype", "phenotype",
     "The first phenotype is a more specific kind of the second phenotype."},
    // HPO annotations.
    {"disease has phenotype", "disease", "phenotype",
     "Patients with the disease show the phenotype."},
    {"disease does not have phenotype", "disease", "phenotype",
     "The phenotype is explicitly reported as absent in the disease."},
    {"disease has mode of inheritance", "disease", "phenotype",
     "The disease is inherited in this mode."},
    {"disease has clinical course", "disease", "phenotype",
     "The disease shows this onset or clinical course."},
    {"disease has clinical modifier", "disease", "phenotype",
     "The disease's phenotypes are qualified by this modifier."},
    {"gene associated with phenotype", "gene", "phenotype",
     "Variants in the gene cause a disease that shows the phenotype."},
    // Disease Ontology logical axioms.
    {"disease has material basis in", "disease", "",
     "The disease is caused by this agent, gene or variant."},
    {"disease has basis in", "disease", "",
     "The disease results from a disturbance of this process, structure or condition."},
    {"disease derives from", "disease", "", "The disease arises from this cell type or tissue."},
    {"disease has onset during", "disease", "", "The disease begins during this life stage."},
    {"disease has major susceptibility factor", "disease", "",
     "This factor strongly raises the risk of the disease."},
    {"disease transmitted by", "disease", "",
     "The disease is transmitted by this route or vector."},
    {"disease has feature", "disease", "", "The disease characteristically shows this feature."},
    {"disease has allergic trigger", "disease", "",
     "Exposure to this substance triggers the allergic disease."},
    {"disease has driver", "disease", "", "This substance or factor drives the disease."},
    {"disease has origin", "disease", "", "The disease originates from this source."},
    // PrimeKG relations (canonical direction).
    {"drug targets gene", "compound", "gene", "The drug acts on the protein encoded by the gene."},
    {"drug has carrier gene", "compound", "gene",
     "The protein encoded by the gene carries the drug in the body."},
    {"drug is metabolized by gene", "compound", "gene",
     "The enzyme encoded by the gene metabolizes the drug."},
    {"drug is transported by gene", "compound", "gene",
     "The transporter encoded by the gene moves the drug across membranes."},
    {"drug contraindicated for disease", "compound", "disease",
     "The drug should not be used in patients with the disease."},
    {"drug used off-label for disease", "compound", "disease",
     "The drug is used for the disease without a formal indication."},
    {"drug interacts with drug", "compound", "compound",
     "Taking the two drugs together changes their effects."},
    {"disease parent or child of disease", "disease", "disease",
     "One disease is a direct subtype of the other."},
    {"anatomy does not express gene", "anatomy", "gene",
     "The gene is reported as not expressed in this anatomical structure."},
    {"biological process parent or child of biological process", "biological_process",
     "biological_process", "One biological process is a direct subtype of the other."},
    {"molecular function parent or child of molecular function", "molecular_function",
     "molecular_function", "One molecular function is a direct subtype of the other."},
    {"cellular component parent or child of cellular component", "cellular_component",
     "cellular_component", "One cellular component is a direct part or subtype of the other."},
    {"phenotype parent or child of phenotype", "phenotype", "phenotype",
     "One phenotype is a direct subtype of the other."},
    {"anatomy parent or child of anatomy", "anatomy", "anatomy",
     "One anatomical structure is a direct part or subtype of the other."},
    {"pathway parent or child of pathway", "pathway", "pathway",
     "One pathway is a direct sub-pathway of the other."},
    {"exposure parent or child of exposure", "exposure", "exposure",
     "One exposure is a direct subtype of the other."},
    {"exposure linked to disease", "exposure", "disease",
     "Exposure to the substance is linked to the disease."},
    {"exposure linked to biological process", "exposure", "biological_process",
     "Exposure to the substance affects the biological process."},
    {"exposure linked to gene", "exposure", "gene",
     "Exposure to the substance affects the gene or its product."},
    {"exposure linked to molecular function", "exposure", "molecular_function",
     "Exposure to the substance affects the molecular function."},
    {"exposure linked to cellular component", "exposure", "cellular_component",
     "Exposure to the substance affects the cellular component."},
};

const absl::flat_hash_map<absl::string_view, const Relation*>& RelationCatalog() {
  // Both live for the whole process. The relations are held in a static of their own so that
  // LeakSanitizer (fuzz targets, ASan tests) sees them reachable, not leaked.
  static const std::vector<Relation>* const relations = [] {
    auto* built = new std::vector<Relation>();
    built->reserve(std::size(kRelationCatalog));
    for (const RelationSpec& spec : kRelationCatalog) {
      Relation& r = built->emplace_back();
      r.name = spec.name;
      r.head_type = spec.head_type;
      r.tail_type = spec.tail_type;
      r.description = spec.description;
    }
    return built;
  }();
  static const auto* const catalog = [] {
    auto* by_name = new absl::flat_hash_map<absl::string_view, const Relation*>();
    for (const Relation& r : *relations) by_name->emplace(r.name, &r);
    return by_name;
  }();
  return *catalog;
}

absl::string_view StripHeaderDecoration(absl::string_view column) {
  column = absl::StripAsciiWhitespace(column);
  if (column.size() >= 2 && column.front() == '"' && column.back() == '"') {
    column = column.substr(1, column.size() - 2);
  }
  absl::ConsumePrefix(&column, "#");
  absl::ConsumePrefix(&column, "?");
  return column;
}

absl::string_view Unquote(absl::string_view field) {
  if (field.size() >= 2 && field.front() == '"' && field.back() == '"') {
    return field.substr(1, field.size() - 2);
  }
  return field;
}

}  // namespace

RowContext::RowContext(absl::string_view source, const std::string& path,
                       const ImportOptions& options)
    : options_(options) {
  report_.source = std::string(source);
  report_.path = path;
}

absl::Status RowContext::MalformedAt(int64_t line, absl::string_view reason) {
  ++report_.rows_skipped;
  std::string message = absl::StrCat(report_.path, ":", line, ": ", reason);
  if (options_.strict) return absl::InvalidArgumentError(message);
  if (static_cast<int>(report_.errors.size()) < options_.max_errors_reported) {
    report_.errors.push_back(std::move(message));
  }
  return absl::OkStatus();
}

absl::Status ImportTabularFile(const std::string& path, const TabularSpec& spec, KgBuilder& builder,
                               const ImportOptions& options, const RowCallback& on_row,
                               const EndCallback& on_end) {
  auto reader_or = LineReader::Open(path);
  if (!reader_or.ok()) return reader_or.status();
  LineReader& reader = **reader_or;
  RowContext ctx(spec.source, path, options);
  ctx.set_line(&reader);
  // Synonyms, xrefs and definitions the rows add are this file's, for licence filtering.
  const std::string previous_attribute_source = builder.attribute_source();
  const std::string previous_attribute_license = builder.attribute_source_license();
  builder.SetAttributeSource(BuilderArg(spec.source), BuilderArg(spec.license));
  absl::Cleanup restore_attribute_source = [&] {
    builder.SetAttributeSource(BuilderArg(previous_attribute_source),
                               BuilderArg(previous_attribute_license));
  };
  const size_t triples_before = builder.num_triples();
  const int64_t merges_before = builder.num_merges();
  bool header_pending = spec.has_header;
  absl::string_view line;
  std::vector<absl::string_view> fields;
  std::vector<std::string> csv_fields;
  while (reader.Next(&line)) {
    if (line.empty() || (spec.comment != 0 && line.front() == spec.comment)) continue;
    if (spec.csv) {
      if (!common::SplitQuotedLine(line, ',', &csv_fields)) {
        if (header_pending) {
          return absl::InvalidArgumentError(
              absl::StrCat(path, ":", reader.line_number(), ": unreadable CSV header"));
        }
        ++ctx.report().rows_read;
        IBGR_RETURN_IF_ERROR(ctx.Malformed("unbalanced quotes in CSV row"));
        continue;
      }
      fields.assign(csv_fields.begin(), csv_fields.end());
    } else {
      common::SplitUnquotedLine(line, '\t', &fields);
      if (spec.unquote_tsv) {
        for (absl::string_view& f : fields) f = Unquote(f);
      }
    }
    if (header_pending) {
      header_pending = false;
      for (size_t i = 0; i < spec.expected_header.size(); ++i) {
        if (i >= fields.size() ||
            !absl::EqualsIgnoreCase(StripHeaderDecoration(fields[i]), spec.expected_header[i])) {
          return absl::InvalidArgumentError(absl::StrCat(
              path, ":", reader.line_number(), ": unexpected header, expected columns starting ",
              absl::StrJoin(spec.expected_header, ","), " (is this the right file?)"));
        }
      }
      continue;
    }
    ++ctx.report().rows_read;
    if (fields.size() < spec.min_fields) {
      IBGR_RETURN_IF_ERROR(ctx.Malformed(
          absl::StrCat("expected at least ", spec.min_fields, " fields, got ", fields.size())));
      continue;
    }
    IBGR_RETURN_IF_ERROR(on_row(fields, ctx));
  }
  if (!reader.status().ok()) return reader.status();
  IBGR_ASSIGN_OR_RETURN(ctx.report().sha256, reader.FinishSha256());
  if (on_end) {
    ctx.set_line(nullptr);
    IBGR_RETURN_IF_ERROR(on_end(ctx));
  }
  ctx.report().triples_added = static_cast<int64_t>(builder.num_triples() - triples_before);
  ctx.report().triples_merged = builder.num_merges() - merges_before;
  builder.AddReport(std::move(ctx.report()));
  return absl::OkStatus();
}

std::string NormalizeXref(absl::string_view raw) {
  raw = absl::StripAsciiWhitespace(raw);
  // OBO xrefs may carry a quoted description after the id.
  if (const size_t space = raw.find_first_of(" \t"); space != absl::string_view::npos) {
    raw = raw.substr(0, space);
  }
  const size_t colon = raw.find(':');
  if (colon == absl::string_view::npos || colon == 0 || colon + 1 == raw.size()) return "";
  const absl::string_view prefix = raw.substr(0, colon);
  const absl::string_view local = raw.substr(colon + 1);
  const std::string upper = absl::AsciiStrToUpper(prefix);
  if (upper == "HTTP" || upper == "HTTPS" || upper == "PMID" || upper == "DOI" || upper == "URL" ||
      upper == "ISBN" || upper == "WIKIPEDIA") {
    return "";
  }
  if (upper == "UMLS_CUI" || upper == "UMLS") return absl::StrCat("UMLS:", local);
  if (upper == "MSH" || upper == "MESH") return absl::StrCat("MESH:", local);
  if (upper == "MIM" || upper == "OMIM") return absl::StrCat("OMIM:", local);
  if (upper == "ORPHA" || upper == "ORPHANET" || upper == "ORDO") {
    return absl::StrCat("ORDO:", local);
  }
  if (absl::StartsWith(upper, "SNOMEDCT")) return absl::StrCat("SNOMEDCT:", local);
  if (upper == "ICD-10" || upper == "ICD10") return absl::StrCat("ICD10:", local);
  if (upper == "ICD-9" || upper == "ICD9") return absl::StrCat("ICD9:", local);
  if (upper == "ICD-O" || upper == "ICDO") return absl::StrCat("ICDO:", local);
  if (upper == "NCI" || upper == "NCIT") return absl::StrCat("NCIT:", local);
  return std::string(raw);
}

std::string PadOntologyId(absl::string_view prefix, absl::string_view local, size_t digits) {
  std::string out = absl::StrCat(prefix, ":");
  if (local.size() < digits && std::all_of(local.begin(), local.end(), absl::ascii_isdigit)) {
    out.append(digits - local.size(), '0');
  }
  out.append(local.data(), local.size());
  return out;
}

bool IsDigits(absl::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), absl::ascii_isdigit);
}

std::optional<EntityId> GeneFromEntrez(KgBuilder& builder, absl::string_view entrez,
                                       absl::string_view symbol, absl::string_view source) {
  entrez = absl::StripAsciiWhitespace(entrez);
  if (!IsDigits(entrez)) return std::nullopt;
  const std::string id = absl::StrCat("Entrez:", entrez);
  if (symbol.empty()) return builder.Resolve(BuilderArg(id));
  return AddEntityFromSource(builder, id, "gene", symbol, source);
}

std::string NormalizeName(absl::string_view name) {
  std::string out;
  out.reserve(name.size());
  bool pending_space = false;
  for (const char c : name) {
    if (absl::ascii_isspace(static_cast<unsigned char>(c))) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out.push_back(' ');
    pending_space = false;
    out.push_back(absl::ascii_tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

void AddSynonymIgnoringCase(KgBuilder& builder, EntityId id, absl::string_view synonym) {
  synonym = absl::StripAsciiWhitespace(synonym);
  if (synonym.empty()) return;
  const Entity& e = builder.entity(id);
  const std::string key = NormalizeName(synonym);
  if (NormalizeName(e.name) == key) return;
  for (const std::string& existing : e.synonyms) {
    if (NormalizeName(existing) == key) return;
  }
  builder.AddSynonym(id, BuilderArg(synonym));
}

EntityId AddEntityFromSource(KgBuilder& builder, absl::string_view external_id,
                             absl::string_view type, absl::string_view name,
                             absl::string_view source) {
  name = absl::StripAsciiWhitespace(name);
  const EntityId id =
      builder.AddEntity(BuilderArg(external_id), BuilderArg(type), BuilderArg(name));
  if (!name.empty() && builder.entity(id).name != name) AddSynonymIgnoringCase(builder, id, name);
  builder.AddEntitySource(id, BuilderArg(source));
  return id;
}

const Relation* FindKnownRelation(absl::string_view name) {
  const auto& catalog = RelationCatalog();
  if (auto it = catalog.find(name); it != catalog.end()) return it->second;
  return nullptr;
}

RelationId AddKnownRelation(KgBuilder& builder, absl::string_view name, absl::string_view head_type,
                            absl::string_view tail_type) {
  if (const Relation* known = FindKnownRelation(name); known != nullptr) {
    return builder.AddRelation(BuilderArg(known->name), BuilderArg(known->head_type),
                               BuilderArg(known->tail_type), BuilderArg(known->description));
  }
  return builder.AddRelation(
      BuilderArg(name), BuilderArg(head_type), BuilderArg(tail_type),
      BuilderArg(absl::StrCat("The head entity is linked to the tail entity by '", name, "'.")));
}

NameIndex::NameIndex(const KgBuilder& builder) : builder_(builder) {
  by_name_.reserve(builder.num_entities() * 2);
  for (EntityId id = 0; id < builder.num_entities(); ++id) {
    const Entity& e = builder.entity(id);
    if (!e.name.empty()) by_name_[NormalizeName(e.name)].push_back(Hit{id, true});
    for (const std::string& synonym : e.synonyms) {
      by_name_[NormalizeName(synonym)].push_back(Hit{id, false});
    }
  }
}

std::optional<EntityId> NameIndex::Find(absl::string_view name,
                                        absl::Span<const absl::string_view> types) const {
  const auto it = by_name_.find(NormalizeName(name));
  if (it == by_name_.end()) return std::nullopt;
  std::optional<EntityId> best;
  size_t best_rank = 0;
  bool best_is_name = false;
  for (const Hit& hit : it->second) {
    size_t rank = 0;
    if (!types.empty()) {
      const std::string& type = builder_.entity(hit.id).type;
      rank = std::find(types.begin(), types.end(), type) - types.begin();
      if (rank == types.size()) continue;
    }
    // Hits are in id order, so the first hit of a given (rank, is_name) class wins ties.
    if (!best || rank < best_rank || (rank == best_rank && hit.is_name && !best_is_name)) {
      best = hit.id;
      best_rank = rank;
      best_is_name = hit.is_name;
    }
  }
  return best;
}

}  // namespace ibgraphrag::kgstore::import_
