#!/bin/bash
# Issue 28: the item-1 rows outside 0.95 .. 1.05, ten rounds a side, on whichever card this machine has.
cd "$(dirname "$0")/.."
F="python3 tests/benchmarks/fidelity.py --profile standard --seconds 2 --rounds 10"
step() { name=$1; shift; $F "$@" --json /tmp/fid/$name.json > /tmp/fid/run_$name.txt 2>&1; echo "$name done $(date -u)" >> /tmp/fid/progress; }
if nvidia-smi -L | grep -q H200; then
  step gpu_d2 --device cuda --seed 001 --depth 2
  step gpu004 --device cuda --seed 004 --min-units 1
  step gpu000 --device cuda --seed 000
  step gpu_d8 --device cuda --seed 001 --depth 8
else
  step cpu_d2 --device cpu --seed 001 --depth 2
  step cpu000 --device cpu --seed 000
  step gpu002 --device cuda --seed 002
  step cpu003 --device cpu --seed 003
  step cpu002 --device cpu --seed 002
fi
date -u > /tmp/fid/finished
