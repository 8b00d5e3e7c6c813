#!/usr/bin/env bash
# A reproducible noisy neighbour: keeps one core busy in a slow on/off cycle beside a command,
# as another tenant of a shared runner would, and stops with it (docs/calibration.md).
#
#   scripts/neighbour.sh [--busy S] [--idle S] [--cores N] [--max-seconds S] -- COMMAND [ARG...]
#
# Each of N cores (default 1) runs a busy loop for --busy seconds (default 20), then sleeps for
# --idle seconds (default 20), and again, starting busy with the command. The cycle is slow on
# purpose: it shifts the machine's speed between one round of an A/B and the next, which is the
# drift that pairing by round and duet runs are meant to cancel. The neighbour ends when the
# command ends (its exit status is the command's), on SIGINT/SIGTERM, or after --max-seconds
# (default 7200) whatever happens.
set -euo pipefail

usage() { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "neighbour.sh: error: $*" >&2; exit 2; }
number() { [[ $2 =~ ^[0-9]+([.][0-9]+)?$ ]] || die "$1 must be a number of seconds (got '$2')"; }

BUSY=20 IDLE=20 CORES=1 MAX=7200
while [[ $# -gt 0 ]]; do
  case $1 in
    --busy) number --busy "${2:-}"; BUSY=$2; shift 2 ;;
    --idle) number --idle "${2:-}"; IDLE=$2; shift 2 ;;
    --cores) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || die "--cores must be a positive integer (got '${2:-}')"; CORES=$2; shift 2 ;;
    --max-seconds) number --max-seconds "${2:-}"; MAX=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    --) shift; break ;;
    *) die "unknown argument '$1' (the command goes after --)" ;;
  esac
done
[[ $# -gt 0 ]] || die "no command: scripts/neighbour.sh [options] -- COMMAND [ARG...]"
awk -v b="$BUSY" 'BEGIN { exit !(b > 0) }' || die "--busy must be above 0"

# One core's cycle: busy (a shell loop, pure CPU) for BUSY seconds, then idle.
cycle() {
  while :; do
    timeout "$BUSY" bash -c 'while :; do :; done' || true
    sleep "$IDLE"
  done
}

pids=()
stop() {
  for p in "${pids[@]}"; do kill -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

for _ in $(seq "$CORES"); do
  setsid bash -c "$(declare -f cycle); BUSY=$BUSY IDLE=$IDLE; cycle" &
  pids+=($!)
done
echo "neighbour.sh: $CORES core(s) busy ${BUSY} s, idle ${IDLE} s, beside: $*" >&2
status=0
timeout --foreground "$MAX" "$@" || status=$?
exit "$status"
