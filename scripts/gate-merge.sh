#!/usr/bin/env bash
# Merge gate: build two git revisions on this machine and gate the candidate against the base.
#
#   scripts/gate-merge.sh BASE_REV CANDIDATE_REV [--suite S] [--rounds N] [--warmup N]
#                         [--thresholds FILE] [--quick] [--out-dir DIR] [--preset P] [--keep]
#
# Each revision is checked out into its own git worktree (in a temporary folder), configured
# with `cmake --preset baseline` (or --preset P) and built (target cuzk-bench only). Then
# `cuzk-bench ab` runs the suite interleaved (base, candidate, base, candidate, ...) with the
# candidate's suite file, checking each binary's provenance against its own worktree, and
# `cuzk-bench gate` decides. The script exits with gate's code: 0 pass, 1 regression,
# 2 error (including any failure to build or run: never a pass). docs/ab.md.
set -euo pipefail

usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "gate-merge.sh: error: $*" >&2; exit 2; }

[[ $# -ge 2 ]] || { usage >&2; exit 2; }
BASE_REV=$1 CAND_REV=$2
shift 2
SUITE=e2e ROUNDS=5 WARMUP=1 THRESHOLDS="" QUICK="" OUT_DIR="" PRESET=baseline KEEP=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --suite) SUITE=${2:?--suite needs a value}; shift 2 ;;
    --rounds) ROUNDS=${2:?--rounds needs a value}; shift 2 ;;
    --warmup) WARMUP=${2:?--warmup needs a value}; shift 2 ;;
    --thresholds) THRESHOLDS=${2:?--thresholds needs a value}; shift 2 ;;
    --quick) QUICK=--quick; shift ;;
    --out-dir) OUT_DIR=${2:?--out-dir needs a value}; shift 2 ;;
    --preset) PRESET=${2:?--preset needs a value}; shift 2 ;;
    --keep) KEEP=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1'" ;;
  esac
done

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

WORK=$(mktemp -d "${TMPDIR:-/tmp}/cuzk-gate-XXXXXX")
cleanup() {
  if [[ $KEEP == 1 ]]; then echo "gate-merge.sh: worktrees kept in $WORK" >&2; return; fi
  git -C "$ROOT" worktree remove --force "$WORK/base" >/dev/null 2>&1 || true
  git -C "$ROOT" worktree remove --force "$WORK/candidate" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

build() {  # build <name> <sha>
  local dir=$WORK/$1
  echo "gate-merge.sh: building $1 ($2) with preset $PRESET in $dir" >&2
  git -C "$ROOT" worktree add --detach "$dir" "$2" >/dev/null 2>&1 || die "git worktree add $dir $2 failed"
  (cd "$dir" && cmake --preset "$PRESET" >&2 && cmake --build "build/$PRESET" --target cuzk-bench >&2) ||
    die "building $1 ($2) failed"
  [[ -x $dir/build/$PRESET/harness/cuzk-bench ]] || die "$dir/build/$PRESET/harness/cuzk-bench was not built"
}
build base "$BASE_SHA"
build candidate "$CAND_SHA"
BIN_A=$WORK/base/build/$PRESET/harness/cuzk-bench
BIN_B=$WORK/candidate/build/$PRESET/harness/cuzk-bench

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
  --suite "$SUITE_FILE" --rounds "$ROUNDS" --warmup "$WARMUP" $QUICK --out-dir "$OUT_DIR"
rc=$?
set -e
[[ $rc == 0 ]] || die "the A/B run failed (exit $rc); see above"

set +e
"$BIN_B" gate --baseline "$OUT_DIR/a.jsonl" --candidate "$OUT_DIR/b.jsonl" --thresholds "$THRESHOLDS" \
  --json-out "$OUT_DIR/gate.json" --markdown-out "$OUT_DIR/gate.md"
rc=$?
set -e
echo "gate-merge.sh: base $BASE_SHA, candidate $CAND_SHA, gate exit $rc; results in $OUT_DIR" >&2
exit $rc
