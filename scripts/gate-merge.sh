#!/usr/bin/env bash
# Merge gate: build two git revisions on this machine and gate the candidate against the base.
#
#   scripts/gate-merge.sh BASE_REV CANDIDATE_REV [--suite S] [--rounds N] [--warmup N]
#                         [--thresholds FILE] [--quick] [--out-dir DIR] [--preset P] [--keep]
#                         [--confirm-rounds N] [--work-dir DIR] [--cmake-arg ARG]...
#                         [--counters LIST] [--case NAME]... [--reps R] [--duet]
#                         [--design auto|paired|blocks|samples] [--keep-binaries DIR]
#
# Each revision is checked out into its own git worktree (in a temporary folder, or in DIR/base
# and DIR/candidate with --work-dir, kept afterwards and reused by the next run so that a
# rebuild is incremental), configured with `cmake --preset baseline` (or --preset P, plus each
# --cmake-arg, e.g. -DCUZK_CUDA=OFF on a runner without a GPU) and built (target cuzk-bench
# only). Then `cuzk-bench ab` runs the suite interleaved (base, candidate, base, candidate, ...)
# with the candidate's suite file (only the --case cases, when given), checking each binary's
# provenance against its own worktree, and `cuzk-bench gate` decides. `--counters sim` records
# simulated instruction counts (Valgrind; with `--suite sim`, whose case is judged by them, a
# gate no neighbour can disturb). An alarm is re-measured before it fails the merge: the
# alarmed cases run again for --confirm-rounds rounds (default twice --rounds; 0: no
# confirmation) and the gate fails only on alarms the fresh rounds confirm on their own. The
# script exits with gate's code: 0 pass, 1 regression, 2 error (including any failure to build
# or run, or an interruption: never a pass). --keep-binaries copies both cuzk-bench binaries to
# DIR/base and DIR/candidate before the worktrees go. docs/ab.md, docs/gating.md.
set -euo pipefail

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
die() { echo "gate-merge.sh: error: $*" >&2; exit 2; }
# An option without its value is an error (exit 2); bash's ${2:?} would exit 1, a "regression".
need() { [[ $# -ge 2 ]] || die "$1 needs a value"; }

[[ $# -ge 2 ]] || { usage >&2; exit 2; }
BASE_REV=$1 CAND_REV=$2
shift 2
SUITE=e2e ROUNDS=5 WARMUP=1 THRESHOLDS="" QUICK="" OUT_DIR="" PRESET=baseline KEEP=0 CONFIRM_ROUNDS=""
WORK_DIR="" KEEP_BINARIES="" CMAKE_ARGS=() COUNTER_ARGS=() ONLY_CASES=() AB_ARGS=() GATE_ARGS=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --suite) need "$@"; SUITE=$2; shift 2 ;;
    --rounds) need "$@"; ROUNDS=$2; shift 2 ;;
    --warmup) need "$@"; WARMUP=$2; shift 2 ;;
    --thresholds) need "$@"; THRESHOLDS=$2; shift 2 ;;
    --quick) QUICK=--quick; shift ;;
    --out-dir) need "$@"; OUT_DIR=$2; shift 2 ;;
    --preset) need "$@"; PRESET=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --confirm-rounds) need "$@"; CONFIRM_ROUNDS=$2; shift 2 ;;
    --work-dir) need "$@"; WORK_DIR=$2; shift 2 ;;
    --cmake-arg) need "$@"; CMAKE_ARGS+=("$2"); shift 2 ;;
    --counters) need "$@"; COUNTER_ARGS=(--counters "$2"); shift 2 ;;
    --case) need "$@"; ONLY_CASES+=(--case "$2"); shift 2 ;;
    --reps) need "$@"; [[ $2 =~ ^[1-9][0-9]*$ ]] || die "--reps must be a whole number of at least 1 (got '$2')"
      AB_ARGS+=(--reps "$2"); shift 2 ;;
    --duet) AB_ARGS+=(--duet); shift ;;
    --keep-binaries) need "$@"; KEEP_BINARIES=$2; shift 2 ;;
    --design) need "$@"; GATE_ARGS+=(--design "$2"); shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1'" ;;
  esac
done

[[ $ROUNDS =~ ^[0-9]+$ ]] || die "--rounds must be a whole number (got '$ROUNDS')"
[[ -n $CONFIRM_ROUNDS ]] || CONFIRM_ROUNDS=$((2 * ROUNDS))
[[ $CONFIRM_ROUNDS =~ ^[0-9]+$ ]] || die "--confirm-rounds must be a whole number, 0 to fail on the first alarm (got '$CONFIRM_ROUNDS')"

ROOT=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel) || die "not inside a git repository"
cd "$ROOT"
BASE_SHA=$(git rev-parse --verify "$BASE_REV^{commit}" 2>/dev/null) || die "no such revision: $BASE_REV"
CAND_SHA=$(git rev-parse --verify "$CAND_REV^{commit}" 2>/dev/null) || die "no such revision: $CAND_REV"
if [[ -z $THRESHOLDS ]]; then
  for f in suites/gate-thresholds.toml results/thresholds.toml; do
    [[ -f $f ]] && { THRESHOLDS=$ROOT/$f; break; }
  done
  [[ -n $THRESHOLDS ]] || die "no --thresholds given and no suites/gate-thresholds.toml (docs/gating.md)"
fi
[[ -f $THRESHOLDS ]] || die "--thresholds $THRESHOLDS: no such file"
THRESHOLDS=$(realpath "$THRESHOLDS")

if [[ -n $WORK_DIR ]]; then
  mkdir -p "$WORK_DIR" || die "--work-dir $WORK_DIR: cannot create it"
  WORK=$(realpath "$WORK_DIR")
  KEEP=1
else
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/cuzk-gate-XXXXXX")
fi
cleanup() {
  if [[ $KEEP == 1 ]]; then echo "gate-merge.sh: worktrees kept in $WORK" >&2; return; fi
  git -C "$ROOT" worktree remove --force "$WORK/base" >/dev/null 2>&1 || true
  git -C "$ROOT" worktree remove --force "$WORK/candidate" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
# An interruption is an error, never a pass; exiting runs the EXIT trap, which removes the worktrees.
trap 'echo "gate-merge.sh: interrupted" >&2; exit 2' INT TERM

checkout() {  # checkout <dir> <sha>: a new worktree, or one a previous --work-dir run left
  local dir=$1 sha=$2
  if [[ -e $dir ]]; then
    # Only a worktree of this repository is reused; anything else in the way is the user's.
    git -C "$ROOT" worktree list --porcelain | grep -qxF "worktree $dir" ||
      die "$dir exists and is not a worktree of $ROOT; remove it or choose another --work-dir"
    git -C "$dir" checkout --quiet --force --detach "$sha" >/dev/null 2>&1 || die "git checkout $sha in $dir failed"
  else
    git -C "$ROOT" worktree add --detach "$dir" "$sha" >/dev/null 2>&1 || die "git worktree add $dir $sha failed"
  fi
}

build() {  # build <name> <sha>
  local dir=$WORK/$1
  echo "gate-merge.sh: building $1 ($2) with preset $PRESET in $dir" >&2
  checkout "$dir" "$2"
  (cd "$dir" && cmake --preset "$PRESET" "${CMAKE_ARGS[@]}" >&2 && cmake --build "build/$PRESET" --target cuzk-bench >&2) ||
    die "building $1 ($2) failed"
  [[ -x $dir/build/$PRESET/harness/cuzk-bench ]] || die "$dir/build/$PRESET/harness/cuzk-bench was not built"
}
build base "$BASE_SHA"
build candidate "$CAND_SHA"
BIN_A=$WORK/base/build/$PRESET/harness/cuzk-bench
BIN_B=$WORK/candidate/build/$PRESET/harness/cuzk-bench
if [[ -n $KEEP_BINARIES ]]; then
  mkdir -p "$KEEP_BINARIES/base" "$KEEP_BINARIES/candidate" &&
    cp "$BIN_A" "$KEEP_BINARIES/base/cuzk-bench" && cp "$BIN_B" "$KEEP_BINARIES/candidate/cuzk-bench" ||
    die "--keep-binaries $KEEP_BINARIES: cannot copy the binaries there"
fi

# The candidate's suite file drives both sides (same cases, same seeds).
SUITE_FILE=$SUITE
[[ $SUITE == */* || $SUITE == *.toml ]] || SUITE_FILE=$WORK/candidate/suites/$SUITE.toml
[[ -f $SUITE_FILE ]] || die "no suite file $SUITE_FILE"
SUITE_FILE=$(realpath "$SUITE_FILE")
[[ -n $OUT_DIR ]] || OUT_DIR=$ROOT/results/local/$(date -u +%Y%m%dT%H%M%SZ)-gate-${BASE_SHA:0:10}-vs-${CAND_SHA:0:10}
mkdir -p "$(dirname "$OUT_DIR")"

# Parameters are cached per working directory: run from the repository root so both sides
# share results/local/params.
set +e
"$BIN_B" ab --a-name base --b-name candidate --bin-a "$BIN_A" --bin-b "$BIN_B" \
  --source-dir "$WORK/base" --source-dir-b "$WORK/candidate" \
  --suite "$SUITE_FILE" --rounds "$ROUNDS" --warmup "$WARMUP" $QUICK "${COUNTER_ARGS[@]}" "${ONLY_CASES[@]}" \
  "${AB_ARGS[@]}" --out-dir "$OUT_DIR"
rc=$?
set -e
[[ $rc == 0 ]] || die "the A/B run failed (exit $rc); see above"

set +e
"$BIN_B" gate --baseline "$OUT_DIR/a.jsonl" --candidate "$OUT_DIR/b.jsonl" --thresholds "$THRESHOLDS" \
  "${GATE_ARGS[@]}" --json-out "$OUT_DIR/gate.json" --markdown-out "$OUT_DIR/gate.md" --cases-out "$OUT_DIR/alarmed-cases.txt"
rc=$?
set -e

# Confirmation: the alarmed cases again, on fresh rounds, judged on those rounds alone (the first
# rounds were picked because they looked slow; reusing them would carry that into the test).
if [[ $rc == 1 && $CONFIRM_ROUNDS -gt 0 ]]; then
  CASE_ARGS=()
  while IFS= read -r c; do [[ -n $c ]] && CASE_ARGS+=(--case "$c"); done <"$OUT_DIR/alarmed-cases.txt"
  [[ ${#CASE_ARGS[@]} -gt 0 ]] || die "the gate reported a regression but named no case to re-measure"
  echo "gate-merge.sh: alarm; re-measuring $((${#CASE_ARGS[@]} / 2)) case(s) with $CONFIRM_ROUNDS more rounds" >&2
  set +e
  "$BIN_B" ab --a-name base --b-name candidate --bin-a "$BIN_A" --bin-b "$BIN_B" \
    --source-dir "$WORK/base" --source-dir-b "$WORK/candidate" \
    --suite "$SUITE_FILE" --rounds "$CONFIRM_ROUNDS" --warmup "$WARMUP" $QUICK "${COUNTER_ARGS[@]}" "${CASE_ARGS[@]}" \
    "${AB_ARGS[@]}" --out-dir "$OUT_DIR/confirm"
  rc=$?
  set -e
  [[ $rc == 0 ]] || die "the confirming A/B run failed (exit $rc); see above"
  set +e
  "$BIN_B" gate --baseline "$OUT_DIR/a.jsonl" --candidate "$OUT_DIR/b.jsonl" --thresholds "$THRESHOLDS" \
    --confirm-with "$OUT_DIR/confirm/a.jsonl" "$OUT_DIR/confirm/b.jsonl" "${GATE_ARGS[@]}" \
    --json-out "$OUT_DIR/gate.json" --markdown-out "$OUT_DIR/gate.md"
  rc=$?
  set -e
  case $rc in
    0) echo "gate-merge.sh: re-measured $CONFIRM_ROUNDS more rounds: not confirmed (pass)" >&2 ;;
    1) echo "gate-merge.sh: re-measured $CONFIRM_ROUNDS more rounds: confirmed (regression)" >&2 ;;
  esac
fi
[[ $rc == 0 || $rc == 1 ]] || rc=2
echo "gate-merge.sh: base $BASE_SHA, candidate $CAND_SHA, gate exit $rc; results in $OUT_DIR" >&2
exit $rc
