#!/usr/bin/env bash
# The performance check of a pull request: build base and head, measure, gate, keep both in the
# results history, and write the story for the people who decide.
#
#   scripts/ci-perf.sh --base REV --head REV [--suite S] [--case C]... [--rounds N] [--reps R]
#        [--duet] [--design D] [--warmup N] [--quick] [--counters LIST] [--thresholds FILE]
#        [--preset P] [--cmake-arg ARG]... [--confirm-rounds N] [--work-dir DIR]
#        [--history DB] [--base-branch B] [--head-branch B] [--out-dir DIR] [--always]
#
# 1. When no file outside docs/, results/ and *.md changed between the merge base of BASE and
#    HEAD (`git diff BASE...HEAD`), nothing is built: the summary and the comment say so, exit 0
#    (--always measures anyway).
# 2. scripts/gate-merge.sh builds both revisions in worktrees, runs the suite's cases
#    interleaved with the design this runner's calibration chose (--rounds, --reps, --duet,
#    --design: docs/calibration.md), gates with the thresholds file (per-phase policy fail,
#    warn or ignore: docs/gating.md; default the base's suites/gate-thresholds.toml, so that a
#    pull request cannot loosen its own gate) and re-measures an alarm before it fails.
# 3. Both sides' results are ingested into the history (--history, default
#    results/history.sqlite; a postgresql:// URL for a shared store): base under --base-branch
#    (default main), head under --head-branch (default the head's sha, so that a pull
#    request's runs never enter main's series).
# 4. The gate runs once more on the final files to write OUT/comment.md, the pull-request
#    comment body (its first line a marker by which a workflow finds and edits its own comment),
#    and OUT/summary.md, the job summary, appended to $GITHUB_STEP_SUMMARY when set. They hold
#    the summary paragraph, the significant changes with their CIs, where the time went, the
#    counters that moved, the change points in main's history of the changed phases, and the
#    command that reproduces this run.
#
# Nothing here needs a secret: posting the comment is the workflow's job
# (.github/workflows/perf-comment.yml). Exit: the gate's, 0 pass, 1 regression, 2 error
# (including a failed build or run, or an interruption). docs/ci-perf.md.
set -euo pipefail

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
die() { echo "ci-perf.sh: error: $*" >&2; exit 2; }
need() { [[ $# -ge 2 ]] || die "$1 needs a value"; }

BASE_REV="" HEAD_REV="" SUITE=quick HISTORY="" BASE_BRANCH=main HEAD_BRANCH="" OUT_DIR="" ALWAYS=0
THRESHOLDS="" PASS=() CASES=() DESIGN=()
ORIG_ARGS=("$@")
while [[ $# -gt 0 ]]; do
  case $1 in
    --base) need "$@"; BASE_REV=$2; shift 2 ;;
    --head) need "$@"; HEAD_REV=$2; shift 2 ;;
    --suite) need "$@"; SUITE=$2; shift 2 ;;
    --case) need "$@"; CASES+=("$2"); PASS+=(--case "$2"); shift 2 ;;
    --design) need "$@"; DESIGN=(--design "$2"); PASS+=(--design "$2"); shift 2 ;;
    --thresholds) need "$@"; THRESHOLDS=$2; shift 2 ;;
    --rounds|--reps|--warmup|--counters|--preset|--cmake-arg|--confirm-rounds|--work-dir)
      need "$@"; PASS+=("$1" "$2"); shift 2 ;;
    --duet|--quick) PASS+=("$1"); shift ;;
    --history) need "$@"; HISTORY=$2; shift 2 ;;
    --base-branch) need "$@"; BASE_BRANCH=$2; shift 2 ;;
    --head-branch) need "$@"; HEAD_BRANCH=$2; shift 2 ;;
    --out-dir) need "$@"; OUT_DIR=$2; shift 2 ;;
    --always) ALWAYS=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1'" ;;
  esac
done
[[ -n $BASE_REV ]] || die "--base REV is required (the pull request's target, e.g. origin/main)"
[[ -n $HEAD_REV ]] || die "--head REV is required (the pull request's head, e.g. HEAD)"

ROOT=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel) || die "not inside a git repository"
cd "$ROOT"
BASE_SHA=$(git rev-parse --verify "$BASE_REV^{commit}" 2>/dev/null) || die "no such revision: $BASE_REV"
HEAD_SHA=$(git rev-parse --verify "$HEAD_REV^{commit}" 2>/dev/null) || die "no such revision: $HEAD_REV"
[[ -n $HEAD_BRANCH ]] || HEAD_BRANCH=$HEAD_SHA
[[ -n $HISTORY ]] || HISTORY=$ROOT/results/history.sqlite
[[ $HISTORY == postgres://* || $HISTORY == postgresql://* ]] || { mkdir -p "$(dirname "$HISTORY")" && HISTORY=$(realpath "$HISTORY"); }
[[ -n $OUT_DIR ]] || OUT_DIR=$ROOT/results/local/$(date -u +%Y%m%dT%H%M%SZ)-ci-perf-${BASE_SHA:0:10}-vs-${HEAD_SHA:0:10}
if [[ -e $OUT_DIR && -n $(ls -A "$OUT_DIR" 2>/dev/null) ]]; then
  die "--out-dir $OUT_DIR is not empty: an earlier run's files are kept; choose another folder"
fi
mkdir -p "$OUT_DIR" || die "--out-dir $OUT_DIR: cannot create it"
OUT_DIR=$(realpath "$OUT_DIR")
# The thresholds are the base's: a pull request does not loosen its own gate.
if [[ -n $THRESHOLDS ]]; then
  [[ -f $THRESHOLDS ]] || die "--thresholds $THRESHOLDS: no such file"
  THRESHOLDS=$(realpath "$THRESHOLDS")
else
  git show "$BASE_SHA:suites/gate-thresholds.toml" >"$OUT_DIR/thresholds.toml" 2>/dev/null ||
    die "the base ${BASE_SHA:0:10} has no suites/gate-thresholds.toml; give --thresholds FILE (docs/gating.md)"
  THRESHOLDS=$OUT_DIR/thresholds.toml
fi
trap 'echo "ci-perf.sh: interrupted" >&2; exit 2' INT TERM

# The command that reproduces this run, for the comment: the same arguments on the same commits.
quote() { local out="" a; for a in "$@"; do out+=" $(printf '%q' "$a")"; done; printf '%s' "${out# }"; }
REPRODUCE="git checkout $HEAD_SHA && scripts/ci-perf.sh $(quote "${ORIG_ARGS[@]}")"
REPRODUCE=${REPRODUCE//"--base $BASE_REV"/"--base $BASE_SHA"}
REPRODUCE=${REPRODUCE//"--head $HEAD_REV"/"--head $HEAD_SHA"}

summary() {  # writes the job summary (and appends it to the runner's) from the comment body
  { tail -n +2 "$OUT_DIR/comment.md"; [[ -f $OUT_DIR/gate.md ]] && printf '\n---\n\n%s\n' "$(cat "$OUT_DIR/gate.md")"; } >"$OUT_DIR/summary.md"
  if [[ -n ${GITHUB_STEP_SUMMARY:-} ]]; then cat "$OUT_DIR/summary.md" >>"$GITHUB_STEP_SUMMARY" || true; fi
}

# 1. Nothing to measure when only documentation changed.
CODE_PATHS=(. ':(exclude)docs' ':(exclude)results' ':(exclude)*.md')
changed=$(git diff --name-only "$BASE_SHA...$HEAD_SHA" -- | wc -l)
code_changed=$(git diff --name-only "$BASE_SHA...$HEAD_SHA" -- "${CODE_PATHS[@]}" | wc -l)
if [[ $ALWAYS == 0 && $code_changed == 0 ]]; then
  cat >"$OUT_DIR/comment.md" <<EOF
<!-- cuzk-perf-comment -->
## cuzk perf: nothing to measure

${HEAD_SHA:0:10} changes $changed file(s) against ${BASE_SHA:0:10}, none of them code (only docs/, results/ and Markdown): no build, no measurement. \`--always\` measures anyway.
EOF
  summary
  echo "ci-perf.sh: only documentation changed ($changed file(s)); nothing measured. $OUT_DIR/comment.md" >&2
  exit 0
fi

# 2. Build, measure, gate, confirm. The job summary is written once, below, not by each gate.
set +e
env -u GITHUB_STEP_SUMMARY "$ROOT/scripts/gate-merge.sh" "$BASE_SHA" "$HEAD_SHA" --suite "$SUITE" \
  --thresholds "$THRESHOLDS" "${PASS[@]}" --out-dir "$OUT_DIR/ab" --keep-binaries "$OUT_DIR/bin"
rc=$?
set -e
[[ $rc == 0 || $rc == 1 ]] || die "scripts/gate-merge.sh failed (exit $rc); see above"
BENCH=$OUT_DIR/bin/candidate/cuzk-bench
[[ -x $BENCH ]] || die "the head's cuzk-bench was not kept at $BENCH"

# 3. Both sides into the history: base under the base branch, head under its own name.
"$BENCH" history ingest "$OUT_DIR/ab/a.jsonl" --db "$HISTORY" --branch "$BASE_BRANCH" --repo "$ROOT" >&2 ||
  die "ingesting the base's results into $HISTORY failed"
"$BENCH" history ingest "$OUT_DIR/ab/b.jsonl" --db "$HISTORY" --branch "$HEAD_BRANCH" --repo "$ROOT" >&2 ||
  die "ingesting the head's results into $HISTORY failed"

# 4. The story. The final files are the confirmation's where an alarm was re-measured.
GATE_FILES=(--baseline "$OUT_DIR/ab/a.jsonl" --candidate "$OUT_DIR/ab/b.jsonl")
[[ -f $OUT_DIR/ab/confirm/a.jsonl ]] && GATE_FILES+=(--confirm-with "$OUT_DIR/ab/confirm/a.jsonl" "$OUT_DIR/ab/confirm/b.jsonl")
set +e
env -u GITHUB_STEP_SUMMARY "$BENCH" gate "${GATE_FILES[@]}" --thresholds "$THRESHOLDS" "${DESIGN[@]}" \
  --json-out "$OUT_DIR/gate.json" --markdown-out "$OUT_DIR/gate.md" --comment-out "$OUT_DIR/comment.md" \
  --history "$HISTORY" --history-branch "$BASE_BRANCH" --reproduce "$REPRODUCE" \
  --base-label "base ${BASE_SHA:0:10}" --head-label "head ${HEAD_SHA:0:10}" >/dev/null
final=$?
set -e
[[ -f $OUT_DIR/comment.md ]] || die "the gate wrote no comment (exit $final)"
summary
if [[ $final != "$rc" ]]; then
  echo "ci-perf.sh: warning: the gate said $rc, then $final on the same files; the later verdict stands" >&2
fi
echo "ci-perf.sh: base ${BASE_SHA:0:10}, head ${HEAD_SHA:0:10}: gate exit $final; comment $OUT_DIR/comment.md, summary $OUT_DIR/summary.md" >&2
exit $final
