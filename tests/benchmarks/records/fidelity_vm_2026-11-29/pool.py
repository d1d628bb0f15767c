"""This folder's runs on the 2-core AMD development VM (a23074609b32f305), pooled with the twelfth session's depth 2
on the same VM (../fidelity_vm_2026-11-28f), the one earlier run of these rows that found the VM as slow as this
session did (seed 000's epoch 466 to 502 ms against 165 ms in the VM's standard file of 2026-11-25, depth 2's step
6.4 to 6.8 ms against 2.57 ms). The runs of 2026-11-26 and 2026-11-27 (same VM, same loops) found it 2.9 to 4.7
times faster (seed 000: 141 ms; depth 2: 1.40 and 2.27 ms): pooling seconds from both states would make the spread
between rounds that of the VM's states rather than of the processes (seed 000's interval over 35 rounds: 0.801 ..
1.211), so those runs stay apart. From the repository's root:

    python tests/benchmarks/records/fidelity_vm_2026-11-29/pool.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4]))
from tests.benchmarks.fidelity_pool import finished, table

HERE = "fidelity_vm_2026-11-29"
D2 = "depth-sweep depth=2"
VM = {
    "000 tabular-mlp": [
        ("2026-11-29 first", finished(f"{HERE}/vm_000_d2.json", "000", "tabular-mlp")),
        ("2026-11-29 second", finished(f"{HERE}/vm_000b.json", "000", "tabular-mlp")),
    ],
    "001 depth 2": [
        ("2026-11-28f", finished("fidelity_vm_2026-11-28f/vm_d2.json", "001", D2)),
        ("2026-11-29 first", finished(f"{HERE}/vm_000_d2.json", "001", D2)),
    ],
}

if __name__ == "__main__":
    table("2-core AMD VM", VM)
