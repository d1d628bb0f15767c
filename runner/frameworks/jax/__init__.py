"""JAX: device discovery, synchronisation (`block_until_ready`), memory and the sync self-test.

The kind comes from the platform of JAX's devices: 'cpu', 'gpu'/'cuda' (NVIDIA), 'rocm' (AMD) and 'METAL'
(Apple, jax-metal). A process measuring the CPU pins JAX to the CPU platform before any backend starts, so
nothing lands on a GPU by default placement.
"""

from __future__ import annotations

import os

# Before the import: allocate GPU memory as needed instead of 75% of it at start-up.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp

from runner.measure.timing import check_engine

_KINDS = {"cpu": "cpu", "gpu": "cuda", "cuda": "cuda", "rocm": "rocm", "metal": "mps"}


@dataclass
class JaxDevice:
    kind: str
    name: str
    device: Any  # jax.Device
    sync: Callable[[], None]

    def reset_peak_memory(self) -> None:
        return None  # XLA keeps no resettable peak

    def peak_memory_mib(self) -> float | None:
        return None  # peak_bytes_in_use covers the whole process, not one measurement


def _no_sync() -> None:
    return None


def _platform_kind(device: Any) -> str:
    return _KINDS.get(device.platform.lower(), device.platform.lower())


def _accelerators() -> list[Any]:
    try:
        return [d for d in jax.devices() if d.platform != "cpu"]
    except RuntimeError:
        return []


def available_kinds() -> list[str]:
    kinds = ["cpu"]
    for device in _accelerators():
        kind = _platform_kind(device)
        if kind not in kinds:
            kinds.append(kind)
    return kinds


def use_compile_cache(folder: str) -> None:
    """Keep compiled programs in the run's compile cache (jax's persistent compilation cache, every program however
    quickly it compiled), so that a point's later rounds, each a fresh process, load what its first round compiled
    instead of compiling it again. Only compilation is cached: what is timed is the same program, and a
    measurement's warm-up is its first round's, which compiled."""
    jax.config.update("jax_compilation_cache_dir", os.path.join(folder, "jax"))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)


def make_device(kind: str, cpu_name: str = "CPU") -> JaxDevice:
    if kind == "cpu":
        jax.config.update("jax_platforms", "cpu")  # before the first computation: no GPU backend at all
        return JaxDevice("cpu", cpu_name, jax.devices("cpu")[0], _no_sync)
    matches = [d for d in _accelerators() if _platform_kind(d) == kind]
    if not matches:
        raise RuntimeError(f"device {kind!r} is not available to JAX {jax.__version__} here")
    device = matches[0]
    jax.config.update("jax_default_device", device)
    # Programs synchronise on their own state (Program.sync); this fallback waits on a fresh result.

    def wait() -> None:
        jnp.zeros(1, device=device).block_until_ready()

    return JaxDevice(kind, device.device_kind, device, wait)


def threads() -> int | None:
    return None  # XLA's CPU client sizes its own thread pool


def describe() -> dict[str, Any]:
    import jaxlib

    try:
        import optax

        optax_version: str | None = optax.__version__
    except ImportError:
        optax_version = None
    build: dict[str, Any] = {
        "jaxlib": jaxlib.__version__,
        "optax": optax_version,
        "default_backend": jax.default_backend(),
        # fp32 matrix products on NVIDIA GPUs run in TF32 unless this says 'highest'
        "matmul_precision": str(getattr(jax.config, "jax_default_matmul_precision", None) or "default"),
    }
    accelerators = []
    for device in _accelerators():
        kind = _platform_kind(device)
        vendor = {"cuda": "nvidia", "rocm": "amd", "mps": "apple"}.get(kind, "other")
        entry: dict[str, Any] = {"vendor": vendor, "model": device.device_kind, "source": "jax"}
        cc = getattr(device, "compute_capability", None)
        if cc:
            entry["compute_capability"] = str(cc)
        accelerators.append(entry)
    return {
        "name": "jax",
        "version": jax.__version__,
        "available": True,
        "build": build,
        "threads": {},
        "devices": available_kinds(),
        "accelerators": accelerators,
    }


CALLS = 8  # calls per burst: well under the GPU client's limit on computations in flight (dispatch blocks there)


def sync_selftest(device: JaxDevice, min_device_s: float = 0.05) -> dict[str, Any]:
    """A burst of CALLS jitted calls, each a chain of `length` matrix products, timed without and with
    `block_until_ready`; the chain grows until the burst keeps the device busy for min_device_s.

    One product per call would not do: a fast GPU keeps pace with Python's dispatch, and beyond a few dozen
    calls in flight dispatch itself waits. The chain is unrolled at trace time (a static length): a loop
    with a traced trip count makes XLA read the loop condition back on the host, which blocks dispatch."""
    from functools import partial

    n = 2048

    @partial(jax.jit, static_argnums=1)
    def burst(a: jax.Array, length: int) -> jax.Array:
        x = a
        for _ in range(length):
            x = (x @ a) * (1.0 / n)
        return x

    a = jax.device_put(jnp.ones((n, n), jnp.float32) / n, device.device)

    def run(length: int, wait: bool) -> float:
        burst(a, length).block_until_ready()  # compiled and idle before the clock starts
        start = time.perf_counter()
        for _ in range(CALLS):
            b = burst(a, length)
        elapsed = time.perf_counter() - start
        b.block_until_ready()
        return time.perf_counter() - start if wait else elapsed

    length = 1
    while run(length, True) < min_device_s and length < 256:
        length *= 2
    unsynced = run(length, False)
    synced = run(length, True)
    last: list[jax.Array] = [a]

    def unit() -> None:
        for _ in range(CALLS):
            last[0] = burst(a, length)

    engine_ok, engine, engine_detail = check_engine(unit, lambda: last[0].block_until_ready(), None, synced, unsynced)
    return {
        "framework": "jax",
        "device": device.kind,
        "passed": synced >= 2.0 * unsynced and engine_ok,
        "unsynced_s": unsynced,
        "synced_s": synced,
        "reference_s": None,
        "engine_s": engine,
        "detail": f"{CALLS} calls of {length} chained {n}x{n} matmuls: dispatch {unsynced * 1e3:.2f} ms, "
        f"with block_until_ready {synced * 1e3:.2f} ms; {engine_detail}",
    }
