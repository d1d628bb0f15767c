#!/bin/bash
cd /var/tmp/code002
S=/work/main/runner/fidelity/seeds/seed_002.py
for r in 1 2 3 4 5; do
  echo "$r script $(python3 $S --epochs 1)" >> probe.log
  echo "$r functional $(python3 seed_002_functional.py --epochs 1)" >> probe.log
done
echo finished >> probe.log
