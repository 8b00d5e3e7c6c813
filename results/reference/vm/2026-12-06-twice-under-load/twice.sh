#!/bin/bash
for i in 1 2; do
  cd /tmp/fresh$i
  echo "run $i start $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
  start=$(date +%s)
  scripts/test.sh 2>&1 | while IFS= read -r l; do printf '%s %s\n' "$(date +%T)" "$l"; done > /tmp/fresh$i.log
  rc=${PIPESTATUS[0]}
  echo "run $i rc=$rc secs=$(( $(date +%s) - start )) end $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
