#include "services/kgstore/import/ontology_importers.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "services/kgstore/import/line_reader.h"

namespace ibgraphrag::kgstore::import_ {
namespace {

struct OboTerm {
  std::string id;
  std::string name;
  std::string definition;
  std::vector<std::string> synonyms;
  std::vector<std::string> exact_synonyms;  // the EXACT scope's, also in `synonyms`
  std::vector<std::string> xrefs;
  std::vector<std::string> alt_ids;
  std::vector<std::string> parents;
  std::string replaced_by;
  bool obsolete = false;
};

// Parses an OBO quoted string at the start of `value` (backslash escapes allowed). On success
// `rest` is what follows the closing quote.
bool ParseOboQuoted(absl::string_view value, std::string* out, absl::string_view* rest) {
  out->clear();
  if (value.empty() || value.front() != '"') return false;
  for (size_t i = 1; i < value.size(); ++i) {
    const char c = value[i];
    if (c == '\\' && i + 1 < value.size()) {
      const char next = value[++i];
      out->push_back(next == 'n' ? ' ' : next == 't' ? ' ' : next);
      continue;
    }
    if (c == '"') {
      *rest = value.substr(i + 1);
      return true;
    }
    out->push_back(c);
  }
  return false;
}

// The id at the start of an is_a / alt_id / replaced_by value ("DOID:175 ! vascular cancer").
absl::string_view LeadingId(absl::string_view value) {
  value = absl::StripLeadingAsciiWhitespace(value);
  const size_t stop = value.find_first_of(" \t!{");
  return stop == absl::string_view::npos ? value : value.substr(0, stop);
}

bool PrefixAllowed(absl::string_view alias, const std::vector<std::string>& prefixes) {
  if (prefixes.empty()) return true;
  const size_t colon = alias.find(':');
  const absl::string_view prefix = alias.substr(0, colon);
  return std::find(prefixes.begin(), prefixes.end(), prefix) != prefixes.end();
}

// The term stanzas of an OBO file, with malformed lines reported through `ctx`.
absl::Status ReadOboTerms(LineReader& reader, RowContext& ctx, std::vector<OboTerm>* terms) {
  bool in_term = false;
  bool term_has_id = false;
  int64_t term_line = 0;
  absl::string_view line;
  std::string text;
  auto close_term = [&]() -> absl::Status {
    if (!in_term) return absl::OkStatus();
    in_term = false;
    if (term_has_id) return absl::OkStatus();
    terms->pop_back();
    return ctx.MalformedAt(term_line, "[Term] stanza without id");
  };
  while (reader.Next(&line)) {
    line = absl::StripTrailingAsciiWhitespace(line);
    if (line.empty() || line.front() == '!') continue;
    if (line.front() == '[') {
      IBGR_RETURN_IF_ERROR(close_term());
      if (line == "[Term]") {
        in_term = true;
        term_has_id = false;
        term_line = reader.line_number();
        terms->emplace_back();
        ++ctx.report().rows_read;
      }
      continue;
    }
    if (!in_term) continue;
    const size_t colon = line.find(": ");
    if (colon == absl::string_view::npos) {
      // A bare "tag:" with an empty value is legal; anything else is not a tag-value pair.
      if (line.back() == ':') continue;
      IBGR_RETURN_IF_ERROR(ctx.Malformed("expected 'tag: value'"));
      continue;
    }
    const absl::string_view tag = line.substr(0, colon);
    const absl::string_view value = absl::StripAsciiWhitespace(line.substr(colon + 2));
    OboTerm& term = terms->back();
    absl::string_view rest;
    if (tag == "id") {
      term.id = std::string(LeadingId(value));
      term_has_id = !term.id.empty();
    } else if (tag == "name") {
      term.name = std::string(value);
    } else if (tag == "def") {
      if (!ParseOboQuoted(value, &text, &rest)) {
        IBGR_RETURN_IF_ERROR(ctx.Malformed("def: unterminated quoted text"));
        continue;
      }
      term.definition = text;
    } else if (tag == "synonym") {
      if (!ParseOboQuoted(value, &text, &rest)) {
        IBGR_RETURN_IF_ERROR(ctx.Malformed("synonym: unterminated quoted text"));
        continue;
      }
      term.synonyms.push_back(text);
      if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(rest), "EXACT")) {
        term.exact_synonyms.push_back(text);
      }
    } else if (tag == "xref") {
      term.xrefs.emplace_back(value);
    } else if (tag == "alt_id") {
      term.alt_ids.emplace_back(LeadingId(value));
    } else if (tag == "is_a") {
      term.parents.emplace_back(LeadingId(value));
    } else if (tag == "replaced_by") {
      term.replaced_by = std::string(LeadingId(value));
    } else if (tag == "is_obsolete") {
      term.obsolete = value == "true";
    }
  }
  IBGR_RETURN_IF_ERROR(close_term());
  return reader.status();
}

// The term stanzas of the OBO file at `path`, its digest in ctx's report.
absl::StatusOr<std::vector<OboTerm>> ReadOboFile(const std::string& path, RowContext& ctx) {
  IBGR_ASSIGN_OR_RETURN(std::unique_ptr<LineReader> reader, LineReader::Open(path));
  ctx.set_line(reader.get());
  absl::Cleanup no_line = [&] { ctx.set_line(nullptr); };
  std::vector<OboTerm> terms;
  IBGR_RETURN_IF_ERROR(ReadOboTerms(*reader, ctx, &terms));
  IBGR_ASSIGN_OR_RETURN(ctx.report().sha256, reader->FinishSha256());
  return terms;
}

// The anatomy entity `words` name, tried as written, in the singular, as UBERON's "X of body"
// ("skin" -> "skin of body") and as "X gland" ("the thyroid" -> "thyroid gland").
std::optional<EntityId> AnatomyNamed(
    const std::string& run,
    const std::function<std::optional<EntityId>(const std::string&)>& find) {
  std::vector<std::string> forms = {run};
  if (absl::EndsWith(run, "ies")) forms.push_back(absl::StrCat(run.substr(0, run.size() - 3), "y"));
  if (absl::EndsWith(run, "es")) forms.push_back(run.substr(0, run.size() - 2));
  if (absl::EndsWith(run, "s")) forms.push_back(run.substr(0, run.size() - 1));
  forms.push_back(absl::StrCat(run, " of body"));
  forms.push_back(absl::StrCat(run, " gland"));
  for (const std::string& form : forms) {
    if (std::optional<EntityId> id = find(form)) return id;
  }
  return std::nullopt;
}

struct NamedSite {
  EntityId anatomy;
  std::string words;  // the definition's words that named it
};

// The anatomy entities a "located_in" phrase names. The first: the longest run of its first words
// (articles dropped, at most 8) that AnatomyNamed resolves. Then, while the phrase goes on as a
// list (", ", " and ", " or "), each next item if all its words name one: "located_in kidney,
// ureter, bladder and urethra" names the kidney, the ureter and so on, up to the first item that
// names nothing. The phrase ends at . ; : ( ) [ ].
std::vector<NamedSite> LocationsNamed(
    absl::string_view phrase,
    const std::function<std::optional<EntityId>(const std::string&)>& find) {
  constexpr size_t kMaxWords = 8;
  const size_t stop = phrase.find_first_of(".;:()[]");
  if (stop != absl::string_view::npos) phrase = phrase.substr(0, stop);
  // Words, with "," as a word of its own.
  std::vector<std::string> words;
  for (absl::string_view w : absl::StrSplit(phrase, ' ', absl::SkipWhitespace())) {
    const bool comma = absl::ConsumeSuffix(&w, ",");
    if (!w.empty()) words.emplace_back(w);
    if (comma) words.emplace_back(",");
  }
  auto is_article = [](absl::string_view w) {
    return absl::EqualsIgnoreCase(w, "the") || absl::EqualsIgnoreCase(w, "a") ||
           absl::EqualsIgnoreCase(w, "an");
  };
  auto is_separator = [](absl::string_view w) { return w == "," || w == "and" || w == "or"; };
  size_t at = 0;
  while (at < words.size() && is_article(words[at])) ++at;
  std::vector<NamedSite> out;
  // The first site: the longest run that names one, not across a comma.
  size_t end = at;
  while (end < words.size() && end - at < kMaxWords && words[end] != ",") ++end;
  for (size_t k = end; k > at; --k) {
    const std::string run = absl::StrJoin(words.begin() + at, words.begin() + k, " ");
    if (std::optional<EntityId> id = AnatomyNamed(run, find)) {
      out.push_back({*id, run});
      at = k;
      break;
    }
  }
  if (out.empty()) return out;
  // The list's further items.
  while (at < words.size() && is_separator(words[at])) {
    while (at < words.size() && is_separator(words[at])) ++at;
    while (at < words.size() && is_article(words[at])) ++at;
    size_t item_end = at;
    while (item_end < words.size() && !is_separator(words[item_end]) && item_end - at < kMaxWords) {
      ++item_end;
    }
    if (item_end == at) break;
    const std::string item = absl::StrJoin(words.begin() + at, words.begin() + item_end, " ");
    const std::optional<EntityId> id = AnatomyNamed(item, find);
    if (!id) break;
    out.push_back({*id, item});
    at = item_end;
  }
  return out;
}

}  // namespace

absl::Status ImportObo(const std::string& path, const OboImportSpec& spec, KgBuilder& builder,
                       const ImportOptions& options) {
  RowContext ctx(spec.source, path, options);
  IBGR_ASSIGN_OR_RETURN(const std::vector<OboTerm> terms, ReadOboFile(path, ctx));

  const size_t triples_before = builder.num_triples();
  const int64_t merges_before = builder.num_merges();
  auto wanted = [&](const OboTerm& t) { return absl::StartsWith(t.id, spec.id_prefix); };
  // For licence filtering of synonyms etc.
  builder.SetAttributeSource(BuilderArg(spec.source), BuilderArg(spec.license));
  absl::Cleanup no_attribute_source = [&] { builder.SetAttributeSource(""); };
  // Canonical ids first, so an xref naming another term's id never captures that id.
  std::vector<EntityId> ids(terms.size(), kInvalidEntity);
  for (size_t i = 0; i < terms.size(); ++i) {
    const OboTerm& t = terms[i];
    if (t.obsolete || !wanted(t)) continue;
    ids[i] = AddEntityFromSource(builder, t.id, spec.entity_type, t.name, spec.source);
  }
  // "UMLS:" when names are shared over UMLS xrefs (spec.share_names_xref_prefix), else empty.
  const std::string share_prefix =
      spec.share_names_xref_prefix.empty() ? "" : absl::StrCat(spec.share_names_xref_prefix, ":");
  for (size_t i = 0; i < terms.size(); ++i) {
    if (ids[i] == kInvalidEntity) continue;
    const OboTerm& t = terms[i];
    for (const std::string& synonym : t.synonyms) AddSynonymIgnoringCase(builder, ids[i], synonym);
    if (!t.definition.empty()) builder.SetDefinition(ids[i], BuilderArg(t.definition));
    for (const std::string& alt : t.alt_ids) builder.AddAlias(ids[i], BuilderArg(alt));
    for (const std::string& xref : t.xrefs) {
      const std::string alias = NormalizeXref(xref);
      if (alias.empty() || alias == t.id || !PrefixAllowed(alias, spec.alias_prefixes)) continue;
      if (builder.AddAlias(ids[i], BuilderArg(alias))) continue;
      // Bound to another entity already: one concept in two ontologies, names shared.
      if (share_prefix.empty() || !absl::StartsWith(alias, share_prefix)) continue;
      const std::optional<EntityId> twin = builder.Resolve(BuilderArg(alias));
      if (!twin || *twin == ids[i] || builder.entity(*twin).type != spec.share_names_with_type) {
        continue;
      }
      AddSynonymIgnoringCase(builder, *twin, t.name);
      for (const std::string& synonym : t.exact_synonyms) {
        AddSynonymIgnoringCase(builder, *twin, synonym);
      }
    }
  }
  for (const OboTerm& t : terms) {
    if (!t.obsolete || t.replaced_by.empty() || !wanted(t)) continue;
    if (auto target = builder.Resolve(BuilderArg(t.replaced_by)))
      builder.AddAlias(*target, BuilderArg(t.id));
  }
  const RelationId is_a =
      AddKnownRelation(builder, spec.is_a_relation, spec.entity_type, spec.entity_type);
  const SourceId source = builder.AddSource(BuilderArg(spec.source), BuilderArg(spec.license));
  for (size_t i = 0; i < terms.size(); ++i) {
    if (ids[i] == kInvalidEntity) continue;
    for (const std::string& parent_id : terms[i].parents) {
      const std::optional<EntityId> parent = builder.Resolve(BuilderArg(parent_id));
      if (!parent) {
        ctx.Unmapped();
        continue;
      }
      builder.AddTriple(ids[i], is_a, *parent, source);
    }
  }
  ctx.report().triples_added = static_cast<int64_t>(builder.num_triples() - triples_before);
  ctx.report().triples_merged = builder.num_merges() - merges_before;
  builder.AddReport(std::move(ctx.report()));
  return absl::OkStatus();
}

absl::Status ImportDiseaseOntologyObo(const std::string& path, KgBuilder& builder,
                                      const ImportOptions& options) {
  OboImportSpec spec;
  spec.source = "doid";
  spec.license = "CC0";
  spec.entity_type = "disease";
  spec.id_prefix = "DOID:";
  spec.is_a_relation = "disease is a subtype of disease";
  return ImportObo(path, spec, builder, options);
}

absl::Status ImportHpoObo(const std::string& path, KgBuilder& builder,
                          const ImportOptions& options) {
  OboImportSpec spec;
  spec.source = "hpo";
  spec.license = "HPO license";
  spec.entity_type = "phenotype";
  spec.id_prefix = "HP:";
  spec.is_a_relation = "phenotype is a subtype of phenotype";
  spec.alias_prefixes = {"UMLS", "MESH", "SNOMEDCT", "MEDDRA"};
  // UMLS only: a MeSH descriptor is coarser than the HPO term citing it ("Facial erythema" cites
  // rosacea's), a CUI mostly one concept.
  spec.share_names_xref_prefix = "UMLS";
  spec.share_names_with_type = "disease";
  return ImportObo(path, spec, builder, options);
}

absl::Status ImportDoXrefs(const std::string& path, KgBuilder& builder,
                           const ImportOptions& options) {
  TabularSpec spec;
  spec.source = "do-xrefs";
  spec.license = "CC0";
  spec.min_fields = 3;
  spec.expected_header = {"id", "label", "xref"};
  spec.unquote_tsv = true;
  return ImportTabularFile(
      path, spec, builder, options,
      [&](const std::vector<absl::string_view>& f, RowContext& ctx) -> absl::Status {
        if (!absl::StartsWith(f[0], "DOID:")) return ctx.Malformed("id is not a DOID");
        const std::string alias = NormalizeXref(f[2]);
        if (alias.empty()) return ctx.Malformed("xref is not a prefixed id");
        const std::optional<EntityId> id = builder.Resolve(BuilderArg(f[0]));
        if (!id) {
          ctx.Unmapped();
          return absl::OkStatus();
        }
        builder.AddAlias(*id, BuilderArg(alias));
        builder.AddEntitySource(*id, BuilderArg("do-xrefs"));
        return absl::OkStatus();
      });
}

absl::Status ImportHpoLaySynonyms(const std::string& path, KgBuilder& builder,
                                  const ImportOptions& options) {
  TabularSpec spec;
  spec.source = "hpo-lay-synonyms";
  spec.license = "HPO license";
  spec.min_fields = 3;
  spec.expected_header = {"term", "term_label", "layperson"};
  spec.unquote_tsv = true;
  return ImportTabularFile(
      path, spec, builder, options,
      [&](const std::vector<absl::string_view>& f, RowContext& ctx) -> absl::Status {
        // <http://purl.obolibrary.org/obo/HP_0002648> -> HP:0002648
        absl::string_view iri = f[0];
        if (!absl::ConsumePrefix(&iri, "<") || !absl::ConsumeSuffix(&iri, ">")) {
          return ctx.Malformed("term is not an <IRI>");
        }
        const size_t slash = iri.rfind('/');
        absl::string_view local = iri.substr(slash == absl::string_view::npos ? 0 : slash + 1);
        const size_t underscore = local.find('_');
        if (underscore == absl::string_view::npos) return ctx.Malformed("IRI is not an OBO id");
        const std::string id =
            absl::StrCat(local.substr(0, underscore), ":", local.substr(underscore + 1));
        const std::optional<EntityId> entity = builder.Resolve(BuilderArg(id));
        if (!entity) {
          ctx.Unmapped();
          return absl::OkStatus();
        }
        AddSynonymIgnoringCase(builder, *entity, f[2]);
        return absl::OkStatus();
      });
}

absl::Status ImportDoDefinitionLocations(const std::string& path, const AnatomyNames& uberon,
                                         KgBuilder& builder, const ImportOptions& options) {
  constexpr absl::string_view kSource = "do-definitions";
  constexpr int kMaxAncestorSteps = 8;
  RowContext ctx(std::string(kSource), path, options);
  IBGR_ASSIGN_OR_RETURN(const std::vector<OboTerm> terms, ReadOboFile(path, ctx));
  const size_t triples_before = builder.num_triples();
  const int64_t merges_before = builder.num_merges();

  const NameIndex names(builder);
  // UBERON names as normalised, and without spaces ("gallbladder" is UBERON's "gall bladder").
  absl::flat_hash_map<std::string, absl::string_view> uberon_by_name;
  absl::flat_hash_map<std::string, absl::string_view> uberon_by_compact_name;
  const auto compact = [](absl::string_view name) {
    return absl::StrReplaceAll(NormalizeName(name), {{" ", ""}});
  };
  for (const auto& [id, name] : uberon) {
    // Two terms of one name: the lower id, whatever the map's (per-process) iteration order.
    for (auto [map, key] : {std::pair{&uberon_by_name, NormalizeName(name)},
                            std::pair{&uberon_by_compact_name, compact(name)}}) {
      auto [it, added] = map->emplace(key, id);
      if (!added && absl::string_view(id) < it->second) it->second = id;
    }
  }
  static constexpr absl::string_view kAnatomy[] = {"anatomy"};
  // An anatomy entity of the KG by name, else the UBERON term of that name (created as an anatomy
  // entity the first time a definition names it: the stomach, colon or ovary are in no other
  // source of the embedded KG).
  const auto find = [&](const std::string& form) -> std::optional<EntityId> {
    if (std::optional<EntityId> id = names.Find(form, kAnatomy)) return id;
    absl::string_view uberon_id;
    if (const auto it = uberon_by_name.find(NormalizeName(form)); it != uberon_by_name.end()) {
      uberon_id = it->second;
    } else if (const auto compact_it = uberon_by_compact_name.find(compact(form));
               compact_it != uberon_by_compact_name.end()) {
      uberon_id = compact_it->second;
    } else {
      return std::nullopt;
    }
    if (std::optional<EntityId> id = builder.Resolve(BuilderArg(uberon_id))) {
      if (builder.entity(*id).type == "anatomy") return id;
      return std::nullopt;
    }
    return AddEntityFromSource(builder, uberon_id, "anatomy", uberon.at(std::string(uberon_id)),
                               kSource);
  };
  absl::flat_hash_map<absl::string_view, size_t> index_of;
  std::vector<std::vector<NamedSite>> own(terms.size());  // each term's own sites
  for (size_t i = 0; i < terms.size(); ++i) {
    const OboTerm& t = terms[i];
    if (t.obsolete || !absl::StartsWith(t.id, "DOID:")) continue;
    index_of.emplace(t.id, i);
    // DO's relation "located_in", and the same words in plain prose ("an inflammation that is
    // located in the gallbladder"), in the order the definition names them.
    std::vector<size_t> starts;
    for (const absl::string_view marker :
         {absl::string_view("located_in "), absl::string_view("located in ")}) {
      for (size_t at = absl::string_view(t.definition).find(marker); at != absl::string_view::npos;
           at = absl::string_view(t.definition).find(marker, at + 1)) {
        // A word of its own ("dislocated in" is not "located in").
        if (at > 0 && absl::ascii_isalpha(static_cast<unsigned char>(t.definition[at - 1]))) {
          continue;
        }
        starts.push_back(at + marker.size());
      }
    }
    std::sort(starts.begin(), starts.end());
    for (const size_t start : starts) {
      std::vector<NamedSite> sites =
          LocationsNamed(absl::string_view(t.definition).substr(start), find);
      if (sites.empty()) ctx.Unmapped();
      for (NamedSite& site : sites) {
        const bool seen = std::any_of(own[i].begin(), own[i].end(), [&](const NamedSite& l) {
          return l.anatomy == site.anatomy;
        });
        if (!seen) own[i].push_back(std::move(site));
      }
    }
  }

  const SourceId source = builder.AddSource(BuilderArg(kSource), BuilderArg("CC0"));
  const RelationId localizes = AddKnownRelation(builder, "disease localizes to anatomy");
  for (size_t i = 0; i < terms.size(); ++i) {
    const OboTerm& t = terms[i];
    if (t.obsolete || !absl::StartsWith(t.id, "DOID:")) continue;
    const std::optional<EntityId> disease = builder.Resolve(BuilderArg(t.id));
    if (!disease || builder.entity(*disease).type != "disease") continue;
    // The nearest level of is_a ancestors that has a location (the term itself at step 0).
    std::vector<size_t> level = {i};
    absl::flat_hash_set<size_t> visited = {i};
    for (int step = 0; step <= kMaxAncestorSteps && !level.empty(); ++step) {
      bool found = false;
      if (step > 0) {
        // An ancestor's one site is its subtypes' too (eye disease -> eye). Several sites are
        // alternatives ("located_in lungs, ... or located_in gastrointestinal tract"), of which a
        // subtype has one, so none is inherited (multidrug-resistant tuberculosis is not put in
        // the brain).
        absl::flat_hash_set<EntityId> sites;
        for (size_t from : level) {
          for (const NamedSite& l : own[from]) sites.insert(l.anatomy);
        }
        if (sites.size() > 1) break;
      }
      for (size_t from : level) {
        for (size_t k = 0; k < own[from].size(); ++k) {
          const NamedSite& l = own[from][k];
          found = true;
          const std::string note = step == 0
                                       ? absl::StrCat("DO definition: located_in ", l.words)
                                       : absl::StrCat("DO definition of ", terms[from].name, " (",
                                                      terms[from].id, "): located_in ", l.words);
          // DO names the main site first (tuberculosis: "located_in lungs, located_in lymph
          // nodes, located_in pericardium, ..."): each later location found scores 0.01 less.
          const double score = std::max(1.0 / (1 + step) - 0.01 * static_cast<double>(k), 0.01);
          builder.AddTriple(*disease, localizes, l.anatomy, source, static_cast<float>(score),
                            BuilderArg(note));
        }
      }
      if (found) break;
      std::vector<size_t> up;
      for (size_t from : level) {
        for (const std::string& parent : terms[from].parents) {
          const auto it = index_of.find(parent);
          if (it != index_of.end() && visited.insert(it->second).second) up.push_back(it->second);
        }
      }
      level = std::move(up);
    }
  }
  ctx.report().triples_added = static_cast<int64_t>(builder.num_triples() - triples_before);
  ctx.report().triples_merged = builder.num_merges() - merges_before;
  builder.AddReport(std::move(ctx.report()));
  return absl::OkStatus();
}

}  // namespace ibgraphrag::kgstore::import_
