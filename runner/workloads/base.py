"""Workload specs: what is measured, independent of the framework that runs it."""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from runner import SUITE_VERSION

PROFILES = ("tiny", "quick", "standard")
VARIANTS = ("as-written", "tuned")
# how a device kind is named in prose
DEVICE_NAMES = {"cpu": "the CPU", "cuda": "CUDA", "rocm": "ROCm", "mps": "Apple's MPS"}


@dataclass(frozen=True)
class Case:
    """One point of one workload at one profile: everything needed to build and to identify it."""

    workload: str
    point: dict[str, Any]
    config: dict[str, Any]
    unit: str
    samples_per_unit: int
    params: int | None = None
    flops_per_unit: float | None = None
    # Analytic forward FLOPs of one example: what every framework's own count must match (equivalence).
    forward_flops: float | None = None

    def loop(self, variant: str) -> dict[str, Any]:
        """What the variant's loop does (config["loops"][variant]), as the loops read it."""
        return dict(self.config.get("loops", {}).get(variant, {}))

    def workload_hash(self, variant: str) -> str:
        """Hash of everything that changes the numbers: the shared configuration and this variant's loop (not
        the other variant's). Framework and device are not in it: they are what the site compares."""
        shared = {k: v for k, v in self.config.items() if k != "loops"}
        key = {"suite": SUITE_VERSION, "workload": self.workload, "variant": variant, "config": shared}
        if "loops" in self.config:
            key["loop"] = self.loop(variant)
        return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]

    def label(self) -> str:
        inner = ", ".join(f"{k}={v}" for k, v in self.point.items())
        return f"{self.workload}[{inner}]" if inner else self.workload


# The timing engine's warm-up for a tuned epoch loop (runner.measure.timing.measure's `warmup`): the same loop over its
# first WARMUP_FULL_BATCHES batches and its last one (partial where the epoch is not a multiple of the batch), so every
# shape a unit meets is compiled, autotuned and allocated before the clock, without a whole seed-sized epoch
# (60,000 MNIST images: 25 to 44 s on a 16-core CPU) spent on warming up. JAX's as-written loop (a jitted step per
# batch, no loader process) warms up the same way on a CPU; PyTorch's and TensorFlow's as-written loops warm up on
# a whole epoch, as the seeds' transcriptions do (docs/methodology/timing.md, Warm-up).
WARMUP_FULL_BATCHES = 2


def warmup_batches(n_batches: int) -> list[int]:
    """Which batches (by position in the epoch) a tuned epoch loop's warm-up runs."""
    return sorted({*range(min(WARMUP_FULL_BATCHES, n_batches)), n_batches - 1})


class PointSkipped(Exception):
    """Raised by a workload's builder for a point it will not measure in this run (the message says why): e.g.
    a streaming rate above one the pipeline did not sustain. The point is recorded as skipped."""


@dataclass(frozen=True)
class Sweep:
    """A point field whose values a workload's cases sweep upward, in order. A point whose unit, predicted from the
    last point measured with the same other fields as seconds x (value / last value) ** exponent, would outlast the
    time budget is recorded as skipped: one unit past the budget gives one sample and no interval, and costs two
    units or more (warm-up and sample). exponent 1: work in proportion to the value (a batch size); 0: the same
    work per process (data parallel, each process keeping its batch), so a step takes at least as long."""

    field: str
    exponent: float = 1.0


@dataclass(frozen=True)
class Deviation:
    """Where a loop cannot follow its seed line by line, and why (listed on the suite reference page)."""

    framework: str  # "all", or the framework whose loop departs
    what: str
    why: str


@dataclass(frozen=True)
class LeftOut:
    """Where some profiles do not measure a workload, and why (the run's plan says so): the quick profile leaves out
    a point whose seed-size unit is too long for it rather than shrink the unit (quick is a subset of standard)."""

    profiles: tuple[str, ...]
    devices: tuple[str, ...]  # device kinds (cpu, cuda, rocm, mps); empty: every device
    why: str
    variants: tuple[str, ...] = ()  # the loops left out (as-written, tuned); empty: every loop

    def loop(self) -> str:
        """The loops this leaves out ("tuned loop"), empty where it leaves out every loop."""
        return f"{' and '.join(self.variants)} loop" if self.variants else ""

    def on(self, device: str | None = None) -> str:
        """The devices this leaves out (" on the CPU", " on CUDA, ROCm"), empty where every device: `device`, the one
        kind to name; None names every kind this leaves out."""
        kinds = (device,) if device and self.devices else self.devices
        return " on " + ", ".join(DEVICE_NAMES.get(kind, kind) for kind in kinds) if kinds else ""

    def where(self, device: str | None = None) -> str:
        """What this leaves out beyond the workload, as the run's plan and `benchsite list` say it after its id:
        "'s tuned loop on CUDA", " on the CPU"; empty where it leaves out every loop on every device."""
        return (f"'s {self.loop()}" if self.variants else "") + self.on(device)


@dataclass(frozen=True)
class Workload:
    id: str
    seed: str
    title: str
    summary: str
    unit: str
    cases: Callable[[str], list[Case]]
    # framework name -> "module:function" that builds a Program; imported lazily in the child process.
    # Where the same module also has "<function>_equivalence", the workload takes part in the equivalence
    # check (runner.measure.equivalence): that function computes output, loss and gradients for copied weights.
    implementations: dict[str, str] = field(default_factory=dict)
    # framework name -> why the workload has no implementation there (shown instead of a bare 'skipped').
    unsupported: dict[str, str] = field(default_factory=dict)
    # Python modules the workload needs beyond its framework; missing ones make it 'skipped'.
    requires: tuple[str, ...] = ()
    variants: tuple[str, ...] = VARIANTS
    # Where the as-written loops depart from the seed's code, per framework.
    deviations: tuple[Deviation, ...] = ()
    # The point field the cases sweep upward, and how a unit grows along it (runner.measure.worker.SweepCeiling skips
    # the points that would outlast the time budget).
    swept: Sweep | None = None
    # (framework, variant) -> the device kinds on which that loop compiles each point (torch.compile): there the
    # run compiles the points ahead, several at a time, into the run's compile cache, and each measurement then
    # compiles from a fresh Dynamo with Inductor's work cached (runner.api.compile_ahead).
    compiled_on: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    # The point field of a ladder that climbs until the workload gives out (spark-streaming's offered rate): a
    # point that fails stops the ladder there, and the points above it are recorded as skipped, with the reason
    # (runner.measure.worker.failed_below), rather than each failing the same way.
    ladder: str | None = None
    # The profiles and devices that do not measure this workload, and why.
    left_out: tuple[LeftOut, ...] = ()

    def left_out_on(self, profile: str, device: str, variant: str | None = None) -> LeftOut | None:
        """Where `profile` does not measure this workload's `variant` loop on `device`, why; None where it does.
        Without a variant, only what leaves out every loop counts."""
        return next(
            (
                o
                for o in self.left_out
                if profile in o.profiles
                and (not o.devices or device in o.devices)
                and (not o.variants or variant in o.variants)
            ),
            None,
        )


# --- analytic FLOPs --------------------------------------------------------------------------------------
# Convention: multiply-adds count 2 FLOPs; only matrix products and convolutions are counted (elementwise
# work is negligible for these models and frameworks disagree on how to count it). A training step is
# forward + weight gradients + input gradients for every layer but the first (nothing needs dL/dx there).


def train_flops(layer_forward_flops: list[float]) -> float:
    forward = sum(layer_forward_flops)
    return forward + forward + sum(layer_forward_flops[1:])


def linear_flops(n_in: int, n_out: int) -> float:
    return 2.0 * n_in * n_out


def conv_flops(c_in: int, c_out: int, kernel: int, h_out: int, w_out: int) -> float:
    return 2.0 * c_in * kernel * kernel * c_out * h_out * w_out


def mlp_params(widths: list[int]) -> int:
    return sum(a * b + b for a, b in itertools.pairwise(widths))
