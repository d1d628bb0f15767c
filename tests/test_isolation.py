"""Failure isolation: a measurement that raises, exhausts memory, is killed or hangs is recorded with its
error, and the measurements after it still run. Real child processes, real signals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from runner import api
from runner.results import storage
from tests.conftest import TESTS

PLUGIN_ENV = {
    "BENCHSITE_PLUGINS": "isolation_workloads",
    "PYTHONPATH": os.pathsep.join([str(TESTS / "plugins"), str(TESTS.parent)]),
}


@pytest.fixture
def plugins(monkeypatch):
    for key, value in PLUGIN_ENV.items():
        monkeypatch.setenv(key, value)


@pytest.mark.parametrize("fork_server", ["1", "0"], ids=["fork-server", "fresh-interpreter"])
def test_every_kind_of_failure_is_recorded_and_the_suite_goes_on(plugins, tmp_path, monkeypatch, fork_server):
    monkeypatch.setenv("BENCHSITE_FORK_SERVER", fork_server)
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


def test_a_ladder_stops_above_its_first_failed_rung(plugins, tmp_path):
    """spark-streaming climbs its rates until the pipeline gives out. A rung that fails (here: killed, or raising)
    ends its measuring process; the process that takes over is told, and the rungs above are recorded as skipped
    with the reason, rather than each failing the same way (the 2-core VM's standard run recorded five failures
    from one cause). Other ladders of the same workload go on."""
    options = api.RunOptions(
        profile="tiny", workloads=["test-ladder"], devices=["cpu"], time_budget_s=0.05, output=tmp_path / "r.yaml"
    )
    result, _ = api.execute(api.plan_run(options))
    got = [(m.point["lane"], m.point["rate"], m.status) for m in result.measurements]
    assert got == [
        ("killed", 1, "ok"),
        ("killed", 2, "failed"),
        ("killed", 4, "skipped"),
        ("raised", 1, "ok"),
        ("raised", 2, "failed"),
        ("raised", 4, "skipped"),
        ("raised", 8, "skipped"),
        ("whole", 1, "ok"),
        ("whole", 2, "ok"),
    ]
    reasons = {(m.point["lane"], m.point["rate"]): m.skip_reason for m in result.measurements if m.skip_reason}
    assert reasons[("killed", 4)] == (
        "above a rate that failed: at rate 2 the point failed (OutOfMemory), so nothing higher is tried"
    )
    assert reasons[("raised", 8)] == (
        "above a rate that failed: at rate 2 the point failed (RuntimeError), so nothing higher is tried"
    )


def _report(tmp_path: Path, name: str) -> list[dict[str, str]]:
    options = api.RunOptions(profile="tiny", workloads=["test-report"], devices=["cpu"], output=tmp_path / name)
    result, _ = api.execute(api.plan_run(options))
    assert [m.status for m in result.measurements] == ["ok"] * 4
    return [dict(note.split("=", 1) for note in m.notes) for m in result.measurements]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fork server is Linux-only")
def test_each_job_gets_a_fresh_fork_of_one_server_per_framework(plugins, tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHSITE_TEST_MARK", "first")
    first = _report(tmp_path, "a.yaml")
    # as-written and tuned are two jobs: two processes, forked from the same server (not from this process)
    assert first[0]["pid"] == first[1]["pid"] != first[2]["pid"] == first[3]["pid"]
    assert {r["ppid"] for r in first} != {str(os.getpid())} and len({r["ppid"] for r in first}) == 1
    # nothing from the earlier job is left in the next one: each process built its own cases only
    assert [r["built-before"] for r in first] == ["0", "1", "0", "1"]
    assert {r["mark"] for r in first} == {"first"}
    # the environment is read when the job starts, as a fresh process would: a change starts a new server
    monkeypatch.setenv("BENCHSITE_TEST_MARK", "second")
    second = _report(tmp_path, "b.yaml")
    assert {r["mark"] for r in second} == {"second"} and second[0]["ppid"] != first[0]["ppid"]
    # and the servers stop with the run
    left = subprocess.run(["pgrep", "-f", "runner.measure.forkserver"], capture_output=True, text=True).stdout.split()
    assert not {r["ppid"] for r in first + second} & set(left)


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


def test_only_the_frameworks_the_chosen_workloads_use_are_probed(plugins, tmp_path):
    """A PyTorch-only workload does not wait for TensorFlow's ten-second import."""
    plan = api.plan_run(api.RunOptions(profile="tiny", workloads=["test-mixed"], output=tmp_path / "r.yaml"))
    assert [f.name for f in plan.software.frameworks] == ["torch"]
    assert list(plan.devices) == ["torch"]


def _run_cli(out: Path, *extra: str) -> subprocess.Popen:
    env = {**os.environ, **PLUGIN_ENV, "PYTHONUNBUFFERED": "1"}
    argv = [sys.executable, "-m", "runner", "run", "--profile", "tiny", "-w", "test-mixed", "--device", "cpu"]
    argv += ["--time-budget", "0.05", "-o", str(out), *extra]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=TESTS.parent)


def test_kill_9_at_any_moment_leaves_no_partial_result_file(tmp_path):
    """SIGKILL the run at a spread of moments, including while it writes: the output is either absent or a
    whole, valid file; at most a hidden temporary is left, which validate and the site never read."""
    outcomes = set()
    for i, delay in enumerate([0.5, 1.5, 3.0, 4.5, 6.0, 8.0, None]):
        out = tmp_path / f"run{i}" / "r.yaml"
        proc = _run_cli(out)
        try:
            proc.wait(timeout=delay or 600)  # None: let it finish, however slow the CI machine is
        except subprocess.TimeoutExpired:
            if delay is None:
                raise
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        if out.exists():
            loaded, problems = storage.load(out)
            assert problems == [] and loaded is not None and loaded.measurements, problems
            outcomes.add("complete")
        else:
            outcomes.add("absent")
        leftovers = [p.name for p in out.parent.iterdir() if p.name != "r.yaml"] if out.parent.exists() else []
        assert all(name.startswith(".") for name in leftovers), leftovers
        if out.parent.exists():  # killed before the run checked its folder: nothing was made at all
            assert storage.iter_result_paths([out.parent]) in ([], [out])
    assert outcomes == {"absent", "complete"}  # killed before the end, and let finish


def test_a_full_or_unwritable_results_folder_is_refused_before_measuring(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(api.PlanError, match="cannot write results to"):
        api.plan_run(api.RunOptions(profile="tiny", output=blocker / "r.yaml"))
    # A full disk cannot be made here without root mounts; the free-space figure is the OS's, so stand in for it.
    import shutil
    from collections import namedtuple

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10**9, 10**9 - 2**20, 2**20))
    with pytest.raises(api.PlanError, match=r"only 1\.0 MiB free"):
        api.plan_run(api.RunOptions(profile="tiny", output=tmp_path / "ok" / "r.yaml"))


def test_results_are_kept_when_the_folder_fails_at_the_end(plugins, tmp_path):
    """The folder was fine when the run started and is gone (now a file) when it ends: the numbers go to the
    temporary folder and the run says where."""
    out_dir = tmp_path / "out"
    options = api.RunOptions(
        profile="tiny", workloads=["test-mixed"], devices=["cpu"], time_budget_s=0.05, output=out_dir / "r.yaml"
    )
    plan = api.plan_run(options)
    plan.groups = plan.groups[:1]
    out_dir.rmdir()
    out_dir.write_text("in the way")
    notes = []
    result, path = api.execute(plan, api.Progress(note=notes.append))
    assert path is not None and path.parent != out_dir and path.exists()
    loaded, problems = storage.load(path)
    assert problems == [] and loaded == result
    assert any("could not write" in n and str(path) in n for n in notes)
    path.unlink()


@pytest.mark.parametrize("existing", [True, False])
def test_output_folder_gets_machine_id_and_time_inside(plugins, tmp_path, existing):
    """--output DIR (existing, or any name without .yaml) is a folder: the file goes to DIR/<machine-id>/<time>.yaml,
    never to the temporary folder."""
    folder = tmp_path / "out"
    if existing:
        folder.mkdir()
    options = api.RunOptions(
        profile="tiny", workloads=["test-mixed"], devices=["cpu"], time_budget_s=0.05, output=folder
    )
    plan = api.plan_run(options)
    plan.groups = plan.groups[:1]
    result, path = api.execute(plan)
    assert path is not None and path.parent == folder / result.machine.id
    assert path.name == result.run.started_at.strftime("%Y%m%dT%H%M%SZ") + ".yaml"
    assert storage.load(path)[1] == []


def test_output_that_cannot_be_written_is_refused_before_measuring(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(api.PlanError, match="cannot write results to"):
        api.plan_run(api.RunOptions(profile="tiny", output=blocker / "sub"))  # a folder inside a file
    with pytest.raises(api.PlanError, match="cannot write results to"):
        api.plan_run(api.RunOptions(profile="tiny", output=blocker / "sub" / "r.yaml"))


def _python_prints_ok(script: str) -> None:
    """Run a script in a fresh interpreter from the repository's root; it asserts what it checks and prints ok."""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=TESTS.parent)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fork server is Linux-only")
def test_the_fork_server_preloads_lazy_imports_without_threads_or_devices():
    """What a framework lists in PRELOAD is imported before the fork: it must start no thread (a fork keeps only
    the forking one) and initialise no device (each child initialises its own); a module that is missing is
    left to the child and does not stop the server."""
    script = (
        "import sys, threading, types; from runner.measure import forkserver\n"
        "import runner.frameworks.torch as fw; import torch\n"
        "extra = types.SimpleNamespace(PRELOAD=('no_such_module_here',))\n"
        "failed = forkserver.preload_lazy([fw, extra])\n"
        "assert failed == ['no_such_module_here'], failed\n"
        "assert set(fw.PRELOAD) <= set(sys.modules), fw.PRELOAD\n"
        "assert threading.active_count() == 1, threading.enumerate()\n"
        "assert not torch.cuda.is_initialized()\n"
        "print('ok')\n"
    )
    _python_prints_ok(script)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fork server is Linux-only")
@pytest.mark.parametrize("framework", ["torch", "tensorflow", "jax"])
def test_a_fork_server_forks_beside_no_thread_that_is_not_safe_across_fork(framework, tmp_path, monkeypatch):
    """Importing a framework starts native threads: NumPy's and SciPy's OpenBLAS pools (one thread per core but
    one, each), jemalloc's purger with TensorFlow. The OpenBLAS pools stop themselves at a fork, so the server forks
    once before its first job and then sees only what outlives a fork, as every job's fork meets it: here nothing
    but fork-aware threads, which it reports to the run's phase log. Without that fork the pools are still there
    when it looks, and this fails for all three frameworks."""
    from runner.frameworks import FRAMEWORKS
    from runner.measure import executor, forkserver

    pytest.importorskip(framework)
    pytest.importorskip(FRAMEWORKS[framework])
    log = tmp_path / "phases.jsonl"
    monkeypatch.setenv("BENCHSITE_PHASE_LOG", str(log))
    # the suite's own workloads: another test may have registered plugin workloads this process alone can import
    modules = [name for name in executor._preload(framework) if name.startswith("runner.")]
    zygote = forkserver.Zygote(modules)
    try:
        assert zygote.wait_ready(300), "the fork server did not start"
        tasks = Path(f"/proc/{zygote.pid}/task")
        others = [(task / "comm").read_text().strip() for task in tasks.iterdir() if int(task.name) != zygote.pid]
        assert set(others) <= forkserver.FORK_AWARE_THREADS, others
    finally:
        zygote.close()
    # what the server reports of its threads is logged where a run's time is (tests/benchmarks/suite_time.py)
    assert [json.loads(line) for line in log.read_text().splitlines()] == [{"fork_server": modules, "threads_left": []}]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fork server is Linux-only")
def test_a_thread_not_known_to_be_safe_across_fork_keeps_pythons_warning():
    """settle_threads() reports a thread it does not know (here a Python thread blocked on an event, which a fork
    does not stop), so the server then forks with Python's warning left on; and the filter it uses where all is
    known matches the warning's text."""
    script = (
        "import re, threading; from runner.measure import forkserver\n"
        "stop = threading.Event(); threading.Thread(target=stop.wait, daemon=True).start()\n"
        "left = forkserver.settle_threads()\n"
        "assert len(left) == 1, left\n"
        "stop.set()\n"
        "text = 'This process (pid=4242) is multi-threaded, use of fork() may lead to deadlocks in the child.'\n"
        "assert re.match(forkserver.FORK_WARNING, text)\n"
        "print('ok')\n"
    )
    _python_prints_ok(script)


def test_a_measurement_frees_its_program_reference_cycles_included(tmp_path):
    """The measuring child freezes its heap before each build and never unfreezes it (a full collection costs 0.1
    to 0.2 s a measurement): what the program built, reference cycles included, must still be freed when the
    measurement ends, or a sweep's models would pile up in memory. (Frozen, the cycle would never be freed: with
    the freeze moved after the build, this fails.)"""
    script = """
import io, sys, weakref
sys.path.insert(0, sys.argv[1])
import isolation_workloads
from runner.measure import worker
from runner.workloads import get

class Payload:
    pass

alive = []

def build(case, variant, device):
    program = isolation_workloads.Program("ok")
    program.payload = Payload()
    program.payload.owner = program  # a reference cycle: only the cyclic collector frees it
    alive.append(weakref.ref(program.payload))
    return program

isolation_workloads.build = build
device = worker._framework("torch").make_device("cpu", "CPU")
job = {"workload": "test-mixed", "variant": "as-written", "framework": "torch", "budget_s": 0.05}
for case in get("test-mixed").cases("tiny")[:1] * 3:
    worker.measure_case(job, case, device, io.StringIO(), 0)
    assert alive[-1]() is None, "the program outlived its measurement"
print("ok")
"""
    done = subprocess.run(
        [sys.executable, "-c", script, str(TESTS / "plugins")],
        capture_output=True,
        text=True,
        cwd=TESTS.parent,
        env={**os.environ, **PLUGIN_ENV},
    )
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-3000:]
