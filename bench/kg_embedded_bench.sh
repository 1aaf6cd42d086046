#!/usr/bin/env bash
# The embedded default KG (docs/benchmarks.md "Issue 14: wider KG"): build time and peak RSS of
# `ibgr kg build`, kgstore open time and resident memory while serving, and ExtractSubgraph
# latency on loopback from random seeds (kgstore_loadgen) at the retriever's request shape
# (2 hops, 2,000 triples, auto fan-out) and at the benchmark shape (10,000 triples, fan-out 1,000).
#
#   bench/kg_embedded_bench.sh [--seconds=S] [--clients=1,2] [--base=DIR]
#   IBGR_BIN=/other/build/bin IBGR_LOADGEN=build/bin/kgstore_loadgen bench/kg_embedded_bench.sh
#                                   # another build's ibgr and kgstore, this build's client
#
# With --base the snapshot there is reused (not rebuilt); otherwise a temp dir is built and removed.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_LEVEL=10; CLIENTS=1,2; BASE=""
source bench/bench_common.sh
parse_bench_args "$@"
LOADGEN="${IBGR_LOADGEN:-$BIN/kgstore_loadgen}"  # the client may come from another build
DATA_DIR="${IBGR_DATA_DIR:-$PWD/../shared/data}"
WORK=$(mktemp -d /tmp/ibgr-kgemb.XXXXXX)
KG_PID=""
cleanup() { [[ -n $KG_PID ]] && kill "$KG_PID" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
echo "## embedded KG: $BIN ($(nproc) cores, $(date -u '+%F %T') UTC, load $(cut -d' ' -f1-3 /proc/loadavg))"
if [[ -z $BASE ]]; then
  BASE=$WORK/art
  /usr/bin/time -f '%e %M' -o "$WORK/build.time" \
    "$BIN/ibgr" kg build --base="$BASE" --data_dir="$DATA_DIR" >"$WORK/build.log" 2>&1
  read -r secs kb <"$WORK/build.time"
  echo "kg build: ${secs} s wall, max RSS $((kb / 1024)) MiB"
  grep -E "^[0-9]+ entities" "$WORK/build.log" || true
fi
du -sh "$BASE/kg" | awk '{print "snapshot on disk: " $1}'
PORT=$((20000 + RANDOM % 20000))
start=$(date +%s.%N)
"$BIN/kgstore" --base="$BASE" --host=127.0.0.1 --port=$PORT --metrics_port=-1 --read_only \
  >"$WORK/kgstore.log" 2>&1 &
KG_PID=$!
wait_ready "$WORK/kgstore.log" "kgstore: ready" "$KG_PID"
echo "kgstore open to ready: $(python3 -c "import time; print(f'{time.time() - $start:.2f}')") s"
echo "kgstore RSS serving: $(($(awk '/VmRSS/{print $2}' /proc/$KG_PID/status) / 1024)) MiB"
for shape in "2000 0" "10000 1000"; do
  read -r triples fanout <<<"$shape"
  echo "### ExtractSubgraph 2 hops, 3 random seeds, max_triples=$triples, max_fanout=$fanout"
  "$LOADGEN" --target=127.0.0.1:$PORT --hops=2 --seeds=3 --max_triples="$triples" \
    --max_fanout="$fanout" --clients="$CLIENTS" --seconds="$SECONDS_PER_LEVEL" 2>&1 | grep -v "^WARNING"
done
# Hubs: the largest Bgee tissues (~17-23k edges each), broad DO diseases and a hub gene.
HUBS=UBERON:0000473,UBERON:0002107,UBERON:0000955,UBERON:0002113,UBERON:0002048,DOID:162,DOID:9352,DOID:1612,DOID:10652,Entrez:7157
echo "### ExtractSubgraph 2 hops, 3 seeds from 10 hubs, max_triples=2000, max_fanout=0"
"$LOADGEN" --target=127.0.0.1:$PORT --hops=2 --seeds=3 --max_triples=2000 \
  --max_fanout=0 --clients="$CLIENTS" --seconds="$SECONDS_PER_LEVEL" --seed_pool="$HUBS" 2>&1 |
  grep -v "^WARNING" || echo "(this kgstore_loadgen has no --seed_pool)"
echo "kgstore RSS after load: $(($(awk '/VmRSS/{print $2}' /proc/$KG_PID/status) / 1024)) MiB"
