"""What does the harness cost? Each as-written loop timed bare against the same loop through `benchsite run`.

    python tests/benchmarks/overhead.py [--profile standard] [--device cpu --device cuda] [--rounds 3]

Bare: a fresh process builds the workload exactly as the harness does, runs one warm-up unit, then times
N units the way the seeds do (synchronise, start the clock, run, synchronise, stop) and reports the mean
per unit. Harness: the same workload, variant and device through runner.api (child process, timing engine,
per-sample synchronisation, monitor, progress events); its mean per unit is sum(samples)/n. The rounds
alternate bare and harness so drift hits both, and the ratio is of the medians over rounds.
Target: harness / bare <= 1.02. Not part of the test run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

# Which sweep points to time: the ends of the depth sweep and one transformer step, to bound the run.
POINTS = {"tabular-mlp": [0], "depth-sweep": [0, -1], "cifar-lenet": [0], "mnist-cnn": [0], "transformer": [0]}
TARGET = 1.02


def bare(workload: str, index: int, device_kind: str, profile: str, seconds: float) -> dict[str, float]:
    """Time the loop with nothing around it (runs in its own process, like a harness child)."""
    from runner.frameworks.torch import make_device
    from runner.workloads import get

    spec = get(workload)
    module, _, func = spec.implementations["torch"].partition(":")
    builder = getattr(__import__(module, fromlist=[func]), func)
    device = make_device(device_kind)
    case = spec.cases(profile)[index]
    program = builder(case, "as-written", device)
    device.sync()
    start = time.perf_counter()
    program.run_unit()  # warm-up, as the harness does
    device.sync()
    first = time.perf_counter() - start
    units = max(3, int(seconds / max(first, 1e-4)))
    device.sync()
    start = time.perf_counter()
    for _ in range(units):
        program.run_unit()
    device.sync()
    total = time.perf_counter() - start
    return {"mean_s": total / units, "units": units}


def harness(workload: str, index: int, device_kind: str, profile: str, seconds: float) -> dict[str, float]:
    from runner import api

    with tempfile.TemporaryDirectory() as tmp:
        options = api.RunOptions(
            profile=profile,
            workloads=[workload],
            devices=[device_kind],
            variants=["as-written"],
            time_budget_s=seconds,
            output=Path(tmp) / "r.yaml",
            profile_ops=False,
        )
        plan = api.plan_run(options)
        for group in plan.groups:
            group.only([index])
        result, _ = api.execute(plan)
    m = next(m for m in result.measurements if m.status == "ok")
    return {
        "mean_s": sum(m.samples_s) / len(m.samples_s),
        "units": len(m.samples_s) * m.units_per_sample,
        "median_s": m.median_s or 0.0,
    }


def run_bare_subprocess(workload: str, index: int, device: str, profile: str, seconds: float) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--bare", workload, str(index), device, profile, str(seconds)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", default="quick")
    parser.add_argument("--device", action="append", help="default: every device torch finds")
    parser.add_argument("--workload", action="append", help="default: all five")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0, help="timed seconds per run")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument("--bare", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bare:
        workload, index, device, profile, seconds = args.bare
        print(json.dumps(bare(workload, int(index), device, profile, float(seconds))))
        return

    from runner.api import describe_frameworks
    from runner.workloads import get

    devices = args.device or describe_frameworks(["torch"])[0][0].devices
    rows = []
    for workload in args.workload or list(POINTS):
        n_cases = len(get(workload).cases(args.profile))
        for index in sorted({i % n_cases for i in POINTS[workload]}):
            label = get(workload).cases(args.profile)[index].label()
            for device in devices:
                bare_means, harness_means = [], []
                for _ in range(args.rounds):
                    bare_means.append(
                        run_bare_subprocess(workload, index, device, args.profile, args.seconds)["mean_s"]
                    )
                    harness_means.append(harness(workload, index, device, args.profile, args.seconds)["mean_s"])
                b, h = statistics.median(bare_means), statistics.median(harness_means)
                row = {
                    "measurement": label,
                    "device": device,
                    "bare_s": b,
                    "harness_s": h,
                    "ratio": h / b,
                    "bare_rounds": bare_means,
                    "harness_rounds": harness_means,
                }
                rows.append(row)
                print(
                    f"{label:45s} {device:5s} bare {b * 1e3:10.3f} ms  harness {h * 1e3:10.3f} ms  ratio {h / b:6.3f}",
                    flush=True,
                )
    print()
    print(f"| measurement | device | bare (ms/unit) | harness (ms/unit) | harness/bare | within {TARGET:.2f}x |")
    print("|---|---|---:|---:|---:|---|")
    for r in rows:
        ok = "yes" if r["ratio"] <= TARGET else "no"
        print(
            f"| {r['measurement']} | {r['device']} | {r['bare_s'] * 1e3:.3f} | {r['harness_s'] * 1e3:.3f} | "
            f"{r['ratio']:.3f} | {ok} |"
        )
    worst = max(r["ratio"] for r in rows)
    print(
        f"\nworst ratio {worst:.3f} (target <= {TARGET}); median ratio "
        f"{statistics.median(r['ratio'] for r in rows):.3f}"
    )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
