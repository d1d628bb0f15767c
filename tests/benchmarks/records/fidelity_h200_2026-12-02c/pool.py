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
from tests.benchmarks.fidelity_pool import HEADER, earlier_pool, rows, show

HERE = "fidelity_h200_2026-12-02c/machine_j"
TAG = "2026-12-02c J"
NAMES = {
    "003 transformer model=bert-base mode=train batch_size=8": "003 BERT-base step",
    "004 mnist-cnn": "004 mnist-cnn",
}
earlier = earlier_pool("fidelity_h200_2026-12-02b").earlier  # the tables 2026-12-02b extends, its run appended

THIS_RUN: dict[str, dict[str, list[tuple[float, float]]]] = {"H200 GPU": {}, "H200 host CPU": {}}
for device, pooled, path in (("H200 GPU", earlier.H200_GPU, "gpu_c"), ("H200 host CPU", earlier.H200_CPU, "cpu_c")):
    for key, rounds in rows(f"{HERE}/{path}.json").items():
        pooled[NAMES[key]].append((TAG, rounds))
        THIS_RUN[device][NAMES[key]] = rounds

if __name__ == "__main__":
    earlier.main()
    for device, found in THIS_RUN.items():
        print(f"\n{device}, this folder's run alone (code e654721)\n\n{HEADER}")
        for name, rounds in found.items():
            show(TAG, name, rounds)
