#!/usr/bin/env bash
# Backfill the results history from the project's past: build each commit of a range, run one
# case, ingest the results.
#
#   scripts/history-backfill.sh REV_RANGE --suite S --case C [--db DB] [--runs K] [--reps N]
#        [--quick] [--counters LIST] [--preset P] [--cmake-arg ARG]... [--work-dir DIR] [--keep]
#        [--branch B] [--bench PATH]
#
# REV_RANGE is what `git rev-list` takes (main~30..main, or A..B); commits are taken oldest
# first. Each commit is checked out into its own git worktree (DIR/<sha>, DIR a temporary
# folder unless --work-dir), configured with `cmake --preset P` (default baseline; plus each
# --cmake-arg, e.g. -DCUZK_CUDA=OFF) with ccache as the compiler launcher where installed, and
# cuzk-bench is built. Its provenance must name that commit, clean. Then it runs the suite file
# of that commit, case C only, in K processes (--runs, default 3) of N repetitions (--reps,
# default: the suite's), and the results are ingested with the history tool (--bench, default
# build/default/harness/cuzk-bench of this checkout) into --db (default results/history.sqlite).
#
# Resumable: commits the store already holds for this suite, case and machine (measured, or
# recorded as failed) are skipped, so an interrupted backfill run again goes on where it
# stopped. A commit that does not build, or whose run fails, is recorded as such in the store
# (`history commits` lists it) and the backfill goes on. The worktree of each commit is removed
# once it is measured, unless --keep. Exit 0 when every commit was measured or recorded, 2 on
# bad input or a provenance mismatch, 130/143 when interrupted (the worktree in use is removed).
# docs/history.md, "Backfill".
set -euo pipefail

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
die() { echo "history-backfill.sh: error: $*" >&2; exit 2; }
need() { [[ $# -ge 2 ]] || die "$1 needs a value"; }

[[ $# -ge 1 ]] || { usage >&2; exit 2; }
case $1 in -h|--help) usage; exit 0 ;; esac
RANGE=$1
shift
SUITE="" CASE="" DB="" RUNS=3 REPS="" QUICK="" COUNTERS="" PRESET=baseline WORK_DIR="" KEEP=0 BRANCH="" BENCH=""
CMAKE_ARGS=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --suite) need "$@"; SUITE=$2; shift 2 ;;
    --case) need "$@"; CASE=$2; shift 2 ;;
    --db) need "$@"; DB=$2; shift 2 ;;
    --runs) need "$@"; RUNS=$2; shift 2 ;;
    --reps) need "$@"; REPS=$2; shift 2 ;;
    --quick) QUICK=--quick; shift ;;
    --counters) need "$@"; COUNTERS=$2; shift 2 ;;
    --preset) need "$@"; PRESET=$2; shift 2 ;;
    --cmake-arg) need "$@"; CMAKE_ARGS+=("$2"); shift 2 ;;
    --work-dir) need "$@"; WORK_DIR=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --branch) need "$@"; BRANCH=$2; shift 2 ;;
    --bench) need "$@"; BENCH=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1'" ;;
  esac
done
[[ -n $SUITE ]] || die "--suite is required (a suite name of suites/, as each commit has it)"
[[ -n $CASE ]] || die "--case is required (one case of the suite)"
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "--runs must be a whole number of at least 1 (got '$RUNS')"
[[ -z $REPS || $REPS =~ ^[1-9][0-9]*$ ]] || die "--reps must be a whole number of at least 1 (got '$REPS')"
[[ $SUITE =~ ^[A-Za-z0-9._-]+$ ]] || die "--suite must be a suite name of suites/ (got '$SUITE')"

ROOT=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel) || die "not inside a git repository"
cd "$ROOT"
[[ -n $DB ]] || DB=$ROOT/results/history.sqlite
[[ $DB == postgres://* || $DB == postgresql://* ]] || { mkdir -p "$(dirname "$DB")" && DB=$(realpath "$DB"); }
[[ -n $BENCH ]] || BENCH=$ROOT/build/default/harness/cuzk-bench
[[ -x $BENCH ]] || die "no history tool at $BENCH: build this checkout (cmake --build --preset default) or give --bench PATH"
BENCH=$(realpath "$BENCH")
"$BENCH" history commits --help >/dev/null 2>&1 || die "$BENCH has no 'history commits': it is older than the backfill"

mapfile -t COMMITS < <(git rev-list --reverse "$RANGE" -- 2>/dev/null) || true
[[ ${#COMMITS[@]} -gt 0 ]] || die "no commits in '$RANGE' (git rev-list --reverse '$RANGE' lists none)"

declare -A STORED=()
while read -r sha status; do [[ -n $sha ]] && STORED[$sha]=$status; done < <(
  "$BENCH" history commits --db "$DB" --suite "$SUITE" --case "$CASE" --machine this) ||
  die "cannot read the commits stored in $DB"

if [[ -n $WORK_DIR ]]; then
  mkdir -p "$WORK_DIR" || die "--work-dir $WORK_DIR: cannot create it"
  WORK=$(realpath "$WORK_DIR")
else
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/cuzk-backfill-XXXXXX")
fi
mkdir -p "$WORK/results" "$WORK/logs"
LAUNCHER=()
if command -v ccache >/dev/null; then
  LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  # Paths below the work folder hash as relative paths: one commit's objects serve the next
  # commit's identical sources although each has its own worktree.
  export CCACHE_BASEDIR=$WORK CCACHE_NOHASHDIR=1
fi

CURRENT=""  # the worktree being built or measured
remove_worktree() {
  local dir=$1
  [[ -n $dir && -e $dir ]] || return 0
  git -C "$ROOT" worktree remove --force "$dir" >/dev/null 2>&1 || rm -rf "$dir"
  git -C "$ROOT" worktree prune >/dev/null 2>&1 || true
}
on_signal() {
  echo "history-backfill.sh: interrupted; what was ingested stays, the next run goes on from there" >&2
  [[ $KEEP == 1 ]] || remove_worktree "$CURRENT"
  [[ -n $WORK_DIR ]] || rm -rf "$WORK"
  exit "$1"
}
trap 'on_signal 130' INT
trap 'on_signal 143' TERM
if [[ -z $WORK_DIR ]]; then trap 'rm -rf "$WORK"' EXIT; fi

record() {  # record <sha> <build|run> <message>
  "$BENCH" history record-failure --db "$DB" --commit "$1" --stage "$2" --suite "$SUITE" --case "$CASE" \
    --message "$3" >/dev/null || die "cannot record the failure of $1 in $DB"
  echo "history-backfill.sh: ${1:0:12}: $2 failed: $3" >&2
}
last_error() {  # the log's last line that says what failed
  grep -E 'error|Error|FAILED' "$1" | tail -n 1 | cut -c1-300 || tail -n 1 "$1" | cut -c1-300
}

measured=0 skipped=0 failed=0 n=0
for sha in "${COMMITS[@]}"; do
  n=$((n + 1))
  short=${sha:0:12}
  if [[ -n ${STORED[$sha]:-} ]]; then
    skipped=$((skipped + 1))
    echo "history-backfill.sh: [$n/${#COMMITS[@]}] $short: already stored (${STORED[$sha]})" >&2
    continue
  fi
  dir=$WORK/$short
  CURRENT=$dir
  echo "history-backfill.sh: [$n/${#COMMITS[@]}] $short: $(git log -1 --format=%s "$sha" | cut -c1-60)" >&2
  remove_worktree "$dir"
  git -C "$ROOT" worktree add --detach "$dir" "$sha" >/dev/null 2>&1 || die "git worktree add $dir $sha failed"
  log=$WORK/logs/$short-build.log
  if ! (cd "$dir" && cmake --preset "$PRESET" "${LAUNCHER[@]}" "${CMAKE_ARGS[@]}" &&
        cmake --build "build/$PRESET" --target cuzk-bench) >"$log" 2>&1; then
    record "$sha" build "$(last_error "$log") (log: $log)"
    failed=$((failed + 1))
    [[ $KEEP == 1 ]] || remove_worktree "$dir"
    continue
  fi
  bin=$dir/build/$PRESET/harness/cuzk-bench
  # The binary must say it is this commit, built from a clean tree: else the point would be
  # stored under another commit's name.
  prov=$("$bin" info --json 2>/dev/null | python3 -c '
import json, sys
p = json.load(sys.stdin)["provenance"]
print(p.get("git_commit", ""), "git_dirty=" + str(p.get("git_dirty", "unknown")).lower())') || die "$bin info --json failed"
  [[ $prov == "$sha git_dirty=false" ]] || die "$bin says it is '$prov', not '$sha git_dirty=false'"
  suite_file=$dir/suites/$SUITE.toml
  if [[ ! -f $suite_file ]]; then
    record "$sha" run "no suite file suites/$SUITE.toml at this commit"
    failed=$((failed + 1))
    [[ $KEEP == 1 ]] || remove_worktree "$dir"
    continue
  fi
  files=() ok=1
  for ((r = 0; r < RUNS; r++)); do
    out=$WORK/results/$short-$r.jsonl
    rm -f "$out"
    args=(run --suite "$suite_file" --case "$CASE" --out "$out")
    [[ -n $QUICK ]] && args+=("$QUICK")
    [[ -n $REPS ]] && args+=(--reps "$REPS")
    [[ -n $COUNTERS ]] && args+=(--counters "$COUNTERS")
    rlog=$WORK/logs/$short-run-$r.log
    # From the repository root, so that every commit shares results/local/params.
    if ! "$bin" "${args[@]}" >"$rlog" 2>&1; then
      record "$sha" run "$(last_error "$rlog") (log: $rlog)"
      ok=0
      break
    fi
    files+=("$out")
  done
  if [[ $ok == 1 ]]; then
    ingest_args=(history ingest "${files[@]}" --db "$DB" --repo "$ROOT")
    [[ -n $BRANCH ]] && ingest_args+=(--branch "$BRANCH")
    "$BENCH" "${ingest_args[@]}" >"$WORK/logs/$short-ingest.log" 2>&1 ||
      die "ingesting $short failed: $(tail -n 1 "$WORK/logs/$short-ingest.log")"
    measured=$((measured + 1))
  else
    failed=$((failed + 1))
  fi
  [[ $KEEP == 1 ]] || remove_worktree "$dir"
  CURRENT=""
done
echo "history-backfill.sh: ${#COMMITS[@]} commits: $measured measured, $failed recorded as failed, $skipped already stored; into $DB" >&2
echo "history-backfill.sh: next: $BENCH history changes --db $DB --suite $SUITE --case $CASE" >&2
