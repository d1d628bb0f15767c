"""Nothing lost when the run itself dies: the journal, `benchsite run --resume`, and kill -9 at random moments."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from runner.measure import journal
from runner.results import storage
from tests.conftest import ROOT, make_measurement

RUN = [
    sys.executable,
    "-m",
    "runner",
    "run",
    "--profile",
    "tiny",
    "--framework",
    "torch",
    "--device",
    "cpu",
    "--workload",
    "depth-sweep",
    "--workload",
    "tabular-mlp",
    "--time-budget",
    "0.5",  # six measurements of at least 0.5 s each: a kill 0 to 0.6 s after one finished always lands mid-run
    "--no-profiler",
]


def test_a_journal_keeps_every_whole_record_and_drops_a_line_cut_short(tmp_path):
    started = datetime(2026, 11, 23, 1, 2, 3, tzinfo=timezone.utc)
    log = journal.Journal.create(tmp_path, "a" * 32, started, "0123456789abcdef", {"profile": "tiny"})
    first, second = make_measurement(), make_measurement(point={"depth": 2})
    log.phase("selftests", [])
    log.measurement("torch/cpu/depth-sweep/tuned", 0, first)
    log.measurement("torch/cpu/depth-sweep/tuned", 1, second)
    log.close()
    with open(log.path, "ab") as handle:  # the kill came in the middle of the next record
        handle.write(b'{"kind":"measurement","group":"torch/cpu/depth-sweep/tuned","index":2,"da')
    recovered = journal.read(log.path)
    assert (recovered.run_id, recovered.started_at, recovered.selftests) == ("a" * 32, started, [])
    assert recovered.peaks is None and recovered.equivalence is None  # never reached: measured on resume
    assert recovered.measurements == {"torch/cpu/depth-sweep/tuned": {0: first, 1: second}}
    again = journal.Journal.reopen(recovered)  # appending after the cut line starts a line of its own
    again.measurement("torch/cpu/depth-sweep/tuned", 2, first)
    again.close()
    assert sorted(journal.read(log.path).measurements["torch/cpu/depth-sweep/tuned"]) == [0, 1, 2]


def test_something_else_is_not_taken_for_a_journal(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"kind": "measurement"}\n')
    with pytest.raises(ValueError, match="not a benchsite run journal"):
        journal.read(path)


def _journaled(folder: Path) -> tuple[str, dict[tuple[str, int], list[float]]]:
    [path] = folder.glob("*.jsonl")
    recovered = journal.read(path)
    return recovered.run_id, {
        (key, index): m.samples_s for key, done in recovered.measurements.items() for index, m in done.items()
    }


def _start(results: Path, log, *extra: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [*RUN, "--results-dir", str(results), *extra],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log,
        start_new_session=True,
    )


def _kill_at_random(results: Path, folder: Path, rng: random.Random) -> None:
    """Start (or resume) the run and kill -9 its whole process group at a random moment after it journaled a
    new measurement."""
    resume = any(folder.glob("*.jsonl"))
    before = len(_journaled(folder)[1]) if resume else 0
    with (results.parent / "stderr.log").open("ab") as log:
        process = _start(results, log, *(["--resume"] if resume else []))
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and process.poll() is None:
            if any(folder.glob("*.jsonl")) and len(_journaled(folder)[1]) > before:
                break
            time.sleep(0.05)
        assert process.poll() is None, (results.parent / "stderr.log").read_text()
        time.sleep(rng.uniform(0.0, 0.6))
        assert process.poll() is None, "the run ended before the kill: nothing left to test"
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def test_kill_9_at_random_moments_then_resume_keeps_every_finished_measurement(tmp_path):
    results = tmp_path / "results"
    folder = journal.journal_dir(results)
    rng = random.Random(12)
    seen: dict[tuple[str, int], list[float]] = {}
    run_ids = set()
    for _ in range(2):
        _kill_at_random(results, folder, rng)
        run_id, finished = _journaled(folder)
        run_ids.add(run_id)
        for key, samples in seen.items():  # nothing journaled is ever lost or measured again: a resumed point's
            assert finished[key][: len(samples)] == samples  # later rounds only add their samples after its own
        seen.update(finished)
    assert seen and len(run_ids) == 1
    done = subprocess.run([*RUN, "--results-dir", str(results), "--resume"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    [path] = results.rglob("*.yaml")
    result, problems = storage.load(path)
    assert result is not None and not [p for p in problems if p.severity == "error"], problems
    assert result.run.id == run_ids.pop() and not result.run.interrupted
    assert path.name == storage.file_name(result)  # named after the first start, as the run's journal says
    final: dict[str, list[tuple[float, ...]]] = {}
    for m in result.measurements:
        final.setdefault(f"{m.framework}/{m.device}/{m.workload}/{m.variant}", []).append(tuple(m.samples_s))
    for (key, _), samples in seen.items():  # each journaled measurement is the start of one in the file
        assert any(kept[: len(samples)] == tuple(samples) for kept in final[key]), key
    assert not list(folder.glob("*.jsonl")), "the journal is removed once the file is written"
    assert not [p for p in results.rglob("*") if p.is_file() and p.suffix != ".yaml"]


def test_resume_without_an_interrupted_run_says_so(tmp_path):
    done = subprocess.run(
        [*RUN, "--results-dir", str(tmp_path / "results"), "--resume"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 2 and "no interrupted run to resume" in done.stderr
