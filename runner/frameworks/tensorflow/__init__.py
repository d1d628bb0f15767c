"""TensorFlow (Keras 3 on the TensorFlow backend): device discovery, synchronisation, memory, self-test.

TensorFlow names every accelerator 'GPU'; the kind comes from the build and the platform: a ROCm build
(tensorflow-rocm) is 'rocm', a CUDA build 'cuda', and on macOS the GPU that tensorflow-metal registers is
'mps'. Each measuring process measures one device, so the others are hidden before TensorFlow starts.
TensorFlow has no device-wide synchronise: the harness waits by reading a value back to the host, which
returns only after every operation queued before it has run.
"""

from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # before the import: keep C++ start-up chatter out

import platform
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import tensorflow as tf

from runner.measure.timing import check_engine


@dataclass
class TFDevice:
    kind: str  # cpu | cuda | rocm | mps
    name: str
    logical: str  # '/CPU:0' or '/GPU:0'
    sync: Callable[[], None]

    def reset_peak_memory(self) -> None:
        if self.kind in ("cuda", "rocm"):
            tf.config.experimental.reset_memory_stats(self.logical.strip("/"))

    def peak_memory_mib(self) -> float | None:
        if self.kind in ("cuda", "rocm"):
            return float(tf.config.experimental.get_memory_info(self.logical.strip("/"))["peak"]) / 2**20
        return None


def _gpu_kind() -> str:
    info = tf.sysconfig.get_build_info()
    if info.get("is_rocm_build"):
        return "rocm"
    if platform.system() == "Darwin":
        return "mps"  # tensorflow-metal
    return "cuda"


def available_kinds() -> list[str]:
    kinds = ["cpu"]
    if tf.config.list_physical_devices("GPU"):
        kinds.append(_gpu_kind())
    return kinds


def _gpu_name(gpu: Any) -> str:
    try:
        details = tf.config.experimental.get_device_details(gpu)
    except (RuntimeError, ValueError):
        details = {}
    return str(details.get("device_name") or "GPU")


def _no_sync() -> None:
    return None


def read_back(value: Any) -> None:
    """Wait for `value` (and everything queued before it) by copying one element to the host."""
    tf.reshape(value, [-1])[:1].numpy()


def make_device(kind: str, cpu_name: str = "CPU") -> TFDevice:
    gpus = tf.config.list_physical_devices("GPU")
    if kind == "cpu":
        if gpus:
            tf.config.set_visible_devices([], "GPU")  # this process measures the CPU alone
        return TFDevice("cpu", cpu_name, "/CPU:0", _no_sync)
    if not gpus or kind != _gpu_kind():
        raise RuntimeError(f"device {kind!r} is not available to TensorFlow {tf.__version__} here")
    tf.config.set_visible_devices(gpus[:1], "GPU")
    tf.config.experimental.set_memory_growth(gpus[0], True)  # take memory as needed, not all of it at start
    # Programs synchronise through what they computed (Program.sync); this fallback waits on a fresh op.
    return TFDevice(kind, _gpu_name(gpus[0]), "/GPU:0", lambda: read_back(tf.zeros([1])))


def threads() -> int | None:
    return tf.config.threading.get_intra_op_parallelism_threads() or None


def describe() -> dict[str, Any]:
    import keras

    info = tf.sysconfig.get_build_info()
    build: dict[str, Any] = {
        "keras": keras.__version__,
        "keras_backend": keras.config.backend(),
        "cuda": info.get("cuda_version"),
        "cudnn": info.get("cudnn_version"),
        "rocm": info.get("rocm_version") if info.get("is_rocm_build") else None,
        "onednn": os.environ.get("TF_ENABLE_ONEDNN_OPTS", "default"),
        "tf32": bool(tf.config.experimental.tensor_float_32_execution_enabled()),
    }
    accelerators = []
    gpus = tf.config.list_physical_devices("GPU")
    if gpus:
        vendor = {"cuda": "nvidia", "rocm": "amd", "mps": "apple"}[_gpu_kind()]
        accelerators = [{"vendor": vendor, "model": _gpu_name(g), "source": "tensorflow"} for g in gpus]
    return {
        "name": "tensorflow",
        "version": tf.__version__,
        "available": True,
        "build": build,
        "threads": {
            "intra_op": tf.config.threading.get_intra_op_parallelism_threads(),
            "inter_op": tf.config.threading.get_inter_op_parallelism_threads(),
        },
        "devices": available_kinds(),
        "accelerators": accelerators,
    }


CHAIN = 16  # matrix products per call: device time must dwarf the cost of dispatching one call from Python


def sync_selftest(device: TFDevice, min_device_s: float = 0.05) -> dict[str, Any]:
    """A burst of calls, each a chain of CHAIN matrix products in one tf.function, timed without and with
    reading the last result back; passes when the read-back clearly waits for the device (TensorFlow has no
    device events to compare with)."""
    n = 2048

    @tf.function
    def chain(a: Any) -> Any:
        x = a
        for _ in range(CHAIN):
            x = tf.matmul(x, a) * (1.0 / n)
        return x

    with tf.device(device.logical):
        a = tf.ones([n, n]) / n
        b = chain(a)
        read_back(b)
        reps = 1
        while True:
            start = time.perf_counter()
            for _ in range(reps):
                b = chain(a)
            read_back(b)
            if time.perf_counter() - start >= min_device_s or reps >= 4096:
                break
            reps *= 2
        start = time.perf_counter()
        for _ in range(reps):
            b = chain(a)
        unsynced = time.perf_counter() - start
        read_back(b)
        start = time.perf_counter()
        for _ in range(reps):
            b = chain(a)
        read_back(b)
        synced = time.perf_counter() - start
        last = [b]

        def unit() -> None:
            for _ in range(reps):
                last[0] = chain(a)

        engine_ok, engine, engine_detail = check_engine(unit, lambda: read_back(last[0]), None, synced, unsynced)
    passed = synced >= 2.0 * unsynced and engine_ok
    return {
        "framework": "tensorflow",
        "device": device.kind,
        "passed": passed,
        "unsynced_s": unsynced,
        "synced_s": synced,
        "reference_s": None,
        "engine_s": engine,
        "detail": f"{reps} calls of {CHAIN} chained {n}x{n} matmuls: enqueue {unsynced * 1e3:.2f} ms, "
        f"with read-back {synced * 1e3:.2f} ms; {engine_detail}",
    }
