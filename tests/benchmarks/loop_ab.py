"""Seed 001's loop body, the script's against benchsite's, in one process: is the difference the loop or the process?

    python tests/benchmarks/loop_ab.py [--device cpu --device cuda] [--depth 2 --depth 8] [--rounds 15]
                                       [--epochs 50] [--profile standard]

The fidelity twin compares two processes: the seed's transcription (runner/fidelity/seeds/seed_001.py) in a fresh
interpreter and benchsite's measuring process. Between processes on a many-core host the figures spread by tens of
percent, so a small difference in the loops themselves hides in that spread. Here both loops run in one process,
on one heap, one thread pool and one device context, alternating block by block (the order swapped every round):

- script:  the transcription's own `run(epochs, log)`, its module executed up to its warm-up line (its model,
           data, optimiser and print, as the script builds them), timed with perf_counter around the block as
           the script times its epochs;
- harness: benchsite's as-written program (runner/frameworks/torch/workloads.py, DepthAsWritten) built as the
           measuring process builds it, `run_unit()` called once per epoch, timed the same way (a device sync at
           the block's end, which the script's last print has already done);
- events:  (on a GPU) the same program timed as the engine times it, by device events recorded before and after the
           block (runner.frameworks.torch.EventTimer), not the host's clock;
- engine:  the same program through benchsite's timing engine (runner.measure.timing.measure, with the engine
           options a measurement uses: device events on a GPU), the mean seconds per unit of its samples, the
           statistic the twin compares.

Both print their per-epoch line to the same line-buffered file, as both do to their stderr in a run. Prints, per
device and depth, each arm's median ms per epoch over the rounds and the median of the per-round ratios to the
script, with a bootstrap 95% interval. A ratio near 1 here with a twin far from 1 says the difference is the
process, not the loop. Not part of the test run.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SCRIPT = ROOT / "runner" / "fidelity" / "seeds" / "seed_001.py"
WARMUP_LINE = "run(1, sys.stderr)"


def script_namespace(device: str, depth: int, n: int) -> dict:
    """The transcription's module run up to its warm-up: its data, model, criterion, optimiser and `run`."""
    source = SCRIPT.read_text()
    head = source[: source.index(WARMUP_LINE)]
    argv = sys.argv
    sys.argv = [str(SCRIPT), "--device", device, "--depth", str(depth), "--n", str(n)]
    try:
        namespace: dict = {"__name__": "seed_001", "__file__": str(SCRIPT)}
        exec(compile(head, str(SCRIPT), "exec"), namespace)
    finally:
        sys.argv = argv
    return namespace


def harness_program(kind: str, depth: int, profile: str):
    from runner.frameworks.torch import make_device
    from runner.measure.worker import import_builder
    from runner.workloads import get

    workload = get("depth-sweep")
    case = next(c for c in workload.cases(profile) if c.point["depth"] == depth)
    device = make_device(kind)
    program = import_builder(workload.implementations["torch"])(case, "as-written", device)
    return program, device, case.config["n"]


def bootstrap(values: list[float], draws: int = 2000) -> tuple[float, float]:
    rng = random.Random(1)
    meds = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(draws))
    return meds[int(0.025 * draws)], meds[int(0.975 * draws) - 1]


def compare(kind: str, depth: int, rounds: int, epochs: int, profile: str, wanted: list[str]) -> None:
    from runner.measure.timing import measure
    from runner.measure.worker import engine_options

    program, device, n = harness_program(kind, depth, profile)
    ns = script_namespace(kind, depth, n)
    with tempfile.TemporaryFile("w", buffering=1) as log:
        program.log = log
        ns["run"](1, log)  # the script's warm-up epoch
        program.run_unit()  # the harness's
        device.sync()

        def script_block() -> float:
            t0 = time.perf_counter()
            ns["run"](epochs, log)
            return (time.perf_counter() - t0) / epochs

        def harness_block() -> float:
            t0 = time.perf_counter()
            for _ in range(epochs):
                program.run_unit()
            device.sync()
            return (time.perf_counter() - t0) / epochs

        def engine_block() -> float:
            est = epochs * statistics.median(per["harness"] or [0.005])
            timing = measure(program.run_unit, budget_s=est, **engine_options(program, device))
            return sum(timing.samples_s) / len(timing.samples_s)

        def events_block() -> float:
            start = device.timer.mark()
            for _ in range(epochs):
                program.run_unit()
            end = device.timer.mark()
            device.sync()
            return device.timer.elapsed(start, end) / epochs

        known = {"script": script_block, "harness": harness_block, "events": events_block, "engine": engine_block}
        arms = {name: known[name] for name in wanted if name != "events" or device.timer is not None}
        per: dict[str, list[float]] = {name: [] for name in arms}
        for r in range(rounds):
            order = list(arms) if r % 2 == 0 else list(reversed(arms))
            for name in order:
                per[name].append(arms[name]())
    print(f"\n{kind}, depth {depth}: {rounds} rounds of {epochs} epochs an arm, one process")
    print("| arm | median ms/epoch | min | max | ratio to script (median of rounds) | 95% interval |")
    print("|---|---:|---:|---:|---:|---|")
    for name, values in per.items():  # the script's own row is 1.000 by construction
        ratios = [v / s for v, s in zip(values, per["script"], strict=True)]
        lo, hi = bootstrap(ratios)
        print(
            f"| {name} | {statistics.median(values) * 1e3:.3f} | {min(values) * 1e3:.3f} | {max(values) * 1e3:.3f} "
            f"| {statistics.median(ratios):.3f} | {lo:.3f} .. {hi:.3f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", action="append", help="cpu, cuda (default: cpu, and cuda where PyTorch sees one)")
    parser.add_argument("--depth", action="append", type=int, help="seed 001 depths (default: 2)")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--epochs", type=int, default=50, help="epochs per arm per round")
    parser.add_argument("--profile", default="standard")
    parser.add_argument(
        "--arm",
        action="append",
        choices=["harness", "events", "engine"],
        help="arms beside the script (default: all); leave out the engine for short blocks, where its own warm-up "
        "and probe would dominate",
    )
    args = parser.parse_args()
    import torch

    devices = args.device or (["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"])
    print(f"torch {torch.__version__}, intra-op threads {torch.get_num_threads()}")
    wanted = ["script", *(args.arm or ["harness", "events", "engine"])]
    for kind in devices:
        for depth in args.depth or [2]:
            compare(kind, depth, args.rounds, args.epochs, args.profile, wanted)


if __name__ == "__main__":
    main()
