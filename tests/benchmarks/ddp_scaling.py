"""Which DistributedDataParallel settings let the tuned (bf16) BERT-base step scale to 2 GPUs?

    NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 \\
        python tests/benchmarks/ddp_scaling.py [--device cuda] [--worlds 1 2] [--rounds 2] [--seconds 3]
                                               [--variant tuned] [--preset NAME ...]

Each preset is the suite's `transformer-ddp` loop (standard profile: BERT-base, batch 64 per process) with some
of its settings changed: eager instead of compiled, or DistributedDataParallel's own settings
(`gradient_as_bucket_view`, `bucket_cap_mb`, `static_graph`, a bf16 compression hook). Every preset runs through
the product's own code: `DataParallelTransformer` starts the ranks as `benchsite run` does, and the timing engine
times rank 0's steps with the measurement's own options. Rounds interleave the presets and world sizes, so drift
over the run hits them alike. Prints, per preset, the median step at each world size, the scaling efficiency
t(1) / t(N) of each round and their median, and the N-process step against the baseline preset's (the loop as
the suite has it). After each measurement, 20 more steps are timed on the host, launch by launch: where the
host's launching takes as long as the step (host/step near 1), the step is bound by the host, not the GPUs.
Target: >= 90% at 2 GPUs for the tuned loop. Each instance starts its processes and compiles (on
2 x H200, 13 instances took about 9 minutes): pass --preset to pick a few. Not part of the test run.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

HOST_STEPS = 20
PRESETS: dict[str, dict[str, object]] = {
    "suite": {},  # the loop as the suite has it: on GPUs, the whole step replayed from one CUDA graph
    "compiled": {"graph": "none", "compile": "inductor-on-gpu"},  # the suite's tuned loop on 2026-11-23 and 24
    "eager": {"graph": "none"},  # the suite's tuned loop until 2026-11-23
    "bucket-view": {"gradient_as_bucket_view": True},
    "bucket-view+static": {"gradient_as_bucket_view": True, "static_graph": True},
    "bucket-view+cap100": {"gradient_as_bucket_view": True, "bucket_cap_mb": 100},
    "bucket-view+bf16-hook": {"gradient_as_bucket_view": True, "comm_hook": "bf16-compress"},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--worlds", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=3.0, help="time budget of each measurement")
    parser.add_argument("--variant", default="tuned", choices=["tuned", "as-written"])
    parser.add_argument("--preset", action="append", choices=sorted(PRESETS), help="default: all")
    parser.add_argument("--profile", default="standard", help="whose DDP point: standard; tiny to try it on a CPU")
    args = parser.parse_args()

    from runner.frameworks.torch import make_device
    from runner.frameworks.torch.distributed import DataParallelTransformer
    from runner.measure.timing import measure
    from runner.measure.worker import engine_options
    from runner.results.intervals import summarize
    from runner.workloads.suite import ddp_cases

    device = make_device(args.device)
    base = {case.point["world_size"]: case for case in ddp_cases(args.profile)}
    presets = args.preset or list(PRESETS)
    steps: dict[tuple[str, int], list[float]] = {}
    for round_ in range(args.rounds):
        for name in presets:
            for world in args.worlds:
                case = base[world]
                loops = {**case.config["loops"]}
                loops[args.variant] = {**loops[args.variant], **PRESETS[name]}
                case = dataclasses.replace(case, config={**case.config, "loops": loops})
                program = DataParallelTransformer(case, args.variant, device)
                try:
                    options = engine_options(program, device)
                    timing = measure(program.run_unit, budget_s=args.seconds, **options)
                    host, started = 0.0, time.perf_counter()
                    for _ in range(HOST_STEPS):
                        launched = time.perf_counter()
                        program.run_unit()
                        host += time.perf_counter() - launched
                    options["sync"]()
                    host_share = host / (time.perf_counter() - started)
                finally:
                    program.close()
                median = summarize(timing.samples_s).median_s
                steps.setdefault((name, world), []).append(median)
                print(
                    f"round {round_ + 1} {name:30s} world {world}: {median * 1e3:8.2f} ms "
                    f"({len(timing.samples_s)} samples); host/step {host_share:.2f}",
                    flush=True,
                )

    top = max(args.worlds)
    model, batch = base[1].point["model"], base[1].point["batch_size"]
    print(f"\n{args.variant} loop, {model} batch {batch} per process, {device.name}; step medians over rounds")
    head = " | ".join(f"{w} proc (ms)" for w in args.worlds)
    print(f"| preset | {head} | efficiency at {top} per round | median | {top}-proc step vs suite |")
    print("|---|" + "---:|" * (len(args.worlds) + 3))
    for name in presets:
        cells = " | ".join(f"{statistics.median(steps[(name, w)]) * 1e3:.2f}" for w in args.worlds)
        if 1 in args.worlds:
            per_round = [a / b for a, b in zip(steps[(name, 1)], steps[(name, top)], strict=True)]
            effs = ", ".join(f"{e:.1%}" for e in per_round)
            eff = f"{statistics.median(per_round):.1%}"
        else:
            effs = eff = "-"
        ratio = "-"
        if ("suite", top) in steps:
            ratio = f"{statistics.median(steps[(name, top)]) / statistics.median(steps[('suite', top)]):.3f}"
        print(f"| {name} | {cells} | {effs} | {eff} | {ratio} |")


if __name__ == "__main__":
    main()
