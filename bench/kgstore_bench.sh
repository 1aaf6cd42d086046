#!/usr/bin/env bash
# kgstore at PrimeKG scale against PostgreSQL 15 in the same run (docs/benchmarks.md).
#
#   bench/kgstore_bench.sh [--triples N] [--seconds S] [--clients 1,2] [--no-postgres]
#
# 1. `ibgr kg synth`: 8.1M synthetic triples with PrimeKG's relation mix -> snapshot (SST ingest);
# 2. kgstore first open and reopen to SERVING, resident memory while serving;
# 3. PostgreSQL: COPY the same triples + B-tree indexes on head and tail;
# 4. kgstore_loadgen: ExtractSubgraph 2 hops from 3 random seeds capped at 10,000 triples over
#    gRPC on loopback, and the same query against PostgreSQL, 1 and 2 clients.
# Everything runs on loopback in a temp dir that is removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
TRIPLES=8100498; SECONDS_PER_LEVEL=10; CLIENTS=1,2; POSTGRES=1
while (($#)); do
  case "$1" in
    --triples) TRIPLES=$2; shift 2 ;;
    --seconds) SECONDS_PER_LEVEL=$2; shift 2 ;;
    --clients) CLIENTS=$2; shift 2 ;;
    --no-postgres) POSTGRES=0; shift ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
BIN=build/bin
[[ -x $BIN/kgstore_loadgen && -x $BIN/kgstore && -x $BIN/ibgr ]] || scripts/build.sh --target kgstore ibgr kgstore_loadgen
WORK=$(mktemp -d /tmp/ibgr-kgbench.XXXXXX)
chmod 755 "$WORK"
PGBIN=/usr/lib/postgresql/15/bin
KG_PID=""; PG_STARTED=0
cleanup() {
  [[ -n $KG_PID ]] && kill "$KG_PID" 2>/dev/null || true
  if ((PG_STARTED)); then runuser -u postgres -- "$PGBIN/pg_ctl" -D "$WORK/pg" -m immediate stop >/dev/null 2>&1 || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
now() { date +%s.%N; }
elapsed() { python3 -c "print(f'{$2 - $1:.2f}')"; }

ENTITIES=$(python3 -c "print(max(1000, round(129375 * $TRIPLES / 8100498)))")
echo "## kgstore vs PostgreSQL: $TRIPLES triples, $ENTITIES entities ($(nproc) cores, $(date -u +%F))"
t0=$(now)
$BIN/ibgr kg synth --base="$WORK/art" --synth_triples="$TRIPLES" --synth_entities="$ENTITIES" \
  --tsv_out="$WORK/triples.tsv" > "$WORK/synth.log"
t1=$(now)
grep -E "generated|snapshot:" "$WORK/synth.log" | sed 's/^/    /'

start_kgstore() {  # sets KG_PID and OPEN_S (seconds from exec to the "ready" log line)
  local log=$1; local s; s=$(now)
  $BIN/kgstore --base="$WORK/art" --host=127.0.0.1 --port=0 --metrics_port=-1 > "$log" 2>&1 &
  KG_PID=$!
  until grep -q '"kgstore: ready"' "$log"; do
    kill -0 "$KG_PID" 2>/dev/null || { cat "$log" >&2; exit 1; }
    sleep 0.05
  done
  OPEN_S=$(elapsed "$s" "$(now)")
}
start_kgstore "$WORK/kgstore-1.log"; first_open=$OPEN_S
kill "$KG_PID"; wait "$KG_PID" 2>/dev/null || true
start_kgstore "$WORK/kgstore-2.log"; reopen=$OPEN_S
PORT=$(grep '"kgstore: ready"' "$WORK/kgstore-2.log" | sed -E 's/.*"port":([0-9]+).*/\1/')
write_s=$(grep -oE 'snapshot: .*written in [0-9.]+' "$WORK/synth.log" | grep -oE '[0-9.]+$')
echo
echo "| step | seconds |"
echo "|---|---|"
echo "| generate + write snapshot (ibgr kg synth, total) | $(elapsed "$t0" "$t1") |"
echo "| write snapshot only (SST files + IngestExternalFile) | $write_s |"
echo "| first open to SERVING | $first_open |"
echo "| reopen to SERVING | $reopen |"
echo "| load to SERVING (write + first open) | $(python3 -c "print(f'{$write_s + $first_open:.2f}')") |"

if ((POSTGRES)); then
  mkdir -p "$WORK/pg" "$WORK/pgsock" && chown postgres "$WORK/pg" "$WORK/pgsock"
  runuser -u postgres -- "$PGBIN/initdb" -D "$WORK/pg" -A trust >/dev/null
  runuser -u postgres -- "$PGBIN/pg_ctl" -D "$WORK/pg" -l "$WORK/pgsock/pg.log" \
    -o "-p 5433 -k $WORK/pgsock -c listen_addresses=127.0.0.1 -c shared_buffers=1GB -c max_wal_size=4GB" start >/dev/null
  PG_STARTED=1
  PSQL=(runuser -u postgres -- psql -h 127.0.0.1 -p 5433 -q -v ON_ERROR_STOP=1)
  "${PSQL[@]}" -c "CREATE DATABASE kg" postgres
  chmod 644 "$WORK/triples.tsv"
  p0=$(now)
  "${PSQL[@]}" kg -c "CREATE TABLE triples (head int NOT NULL, rel int NOT NULL, tail int NOT NULL)" \
    -c "COPY triples FROM '$WORK/triples.tsv'" \
    -c "CREATE INDEX ON triples (head)" -c "CREATE INDEX ON triples (tail)" -c "ANALYZE triples"
  p1=$(now)
  echo "| PostgreSQL COPY + 2 B-tree indexes + ANALYZE | $(elapsed "$p0" "$p1") |"
  PG_ARGS=(--postgres="host=127.0.0.1 port=5433 dbname=kg user=postgres")
else
  PG_ARGS=()
fi
echo
echo "kgstore resident memory after open: $(grep VmRSS /proc/$KG_PID/status | awk '{printf "%.0f MiB", $2/1024}')"
echo
$BIN/kgstore_loadgen --target="127.0.0.1:$PORT" --seconds="$SECONDS_PER_LEVEL" --clients="$CLIENTS" "${PG_ARGS[@]}"
echo
echo "kgstore resident memory after load: $(grep VmRSS /proc/$KG_PID/status | awk '{printf "%.0f MiB", $2/1024}')"
