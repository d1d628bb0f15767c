"""What does the harness cost? Each as-written loop timed bare against the same loop through `benchsite run`.

    python tests/benchmarks/overhead.py [--profile standard] [--device cpu --device cuda] [--rounds 3]
                                        [--framework torch --framework tensorflow --framework jax]

Bare: a fresh process builds the workload exactly as the harness does, runs one warm-up unit and one
probe unit (the harness's engine does the same before it samples), then times N units the way the seeds
do (synchronise, start the clock, run, synchronise, stop) and reports the mean per unit. Harness: the same
workload, variant and device through runner.api (child process, timing engine, per-sample
synchronisation, monitor, progress events); its mean per unit is sum(samples)/n. The rounds alternate bare
and harness so drift hits both, and the ratio is of the medians over rounds.
With --in-process both run alternately in one process on the same built program (the timing engine with
its monitor and per-sample progress events against bare blocks), which removes process-to-process variance
and leaves only what the engine adds; which side goes first alternates by round, and the table adds the median
and range of the rounds' own harness/bare ratios (a round's two sides share its drift).
Target: harness / bare <= 1.02. Not part of the test run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

# Which sweep points to time: the ends of the depth sweep and one transformer step, to bound the run.
# Frameworks without an implementation of a workload (the transformer outside PyTorch) are left out.
POINTS = {"tabular-mlp": [0], "depth-sweep": [0, -1], "cifar-lenet": [0], "mnist-cnn": [0], "transformer": [0]}
TARGET = 1.02


def build(framework: str, workload: str, index: int, device_kind: str, profile: str) -> tuple[object, dict]:
    """The as-written program and the timing engine's options for it (sync, device timer, sample length),
    built exactly as the harness's measuring child builds them."""
    import importlib

    from runner.frameworks import FRAMEWORKS
    from runner.measure.worker import engine_options, import_builder
    from runner.workloads import get

    spec = get(workload)
    builder = import_builder(spec.implementations[framework])
    device = importlib.import_module(FRAMEWORKS[framework]).make_device(device_kind)
    program = builder(spec.cases(profile)[index], "as-written", device)
    return program, engine_options(program, device)


def bare(framework: str, workload: str, index: int, device_kind: str, profile: str, seconds: float) -> dict:
    """Time the loop with nothing around it (runs in its own process, like a harness child)."""
    program, options = build(framework, workload, index, device_kind, profile)
    sync = options["sync"]
    program.run_unit()  # warm-up, as the harness does
    sync()
    start = time.perf_counter()
    program.run_unit()  # and one more to size the run, as the harness's probe unit does
    sync()
    probe = time.perf_counter() - start
    units = max(3, round(seconds / max(probe, 1e-6)))
    sync()
    start = time.perf_counter()
    for _ in range(units):
        program.run_unit()
    sync()
    total = time.perf_counter() - start
    return {"mean_s": total / units, "units": units}


def inprocess(
    framework: str,
    workload: str,
    index: int,
    device_kind: str,
    profile: str,
    seconds: float,
    rounds: int,
    host_sync: bool = False,
) -> dict:
    """Bare blocks and the harness's timing engine (with its monitor and progress events) alternating on
    the same built program in one process: what the engine itself adds, free of process-to-process noise. Each
    engine block is also read by the host's clock (its units over its steady-state wall time), which tells a loop
    the engine slows from a device timer that reads the same loop differently; `host_sync` adds a third arm, the
    engine without device timestamps."""
    import os

    from runner.measure.monitor import Monitor
    from runner.measure.timing import ACCEL_MIN_SAMPLE_S, measure
    from runner.measure.worker import PROGRESS_EVERY_S

    program, options = build(framework, workload, index, device_kind, profile)
    sync = options["sync"]
    sink = open(os.devnull, "w")  # noqa: SIM115 - the worker writes progress lines to its parent
    last = [0.0]

    def emit(n: int, elapsed: float) -> None:  # as the worker does: at most every PROGRESS_EVERY_S
        if elapsed - last[0] >= PROGRESS_EVERY_S:
            last[0] = elapsed
            sink.write(json.dumps({"event": "progress", "index": index, "samples": n, "elapsed": elapsed}) + "\n")
            sink.flush()

    program.run_unit()
    sync()
    start = time.perf_counter()
    program.run_unit()
    sync()
    units = max(3, round(seconds / max(time.perf_counter() - start, 1e-6)))
    bare_means, engine_means = [], []

    def bare_block() -> None:
        sync()
        start = time.perf_counter()
        for _ in range(units):
            program.run_unit()
        sync()
        bare_means.append((time.perf_counter() - start) / units)

    wall_means: list[float] = []  # the engine's own steady state by the host's clock: units run / wall seconds
    host_sync_means: list[float] = []  # the engine without device timestamps (a host sync ending every sample)

    def engine_block(opts: dict = options, into: list[float] = engine_means) -> None:
        with Monitor():
            timing = measure(program.run_unit, budget_s=seconds, on_sample=emit, target_rel_ci=0.0, **opts)
        into.append(sum(timing.samples_s) / len(timing.samples_s))
        if into is engine_means:  # the probe unit, then every sample's block (the probe is a sample when blocks are 1)
            units_run = 1 + (len(timing.samples_s) - (timing.units_per_sample == 1)) * timing.units_per_sample
            wall_means.append(timing.steady_wall_s / units_run)

    arms = [bare_block, engine_block]
    if host_sync and options["timer"] is not None:
        host_sync_options = {**options, "timer": None, "min_sample_s": ACCEL_MIN_SAMPLE_S}
        arms.append(lambda: engine_block(host_sync_options, host_sync_means))
    for r in range(rounds):  # which side goes first alternates, so a drift within a round hits both alike
        for block in arms if r % 2 == 0 else arms[::-1]:
            block()
        more = f", host-sync engine {host_sync_means[-1] * 1e3:.3f} ms" if host_sync_means else ""
        print(
            f"round {r + 1}: bare {bare_means[-1] * 1e3:.3f} ms, harness {engine_means[-1] * 1e3:.3f} ms "
            f"(by the host's clock {wall_means[-1] * 1e3:.3f} ms){more}",
            file=sys.stderr,
            flush=True,
        )
    return {
        "bare_rounds": bare_means,
        "harness_rounds": engine_means,
        "harness_wall_rounds": wall_means,
        "host_sync_rounds": host_sync_means,
    }


def run_bare_subprocess(framework: str, workload: str, index: int, device: str, profile: str, seconds: float) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--bare", framework, workload, str(index), device, profile, str(seconds)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _spread(rounds: list[float]) -> float:
    """(slowest - fastest) / median of one side's rounds: how far that side moves on its own."""
    return (max(rounds) - min(rounds)) / statistics.median(rounds) if len(rounds) > 1 else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", default="quick")
    parser.add_argument("--device", action="append", help="default: every device each framework finds")
    parser.add_argument("--framework", action="append", help="default: every framework installed")
    parser.add_argument("--workload", action="append", help="default: all five")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0, help="timed seconds per run")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument(
        "--in-process", action="store_true", help="compare bare blocks with the timing engine in one process"
    )
    parser.add_argument(
        "--host-sync-arm",
        action="store_true",
        help="with --in-process on a device with timestamps: also time the engine with a host sync ending every sample",
    )
    parser.add_argument("--bare", nargs=6, help=argparse.SUPPRESS)
    parser.add_argument("--inprocess-child", nargs=8, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bare:
        framework, workload, index, device, profile, seconds = args.bare
        print(json.dumps(bare(framework, workload, int(index), device, profile, float(seconds))))
        return
    if args.inprocess_child:
        framework, workload, index, device, profile, seconds, rounds, host_sync = args.inprocess_child
        point = (framework, workload, int(index), device, profile, float(seconds), int(rounds))
        timed = inprocess(*point, host_sync=host_sync == "1")
        print(json.dumps(timed))
        return

    from runner.api import describe_frameworks
    from runner.frameworks import FRAMEWORKS, canonical_framework
    from runner.workloads import get

    frameworks = [canonical_framework(f) for f in args.framework or FRAMEWORKS]
    found = {info.name: info.devices for info in describe_frameworks(frameworks)[0] if info.available}
    from tests.benchmarks.points import PointRunner, mean_per_unit

    runner = None  # one plan for every harness run: the machine is probed once
    rows = []
    for workload in args.workload or list(POINTS):
        n_cases = len(get(workload).cases(args.profile))
        for index, framework in [(i, f) for i in sorted({i % n_cases for i in POINTS[workload]}) for f in found]:
            if framework not in get(workload).implementations:
                continue
            label = get(workload).cases(args.profile)[index].label()
            for device in [d for d in args.device or found[framework] if d in found[framework]]:
                bare_means, harness_means = [], []
                extra: dict[str, list[float]] = {}
                if args.in_process:
                    argv = [sys.executable, __file__, "--inprocess-child", framework, workload, str(index), device]
                    argv += [args.profile]
                    argv += [str(args.seconds), str(args.rounds), "1" if args.host_sync_arm else "0"]
                    out = subprocess.run(argv, stdout=subprocess.PIPE, text=True, check=True, cwd=ROOT)
                    both = json.loads(out.stdout.strip().splitlines()[-1])
                    bare_means, harness_means = both["bare_rounds"], both["harness_rounds"]
                    extra = {k: both[k] for k in ("harness_wall_rounds", "host_sync_rounds") if both.get(k)}
                for _ in range(0 if args.in_process else args.rounds):
                    point = (framework, workload, index, device, args.profile, args.seconds)
                    bare_means.append(run_bare_subprocess(*point)["mean_s"])
                    if runner is None:
                        runner = PointRunner(args.profile, frameworks, args.device, args.seconds)
                    harness_means.append(mean_per_unit(runner.measure(workload, framework, device, index)))
                b, h = statistics.median(bare_means), statistics.median(harness_means)
                row = {
                    "measurement": label,
                    "framework": framework,
                    "device": device,
                    "bare_s": b,
                    "harness_s": h,
                    "ratio": h / b,
                    # a round's two sides run back to back and share its drift: the median of the rounds' own ratios
                    "paired_ratio": statistics.median(x / y for x, y in zip(harness_means, bare_means, strict=True)),
                    "bare_rounds": bare_means,
                    "harness_rounds": harness_means,
                    **extra,
                }
                rows.append(row)
                for key, what in (("harness_wall_rounds", "by the host's clock"), ("host_sync_rounds", "host-sync")):
                    if key in extra:  # the same engine read another way, or timed another way, over the same bare
                        paired = statistics.median(x / y for x, y in zip(extra[key], bare_means, strict=True))
                        print(f"{'':30s} harness {what} / bare, rounds' median {paired:.3f}", flush=True)
                print(
                    f"{label:30s} {framework:10s} {device:5s} bare {b * 1e3:10.3f} ms  "
                    f"harness {h * 1e3:10.3f} ms  ratio {h / b:6.3f}  rounds' ratios: median {row['paired_ratio']:.3f}",
                    flush=True,
                )
                if args.json:  # after every row: a run cut short keeps what it measured
                    args.json.write_text(json.dumps(rows, indent=2))
    print()
    print(
        "| measurement | framework | device | bare (ms/unit) | harness (ms/unit) | harness/bare "
        f"| within {TARGET:.2f}x | rounds' spread, bare / harness | rounds' ratios: median, range |"
    )
    print("|---|---|---|---:|---:|---:|---|---|---|")
    for r in rows:
        ok = "yes" if r["ratio"] <= TARGET else "no"
        # a ratio whose distance from 1 is inside the rounds' own spread says nothing either way
        spread = max(_spread(r["bare_rounds"]), _spread(r["harness_rounds"]))
        pairs = [x / y for x, y in zip(r["harness_rounds"], r["bare_rounds"], strict=True)]
        if abs(r["ratio"] - 1) < spread:
            ok += " (unresolved: inside the rounds' spread)"
        print(
            f"| {r['measurement']} | {r['framework']} | {r['device']} | {r['bare_s'] * 1e3:.3f} | "
            f"{r['harness_s'] * 1e3:.3f} | "
            f"{r['ratio']:.3f} | {ok} | {_spread(r['bare_rounds']):.1%} / {_spread(r['harness_rounds']):.1%} | "
            f"{r['paired_ratio']:.3f}, {min(pairs):.3f} to {max(pairs):.3f} |"
        )
    worst = max(r["ratio"] for r in rows)
    print(
        f"\nworst ratio {worst:.3f} (target <= {TARGET}); median ratio "
        f"{statistics.median(r['ratio'] for r in rows):.3f}"
    )


if __name__ == "__main__":
    main()
