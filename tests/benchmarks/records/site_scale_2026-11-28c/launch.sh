#!/bin/bash
# the 100k cold build from a worktree of the committed code, with a memory sampler (once a minute) and py-spy
cd /var/tmp/s8/wt
rm -rf /var/tmp/benchsite-scale/100000/cache /var/tmp/benchsite-scale/100000/site /var/tmp/benchsite-scale/100000/phases-fill.jsonl /var/tmp/benchsite-scale/100000/cold.json
git log -1 --format=%H > /var/tmp/s8/build_commit
date -u +%FT%TZ > /var/tmp/s8/build_started
( while true; do P=$(pgrep -f "mkdocs build" | head -1); [ -n "$P" ] && echo "$(date -u +%T) $(ps -o rss= -p $P) $(grep VmHWM /proc/$P/status 2>/dev/null)" >> /var/tmp/s8/mem100k.log; sleep 60; done ) &
S1=$!
( while true; do P=$(pgrep -f "mkdocs build" | head -1); [ -n "$P" ] && { echo "== $(date -u +%T)"; py-spy dump --pid $P 2>/dev/null | grep -E "site_builder|mkdocs/" | head -8; } >> /var/tmp/s8/where100k.log; sleep 120; done ) &
S2=$!
env PYTHONPATH=/var/tmp/s8/wt NO_MKDOCS_2_WARNING=1 python tests/benchmarks/site_scale.py --sizes 100000 --work /var/tmp/benchsite-scale --one-cold --no-gate --no-parse --no-incremental > /var/tmp/s8/cold100k.log 2>&1
echo "rc=$?" >> /var/tmp/s8/cold100k.log
date -u +%FT%TZ > /var/tmp/s8/build_finished
kill $S1 $S2
