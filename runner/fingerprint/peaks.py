"""Peak FLOP/s per device: the ceiling a measurement's achieved FLOP/s must stay under to be believed.

Numbers are dense (no sparsity) vendor peaks at boost clock, in TFLOP/s, for the precisions the suite
records: `fp32` (with TF32 tensor cores counted where the GPU has them, since TensorFlow and JAX use them
for fp32 by default) and `bf16`/`fp16` (tensor or matrix cores). They are ceilings, not expectations: the
check only catches the impossible (a missing synchronisation, a wrong FLOP count, an edited file).

GPUs come from a maintained table (add a row when a new model contributes). CPUs use the ceiling cores x
clock x FLOPs per cycle from the fingerprint's ISA flags, with the clock taken as at least 4.5 GHz because
virtual machines often report the base clock; Apple silicon adds its matrix coprocessor.
"""

from __future__ import annotations

import re

from runner.results.schema import Cpu

# Normalised model name fragment -> {precision: TFLOP/s}. Longest matching fragment wins.
GPU_PEAK_TFLOPS: dict[str, dict[str, float]] = {
    # NVIDIA data centre (SXM figures: the PCIe cards are lower, so these stay ceilings for both)
    "H200": {"fp32": 495.0, "bf16": 989.0, "fp16": 989.0},
    "H100": {"fp32": 495.0, "bf16": 989.0, "fp16": 989.0},
    "GH200": {"fp32": 495.0, "bf16": 989.0, "fp16": 989.0},
    "B200": {"fp32": 1100.0, "bf16": 2250.0, "fp16": 2250.0},
    "A100": {"fp32": 156.0, "bf16": 312.0, "fp16": 312.0},
    "A10G": {"fp32": 70.0, "bf16": 140.0, "fp16": 140.0},
    "A10": {"fp32": 62.5, "bf16": 125.0, "fp16": 125.0},
    "L40S": {"fp32": 183.0, "bf16": 366.0, "fp16": 366.0},
    "L4": {"fp32": 60.0, "bf16": 121.0, "fp16": 121.0},
    "V100": {"fp32": 15.7, "bf16": 125.0, "fp16": 125.0},
    "T4": {"fp32": 8.1, "bf16": 65.0, "fp16": 65.0},
    # NVIDIA GeForce / workstation
    "RTX 4090": {"fp32": 82.6, "bf16": 165.2, "fp16": 165.2},
    "RTX 4080": {"fp32": 48.7, "bf16": 97.5, "fp16": 97.5},
    "RTX 3090": {"fp32": 35.6, "bf16": 71.0, "fp16": 71.0},
    "RTX 3080": {"fp32": 29.8, "bf16": 59.5, "fp16": 59.5},
    "RTX A6000": {"fp32": 38.7, "bf16": 154.8, "fp16": 154.8},
    "RTX 6000 ADA": {"fp32": 91.1, "bf16": 364.2, "fp16": 364.2},
    # AMD
    "MI300X": {"fp32": 163.4, "bf16": 1307.4, "fp16": 1307.4},
    "MI250X": {"fp32": 95.7, "bf16": 383.0, "fp16": 383.0},
    "MI250": {"fp32": 90.5, "bf16": 362.1, "fp16": 362.1},
    "RX 7900 XTX": {"fp32": 61.4, "bf16": 122.8, "fp16": 122.8},
    "RX 6800M": {"fp32": 11.8, "bf16": 23.6, "fp16": 23.6},
}

GHZ_FLOOR = 4.5
APPLE_AMX_TFLOPS = 4.0  # Apple silicon's matrix coprocessor behind Accelerate, generously


def _normalise(model: str) -> str:
    return re.sub(r"\s+", " ", model.upper().replace("NVIDIA", "").replace("AMD", "").replace("RADEON", "")).strip()


def gpu_peak_tflops(model: str, precision: str) -> float | None:
    """The ceiling for this accelerator model and precision, or None when the model is not in the table."""
    name = _normalise(model)
    matches = [key for key in GPU_PEAK_TFLOPS if key in name]
    if not matches:
        return None
    return GPU_PEAK_TFLOPS[max(matches, key=len)].get(precision)


def cpu_flops_per_cycle(isa: list[str], precision: str, arch: str) -> int:
    """FLOPs per cycle per core at the widest vector or matrix unit the ISA flags show (2 FMA pipes)."""
    flags = set(isa)
    if precision in ("bf16", "fp16"):
        if "amx_bf16" in flags:
            return 2048  # AMX: 1024 bf16 multiply-adds per cycle per core
        if "avx512_bf16" in flags or "avx512_fp16" in flags:
            return 128
    if "avx512f" in flags:
        return 64
    if "avx2" in flags or "fma" in flags:
        return 32
    if "sve" in flags:
        return 64
    return 32 if arch in ("aarch64", "arm64") else 16


def cpu_peak_tflops(cpu: Cpu, precision: str) -> float:
    cores = max(cpu.logical_cpus, cpu.physical_cores or 0)
    ghz = max((cpu.max_mhz or 0) / 1000.0, GHZ_FLOOR)
    peak = cores * ghz * cpu_flops_per_cycle(cpu.isa, precision, cpu.arch) / 1000.0
    if cpu.vendor == "Apple" or cpu.model.startswith("Apple"):
        peak += APPLE_AMX_TFLOPS
    return peak
