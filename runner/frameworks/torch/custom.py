"""A user's own model (`benchsite run --model SPEC`) in PyTorch: seed 003's fine-tuning loops
(runner.frameworks.torch.workloads.TransformerProgram, as-written and tuned) applied to any module that maps a
batch to logits, trained with cross-entropy over them (runner.workloads.custom.forward says how they are read from
the output).
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from runner.frameworks.torch import TorchDevice
from runner.frameworks.torch.workloads import Program, TransformerProgram
from runner.workloads import custom as spec
from runner.workloads.base import Case


class CustomProgram(TransformerProgram):
    """The transformer's loops with the user's model, its synthetic batch (x, labels) and a cross-entropy step."""

    def __init__(self, case: Case, variant: str, device: TorchDevice):
        options = spec.options_from_env()
        self.inputs = spec.InputSpec(**options["input"])
        self.classes = int(options["classes"])
        self.spec = spec.parse_spec(options["spec"])
        super().__init__(case, variant, device)
        self.hf = spec.is_transformers(self.model)  # read from the module itself, not its compiled wrapper

    def build(self, cfg: dict[str, Any]) -> nn.Module:
        model = spec.build(self.spec, self.inputs, self.classes)
        found = spec.structure_hash(model, self.inputs, self.classes)
        if found != cfg["structure"]:  # the file changed since the run checked it: not the model it named
            raise RuntimeError(
                f"--model {self.spec.text}: its structure changed during the run (hash {found}, "
                f"{cfg['structure']} when the run began)"
            )
        return model

    def host_batch_of(self, cfg: dict[str, Any]) -> dict[str, torch.Tensor]:
        x, labels = spec.batch(self.inputs, self.classes, cfg["batch"])
        return {"x": x, "labels": labels}

    def _step(self, batch: dict[str, torch.Tensor]) -> None:
        if self.train:
            assert self.optimizer is not None
            logits = spec.forward(self.forward, batch["x"], self.inputs.tokens, self.hf)
            F.cross_entropy(logits.float(), batch["labels"]).backward()
            self.optimizer.step()
            self.optimizer.zero_grad()
        else:
            with torch.inference_mode() if self.tuned else torch.no_grad():
                spec.forward(self.forward, batch["x"], self.inputs.tokens, self.hf)


def custom(case: Case, variant: str, device: TorchDevice) -> Program:
    return CustomProgram(case, variant, device)
