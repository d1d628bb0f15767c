"""Does the short warm-up of an epoch loop leave its first timed epoch slower than a whole warm-up epoch would?

    python tests/benchmarks/warmup_ab.py [--framework torch] [--workload mnist-cnn] [--variant tuned]
                                         [--profile quick] [--device cpu] [--n N] [--case K] [--fresh]
                                         [--trials 8] [--epochs 2]

The engine warms a tuned epoch loop, and JAX's as-written one on a CPU, up on a short epoch (runner.workloads.base.
warmup_batches: the first batches and the last, partial one) instead of a whole one. The PyTorch and TensorFlow
as-written loops keep a whole one, as the seeds' transcriptions do (this benchmark and an ad-hoc script before it
gave 1.070 and 0.988 for seed 004's as-written PyTorch loop, whose epoch feeds from a DataLoader worker, on the
2-core VM: within that machine's noise, not shown harmless). JAX's as-written loop, a jitted step per batch with no
loader process, gave 1.000 on the 2-core VM (`--framework jax --variant as-written --n 6410 --trials 6`), and it
warms up short there; on the H100 machine's GPU (`--profile standard --device cuda --trials 4`) it gave 1.193, so on
a GPU it warms up whole (its `short_epoch` is what this runs there).

spark-inference warms up on a whole unit; `--workload spark-inference --fresh --case K` compares it, for the profile's
K-th point, with a short warm-up over one predict call's rows per task a unit runs at once (its `short_epoch`).

This builds the loop afresh for each trial, warms it up one way or the other (alternating which goes first), then
times the next epochs one by one, with the framework and no harness: the baseline is the whole warm-up epoch, side by
side with the short one, and the ratio is short / whole of the median first timed epoch. The trials share one process,
or with `--fresh` each runs in an interpreter of its own, as a round's measuring process does (for Spark, whose JVM
and its compiled code outlive a session, the only fair way).
`--n` sets the number of examples per epoch (the profile's otherwise): quick's MNIST epoch is 10 batches, too few
to tell a short warm-up from a whole one, and the standard's 938 take minutes a trial on a small CPU.
Not part of the test run.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--framework", default="torch", choices=["torch", "jax"])
    parser.add_argument("--workload", default="mnist-cnn")
    parser.add_argument("--variant", default="tuned", help="a variant whose program has a short warm-up")
    parser.add_argument("--profile", default="quick")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--n", type=int, help="examples per epoch (default: the profile's)")
    parser.add_argument("--case", type=int, default=0, help="which of the profile's points (an index, default 0)")
    parser.add_argument("--fresh", action="store_true", help="each trial's loop in an interpreter of its own")
    parser.add_argument("--one", choices=["short", "whole"], help=argparse.SUPPRESS)  # a --fresh trial's child
    parser.add_argument("--trials", type=int, default=8)
    parser.add_argument("--epochs", type=int, default=2, help="timed epochs after each warm-up")
    args = parser.parse_args()

    if args.fresh and not args.one:
        times: dict[str, list[list[float]]] = {"whole": [], "short": []}
        for trial in range(args.trials):
            for how in ("whole", "short") if trial % 2 else ("short", "whole"):
                times[how].append(fresh_trial(how))
                print(f"trial {trial + 1} {how}: {', '.join(f'{e:.3f}' for e in times[how][-1])}", file=sys.stderr)
        report(args, times)
        return
    import dataclasses
    import importlib

    from runner.measure.worker import import_builder
    from runner.workloads import get

    device = importlib.import_module(f"runner.frameworks.{args.framework}").make_device(args.device, args.device)
    spec = get(args.workload)
    case = spec.cases(args.profile)[args.case]
    if args.n:
        case = dataclasses.replace(case, config={**case.config, "n": args.n})
    build = import_builder(spec.implementations[args.framework])
    times = {"whole": [], "short": []}
    for trial in range(1 if args.one else args.trials):
        for how in (args.one,) if args.one else ("whole", "short") if trial % 2 else ("short", "whole"):
            program = build(case, args.variant, device)
            program.log = io.StringIO()  # where a loop prints progress lines
            sync = getattr(program, "sync", None) or device.sync  # JAX waits on what the program computed
            short = getattr(program, "warmup", None) or program.short_epoch  # JAX's as-written loop on a GPU
            (program.run_unit if how == "whole" else short)()
            sync()
            epochs = []
            for _ in range(args.epochs):
                start = time.perf_counter()
                program.run_unit()
                sync()
                epochs.append(time.perf_counter() - start)
            times[how].append(epochs)
            program.close()
    if args.one:
        print(json.dumps(times[args.one][0]))
        return
    report(args, times)


def fresh_trial(how: str) -> list[float]:
    """One trial in a fresh interpreter: this script again, told which warm-up to run; its last line is the epochs."""
    argv = [a for a in sys.argv[1:] if a != "--fresh"]
    out = subprocess.run([sys.executable, __file__, *argv, "--one", how], check=True, capture_output=True, text=True)
    return [float(e) for e in json.loads(out.stdout.strip().splitlines()[-1])]


def report(args: argparse.Namespace, times: dict[str, list[list[float]]]) -> None:
    from runner.workloads import get

    case = get(args.workload).cases(args.profile)[args.case]
    size = (
        f"n={args.n or case.config['n']}"
        if "n" in case.config
        else ", ".join(f"{k}={v}" for k, v in case.point.items())
    )
    where = f"{args.profile} ({size}), {args.device}" + (", a fresh interpreter a trial" if args.fresh else "")
    print(f"{args.framework} {args.workload} {args.variant}, {where}: {args.trials} trials")
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
