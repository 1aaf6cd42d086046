#include "services/alignment/encoder_trait_mapper.h"

#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"

namespace ibgraphrag::alignment {

EncoderTraitMapper::EncoderTraitMapper(const kgstore::KgBuilder& builder,
                                       std::shared_ptr<const TextEncoder> encoder,
                                       const EncoderTraitMapperOptions& options)
    : names_(builder, options.names), encoder_(std::move(encoder)), options_(options) {}

absl::StatusOr<std::unique_ptr<EncoderTraitMapper>> EncoderTraitMapper::Create(
    const kgstore::KgBuilder& builder, std::shared_ptr<const TextEncoder> encoder,
    const EncoderTraitMapperOptions& options) {
  if (encoder == nullptr) return absl::InvalidArgumentError("EncoderTraitMapper: encoder is null");
  std::unique_ptr<EncoderTraitMapper> mapper(new EncoderTraitMapper(builder, encoder, options));
  std::vector<std::string> texts;
  std::vector<NameRef> rows;
  for (kgstore::EntityId id = 0; id < builder.num_entities(); ++id) {
    const kgstore::Entity& e = builder.entity(id);
    if (e.type != "disease" || !absl::StartsWith(e.external_id, "DOID:")) continue;
    texts.push_back(e.name);
    rows.push_back({id, 0});
    for (size_t i = 0; i < e.synonyms.size(); ++i) {
      texts.push_back(e.synonyms[i]);
      rows.push_back({id, static_cast<uint32_t>(i + 1)});
    }
  }
  if (rows.empty())
    return absl::FailedPreconditionError("EncoderTraitMapper: no DOID disease entities");
  std::vector<float> embeddings(texts.size() * static_cast<size_t>(encoder->dim()));
  IBGR_RETURN_IF_ERROR(encoder->EncodeBatch(texts, absl::MakeSpan(embeddings)));
  CandidateIndexOptions index_options;
  index_options.kind = IndexKind::kFlat;
  // One query at a time from the import thread: an OpenMP team would only spin between queries.
  index_options.search_omp_threads = 1;
  IBGR_ASSIGN_OR_RETURN(mapper->index_, CandidateIndex::Build(std::move(rows), embeddings,
                                                              encoder->dim(), index_options));
  return mapper;
}

absl::StatusOr<std::vector<std::optional<kgstore::import_::TraitMatch>>>
EncoderTraitMapper::NearestNames(absl::Span<const std::string> texts) const {
  std::vector<std::optional<kgstore::import_::TraitMatch>> matches(texts.size());
  if (texts.empty()) return matches;
  std::vector<float> queries(texts.size() * static_cast<size_t>(encoder_->dim()));
  IBGR_RETURN_IF_ERROR(encoder_->EncodeBatch(texts, absl::MakeSpan(queries)));
  IBGR_ASSIGN_OR_RETURN(const std::vector<std::vector<NameHit>> hits, index_->Search(queries, 1));
  for (size_t i = 0; i < texts.size() && i < hits.size(); ++i) {
    if (hits[i].empty() || hits[i][0].similarity < options_.min_cosine) continue;
    const NameHit& best = hits[i][0];
    matches[i] = kgstore::import_::TraitMatch{
        best.entry, best.similarity * options_.confidence_scale, "encoder"};
  }
  return matches;
}

std::optional<kgstore::import_::TraitMatch> EncoderTraitMapper::Map(absl::string_view trait) const {
  absl::StatusOr<std::vector<std::optional<kgstore::import_::TraitMatch>>> matches =
      MapBatch({std::string(trait)});
  if (!matches.ok()) return std::nullopt;
  return (*matches)[0];
}

absl::StatusOr<std::vector<std::optional<kgstore::import_::TraitMatch>>>
EncoderTraitMapper::MapBatch(absl::Span<const std::string> traits) const {
  std::vector<std::optional<kgstore::import_::TraitMatch>> matches(traits.size());
  std::vector<std::string> rest;  // stripped texts the names did not map
  std::vector<size_t> rest_index;
  for (size_t i = 0; i < traits.size(); ++i) {
    matches[i] = names_.Map(traits[i]);
    const absl::string_view text = absl::StripAsciiWhitespace(traits[i]);
    if (matches[i] || text.empty()) continue;
    rest.emplace_back(text);
    rest_index.push_back(i);
  }
  IBGR_ASSIGN_OR_RETURN(std::vector<std::optional<kgstore::import_::TraitMatch>> nearest,
                        NearestNames(rest));
  for (size_t j = 0; j < rest.size(); ++j) matches[rest_index[j]] = std::move(nearest[j]);
  return matches;
}

}  // namespace ibgraphrag::alignment
