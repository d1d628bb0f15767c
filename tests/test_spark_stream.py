"""spark-streaming on real Spark: the query is killed mid-stream (SIGKILL of its whole driver process, Spark's JVM
included) and restarted from its checkpoint while the producer goes on, and every produced id is then in the
committed output exactly once, with the prediction the suite's model gives without Spark; a measured step's
record; and the ladder skipping the rates above one that was not sustained. Needs Java 17+ (CI has it)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

from runner.engines.spark import master as spark_master
from runner.workloads import get
from runner.workloads.base import PointSkipped

ROOT = Path(__file__).resolve().parents[1]

if spark_master.java_version() is None:
    pytest.skip("no Java runtime: Spark cannot start", allow_module_level=True)


def _query_process(folder: Path, log: Path) -> subprocess.Popen:
    """A driver running the streaming query over `folder` until killed (a session of its own: the kill takes
    its JVM and Python workers too)."""
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    argv = [sys.executable, "-m", "runner.engines.spark.streaming", str(folder), "vit-tiny"]
    argv += ["--master", "local[2]", "--batch", "8"]
    with open(log, "ab") as out:
        return subprocess.Popen(argv, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def _starts(log: Path) -> int:
    """How many query processes have printed their "started" line into the shared log."""
    return sum(line.strip() == "started" for line in log.read_text(errors="replace").splitlines())


def _expected(pool: np.ndarray) -> list[int]:
    import torch

    from runner.engines.spark.predict import MODEL_SEED, input_shape
    from runner.frameworks.torch.workloads import build_transformer
    from runner.workloads.suite import MODELS

    cfg = MODELS["vit-tiny"]
    torch.manual_seed(MODEL_SEED)
    model = build_transformer(cfg).eval()
    with torch.no_grad():
        x = torch.from_numpy(pool).reshape(len(pool), *input_shape(cfg))
        return model(pixel_values=x).logits.argmax(-1).tolist()


def test_a_killed_query_restarts_from_its_checkpoint_and_loses_or_repeats_nothing(tmp_path):
    from runner.engines.spark.inference import synthetic_rows
    from runner.engines.spark.streaming import Producer, StreamDirs, committed, exactly_once, wait_for
    from runner.workloads.suite import MODELS

    dirs = StreamDirs(tmp_path / "stream")
    pool = synthetic_rows(MODELS["vit-tiny"], 6)
    producer = Producer(dirs, pool, interval_s=0.25)
    stop = threading.Event()  # the producer writes 4 files a second, 6 rows each, until stopped
    log = tmp_path / "query.log"
    first = _query_process(dirs.root, log)
    try:
        deadline = time.time() + 240
        while _starts(log) < 1:  # the query runs: produce from now on
            assert first.poll() is None, log.read_text()[-3000:]
            assert time.time() < deadline, "the query did not start: " + log.read_text()[-3000:]
            time.sleep(0.1)
        thread = threading.Thread(target=producer.run, args=(4_000,), kwargs={"stop": stop})
        thread.start()
        # kill once a few micro-batches are committed and the producer is still going
        deadline = time.time() + 240
        while len(committed(dirs.output).batches) < 3:
            assert first.poll() is None, log.read_text()[-3000:]
            assert time.time() < deadline, "the first query committed nothing: " + log.read_text()[-3000:]
            time.sleep(0.05)
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=60)
        at_kill = committed(dirs.output).batches
        produced_at_kill = len(producer.produced_at)
        second = _query_process(dirs.root, log)
        try:
            # files keep arriving while no query runs and after the restart, then the producer stops
            deadline = time.time() + 240
            while _starts(log) < 2:
                assert second.poll() is None, log.read_text()[-3000:]
                assert time.time() < deadline, "the restarted query did not start: " + log.read_text()[-3000:]
                time.sleep(0.1)
            time.sleep(3)
            stop.set()
            thread.join(timeout=60)
            files = len(producer.produced_at)
            assert files > produced_at_kill + 8, "the producer stopped with the query: not mid-stream"
            _, complete = wait_for(dirs.output, producer.ids(files), 300)
            assert complete, log.read_text()[-3000:]
        finally:
            os.killpg(second.pid, signal.SIGKILL)
            second.wait(timeout=60)
    finally:
        stop.set()
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
    state = committed(dirs.output)
    assert set(at_kill) <= set(state.batches)  # what was committed before the kill stays, under the same batch
    rows = state.rows()
    assert exactly_once(rows["id"], producer.ids(files)) == (0, 0)
    assert len(rows["id"]) == files * len(pool)
    # the same model as without Spark: row j of every file is pool row j
    expected = _expected(pool)
    assert [int(p) for p in rows["prediction"]] == [expected[int(i) % len(pool)] for i in rows["id"]]
    # the killed batch left files Spark never committed; a reader of the sink does not see them
    written = {p.name for p in dirs.output.glob("part-*.parquet")}
    listed = {p.name for _, files_ in state.batches.values() for p in files_}
    assert listed <= written


def test_a_step_measures_every_file_and_checks_exactly_once(monkeypatch):
    from runner.engines.spark.streaming import SparkStreaming
    from runner.frameworks.torch import make_device
    from runner.frameworks.torch.predict import make_predict_fn
    from runner.results.streaming import figures

    monkeypatch.setenv("PYSPARK_PYTHON", sys.executable)
    case = get("spark-streaming").cases("tiny")[0]
    program = SparkStreaming(case, make_device("cpu"), make_predict_fn, master="local[2]")
    try:
        seen = []
        out = program.stream(on_file=lambda n, elapsed: seen.append(n))
    finally:
        program.close()
    record, latencies = out["stream"], out["latencies_s"]
    assert record["files"] == len(latencies) == len(record["produced_s"]) == case.config["seconds"] / 0.2
    assert seen[-1] == record["files"]
    assert all(lat > 0 for lat in latencies) and record["micro_batches"] >= 1
    found = figures(record["produced_s"], latencies, record["interval_s"], case.samples_per_unit)
    assert record["p99_s"] == found.p99_s and record["bounded"] == found.bounded
    assert "master local[2]" in program.notes[0] and "parquet sink with checkpoint" in program.notes[0]
    assert not program.dirs.root.exists()  # the step's folders go with it


def test_the_ladder_skips_rates_above_one_not_sustained(monkeypatch):
    from runner.engines.spark import streaming as spark_stream
    from runner.frameworks.torch import make_device
    from runner.frameworks.torch.predict import make_predict_fn

    low, high = get("spark-streaming").cases("tiny")
    monkeypatch.setitem(spark_stream._LADDER_STOPPED, ("vit-tiny", "cpu"), (20.0, "above the sustained rate: test"))
    with pytest.raises(PointSkipped, match="above the sustained rate"):
        spark_stream.spark_streaming(high, "as-written", make_device("cpu"), make_predict_fn)
    with pytest.raises(ValueError, match="no 'tuned' loop"):
        spark_stream.spark_streaming(low, "tuned", make_device("cpu"), make_predict_fn)
