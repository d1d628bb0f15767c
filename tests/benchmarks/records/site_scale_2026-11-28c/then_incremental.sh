#!/bin/bash
# after launch.sh's cold build ends: the incremental build (the held-back file added) on the same worktree and cache
while [ ! -f /var/tmp/s8/build_finished ] || [ /var/tmp/s8/build_finished -ot /var/tmp/s8/build_started ]; do sleep 30; done
cd /var/tmp/s8/wt
date -u +%FT%TZ > /var/tmp/s8/inc_started
( while true; do P=$(pgrep -f "mkdocs build" | head -1); [ -n "$P" ] && echo "$(date -u +%T) $(ps -o rss= -p $P) $(grep VmHWM /proc/$P/status 2>/dev/null)" >> /var/tmp/s8/mem100k_inc.log; sleep 60; done ) &
S1=$!
env PYTHONPATH=/var/tmp/s8/wt NO_MKDOCS_2_WARNING=1 python tests/benchmarks/site_scale.py --sizes 100000 --work /var/tmp/benchsite-scale --incremental-only > /var/tmp/s8/inc100k.log 2>&1
echo "rc=$?" >> /var/tmp/s8/inc100k.log
date -u +%FT%TZ > /var/tmp/s8/inc_finished
kill $S1
