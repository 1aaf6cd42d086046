#include "services/alignment/abbreviation_senses.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/question_intent.h"
#include "common/status_macros.h"
#include "services/alignment/text_encoder.h"
#include "services/alignment/text_normalize.h"

namespace ibgraphrag::alignment {
namespace {

// Distinct entries of `refs`, in order of first appearance.
std::vector<uint32_t> EntriesOf(const std::vector<NameRef>& refs) {
  std::vector<uint32_t> out;
  for (const NameRef& r : refs) {
    if (std::find(out.begin(), out.end(), r.entry) == out.end()) out.push_back(r.entry);
  }
  return out;
}

// The abbreviation's entries grouped into senses: entries that share a normalised name (other
// than an abbreviation) or an xref are one concept in two ontologies ("MI": DOID:5844 and
// HP:0001658 "Myocardial infarction") and are chosen or set aside together.
std::vector<std::vector<uint32_t>> GroupSenses(const Lexicon& lexicon,
                                               const std::vector<uint32_t>& entries) {
  std::vector<absl::flat_hash_set<std::string>> keys(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    const LexiconEntry& e = lexicon.entries[entries[i]];
    keys[i].insert(NormalizeForMatch(e.name));
    for (const std::string& s : e.synonyms) keys[i].insert(NormalizeForMatch(s));
    for (const std::string& x : e.xrefs) keys[i].insert(absl::StrCat("xref:", x));
    keys[i].insert(absl::StrCat("xref:", e.external_id));
  }
  std::vector<size_t> group(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    group[i] = i;
    for (size_t j = 0; j < i && group[i] == i; ++j) {
      for (const std::string& k : keys[i]) {
        if (keys[j].contains(k)) {
          group[i] = group[j];
          break;
        }
      }
    }
  }
  std::vector<std::vector<uint32_t>> out;
  absl::flat_hash_map<size_t, size_t> at;
  for (size_t i = 0; i < entries.size(); ++i) {
    auto [it, inserted] = at.try_emplace(group[i], out.size());
    if (inserted) out.emplace_back();
    out[it->second].push_back(entries[i]);
  }
  return out;
}

// Sum over mentions other than `skip` of the mean enriched vector of the entities each names.
std::vector<float> OtherMentionsContext(const AlignmentBundle& bundle,
                                        const std::vector<Mention>& mentions, size_t skip) {
  const int dim = bundle.manifest.dim;
  std::vector<float> context(dim, 0.0f);
  for (size_t j = 0; j < mentions.size(); ++j) {
    if (j == skip) continue;
    const std::vector<uint32_t> entries = EntriesOf(mentions[j].matches);
    for (uint32_t e : entries) {
      const float* v = bundle.enriched_row(e);
      for (int d = 0; d < dim; ++d) context[d] += v[d] / entries.size();
    }
  }
  double norm = 0;
  for (float x : context) norm += static_cast<double>(x) * x;
  if (norm > 0) {
    const float scale = static_cast<float>(1.0 / std::sqrt(norm));
    for (float& x : context) x *= scale;
  }
  return context;
}

// The sense among `senses` with the best fit to the question and the context (see header): its
// index, and the best-fitting entry of it.
std::pair<size_t, uint32_t> BestSense(const AlignmentBundle& bundle,
                                      absl::Span<const float> question,
                                      const std::vector<float>& context,
                                      const std::vector<std::vector<uint32_t>>& senses) {
  const int dim = bundle.manifest.dim;
  std::pair<size_t, uint32_t> best = {0, senses[0][0]};
  float best_fit = -1e30f;
  for (size_t s = 0; s < senses.size(); ++s) {  // lexicon order: the first of equals wins
    for (uint32_t e : senses[s]) {
      const float* v = bundle.enriched_row(e);
      const float fit = Dot(v, question.data(), dim) + Dot(v, context.data(), dim);
      if (fit > best_fit) {
        best = {s, e};
        best_fit = fit;
      }
    }
  }
  return best;
}

// The word right before `begin` and right after `end` in `text`, lower case ("" at the edges).
std::pair<std::string, std::string> NeighbourWords(absl::string_view text, size_t begin,
                                                   size_t end) {
  auto is_word = [](char c) { return absl::ascii_isalnum(c) || c == '-'; };
  std::string before, after;
  size_t b = std::min(begin, text.size());
  while (b > 0 && !is_word(text[b - 1])) --b;
  size_t a = b;
  while (a > 0 && is_word(text[a - 1])) --a;
  before = absl::AsciiStrToLower(text.substr(a, b - a));
  size_t e = std::min(end, text.size());
  while (e < text.size() && !is_word(text[e])) ++e;
  size_t f = e;
  while (f < text.size() && is_word(text[f])) ++f;
  after = absl::AsciiStrToLower(text.substr(e, f - e));
  return {before, after};
}

// The senses the text itself types: "Gene NF1", "the NF1 gene" name a gene, so of NF1's senses
// (the gene NF1, neurofibromatosis 1) only those with a gene entry stay in the running. Empty
// when the neighbouring words type nothing or no sense has that type (all stay).
std::vector<size_t> SensesTypedByText(const Lexicon& lexicon, absl::string_view text,
                                      const Mention& m,
                                      const std::vector<std::vector<uint32_t>>& senses) {
  const auto [before, after] = NeighbourWords(text, m.begin, m.end);
  const bool gene = before == "gene" || before == "genes" || after == "gene" || after == "genes";
  std::vector<size_t> out;
  if (!gene) return out;
  for (size_t s = 0; s < senses.size(); ++s) {
    for (uint32_t e : senses[s]) {
      if (lexicon.entries[e].type == "gene") {
        out.push_back(s);
        break;
      }
    }
  }
  return out;
}

// The senses of a type the question's intent expects of its topic (QuestionIntent::TopicTypes):
// "COPD" is both DO's chronic obstructive pulmonary disease and the Entrez record of the COPD
// locus, and "What drugs treat COPD?" asks about a disease. Empty when no sense, or none of the
// types, fits.
std::vector<size_t> SensesTypedByIntent(const Lexicon& lexicon,
                                        const std::vector<std::string>& types,
                                        const std::vector<std::vector<uint32_t>>& senses) {
  std::vector<size_t> out;
  if (types.empty()) return out;
  for (size_t s = 0; s < senses.size(); ++s) {
    for (uint32_t e : senses[s]) {
      if (std::find(types.begin(), types.end(), lexicon.entries[e].type) != types.end()) {
        out.push_back(s);
        break;
      }
    }
  }
  return out;
}

}  // namespace

void ChooseAbbreviationSenses(const AlignmentBundle& bundle, absl::Span<const float> question,
                              std::vector<Mention>* mentions, absl::string_view text) {
  std::optional<std::vector<std::string>> topic_types;  // read once, when needed
  for (size_t i = 0; i < mentions->size(); ++i) {
    Mention& m = (*mentions)[i];
    if (m.expanded_from.empty() || m.matches.empty()) continue;
    std::vector<std::vector<uint32_t>> senses = GroupSenses(bundle.lexicon, EntriesOf(m.matches));
    // A sense the text types ("Gene XPA") wins over senses it excludes, whatever the embedding
    // says: the disease XPA abbreviates is named beside it in the same claim, so the question
    // vector favours the disease. Without such a word, the question's intent types its topic
    // ("What drugs treat COPD?": a disease, not the gene record of the COPD locus).
    if (senses.size() > 1) {
      std::vector<size_t> typed = SensesTypedByText(bundle.lexicon, text, m, senses);
      if (typed.empty()) {
        if (!topic_types) topic_types = common::ReadQuestionIntent(text).TopicTypes();
        typed = SensesTypedByIntent(bundle.lexicon, *topic_types, senses);
      }
      if (!typed.empty() && typed.size() < senses.size()) {
        std::vector<std::vector<uint32_t>> kept;
        for (size_t s : typed) kept.push_back(senses[s]);
        senses = std::move(kept);
      }
    }
    std::pair<size_t, uint32_t> chosen = {0, senses[0][0]};
    if (senses.size() > 1 && question.size() == static_cast<size_t>(bundle.manifest.dim)) {
      chosen = BestSense(bundle, question, OtherMentionsContext(bundle, *mentions, i), senses);
    }
    const std::vector<uint32_t>& sense = senses[chosen.first];
    std::vector<NameRef> kept;
    for (const NameRef& r : m.matches) {
      const bool in_sense = std::find(sense.begin(), sense.end(), r.entry) != sense.end();
      (in_sense ? kept : m.other_senses).push_back(r);
    }
    m.matches = std::move(kept);
    m.expansion = bundle.lexicon.entries[chosen.second].name;
    m.expansion_id = bundle.lexicon.entries[chosen.second].external_id;
  }
}

absl::Status ChooseAbbreviationSensesOfText(const AlignmentBundle& bundle,
                                            const TextEncoder& encoder, absl::string_view text,
                                            std::vector<Mention>* mentions) {
  bool ambiguous = false;
  for (const Mention& m : *mentions) {
    if (!m.expanded_from.empty() && EntriesOf(m.matches).size() > 1 &&
        GroupSenses(bundle.lexicon, EntriesOf(m.matches)).size() > 1) {
      ambiguous = true;
    }
  }
  std::vector<float> question;
  if (ambiguous) {
    IBGR_ASSIGN_OR_RETURN(question, encoder.Encode(text));
  }
  ChooseAbbreviationSenses(bundle, question, mentions, text);
  return absl::OkStatus();
}

}  // namespace ibgraphrag::alignment
