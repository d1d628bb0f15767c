"""PyTorch: device discovery, synchronisation, memory and the sync self-test.

The device kind (cpu, cuda, rocm, mps) is decided once at discovery from what the build reports
(`torch.version.hip` marks a ROCm build behind the cuda API), and synchronisation is looked up by kind.
Nothing ever matches substrings of a device string.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from runner.measure import protocol
from runner.measure.timing import check_engine

GIB = 1024**3
# Imported once by the fork server (runner.measure.forkserver.preload_lazy), not in every measuring child: torch._dynamo
# is imported by the first optimiser a loop builds, the model classes by the transformer workloads.
PRELOAD = (*protocol.SEED_IMPORTS, *protocol.TRANSFORMER_MODULES.values())


def compile_ahead_setup(threads: int) -> None:
    """In a compile-ahead child (runner.api.compile_ahead), one of several side by side: Inductor's pool of
    kernel-compiling processes sized to this child's share of the CPU, and no autotuning result kept. Those
    children's kernel timings disturb each other, so a configuration they chose could be the wrong one; each
    measuring process autotunes its kernels alone, as it does without a compile-ahead pass (neither setting is
    part of Inductor's cache key)."""
    import torch._inductor.config

    torch._inductor.config.compile_threads = max(1, threads)
    torch._inductor.config.autotune_local_cache = False


def _no_sync() -> None:
    return None


class EventTimer:
    """Timestamps in the device's queue: CUDA/HIP events recorded on the current stream, where every
    workload enqueues its work (CUDA graphs replay there too). The timing engine reads them after a sync."""

    def mark(self) -> torch.cuda.Event:
        event = torch.cuda.Event(enable_timing=True)
        event.record()
        return event

    def elapsed(self, start: torch.cuda.Event, end: torch.cuda.Event) -> float:
        return start.elapsed_time(end) / 1e3


@dataclass
class TorchDevice:
    kind: str  # cpu | cuda | rocm | mps
    name: str
    device: torch.device
    sync: Callable[[], None]
    bf16: bool
    graphs: bool  # CUDA/HIP graphs available
    timer: EventTimer | None = None  # device timestamps for the timing engine (CUDA/HIP)

    def reset_peak_memory(self) -> None:
        if self.kind in ("cuda", "rocm"):
            torch.cuda.reset_peak_memory_stats(self.device)

    def peak_memory_mib(self) -> float | None:
        if self.kind in ("cuda", "rocm"):
            return torch.cuda.max_memory_allocated(self.device) / 2**20
        if self.kind == "mps":
            return torch.mps.driver_allocated_memory() / 2**20
        return None


def _cpu_bf16() -> bool:
    """Native bf16 matrix kernels on this CPU (AVX512-BF16/AMX on x86, BF16 on Arm), per oneDNN."""
    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


def available_kinds() -> list[str]:
    kinds = ["cpu"]
    if torch.cuda.is_available():
        kinds.append("rocm" if torch.version.hip else "cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        kinds.append("mps")
    return kinds


_SYNC: dict[str, Callable[[torch.device], Callable[[], None]]] = {
    "cpu": lambda dev: _no_sync,
    "cuda": lambda dev: lambda: torch.cuda.synchronize(dev),
    "rocm": lambda dev: lambda: torch.cuda.synchronize(dev),
    "mps": lambda dev: torch.mps.synchronize,
}


def make_device(kind: str, cpu_name: str = "CPU") -> TorchDevice:
    if kind not in available_kinds():
        raise RuntimeError(f"device {kind!r} is not available to PyTorch {torch.__version__} here")
    if kind == "cpu":
        dev = torch.device("cpu")
        return TorchDevice(kind, cpu_name, dev, _SYNC[kind](dev), _cpu_bf16(), graphs=False)
    if kind in ("cuda", "rocm"):
        dev = torch.device("cuda", 0)
        torch.cuda.set_device(dev)
        name = torch.cuda.get_device_name(dev)
        return TorchDevice(kind, name, dev, _SYNC[kind](dev), torch.cuda.is_bf16_supported(), True, EventTimer())
    dev = torch.device("mps")
    return TorchDevice(kind, "Apple GPU (MPS)", dev, _SYNC[kind](dev), bf16=False, graphs=False)


def threads() -> int | None:
    return torch.get_num_threads()


def _blas() -> str | None:
    match = re.search(r"BLAS_INFO=(\w+)", torch.__config__.show())
    return match.group(1) if match else None


def describe() -> dict[str, Any]:
    """Framework facts for the result file, and the accelerators PyTorch sees."""
    build: dict[str, Any] = {
        "cuda": torch.version.cuda,
        "hip": torch.version.hip,
        "cudnn": str(torch.backends.cudnn.version()) if torch.backends.cudnn.is_available() else None,
        "mps_built": bool(getattr(torch.backends, "mps", None) and torch.backends.mps.is_built()),
        "blas": _blas(),
        "mkldnn": torch.backends.mkldnn.is_available(),
        "debug": bool(torch.version.debug),
    }
    accelerators = []
    if torch.cuda.is_available():
        for index in range(torch.cuda.device_count()):
            props = torch.cuda.get_device_properties(index)
            entry: dict[str, Any] = {
                "vendor": "amd" if torch.version.hip else "nvidia",
                "model": props.name,
                "memory_gib": round(props.total_memory / GIB, 2),
                "source": "torch",
            }
            if torch.version.hip:
                entry["gfx_target"] = getattr(props, "gcnArchName", None)
                entry["rocm_version"] = torch.version.hip
            else:
                entry["compute_capability"] = f"{props.major}.{props.minor}"
            accelerators.append(entry)
    if "mps" in available_kinds():
        accelerators.append({"vendor": "apple", "model": "Apple GPU (MPS)", "source": "torch"})
    return {
        "name": "torch",
        "version": torch.__version__,
        "available": True,
        "build": build,
        "threads": {"intra_op": torch.get_num_threads(), "inter_op": torch.get_num_interop_threads()},
        "devices": available_kinds(),
        "accelerators": accelerators,
    }


def sync_selftest(device: TorchDevice, min_device_s: float = 0.05) -> dict[str, Any]:
    """Time an asynchronous burst of matrix products without and with the harness's sync.

    Passes when the synchronised time covers the device-side time (CUDA/HIP events) and clearly exceeds
    the enqueue-only time: proof that `device.sync` really waits for the kernels.
    """
    n = 2048
    a = torch.randn(n, n, device=device.device)
    b = a @ a
    device.sync()
    reps = 1
    while True:  # grow the burst until the device is busy for min_device_s
        start = time.perf_counter()
        for _ in range(reps):
            b = a @ a
        device.sync()
        if time.perf_counter() - start >= min_device_s or reps >= 4096:
            break
        reps *= 2
    start = time.perf_counter()
    for _ in range(reps):
        b = a @ a
    unsynced = time.perf_counter() - start
    device.sync()

    reference = None
    if device.kind in ("cuda", "rocm"):
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start = time.perf_counter()
    if device.kind in ("cuda", "rocm"):
        begin.record()
    for _ in range(reps):
        b = a @ a
    if device.kind in ("cuda", "rocm"):
        end.record()
    device.sync()
    synced = time.perf_counter() - start
    if device.kind in ("cuda", "rocm"):
        reference = begin.elapsed_time(end) / 1000.0
    del b

    covers = reference is None or synced >= 0.9 * reference
    waits = synced >= 2.0 * unsynced

    def burst() -> None:
        for _ in range(reps):
            torch.mm(a, a)

    # The engine itself, timed as a measurement is (device events where the device has them).
    engine_ok, engine, engine_detail = check_engine(burst, device.sync, device.timer, synced, unsynced)
    passed = covers and waits and engine_ok
    detail = f"{reps} x {n}x{n} matmuls: enqueue {unsynced * 1e3:.2f} ms, with sync {synced * 1e3:.2f} ms" + (
        f", device events {reference * 1e3:.2f} ms" if reference is not None else ""
    )
    return {
        "framework": "torch",
        "device": device.kind,
        "passed": passed,
        "unsynced_s": unsynced,
        "synced_s": synced,
        "reference_s": reference,
        "engine_s": engine,
        "detail": f"{detail}; {engine_detail}",
    }


# Side of the square product that measures a device's peak: large enough to saturate a data-centre GPU's tensor
# cores (8192: 1.1 TFLOP a product, about 1.4 ms on an H100 in bf16), small enough for a laptop CPU.
PEAK_N = {"cpu": 1024, "mps": 4096}
PEAK_N_DEFAULT = 8192


def measure_peaks(device: TorchDevice, budget_s: float = 1.0) -> list[dict[str, Any]]:
    """Matrix-product throughput of this device, timed by the same engine as the measurements: fp32 (full
    precision: PyTorch leaves TF32 off for matrix products) and bf16 where the device has it."""
    n = PEAK_N.get(device.kind, PEAK_N_DEFAULT)
    dtypes = [("fp32", torch.float32)] + ([("bf16", torch.bfloat16)] if device.bf16 else [])
    peaks = []
    for label, dtype in dtypes:
        median = _time_product(device, n, dtype, budget_s)
        peaks.append(
            {
                "framework": "torch",
                "device": device.kind,
                "device_name": device.name,
                "dtype": label,
                "n": n,
                "median_s": median,
                "tflops": 2.0 * n**3 / median / 1e12,
            }
        )
    return peaks


def _time_product(device: TorchDevice, n: int, dtype: torch.dtype, budget_s: float) -> float:
    from runner.measure.timing import measure
    from runner.results.intervals import summarize

    gen = torch.Generator(device=device.device).manual_seed(0)
    a = torch.randn(n, n, dtype=dtype, device=device.device, generator=gen)
    b = torch.randn(n, n, dtype=dtype, device=device.device, generator=gen)
    out = torch.empty(n, n, dtype=dtype, device=device.device)
    timing = measure(lambda: torch.mm(a, b, out=out), device.sync, budget_s=budget_s, timer=device.timer)
    return summarize(timing.samples_s).median_s
