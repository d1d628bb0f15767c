#!/bin/bash
# wait for the generation, then the 100k cold build from a worktree of f41f8c5, with samplers
while ! grep -q "rc=" /var/tmp/s7/gen.log; do sleep 10; done
cd /var/tmp/s7/wt
date -u +%FT%TZ > /var/tmp/s7/build_started
( while true; do P=$(pgrep -f "mkdocs build" | head -1); [ -n "$P" ] && echo "$(date -u +%T) $(ps -o rss= -p $P) $(grep VmHWM /proc/$P/status 2>/dev/null)" >> /var/tmp/s7/mem100k.log; sleep 60; done ) &
S1=$!
( while true; do P=$(pgrep -f "mkdocs build" | head -1); [ -n "$P" ] && { echo "== $(date -u +%T)"; py-spy dump --pid $P 2>/dev/null | grep -E "site_builder|mkdocs/" | head -8; } >> /var/tmp/s7/where100k.log; sleep 120; done ) &
S2=$!
env PYTHONPATH=/var/tmp/s7/wt python tests/benchmarks/site_scale.py --sizes 100000 --work /var/tmp/benchsite-scale --one-cold --no-gate --no-parse --no-incremental > /var/tmp/s7/cold100k.log 2>&1
echo "rc=$?" >> /var/tmp/s7/cold100k.log
date -u +%FT%TZ > /var/tmp/s7/build_finished
kill $S1 $S2
