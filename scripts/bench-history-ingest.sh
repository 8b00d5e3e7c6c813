#!/usr/bin/env bash
# Ingest speed of the results history (docs/history.md, "Figures"): samples and measurements
# stored per second by `cuzk-bench history ingest`, into SQLite and into PostgreSQL.
#
#   scripts/bench-history-ingest.sh [--bench PATH] [--results FILE] [--reps N] [--out FILE]
#
# The results file (default: one made here by `cuzk-bench run --suite quick --case porep-tiny
# --quick --reps 200`) is ingested N times (default 5) into a new, empty store each time: a
# SQLite file on the local disk, and a PostgreSQL server this script starts in a temporary
# folder on a unix socket with its default settings (fsync on) and stops at the end. Prints one
# line per store with the median time and the rates, and writes them as JSON to --out.
# PostgreSQL is skipped, and says so, where its server binaries are not installed.
set -euo pipefail

die() { echo "bench-history-ingest.sh: error: $*" >&2; exit 2; }
need() { [[ $# -ge 2 ]] || die "$1 needs a value"; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH=$ROOT/build/default/harness/cuzk-bench RESULTS="" REPS=5 OUT=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --bench) need "$@"; BENCH=$2; shift 2 ;;
    --results) need "$@"; RESULTS=$2; shift 2 ;;
    --reps) need "$@"; REPS=$2; shift 2 ;;
    --out) need "$@"; OUT=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1'" ;;
  esac
done
[[ -x $BENCH ]] || die "no cuzk-bench at $BENCH (--bench PATH)"
BENCH=$(realpath "$BENCH")
[[ $REPS =~ ^[1-9][0-9]*$ ]] || die "--reps must be a whole number of at least 1 (got '$REPS')"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/cuzk-ingest-bench-XXXXXX")
PG_BIN="" PG_AS=() PG_RUNNING=0
cleanup() {
  if [[ $PG_RUNNING == 1 ]]; then "${PG_AS[@]}" "$PG_BIN/pg_ctl" -D "$TMP/pg/data" -m fast -w stop >/dev/null 2>&1 || true; fi
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [[ -z $RESULTS ]]; then
  RESULTS=$TMP/results.jsonl
  (cd "$TMP" && "$BENCH" run --suite "$ROOT/suites/quick.toml" --case porep-tiny --quick --reps 200 --out "$RESULTS" >/dev/null 2>&1) ||
    die "making the results file failed: $BENCH run --suite quick --case porep-tiny --quick --reps 200"
fi
[[ -f $RESULTS ]] || die "--results $RESULTS: no such file"
read -r SAMPLES MEASUREMENTS < <(python3 - "$RESULTS" <<'PY'
import json, sys
s = m = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("type") != "sample":
        continue
    s += 1
    for ph in r.get("phases", {}).values():
        m += sum(1 for k in ("wall_ns", "gpu_ns") if isinstance(ph.get(k), (int, float)))
        m += sum(1 for v in ph.get("counters", {}).values() if isinstance(v, (int, float)))
print(s, m)
PY
)

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
time_ingest() {  # time_ingest <db>: seconds of one ingest into that store
  local t0 t1
  t0=$(date +%s.%N)
  "$BENCH" history ingest "$RESULTS" --db "$1" >/dev/null || die "ingest into $1 failed"
  t1=$(date +%s.%N)
  python3 -c "print(f'{$t1 - $t0:.4f}')"
}
declare -A SECS=()
for ((i = 0; i < REPS; i++)); do
  rm -f "$TMP"/h.sqlite*
  SECS[sqlite]+="$(time_ingest "$TMP/h.sqlite") "
done

PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
if [[ -n $PG_BIN && -x $PG_BIN/initdb ]]; then
  mkdir -p "$TMP/pg"
  user=$(id -un)
  if [[ $(id -u) == 0 ]]; then PG_AS=(runuser -u postgres --); user=postgres; chown postgres "$TMP/pg"; chmod 755 "$TMP"; fi
  port=$((20000 + $$ % 20000))
  "${PG_AS[@]}" "$PG_BIN/initdb" -D "$TMP/pg/data" -A trust -U "$user" >/dev/null || die "initdb failed"
  "${PG_AS[@]}" "$PG_BIN/pg_ctl" -D "$TMP/pg/data" -l "$TMP/pg/log" -w -t 60 \
    -o "-k $TMP/pg -c listen_addresses='' -p $port" start >/dev/null || die "pg_ctl start failed: $(tail -n 3 "$TMP/pg/log")"
  PG_RUNNING=1
  for ((i = 0; i < REPS; i++)); do
    "${PG_AS[@]}" "$PG_BIN/psql" -h "$TMP/pg" -p "$port" -U "$user" -d postgres -qc "DROP DATABASE IF EXISTS bench" >/dev/null 2>&1
    "${PG_AS[@]}" "$PG_BIN/psql" -h "$TMP/pg" -p "$port" -U "$user" -d postgres -qc "CREATE DATABASE bench" >/dev/null
    SECS[postgresql]+="$(time_ingest "postgresql:///bench?host=$TMP/pg&port=$port&user=$user") "
  done
else
  echo "bench-history-ingest.sh: PostgreSQL skipped: no server binaries under /usr/lib/postgresql (scripts/setup.sh installs them)" >&2
fi

json="{\"results\": \"$RESULTS\", \"samples\": $SAMPLES, \"measurements\": $MEASUREMENTS, \"reps\": $REPS, \"stores\": {"
first=1
for store in sqlite postgresql; do
  [[ -n ${SECS[$store]:-} ]] || continue
  med=$(tr ' ' '\n' <<<"${SECS[$store]}" | grep . | median)
  printf '%-10s %d samples, %d measurements: median %.3f s of %d ingests (%s s): %.0f samples/s, %.0f measurements/s\n' \
    "$store" "$SAMPLES" "$MEASUREMENTS" "$med" "$REPS" "$(echo ${SECS[$store]})" \
    "$(python3 -c "print($SAMPLES / $med)")" "$(python3 -c "print($MEASUREMENTS / $med)")"
  [[ $first == 1 ]] || json+=", "
  first=0
  json+="\"$store\": {\"seconds\": [$(echo ${SECS[$store]} | tr ' ' ',')], \"median_s\": $med}"
done
json+="}}"
[[ -z $OUT ]] || printf '%s\n' "$json" >"$OUT"
