#!/usr/bin/env bash
# poll.sh LIMIT MARKER: wait at most LIMIT s for a line starting with MARKER (or DONE) in the
# pipeline's log; copy the logs and the matrix's files so far to $OUT (a call cut short keeps them).
lim=$1; mk=$2
save() {
  tar -czf $OUT/kg-sofar.tgz -C /tmp/kg --exclude=mx --exclude=raw.tgz . 2>/dev/null
  [ -d /tmp/kg/mx ] && tar -czf $OUT/mx-sofar.tgz -C /tmp/kg mx 2>/dev/null
  [ -f /tmp/kg/raw.tgz ] && cp /tmp/kg/raw.tgz $OUT/
}
for ((i = 0; i < lim; i += 5)); do
  grep -qE "^($mk|DONE)" /tmp/kg/pipeline.log 2>/dev/null && break
  (( i % 60 == 0 )) && save
  sleep 5
done
save
tail -40 /tmp/kg/pipeline.log
tail -4 /tmp/kg/mx/sector-matrix.err 2>/dev/null
ls /tmp/kg/mx/sector-matrix/rounds 2>/dev/null
nvidia-smi --query-gpu=memory.used,utilization.gpu --format=csv,noheader; free -g | head -2
