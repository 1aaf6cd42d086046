// Test fixtures: a three-entity lexicon whose MSCA scores can be computed by hand, and a
// keyword-count encoder that makes those numbers easy to derive.
#ifndef IBGRAPHRAG_SERVICES_ALIGNMENT_TESTING_TEST_FIXTURES_H_
#define IBGRAPHRAG_SERVICES_ALIGNMENT_TESTING_TEST_FIXTURES_H_

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "services/alignment/aligner.h"
#include "services/alignment/bundle.h"
#include "services/alignment/lexicon.h"
#include "services/alignment/text_encoder.h"
#include "services/alignment/text_normalize.h"

namespace ibgraphrag::alignment::testing {

// Dimension i counts the occurrences of keywords[i] among the text's lower-case tokens; the
// vector is then L2-normalised. Texts without keywords encode as all-zero vectors.
class KeywordEncoder final : public TextEncoder {
 public:
  explicit KeywordEncoder(std::vector<std::string> keywords = {"heart", "lung", "fever"})
      : keywords_(std::move(keywords)), id_(absl::StrCat("keyword-test-d", keywords_.size())) {}
  const std::string& id() const override { return id_; }
  int dim() const override { return static_cast<int>(keywords_.size()); }
  absl::Status EncodeBatch(absl::Span<const std::string> texts,
                           absl::Span<float> out) const override {
    for (size_t i = 0; i < texts.size(); ++i) {
      float* row = out.data() + i * keywords_.size();
      for (size_t k = 0; k < keywords_.size(); ++k) row[k] = 0;
      for (const Token& t : Tokenize(texts[i])) {
        for (size_t k = 0; k < keywords_.size(); ++k) row[k] += t.lower == keywords_[k];
      }
      L2Normalize(absl::MakeSpan(row, keywords_.size()));
    }
    return absl::OkStatus();
  }

 private:
  std::vector<std::string> keywords_;
  std::string id_;
};

// Enriched texts (name; synonyms; abbreviations. definition) and their keyword vectors:
//   0 "myocardial infarction; heart attack; MI. Death of heart muscle."  heart x2 -> (1, 0, 0)
//   1 "pneumonia. Infection of the lung with fever."                      -> (0, 1, 1)/sqrt(2)
//   2 "heart failure. The heart cannot pump enough; fluid in the lung."   -> (2, 1, 0)/sqrt(5)
inline Lexicon TinyLexicon() {
  Lexicon lexicon;
  lexicon.source = "test:tiny";
  lexicon.source_hash = "0";
  LexiconEntry mi;
  mi.kg_id = 10;
  mi.external_id = "DOID:5844";
  mi.type = "disease";
  mi.name = "myocardial infarction";
  mi.synonyms = {"heart attack"};
  mi.abbreviations = {"MI"};
  mi.definition = "Death of heart muscle.";
  mi.xrefs = {"UMLS:C0027051"};
  LexiconEntry pneumonia;
  pneumonia.kg_id = 11;
  pneumonia.external_id = "DOID:552";
  pneumonia.type = "disease";
  pneumonia.name = "pneumonia";
  pneumonia.definition = "Infection of the lung with fever.";
  pneumonia.xrefs = {"UMLS:C0032285"};
  LexiconEntry hf;
  hf.kg_id = 12;
  hf.external_id = "DOID:6000";
  hf.type = "disease";
  hf.name = "heart failure";
  hf.definition = "The heart cannot pump enough; fluid in the lung.";
  lexicon.entries = {mi, pneumonia, hf};
  return lexicon;
}

// Builds a bundle of `lexicon` with `encoder` under `base` and opens an Aligner on it (no LLM).
inline absl::StatusOr<std::unique_ptr<Aligner>> AlignerOnNewBundle(
    const Lexicon& lexicon, std::shared_ptr<const TextEncoder> encoder, const std::string& base) {
  BundleBuildOptions build;
  build.base_path = base;
  IBGR_ASSIGN_OR_RETURN(BundleBuildResult built, BuildAlignmentBundle(lexicon, *encoder, build));
  IBGR_ASSIGN_OR_RETURN(std::shared_ptr<const AlignmentBundle> bundle,
                        LoadAlignmentBundle(built.dir));
  return Aligner::Create(std::move(bundle), std::move(encoder), nullptr);
}

}  // namespace ibgraphrag::alignment::testing

#endif  // IBGRAPHRAG_SERVICES_ALIGNMENT_TESTING_TEST_FIXTURES_H_
