"""What does a generated result file cost to make? `site_scale.generate`, this tree against a baseline revision.

    python tests/benchmarks/generate_ab.py [--files 400] [--baseline ce54470] [--rounds 2]

Each round generates the same --files files (the same numbers, so the same machines and samples) in a fresh process,
one worker, with each tree's `tests/benchmarks/site_scale.py` and its runner (the baseline checked out in a
temporary git worktree), the order swapped every round. It checks that both trees wrote byte-identical files (a
quicker generator that changes a file is not a quicker generator) and prints milliseconds per file for each tree,
the median over rounds, and their ratio, with what 100,000 files would take on this machine's cores at that rate.
Generation is the first hour of the 100,000-file measurement on the 2-core VM. Not part of the test run.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

GENERATE = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[1] + "/tests/benchmarks")
from site_scale import generate
generate(Path(sys.argv[2]), int(sys.argv[3]), 2, 8, workers=1)
"""


def timed(tree: Path, out: Path, files: int) -> float:
    """Seconds for one fresh process to generate `files` files into `out` with `tree`'s code (imports included)."""
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", GENERATE, str(tree), str(out), str(files)],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        check=True,
    )
    return time.perf_counter() - start


def same_files(a: Path, b: Path) -> list[str]:
    """The relative paths that differ between two generated folders (missing on one side included)."""
    left = {p.relative_to(a) for p in a.rglob("*.yaml")}
    right = {p.relative_to(b) for p in b.rglob("*.yaml")}
    differ = sorted(str(p) for p in left ^ right)
    differ += sorted(str(p) for p in left & right if not filecmp.cmp(a / p, b / p, shallow=False))
    return differ


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=400)
    parser.add_argument(
        "--baseline", default="ce54470", help="the revision to compare with (default: before 31's quicker generator)"
    )
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="generate-ab-") as tmp:
        work = Path(tmp)
        base = work / "baseline"
        subprocess.run(["git", "worktree", "add", "--detach", str(base), args.baseline], cwd=ROOT, check=True)
        try:
            times: dict[str, list[float]] = {"baseline": [], "this tree": []}
            trees = {"baseline": base, "this tree": ROOT}
            for round_no in range(args.rounds):
                order = list(trees) if round_no % 2 == 0 else list(reversed(trees))
                for name in order:
                    out = work / f"{name.replace(' ', '-')}-{round_no}"
                    times[name].append(timed(trees[name], out, args.files))
                    print(f"round {round_no + 1}, {name}: {times[name][-1]:.1f} s", flush=True)
                differ = same_files(work / f"baseline-{round_no}", work / f"this-tree-{round_no}")
                if differ:
                    sys.exit(f"the trees generated different files ({len(differ)}), e.g. {differ[:3]}")
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=ROOT, check=False)
    cores = os.cpu_count() or 1
    per_file = {name: statistics.median(t) / args.files * 1000 for name, t in times.items()}
    print(f"\n{args.files} files a round, {args.rounds} rounds, one process; the files were byte-identical\n")
    print("| code | ms a file (median) | rounds s | 100,000 files on this machine's cores (min) |")
    print("|---|---:|---|---:|")
    for name, ms in per_file.items():
        rounds = ", ".join(f"{t:.1f}" for t in times[name])
        print(f"| {name} | {ms:.1f} | {rounds} | {ms * 100_000 / cores / 1000 / 60:.0f} |")
    print(f"\nthis tree / baseline: {per_file['this tree'] / per_file['baseline']:.2f}")


if __name__ == "__main__":
    main()
