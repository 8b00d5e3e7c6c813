#!/usr/bin/env bash
# poll-h.sh LIMIT MARKER: wait at most LIMIT s for a line starting with MARKER (or DONE) in the log.
lim=$1; mk=$2
for ((i = 0; i < lim; i += 5)); do grep -qE "^($mk|DONE)" /tmp/kg/pipeline.log 2>/dev/null && break; sleep 5; done
cp /tmp/kg/pipeline.log $OUT/ 2>/dev/null
for f in stage-cv.txt stage.txt bench.txt raw.tgz; do [ -f /tmp/kg/$f ] && cp /tmp/kg/$f $OUT/; done
[ -f /tmp/kg/study/calibrate_kernel.txt ] && cp /tmp/kg/study/calibrate_kernel.txt $OUT/
tail -40 /tmp/kg/pipeline.log
