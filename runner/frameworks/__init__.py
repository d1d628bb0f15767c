"""Frameworks: one package per framework owning device discovery, synchronisation and its workloads.

Framework modules are imported only inside the measuring child processes (runner.measure.worker), never by the
CLI itself, so a framework that is missing or crashes on import cannot take the suite down. A framework that runs
the Spark workloads adds `predict.py` (runner.engines.spark.predict says what it provides).
"""

from __future__ import annotations

# name -> module implementing describe(), make_device(kind, name), sync_selftest(device) and threads()
FRAMEWORKS: dict[str, str] = {
    "torch": "runner.frameworks.torch",
    "tensorflow": "runner.frameworks.tensorflow",
    "jax": "runner.frameworks.jax",
}
# The framework every other one is proven equivalent to (runner.measure.equivalence).
REFERENCE = "torch"
# What the user may write for --framework; aliases map to the canonical names above.
ALIASES = {"pytorch": "torch", "tf": "tensorflow", "keras": "tensorflow"}
DEVICE_KINDS = ("cpu", "cuda", "rocm", "mps")


def canonical_framework(name: str) -> str:
    name = ALIASES.get(name.lower(), name.lower())
    if name not in FRAMEWORKS:
        raise ValueError(f"unknown framework {name!r}; valid frameworks: {', '.join(FRAMEWORKS)}")
    return name
