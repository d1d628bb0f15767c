"""Shared fixtures: a real, small result file built from the product's own models."""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from runner.schema import Cpu, Machine, Measurement, OperatingSystem, ResultFile, Run, Software, Suite

TESTS = Path(__file__).parent
# The failure-isolation workloads live in tests/plugins; the measuring children import them by name.
sys.path.insert(0, str(TESTS / "plugins"))


def make_measurement(**overrides) -> Measurement:
    fields = dict(
        workload="depth-sweep",
        workload_hash="0123456789abcdef",
        point={"depth": 4},
        variant="tuned",
        framework="torch",
        device="cpu",
        device_name="AMD EPYC",
        status="ok",
        unit="epoch",
        samples_per_unit=1000,
        warmup_s=0.5,
        samples_s=[0.010, 0.011, 0.012],
        median_s=0.011,
        iqr_s=0.001,
        ci95_s=(0.010, 0.012),
        rel_ci_halfwidth=0.09,
        stable=False,
        samples_per_s=90909.0,
        params=230,
        flops_per_unit=1.2e6,
        achieved_tflops=1e-4,
    )
    fields.update(overrides)
    return Measurement(**fields)


def make_result(measurements=None, machine_id="a23074609b32f305") -> ResultFile:
    now = datetime(2026, 11, 22, 2, 0, tzinfo=timezone.utc)
    return ResultFile(
        schema_version=1,
        benchsite_version="0.1.0",
        suite=Suite(version=1, profile="tiny"),
        run=Run(id="0" * 32, started_at=now, finished_at=now, command="benchsite run", time_budget_s=1.0),
        machine=Machine(
            id=machine_id,
            cpu=Cpu(model="AMD EPYC", vendor="AuthenticAMD", arch="x86_64", logical_cpus=2),
            memory_gib=23.5,
            os=OperatingSystem(system="Linux", release="6.1"),
            system_type="cloud",
        ),
        software=Software(python="3.11.7", python_implementation="CPython"),
        measurements=measurements if measurements is not None else [make_measurement()],
    )


@pytest.fixture
def result() -> ResultFile:
    return make_result()
