#!/usr/bin/env bash
# cuzkd with the CUDA backend under load on the GPU machine: build two presets' daemons, a closed
# loop for the service capacity C, an open-loop sweep at fractions of C, then the two presets
# under the same schedule. Runs detached in the archived tree /tmp/head (docs/gpu-machine.md);
# logs and results in /tmp/dgpu, DONE written at the end.
set -uo pipefail
O=/tmp/dgpu
mkdir -p $O
shape=(--daemon-arg=--backend=cuda --daemon-arg=--challenges=4 --daemon-arg=--layers=1
       --daemon-arg=--parents=2 --daemon-arg=--depth=6 --partitions 4)
step() { echo "== $(date -u +%T) $*"; "$@"; echo "== $(date -u +%T) exit $?"; }
thr() {  # the first step's throughput in a load results file
  python3 -c "import json,sys
for l in open(sys.argv[1]):
    o=json.loads(l)
    if 'load' in o and 'steps' in o['load']: print(o['load']['steps'][0]['throughput_per_s'])" "$1"
}
{
  step scripts/gpu-daemon.sh $O build baseline gpu-overlap || { echo build failed; touch $O/DONE; exit 1; }
  step scripts/gpu-daemon.sh $O load --preset baseline "${shape[@]}" --mode closed --clients 2 --jobs 24 \
    --warmup 2 --out $O/closed-baseline.jsonl
  C=$(thr $O/closed-baseline.jsonl)
  echo "capacity C = $C proofs/s"
  rates=$(python3 -c "c=float('$C'); print(','.join('%.3g' % (f*c) for f in (0.25, 0.5, 0.75, 1.0, 1.25)))")
  step scripts/gpu-daemon.sh $O load --preset baseline "${shape[@]}" --rates "$rates" --jobs 30 --warmup 2 \
    --out $O/sweep-baseline.jsonl
  ab_rate=$(python3 -c "print('%.3g' % (0.75*float('$C')))")
  step scripts/gpu-daemon.sh $O load --preset baseline,gpu-overlap "${shape[@]}" --rates "$ab_rate" --jobs 24 \
    --warmup 2 --rounds 4 --out-dir $O/ab
} >$O/pipeline.log 2>&1
touch $O/DONE
