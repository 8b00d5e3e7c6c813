#!/bin/bash
cd /tmp/sweep
date -u +%FT%TZ > started
cat /proc/loadavg > load-before
build/h-main/daemon/cuzkd --state-dir st --challenges 2 --depth 10 --ready-file ready > cuzkd.out 2> cuzkd.err &
for i in $(seq 1 600); do [ -f ready ] && break; sleep 1; done
build/h-main/harness/cuzk-bench daemon prove --socket st/cuzkd.sock --input '{"partitions":2}' > single.txt 2>&1
build/h-main/harness/cuzk-bench load --socket st/cuzkd.sock --rates 0.1,0.2,0.4,0.8 --jobs 16 --warmup 1 --partitions 2 --out sweep.jsonl --force > sweep.txt 2> sweep.err
echo rc=$? >> sweep.txt
build/h-main/harness/cuzk-bench load --socket st/cuzkd.sock --mode closed --clients 2 --jobs 12 --warmup 1 --partitions 2 --out closed.jsonl --force > closed.txt 2> closed.err
build/h-main/harness/cuzk-bench daemon metrics --socket st/cuzkd.sock > metrics.txt
kill -TERM %1; wait
cat /proc/loadavg > load-after
date -u +%FT%TZ > ended
