"""Would compiling the tuned transformer step once per model, with a dynamic batch, cost less and run as fast?

    python tests/benchmarks/compile_dynamic.py [--model bert-base] [--mode train] [--batch 8 --batch 32 ...]
                                              [--steps 30]

The tuned loop on GPUs compiles every point of the batch sweep on its own, static shapes, from an empty Dynamo
cache (runner.frameworks.torch.workloads.compile_fresh): 13 compiles, 347 s of a standard run's warm-up on an
H100 machine. This times, in one process, the same tuned step (bf16 autocast and fused AdamW for training, bf16
weights under inference_mode for inference, torch.compile(mode='reduce-overhead')) two ways: static, one
compile per batch size (the suite's loop; the baseline), and dynamic, one compile for all batch sizes with the
batch dimension marked dynamic. It prints, per batch size, the first three steps' wall time (compile, CUDA
graph warm-up and recording) and the median step over --steps steps from CUDA events, and the ratio dynamic /
static. Needs a CUDA GPU. Not part of the test run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def _step(compiled: Any, data: dict[str, Any], optimizer: Any) -> None:
    """The tuned step: training under bf16 autocast with fused AdamW (an optimizer given), else inference."""
    import torch

    if optimizer is not None:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = compiled(**data).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    else:
        with torch.inference_mode():
            compiled(**data)


def run(model_name: str, mode: str, batches: list[int], steps: int, dynamic: bool) -> dict[int, tuple[float, float]]:
    import torch

    from runner.frameworks.torch.workloads import build_transformer, compile_fresh, transformer_batch
    from runner.workloads.suite import MODELS

    cfg = MODELS[model_name]
    train = mode == "train"
    out: dict[int, tuple[float, float]] = {}
    compiled = None
    model = build_transformer(cfg).to("cuda", dtype=None if train else torch.bfloat16)
    model.train(train)
    compile_fresh(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5, fused=True) if train else None
    for batch in batches:
        if not dynamic:  # the suite's loop: every point compiles afresh
            torch._dynamo.reset()
            compiled = None
        if compiled is None:
            compiled = torch.compile(model, mode="reduce-overhead")  # dynamic: the batch dimension marked below
        data = {k: v.to("cuda") for k, v in transformer_batch(cfg, batch).items()}
        if not train:
            data = {k: (v.to(torch.bfloat16) if v.is_floating_point() else v) for k, v in data.items() if k != "labels"}
        if dynamic:
            for v in data.values():
                torch._dynamo.mark_dynamic(v, 0)

        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(3):
            _step(compiled, data, optimizer)
        torch.cuda.synchronize()
        warmup_s = time.perf_counter() - start
        times = []
        for _ in range(steps):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            _step(compiled, data, optimizer)
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b) / 1e3)
        out[batch] = (warmup_s, statistics.median(times))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="bert-base")
    parser.add_argument("--mode", default="train", choices=["train", "infer"])
    parser.add_argument("--batch", type=int, action="append")
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()
    batches = args.batch or [8, 32, 128]
    static = run(args.model, args.mode, batches, args.steps, dynamic=False)
    dynamic = run(args.model, args.mode, batches, args.steps, dynamic=True)
    print(f"\n{args.model} {args.mode}, tuned step, torch.compile(mode='reduce-overhead')")
    print(
        "| batch | static: first 3 steps (s) | dynamic: first 3 steps (s) | static step (ms) | dynamic step (ms) "
        "| dynamic / static |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    for batch in batches:
        (sw, ss), (dw, ds) = static[batch], dynamic[batch]
        print(f"| {batch} | {sw:.1f} | {dw:.1f} | {ss * 1e3:.2f} | {ds * 1e3:.2f} | {ds / ss:.3f} |")
    total_s, total_d = sum(v[0] for v in static.values()), sum(v[0] for v in dynamic.values())
    print(f"| all | {total_s:.1f} | {total_d:.1f} | | | warm-up ratio {total_d / total_s:.2f} |")


if __name__ == "__main__":
    main()
