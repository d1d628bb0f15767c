"""What does the compile-ahead pass save, and does it change what is timed?

    python tests/benchmarks/compile_ahead.py [--point bert-base:train:8 --point deit-tiny:train:32 ...]
                                            [--rounds 2] [--time-budget 2]

`benchsite run` compiles the points of a compiled loop (the tuned transformer sweep on a GPU) side by side in
children of their own before measuring them (runner.api.compile_ahead); each measurement then loads Inductor's
graphs from the run's compile cache. This runs the chosen points of that sweep through runner.api exactly as
`benchsite run --profile standard -w transformer -d cuda -f torch --variant tuned` does, with the pass and without
it (--no-compile-ahead: the baseline, each measuring process compiling its points itself), alternating
(with, without, without, with, ...) so drift falls on both. It prints per point the median step of each round and
the warm-up, the ratio with / without of the medians, and the wall time of each run. Needs a CUDA GPU. Not part of
the test run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

DEFAULT_POINTS = ["bert-base:train:8", "deit-tiny:train:32", "convnext-tiny:train:32", "bert-base:infer:8"]


def positions(points: list[str]) -> list[int]:
    from runner.workloads import get

    cases = get("transformer").cases("standard")
    out = []
    for point in points:
        model, mode, batch = point.split(":")
        wanted = {"model": model, "mode": mode, "batch_size": int(batch)}
        matches = [i for i, case in enumerate(cases) if case.point == wanted]
        if not matches:
            raise SystemExit(f"no standard transformer point {point}")
        out += matches
    return out


def one_run(chosen: list[int], ahead: bool, budget: float | None) -> tuple[float, dict[str, tuple[float, float]]]:
    """Wall seconds of the run, and per point (median step, warm-up seconds)."""
    from runner import api

    with tempfile.TemporaryDirectory() as tmp:
        options = api.RunOptions(
            profile="standard",
            workloads=["transformer"],
            frameworks=["torch"],
            devices=["cuda"],
            variants=["tuned"],
            time_budget_s=budget,
            output=Path(tmp),
            equivalence=False,
            peaks=False,
            profile_ops=False,
            compile_ahead=ahead,
        )
        plan = api.plan_run(options)
        for group in plan.groups:
            group.only(chosen)
        start = time.perf_counter()
        result, _ = api.execute(plan)
        wall = time.perf_counter() - start
    out = {}
    for m in result.measurements:
        label = f"{m.point['model']} {m.point['mode']} {m.point['batch_size']}"
        if m.status != "ok":
            raise SystemExit(f"{label}: {m.status} {m.error}")
        out[label] = (m.median_s, m.warmup_s or 0.0)
    return wall, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--point", action="append", help="model:mode:batch of the standard sweep (repeatable)")
    parser.add_argument("--rounds", type=int, default=2, help="runs each way (default 2)")
    parser.add_argument("--time-budget", type=float)
    args = parser.parse_args()
    chosen = positions(args.point or DEFAULT_POINTS)
    order = [(True, False) if r % 2 == 0 else (False, True) for r in range(args.rounds)]
    walls: dict[bool, list[float]] = {True: [], False: []}
    points: dict[bool, dict[str, list[tuple[float, float]]]] = {True: {}, False: {}}
    for pair in order:
        for ahead in pair:
            wall, measured = one_run(chosen, ahead, args.time_budget)
            walls[ahead].append(wall)
            for label, value in measured.items():
                points[ahead].setdefault(label, []).append(value)
            print(f"{'with' if ahead else 'without'} the pass: {wall:.1f} s", flush=True)

    def ms(values: list[tuple[float, float]]) -> str:
        return " / ".join(f"{v[0] * 1e3:.2f}" for v in values)

    print("\n| point | step ms, with | step ms, without | ratio with / without | warm-up s, with | warm-up s, w/o |")
    print("|---|---:|---:|---:|---:|---:|")
    for label in points[True]:
        with_, without = points[True][label], points[False][label]
        ratio = statistics.median(v[0] for v in with_) / statistics.median(v[0] for v in without)
        warm_with = statistics.median(v[1] for v in with_)
        warm_without = statistics.median(v[1] for v in without)
        print(f"| {label} | {ms(with_)} | {ms(without)} | {ratio:.3f} | {warm_with:.1f} | {warm_without:.1f} |")
    with_wall, without_wall = statistics.median(walls[True]), statistics.median(walls[False])
    print(
        f"\nrun wall time (median of {args.rounds}): with the pass {with_wall:.1f} s, without {without_wall:.1f} s, "
        f"ratio {with_wall / without_wall:.3f}"
    )


if __name__ == "__main__":
    main()
