"""Spare interpreters (runner.measure.spares): started ahead in batches, they run a measuring job or a seed's
script exactly as a freshly started interpreter does; nothing runs while they wait; unused ones are killed."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from runner import api, fidelity
from runner.api.pools import SPARES_ENV, GroupSpares
from runner.measure import executor, protocol, spares
from runner.workloads import get as get_workload
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
    pool = spares.Pool(spares.script_argv(*fidelity.SCRIPT_IMPORTS), limit=2, expected=2)
    try:
        spare = pool.take()
        assert spare.ready and spare.proc.args[-2:] == ["torch", "torch._dynamo"]
        time.sleep(0.5)
        # the threads a fresh interpreter has right after the same imports, no more: PyTorch's intra-op and OpenMP
        # pools start at the first parallel operator, and nothing ran one
        count = "import torch, torch._dynamo, pathlib; print(len(list(pathlib.Path('/proc/self/task').iterdir())))"
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
    pool = spares.Pool(spares.script_argv(*fidelity.SCRIPT_IMPORTS), limit=1)
    with pytest.raises(fidelity.ScriptFailed, match=r"exited with code 2: .*invalid int value: 'x'"):
        fidelity.run_script(fidelity.Twin("001", ("--depth", "x")), "cpu", 1, 120, pool.take())


def test_the_shipped_script_gives_its_figure_through_a_spare():
    twin = fidelity.Twin("001", ("--depth", "2", "--n", "200"))
    pool = spares.Pool(spares.script_argv(*fidelity.SCRIPT_IMPORTS), limit=1)
    per_unit = fidelity.run_script(twin, "cpu", 3, 120, pool.take())
    assert 0 < per_unit < 5


def test_a_batch_is_one_spare_per_core_and_per_2_gib_unless_set(monkeypatch):
    monkeypatch.delenv(spares.BATCH_ENV, raising=False)
    assert spares.batch_limit(cpus=16, memory_bytes=128 * 2**30) == 16
    assert spares.batch_limit(cpus=16, memory_bytes=6 * 2**30) == 3  # memory is the tighter bound
    assert spares.batch_limit(cpus=2, memory_bytes=24 * 2**30) == 2
    assert spares.batch_limit(cpus=1, memory_bytes=2**30) == 1  # at least one
    monkeypatch.setenv(spares.BATCH_ENV, "16")
    assert spares.batch_limit(cpus=2, memory_bytes=2**30) == 16
    for bad in ("0", "-2", "many"):
        monkeypatch.setenv(spares.BATCH_ENV, bad)
        with pytest.raises(ValueError, match=spares.BATCH_ENV):
            spares.batch_limit()


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


def test_a_batch_tops_up_the_partner_pool_within_the_same_limit(tmp_path, monkeypatch):
    log = tmp_path / "phases.jsonl"
    monkeypatch.setenv("BENCHSITE_PHASE_LOG", str(log))
    workers = spares.Pool(spares.worker_argv("torch"), limit=3, expected=2)
    scripts = spares.Pool(spares.script_argv("torch"), limit=3, expected=4)
    workers.partners, scripts.partners = [scripts], [workers]
    taken = [workers.take()]  # one batch: the 2 workers expected, and 1 script (the limit's room)
    assert len(workers._ready) == 1 and len(scripts._ready) == 1
    taken.append(scripts.take())  # the partner's ready one: nothing started
    taken.append(scripts.take())  # none left: 3 scripts still expected, and the workers have one ready
    assert len(scripts._ready) == 2 and len(workers._ready) == 1
    batches = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(b["spares"], b["count"]) for b in batches] == [("worker+script", 3), ("script", 3)]
    for spare in taken:
        spare.close()
    workers.close()
    scripts.close()


def test_a_batch_tops_up_a_partner_to_what_it_still_expects_beyond_its_ready_ones(tmp_path, monkeypatch):
    log = tmp_path / "phases.jsonl"
    monkeypatch.setenv("BENCHSITE_PHASE_LOG", str(log))
    idle = f"import sys; print({protocol.SPARE_READY!r}, flush=True); sys.stdin.readline()"
    workers = spares.Pool([sys.executable, "-c", idle, "--spare"], limit=4, expected=5)
    scripts = spares.Pool([sys.executable, "-c", idle], limit=4, expected=2)
    workers.partners, scripts.partners = [scripts], [workers]
    taken = [workers.take()]  # 4 workers of the 5 expected: no room left for scripts
    taken.append(scripts.take())  # 2 scripts, and the fifth worker, which would otherwise need a batch of its own
    taken += [workers.take() for _ in range(4)]
    batches = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(b["spares"], b["count"]) for b in batches] == [("worker", 4), ("script+worker", 3)]
    assert not workers._ready and len(scripts._ready) == 1
    for spare in taken:
        spare.close()
    scripts.close()


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
    monkeypatch.setenv(SPARES_ENV, setting)
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


# Runs a shipped script as `python script.py ARGS` does, and at the script's first reading of its timer (a call to
# time.perf_counter or time.time from the script's own code) prints which of the modules named were not imported yet.
AT_TIMER = """
import json, os, runpy, sys, time
script, names, args = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3:]

def at_timer(real):
    def read():
        if os.path.abspath(sys._getframe(1).f_code.co_filename) == os.path.abspath(script):
            print(json.dumps({"missing": [n for n in names if n not in sys.modules]}), flush=True)
            os._exit(0)
        return real()
    return read

time.perf_counter, time.time = at_timer(time.perf_counter), at_timer(time.time)
sys.argv = [script, *args]
sys.path[0] = os.path.dirname(script)
runpy.run_path(script, run_name="__main__")
print(json.dumps({"missing": "the script never read its timer"}))
"""

SMALL_ARGS = {
    "000": ["--n", "100", "--epochs", "1"],
    "001": ["--depth", "2", "--n", "200", "--epochs", "1"],
    "002": ["--n", "200", "--batch", "100", "--epochs", "1"],
    "003": ["--batch", "1", "--steps", "1"],
    "004": ["--n", "200", "--epochs", "1"],
}


@pytest.mark.parametrize("seed", sorted(SMALL_ARGS))
def test_what_a_script_spare_imports_ahead_the_script_has_imported_when_its_timer_starts(seed, tmp_path):
    """A spare imports Twin.imports ahead of the script: only modules the script loads before timing anyway, so that
    the loop starts with the same modules loaded as under `python script.py`."""
    twin = fidelity.Twin(seed, ())
    assert twin.imports[0] == "torch" and "torch._dynamo" in twin.imports
    done = subprocess.run(
        [sys.executable, "-c", AT_TIMER, str(twin.path), json.dumps(list(twin.imports)), *SMALL_ARGS[seed]],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.splitlines()[-1]) == {"missing": []}


BUILD_ONE_POINT = """
import json, sys
from runner.measure import protocol, worker
from runner.workloads import get
name, index = sys.argv[1], int(sys.argv[2])
framework = worker._framework("torch")
device = framework.make_device("cpu", "CPU")
workload = get(name)
case = workload.cases("tiny")[index]
worker.import_builder(workload.implementations["torch"])(case, "as-written", device)
print(json.dumps([n for n in protocol.seed_imports(name, case.config) if n not in sys.modules]))
"""

SEED_POINTS = [
    (workload, index)
    for workload in sorted(protocol.SEED_PROCESS_WORKLOADS)
    for index in range(len(get_workload(workload).cases("tiny")))
]


@pytest.mark.parametrize(("workload", "index"), SEED_POINTS)
def test_what_a_worker_spare_imports_ahead_each_point_has_imported_when_built(workload, index):
    """A spare worker imports runner.measure.protocol.seed_imports ahead (a transformer point's model family's module
    among them): the build of every as-written point (the tiny profile's, infer and train alike, every model family),
    each in a fresh interpreter, imports them before its timed loop anyway."""
    done = subprocess.run(
        [sys.executable, "-c", BUILD_ONE_POINT, workload, str(index)], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.splitlines()[-1]) == []


def test_each_point_takes_a_spare_that_imported_its_own_model_family_and_no_other(tmp_path, monkeypatch):
    """The tiny transformer sweep (BERT, ViT and ConvNeXt points): one pool of measuring processes per family, each
    sized to its points, all started beside one another, and measure_group hands each point a spare of its own
    family's pool."""
    plan = cpu_torch_plan(tmp_path, ["transformer"], ["as-written"], 0.05)
    (group,) = plan.groups
    family = {i: case.config["model"]["family"] for i, case in zip(group.indices, group.cases, strict=True)}
    assert sorted(set(family.values())) == ["bert", "convnext", "vit"]
    pools = GroupSpares(plan, group, {"seed_process": True}, list(group.indices))
    for index in group.indices:
        argv = pools.worker_pool(index).argv
        assert argv[-1] == protocol.TRANSFORMER_MODULES[family[index]]
        assert not set(argv) & (set(protocol.TRANSFORMER_MODULES.values()) - {argv[-1]})
    assert sorted(p.expected for p in pools.workers.values()) == sorted(Counter(family.values()).values())
    every = [pools.scripts, *pools.workers.values()]
    assert all({id(q) for q in p.partners} == {id(q) for q in every if q is not p} for p in every)

    taken: list[str] = []

    def take(self):
        taken.append(self.argv[-1])
        return None  # no spare: the executor would start a fresh interpreter

    def run_cases(job, indices, timeout_s, on_event, take_spare=None):
        assert take_spare is not None and len(indices) == 1
        take_spare()
        return {}  # nothing measured: only which spare each point asked for matters here

    monkeypatch.setattr(spares.Pool, "take", take)
    monkeypatch.setattr(executor, "run_cases", run_cases)
    api.measure_group(plan, group, api.Progress())
    assert taken == [protocol.TRANSFORMER_MODULES[family[i]] for i in group.indices]


def test_a_run_starts_the_spares_of_a_paired_sets_rounds_together(tmp_path, monkeypatch):
    """A run's seed-process points take their spares from one pool for all their rounds (GroupSpares.for_set): the
    tabular point's three rounds and three twin scripts start in one batch, not in a batch of two each round."""
    monkeypatch.setenv(spares.BATCH_ENV, "6")
    monkeypatch.delenv(SPARES_ENV, raising=False)
    log = tmp_path / "phases.jsonl"
    monkeypatch.setenv("BENCHSITE_PHASE_LOG", str(log))
    plan = cpu_torch_plan(tmp_path, ["tabular-mlp"], ["as-written"], 0.05, fidelity=True, rounds=3)
    result, _ = api.execute(plan)
    (m,) = result.measurements
    assert m.status == "ok" and len(m.rounds) == 3 and m.fidelity is not None and m.fidelity.rounds == 3
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    batches = [e for e in entries if "spares" in e]
    assert [b["count"] for b in batches] == [6], batches
    assert len({e["pid"] for e in entries if "steady_s" in e}) == 3  # still a fresh process a round


def test_a_shared_pool_expects_only_the_points_still_due(tmp_path):
    """A paired set's pool (GroupSpares.for_set) counts what it will still serve from each use's due points: once a
    point stops (failed, skipped, or measured before a resume), later batches start no interpreter for it."""
    plan = cpu_torch_plan(tmp_path, ["depth-sweep"], ["as-written"], 0.05, rounds=3)
    (group,) = plan.groups
    pools = GroupSpares.for_set(plan, [group])
    assert pools is not None
    try:
        indices = list(group.indices)
        assert sum(p.expected for p in pools.workers.values()) == len(indices) * 3
        pools.expect(group, indices)  # the first round: every point, three uses
        assert sum(p.expected for p in pools.workers.values()) == len(indices) * 3
        pools.expect(group, indices[:1])  # the second: one point left, two uses
        assert sum(p.expected for p in pools.workers.values()) == 2
    finally:
        pools.close()
