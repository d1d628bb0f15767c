"""Proof that every framework trains the same model: the check behind the site's framework comparison.

For each workload point, PyTorch (the reference) builds its model, and its initial weights and one batch
of the workload's own synthetic data are saved. Every other framework loads those weights into its model
(converting layouts: Keras kernels are transposed, dense rows after a channels-last flatten permuted),
runs the same batch with dropout off, and reports its parameter count, its forward FLOPs counted from its
own traced computation, the output, the loss and the gradients in PyTorch's layout. Each framework runs in
its own child process on the CPU, in fp64. A comparison is only published as equivalent when all of it
agrees within the tolerances below.

Why fp64: these models are ReLU and max-pool networks, and some of their many thousands of pre-activations sit
within fp32 rounding of zero (MNIST's second convolution, batch of 8: one at 1.8e-7 of the layer's largest; a
max-pool pair 4.6e-7 apart). Another CPU's fp32 kernels round those differently, the ReLU or the max flips, and
the gradients move by percents (0.7% on one CI machine, where others agreed to 2e-6). In fp64 the frameworks
agree to about 1e-15 (5e-15 at most on a 2-core x86 VM with TensorFlow 2.21 and JAX 0.10), so the tolerances
can be tight enough to catch a changed epsilon and still leave a margin of about 1e5.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from runner.frameworks import REFERENCE
from runner.measure import executor
from runner.results.schema import EquivalenceCheck
from runner.workloads import Workload

BATCH = 8
LOSS_RTOL = 1e-10
GRAD_RTOL = 1e-9
FLOPS_RTOL = 1e-9  # counts of the same layers must agree exactly (up to float rounding of the sum)


def _items(workloads: list[Workload], framework: str, profile: str) -> list[tuple[str, int]]:
    return [
        (w.id, i)
        for w in workloads
        if framework in w.implementations and REFERENCE in w.implementations
        for i in range(len(w.cases(profile)))
    ]


def _compute(framework: str, items: list[tuple[str, int]], profile: str, directory: Path, timeout_s: float) -> dict:
    """Run one framework's child; returns (workload, index) -> 'ok' or an error message."""
    outcome: dict[tuple[str, int], str] = {}

    def on_event(event: dict[str, Any]) -> None:
        if event.get("event") == "equivalence":
            key = (event["workload"], event["index"])
            outcome[key] = "ok" if event["status"] == "ok" else event["error"]["message"]

    job = {
        "kind": "equivalence",
        "framework": framework,
        "device": "cpu",
        "profile": profile,
        "items": items,
        "batch": BATCH,
        "dir": str(directory),
    }
    failure = executor.run_child(job, on_event, timeout_s)
    for key in items:
        if key not in outcome:
            outcome[key] = failure.message if failure else "the check's process ended without an answer"
    return outcome


def _rel(a: float, b: float) -> float:
    return abs(a - b) / abs(b) if b else abs(a - b)


def compare(
    ref: dict[str, Any], other: dict[str, Any], analytic_flops: float | None
) -> tuple[dict[str, Any], list[str]]:
    """The figures of one framework against the reference, and every difference beyond tolerance."""
    import numpy as np

    problems: list[str] = []
    figures: dict[str, Any] = {
        "params": int(other["params"]),
        "reference_params": int(ref["params"]),
        "forward_flops": float(other["forward_flops"]),
        "analytic_flops": analytic_flops,
        "output_shape": [int(d) for d in other["output"].shape],
        "loss": float(other["loss"]),
        "reference_loss": float(ref["loss"]),
    }
    if figures["params"] != figures["reference_params"]:
        problems.append(f"{figures['params']:,} parameters, PyTorch has {figures['reference_params']:,}")
    for name, count in (("PyTorch's", float(ref["forward_flops"])), ("the analytic", analytic_flops)):
        if count is not None and _rel(figures["forward_flops"], count) > FLOPS_RTOL:
            problems.append(f"{figures['forward_flops']:,.0f} forward FLOPs per example, {name} count is {count:,.0f}")
    if other["output"].shape != ref["output"].shape:
        problems.append(f"output shape {list(other['output'].shape)}, PyTorch's is {list(ref['output'].shape)}")
    figures["loss_rel_diff"] = _rel(figures["loss"], figures["reference_loss"])
    if not math.isfinite(figures["loss"]) or figures["loss_rel_diff"] > LOSS_RTOL:
        problems.append(f"loss {figures['loss']:.8g} against {figures['reference_loss']:.8g}")
        figures["loss_rel_diff"] = figures["loss_rel_diff"] if math.isfinite(figures["loss_rel_diff"]) else None
    grads, ref_grads = other["grads"], ref["grads"]
    if len(grads) != len(ref_grads):
        problems.append(f"{len(grads)} gradient tensors, PyTorch has {len(ref_grads)}")
    else:
        worst = 0.0
        for i, (g, r) in enumerate(zip(grads, ref_grads, strict=True)):
            if g.shape != r.shape:
                problems.append(f"gradient {i} has shape {list(g.shape)}, PyTorch's {list(r.shape)}")
                continue
            scale = float(np.abs(r).max()) or 1.0
            diff = float(np.abs(g.astype(np.float64) - r).max()) / scale
            worst = max(worst, diff if math.isfinite(diff) else math.inf)
        figures["grad_rel_diff"] = worst if math.isfinite(worst) else None
        if worst > GRAD_RTOL:
            problems.append(f"gradients differ by up to {worst:.3g} of their scale")
    return figures, problems


def _load(path: Path) -> dict[str, Any]:
    import numpy as np

    with np.load(path) as f:
        arrays = {key: f[key] for key in f.files}
    grads = [arrays.pop(f"g{i}") for i in range(sum(1 for k in arrays if k.startswith("g")))]
    return {**{k: (v.item() if v.ndim == 0 else v) for k, v in arrays.items()}, "grads": grads}


def check(
    workloads: list[Workload],
    frameworks: list[str],
    profile: str,
    timeout_s: float = 600.0,
    note: Callable[[str], None] = lambda text: None,
) -> list[EquivalenceCheck]:
    """Check every point of `workloads` for each framework in `frameworks` other than the reference."""
    others = [f for f in frameworks if f != REFERENCE]
    wanted = {f: _items(workloads, f, profile) for f in others}
    reference_items = sorted({item for items in wanted.values() for item in items}, key=lambda it: (it[0], it[1]))
    if not reference_items:
        return []
    cases = {w.id: w.cases(profile) for w in workloads}
    checks: list[EquivalenceCheck] = []
    with tempfile.TemporaryDirectory(prefix="benchsite-equivalence-") as tmp:
        directory = Path(tmp)
        note(f"Equivalence: PyTorch reference for {len(reference_items)} points ...")
        ref_outcome = _compute(REFERENCE, reference_items, profile, directory, timeout_s)
        for framework in others:
            note(f"Equivalence: {framework} against PyTorch ...")
            ready = [it for it in wanted[framework] if ref_outcome[it] == "ok"]
            outcome = _compute(framework, ready, profile, directory, timeout_s) if ready else {}
            for workload_id, index in wanted[framework]:
                case = cases[workload_id][index]
                base: dict[str, Any] = {
                    "framework": framework,
                    "reference": REFERENCE,
                    "workload": workload_id,
                    "point": case.point,
                    "loss_rtol": LOSS_RTOL,
                    "grad_rtol": GRAD_RTOL,
                }
                if ref_outcome[(workload_id, index)] != "ok":
                    reason = f"PyTorch reference failed: {ref_outcome[(workload_id, index)]}"
                    checks.append(EquivalenceCheck(**base, status="error", detail=reason[:4000]))
                    continue
                if outcome[(workload_id, index)] != "ok":
                    checks.append(EquivalenceCheck(**base, status="error", detail=outcome[(workload_id, index)][:4000]))
                    continue
                ref = _load(directory / f"{workload_id}-{index}-{REFERENCE}.npz")
                other = _load(directory / f"{workload_id}-{index}-{framework}.npz")
                figures, problems = compare(ref, other, case.forward_flops)
                if case.params is not None and int(ref["params"]) != case.params:
                    problems.append(
                        f"PyTorch's model has {int(ref['params']):,} parameters, the suite says {case.params:,}"
                    )
                status = "failed" if problems else "passed"
                detail = "; ".join(problems) if problems else f"batch of {BATCH}, fp64 on the CPU, dropout off"
                checks.append(EquivalenceCheck(**base, **figures, status=status, detail=detail[:4000]))
    return checks
