#include "services/alignment/bundle.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/file_util.h"
#include "common/proto_json.h"
#include "common/status_macros.h"
#include "ibgraphrag/artifacts/v1/manifests.pb.h"
#include "services/alignment/text_normalize.h"

namespace ibgraphrag::alignment {
namespace {

namespace fs = std::filesystem;
namespace artifacts_pb = ::ibgraphrag::artifacts::v1;

constexpr char kManifestFile[] = "manifest.json";
constexpr char kLexiconFile[] = "lexicon.jsonl";
constexpr char kIndexFile[] = "names.faiss";
constexpr char kRowsFile[] = "names.rows";
constexpr char kEnrichedFile[] = "enriched.f32";
constexpr char kGenericTermsFile[] = "generic_terms.tsv";
constexpr char kEnrichedMagic[8] = {'I', 'B', 'G', 'R', 'E', 'N', 'R', '1'};

absl::Status WriteEnriched(const std::string& path, const std::vector<float>& data, int dim) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return absl::InternalError(absl::StrCat(path, ": cannot open"));
  const int32_t d = dim;
  const int64_t n = dim == 0 ? 0 : static_cast<int64_t>(data.size() / dim);
  bool ok = std::fwrite(kEnrichedMagic, 1, 8, f) == 8 && std::fwrite(&d, 4, 1, f) == 1 &&
            std::fwrite(&n, 8, 1, f) == 1 &&
            std::fwrite(data.data(), sizeof(float), data.size(), f) == data.size();
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) return absl::InternalError(absl::StrCat(path, ": write failed"));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<float>> ReadEnriched(const std::string& path, int dim, int64_t n) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::unique_ptr<FILE, int (*)(FILE*)> closer(f, &std::fclose);
  char magic[8];
  int32_t d = 0;
  int64_t rows = 0;
  if (std::fread(magic, 1, 8, f) != 8 || std::memcmp(magic, kEnrichedMagic, 8) != 0 ||
      std::fread(&d, 4, 1, f) != 1 || std::fread(&rows, 8, 1, f) != 1) {
    return absl::DataLossError(absl::StrCat(path, ": bad header"));
  }
  if (d != dim || rows != n) {
    return absl::DataLossError(
        absl::StrCat(path, ": holds ", rows, "x", d, ", manifest says ", n, "x", dim));
  }
  std::vector<float> out(static_cast<size_t>(n) * dim);
  if (std::fread(out.data(), sizeof(float), out.size(), f) != out.size() || std::fgetc(f) != EOF) {
    return absl::DataLossError(absl::StrCat(path, ": size does not match its header"));
  }
  return out;
}

void CalibrationToProto(const ScoreCalibration& c, artifacts_pb::ScoreCalibration* p) {
  p->set_method(c.method);
  p->set_reference_entries(c.reference_entries);
  p->set_relatedness_null_mean(c.relatedness_null_mean);
  p->set_relatedness_null_sd(c.relatedness_null_sd);
  p->set_question_full_z(c.question_full_z);
  p->set_relatedness_full_z(c.relatedness_full_z);
  p->set_dictionary_evidence(c.dictionary_evidence);
}

ScoreCalibration CalibrationFromProto(const artifacts_pb::ScoreCalibration& p) {
  ScoreCalibration c;
  c.method = p.method();
  c.reference_entries = p.reference_entries();
  c.relatedness_null_mean = p.relatedness_null_mean();
  c.relatedness_null_sd = p.relatedness_null_sd();
  c.question_full_z = p.question_full_z();
  c.relatedness_full_z = p.relatedness_full_z();
  c.dictionary_evidence = p.dictionary_evidence();
  return c;
}

}  // namespace

ScoreCalibration FitScoreCalibration(const std::vector<float>& enriched, int dim) {
  ScoreCalibration c;
  const int64_t n = dim > 0 ? static_cast<int64_t>(enriched.size() / dim) : 0;
  c.reference_entries = std::min(n, kMaxCalibrationReferences);
  double sum = 0, sum2 = 0;
  int64_t pairs = 0;
  auto add = [&](int64_t a, int64_t b) {
    const double cos = Dot(enriched.data() + a * dim, enriched.data() + b * dim, dim);
    sum += cos;
    sum2 += cos * cos;
    ++pairs;
  };
  if (n <= 200) {
    for (int64_t a = 0; a < n; ++a) {
      for (int64_t b = a + 1; b < n; ++b) add(a, b);
    }
  } else {
    std::mt19937_64 rng(20240601);  // fixed: the same lexicon always gets the same calibration
    while (pairs < 20000) {
      const int64_t a = static_cast<int64_t>(rng() % n), b = static_cast<int64_t>(rng() % n);
      if (a != b) add(a, b);
    }
  }
  if (pairs > 0) {
    const double mean = sum / pairs;
    c.relatedness_null_mean = static_cast<float>(mean);
    c.relatedness_null_sd =
        static_cast<float>(std::sqrt(std::max(0.0, sum2 / pairs - mean * mean)));
  }
  return c;
}

std::string BundleManifestToJson(const BundleManifest& m) {
  artifacts_pb::AlignmentBundleManifest p;
  p.set_format_version(m.format_version);
  p.set_version(m.version);
  p.set_encoder_id(m.encoder_id);
  p.set_dim(m.dim);
  p.set_source(m.source);
  p.set_source_kg_version(m.source_kg_version);
  p.set_source_hash(m.source_hash);
  p.set_entries(m.entries);
  p.set_index_rows(m.index_rows);
  p.set_index_kind(m.index_kind);
  p.set_created_unix_seconds(m.created_unix_seconds);
  p.set_created_time(m.created_time);
  p.set_build_seconds(m.build_seconds);
  p.set_created_by(m.created_by);
  CalibrationToProto(m.calibration, p.mutable_score_calibration());
  auto& files = *p.mutable_files();
  files["lexicon"] = kLexiconFile;
  files["index"] = kIndexFile;
  files["index_rows"] = kRowsFile;
  files["enriched_embeddings"] = kEnrichedFile;
  if (m.has_generic_terms) files["generic_terms"] = kGenericTermsFile;
  p.mutable_file_sha256()->insert(m.file_sha256.begin(), m.file_sha256.end());
  return common::ProtoToJson(p);
}

absl::StatusOr<BundleManifest> BundleManifestFromJson(const std::string& json) {
  artifacts_pb::AlignmentBundleManifest p;
  IBGR_RETURN_IF_ERROR(common::JsonToProto(json, "manifest.json", &p));
  if (p.format_version() <= 0 || p.version() <= 0 || p.encoder_id().empty() || p.dim() <= 0) {
    return absl::DataLossError(
        "manifest.json: format_version, version, encoder_id and dim are required");
  }
  BundleManifest m;
  m.format_version = p.format_version();
  m.version = p.version();
  m.encoder_id = p.encoder_id();
  m.dim = p.dim();
  m.source = p.source();
  m.source_kg_version = p.source_kg_version();
  m.source_hash = p.source_hash();
  m.entries = p.entries();
  m.index_rows = p.index_rows();
  m.index_kind = p.index_kind();
  m.created_unix_seconds = p.created_unix_seconds();
  m.created_time = p.created_time();
  m.build_seconds = p.build_seconds();
  m.created_by = p.created_by();
  m.has_generic_terms = p.files().contains("generic_terms");
  m.file_sha256.insert(p.file_sha256().begin(), p.file_sha256().end());
  if (p.has_score_calibration()) {
    m.calibration = CalibrationFromProto(p.score_calibration());
  } else {
    m.calibration.reference_entries = -1;  // fitted by LoadAlignmentBundle
  }
  return m;
}

std::vector<std::string> BundleFiles(const BundleManifest& manifest) {
  std::vector<std::string> files = {kLexiconFile, kIndexFile, kRowsFile, kEnrichedFile};
  if (manifest.has_generic_terms) files.push_back(kGenericTermsFile);
  return files;
}

common::VersionedArtifactDir BundleArtifacts(const std::string& base) {
  return common::VersionedArtifactDir(
      {base, "alignment", "alignment bundle", "(build one with `ibgr align build`)"});
}

absl::StatusOr<std::vector<int64_t>> ListBundleVersions(const std::string& base) {
  return BundleArtifacts(base).ListVersions();
}

absl::StatusOr<std::string> ResolveBundleDir(const std::string& base,
                                             std::optional<int64_t> pinned_version) {
  return BundleArtifacts(base).Resolve(pinned_version);
}

absl::StatusOr<BundleBuildResult> BuildAlignmentBundle(const Lexicon& lexicon,
                                                       const TextEncoder& encoder,
                                                       const BundleBuildOptions& options) {
  if (options.base_path.empty()) return absl::InvalidArgumentError("base_path: required");
  if (options.encode_batch <= 0) return absl::InvalidArgumentError("encode_batch: must be > 0");
  const absl::Time start = absl::Now();
  IBGR_ASSIGN_OR_RETURN(
      common::ArtifactStaging staging,
      common::ArtifactStaging::CreateVersion(BundleArtifacts(options.base_path), options.version));
  const int64_t version = staging.version();
  const fs::path tmp = staging.dir();
  auto build = [&]() -> absl::StatusOr<BundleManifest> {
    const int dim = encoder.dim();
    // Index rows: every distinct (normalised) name of every entry.
    std::vector<NameRef> rows;
    std::vector<std::string> row_texts;
    for (uint32_t e = 0; e < lexicon.entries.size(); ++e) {
      absl::flat_hash_set<std::string> seen;
      const std::vector<std::string> names = lexicon.entries[e].AllNames();
      for (uint32_t n = 0; n < names.size(); ++n) {
        std::string key = NormalizeForMatch(names[n]);
        if (key.empty() || !seen.insert(std::move(key)).second) continue;
        rows.push_back({e, n});
        row_texts.push_back(names[n]);
      }
    }
    auto encode_all = [&](const std::vector<std::string>& texts,
                          std::vector<float>* out) -> absl::Status {
      out->assign(texts.size() * static_cast<size_t>(dim), 0.0f);
      for (size_t s = 0; s < texts.size(); s += options.encode_batch) {
        const size_t n = std::min<size_t>(options.encode_batch, texts.size() - s);
        IBGR_RETURN_IF_ERROR(encoder.EncodeBatch(absl::MakeConstSpan(texts).subspan(s, n),
                                                 absl::MakeSpan(*out).subspan(s * dim, n * dim)));
      }
      return absl::OkStatus();
    };
    std::vector<float> name_vectors;
    IBGR_RETURN_IF_ERROR(encode_all(row_texts, &name_vectors));
    row_texts.clear();
    const int64_t index_rows = static_cast<int64_t>(rows.size());
    IBGR_ASSIGN_OR_RETURN(std::unique_ptr<CandidateIndex> index,
                          CandidateIndex::Build(std::move(rows), name_vectors, dim, options.index));
    name_vectors.clear();
    name_vectors.shrink_to_fit();
    IBGR_RETURN_IF_ERROR(index->Write((tmp / kIndexFile).string(), (tmp / kRowsFile).string()));
    std::vector<std::string> enriched_texts;
    enriched_texts.reserve(lexicon.entries.size());
    for (const LexiconEntry& e : lexicon.entries) enriched_texts.push_back(e.EnrichedText());
    std::vector<float> enriched;
    IBGR_RETURN_IF_ERROR(encode_all(enriched_texts, &enriched));
    const ScoreCalibration calibration = FitScoreCalibration(enriched, dim);
    IBGR_RETURN_IF_ERROR(WriteEnriched((tmp / kEnrichedFile).string(), enriched, dim));
    IBGR_RETURN_IF_ERROR(WriteLexicon(lexicon, (tmp / kLexiconFile).string()));
    IBGR_RETURN_IF_ERROR(WriteGenericTerms(ComputeGenericTerms(lexicon, options.generic_terms),
                                           (tmp / kGenericTermsFile).string()));

    BundleManifest m;
    m.version = version;
    m.encoder_id = encoder.id();
    m.dim = dim;
    m.source = lexicon.source;
    m.source_kg_version = lexicon.source_kg_version;
    m.source_hash = lexicon.source_hash;
    m.entries = static_cast<int64_t>(lexicon.entries.size());
    m.index_rows = index_rows;
    m.index_kind = index->kind_name();
    const absl::Time now = absl::Now();
    m.created_unix_seconds = absl::ToUnixSeconds(now);
    m.created_time = absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", now, absl::UTCTimeZone());
    m.build_seconds = absl::ToDoubleSeconds(now - start);
    m.created_by = options.created_by;
    m.calibration = calibration;
    m.has_generic_terms = true;
    IBGR_ASSIGN_OR_RETURN(m.file_sha256, common::FileDigests(tmp.string(), BundleFiles(m)));
    // The manifest last: it marks the version complete once published.
    IBGR_RETURN_IF_ERROR(
        common::WriteStringToFileAtomic((tmp / kManifestFile).string(), BundleManifestToJson(m)));
    return m;
  };
  IBGR_ASSIGN_OR_RETURN(BundleManifest manifest, build());
  IBGR_RETURN_IF_ERROR(staging.Publish());  // fsyncs every file; never replaces a version
  return BundleBuildResult{staging.final_dir(), std::move(manifest)};
}

namespace {

// Damage to a vector, the FAISS index or the row map would load as wrong answers: digests catch
// it. Bundles from before checksums have none and load as they always did (the server warns).
absl::Status CheckBundleFiles(const std::string& dir, const BundleManifest& manifest) {
  if (manifest.file_sha256.empty()) return absl::OkStatus();
  return common::CheckFileDigests(dir, BundleFiles(manifest), manifest.file_sha256);
}

}  // namespace

void ComputeReferenceMoments(AlignmentBundle* bundle) {
  const size_t dim = bundle->manifest.dim > 0 ? static_cast<size_t>(bundle->manifest.dim) : 0;
  bundle->reference_mean.clear();
  bundle->reference_covariance.clear();
  if (dim == 0) return;
  const size_t refs = bundle->reference_enriched.size() / dim;
  // dim^2 per question against R * dim for the direct loop: worth it only for dim < R (the
  // trained encoder: 256 against 1,024 rows). Load cost: R * dim^2 / 2 multiply-adds.
  if (refs == 0 || dim >= refs) return;
  std::vector<double> mean(dim, 0.0);
  for (size_t r = 0; r < refs; ++r) {
    const float* row = bundle->reference_enriched.data() + r * dim;
    for (size_t i = 0; i < dim; ++i) mean[i] += row[i];
  }
  for (double& m : mean) m /= static_cast<double>(refs);
  // Centred first, so that a question's variance needs no subtraction of near-equal numbers.
  std::vector<double> centred(dim), covariance(dim * dim, 0.0);
  for (size_t r = 0; r < refs; ++r) {
    const float* row = bundle->reference_enriched.data() + r * dim;
    for (size_t i = 0; i < dim; ++i) centred[i] = row[i] - mean[i];
    for (size_t i = 0; i < dim; ++i) {
      const double x = centred[i];
      double* out = covariance.data() + i * dim;
      for (size_t j = i; j < dim; ++j) out[j] += x * centred[j];
    }
  }
  bundle->reference_mean.assign(mean.begin(), mean.end());
  bundle->reference_covariance.resize(dim * dim);
  for (size_t i = 0; i < dim; ++i) {
    for (size_t j = i; j < dim; ++j) {
      const float v = static_cast<float>(covariance[i * dim + j] / static_cast<double>(refs));
      bundle->reference_covariance[i * dim + j] = v;
      bundle->reference_covariance[j * dim + i] = v;
    }
  }
}

absl::StatusOr<std::shared_ptr<const AlignmentBundle>> LoadAlignmentBundle(
    const std::string& dir, const CandidateIndexOptions& index_options) {
  auto bundle = std::make_shared<AlignmentBundle>();
  bundle->dir = dir;
  IBGR_ASSIGN_OR_RETURN(const std::string manifest_text,
                        common::ReadFileToString((fs::path(dir) / kManifestFile).string()));
  IBGR_ASSIGN_OR_RETURN(bundle->manifest, BundleManifestFromJson(manifest_text));
  const BundleManifest& m = bundle->manifest;
  if (m.format_version != kBundleFormatVersion) {
    return absl::FailedPreconditionError(absl::StrCat(dir, ": bundle format ", m.format_version,
                                                      ", this build reads ", kBundleFormatVersion));
  }
  IBGR_RETURN_IF_ERROR(CheckBundleFiles(dir, m));
  IBGR_ASSIGN_OR_RETURN(bundle->lexicon, ReadLexicon((fs::path(dir) / kLexiconFile).string()));
  if (static_cast<int64_t>(bundle->lexicon.entries.size()) != m.entries) {
    return absl::DataLossError(absl::StrCat(dir, ": lexicon has ", bundle->lexicon.entries.size(),
                                            " entries, manifest says ", m.entries));
  }
  IBGR_ASSIGN_OR_RETURN(bundle->index,
                        CandidateIndex::Read((fs::path(dir) / kIndexFile).string(),
                                             (fs::path(dir) / kRowsFile).string(), index_options));
  if (bundle->index->dim() != m.dim || bundle->index->rows() != m.index_rows) {
    return absl::DataLossError(absl::StrCat(dir, ": index is ", bundle->index->rows(), "x",
                                            bundle->index->dim(), ", manifest says ", m.index_rows,
                                            "x", m.dim));
  }
  for (const NameRef& r : bundle->index->row_refs()) {
    if (r.entry >= bundle->lexicon.entries.size()) {
      return absl::DataLossError(
          absl::StrCat(dir, ": index row names entry ", r.entry, " beyond the lexicon"));
    }
  }
  IBGR_ASSIGN_OR_RETURN(bundle->enriched,
                        ReadEnriched((fs::path(dir) / kEnrichedFile).string(), m.dim, m.entries));
  if (bundle->manifest.calibration.reference_entries < 0) {
    bundle->manifest.calibration = FitScoreCalibration(bundle->enriched, m.dim);
  }
  const int64_t refs = bundle->manifest.calibration.reference_entries;
  if (refs < 0 || refs > m.entries) {
    return absl::DataLossError(absl::StrCat(dir, ": score_calibration.reference_entries ", refs,
                                            " outside 0..", m.entries));
  }
  bundle->reference_enriched.reserve(static_cast<size_t>(refs) * m.dim);
  for (int64_t i = 0; i < refs; ++i) {
    const float* row = bundle->enriched_row(static_cast<uint32_t>(i * m.entries / refs));
    bundle->reference_enriched.insert(bundle->reference_enriched.end(), row, row + m.dim);
  }
  ComputeReferenceMoments(bundle.get());
  MentionExtractorOptions extractor_options;
  if (m.has_generic_terms) {
    IBGR_ASSIGN_OR_RETURN(bundle->generic_terms,
                          ReadGenericTerms((fs::path(dir) / kGenericTermsFile).string()));
    for (const GenericTerm& t : bundle->generic_terms) {
      extractor_options.generic_terms.push_back(t.key);
    }
  }
  bundle->extractor = std::make_unique<MentionExtractor>(bundle->lexicon, extractor_options);
  return std::shared_ptr<const AlignmentBundle>(std::move(bundle));
}

}  // namespace ibgraphrag::alignment
