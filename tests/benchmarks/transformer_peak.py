"""How close does the tuned transformer loop get to the device? BERT-base steps against the measured peak.

    python tests/benchmarks/transformer_peak.py [--device cuda] [--train 32 --train 128] [--infer 8 --infer 64]
                                                [--seconds 2]

Measures the device's bf16 (and fp32) matrix-product peak the way `benchsite run` records it (runner's
measure_peaks), then times BERT-base training and inference steps, as-written (the baseline: fp32, batch from
host memory, eager) and tuned (bf16, resident batch, fused AdamW, torch.compile with CUDA graphs on GPUs),
through the same timing engine and options as a measurement, side by side. Prints per point the median step,
the achieved TFLOP/s (the suite's analytic FLOPs), the share of the measured peak and the tuned/as-written
speedup. Targets on an H100/H200: training >= 35% of the bf16 peak at its best batch; inference at
batch 8 <= 2 ms per step. Not part of the test run.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--train", action="append", type=int, help="training batch sizes (default 32, 128)")
    parser.add_argument("--infer", action="append", type=int, help="inference batch sizes (default 8, 64)")
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--model", default="bert-base")
    args = parser.parse_args()

    import gc

    from runner.frameworks.torch import make_device, measure_peaks
    from runner.frameworks.torch.workloads import transformer
    from runner.measure.timing import measure
    from runner.measure.worker import engine_options
    from runner.results.intervals import summarize
    from runner.workloads.base import Case
    from runner.workloads.suite import MODELS, TRANSFORMER_LOOPS, transformer_forward_flops

    device = make_device(args.device)
    peaks = {p["dtype"]: p for p in measure_peaks(device)}
    for p in peaks.values():
        print(f"peak {p['dtype']}: {p['tflops']:.1f} TFLOP/s ({p['n']}x{p['n']} products, {device.name})", flush=True)

    rows = []
    points = [("train", b) for b in args.train or [32, 128]] + [("infer", b) for b in args.infer or [8, 64]]
    for mode, batch in points:
        forward = transformer_forward_flops(MODELS[args.model]) * batch
        flops = 3 * forward if mode == "train" else forward
        config = {"model": MODELS[args.model], "mode": mode, "batch": batch, "optimizer": "adamw", "lr": 5e-5}
        case = Case("transformer", {}, {**config, "loops": TRANSFORMER_LOOPS}, "step", batch, flops_per_unit=flops)
        row = {"point": f"{args.model} {mode} batch {batch}"}
        for variant in ("as-written", "tuned"):
            program = transformer(case, variant, device)
            timing = measure(program.run_unit, budget_s=args.seconds, **engine_options(program, device))
            median = summarize(timing.samples_s).median_s
            peak = peaks.get(program.precision, peaks["fp32"])["tflops"]
            row[variant] = (median, flops / median / 1e12, flops / median / 1e12 / peak, program.precision)
            del program
            gc.collect()
        rows.append(row)
        tuned, base = row["tuned"], row["as-written"]
        print(
            f"{row['point']:28s} as-written {base[0] * 1e3:8.2f} ms  tuned {tuned[0] * 1e3:8.2f} ms "
            f"({tuned[1]:.0f} TFLOP/s, {tuned[2]:.0%} of {tuned[3]} peak)  speedup {base[0] / tuned[0]:.2f}x",
            flush=True,
        )

    print("\n| point | as-written (ms) | tuned (ms) | tuned TFLOP/s | % of measured peak | tuned / as-written |")
    print("|---|---:|---:|---:|---:|---:|")
    for row in rows:
        base, tuned = row["as-written"], row["tuned"]
        print(
            f"| {row['point']} | {base[0] * 1e3:.2f} | {tuned[0] * 1e3:.2f} | {tuned[1]:.1f} | "
            f"{tuned[2]:.0%} ({tuned[3]}) | {base[0] / tuned[0]:.2f}x |"
        )
    train = [r["tuned"][2] for r in rows if " train " in r["point"]]
    infer8 = [r["tuned"][0] for r in rows if r["point"].endswith("infer batch 8")]
    if train:
        print(f"\nbest training share of peak {max(train):.0%} (target >= 35%)")
    if infer8:
        print(f"inference at batch 8: {infer8[0] * 1e3:.2f} ms (target <= 2 ms)")


if __name__ == "__main__":
    main()
