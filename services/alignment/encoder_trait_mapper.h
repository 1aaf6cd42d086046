// GWAS free-text traits to Disease Ontology diseases with an encoder as the second step: the
// import library's NameTraitMapper first (exact name, synonym, qualifier dropped, word overlap),
// then the nearest disease name by cosine of a TextEncoder when it reaches a threshold. Lives in
// the alignment library so that kgstore_import stays free of encoders; `ibgr kg build` injects
// it through ImportOptions::trait_mapper_factory.
#ifndef IBGRAPHRAG_SERVICES_ALIGNMENT_ENCODER_TRAIT_MAPPER_H_
#define IBGRAPHRAG_SERVICES_ALIGNMENT_ENCODER_TRAIT_MAPPER_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "services/alignment/candidate_index.h"
#include "services/alignment/text_encoder.h"
#include "services/kgstore/import/gwas_importer.h"
#include "services/kgstore/kg_builder.h"

namespace ibgraphrag::alignment {

struct EncoderTraitMapperOptions {
  // Least cosine between the trait and a disease name for an encoder match. On the GWAS 2015
  // traits the hash n-gram encoder scores plurals and spelling variants ("Uterine fibroids" /
  // "uterine fibroid") 0.95-1.0, but "B cell" vs "T-cell non-Hodgkin lymphoma" still 0.90.
  float min_cosine = 0.92f;
  // Confidence of an encoder match = cosine x this (below the name-based methods' 0.9..1).
  float confidence_scale = 0.8f;
  // Options of the name mapper tried first.
  kgstore::import_::NameTraitMapper::Options names;
};

class EncoderTraitMapper final : public kgstore::import_::TraitMapper {
 public:
  // Indexes the names and synonyms of the DOID disease entities in `builder` with `encoder`.
  static absl::StatusOr<std::unique_ptr<EncoderTraitMapper>> Create(
      const kgstore::KgBuilder& builder, std::shared_ptr<const TextEncoder> encoder,
      const EncoderTraitMapperOptions& options);
  // One trait; an encoder or index error reads as no match here (MapBatch reports it).
  std::optional<kgstore::import_::TraitMatch> Map(absl::string_view trait) const override;
  // Names first for each trait, then one batched encoder search for the rest (FAISS turns a
  // batch into a matrix product; single queries are scalar loops). Encoder and index errors are
  // returned, not swallowed.
  absl::StatusOr<std::vector<std::optional<kgstore::import_::TraitMatch>>> MapBatch(
      absl::Span<const std::string> traits) const override;

 private:
  EncoderTraitMapper(const kgstore::KgBuilder& builder, std::shared_ptr<const TextEncoder> encoder,
                     const EncoderTraitMapperOptions& options);

  // The encoder match of each text (nullopt below the threshold).
  absl::StatusOr<std::vector<std::optional<kgstore::import_::TraitMatch>>> NearestNames(
      absl::Span<const std::string> texts) const;

  kgstore::import_::NameTraitMapper names_;
  std::shared_ptr<const TextEncoder> encoder_;
  EncoderTraitMapperOptions options_;
  std::unique_ptr<CandidateIndex> index_;  // rows: NameRef{entity id, name index}
};

}  // namespace ibgraphrag::alignment

#endif  // IBGRAPHRAG_SERVICES_ALIGNMENT_ENCODER_TRAIT_MAPPER_H_
