#include "services/kgstore/import/gwas_importer.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/delimited_reader.h"
#include "common/status_macros.h"
#include "common/text_words.h"
#include "common/utf8.h"
#include "services/kgstore/import/line_reader.h"

namespace ibgraphrag::kgstore::import_ {
namespace {

constexpr absl::string_view kGwasLicense = "CC BY 4.0";
constexpr float kExactConfidence = 1.0f;
constexpr float kSynonymConfidence = 0.95f;
// Dropping a qualifier ("(late onset)", "(age at onset)") may widen the trait.
constexpr float kQualifierDroppedScale = 0.9f;
constexpr float kWordOverlapScale = 0.9f;
constexpr size_t kMaxTraitInNote = 60;

// Lower-case content words of `text`, sorted and unique: word bytes per common::IsWordByte, stop
// words and the possessive "s" of "Crohn's" dropped. Lone letters and digits stay: they tell
// "B cell" from "T-cell" lymphoma and type 1 from type 2 diabetes.
std::vector<std::string> ContentWords(absl::string_view text) {
  std::vector<std::string> words;
  std::string word;
  auto flush = [&] {
    if (!word.empty() && word != "s" && !common::IsEnglishStopWord(word)) words.push_back(word);
    word.clear();
  };
  for (const char c : text) {
    if (common::IsWordByte(static_cast<unsigned char>(c))) {
      word.push_back(absl::ascii_tolower(static_cast<unsigned char>(c)));
    } else {
      flush();
    }
  }
  flush();
  std::sort(words.begin(), words.end());
  words.erase(std::unique(words.begin(), words.end()), words.end());
  return words;
}

// "Alzheimer's disease (late onset)" -> "Alzheimer's disease"; "" when nothing was dropped.
std::string DropParenthesised(absl::string_view text) {
  std::string out;
  int depth = 0;
  bool dropped = false;
  for (const char c : text) {
    if (c == '(' || c == '[') {
      ++depth;
      dropped = true;
    } else if ((c == ')' || c == ']') && depth > 0) {
      --depth;
    } else if (depth == 0) {
      out.push_back(c);
    }
  }
  return dropped ? std::string(absl::StripAsciiWhitespace(out)) : std::string();
}

// Words a disease name may have beyond the trait's and still match: they name the kind of
// concept, not a more specific disease ("type 2 diabetes" -> "type 2 diabetes mellitus", but not
// "germ cell tumor" -> "pure germ cell tumor").
bool IsGenericDiseaseWord(absl::string_view word) {
  static const auto* const kWords = new absl::flat_hash_set<absl::string_view>{
      "disease", "disorder", "syndrome", "mellitus", "condition", "infection", "infectious"};
  return kWords->contains(word);
}

// Traits map to Disease Ontology terms only: the OMIM/ORPHA diseases other sources add are
// numbered, narrower entries ("Hypertriglyceridemia 2") that a GWAS trait does not mean.
bool IsDoDisease(const KgBuilder& builder, EntityId id) {
  const Entity& e = builder.entity(id);
  return e.type == "disease" && absl::StartsWith(e.external_id, "DOID:");
}

// True when every word of `name_words` beyond `trait_words` (both sorted) is generic.
bool OnlyGenericExtras(const std::vector<std::string>& name_words,
                       const std::vector<std::string>& trait_words) {
  for (const std::string& w : name_words) {
    if (!std::binary_search(trait_words.begin(), trait_words.end(), w) &&
        !IsGenericDiseaseWord(w)) {
      return false;
    }
  }
  return true;
}

}  // namespace

NameTraitMapper::NameTraitMapper(const KgBuilder& builder, Options options)
    : builder_(builder), options_(options), names_(builder) {
  for (EntityId id = 0; id < builder.num_entities(); ++id) {
    if (!IsDoDisease(builder, id)) continue;
    const Entity& e = builder.entity(id);
    auto index = [&](absl::string_view name, bool is_name) {
      std::vector<std::string> words = ContentWords(name);
      if (words.empty()) return;
      const uint32_t entry = static_cast<uint32_t>(indexed_.size());
      for (const std::string& w : words) by_word_[w].push_back(entry);
      indexed_.push_back({id, is_name, std::move(words)});
    };
    index(e.name, true);
    for (const std::string& synonym : e.synonyms) index(synonym, false);
  }
}

std::optional<TraitMatch> NameTraitMapper::MapByName(absl::string_view text, float scale) const {
  static constexpr absl::string_view kDiseaseType[] = {"disease"};
  const std::optional<EntityId> id = names_.Find(text, kDiseaseType);
  if (!id || !IsDoDisease(builder_, *id)) return std::nullopt;
  const bool exact = NormalizeName(builder_.entity(*id).name) == NormalizeName(text);
  return TraitMatch{*id, (exact ? kExactConfidence : kSynonymConfidence) * scale,
                    exact ? "exact" : "synonym"};
}

std::optional<TraitMatch> NameTraitMapper::MapByWordOverlap(absl::string_view text) const {
  const std::vector<std::string> words = ContentWords(text);
  if (words.empty()) return std::nullopt;
  absl::flat_hash_map<uint32_t, uint32_t> shared;  // indexed_ entry -> words in common
  for (const std::string& w : words) {
    const auto it = by_word_.find(w);
    if (it == by_word_.end()) continue;
    for (const uint32_t entry : it->second) ++shared[entry];
  }
  float best_score = 0;
  const IndexedName* best = nullptr;
  for (const auto& [entry, common] : shared) {
    const IndexedName& name = indexed_[entry];
    const float dice = 2.0f * common / static_cast<float>(words.size() + name.words.size());
    if (dice < options_.min_word_overlap || !OnlyGenericExtras(name.words, words)) continue;
    // Ties go to preferred names, then to the lower id (the DO's own terms come first).
    if (best == nullptr || dice > best_score ||
        (dice == best_score && std::make_pair(!name.is_name, name.entity) <
                                   std::make_pair(!best->is_name, best->entity))) {
      best_score = dice;
      best = &name;
    }
  }
  if (best == nullptr) return std::nullopt;
  return TraitMatch{best->entity, best_score * kWordOverlapScale, "word overlap"};
}

std::optional<TraitMatch> NameTraitMapper::Map(absl::string_view trait) const {
  trait = absl::StripAsciiWhitespace(trait);
  if (trait.empty()) return std::nullopt;
  if (auto match = MapByName(trait, 1.0f)) return match;
  if (const std::string core = DropParenthesised(trait); !core.empty()) {
    if (auto match = MapByName(core, kQualifierDroppedScale)) {
      match->method = "qualifier dropped";
      return match;
    }
  }
  return MapByWordOverlap(trait);
}

std::string FormatGwasTraitCounts(const GwasTraitCounts& counts) {
  std::vector<std::pair<std::string, int64_t>> methods(counts.traits_by_method.begin(),
                                                       counts.traits_by_method.end());
  std::sort(methods.begin(), methods.end());
  std::string out = "GWAS Catalog traits mapped to diseases:";
  for (const auto& [method, n] : methods) absl::StrAppend(&out, " ", n, " ", method, ",");
  absl::StrAppend(&out, " ", counts.traits_unmapped, " unmapped; ", counts.rows_without_gene,
                  " rows without a gene\n");
  return out;
}

absl::StatusOr<std::vector<std::optional<TraitMatch>>> TraitMapper::MapBatch(
    absl::Span<const std::string> traits) const {
  std::vector<std::optional<TraitMatch>> matches;
  matches.reserve(traits.size());
  for (const std::string& trait : traits) matches.push_back(Map(trait));
  return matches;
}

absl::Status ImportGwasGeneAssociations(const std::string& path, KgBuilder& builder,
                                        const ImportOptions& options) {
  constexpr absl::string_view kSource = "gwas-catalog-curated";
  const SourceId source = builder.AddSource(BuilderArg(kSource), BuilderArg(kGwasLicense));
  const RelationId relation = AddKnownRelation(builder, "disease associated with gene");
  TabularSpec spec;
  spec.source = std::string(kSource);
  spec.min_fields = 8;
  spec.expected_header = {"doid_code", "doid_name", "locus", "high_confidence",
                          "primary",   "status",    "gene",  "symbol"};
  spec.comment = 0;
  return ImportTabularFile(
      path, spec, builder, options,
      [&](const std::vector<absl::string_view>& f, RowContext& ctx) -> absl::Status {
        if (!absl::StartsWith(f[0], "DOID:")) return ctx.Malformed("doid_code is not a DOID");
        if (f[3] != "0" && f[3] != "1") return ctx.Malformed("high_confidence is not 0 or 1");
        const std::optional<EntityId> disease = builder.Resolve(BuilderArg(f[0]));
        if (!disease) {
          ctx.Unmapped();
          return absl::OkStatus();
        }
        const std::optional<EntityId> gene = GeneFromEntrez(builder, f[6], f[7], kSource);
        if (!gene) return ctx.Malformed("gene is not an Entrez id");
        builder.AddEntitySource(*disease, BuilderArg(kSource));
        builder.AddTriple(*disease, relation, *gene, source, f[3] == "1" ? 1.0f : 0.5f,
                          BuilderArg(absl::StrCat("GWAS locus ", f[5])));
        return absl::OkStatus();
      });
}

namespace {

// Column positions in the 2015 download (checked through the header's leading names and the
// field count).
constexpr size_t kTraitColumn = 7;
constexpr size_t kSnpGeneIdsColumn = 17;
constexpr size_t kPValueColumn = 27;
constexpr size_t kMappedTraitColumn = 34;

// The distinct DISEASE/TRAIT and MAPPED_TRAIT texts of the file, in order of appearance.
absl::StatusOr<std::vector<std::string>> DistinctTraits(const std::string& path) {
  IBGR_ASSIGN_OR_RETURN(std::unique_ptr<LineReader> reader, LineReader::Open(path));
  std::vector<std::string> traits;
  absl::flat_hash_set<std::string> seen;
  std::vector<absl::string_view> fields;
  absl::string_view line;
  while (reader->Next(&line)) {
    if (reader->line_number() == 1) continue;  // header
    common::SplitUnquotedLine(line, '\t', &fields);
    if (fields.size() <= kMappedTraitColumn) continue;  // reported by the import pass
    for (const size_t column : {kTraitColumn, kMappedTraitColumn}) {
      if (seen.insert(std::string(fields[column])).second) traits.emplace_back(fields[column]);
    }
  }
  IBGR_RETURN_IF_ERROR(reader->status());
  return traits;
}

// Every distinct trait text of the file mapped in one batch, and the counts by method.
absl::StatusOr<absl::flat_hash_map<std::string, std::optional<TraitMatch>>> MapTraits(
    const std::string& path, const TraitMapper& mapper, GwasTraitCounts& counts) {
  IBGR_ASSIGN_OR_RETURN(const std::vector<std::string> traits, DistinctTraits(path));
  IBGR_ASSIGN_OR_RETURN(std::vector<std::optional<TraitMatch>> matches, mapper.MapBatch(traits));
  absl::flat_hash_map<std::string, std::optional<TraitMatch>> by_trait;
  for (size_t i = 0; i < traits.size() && i < matches.size(); ++i) {
    by_trait.emplace(traits[i], matches[i]);
  }
  return by_trait;
}

// Counts each distinct text once, when a row first uses its mapping.
void CountTrait(absl::string_view trait, const std::optional<TraitMatch>& match,
                absl::flat_hash_set<std::string>& counted, GwasTraitCounts& counts) {
  if (!counted.insert(std::string(trait)).second) return;
  if (match) {
    ++counts.traits_by_method[match->method];
  } else {
    ++counts.traits_unmapped;
  }
}

std::string GwasNote(absl::string_view trait, const TraitMatch& match, const KgBuilder& builder,
                     absl::string_view p_value) {
  trait = common::Utf8Prefix(trait, kMaxTraitInNote);  // never half a character
  return absl::StrFormat("GWAS trait '%s' -> %s (%s, %.2f); p=%s", trait,
                         builder.entity(match.entity).external_id, match.method, match.confidence,
                         p_value);
}

}  // namespace

absl::Status ImportGwasCatalog(const std::string& path, const TraitMapper& mapper,
                               KgBuilder& builder, const ImportOptions& options,
                               GwasTraitCounts* counts) {
  constexpr absl::string_view kSource = "gwas-catalog-2015";
  const SourceId source = builder.AddSource(BuilderArg(kSource), BuilderArg(kGwasLicense));
  const RelationId relation = AddKnownRelation(builder, "disease associated with gene");
  GwasTraitCounts local_counts;
  GwasTraitCounts& trait_counts = counts != nullptr ? *counts : local_counts;
  IBGR_ASSIGN_OR_RETURN(const auto mapped, MapTraits(path, mapper, trait_counts));
  absl::flat_hash_set<std::string> counted;
  auto map = [&](absl::string_view trait) -> std::optional<TraitMatch> {
    const auto it = mapped.find(trait);
    if (it == mapped.end()) return std::nullopt;
    CountTrait(trait, it->second, counted, trait_counts);
    return it->second;
  };
  TabularSpec spec;
  spec.source = std::string(kSource);
  spec.min_fields = kMappedTraitColumn + 1;
  spec.expected_header = {
      "DATE ADDED TO CATALOG", "PUBMEDID", "FIRST AUTHOR", "DATE", "JOURNAL", "LINK", "STUDY",
      "DISEASE/TRAIT"};
  spec.comment = 0;
  return ImportTabularFile(
      path, spec, builder, options,
      [&](const std::vector<absl::string_view>& f, RowContext& ctx) -> absl::Status {
        absl::string_view trait = f[kTraitColumn];
        std::optional<TraitMatch> match = map(trait);
        if (!match && !f[kMappedTraitColumn].empty()) {
          trait = f[kMappedTraitColumn];
          match = map(trait);
        }
        if (f[kSnpGeneIdsColumn].empty()) ++trait_counts.rows_without_gene;
        if (!match || f[kSnpGeneIdsColumn].empty()) {
          ctx.Unmapped();
          return absl::OkStatus();
        }
        const std::string note = GwasNote(trait, *match, builder, f[kPValueColumn]);
        bool any_gene = false;
        for (absl::string_view entrez : absl::StrSplit(f[kSnpGeneIdsColumn], ';')) {
          const std::optional<EntityId> gene = GeneFromEntrez(builder, entrez, "", "");
          if (!gene) continue;
          any_gene = true;
          builder.AddTriple(match->entity, relation, *gene, source, match->confidence,
                            BuilderArg(note));
        }
        if (!any_gene) {
          ctx.Unmapped();
        } else {
          builder.AddEntitySource(match->entity, BuilderArg(kSource));
        }
        return absl::OkStatus();
      });
}

}  // namespace ibgraphrag::kgstore::import_
