#!/bin/bash
# Issue 28: the 2-core VM's item-1 rows outside 0.95 .. 1.05, ten rounds a side, the VM otherwise idle.
cd /var/tmp/wt28
F="python3 tests/benchmarks/fidelity.py --profile standard --seconds 2 --rounds 10 --device cpu"
step() { name=$1; shift; $F "$@" --json /var/tmp/vm28/$name.json > /var/tmp/vm28/run_$name.txt 2>&1; echo "$name done rc=$? $(date -u)" >> /var/tmp/vm28/progress; }
step vm_d2 --seed 001 --depth 2
step vm_d8 --seed 001 --depth 8
step vm002 --seed 002 --min-units 1
step vm004 --seed 004 --min-units 1
date -u > /var/tmp/vm28/finished
