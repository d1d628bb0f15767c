"""Item 1's lent-host tables as ../fidelity_h200_2026-11-29/pool.py pools them, with this folder's runs added: the
H200 host CPU's seed 000 (twenty rounds), and the H200 GPU's seed 000 and depth 12 (ten rounds each). From the
repository's root:

    python tests/benchmarks/records/fidelity_h200_2026-11-29b/pool.py

This folder's code is eeb2c93: its runner and transcriptions are those the earlier pool's runs measured (no
as-written loop or transcription changed since 0dc8746 but seed 002's step order). Its seed 000 rows ran with
`--gc-trace`, whose hook is in both sides' processes alike (a collector callback, and a generator around each
DataLoader pass); they pool with the plain runs. The H200 host CPU's seed 000 had no table in the earlier pool: its
two runs of the twelfth session (machines A and B of 2026-11-28f) are listed here with this one.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4]))
from tests.benchmarks.fidelity_pool import earlier_pool, finished

HERE = "fidelity_h200_2026-11-29b"
D12 = "depth-sweep depth=12"
earlier = earlier_pool("fidelity_h200_2026-11-29")

earlier.H200_GPU["000 tabular-mlp"].append(
    ("2026-11-29b F", finished(f"{HERE}/machine_f/gpu_000.json", "000", "tabular-mlp"))
)
earlier.H200_GPU["001 depth 12"].append(("2026-11-29b F", finished(f"{HERE}/machine_f/gpu_d12.json", "001", D12)))
earlier.H200_CPU = {
    "000 tabular-mlp": [
        ("2026-11-28f A", finished("fidelity_h200_2026-11-28f/machine_a/cpu_a.json", "000", "tabular-mlp")),
        ("2026-11-28f B", finished("fidelity_h200_2026-11-28f/machine_b/cpu_a.json", "000", "tabular-mlp")),
        ("2026-11-29b E", finished(f"{HERE}/machine_e/cpu_000.json", "000", "tabular-mlp")),
    ],
    **earlier.H200_CPU,
}

if __name__ == "__main__":
    earlier.main()
