"""The rows of this folder, one machine at a time and pooled over both (ms per unit), by runner.fidelity.summarise
(the statistic of a result file's `fidelity` block): a finished row's rounds from fidelity.py's --json, at full
precision; a row cut off before it finished (machine A's seed 002, machine B's GPU depth 8) from its printed rounds,
to 0.01 ms. From the repository's root:

    python tests/benchmarks/records/fidelity_h200_2026-11-28f/pool.py
"""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

from runner.fidelity import summarise

HERE = Path(__file__).resolve().parent
ROUND = re.compile(r"seed \(plain ([\d.]+)\), benchsite ([\d.]+) ms")


def rows(name: str) -> dict[str, list[tuple[float, float]]]:
    """Each finished row's rounds in ms (script, benchsite) from NAME.json, keyed 'SEED MEASUREMENT', and the rounds
    NAME.txt printed after the last finished row as 'partial'."""
    found = json.loads(HERE.joinpath(f"{name}.json").read_text())
    out = {
        f"{r['seed']} {r['measurement']}": [
            (1000 * s, 1000 * h) for s, h in zip(r["transcription_rounds"], r["benchsite_rounds"], strict=True)
        ]
        for r in found
    }
    printed = HERE.joinpath(f"{name}.txt").read_text().splitlines()
    last = max((i for i, line in enumerate(printed) if " ratio " in line), default=-1)
    partial = [(float(m[1]), float(m[2])) for line in printed[last + 1 :] if (m := ROUND.search(line))]
    if partial:
        out["partial"] = partial
    return out


def show(tag: str, name: str, rounds: list[tuple[float, float]]) -> None:
    script = [s for s, _ in rounds]
    harness = [h for _, h in rounds]
    if len(rounds) < 2:
        print(f"| {tag} | {name} | {len(rounds)} | | | | |")
        return
    s = summarise(harness, script)
    print(
        f"| {tag} | {name} | {len(rounds)} | {statistics.geometric_mean(script):,.3f} | "
        f"{statistics.geometric_mean(harness):,.3f} | {s.ratio:.3f} ({s.ci95[0]:.3f} .. {s.ci95[1]:.3f}) | "
        f"{s.verdict} |"
    )


def main() -> None:
    a = rows("machine_a/cpu_a")
    b = rows("machine_b/cpu_a")
    gpu = rows("machine_b/gpu_a")
    print("| run | row | rounds | script | benchsite | ratio (95% interval) | verdict |")
    print("|---|---|---:|---:|---:|---|---|")
    for tag, found in (("A cpu", a), ("B cpu", b), ("B gpu", gpu)):
        for name, rounds in found.items():
            show(tag, name, rounds)
    for name, rounds in b.items():
        if name in a:
            show("A+B cpu", name, a[name] + rounds)
    show("A+B cpu", "002 cifar-lenet (A's 3 printed rounds)", a["partial"] + b["002 cifar-lenet"])


if __name__ == "__main__":
    main()
