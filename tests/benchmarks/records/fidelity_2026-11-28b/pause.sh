#!/bin/bash
# SIG ($1: STOP or CONT) to both site_scale runs and every process under them; logs when
desc() { for c in $(ps -o pid= --ppid $1); do echo $c; desc $c; done; }
for p in $(pgrep -f "tests/benchmarks/site_scale.py"); do for q in $p $(desc $p); do kill -$1 $q; done; done
echo "$1 $(date -u +%FT%TZ)" >> /var/tmp/s9/pauses.log
