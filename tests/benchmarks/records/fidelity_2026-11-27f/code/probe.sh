#!/bin/bash
# Seed 002 on the VM's CPU: the transcription against a variant with benchsite's functional LeNet and its loss
# (seed_002_functional.patch applied to the shipped transcription, made beside it). One warm-up + 1 timed epoch each.
# Writes probe.log in the folder it runs from.
HERE=$(cd "$(dirname "$0")" && pwd)
S=$HERE/../../../../../runner/fidelity/seeds/seed_002.py
patch -s -o seed_002_functional.py "$S" "$HERE/seed_002_functional.patch" || exit 1
for r in 1 2 3 4 5; do
  echo "$r script $(python3 "$S" --epochs 1)" >> probe.log
  echo "$r functional $(python3 seed_002_functional.py --epochs 1)" >> probe.log
done
echo finished >> probe.log
