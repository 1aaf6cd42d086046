// Alignment speed on the real data.
//
//   IBGR_DATA_DIR=../shared/data alignment_bench [--benchmark_filter=Align]
//   (IBGR_ALIGN_BENCH_ENCODER_DIR=artifacts/encoder/1 for a trained encoder)
//
// BM_AlignMedQaLength: one Align (defaults: lambda 0.4, tau 0.5, top_k 10, no LLM) of a real
// 120-180-word clinical vignette (MMLU professional medicine) against the embedded KG's bundle,
// single-threaded; reports p50/p99 latency counters over all iterations.
// BM_NameSearch/0 and /1: one mention's name search, FAISS's IndexHNSW::search against the
// prefetching search the service uses (hnsw_search.h); the same hits.
// BM_BuildEmbeddedBundle: encoding, FAISS index and writing of the embedded KG's bundle (the
// embedded KG itself, ~3 s, is built once outside the timing).
// BM_LoadBundle/1: LoadAlignmentBundle of that bundle as built (every file checked against its
// SHA-256 first); /0: a copy whose manifest lists no digests (a bundle from before them), so the
// difference is the cost of the check. Both read from the page cache after the first load.
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "benchmark/benchmark.h"
#include "common/file_util.h"
#include "common/proto_json.h"
#include "ibgraphrag/artifacts/v1/manifests.pb.h"
#include "services/alignment/aligner.h"
#include "services/alignment/bundle.h"
#include "services/alignment/eval/qa_sets.h"
#include "services/alignment/lexicon.h"
#include "services/alignment/text_encoder.h"
#include "services/alignment/trained_encoder.h"

namespace ibgraphrag::alignment {
namespace {

std::string DataDir() {
  const char* d = std::getenv("IBGR_DATA_DIR");
  return d != nullptr ? d : "../shared/data";
}

struct BenchState {
  Lexicon lexicon;
  std::shared_ptr<const TextEncoder> encoder;
  std::unique_ptr<Aligner> aligner;
  std::vector<std::string> questions;
  std::string base;
  std::string bundle_dir;
  std::shared_ptr<const AlignmentBundle> bundle;
};

BenchState* State() {
  static BenchState* state = [] {
    auto* s = new BenchState();
    auto lexicon = LexiconFromDataDir(DataDir());
    if (!lexicon.ok()) {
      std::fprintf(stderr, "lexicon: %s\n", lexicon.status().ToString().c_str());
      std::exit(1);
    }
    s->lexicon = *std::move(lexicon);
    // IBGR_ALIGN_BENCH_ENCODER_DIR=<base>/encoder/<version> measures a trained encoder.
    if (const char* trained = std::getenv("IBGR_ALIGN_BENCH_ENCODER_DIR"); trained != nullptr) {
      auto opened = TrainedNameEncoder::Open(trained);
      if (!opened.ok()) {
        std::fprintf(stderr, "encoder: %s\n", opened.status().ToString().c_str());
        std::exit(1);
      }
      s->encoder = *std::move(opened);
    } else {
      s->encoder = *HashNgramEncoder::Create(HashNgramEncoderOptions());
    }
    s->base = (std::filesystem::temp_directory_path() / "ibgr-align-bench").string();
    std::error_code ec;
    std::filesystem::remove_all(s->base, ec);
    BundleBuildOptions build;
    build.base_path = s->base;
    // IBGR_ALIGN_BENCH_BUNDLE=<bundle dir> reuses a bundle (profiling runs); otherwise one is
    // built here, as BM_BuildEmbeddedBundle does.
    std::string dir;
    if (const char* reuse = std::getenv("IBGR_ALIGN_BENCH_BUNDLE"); reuse != nullptr) {
      dir = reuse;
    } else {
      auto built = BuildAlignmentBundle(s->lexicon, *s->encoder, build);
      if (!built.ok()) {
        std::fprintf(stderr, "bundle: %s\n", built.status().ToString().c_str());
        std::exit(1);
      }
      dir = built->dir;
    }
    s->bundle_dir = dir;
    // Single-threaded figures, as the server runs FAISS (IndexConfig.omp_threads = 1).
    omp_set_num_threads(1);
    auto bundle = LoadAlignmentBundle(dir);
    s->bundle = *bundle;
    s->aligner = *Aligner::Create(*bundle, s->encoder, nullptr);
    auto sets = eval::ReadQuestionSets(DataDir());
    for (const eval::QuestionSet& set : *sets) {
      if (set.name != "mmlu-professional_medicine") continue;
      for (const std::string& q : set.questions) {
        const std::vector<absl::string_view> words =
            absl::StrSplit(q, absl::ByAnyChar(" \n\t"), absl::SkipEmpty());
        if (words.size() >= 120 && words.size() <= 180) s->questions.push_back(q);
        if (s->questions.size() >= 100) break;
      }
    }
    return s;
  }();
  return state;
}

void BM_AlignMedQaLength(benchmark::State& state) {
  BenchState* s = State();
  MscaOptions options;
  std::vector<double> ms;
  size_t i = 0, kept = 0, mentions = 0;
  std::map<std::string, double> stage_ms;
  for (auto _ : state) {
    const absl::Time start = absl::Now();
    auto result = s->aligner->Align(s->questions[i++ % s->questions.size()], options);
    ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - start));
    if (!result.ok()) {
      state.SkipWithError(result.status().ToString().c_str());
      break;
    }
    kept += result->kept.size();
    for (const StageTiming& t : result->timings) stage_ms[t.stage] += t.duration_ms;
    mentions += result->mentions.size();
    benchmark::DoNotOptimize(result);
  }
  if (ms.empty()) return;
  std::sort(ms.begin(), ms.end());
  state.counters["p50_ms"] = ms[ms.size() / 2];
  state.counters["p99_ms"] = ms[std::min(ms.size() - 1, ms.size() * 99 / 100)];
  state.counters["questions"] = static_cast<double>(s->questions.size());
  state.counters["mentions_per_q"] = static_cast<double>(mentions) / ms.size();
  state.counters["kept_per_q"] = static_cast<double>(kept) / ms.size();
  for (const auto& [stage, total] : stage_ms) state.counters[stage + "_ms"] = total / ms.size();
}
BENCHMARK(BM_AlignMedQaLength)->Unit(benchmark::kMillisecond)->MinTime(5.0);

// The name search alone, as Align asks it (top 10 entries, so 40 rows): one- and two-word spans
// of the vignettes encoded as mention queries, searched one at a time. /1: Search (the
// prefetching search of hnsw_search.h); /0: SearchThroughFaiss, FAISS's own IndexHNSW::search.
void BM_NameSearch(benchmark::State& state) {
  BenchState* s = State();
  const bool ours = state.range(0) == 1;
  std::vector<std::string> spans;
  for (const std::string& q : s->questions) {
    const std::vector<std::string> words =
        absl::StrSplit(q, absl::ByAnyChar(" \n\t,.;:?()"), absl::SkipEmpty());
    for (size_t w = 0; w < words.size() && spans.size() < 4000; ++w) {
      spans.push_back(words[w]);
      if (w + 1 < words.size()) spans.push_back(words[w] + " " + words[w + 1]);
    }
  }
  const int dim = s->encoder->dim();
  std::vector<float> queries(spans.size() * dim);
  if (!s->encoder->EncodeBatch(spans, absl::MakeSpan(queries)).ok()) {
    state.SkipWithError("encoding the spans failed");
    return;
  }
  const CandidateIndex& index = *s->bundle->index;
  size_t i = 0;
  for (auto _ : state) {
    const auto query = absl::MakeConstSpan(queries).subspan((i++ % spans.size()) * dim, dim);
    auto hits = ours ? index.Search(query, 10) : index.SearchThroughFaiss(query, 10);
    if (!hits.ok()) {
      state.SkipWithError(hits.status().ToString().c_str());
      break;
    }
    benchmark::DoNotOptimize(hits);
  }
  state.counters["index_rows"] = static_cast<double>(index.rows());
  state.counters["queries"] = static_cast<double>(spans.size());
}
BENCHMARK(BM_NameSearch)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond)->MinTime(3.0);

void BM_BuildEmbeddedBundle(benchmark::State& state) {
  BenchState* s = State();
  int64_t rows = 0;
  for (auto _ : state) {
    BundleBuildOptions build;
    build.base_path = s->base;
    auto built = BuildAlignmentBundle(s->lexicon, *s->encoder, build);
    if (!built.ok()) {
      state.SkipWithError(built.status().ToString().c_str());
      break;
    }
    rows = built->manifest.index_rows;
  }
  state.counters["index_rows"] = static_cast<double>(rows);
  state.counters["entries"] = static_cast<double>(s->lexicon.entries.size());
}
BENCHMARK(BM_BuildEmbeddedBundle)->Unit(benchmark::kSecond)->Iterations(1);

// A copy of the state's bundle whose manifest.json lists no file digests.
std::string UncheckedCopy(const BenchState& s) {
  const std::string copy = s.base + "/unchecked/1";
  std::error_code ec;
  std::filesystem::remove_all(s.base + "/unchecked", ec);
  std::filesystem::create_directories(s.base + "/unchecked");
  std::filesystem::copy(s.bundle_dir, copy, std::filesystem::copy_options::recursive);
  artifacts::v1::AlignmentBundleManifest manifest;
  const absl::Status read = common::JsonToProto(
      common::ReadFileToString(copy + "/manifest.json").value(), "manifest.json", &manifest);
  if (!read.ok()) std::exit(1);
  manifest.clear_file_sha256();
  if (!common::WriteStringToFileAtomic(copy + "/manifest.json", common::ProtoToJson(manifest))
           .ok()) {
    std::exit(1);
  }
  return copy;
}

void BM_LoadBundle(benchmark::State& state) {
  BenchState* s = State();
  const bool checked = state.range(0) == 1;
  const std::string dir = checked ? s->bundle_dir : UncheckedCopy(*s);
  int64_t bytes = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    bytes += static_cast<int64_t>(entry.file_size());
  }
  for (auto _ : state) {
    auto bundle = LoadAlignmentBundle(dir);
    if (!bundle.ok()) {
      state.SkipWithError(bundle.status().ToString().c_str());
      break;
    }
    benchmark::DoNotOptimize(bundle);
  }
  state.counters["bundle_MiB"] = static_cast<double>(bytes) / (1 << 20);
}
BENCHMARK(BM_LoadBundle)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace ibgraphrag::alignment

BENCHMARK_MAIN();
