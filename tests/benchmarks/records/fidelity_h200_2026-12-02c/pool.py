"""Item 1's lent-host tables as ../fidelity_h200_2026-12-02b/pool.py pools them, with this folder's run added: a
lent H200 machine at code e654721, five rounds of seeds 003 (BERT-base training step) and 004 on the GPU, then five
of seed 004 on the host's 16-core CPU (the three rows the eighteenth session's run did not reach). From the
repository's root:

    python tests/benchmarks/records/fidelity_h200_2026-12-02c/pool.py

Since 43444ad (the earlier folder's code) only a comment changed under runner/; no loop or transcription changed
since the runs the earlier pools list. Each row is also printed over this run alone.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4]))
from tests.benchmarks.fidelity_pool import append_run, earlier_pool, show_run

HERE = "fidelity_h200_2026-12-02c/machine_j"
TAG = "2026-12-02c J"
earlier = earlier_pool("fidelity_h200_2026-12-02b").earlier  # the tables 2026-12-02b extends, its run appended
THIS_RUN = append_run(
    TAG,
    {"H200 GPU": (earlier.H200_GPU, f"{HERE}/gpu_c.json"), "H200 host CPU": (earlier.H200_CPU, f"{HERE}/cpu_c.json")},
)

if __name__ == "__main__":
    earlier.main()
    show_run(TAG, "e654721", THIS_RUN)
