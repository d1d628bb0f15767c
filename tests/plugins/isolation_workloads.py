"""Workloads that fail on purpose, to prove that a failing measurement is recorded and the suite goes on.

Loaded only by the tests, through BENCHSITE_PLUGINS (the measuring children import it by name).
"""

from __future__ import annotations

import os
import signal
import time

from runner.workloads import Case, Workload, register

MODULE = "isolation_workloads:build"


class Program:
    precision = "fp32"
    params = 1

    def __init__(self, behaviour: str):
        self.behaviour = behaviour

    def run_unit(self) -> None:
        if self.behaviour == "raise":
            raise RuntimeError("boom: the model diverged")
        if self.behaviour == "memory":
            bytearray(1 << 46)  # 64 TiB: the allocation fails with MemoryError
        if self.behaviour == "oom-kill":
            os.kill(os.getpid(), signal.SIGKILL)  # what the kernel's OOM killer does
        if self.behaviour == "hang":
            time.sleep(3600)
        time.sleep(0.002)

    def close(self) -> None:
        pass

    def top_ops(self):
        return []


# What a measuring process built before: a process that served an earlier job would still hold it.
BUILT: list[str] = []


def build(case: Case, variant: str, device: object) -> Program:
    program = Program(case.config["behaviour"])
    if case.config["behaviour"] == "report":  # where and in what state this measuring process runs
        program.notes = [
            f"pid={os.getpid()}",
            f"ppid={os.getppid()}",
            f"built-before={len(BUILT)}",
            f"mark={os.environ.get('BENCHSITE_TEST_MARK', '-')}",
        ]
    BUILT.append(variant)
    if case.config["behaviour"] == "invalid":
        program.precision = "fp99"  # not a precision the result format knows
    return program


def _cases(name: str, behaviours: list[str]):
    def cases(profile: str) -> list[Case]:
        return [Case(name, {"behaviour": b}, {"behaviour": b}, "step", 1) for b in behaviours]

    return cases


for name, behaviours in {
    "test-mixed": ["ok", "oom-kill", "ok", "raise", "ok"],
    "test-raise": ["raise"],
    "test-memory": ["memory"],
    "test-hang": ["hang"],
    "test-invalid": ["invalid"],
}.items():
    register(
        Workload(
            name,
            "t",
            name,
            "fails on purpose",
            "step",
            _cases(name, behaviours),
            {"torch": MODULE},
            variants=("as-written",),
        )
    )

register(
    Workload(
        "test-report",
        "t",
        "reports its process",
        "says where it ran",
        "step",
        _cases("test-report", ["report", "report"]),
        {"torch": MODULE},
        variants=("as-written", "tuned"),
    )
)

register(
    Workload(
        "test-needs-missing",
        "t",
        "needs a module that is not installed",
        "skipped on purpose",
        "step",
        _cases("test-needs-missing", ["ok"]),
        {"torch": MODULE},
        requires=("benchsite_no_such_module",),
        variants=("as-written",),
    )
)


def _ladder_cases(profile: str) -> list[Case]:
    """Three ladders climbing `rate`: one whose second rung is killed, one whose second rung raises, one that
    never fails."""
    rungs = {
        "killed": ["ok", "oom-kill", "ok"],
        "raised": ["ok", "raise", "ok", "ok"],
        "whole": ["ok", "ok"],
    }
    return [
        Case("test-ladder", {"lane": lane, "rate": 2**k}, {"behaviour": b}, "step", 1)
        for lane, behaviours in rungs.items()
        for k, b in enumerate(behaviours)
    ]


register(
    Workload(
        "test-ladder",
        "t",
        "a ladder that fails part way",
        "stops above a failed rung",
        "step",
        _ladder_cases,
        {"torch": MODULE},
        variants=("as-written",),
        ladder="rate",
    )
)
