"""Item 1's lent-host tables as ../fidelity_h200_2026-11-29c/pool.py pools them, with this folder's runs added, all on
the H200 host's 16-core CPU: seed 003's BERT-base training step (five rounds, then ten), seed 004 (two rounds) and
seed 001 at depths 2, 8 and 12 (five rounds each). The H200 host CPU's seed 001 had no table in the earlier pools:
the twelfth session's two runs of it (machines A and B of 2026-11-28f) are listed here with this one. From the
repository's root:

    python tests/benchmarks/records/fidelity_h200_2026-12-02/pool.py

This folder's code is f4fd453. Since 0d502f9 (the earlier pool's last runs) one change reached a measured process:
a transformer point's measuring process and seed 003's script import the BERT module ahead (0d63faf), which moves
when that import happens, not what the loop runs. Seed 003's rows are printed pooled over every run and over this
code's runs alone; every other row's loops and transcriptions are those the earlier runs measured.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4]))
from tests.benchmarks.fidelity_pool import earlier_pool, finished, table

HERE = "fidelity_h200_2026-12-02"
D2, D8, D12 = ("depth-sweep depth=2", "depth-sweep depth=8", "depth-sweep depth=12")
BERT = "transformer model=bert-base mode=train batch_size=8"
earlier = earlier_pool("fidelity_h200_2026-11-29c").earlier  # the tables 29c extends
A, B = ("fidelity_h200_2026-11-28f/machine_a/cpu_a.json", "fidelity_h200_2026-11-28f/machine_b/cpu_a.json")

cpu = earlier.H200_CPU
earlier.H200_CPU = {
    "000 tabular-mlp": cpu.pop("000 tabular-mlp"),
    **{
        name: [
            ("2026-11-28f A", finished(A, "001", depth)),
            ("2026-11-28f B", finished(B, "001", depth)),
            ("2026-12-02 H", finished(f"{HERE}/machine_h/cpu_001.json", "001", depth)),
        ]
        for name, depth in (("001 depth 2", D2), ("001 depth 8", D8), ("001 depth 12", D12))
    },
    **cpu,
}
THIS_CODE = [
    ("2026-12-02 H", finished(f"{HERE}/machine_h/cpu_003.json", "003", BERT)),
    ("2026-12-02 H, again", finished(f"{HERE}/machine_h/cpu_003b.json", "003", BERT)),
]
earlier.H200_CPU["003 BERT-base step"].extend(THIS_CODE)
earlier.H200_CPU["004 mnist-cnn"].append(
    ("2026-12-02 H", finished(f"{HERE}/machine_h/cpu_004.json", "004", "mnist-cnn"))
)

if __name__ == "__main__":
    earlier.main()
    table("H200 host CPU, seed 003 on this folder's code alone", {"003 BERT-base step": THIS_CODE})
