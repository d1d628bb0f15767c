"""The rows of this folder, one machine at a time and pooled over both, from the printed rounds (ms per unit), by
runner.fidelity.summarise (the statistic of a result file's `fidelity` block). From the repository's root:

    python tests/benchmarks/records/fidelity_h200_2026-11-28f/pool.py
"""

from __future__ import annotations

import re
import statistics
from pathlib import Path

from runner.fidelity import summarise

HERE = Path(__file__).resolve().parent
ROUND = re.compile(r"seed \(plain ([\d.]+)\), benchsite ([\d.]+) ms")
ROW = re.compile(r"(\d{3}) (\S+(?: depth=\d+)?)")


def rows(path: Path) -> dict[str, list[tuple[float, float]]]:
    """Each row's printed rounds (script, benchsite), and a row cut off before its summary line as 'partial'."""
    out: dict[str, list[tuple[float, float]]] = {}
    rounds: list[tuple[float, float]] = []
    for line in path.read_text().splitlines():
        if found := ROUND.search(line):
            rounds.append((float(found[1]), float(found[2])))
        elif (found := ROW.match(line)) and "ratio" in line:
            out[f"{found[1]} {found[2]}"] = rounds
            rounds = []
    if rounds:
        out["partial"] = rounds
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
    a = rows(HERE / "machine_a" / "cpu_a.txt")
    b = rows(HERE / "machine_b" / "cpu_a.txt")
    gpu = rows(HERE / "machine_b" / "gpu_a.txt")
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
