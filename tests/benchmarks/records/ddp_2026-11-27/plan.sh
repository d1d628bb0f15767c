#!/bin/bash
# issue 32: three consecutive benchsite runs of the tuned transformer-ddp loop on this multi-GPU machine
cd "$(dirname "$0")/.."
nvidia-smi topo -m > /tmp/fid/topo.txt 2>&1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p /tmp/fid/results
for i in ${RUNS:-1 2 3}; do
  s=$(date +%s)
  python3 -m runner run --profile standard -w transformer-ddp -d cuda -f torch --variant tuned -o /tmp/fid/results > /tmp/fid/run$i.txt 2>&1
  echo "run $i rc=$? $(( $(date +%s) - s )) s $(date -u)" >> /tmp/fid/progress
done
date -u > /tmp/fid/finished
