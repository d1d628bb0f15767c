"""The workload registry: select workloads by id or glob pattern, as timm's `list_models('vit_*')`."""

from __future__ import annotations

import fnmatch
import importlib
import os

from runner.workloads import custom
from runner.workloads.base import PROFILES, VARIANTS, Case, Workload
from runner.workloads.suite import WORKLOADS

__all__ = ["PROFILES", "VARIANTS", "Case", "Workload", "all_workloads", "get", "register", "select"]

_REGISTRY: dict[str, Workload] = {}
# Extra workload modules to import, comma-separated (each calls register()). Used for third-party
# workloads and by the tests' failure-isolation workloads; the child processes inherit it.
PLUGINS_ENV = "BENCHSITE_PLUGINS"
_plugins_loaded: set[str] = set()


def register(workload: Workload) -> Workload:
    if workload.id in _REGISTRY and _REGISTRY[workload.id] is not workload:
        raise ValueError(f"workload {workload.id!r} is already registered")
    _REGISTRY[workload.id] = workload
    return workload


def _load() -> None:
    if not _REGISTRY:
        for workload in WORKLOADS:
            register(workload)
        if os.environ.get(custom.ENV):  # `benchsite run --model`: the user's model, in every process of the run
            register(custom.workload())
    for module in filter(None, (m.strip() for m in os.environ.get(PLUGINS_ENV, "").split(","))):
        if module not in _plugins_loaded:
            _plugins_loaded.add(module)
            importlib.import_module(module)


def register_custom() -> None:
    """The custom workload of BENCHSITE_CUSTOM_MODEL, registered where the registry was filled before it was set
    (a resumed --model run sets it after reading its journal)."""
    if _REGISTRY and custom.WORKLOAD not in _REGISTRY and os.environ.get(custom.ENV):
        register(custom.workload())


def all_workloads() -> list[Workload]:
    _load()
    return list(_REGISTRY.values())


def get(workload_id: str) -> Workload:
    _load()
    try:
        return _REGISTRY[workload_id]
    except KeyError:
        raise KeyError(f"unknown workload {workload_id!r}; valid: {', '.join(_REGISTRY)}") from None


def select(patterns: list[str] | None) -> list[Workload]:
    """Workloads whose id matches any of the patterns (fnmatch globs), in registry order.

    Raises ValueError naming the valid ids when a pattern matches nothing.
    """
    workloads = all_workloads()
    if not patterns:
        return workloads
    chosen: list[Workload] = []
    for pattern in patterns:
        matched = [w for w in workloads if fnmatch.fnmatchcase(w.id, pattern)]
        if not matched:
            valid = ", ".join(w.id for w in workloads)
            raise ValueError(f"no workload matches {pattern!r}; valid workloads: {valid}")
        chosen.extend(w for w in matched if w not in chosen)
    return [w for w in workloads if w in chosen]
