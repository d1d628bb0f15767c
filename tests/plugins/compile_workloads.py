"""A tuned transformer point compiled on the CPU, so the compile-ahead pass (runner.api.compile_ahead) can be run
end to end on a machine without a GPU: the suite's own TransformerProgram, told to compile on the CPU too.

Loaded only by the tests, through BENCHSITE_PLUGINS (the measuring children import it by name).
"""

from __future__ import annotations

import dataclasses

from runner.frameworks.torch.workloads import TransformerProgram
from runner.workloads import Case, Workload, register
from runner.workloads.base import VARIANTS
from runner.workloads.suite import transformer_cases


def cases(profile: str) -> list[Case]:
    """bert-tiny inference at two batch sizes: two graphs, each compiled once."""
    base = next(c for c in transformer_cases("tiny") if c.point["model"] == "bert-tiny" and c.point["mode"] == "infer")
    return [
        dataclasses.replace(
            base,
            workload="test-compiled",
            point={**base.point, "batch_size": batch},
            config={**base.config, "batch": batch},
            samples_per_unit=batch,
            flops_per_unit=base.flops_per_unit / base.point["batch_size"] * batch,
        )
        for batch in (2, 3)
    ]


def build(case: Case, variant: str, device: object) -> TransformerProgram:
    return TransformerProgram(case, variant, device, compiled_on=("cpu",))


register(
    Workload(
        "test-compiled",
        "003",
        "bert-tiny compiled on the CPU",
        "The tuned transformer loop, compiled on the CPU (tests only).",
        "step",
        cases,
        {"torch": "compile_workloads:build"},
        variants=VARIANTS,
        compiled_on={("torch", "tuned"): ("cpu",)},
    )
)
