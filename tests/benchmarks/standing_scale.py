"""What one machine page's "where it stands" costs as the site grows: runner.contribute.standing.standing_of for
every machine against one Published index, at several numbers of machines.

    python tests/benchmarks/standing_scale.py [--machines 500 5000 20000] [--measurements 60] [--pages 200]

Synthetic rows (never written anywhere): each machine measured a random 70% of `--measurements` points on one GPU,
as-written, one run. Times `--pages` machines' standings (the site asks once per machine page, so a build costs
about machines x this) two ways, side by side, the same pages in the same process:
- baseline: the comparison as it was until 2026-11-26, a copy of the block's columns this machine measured and the
  log of every ratio, per standing (kept here as `_column_copy`, a reference only);
- now: standing_of, two matrix-vector products over the block's logs and presence, computed once per index.
Both give the same ratios (tests/test_standing.py checks standing_of against the pairwise definition); now also
computes the fastest's interval (standing.ratio_interval), which the baseline leaves out. Not part of the test run.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from runner.contribute import standing


def _rows(machines: int, measurements: int, seed: int = 1) -> list[standing.Row]:
    rng = np.random.default_rng(seed)
    speed = rng.lognormal(0, 0.5, machines)
    rows = []
    for m in range(machines):
        for j in np.flatnonzero(rng.random(measurements) < 0.7):
            samples = tuple(float(x) for x in speed[m] * (1 + j) * np.exp(rng.normal(0, 0.03, 5)))
            rows.append(
                standing.Row(
                    f"m{m:06d}",
                    "cuda",
                    "GPU",
                    "w",
                    f"h{j:03d}",
                    "torch",
                    "as-written",
                    3,
                    "standard",
                    "2026-11-26",
                    samples,
                )
            )
    return rows


def _column_copy(block: standing._Block, machine_id: str, mine: dict) -> np.ndarray:
    """The ratios as standing_of computed them until 2026-11-26: the block's columns copied, every ratio's log."""
    keys = sorted(k for k in mine if k in block.columns)
    theirs = block.medians[:, [block.columns[k] for k in keys]]
    with np.errstate(invalid="ignore", divide="ignore"):
        logs = np.log(np.array([mine[k].median for k in keys]) / theirs)
    shared = ~np.isnan(logs)
    counts = shared.sum(axis=1)
    valid = np.flatnonzero((counts > 0) & (block.machines != machine_id))
    return np.exp(np.where(shared, logs, 0.0)[valid].sum(axis=1) / counts[valid])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--machines", type=int, nargs="+", default=[500, 5000, 20000])
    parser.add_argument("--measurements", type=int, default=60)
    parser.add_argument("--pages", type=int, default=200)
    args = parser.parse_args()
    print("| machines | index built s | baseline ms a page | now ms a page | now / baseline | a build's pages, now s |")
    print("|---:|---:|---:|---:|---:|---:|")
    for machines in args.machines:
        rows = _rows(machines, args.measurements)
        t0 = time.perf_counter()
        index = standing.Published(rows)
        built = time.perf_counter() - t0
        block = index.blocks[("as-written", "accelerator")]
        by_machine: dict[str, dict] = {}
        for r in rows:
            by_machine.setdefault(r.machine_id, {})[(r.workload_hash, r.framework)] = r
        pages = sorted(by_machine)[:: max(1, machines // args.pages)][: args.pages]
        t0 = time.perf_counter()
        for m in pages:
            _column_copy(block, m, by_machine[m])
        baseline = (time.perf_counter() - t0) / len(pages)
        t0 = time.perf_counter()
        for m in pages:
            standing.standing_of(m, by_machine[m].values(), index, keep=1)
        now = (time.perf_counter() - t0) / len(pages)
        print(
            f"| {machines:,} | {built:.2f} | {baseline * 1e3:.3f} | {now * 1e3:.3f} | {now / baseline:.2f} | "
            f"{now * machines:.1f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
