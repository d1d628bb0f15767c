"""What does the gate's recomputation cost? `benchsite validate` over generated files, this tree against a baseline.

    python tests/benchmarks/gate_cost.py [--files 1000] [--baseline 40503f8]

Generates --files result files as tests/benchmarks/site_scale.py does (in a temporary directory, never under
results/), then times `python -m runner validate` over them twice in fresh processes: with this tree's code and
with the baseline revision's (checked out in a temporary git worktree). Prints a table: code, wall seconds,
files per second, peak RSS, problems found, and the ratio to the baseline. The baseline default is the commit
before the gate's recomputation (statistics, suite figures, machine ids, replays) was added. Not part of the
test run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))

from site_scale import generate  # noqa: E402


def timed(tree: Path, folder: Path) -> tuple[float, float, int]:
    """Wall seconds, peak RSS in GiB and the number of problem lines of one `validate` run with `tree`'s code."""
    start = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "runner", "validate", "--json", str(folder)],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    out = process.stdout.read() if process.stdout else b""
    _, _, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start

    problems = len(json.loads(out)["problems"]) if out else -1
    return wall, usage.ru_maxrss / 2**20, problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--baseline", default="40503f8")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="benchsite-gate-") as tmp:
        results = Path(tmp) / "results"
        generate(results, args.files, runs_per_machine=2, max_samples=8)
        baseline = Path(tmp) / "baseline"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(baseline), args.baseline], check=True
        )
        try:
            rows = [(f"baseline {args.baseline}", *timed(baseline, results)), ("this tree", *timed(ROOT, results))]
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(baseline)], check=True)
    base_wall = rows[0][1]
    print("| code | files | wall s | files/s | peak GiB | problems | wall / baseline |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, wall, rss, problems in rows:
        print(
            f"| {name} | {args.files:,} | {wall:.1f} | {args.files / wall:.0f} | {rss:.2f} | {problems} | "
            f"{wall / base_wall:.2f} |"
        )


if __name__ == "__main__":
    main()
