"""The 2-core VM's three runs of item 1 on 2026-12-02: ../fidelity_vm_2026-12-02b/pool.py's two (e0f1e2f and
11c4e91) and this folder's at 814aa27, the nineteenth session's check, five rounds each; no loop, transcription or
measuring process changed between them. Each row's runs one line each, then their fifteen rounds pooled. From the
repository's root:

    python tests/benchmarks/records/fidelity_vm_2026-12-02c/pool.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4]))
from tests.benchmarks.fidelity_pool import earlier_pool, runs_by_row, table

HERE = "fidelity_vm_2026-12-02c"
RUNS = {
    **earlier_pool("fidelity_vm_2026-12-02b").RUNS,
    "2026-12-02c (814aa27)": [f"{HERE}/cpu_000.json", f"{HERE}/cpu_003.json", f"{HERE}/cpu_004.json"],
}

if __name__ == "__main__":
    table("2-core VM (a23074609b32f305), CPU", runs_by_row(RUNS))
