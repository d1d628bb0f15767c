"""Does the short warm-up of an epoch loop leave its first timed epoch slower than a whole warm-up epoch would?

    python tests/benchmarks/warmup_ab.py [--workload mnist-cnn] [--profile quick] [--device cpu] [--trials 8]
                                         [--epochs 2]

The engine warms a tuned epoch loop up on a short epoch (runner.workloads.base.warmup_batches: the first batches and
the last, partial one) instead of a whole one; the as-written loops keep a whole one, as the seeds' transcriptions
do (this benchmark and an ad-hoc script before it gave 1.070 and 0.988 for seed 004's as-written loop on the
2-core VM: within that machine's noise, not shown harmless).

This builds the loop afresh for each trial, warms it up one way or the other (alternating which goes first), then
times the next epochs one by one, in one process with PyTorch and no harness: the baseline is the whole warm-up
epoch, side by side with the short one, and the ratio is short / whole of the median first timed epoch.
Not part of the test run.
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workload", default="mnist-cnn")
    parser.add_argument("--variant", default="tuned", help="a variant whose program has a short warm-up")
    parser.add_argument("--profile", default="quick")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--trials", type=int, default=8)
    parser.add_argument("--epochs", type=int, default=2, help="timed epochs after each warm-up")
    args = parser.parse_args()

    from runner.frameworks.torch import make_device
    from runner.worker import import_builder
    from runner.workloads import get

    device = make_device(args.device, args.device)
    spec = get(args.workload)
    case = spec.cases(args.profile)[0]
    build = import_builder(spec.implementations["torch"])
    times: dict[str, list[list[float]]] = {"whole": [], "short": []}
    for trial in range(args.trials):
        for how in ("whole", "short") if trial % 2 else ("short", "whole"):
            program = build(case, args.variant, device)
            program.log = io.StringIO()  # where a loop prints progress lines
            (program.run_unit if how == "whole" else program.warmup)()
            device.sync()
            epochs = []
            for _ in range(args.epochs):
                start = time.perf_counter()
                program.run_unit()
                device.sync()
                epochs.append(time.perf_counter() - start)
            times[how].append(epochs)
            program.close()
    print(f"{args.workload} {args.variant}, {args.profile}, {args.device}: {args.trials} trials, seconds per epoch")
    print("| warm-up | " + " | ".join(f"timed epoch {i + 1} (median)" for i in range(args.epochs)) + " | every trial |")
    print("|---|" + "---:|" * args.epochs + "---|")
    medians = {}
    for how, trials in times.items():
        medians[how] = [statistics.median(t[i] for t in trials) for i in range(args.epochs)]
        cells = " | ".join(f"{m:.3f}" for m in medians[how])
        print(f"| {how} | {cells} | {'; '.join(', '.join(f'{s:.3f}' for s in t) for t in trials)} |")
    print(f"\nfirst timed epoch, short / whole warm-up: {medians['short'][0] / medians['whole'][0]:.3f}")


if __name__ == "__main__":
    main()
