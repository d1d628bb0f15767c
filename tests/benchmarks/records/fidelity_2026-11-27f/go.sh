#!/bin/bash
# Started detached (setsid) by the first call of a lease. H200: issue 28 item 4, a complete standard run (resumed
# from .devstate/journal.tgz when carried). H100: item 1's H100 CPU rows outside the band, forty rounds a side.
cd "$(dirname "$0")/.."
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
G=/tmp/go; mkdir -p $G /tmp/bench
nvidia-smi -L > $G/card; lscpu | grep -E "Model name|^CPU\(s\)" >> $G/card; cp .devstate/commit $G/commit
date -u +%FT%TZ > $G/started
if grep -q H200 $G/card || [ -f .devstate/journal.tgz ]; then
  RES=""
  if [ -f .devstate/journal.tgz ]; then tar -xzf .devstate/journal.tgz -C /tmp/bench; RES="--resume"; fi
  BENCHSITE_PHASE_LOG=$G/phases.jsonl python3 -m runner run --profile standard --results-dir /tmp/bench/results $RES > $G/run.log 2>&1
  echo "rc=$?" >> $G/run.log
else
  F="python3 tests/benchmarks/fidelity.py --profile standard --seconds 2 --device cpu"
  step() { name=$1; shift; $F "$@" --json $G/$name.json > $G/run_$name.txt 2>&1; echo "$name done rc=$? $(date -u)" >> $G/progress; }
  step cpu000 --seed 000 --rounds 40
  step cpu_d2 --seed 001 --depth 2 --rounds 40
fi
date -u +%FT%TZ > $G/finished
