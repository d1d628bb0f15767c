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
from tests.benchmarks.fidelity_pool import append_run, cut_off, earlier_pool, show_run

HERE = "fidelity_h200_2026-12-02b/machine_i"
TAG = "2026-12-02b I"
earlier = earlier_pool("fidelity_h200_2026-12-02").earlier  # the tables 2026-12-02 extends
THIS_RUN = append_run(
    TAG,
    {"H200 GPU": (earlier.H200_GPU, f"{HERE}/gpu_a.json"), "H200 host CPU": (earlier.H200_CPU, f"{HERE}/cpu_a.json")},
)
bert = ("2026-12-02b I (cut off)", cut_off(f"{HERE}/cpu_a.txt"))
earlier.H200_CPU["003 BERT-base step"].append(bert)
THIS_RUN["H200 host CPU"]["003 BERT-base step (cut off)"] = bert[1]

if __name__ == "__main__":
    earlier.main()
    show_run(TAG, "43444ad", THIS_RUN)
