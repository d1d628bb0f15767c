"""The 2-core VM's two runs of item 1 on 2026-12-02: the seventeenth session's at e0f1e2f (../fidelity_vm_2026-12-02/)
and this folder's at 11c4e91, five rounds each; no loop, transcription or measuring process changed between them.
Each row's runs one line each, then their ten rounds pooled. From the repository's root:

    python tests/benchmarks/records/fidelity_vm_2026-12-02b/pool.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4]))
from tests.benchmarks.fidelity_pool import runs_by_row, table

RUNS = {
    "2026-12-02 (e0f1e2f)": [
        "fidelity_vm_2026-12-02/vm_a.json",
        "fidelity_vm_2026-12-02/vm_003.json",
        "fidelity_vm_2026-12-02/vm_004.json",
    ],
    "2026-12-02b (11c4e91)": [
        "fidelity_vm_2026-12-02b/cpu_000.json",
        "fidelity_vm_2026-12-02b/cpu_003.json",
        "fidelity_vm_2026-12-02b/cpu_004.json",
    ],
}

if __name__ == "__main__":
    table("2-core VM (a23074609b32f305), CPU", runs_by_row(RUNS))
