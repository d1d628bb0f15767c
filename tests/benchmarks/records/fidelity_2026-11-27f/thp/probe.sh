#!/bin/bash
# Seed 002 on the VM's CPU: the transcription (torch.rand images) against a copy whose images are a NumPy array
# (as benchsite's synthetic data are), with NumPy's madvise(MADV_HUGEPAGE) on and off. One warm-up + 1 timed epoch each.
cd /var/tmp/thp
S=/work/main/runner/fidelity/seeds/seed_002.py
for r in 1 2 3 4 5 6; do
  for arm in torch numpy numpy_nohuge; do
    case $arm in
      torch) out=$(python3 $S --epochs 1) ;;
      numpy) out=$(python3 seed_002_numpy.py --epochs 1) ;;
      numpy_nohuge) out=$(NO_NUMPY_HUGEPAGE=1 python3 seed_002_numpy.py --epochs 1) ;;
    esac
    echo "$r $arm $out" >> probe.log
  done
done
echo finished >> probe.log
