"""Each side's timed epochs pooled over its processes, for this folder's two seed 000 runs: fidelity.py's
`epoch_summary`, over the per-process rows its --gc-trace report printed (the trace file itself was a temporary
file on the lent machine). From the repository's root:

    python tests/benchmarks/records/fidelity_h200_2026-11-29b/epochs.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4]))
from tests.benchmarks.fidelity import TracedLoop, epoch_summary

HERE = Path(__file__).resolve().parent


def traced(path: Path) -> list[TracedLoop]:
    """The rows of the report's second table (the timed epochs of each loop process)."""
    loops = []
    for line in path.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 11 or cells[0] not in ("seed", "benchsite"):
            continue
        side, _, _, _, _, first, full, young, workers, _, listed = cells
        epochs = [float(ms.rstrip("*")) for ms in listed.split(",")]
        loops.append(TracedLoop(side, epochs, float(first), int(full.split("/")[0]), float(young), float(workers)))
    return loops


if __name__ == "__main__":
    for run in ("machine_e/cpu_000.txt", "machine_f/gpu_000.txt"):
        print(f"\n{run}")
        epoch_summary(traced(HERE / run))
