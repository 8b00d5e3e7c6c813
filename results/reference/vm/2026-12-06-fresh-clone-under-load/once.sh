#!/bin/bash
cd /tmp/fresh3
echo "start $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s)
scripts/test.sh 2>&1 | while IFS= read -r l; do printf '%s %s\n' "$(date +%T)" "$l"; done > /tmp/fresh3.log
rc=${PIPESTATUS[0]}
echo "rc=$rc secs=$(( $(date +%s) - start )) end $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
