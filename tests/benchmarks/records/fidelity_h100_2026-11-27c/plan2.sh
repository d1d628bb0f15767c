#!/bin/bash
cd "$(dirname "$0")/.."
F="python3 tests/benchmarks/fidelity.py --profile standard --seconds 2"
$F --rounds 12 --device cuda --seed 001 --depth 12 --seed 002 --seed 003 --json /tmp/fid/gpu12.json > /tmp/fid/run3_gpu12.txt 2>&1
echo "gpu12 done $(date -u)" >> /tmp/fid/progress
date -u > /tmp/fid/finished
