"""Item 1's lent-host tables as ../fidelity_h200_2026-12-02/pool.py pools them, with this folder's one run added: a
lent H200 machine at code 43444ad, after the fork server's thread change (ea9493e, e0f1e2f), five rounds of seeds
000 to 002 on the GPU and on the host's 16-core CPU, and the two rounds of seed 003 on the CPU that the device call
cut off. From the repository's root:

    python tests/benchmarks/records/fidelity_h200_2026-12-02b/pool.py

The change touched only what a fork server does before its first job; PyTorch's as-written points, which these rows
time, run in fresh interpreters and never in a fork server, and no loop or transcription changed since the runs the
earlier pools list. Each row is also printed over this run alone.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4]))
from tests.benchmarks.fidelity_pool import HEADER, cut_off, earlier_pool, rows, show

HERE = "fidelity_h200_2026-12-02b/machine_i"
TAG = "2026-12-02b I"
NAMES = {
    "000 tabular-mlp": "000 tabular-mlp",
    "001 depth-sweep depth=2": "001 depth 2",
    "001 depth-sweep depth=8": "001 depth 8",
    "001 depth-sweep depth=12": "001 depth 12",
    "002 cifar-lenet": "002 cifar-lenet",
}
earlier = earlier_pool("fidelity_h200_2026-12-02").earlier  # the tables 2026-12-02 extends

THIS_RUN: dict[str, dict[str, list[tuple[float, float]]]] = {"H200 GPU": {}, "H200 host CPU": {}}
for device, pooled, path in (("H200 GPU", earlier.H200_GPU, "gpu_a"), ("H200 host CPU", earlier.H200_CPU, "cpu_a")):
    for key, rounds in rows(f"{HERE}/{path}.json").items():
        pooled[NAMES[key]].append((TAG, rounds))
        THIS_RUN[device][NAMES[key]] = rounds
bert = ("2026-12-02b I (cut off)", cut_off(f"{HERE}/cpu_a.txt"))
earlier.H200_CPU["003 BERT-base step"].append(bert)
THIS_RUN["H200 host CPU"]["003 BERT-base step (cut off)"] = bert[1]

if __name__ == "__main__":
    earlier.main()
    for device, found in THIS_RUN.items():
        print(f"\n{device}, this folder's run alone (code 43444ad)\n\n{HEADER}")
        for name, rounds in found.items():
            show(TAG, name, rounds)
