#!/bin/bash
# The A/B of two variants' daemons under one load schedule: every flag off (build/h-main, preset
# name "default") against CUZK_PRESIZE (a build of the same commit with only that flag on).
cd /tmp/abload
date -u +%FT%TZ > started; cat /proc/loadavg > load-before
A=/work/main/build/h-main/daemon/cuzkd; B=/work/wt-presize/build/presize/daemon/cuzkd
$A --state-dir a --challenges 2 --depth 10 --ready-file a.ready > a.log 2>&1 &
$B --state-dir b --challenges 2 --depth 10 --ready-file b.ready > b.log 2>&1 &
for i in $(seq 1 600); do [ -f a.ready ] && [ -f b.ready ] && break; sleep 1; done
/work/main/build/h-main/harness/cuzk-bench load --socket a/cuzkd.sock,b/cuzkd.sock --rates 0.2 --jobs 10 --warmup 1 \
  --partitions 2 --rounds 4 --out-dir ab > ab.txt 2> ab.err
echo rc=$? >> ab.txt
kill -TERM %1 %2; wait
cat /proc/loadavg > load-after; date -u +%FT%TZ > ended
