"""A seed's loop is measured as its script runs: one point per freshly started interpreter, its heap left to the
interpreter's own collector; the tuned loops keep the fork server and the frozen heap."""

from __future__ import annotations

import json

import pytest

from runner import api
from runner.measure import executor, forkserver, protocol
from tests.conftest import cpu_torch_plan


def _phases(tmp_path, monkeypatch, variants):
    log = tmp_path / "phases.jsonl"
    monkeypatch.setenv("BENCHSITE_PHASE_LOG", str(log))
    plan = cpu_torch_plan(tmp_path, ["depth-sweep"], variants, 0.05)
    for group in plan.groups:
        got = api.measure_group(plan, group, api.Progress())
        assert all(m.status == "ok" for m in got), [m.error for m in got]
    return [json.loads(line) for line in log.read_text().splitlines() if "steady_s" in line]


def test_as_written_torch_points_each_run_in_a_fresh_unfrozen_interpreter(tmp_path, monkeypatch):
    entries = _phases(tmp_path, monkeypatch, ["as-written"])
    assert len(entries) == 2 * 3  # the tiny depth sweep: depths 2 and 3, three rounds each
    assert all(e["seed_process"] and e["frozen"] == 0 for e in entries), entries
    assert len({e["pid"] for e in entries}) == 2 * 3  # a process per point and round
    # its standard streams as the script has them: the events on stdout itself, nothing redirected
    assert not any(e["stdout_redirected"] for e in entries), entries


@pytest.mark.skipif(not forkserver.SUPPORTED, reason="the fork server is Linux-only")
def test_tuned_points_share_a_forked_child_with_a_frozen_heap(tmp_path, monkeypatch):
    monkeypatch.delenv("BENCHSITE_FORK_SERVER", raising=False)
    entries = _phases(tmp_path, monkeypatch, ["tuned"])
    assert len(entries) == 2 * 3
    assert all(not e["seed_process"] and e["frozen"] > 0 for e in entries), entries
    assert len({e["pid"] for e in entries}) == 3  # one forked child a round
    assert all(e["stdout_redirected"] for e in entries), entries  # stray prints kept off the protocol


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('{"event": "start", "index": 0}\n', {"event": "start", "index": 0}),
        # a library's print without its newline, with the event run on after it
        ('epoch 3 done{"event": "result", "index": 1}\n', {"event": "result", "index": 1}),
        ("loss 0.25\n", None),
        ("\n", None),
        ('{"event": "start", "ind\n', None),  # cut short: skipped, never a crash
        ('{"loss": 0.25}\n', None),  # JSON, but not an event
    ],
)
def test_the_parent_finds_events_among_a_seed_loops_prints(line, expected):
    assert executor.parse_event(line) == expected


@pytest.mark.parametrize(
    ("job", "expected"),
    [
        ({"kind": "measure", "variant": "as-written", "framework": "torch", "workload": "tabular-mlp"}, True),
        ({"kind": "measure", "variant": "as-written", "framework": "torch", "workload": "transformer"}, True),
        ({"kind": "measure", "variant": "tuned", "framework": "torch", "workload": "tabular-mlp"}, False),
        ({"kind": "measure", "variant": "as-written", "framework": "jax", "workload": "tabular-mlp"}, False),
        ({"kind": "compile", "variant": "as-written", "framework": "torch", "workload": "tabular-mlp"}, False),
        ({"kind": "measure", "variant": "as-written", "framework": "torch", "workload": "spark-inference"}, False),
        ({"kind": "measure", "variant": "as-written", "framework": "torch", "workload": "transformer-ddp"}, False),
    ],
)
def test_which_jobs_run_as_a_seed_script(job, expected):
    assert protocol.seed_process(job) is expected


@pytest.mark.parametrize("seed_process", [True, False])
def test_a_seed_process_ends_without_the_interpreters_teardown_and_its_events_arrive(tmp_path, seed_process):
    """A fresh interpreter that measured a seed's loop ends as a forked child does (runner.measure.worker.end: the
    streams flushed, then os._exit: no atexit handler, no unloading of PyTorch); any other job ends as a script."""
    import subprocess
    import sys

    probe = (
        "import atexit, sys\n"
        "from runner.measure import worker\n"
        "atexit.register(lambda: print('teardown', flush=True))\n"
        f"worker._ending['fast'] = {seed_process}\n"
        "sys.stdout.write('event\\n')  # not flushed: end flushes it\n"
        "worker.end(3)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 3, done.stderr
    assert done.stdout.splitlines() == (["event"] if seed_process else ["event", "teardown"])


@pytest.mark.parametrize("seed_process", [True, False])
def test_the_worker_ends_fast_only_after_a_seed_process_job(seed_process):
    """runner.measure.worker.main marks a job's process for the fast end (end) only where the job is a seed's loop,
    whatever way the job ended (here an unknown kind, reported as an error event)."""
    import subprocess
    import sys

    job = json.dumps({"kind": "nothing", "framework": "torch", "device": "cpu", "seed_process": seed_process})
    probe = "from runner.measure import worker\nworker.main()\nprint('fast', worker._ending['fast'])\n"
    done = subprocess.run([sys.executable, "-c", probe], input=job, capture_output=True, text=True, timeout=300)
    assert '"event": "error"' in done.stdout and "unknown job kind" in done.stdout, done.stdout + done.stderr
    # any other job's stray prints go to stderr (runner.measure.worker._protocol)
    assert f"fast {seed_process}" in (done.stdout + done.stderr).splitlines()
