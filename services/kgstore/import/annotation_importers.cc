#include "services/kgstore/import/annotation_importers.h"

#include <array>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"

namespace ibgraphrag::kgstore::import_ {
namespace {

// ---- DO logical axioms ---------------------------------------------------------------------

struct Token {
  enum Kind { kQuoted, kWord, kOpen, kClose };
  Kind kind;
  absl::string_view text;
};

std::vector<Token> TokenizeAxiom(absl::string_view axiom) {
  std::vector<Token> tokens;
  size_t i = 0;
  while (i < axiom.size()) {
    const char c = axiom[i];
    if (absl::ascii_isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '(' || c == ')') {
      tokens.push_back({c == '(' ? Token::kOpen : Token::kClose, axiom.substr(i, 1)});
      ++i;
    } else if (c == '\'') {
      const size_t close = axiom.find('\'', i + 1);
      const size_t stop = close == absl::string_view::npos ? axiom.size() : close;
      tokens.push_back({Token::kQuoted, axiom.substr(i + 1, stop - i - 1)});
      i = stop + 1;
    } else {
      size_t stop = i;
      while (stop < axiom.size() && !absl::ascii_isspace(static_cast<unsigned char>(axiom[stop])) &&
             axiom[stop] != '(' && axiom[stop] != ')' && axiom[stop] != '\'') {
        ++stop;
      }
      tokens.push_back({Token::kWord, axiom.substr(i, stop - i)});
      i = stop;
    }
  }
  return tokens;
}

bool IsKeyword(absl::string_view word) {
  return word == "some" || word == "only" || word == "and" || word == "or" || word == "not" ||
         word == "exactly" || word == "min" || word == "max" || word == "value";
}

bool IsLabel(const Token& t) {
  return t.kind == Token::kQuoted || (t.kind == Token::kWord && !IsKeyword(t.text));
}

struct AxiomProperty {
  absl::string_view property;
  absl::string_view relation;
  std::vector<absl::string_view> types;  // filler types in order of preference
};

const std::vector<AxiomProperty>& AxiomProperties() {
  static const auto* const properties = new std::vector<AxiomProperty>{
      {"has symptom", "disease presents symptom", {"symptom", "phenotype"}},
      {"has phenotype", "disease has phenotype", {"phenotype", "symptom"}},
      {"disease has feature", "disease has feature", {"phenotype", "symptom", "disease"}},
      {"disease has location", "disease localizes to anatomy", {"anatomy", "cellular_component"}},
      {"has material basis in",
       "disease has material basis in",
       {"gene", "compound", "phenotype", "disease"}},
      {"disease has basis in",
       "disease has basis in",
       {"phenotype", "disease", "biological_process", "anatomy"}},
      {"derives from", "disease derives from", {"anatomy", "cellular_component"}},
      {"existence starts during", "disease has onset during", {"phenotype"}},
      {"has major susceptibility factor",
       "disease has major susceptibility factor",
       {"disease", "gene", "compound", "phenotype"}},
      {"transmitted by", "disease transmitted by", {}},
      {"has allergic trigger", "disease has allergic trigger", {"compound"}},
      {"has disease driver", "disease has driver", {"compound", "disease", "gene"}},
      {"has_origin", "disease has origin", {}},
  };
  return *properties;
}

// ---- HPO annotations -----------------------------------------------------------------------

absl::string_view HpoaRelation(absl::string_view aspect, bool negated) {
  if (negated) return "disease does not have phenotype";
  if (aspect == "P") return "disease has phenotype";
  if (aspect == "I") return "disease has mode of inheritance";
  if (aspect == "C") return "disease has clinical course";
  if (aspect == "M") return "disease has clinical modifier";
  return "";
}

}  // namespace

absl::Status ImportHpoAnnotations(const std::string& path, KgBuilder& builder,
                                  const ImportOptions& options) {
  constexpr absl::string_view kSource = "hpo-annotations";
  const SourceId source = builder.AddSource(BuilderArg(kSource), BuilderArg("HPO license"));
  absl::flat_hash_set<EntityId> created;
  TabularSpec spec;
  spec.source = std::string(kSource);
  spec.min_fields = 11;
  // The column header is a '#' comment line in the 2023 releases.
  spec.has_header = false;
  return ImportTabularFile(
      path, spec, builder, options,
      [&](const std::vector<absl::string_view>& f, RowContext& ctx) -> absl::Status {
        if (absl::EqualsIgnoreCase(f[0], "DatabaseID") ||
            absl::EqualsIgnoreCase(f[0], "database_id")) {
          --ctx.report().rows_read;  // a header row in releases that do not comment it out
          return absl::OkStatus();
        }
        const std::string disease_id = NormalizeXref(f[0]);
        if (disease_id.empty()) return ctx.Malformed("DatabaseID is not a prefixed id");
        if (!absl::StartsWith(f[3], "HP:")) return ctx.Malformed("HPO_ID is not an HP id");
        const bool negated = absl::EqualsIgnoreCase(f[2], "NOT");
        const absl::string_view relation_name = HpoaRelation(f[10], negated);
        if (relation_name.empty()) {
          return ctx.Malformed(absl::StrCat("unknown Aspect '", f[10], "'"));
        }
        const std::optional<EntityId> phenotype = builder.Resolve(BuilderArg(f[3]));
        std::optional<EntityId> disease = builder.Resolve(BuilderArg(disease_id));
        const bool disease_joined = disease.has_value() && !created.contains(*disease);
        if (!disease_joined || !phenotype) ctx.Unmapped();
        if (!phenotype) return absl::OkStatus();
        if (!disease) {
          if (!ctx.options().create_unresolved_hpo_diseases) return absl::OkStatus();
          disease = AddEntityFromSource(builder, disease_id, "disease", f[1], kSource);
          created.insert(*disease);
        }
        builder.AddEntitySource(*disease, BuilderArg(kSource));
        builder.AddTriple(*disease, AddKnownRelation(builder, relation_name), *phenotype, source);
        return absl::OkStatus();
      });
}

absl::Status ImportHpoGenesToPhenotype(const std::string& path, KgBuilder& builder,
                                       const ImportOptions& options) {
  constexpr absl::string_view kSource = "hpo-genes-to-phenotype";
  const SourceId source = builder.AddSource(BuilderArg(kSource), BuilderArg("HPO license"));
  const RelationId relation = AddKnownRelation(builder, "gene associated with phenotype");
  absl::flat_hash_set<EntityId> created;
  TabularSpec spec;
  spec.source = std::string(kSource);
  spec.min_fields = 4;
  spec.has_header = false;  // "#Format: ..." comment line
  return ImportTabularFile(
      path, spec, builder, options,
      [&](const std::vector<absl::string_view>& f, RowContext& ctx) -> absl::Status {
        if (absl::EqualsIgnoreCase(f[0], "ncbi_gene_id")) {
          --ctx.report().rows_read;  // header of newer releases
          return absl::OkStatus();
        }
        absl::string_view gene_id = f[0];
        absl::ConsumePrefix(&gene_id, "NCBIGene:");
        if (!IsDigits(gene_id)) return ctx.Malformed("gene id is not an Entrez number");
        if (!absl::StartsWith(f[2], "HP:")) return ctx.Malformed("HPO term id is not an HP id");
        std::optional<EntityId> phenotype = builder.Resolve(BuilderArg(f[2]));
        if (!phenotype || created.contains(*phenotype)) ctx.Unmapped();
        if (!phenotype) {
          phenotype = AddEntityFromSource(builder, f[2], "phenotype", f[3], kSource);
          created.insert(*phenotype);
        }
        const EntityId gene =
            AddEntityFromSource(builder, absl::StrCat("Entrez:", gene_id), "gene", f[1], kSource);
        builder.AddTriple(gene, relation, *phenotype, source);
        return absl::OkStatus();
      });
}

absl::Status ImportDisGeNet(const std::string& path, KgBuilder& builder,
                            const ImportOptions& options) {
  constexpr absl::string_view kSource = "disgenet";
  const SourceId source = builder.AddSource(BuilderArg(kSource), BuilderArg("ODbL 1.0"));
  const RelationId relation = AddKnownRelation(builder, "disease associated with gene");
  TabularSpec spec;
  spec.source = std::string(kSource);
  spec.min_fields = 5;
  spec.expected_header = {"geneId", "geneSymbol", "geneName", "diseaseId", "diseaseName"};
  return ImportTabularFile(
      path, spec, builder, options,
      [&](const std::vector<absl::string_view>& f, RowContext& ctx) -> absl::Status {
        if (!IsDigits(f[0])) return ctx.Malformed("geneId is not an Entrez number");
        const std::string disease_id = NormalizeXref(f[3]);
        if (disease_id.empty()) return ctx.Malformed("diseaseId is not a prefixed id");
        const std::optional<EntityId> disease = builder.Resolve(BuilderArg(disease_id));
        if (!disease || builder.entity(*disease).type != "disease") {
          ctx.Unmapped();
          return absl::OkStatus();
        }
        // DisGeNET's score (0..1: curated sources, the number of them, publications) is the
        // association's strength, with its evidence sources and publication count as the note.
        // A row without a score column, or with one out of range, keeps no score.
        float score = kNoTripleScore;
        std::string note;
        double parsed = 0;
        if (f.size() > 5 && absl::SimpleAtod(f[5], &parsed) && std::isfinite(parsed) &&
            parsed >= 0 && parsed <= 1) {
          score = static_cast<float>(parsed);
          note = absl::StrFormat("DisGeNET score %.2f", parsed);
          if (f.size() > 6 && !f[6].empty()) absl::StrAppend(&note, ", ", f[6], " publications");
          if (f.size() > 8 && !f[8].empty()) absl::StrAppend(&note, "; evidence: ", f[8]);
        }
        const EntityId gene =
            AddEntityFromSource(builder, absl::StrCat("Entrez:", f[0]), "gene", f[1], kSource);
        builder.AddEntitySource(*disease, BuilderArg(kSource));
        builder.AddTriple(*disease, relation, gene, source, score, BuilderArg(note));
        return absl::OkStatus();
      });
}

absl::Status ImportDrugDiseaseIndications(const std::string& path, absl::string_view source_name,
                                          absl::string_view license, KgBuilder& builder,
                                          const ImportOptions& options) {
  const SourceId source = builder.AddSource(BuilderArg(source_name), BuilderArg(license));
  const RelationId treats = AddKnownRelation(builder, "drug treats disease");
  const RelationId palliates = AddKnownRelation(builder, "drug palliates disease");
  TabularSpec spec;
  spec.source = std::string(source_name);
  spec.min_fields = 5;
  spec.expected_header = {"doid_id", "drugbank_id", "disease", "drug", "category"};
  spec.comment = 0;
  return ImportTabularFile(
      path, spec, builder, options,
      [&](const std::vector<absl::string_view>& f, RowContext& ctx) -> absl::Status {
        if (!absl::StartsWith(f[0], "DOID:")) return ctx.Malformed("doid_id is not a DOID");
        if (!absl::StartsWith(f[1], "DB")) return ctx.Malformed("drugbank_id is not a DrugBank id");
        RelationId relation;
        if (f[4] == "DM") {
          relation = treats;
        } else if (f[4] == "SYM") {
          relation = palliates;
        } else if (f[4] == "NOT" || f[4].empty()) {
          return absl::OkStatus();  // curated non-indication or uncategorised: nothing to assert
        } else {
          return ctx.Malformed(absl::StrCat("unknown category '", f[4], "'"));
        }
        const std::optional<EntityId> disease = builder.Resolve(BuilderArg(f[0]));
        if (!disease) {
          ctx.Unmapped();
          return absl::OkStatus();
        }
        const EntityId drug = AddEntityFromSource(builder, absl::StrCat("DrugBank:", f[1]),
                                                  "compound", f[3], source_name);
        builder.AddEntitySource(*disease, BuilderArg(source_name));
        builder.AddTriple(drug, relation, *disease, source);
        return absl::OkStatus();
      });
}

absl::Status ImportPharmacotherapyDb(const std::string& path, KgBuilder& builder,
                                     const ImportOptions& options) {
  return ImportDrugDiseaseIndications(path, "pharmacotherapydb", "CC0", builder, options);
}

absl::Status ImportHsdnSymptoms(const std::string& path, KgBuilder& builder,
                                const ImportOptions& options) {
  constexpr absl::string_view kSource = "hsdn";
  const SourceId source = builder.AddSource(BuilderArg(kSource), BuilderArg("CC0"));
  const RelationId relation = AddKnownRelation(builder, "disease presents symptom");
  TabularSpec spec;
  spec.source = std::string(kSource);
  spec.min_fields = 7;
  spec.expected_header = {"symptom_name", "disease_name", "cooccurs", "tfidf_score",
                          "disease_id",   "symptom_id",   "doid_code"};
  spec.comment = 0;
  return ImportTabularFile(
      path, spec, builder, options,
      [&](const std::vector<absl::string_view>& f, RowContext& ctx) -> absl::Status {
        if (f[5].empty() || f[5].front() != 'D') return ctx.Malformed("symptom_id is not MeSH");
        const std::optional<EntityId> disease = builder.Resolve(BuilderArg(f[6]));
        if (f[6].empty() || !disease) {
          ctx.Unmapped();
          return absl::OkStatus();
        }
        const EntityId symptom =
            AddEntityFromSource(builder, absl::StrCat("MESH:", f[5]), "symptom", f[0], kSource);
        builder.AddEntitySource(*disease, BuilderArg(kSource));
        // The TF-IDF of the symptom in the disease's literature is how characteristic it is
        // (asthma: Respiratory Sounds 1,967, Cough 930, Dyspnea 544 ... Birth Weight 107):
        // recorded as the triple's source score, mapped to [0, 1) by tfidf / (tfidf + 100) (half
        // at 100, about the 97th percentile of HSDN's pairs), with the raw figures as its note.
        double tfidf = 0;
        double cooccurs = 0;
        if (!absl::SimpleAtod(f[3], &tfidf) || !std::isfinite(tfidf) || tfidf < 0 ||
            !absl::SimpleAtod(f[2], &cooccurs)) {
          return ctx.Malformed("tfidf_score / cooccurs is not a non-negative number");
        }
        builder.AddTriple(
            *disease, relation, symptom, source, static_cast<float>(tfidf / (tfidf + 100.0)),
            absl::StrFormat("HSDN tf-idf %.0f, %.0f co-occurrences", tfidf, cooccurs));
        return absl::OkStatus();
      });
}

absl::Status ImportDoDiseaseSymptoms(const std::string& path, KgBuilder& builder,
                                     const ImportOptions& options) {
  constexpr absl::string_view kSource = "do-disease-symptom";
  const SourceId source = builder.AddSource(BuilderArg(kSource), BuilderArg("CC0"));
  const RelationId relation = AddKnownRelation(builder, "disease presents symptom");
  const NameIndex names(builder);
  constexpr std::array<absl::string_view, 2> kSymptomTypes = {"symptom", "phenotype"};
  TabularSpec spec;
  spec.source = std::string(kSource);
  spec.min_fields = 4;
  spec.expected_header = {"disease_id", "disease_label", "symptom_id", "symptom_label"};
  spec.comment = 0;
  return ImportTabularFile(
      path, spec, builder, options,
      [&](const std::vector<absl::string_view>& f, RowContext& ctx) -> absl::Status {
        if (!absl::StartsWith(f[0], "DOID:")) return ctx.Malformed("disease_id is not a DOID");
        if (!absl::StartsWith(f[2], "SYMP:")) return ctx.Malformed("symptom_id is not a SYMP id");
        const std::optional<EntityId> disease = builder.Resolve(BuilderArg(f[0]));
        if (!disease) {
          ctx.Unmapped();
          return absl::OkStatus();
        }
        std::optional<EntityId> symptom = builder.Resolve(BuilderArg(f[2]));
        if (!symptom) {
          symptom = names.Find(f[3], kSymptomTypes);
          if (symptom) {
            builder.AddAlias(*symptom, BuilderArg(f[2]));
          } else {
            symptom = builder.AddEntity(BuilderArg(f[2]), BuilderArg("symptom"), BuilderArg(f[3]));
          }
        }
        builder.AddEntitySource(*symptom, BuilderArg(kSource));
        builder.AddEntitySource(*disease, BuilderArg(kSource));
        builder.AddTriple(*disease, relation, *symptom, source);
        return absl::OkStatus();
      });
}

absl::Status ImportDoLogicalAxioms(const std::string& path, KgBuilder& builder,
                                   const ImportOptions& options) {
  constexpr absl::string_view kSource = "do-axioms";
  const SourceId source = builder.AddSource(BuilderArg(kSource), BuilderArg("CC0"));
  const NameIndex names(builder);
  TabularSpec spec;
  spec.source = std::string(kSource);
  spec.min_fields = 3;
  spec.expected_header = {"ID", "LABEL"};
  spec.comment = 0;

  auto add_restriction = [&](EntityId disease, absl::string_view property, absl::string_view filler,
                             RowContext& ctx) {
    const AxiomProperty* known = nullptr;
    for (const AxiomProperty& p : AxiomProperties()) {
      if (p.property == property) known = &p;
    }
    std::string relation_name =
        known != nullptr ? std::string(known->relation) : absl::StrCat("disease ", property);
    absl::Span<const absl::string_view> types;
    if (known != nullptr) types = known->types;
    constexpr std::array<absl::string_view, 1> kInheritanceTypes = {"phenotype"};
    if (property == "has material basis in" &&
        absl::EndsWith(NormalizeName(filler), "inheritance")) {
      relation_name = "disease has mode of inheritance";
      types = kInheritanceTypes;
    }
    const std::optional<EntityId> target = names.Find(filler, types);
    if (!target) {
      ctx.Unmapped();
      return;
    }
    builder.AddTriple(disease, AddKnownRelation(builder, relation_name, "disease", ""), *target,
                      source);
  };

  return ImportTabularFile(
      path, spec, builder, options,
      [&](const std::vector<absl::string_view>& f, RowContext& ctx) -> absl::Status {
        if (!absl::StartsWith(f[0], "DOID:")) return ctx.Malformed("ID is not a DOID");
        const std::optional<EntityId> disease = builder.Resolve(BuilderArg(f[0]));
        if (!disease) {
          ctx.Unmapped();
          return absl::OkStatus();
        }
        for (absl::string_view axiom : absl::StrSplit(f[2], '|', absl::SkipWhitespace())) {
          const std::vector<Token> tokens = TokenizeAxiom(axiom);
          for (size_t i = 0; i + 2 < tokens.size(); ++i) {
            if (!IsLabel(tokens[i]) || tokens[i + 1].kind != Token::kWord) continue;
            const absl::string_view quantifier = tokens[i + 1].text;
            if (quantifier == "exactly" || quantifier == "min" || quantifier == "max" ||
                quantifier == "only") {
              ctx.Unmapped();
              continue;
            }
            if (quantifier != "some") continue;
            const Token& filler = tokens[i + 2];
            if (IsLabel(filler)) {
              add_restriction(*disease, tokens[i].text, filler.text, ctx);
              continue;
            }
            if (filler.kind != Token::kOpen) continue;
            // some ('a' or 'b' or c): one triple per alternative; anything richer is skipped.
            std::vector<absl::string_view> alternatives;
            size_t j = i + 3;
            bool simple = true;
            while (j < tokens.size() && tokens[j].kind != Token::kClose) {
              const bool expect_label = alternatives.size() * 2 == j - (i + 3);
              const bool fits = expect_label
                                    ? IsLabel(tokens[j])
                                    : tokens[j].kind == Token::kWord && tokens[j].text == "or";
              if (!fits) {
                simple = false;
                break;
              }
              if (expect_label) alternatives.push_back(tokens[j].text);
              ++j;
            }
            if (!simple || alternatives.empty() || j == tokens.size()) {
              ctx.Unmapped();
              continue;
            }
            for (absl::string_view alternative : alternatives) {
              add_restriction(*disease, tokens[i].text, alternative, ctx);
            }
          }
        }
        return absl::OkStatus();
      });
}

absl::Status ImportAbbreviations(const std::string& path, KgBuilder& builder,
                                 const ImportOptions& options) {
  constexpr absl::string_view kSource = "abbreviations";
  const NameIndex names(builder);
  TabularSpec spec;
  spec.source = std::string(kSource);
  spec.min_fields = 2;
  spec.expected_header = {"abr", "long_form"};
  spec.csv = true;
  spec.comment = 0;
  return ImportTabularFile(
      path, spec, builder, options,
      [&](const std::vector<absl::string_view>& f, RowContext& ctx) -> absl::Status {
        const absl::string_view abbreviation = absl::StripAsciiWhitespace(f[0]);
        if (abbreviation.empty() || absl::StripAsciiWhitespace(f[1]).empty()) {
          return ctx.Malformed("empty abbreviation or long form");
        }
        const std::optional<EntityId> entity = names.Find(f[1]);
        if (!entity) {
          ctx.Unmapped();
          return absl::OkStatus();
        }
        AddSynonymIgnoringCase(builder, *entity, abbreviation);
        return absl::OkStatus();
      });
}

}  // namespace ibgraphrag::kgstore::import_
