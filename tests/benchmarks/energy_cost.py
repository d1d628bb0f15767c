"""What reading the energy counters costs the timed figures.

    python tests/benchmarks/energy_cost.py [--device cpu|cuda] [--trials 8] [--budget 2] [--powercap DIR]

A measurement reads each energy meter twice a round, at the steady state's bounds, after the device synchronised
(runner.measure.timing.measure's `meters`). This prints, per meter this machine can read (RAPL through powercap on
the CPU, NVML's counter on an NVIDIA GPU), the cost of one read (median of 2,000), then times a matrix-product unit
through the timing engine with the meters and without, alternating which goes first, `--trials` times each, and
reports the ratio with / without of the trials' medians beside the spread of the trials without (the target: within
1%). `--powercap DIR` reads a powercap tree laid out elsewhere (BENCHSITE_POWERCAP), for a machine without RAPL:
the read then costs a file read, as sysfs's does, not the hardware's. Not part of the test run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--trials", type=int, default=8)
    parser.add_argument("--budget", type=float, default=2.0, help="each trial's steady-state budget, seconds")
    parser.add_argument("--powercap", type=Path, help="a powercap tree to read instead of /sys/class/powercap")
    args = parser.parse_args()
    if args.powercap:
        os.environ["BENCHSITE_POWERCAP"] = str(args.powercap)

    import torch

    from runner.measure import energy
    from runner.measure.timing import measure

    meters = []
    try:
        meters.append(energy.RaplMeter(energy.rapl_zones()))
    except energy.Unreadable as exc:
        print(f"rapl: {exc}")
    if args.device == "cuda":
        try:
            meters.append(energy.nvml_meter(energy.visible_gpu_index()))
        except energy.Unreadable as exc:
            print(f"nvml: {exc}")
    if not meters:
        sys.exit("no energy meter can be read here (--powercap DIR reads a tree laid out elsewhere)")

    print("\n| meter | domains | one read, median µs |\n|---|---|---:|")
    for meter in meters:
        costs = []
        for _ in range(2000):
            t0 = time.perf_counter()
            meter.read()
            costs.append(time.perf_counter() - t0)
        print(f"| {meter.source} | {', '.join(meter.domains)} | {statistics.median(costs) * 1e6:.1f} |")

    device = torch.device(args.device)
    a = torch.randn(512, 512, device=device)

    def unit() -> None:
        torch.mm(a, a)

    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize()

    medians: dict[str, list[float]] = {"without": [], "with": []}
    for trial in range(args.trials):
        order = ["without", "with"] if trial % 2 == 0 else ["with", "without"]
        for side in order:
            timing = measure(unit, sync, budget_s=args.budget, target_rel_ci=0.0,
                             meters=meters if side == "with" else ())  # fmt: skip
            medians[side].append(statistics.median(timing.samples_s))
    without, with_ = statistics.median(medians["without"]), statistics.median(medians["with"])
    spread = (max(medians["without"]) - min(medians["without"])) / without
    print("\n| side | trials | median s per unit | trials' spread |\n|---|---:|---:|---:|")
    for side in ("without", "with"):
        values = medians[side]
        print(f"| {side} meters | {len(values)} | {statistics.median(values):.4g} | "
              f"{(max(values) - min(values)) / statistics.median(values):.1%} |")  # fmt: skip
    print(f"\nwith / without: {with_ / without:.4f} (the trials without spread {spread:.1%}; target within 1%)")
    for meter in meters:
        meter.close()


if __name__ == "__main__":
    main()
