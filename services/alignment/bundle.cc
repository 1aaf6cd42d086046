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
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "services/alignment/text_normalize.h"

namespace ibgraphrag::alignment {
namespace {

namespace fs = std::filesystem;

constexpr char kManifestFile[] = "manifest.json";
constexpr char kLexiconFile[] = "lexicon.jsonl";
constexpr char kIndexFile[] = "names.faiss";
constexpr char kRowsFile[] = "names.rows";
constexpr char kEnrichedFile[] = "enriched.f32";
constexpr char kEnrichedMagic[8] = {'I', 'B', 'G', 'R', 'E', 'N', 'R', '1'};

absl::Status FsyncPath(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), directory ? O_RDONLY | O_DIRECTORY : O_RDONLY);
  if (fd < 0) return absl::InternalError(absl::StrCat(path, ": cannot open for fsync"));
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return absl::InternalError(absl::StrCat(path, ": fsync failed"));
  return absl::OkStatus();
}

absl::Status WriteString(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
  out.flush();
  if (!out) return absl::InternalError(absl::StrCat(path, ": write failed"));
  return absl::OkStatus();
}

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

// Version number of a directory name ("12"), or 0 when it is not one.
int64_t ParseVersion(const std::string& name) {
  int64_t v = 0;
  if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) return 0;
  return absl::SimpleAtoi(name, &v) ? v : 0;
}

nlohmann::json CalibrationToJson(const ScoreCalibration& c) {
  return {{"method", c.method},
          {"reference_entries", c.reference_entries},
          {"relatedness_null_mean", c.relatedness_null_mean},
          {"relatedness_null_sd", c.relatedness_null_sd},
          {"question_full_z", c.question_full_z},
          {"relatedness_full_z", c.relatedness_full_z},
          {"dictionary_evidence", c.dictionary_evidence}};
}

ScoreCalibration CalibrationFromJson(const nlohmann::json& j) {
  ScoreCalibration c;
  c.method = j.at("method").get<std::string>();
  c.reference_entries = j.at("reference_entries").get<int64_t>();
  c.relatedness_null_mean = j.at("relatedness_null_mean").get<float>();
  c.relatedness_null_sd = j.at("relatedness_null_sd").get<float>();
  c.question_full_z = j.at("question_full_z").get<float>();
  c.relatedness_full_z = j.at("relatedness_full_z").get<float>();
  c.dictionary_evidence = j.at("dictionary_evidence").get<float>();
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
  nlohmann::json j = {{"format_version", m.format_version},
                      {"version", m.version},
                      {"encoder_id", m.encoder_id},
                      {"dim", m.dim},
                      {"source", m.source},
                      {"source_kg_version", m.source_kg_version},
                      {"source_hash", m.source_hash},
                      {"entries", m.entries},
                      {"index_rows", m.index_rows},
                      {"index_kind", m.index_kind},
                      {"created_unix_seconds", m.created_unix_seconds},
                      {"created_time", m.created_time},
                      {"build_seconds", m.build_seconds},
                      {"created_by", m.created_by},
                      {"score_calibration", CalibrationToJson(m.calibration)},
                      {"files",
                       {{"lexicon", kLexiconFile},
                        {"index", kIndexFile},
                        {"index_rows", kRowsFile},
                        {"enriched_embeddings", kEnrichedFile}}}};
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

absl::StatusOr<BundleManifest> BundleManifestFromJson(const std::string& json) {
  BundleManifest m;
  try {
    const nlohmann::json j = nlohmann::json::parse(json);
    m.format_version = j.at("format_version").get<int>();
    m.version = j.at("version").get<int64_t>();
    m.encoder_id = j.at("encoder_id").get<std::string>();
    m.dim = j.at("dim").get<int>();
    m.source = j.at("source").get<std::string>();
    m.source_kg_version = j.at("source_kg_version").get<std::string>();
    m.source_hash = j.at("source_hash").get<std::string>();
    m.entries = j.at("entries").get<int64_t>();
    m.index_rows = j.at("index_rows").get<int64_t>();
    m.index_kind = j.at("index_kind").get<std::string>();
    m.created_unix_seconds = j.at("created_unix_seconds").get<int64_t>();
    m.created_time = j.at("created_time").get<std::string>();
    m.build_seconds = j.at("build_seconds").get<double>();
    m.created_by = j.at("created_by").get<std::string>();
    if (j.contains("score_calibration")) {
      m.calibration = CalibrationFromJson(j.at("score_calibration"));
    } else {
      m.calibration.reference_entries = -1;  // fitted by LoadAlignmentBundle
    }
  } catch (const std::exception& e) {
    return absl::DataLossError(absl::StrCat("manifest.json: ", e.what()));
  }
  return m;
}

absl::StatusOr<std::vector<int64_t>> ListBundleVersions(const std::string& base) {
  std::vector<int64_t> out;
  const fs::path dir = fs::path(base) / "alignment";
  std::error_code ec;
  if (!fs::exists(dir, ec)) return out;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const int64_t v = ParseVersion(it->path().filename().string());
    if (v > 0 && fs::exists(it->path() / kManifestFile, ec)) out.push_back(v);
  }
  if (ec) return absl::InternalError(absl::StrCat(dir.string(), ": ", ec.message()));
  std::sort(out.begin(), out.end());
  return out;
}

absl::StatusOr<std::string> ResolveBundleDir(const std::string& base,
                                             std::optional<int64_t> pinned_version) {
  IBGR_ASSIGN_OR_RETURN(std::vector<int64_t> versions, ListBundleVersions(base));
  if (pinned_version.has_value()) {
    if (std::find(versions.begin(), versions.end(), *pinned_version) == versions.end()) {
      return absl::NotFoundError(absl::StrCat("bundle_version: ", *pinned_version,
                                              " not found under ", base, "/alignment"));
    }
    return (fs::path(base) / "alignment" / std::to_string(*pinned_version)).string();
  }
  if (versions.empty()) {
    return absl::NotFoundError(absl::StrCat("no alignment bundle under ", base,
                                            "/alignment (build one with `ibgr align build`)"));
  }
  return (fs::path(base) / "alignment" / std::to_string(versions.back())).string();
}

absl::StatusOr<BundleBuildResult> BuildAlignmentBundle(const Lexicon& lexicon,
                                                       const TextEncoder& encoder,
                                                       const BundleBuildOptions& options) {
  if (options.base_path.empty()) return absl::InvalidArgumentError("base_path: required");
  if (options.encode_batch <= 0) return absl::InvalidArgumentError("encode_batch: must be > 0");
  const absl::Time start = absl::Now();
  const fs::path parent = fs::path(options.base_path) / "alignment";
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) return absl::InternalError(absl::StrCat(parent.string(), ": ", ec.message()));
  int64_t version = options.version;
  if (version <= 0) {
    version = 1;
    for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      version = std::max(version, ParseVersion(name.substr(0, name.find('.'))) + 1);
    }
  }
  const fs::path final_dir = parent / std::to_string(version);
  if (fs::exists(final_dir, ec)) {
    return absl::AlreadyExistsError(absl::StrCat(final_dir.string(), " already exists"));
  }
  std::random_device rd;
  const fs::path tmp = parent / absl::StrCat(version, ".tmp-", ::getpid(), "-", rd() % 1000000);
  fs::create_directories(tmp, ec);
  if (ec) return absl::InternalError(absl::StrCat(tmp.string(), ": ", ec.message()));
  auto cleanup = [&tmp]() {
    std::error_code ignored;
    fs::remove_all(tmp, ignored);
  };
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
    IBGR_RETURN_IF_ERROR(WriteString((tmp / kManifestFile).string(), BundleManifestToJson(m)));
    for (const char* f : {kManifestFile, kLexiconFile, kIndexFile, kRowsFile, kEnrichedFile}) {
      IBGR_RETURN_IF_ERROR(FsyncPath((tmp / f).string(), false));
    }
    IBGR_RETURN_IF_ERROR(FsyncPath(tmp.string(), true));
    return m;
  };
  absl::StatusOr<BundleManifest> manifest = build();
  if (!manifest.ok()) {
    cleanup();
    return manifest.status();
  }
  fs::rename(tmp, final_dir, ec);
  if (ec) {
    cleanup();
    return absl::InternalError(absl::StrCat("rename to ", final_dir.string(), ": ", ec.message()));
  }
  (void)FsyncPath(parent.string(), true);
  return BundleBuildResult{final_dir.string(), *std::move(manifest)};
}

absl::StatusOr<std::shared_ptr<const AlignmentBundle>> LoadAlignmentBundle(
    const std::string& dir, const CandidateIndexOptions& index_options) {
  auto bundle = std::make_shared<AlignmentBundle>();
  bundle->dir = dir;
  {
    std::ifstream in(fs::path(dir) / kManifestFile, std::ios::binary);
    if (!in) return absl::NotFoundError(absl::StrCat(dir, "/", kManifestFile, ": cannot open"));
    std::stringstream ss;
    ss << in.rdbuf();
    IBGR_ASSIGN_OR_RETURN(bundle->manifest, BundleManifestFromJson(ss.str()));
  }
  const BundleManifest& m = bundle->manifest;
  if (m.format_version != kBundleFormatVersion) {
    return absl::FailedPreconditionError(absl::StrCat(dir, ": bundle format ", m.format_version,
                                                      ", this build reads ", kBundleFormatVersion));
  }
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
  bundle->extractor = std::make_unique<MentionExtractor>(bundle->lexicon);
  return std::shared_ptr<const AlignmentBundle>(std::move(bundle));
}

}  // namespace ibgraphrag::alignment
