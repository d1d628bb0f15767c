"""Spare interpreters (runner.measure.spares): started ahead in batches, they run a measuring job or a seed's
script exactly as a freshly started interpreter does; nothing runs while they wait; unused ones are killed."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from runner import api, fidelity
from runner.measure import executor, spares
from tests.conftest import cpu_torch_plan

# A script that reports how it was run: what `python script.py` gives it and a spare must give it too.
PROBE = """
import json, os, sys
import torch
print("a line before the figure")
print(json.dumps({
    "name": __name__,
    "file": os.path.basename(__file__),
    "argv": sys.argv[1:],
    "argv0": os.path.basename(sys.argv[0]),
    "cwd": os.getcwd(),
    "path0": sys.path[0],
    "main_file": os.path.basename(getattr(sys.modules["__main__"], "__file__", "")),
    "threads": torch.get_num_threads(),
    "gc_frozen": __import__("gc").get_freeze_count(),
}))
"""


def _threads(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    raise AssertionError("no thread count")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_a_spare_imports_ahead_and_then_runs_nothing_until_its_work_comes():
    pool = spares.Pool(spares.script_argv("torch"), limit=2, expected=2)
    try:
        spare = pool.take()
        assert spare.ready and "torch" in spare.proc.args[-1]
        time.sleep(0.5)
        # the threads a fresh interpreter has right after `import torch`, no more: PyTorch's intra-op and OpenMP
        # pools start at the first parallel operator, and nothing ran one
        count = "import torch, pathlib; print(len(list(pathlib.Path('/proc/self/task').iterdir())))"
        fresh = subprocess.run(
            [sys.executable, "-c", count],
            capture_output=True,
            text=True,
            check=True,
        )
        assert _threads(spare.proc.pid) == int(fresh.stdout)
        assert spare.proc.poll() is None
    finally:
        spare.close()
        pool.close()
    assert spare.proc.poll() is not None


def test_a_script_runs_in_a_spare_as_python_script_py_runs_it(tmp_path):
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    work = tmp_path / "work"
    work.mkdir()
    fresh = subprocess.run(
        [sys.executable, str(script), "--epochs", "3"], cwd=work, capture_output=True, text=True, check=True
    )
    pool = spares.Pool(spares.script_argv("torch"), limit=1)
    spare = pool.take()
    code, out = spares.run_script(spare, [str(script), "--epochs", "3"], work, timeout_s=120)
    spare.close()
    assert code == 0
    assert out.splitlines()[0] == "a line before the figure"  # the ready line is not part of the script's output
    assert json.loads(out.splitlines()[-1]) == json.loads(fresh.stdout.splitlines()[-1])


def test_a_failing_script_in_a_spare_reports_its_exit_code_and_error():
    pool = spares.Pool(spares.script_argv(fidelity.SCRIPT_MODULE), limit=1)
    with pytest.raises(fidelity.ScriptFailed, match=r"exited with code 2: .*invalid int value: 'x'"):
        fidelity.run_script(fidelity.Twin("001", ("--depth", "x")), "cpu", 1, 120, pool.take())


def test_the_shipped_script_gives_its_figure_through_a_spare():
    twin = fidelity.Twin("001", ("--depth", "2", "--n", "200"))
    pool = spares.Pool(spares.script_argv(fidelity.SCRIPT_MODULE), limit=1)
    per_unit = fidelity.run_script(twin, "cpu", 3, 120, pool.take())
    assert 0 < per_unit < 5


def test_a_pool_starts_what_is_wanted_a_batch_at_a_time_and_kills_the_rest():
    batches: list[int] = []
    pool = spares.Pool(spares.worker_argv("torch"), limit=2, started=batches.append, expected=3)
    first = pool.take()  # 3 expected, 2 at most at once
    second = pool.take()  # the batch's other one: nothing started
    assert batches == [2]
    left = pool._ready[:]
    third = pool.take()  # the last one expected: a batch of 1
    assert batches == [2, 1] and not left and pool.expected == 0
    pool.expected = 5  # an upper bound that was too low is raised, as a caller would
    fourth = pool.take()  # a batch of 2, one taken and one left over
    assert batches == [2, 1, 2]
    leftover = pool._ready[0]
    pool.close()
    assert leftover.proc.wait(timeout=10) != 0  # killed
    for spare in (first, second, third, fourth):
        spare.close()


def test_a_spare_worker_measures_a_job_and_one_nobody_used_ends_by_itself():
    pool = spares.Pool(spares.worker_argv("torch"), limit=2, expected=2)
    used, unused = pool.take(), pool.take()
    events: list[dict] = []
    failure = executor.run_child({"kind": "describe", "framework": "torch"}, events.append, 60, spare=used)
    assert failure is None and events[0]["event"] == "describe" and events[0]["info"]["version"]
    assert unused.proc.stdin is not None
    unused.proc.stdin.close()  # what happens to a spare whose parent went away
    assert unused.proc.wait(timeout=30) == 0
    unused.close()


@pytest.mark.parametrize("setting", ["1", "0"])
def test_as_written_points_and_their_twins_run_in_spares_unless_switched_off(tmp_path, monkeypatch, setting):
    """The tiny depth sweep with twins: every point and every round in a process of its own, both ways."""
    monkeypatch.setenv(api.SPARES_ENV, setting)
    log = tmp_path / "phases.jsonl"
    monkeypatch.setenv("BENCHSITE_PHASE_LOG", str(log))
    taken: list[str] = []
    real_take = spares.Pool.take

    def take(self):
        taken.append("script" if "-c" in self.argv else "worker")
        return real_take(self)

    monkeypatch.setattr(spares.Pool, "take", take)
    plan = cpu_torch_plan(tmp_path, ["depth-sweep"], ["as-written"], 0.05, fidelity=True)
    (group,) = plan.groups
    got = api.measure_group(plan, group, api.Progress())
    assert [m.status for m in got] == ["ok", "ok"], [m.error for m in got]
    twinned = [m for m in got if m.fidelity is not None]
    assert twinned and all(m.fidelity.rounds >= 2 for m in twinned)
    entries = [json.loads(line) for line in log.read_text().splitlines() if "steady_s" in line]
    assert all(e["seed_process"] and e["frozen"] == 0 for e in entries)
    assert len({e["pid"] for e in entries}) == len(entries)  # a fresh process for every point and round
    if setting == "0":
        assert taken == []
    else:
        assert taken.count("script") == sum(m.fidelity.rounds for m in twinned)
        assert taken.count("worker") == len(entries)  # one worker spare per measuring process
