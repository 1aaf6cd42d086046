#!/usr/bin/env bash
# Runs the libFuzzer targets of tests/fuzz/ (issue 17) under ASan+UBSan.
#
#   scripts/fuzz.sh [SECONDS] [--smoke] [TARGET...]
#
# SECONDS per target (default 60; --smoke = 5, what CI runs); TARGETs are fuzz_* names (default:
# all of them). Configures build-asan/ (clang-14, IBGR_SANITIZE=address, IBGR_FUZZ=ON) when
# needed and builds only the fuzz targets. Each target starts from build-asan/fuzz-corpus/<target>/,
# made at run time from tests/fuzz/seeds/<target>/ and small slices of the real files in
# IBGR_DATA_DIR (default ../shared/data; nothing of it is ever committed); new corpus entries stay
# there for the next run. Crashes, timeouts and OOMs land in build-asan/fuzz-findings/<target>/;
# the script then exits 1 listing them (tests/fuzz/README.md: how a finding becomes a regression).
# Prints one line per target: target, seconds, execs, corpus size, findings.
#
# Environment: IBGR_DATA_DIR, IBGR_FUZZ_BUILD_DIR (default build-asan), IBGR_CPU_LOCK (default
# /tmp/ibgr-cpu.lock: each run holds it; empty = no lock), IBGR_BUILD_LOCK (default
# /tmp/ibgr-build.lock, likewise for the build), IBGR_FUZZ_JOBS (build parallelism, default 2),
# IBGR_FUZZ_NO_BUILD=1 (run the targets as built, e.g. while another build holds the directory).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

seconds=60
targets=()
for arg in "$@"; do
  case "$arg" in
    --smoke) seconds=5 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    fuzz_*) targets+=("$arg") ;;
    *[!0-9]*|'') echo "fuzz.sh: unknown argument '$arg' (SECONDS, --smoke or fuzz_<name>)" >&2; exit 2 ;;
    *) seconds=$arg ;;
  esac
done

build_dir=${IBGR_FUZZ_BUILD_DIR:-build-asan}
data_dir=${IBGR_DATA_DIR:-$repo/../shared/data}
cpu_lock=${IBGR_CPU_LOCK-/tmp/ibgr-cpu.lock}
build_lock=${IBGR_BUILD_LOCK-/tmp/ibgr-build.lock}
jobs=${IBGR_FUZZ_JOBS:-2}
corpus_root=$build_dir/fuzz-corpus
findings_root=$build_dir/fuzz-findings

locked() {  # locked LOCKFILE CMD...: runs CMD holding LOCKFILE (when set)
  local lock=$1; shift
  if [ -n "$lock" ]; then flock "$lock" "$@"; else "$@"; fi
}

# --- build ----------------------------------------------------------------------------------------
all_targets() {
  sed -n 's/^ *ibgr_add_fuzz_target(\([a-z_0-9]*\) .*/fuzz_\1/p' tests/fuzz/CMakeLists.txt
  sed -n 's/^set(ibgr_importer_groups \(.*\))/\1/p' tests/fuzz/CMakeLists.txt | tr ' ' '\n' |
    sed 's/^/fuzz_import_/'
}
if [ ${#targets[@]} -eq 0 ]; then mapfile -t targets < <(all_targets); fi

if [ -n "${IBGR_FUZZ_NO_BUILD:-}" ]; then
  :
elif [ ! -f "$build_dir/CMakeCache.txt" ]; then
  locked "$build_lock" env CC=clang-14 CXX=clang++-14 cmake -S . -B "$build_dir" -G Ninja \
    -DIBGR_SANITIZE=address -DIBGR_FUZZ=ON -DIBGR_BUILD_BENCHMARKS=OFF
fi
if [ -z "${IBGR_FUZZ_NO_BUILD:-}" ]; then
  locked "$build_lock" cmake --build "$build_dir" -j"$jobs" --target "${targets[@]}"
fi

# --- seed corpora -----------------------------------------------------------------------------------
# head_of FILE [LINES]: the first LINES (200) lines of a plain or gzip file.
head_of() {
  local file=$1 lines=${2:-200}
  case "$file" in
    *.gz) { gzip -dc "$file" 2>/dev/null || true; } | head -n "$lines" ;;
    *) head -n "$lines" "$file" ;;
  esac
}

# slice TARGET SELECTOR FILE [LINES]: one corpus entry, the selector byte (the fuzzer's first
# byte: which importer, format or mode) then the file's first lines. Skipped when the file is
# missing (the seeds still run).
slice() {
  local target=$1 selector=$2 file=$data_dir/$3 lines=${4:-200}
  [ -f "$file" ] || return 0
  local out=$corpus_root/$target/data-$(basename "$3")-$selector
  { printf "\\x$(printf %02x "$selector")"; head_of "$file" "$lines"; } > "$out"
}

make_corpus() {
  local target=$1
  mkdir -p "$corpus_root/$target"
  if [ -d "tests/fuzz/seeds/$target" ]; then cp -f tests/fuzz/seeds/"$target"/* "$corpus_root/$target/" 2>/dev/null || true; fi
  if [ -d "tests/fuzz/regressions/$target" ]; then
    find "tests/fuzz/regressions/$target" -type f ! -name '.keep' -exec cp -f {} "$corpus_root/$target/" \;
  fi
  case "$target" in
    fuzz_delimited_reader)
      slice "$target" 1 kg/drugbank-drugs.tsv 50; slice "$target" 0 qa/biomixqa-true-false.csv 50
      slice "$target" 0 qa/mmlu-anatomy-test.csv 20 ;;
    fuzz_line_reader)
      slice "$target" 0 kg/uberon-terms.tsv 100; slice "$target" 1 kg/hetionet-v1.0-nodes.tsv 100
      if [ -f "$data_dir/kg/hpo-phenotype.hpoa.gz" ]; then
        { printf '\x00'; head_of "$data_dir/kg/hpo-phenotype.hpoa.gz" 100 | gzip -c; } \
          > "$corpus_root/$target/data-hpoa-gzip"
      fi ;;
    fuzz_qa_datasets)
      slice "$target" 0 qa/medqa-test.jsonl 3; slice "$target" 1 qa/medmcqa-dev.jsonl 5
      slice "$target" 3 qa/mmlu-anatomy-test.csv 5; slice "$target" 3 qa/mmlu-medical_genetics-test.csv 5
      slice "$target" 5 qa/biomixqa-true-false.csv 10; slice "$target" 6 factcheck/pubhealth-dev.csv 10
      # PubMedQA is one JSON object: its first item, closed again.
      if [ -f "$data_dir/qa/pubmedqa-test.json" ]; then
        { printf '\x02'; awk 'NR > 1 && /^    },?$/ { print "    }"; exit } { print }' \
            "$data_dir/qa/pubmedqa-test.json"; echo '}'; } > "$corpus_root/$target/data-pubmedqa"
      fi ;;
    fuzz_import_annotations)
      slice "$target" 0 kg/hpo-phenotype.hpoa.gz; slice "$target" 1 kg/hpo-genes_to_phenotype.txt.gz
      slice "$target" 2 kg/disgenet-curated_gene_disease_associations.txt.gz
      slice "$target" 3 kg/pharmacotherapydb-indications.tsv; slice "$target" 4 kg/drugcentral-indications.tsv
      slice "$target" 5 kg/hsdn-symptoms-DO.tsv; slice "$target" 6 kg/do-disease-symptom.tsv
      slice "$target" 7 kg/do-subclassof-anonymous.tsv
      slice "$target" 8 vocab/wikipedia-medical-abbreviations.csv ;;
    fuzz_import_drugs)
      slice "$target" 0 kg/drugbank-drugs.tsv 50; slice "$target" 1 kg/sider4-indications.tsv
      slice "$target" 2 kg/sider4-meddra_all_se.tsv.gz; slice "$target" 3 kg/drugbank-proteins.tsv
      slice "$target" 4 kg/drugcentral-targets.tsv; slice "$target" 5 kg/drugcentral-drug-to-class.tsv
      slice "$target" 6 kg/drugcentral-indications.tsv; slice "$target" 7 kg/bindingdb-drugbank-gene.tsv ;;
    fuzz_import_expression)
      slice "$target" 0 kg/uberon-terms.tsv; slice "$target" 1 kg/bgee-present-in-adult.tsv.gz 30
      slice "$target" 2 kg/bgee-diffex.tsv.gz 30 ;;
    fuzz_import_genes)
      slice "$target" 0 kg/hgnc-gene-families.tsv
      slice "$target" 1 kg/diseases-entrez_gene_id.vs.string.v9.05.txt
      slice "$target" 2 kg/diseases-knowledge_full.tsv.gz; slice "$target" 2 kg/diseases-experiments_full.tsv.gz
      slice "$target" 3 kg/ppi-hetio-ind.tsv; slice "$target" 4 kg/pathways.tsv 50
      slice "$target" 5 kg/go-annotations-9606-direct-expev.tsv 50
      slice "$target" 6 kg/gwas-catalog-gene-associations.tsv
      slice "$target" 7 kg/gwas-catalog-v1.0.1-2015-06-08.tsv.gz 50 ;;
    fuzz_import_hetionet)
      slice "$target" 0 kg/hetionet-v1.0-nodes.tsv; slice "$target" 1 kg/hetionet-DaG-association.tsv
      slice "$target" 2 kg/hetionet-v1.0-edges-5k.sif.gz; slice "$target" 2 kg/hetionet-metaedges.tsv ;;
    fuzz_import_ontologies)
      slice "$target" 0 vocab/doid-2024-01-31.obo.gz 300; slice "$target" 1 vocab/hp-2017-04-13.obo.gz 300
      slice "$target" 2 vocab/do-allXREFinDO.tsv; slice "$target" 3 vocab/hpo-layperson-synonyms.tsv ;;
  esac
}

# --- runs -----------------------------------------------------------------------------------------
# Abort on the first finding (UBSan included) so libFuzzer writes the input out.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:allocator_may_return_null=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:abort_on_error=1:print_stacktrace=1}
export TEST_TMPDIR=${TEST_TMPDIR:-$build_dir/fuzz-tmp}
mkdir -p "$TEST_TMPDIR"

found=()
printf '%-28s %8s %12s %8s %s\n' target seconds execs corpus findings
for target in "${targets[@]}"; do
  make_corpus "$target"
  # This run's artifacts go to a fresh folder, then join the findings kept across runs.
  artifacts=$build_dir/fuzz-artifacts/$target
  rm -rf "$artifacts"
  mkdir -p "$artifacts" "$findings_root/$target" "$build_dir/fuzz-logs"
  log=$build_dir/fuzz-logs/$target.log
  # Targets with a store or model on disk keep it in a scratch folder; a crash or timeout exits
  # without removing it (libFuzzer's _Exit), so earlier runs' folders go here.
  rm -rf "$TEST_TMPDIR"/ibgr-"$target"-*
  start=$(date +%s)
  status=0
  locked "$cpu_lock" "$build_dir/fuzz/$target" "$corpus_root/$target" \
    -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" > "$log" 2>&1 || status=$?
  took=$(( $(date +%s) - start ))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  # libFuzzer's own time (without the wait for the CPU lock) when it got to print it.
  fuzzed=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -n 1)
  [ -z "$fuzzed" ] || took=$fuzzed
  corpus=$(find "$corpus_root/$target" -type f | wc -l)
  target_findings=()
  for file in "$artifacts"/crash-* "$artifacts"/timeout-* "$artifacts"/oom-* "$artifacts"/leak-*; do
    [ -f "$file" ] || continue
    cp -f "$file" "$findings_root/$target/"
    target_findings+=("$findings_root/$target/$(basename "$file")")
  done
  count=${#target_findings[@]}
  printf '%-28s %8s %12s %8s %s\n' "$target" "$took" "${execs:-?}" "$corpus" "$count"
  if [ "$status" -ne 0 ] || [ "$count" -gt 0 ]; then
    found+=("$target (exit $status, log $log)")
    for file in "${target_findings[@]}"; do found+=("  $file"); done
  fi
done

if [ ${#found[@]} -gt 0 ]; then
  echo "fuzz.sh: findings (minimise with '<binary> -minimize_crash=1 -runs=10000 FILE', then"
  echo "copy the input to tests/fuzz/regressions/<target>/ and fix the parser):"
  printf '  %s\n' "${found[@]}"
  exit 1
fi
echo "fuzz.sh: ${#targets[@]} targets, ${seconds}s each, no findings"
