#!/bin/bash
# Runs detached on the lent machine (started by call.sh) from the copy in /tmp/repo and writes into /tmp/go: the
# host's description, /proc/loadavg every 15 s, then the lines of .devstate/steps.sh, where `step NAME ARGS...` runs
# `python3 tests/benchmarks/fidelity.py --profile standard --rounds 5 --seconds 2 ARGS... --json NAME.json` into
# NAME.txt and notes its start and end in progress.txt. The benchsite phase log goes to phase.jsonl.
G=/tmp/go; cd /tmp/repo || exit 1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site BENCHSITE_PHASE_LOG=/tmp/go/phase.jsonl
{ nproc; lscpu | grep -E 'Model name|Thread|NUMA'; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c 'import torch; print(torch.__version__)'; cat .devstate/commit; uptime; } > $G/host.txt 2>&1
(while true; do echo "$(date -u +%T) $(cat /proc/loadavg)" >> $G/load.txt; sleep 15; done) &
F="python3 tests/benchmarks/fidelity.py --profile standard --rounds 5 --seconds 2"
step() {
  name=$1; shift
  echo "$(date -u +%T) start $name: $*" >> $G/progress.txt
  $F "$@" --json $G/$name.json > $G/$name.txt 2>&1
  rc=$?
  echo "$(date -u +%T) end $name rc=$rc" >> $G/progress.txt
}
. .devstate/steps.sh
touch $G/done
