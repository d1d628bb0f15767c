"""Failure isolation: a measurement that raises, exhausts memory, is killed or hangs is recorded with its
error, and the measurements after it still run. Real child processes, real signals."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from runner import api, storage
from tests.conftest import TESTS

PLUGIN_ENV = {
    "BENCHSITE_PLUGINS": "isolation_workloads",
    "PYTHONPATH": os.pathsep.join([str(TESTS / "plugins"), str(TESTS.parent)]),
}


@pytest.fixture
def plugins(monkeypatch):
    for key, value in PLUGIN_ENV.items():
        monkeypatch.setenv(key, value)


def test_every_kind_of_failure_is_recorded_and_the_suite_goes_on(plugins, tmp_path):
    options = api.RunOptions(
        profile="tiny",
        workloads=["test-raise", "test-memory", "test-hang", "test-mixed", "test-invalid"],
        devices=["cpu"],
        timeout_s=4,
        time_budget_s=0.05,
        output=tmp_path / "r.yaml",
    )
    plan = api.plan_run(options)
    result, path = api.execute(plan)
    by_point = [
        (m.workload, m.point["behaviour"], m.status, m.error.type if m.error else None) for m in result.measurements
    ]
    assert by_point == [
        ("test-mixed", "ok", "ok", None),
        ("test-mixed", "oom-kill", "failed", "OutOfMemory"),
        ("test-mixed", "ok", "ok", None),
        ("test-mixed", "raise", "failed", "RuntimeError"),
        ("test-mixed", "ok", "ok", None),
        ("test-raise", "raise", "failed", "RuntimeError"),
        ("test-memory", "memory", "failed", "OutOfMemory"),
        ("test-hang", "hang", "failed", "Timeout"),
        ("test-invalid", "invalid", "failed", "InvalidMeasurement"),
    ]
    raised = result.measurements[5].error
    assert "boom: the model diverged" in raised.message and "run_unit" in (raised.traceback or "")
    assert "SIGKILL" in result.measurements[1].error.message
    loaded, problems = storage.load(path)
    assert problems == [] and loaded == result


def test_ctrl_c_keeps_finished_measurements(tmp_path):
    out = tmp_path / "r.yaml"
    env = {**os.environ, **PLUGIN_ENV, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "runner",
            "run",
            "--profile",
            "tiny",
            "-w",
            "test-mixed",
            "-w",
            "test-hang",
            "--device",
            "cpu",
            "--time-budget",
            "0.05",
            "--timeout",
            "600",
            "-o",
            str(out),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        cwd=TESTS.parent,
    )
    assert proc.stdout is not None
    lines = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        lines.append(line)
        if "behaviour=ok" in line and "per step" in line and sum("per step" in x for x in lines) >= 3:
            break  # test-mixed finished; test-hang is now hanging
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    rest, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130, "".join(lines) + rest
    result, problems = storage.load(out)
    assert problems == [] and result is not None
    assert result.run.interrupted
    assert [m.point["behaviour"] for m in result.measurements] == ["ok", "oom-kill", "ok", "raise", "ok"]
    assert "interrupted" in rest.lower()


def test_unwritable_results_dir_fails_before_measuring(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(api.PlanError, match="cannot write results"):
        api.plan_run(api.RunOptions(profile="tiny", results_dir=Path(blocker) / "results"))


def test_missing_optional_dependency_is_recorded_as_skipped(plugins, tmp_path):
    plan = api.plan_run(
        api.RunOptions(profile="tiny", workloads=["test-needs-missing"], devices=["cpu"], output=tmp_path / "r.yaml")
    )
    result, path = api.execute(plan)
    (m,) = result.measurements
    assert m.status == "skipped" and "benchsite_no_such_module" in (m.skip_reason or "")
    assert path is not None and storage.load(path)[1] == []
