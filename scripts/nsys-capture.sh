#!/usr/bin/env bash
# Runs one suite case under Nsight Systems and leaves, side by side in one folder: the trace
# (.nsys-rep), its SQLite export, the NVTX range table (nvtx_sum) and the run's results file.
# docs/nsys.md has the recipe and what to look at.
#
#   scripts/nsys-capture.sh --suite NAME --case CASE [--backend cpu|cuda] [--out DIR]
#                           [--warmup N] [--reps N] [-- extra cuzk-bench run arguments]
#
# One proof by default (--reps 1 --warmup 0). That proof is a cold one: for the GPU backend it
# also uploads the key (h2d/srs) and loads the kernels. --warmup 1 puts a warm proof in the
# trace after it (the trace holds every proof; the results file marks the warm-ups).
#
# nsys: $NSYS, else the PATH, else the usual install folders. cuzk-bench: $CUZK_BENCH, else
# build/${CUZK_PRESET:-default}/harness/cuzk-bench. Exit codes: 0 done, 1 the capture or an
# export failed, 2 bad arguments or a missing tool.
set -uo pipefail

die() { # code, message...
  local code=$1
  shift
  printf 'nsys-capture: error: %s\n' "$*" >&2
  exit "$code"
}
usage() {
  printf '%s\n' "usage: scripts/nsys-capture.sh --suite NAME --case CASE [--backend cpu|cuda] [--out DIR]" \
    "                              [--warmup N] [--reps N] [-- extra cuzk-bench run arguments]" >&2
  exit 2
}

# Builtins only up to the nsys check, so it works (and is testable) with an empty PATH.
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac
repo=$(cd "$here/.." && pwd)
suite="" case_name="" backend="cpu" out="$repo/results/local/nsys" warmup=0 reps=1
extra=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --suite) [[ $# -ge 2 ]] || usage; suite=$2; shift 2 ;;
    --case) [[ $# -ge 2 ]] || usage; case_name=$2; shift 2 ;;
    --backend) [[ $# -ge 2 ]] || usage; backend=$2; shift 2 ;;
    --out) [[ $# -ge 2 ]] || usage; out=$2; shift 2 ;;
    --warmup) [[ $# -ge 2 ]] || usage; warmup=$2; shift 2 ;;
    --reps) [[ $# -ge 2 ]] || usage; reps=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) usage ;;
    *) die 2 "unknown argument '$1'" ;;
  esac
done
[[ -n $suite ]] || die 2 "--suite NAME is required"
[[ -n $case_name ]] || die 2 "--case CASE is required (one case: a trace of a whole suite is hard to read)"
[[ $warmup =~ ^[0-9]{1,3}$ ]] || die 2 "--warmup '$warmup': expected a count of warm-up proofs, 0 to 999"
[[ $reps =~ ^[0-9]{1,3}$ && $reps -ge 1 ]] || die 2 "--reps '$reps': expected a count of measured proofs, 1 to 999"

# ---- find nsys. An explicit $NSYS that is wrong is an error, not a reason to look elsewhere:
# the user asked for that one.
find_nsys() {
  if [[ -n ${NSYS:-} ]]; then
    [[ -x $NSYS && ! -d $NSYS ]] && { echo "$NSYS"; return 0; }
    return 1
  fi
  command -v nsys 2>/dev/null && return 0
  local c
  # The GPU machine has nsys only inside Nsight Compute (docs/gpu-machine.md).
  for c in /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys \
           /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys; do
    [[ -x $c ]] && { echo "$c"; return 0; }
  done
  return 1
}
if ! nsys=$(find_nsys); then
  if [[ -n ${NSYS:-} ]]; then
    die 2 "nsys not found: NSYS=$NSYS is not an executable file (unset NSYS to search the PATH and the usual folders)"
  fi
  die 2 "nsys not found; looked in: \$NSYS (unset), the PATH ($PATH), /usr/local/cuda/bin," \
    "/opt/nvidia/nsight-systems/*/bin, /opt/nvidia/nsight-compute/*/host/target-linux-x64." \
    "Install Nsight Systems or set NSYS=/path/to/nsys (docs/nsys.md)."
fi

# ---- find cuzk-bench
bench=${CUZK_BENCH:-$repo/build/${CUZK_PRESET:-default}/harness/cuzk-bench}
[[ -x $bench ]] || die 2 "cuzk-bench not built: no executable at $bench" \
  "(build it: cmake --preset ${CUZK_PRESET:-default} && cmake --build --preset ${CUZK_PRESET:-default} --target cuzk-bench;" \
  "or set CUZK_BENCH)"

mkdir -p "$out" || die 2 "cannot create the output folder $out"
out=$(cd "$out" && pwd)
# Files are named <suite>-<case>; a suite given as a file path contributes its base name.
sname=${suite##*/}
sname=${sname%.toml}
stem="$sname-$case_name"
base="$out/${stem//[^A-Za-z0-9_.-]/_}"

# Validate the suite and case before profiling anything: a typo is one clear error from
# cuzk-bench itself, not a trace of an error message.
"$bench" run --suite "$suite" --case "$case_name" --backend "$backend" --list >/dev/null ||
  die 2 "cuzk-bench rejected --suite $suite --case $case_name --backend $backend (its message is above)"

echo "nsys-capture: $nsys profile ($suite / $case_name, backend $backend) -> $base.nsys-rep" >&2
"$nsys" profile --trace=cuda,nvtx --force-overwrite=true -o "$base" \
  "$bench" run --suite "$suite" --case "$case_name" --backend "$backend" --reps "$reps" --warmup "$warmup" \
  --out "$base.jsonl" --force "${extra[@]}"
rc=$?

if [[ ! -f $base.nsys-rep ]]; then
  if [[ -f $base.qdstrm ]]; then
    die 1 "nsys wrote $base.qdstrm but no .nsys-rep: its importer failed (on the GPU machine it lacks" \
      "libdw.so.1; carry Debian's libdw1 and libelf1 and set LD_LIBRARY_PATH, see docs/gpu-machine.md and docs/nsys.md)"
  fi
  die 1 "nsys profile exited with status $rc and wrote no $base.nsys-rep"
fi
[[ $rc -eq 0 ]] || echo "nsys-capture: warning: nsys profile exited with status $rc (cuzk-bench failed?); the trace is kept" >&2

"$nsys" export --type sqlite --force-overwrite=true -o "$base.sqlite" "$base.nsys-rep" >/dev/null ||
  die 1 "nsys export --type sqlite failed for $base.nsys-rep"
# From the SQLite export just made: given the .nsys-rep, nsys 2025.3 on the GPU machine judged
# that export stale and stopped with a usage message.
"$nsys" stats --report nvtx_sum "$base.sqlite" >"$base.nvtx_sum.txt" ||
  die 1 "nsys stats --report nvtx_sum failed for $base.sqlite"
cat "$base.nvtx_sum.txt"

cat <<EOF
trace:          $base.nsys-rep   (open in Nsight Systems)
sqlite:         $base.sqlite     (table NVTX_EVENTS: one row per phase range)
NVTX summary:   $base.nvtx_sum.txt
results:        $base.jsonl      (cuzk-bench's own record of the same run)
EOF
exit "$rc"
