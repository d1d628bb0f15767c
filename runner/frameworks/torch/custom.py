"""A user's own model (`benchsite run --model SPEC`) in PyTorch: the as-written and tuned loops of seed 003's
fine-tuning step, applied to any module that maps a batch to logits.

as-written: fp32, each batch copied from host memory every step, torch.optim.AdamW, `no_grad` inference, the model
called as it is. tuned: the batch resident on the device, fused AdamW, bf16 autocast for training (fp32 master
weights) and bf16 weights for inference where the device supports bf16, inference under `inference_mode`, and on
CUDA/ROCm the model compiled by torch.compile with CUDA graphs ('reduce-overhead'). The loss is cross-entropy over
the logits (runner.workloads.custom.forward says how they are read from the output).
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from runner.frameworks.torch import TorchDevice
from runner.frameworks.torch.workloads import Program, _fused_or_foreach, compile_fresh
from runner.workloads import custom as spec
from runner.workloads.base import Case
from runner.workloads.suite import TRANSFORMER_COMPILED_ON


class CustomProgram(Program):
    def __init__(self, case: Case, variant: str, device: TorchDevice):
        cfg = case.config
        options = spec.options_from_env()
        inputs = spec.InputSpec(**options["input"])
        model = spec.build(spec.parse_spec(options["spec"]), inputs, options["classes"])
        found = spec.structure_hash(model, inputs, options["classes"])
        if found != cfg["structure"]:  # the file changed since the run checked it: not the model it named
            raise RuntimeError(
                f"--model {options['spec']}: its structure changed during the run (hash {found}, "
                f"{cfg['structure']} when the run began)"
            )
        super().__init__(model, device)
        self.tokens = inputs.tokens
        self.hf = spec.is_transformers(model)  # read from the module itself, not its compiled wrapper
        self.train = cfg["mode"] == "train"
        self.tuned = variant == "tuned"
        bf16 = self.tuned and device.bf16
        self.weights_bf16 = bf16 and not self.train
        self.autocast = bf16 and self.train
        self.precision = "bf16" if bf16 else "fp32"
        self.model.to(device.device, dtype=torch.bfloat16 if self.weights_bf16 else None)
        self.model.train(self.train)
        x, labels = spec.batch(inputs, options["classes"], cfg["batch"])
        if self.weights_bf16 and x.is_floating_point():
            x = x.to(torch.bfloat16)
        self.host = (x, labels)
        self.resident = (x.to(device.device), labels.to(device.device)) if self.tuned else None
        self.optimizer: torch.optim.Optimizer | None = None
        if self.train:
            extra: dict[str, Any] = _fused_or_foreach(device) if self.tuned else {}
            self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=cfg["lr"], **extra)
        self.call: Any = self.model
        self.compiled = self.tuned and device.kind in TRANSFORMER_COMPILED_ON
        notes = []
        if self.tuned:
            notes.append("bf16 autocast, fp32 weights" if self.autocast else "bf16 weights" if bf16 else "fp32")
            if self.compiled:
                compile_fresh(self.model)
                self.call = torch.compile(self.model, mode="reduce-overhead")
                self.warmup_units = 3  # compilation, then the CUDA graphs are recorded: all before the clock
                notes.append("torch.compile(mode='reduce-overhead')")
            else:
                notes.append("eager (no torch.compile on this device)")
        self.notes = tuple(notes)

    def close(self) -> None:
        if self.compiled:
            torch._dynamo.reset()

    def run_unit(self) -> None:
        if self.resident is not None:
            x, labels = self.resident
        else:
            x, labels = (t.to(self.device.device) for t in self.host)
        if self.train:
            assert self.optimizer is not None
            if self.autocast:
                with torch.autocast(self.device.device.type, dtype=torch.bfloat16):
                    logits = spec.forward(self.call, x, self.tokens, self.hf)
            else:
                logits = spec.forward(self.call, x, self.tokens, self.hf)
            loss = F.cross_entropy(logits.float(), labels)
            loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()
        else:
            with torch.inference_mode() if self.tuned else torch.no_grad():
                spec.forward(self.call, x, self.tokens, self.hf)


def custom(case: Case, variant: str, device: TorchDevice) -> Program:
    return CustomProgram(case, variant, device)
