#!/bin/bash
# Seed 002 on the VM's CPU: the transcription (torch.rand images) against a variant whose images are a NumPy array
# (as benchsite's synthetic data are), with NumPy's madvise(MADV_HUGEPAGE) on and off. One warm-up + 1 timed epoch each.
# The variant is the shipped transcription with seed_002_numpy.patch applied, made beside it (it must not import from
# benchsite either). Writes probe.log in the folder it runs from.
HERE=$(cd "$(dirname "$0")" && pwd)
S=$HERE/../../../../../runner/fidelity/seeds/seed_002.py
patch -s -o seed_002_numpy.py "$S" "$HERE/seed_002_numpy.patch" || exit 1
for r in 1 2 3 4 5 6; do
  for arm in torch numpy numpy_nohuge; do
    case $arm in
      torch) out=$(python3 "$S" --epochs 1) ;;
      numpy) out=$(python3 seed_002_numpy.py --epochs 1) ;;
      numpy_nohuge) out=$(NO_NUMPY_HUGEPAGE=1 python3 seed_002_numpy.py --epochs 1) ;;
    esac
    echo "$r $arm $out" >> probe.log
  done
done
echo finished >> probe.log
