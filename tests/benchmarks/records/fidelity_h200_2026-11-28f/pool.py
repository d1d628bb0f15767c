"""The rows of this folder, one machine at a time and pooled over both (ms per unit), by runner.fidelity.summarise
(the statistic of a result file's `fidelity` block), with tests/benchmarks/fidelity_pool.py: a finished row's rounds
from fidelity.py's --json, at full precision; a row cut off before it finished (machine A's seed 002, machine B's
GPU depth 8) from its printed rounds, to 0.01 ms. From the repository's root:

    python tests/benchmarks/records/fidelity_h200_2026-11-28f/pool.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4]))
from tests.benchmarks.fidelity_pool import HEADER, Rounds, cut_off, rows, show

HERE = "fidelity_h200_2026-11-28f"


def machine(name: str) -> dict[str, Rounds]:
    """Each finished row's rounds from NAME.json, and the rounds NAME.txt printed after its last finished row as
    'partial'."""
    out = rows(f"{HERE}/{name}.json")
    if partial := cut_off(f"{HERE}/{name}.txt"):
        out["partial"] = partial
    return out


def main() -> None:
    a = machine("machine_a/cpu_a")
    b = machine("machine_b/cpu_a")
    gpu = machine("machine_b/gpu_a")
    print(HEADER)
    for tag, found in (("A cpu", a), ("B cpu", b), ("B gpu", gpu)):
        for name, rounds in found.items():
            show(tag, name, rounds)
    for name, rounds in b.items():
        if name in a:
            show("A+B cpu", name, a[name] + rounds)
    show("A+B cpu", "002 cifar-lenet (A's 3 printed rounds)", a["partial"] + b["002 cifar-lenet"])


if __name__ == "__main__":
    main()
