"""Seed 003 at scale: real-time inference with Spark Structured Streaming, done so that nothing is lost.

Seed 003's streaming app had one client push images and another predict them; its two clusters were not
synchronised and lost data. Here the pipeline is Spark's own, with its exactly-once guarantee:

- **Producer.** A thread of the measuring process writes one Parquet file of `rows_per_file` synthetic images
  every `interval_s` seconds: `rate` rows per second. Each file is written under a staging folder and renamed
  into the input folder, so Spark never sees half a file. Every row has a unique id and its file's index.
- **Query.** `spark.readStream` over the input folder (Spark's file source, which records in its checkpoint which
  files each micro-batch read), the suite's model over each micro-batch with `predict_batch_udf` (the same
  predict function as spark-inference), and Spark's file sink (Parquet) with a checkpoint. The sink commits a
  micro-batch by writing its entry in the output's `_spark_metadata` log; readers see only committed files, so
  a batch that is replayed after a crash is never seen twice.
- **Latency.** A file's end-to-end latency runs from when the producer began to write it to when the batch with
  its predictions was committed: the modification time of that batch's `_spark_metadata` entry, written by the
  driver on this machine's clock.
- **Exactly once.** After each step every produced id must be in the committed output exactly once; a step that
  loses or repeats one fails. tests/test_spark_stream.py kills a query mid-stream and restarts it from its
  checkpoint.

A point is one offered rate; the rates climb a ladder and stop at the first that the pipeline does not sustain
(runner.results.streaming says when latency counts as bounded): the points above it are recorded as skipped, with the
reason. Each point warms up first (one file per core, waited for, so every Python worker has built the model)
and then produces for the step's seconds; it waits for the query to catch up before it reads the output.

The Spark session is started once per measuring process and kept for the ladder's points (stopped when the
process ends); each point has its own folders, query and checkpoint.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
import threading
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from runner.engines.spark.inference import cluster_shape, driver_heap, ship_runner, start_session, synthetic_rows
from runner.engines.spark.master import DEFAULT_MASTER, MASTER_ENV, master_kind
from runner.engines.spark.predict import EngineDevice, PredictFactory, assigned_gpu, input_shape, predict_factory
from runner.results.streaming import figures
from runner.workloads.base import Case, PointSkipped

# Where the folders of a step go (input, staging, output, checkpoint). On a cluster the executors must see the
# same folder (a shared mount); the default is this machine's temporary folder, which local and single-host
# clusters share.
DIR_ENV = "BENCHSITE_SPARK_DIR"
# Seconds the query may take, after the producer stops, to commit what it was given, beyond the step's own length.
CATCH_UP_S = 30.0
WARMUP_TIMEOUT_S = 300.0
POLL_S = 0.02

# (model, device kind) -> why the ladder stopped: points above a rate that was not sustained are not measured.
_LADDER_STOPPED: dict[tuple[str, str], tuple[float, str]] = {}
_SESSION: dict[str, Any] = {}


@dataclass
class StreamDirs:
    root: Path
    input: Path = field(init=False)
    staging: Path = field(init=False)
    output: Path = field(init=False)
    checkpoint: Path = field(init=False)

    def __post_init__(self) -> None:
        self.input, self.staging = self.root / "input", self.root / "staging"
        self.output, self.checkpoint = self.root / "output", self.root / "checkpoint"
        for folder in (self.input, self.staging, self.output):
            folder.mkdir(parents=True, exist_ok=True)


class Producer:
    """Writes the input files of one step: file k (k = 0, 1, ...) holds rows k*rows_per_file + id_base onwards and
    is begun at start + k*interval_s. The pixels are made once (a pool of one file's rows); only ids change."""

    def __init__(self, dirs: StreamDirs, pool: np.ndarray, interval_s: float, id_base: int = 0):
        import pyarrow as pa

        self.dirs, self.interval_s, self.id_base = dirs, interval_s, id_base
        self.rows_per_file = len(pool)
        flat = pool.reshape(len(pool), -1).astype(np.float32, copy=False)
        self._x = pa.FixedSizeListArray.from_arrays(pa.array(flat.ravel()), flat.shape[1]).cast(pa.list_(pa.float32()))
        self.produced_at: list[float] = []  # wall clock (time.time) when each file was begun

    def write(self, index: int) -> float:
        """Write file `index` atomically into the input folder; returns when it was begun (time.time())."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        began = time.time()
        first = self.id_base + index * self.rows_per_file
        table = pa.table(
            {
                "id": pa.array(np.arange(first, first + self.rows_per_file, dtype=np.int64)),
                "file": pa.array(np.full(self.rows_per_file, index, dtype=np.int32)),
                "x": self._x,
            }
        )
        name = f"part-{self.id_base:012d}-{index:06d}.parquet"
        staged = self.dirs.staging / name
        pq.write_table(table, staged, compression="none")
        os.replace(staged, self.dirs.input / name)  # Spark lists the input folder: a file appears whole
        return began

    def run(
        self, files: int, stop: threading.Event | None = None, on_file: Callable[[int], None] | None = None
    ) -> None:
        """Write `files` files on schedule (a late file is written at once; the lag is in the record)."""
        start = time.time()
        for index in range(files):
            if stop is not None and stop.is_set():
                return
            delay = start + index * self.interval_s - time.time()
            if delay > 0:
                time.sleep(delay)
            self.produced_at.append(self.write(index))
            if on_file is not None:
                on_file(index)

    def ids(self, files: int) -> range:
        return range(self.id_base, self.id_base + files * self.rows_per_file)


def stream_schema() -> Any:
    from pyspark.sql.types import ArrayType, FloatType, IntegerType, LongType, StructField, StructType

    return StructType(
        [
            StructField("id", LongType(), False),
            StructField("file", IntegerType(), False),
            StructField("x", ArrayType(FloatType()), False),
        ]
    )


def start_query(
    spark: Any, dirs: StreamDirs, model_cfg: dict[str, Any], device_kind: str, batch: int, predict_fn: PredictFactory
) -> Any:
    """The streaming query: the input folder's files, each row's predicted class, the file sink with its
    checkpoint. Started anew on the same folders, it resumes where the checkpoint says."""
    from pyspark.ml.functions import predict_batch_udf
    from pyspark.sql.types import IntegerType

    predict = predict_batch_udf(
        predict_fn(model_cfg, device_kind, assigned_gpu),
        return_type=IntegerType(),
        batch_size=batch,
        input_tensor_shapes=[[int(np.prod(input_shape(model_cfg)))]],
    )
    rows = spark.readStream.schema(stream_schema()).parquet(str(dirs.input))
    predicted = rows.select("id", "file", predict("x").alias("prediction"))
    return (
        predicted.writeStream.format("parquet")
        .option("path", str(dirs.output))
        .option("checkpointLocation", str(dirs.checkpoint))
        .outputMode("append")
        .start()
    )


@dataclass(frozen=True)
class Committed:
    """What the file sink has committed: per micro-batch, when (its log entry's modification time) and its files."""

    batches: dict[int, tuple[float, list[Path]]]

    def rows(self, columns: tuple[str, ...] = ("id", "file", "prediction")) -> dict[str, np.ndarray]:
        """Every committed row (and the batch it came in), read from the committed files only."""
        import pyarrow.parquet as pq

        parts: dict[str, list[np.ndarray]] = {name: [] for name in (*columns, "batch")}
        for batch, (_, files) in sorted(self.batches.items()):
            for path in files:
                table = pq.read_table(path, columns=list(columns))
                for name in columns:
                    parts[name].append(table.column(name).to_numpy())
                parts["batch"].append(np.full(table.num_rows, batch, dtype=np.int64))
        return {
            name: np.concatenate(values) if values else np.zeros(0, dtype=np.int64) for name, values in parts.items()
        }


def committed(output: Path) -> Committed:
    """Read the file sink's log (`_spark_metadata/<batch>`: a version line, then one JSON line per file)."""
    log = output / "_spark_metadata"
    batches: dict[int, tuple[float, list[Path]]] = {}
    if not log.is_dir():
        return Committed(batches)
    for entry in log.iterdir():
        if not entry.name.isdigit():  # temporary files, and .compact files (compaction is turned off)
            continue
        try:
            when = entry.stat().st_mtime_ns / 1e9
            lines = entry.read_text().splitlines()
        except FileNotFoundError:
            continue
        files = []
        for line in lines[1:]:
            record = json.loads(line)
            if record.get("action", "add") == "add":
                files.append(Path(urllib.parse.unquote(urllib.parse.urlparse(record["path"]).path)))
        batches[int(entry.name)] = (when, files)
    return Committed(batches)


def exactly_once(ids: np.ndarray, expected: range) -> tuple[int, int]:
    """(missing, duplicated) ids of the committed output against those produced."""
    counts = Counter(ids.tolist())
    missing = sum(1 for i in expected if i not in counts)
    duplicated = sum(c - 1 for c in counts.values() if c > 1) + sum(1 for i in counts if i not in expected)
    return missing, duplicated


def wait_for(output: Path, expected: range, timeout_s: float, query: Any = None) -> tuple[Committed, bool]:
    """Poll the sink's log until every expected id is committed or `timeout_s` passes; returns the log and
    whether everything came. A failed query raises."""
    deadline = time.time() + timeout_s
    seen: set[int] = set()
    known: set[int] = set()
    while True:
        state = committed(output)
        new = [b for b in state.batches if b not in known]
        if new:
            seen.update(Committed({b: state.batches[b] for b in new}).rows(("id",))["id"].tolist())
            known.update(new)
        if seen.issuperset(expected):
            return state, True
        if query is not None and query.exception() is not None:
            raise RuntimeError(f"the streaming query failed: {query.exception()}")
        if time.time() > deadline:
            return state, False
        time.sleep(POLL_S)


def _session(master: str, device_kind: str, batch: int) -> Any:
    """The measuring process's Spark session, started on first use and stopped when the process ends."""
    if "spark" not in _SESSION:
        spark = start_session(master, device_kind, batch)
        # one micro-batch log entry per batch (no compaction into N.compact files), kept until the step's folders go
        spark.conf.set("spark.sql.streaming.fileSink.log.compactInterval", "1000000")
        spark.conf.set("spark.sql.streaming.fileSink.log.deletion", "false")
        _SESSION.update(spark=spark, package=ship_runner(spark), master=master)

        def stop() -> None:
            try:
                spark.stop()
            finally:
                os.unlink(_SESSION["package"])

        atexit.register(stop)
    return _SESSION["spark"]


class SparkStreaming:
    """One spark-streaming point: a rate. `stream()` warms the query up, produces for the step's seconds, waits
    for the query to commit everything, checks exactly-once and returns the raw record."""

    precision = "fp32"

    def __init__(self, case: Case, device: EngineDevice, predict_fn: PredictFactory, master: str | None = None):
        cfg = case.config
        self.case, self.device, self.cfg, self.predict_fn = case, device, cfg, predict_fn
        self.rate = float(case.point["rate"])
        key = (case.point["model"], device.kind)
        stopped = _LADDER_STOPPED.get(key)
        if stopped is not None and self.rate > stopped[0]:
            raise PointSkipped(stopped[1])
        self.master = master or os.environ.get(MASTER_ENV) or DEFAULT_MASTER
        self.spark = _session(self.master, device.kind, cfg["batch"])
        self.dirs = StreamDirs(Path(tempfile.mkdtemp(prefix="benchsite-stream-", dir=os.environ.get(DIR_ENV))))
        self.query: Any = None
        model_cfg = cfg["model"]
        pool = synthetic_rows(model_cfg, cfg["rows_per_file"])
        self.executors, self.cores = cluster_shape(self.spark, self.master)
        self.spark_master = master_kind(self.master)  # the measurement's `spark_master` field; the notes say it too
        # warm-up files: one per core of the cluster (each small file is its own partition, so every Python
        # worker builds its model), with ids below the step's
        self.warm_files = self.executors * self.cores
        self.warmup = Producer(self.dirs, pool, cfg["interval_s"], id_base=0)
        self.producer = Producer(self.dirs, pool, cfg["interval_s"], id_base=self.warm_files * cfg["rows_per_file"])
        self.files = max(1, round(cfg["seconds"] / cfg["interval_s"]))

    def stream(self, on_file: Callable[[int, float], None] | None = None) -> dict[str, Any]:
        cfg = self.cfg
        self.query = start_query(self.spark, self.dirs, cfg["model"], self.device.kind, cfg["batch"], self.predict_fn)
        for index in range(self.warm_files):
            self.warmup.write(index)
        _, warm = wait_for(self.dirs.output, self.warmup.ids(self.warm_files), WARMUP_TIMEOUT_S, self.query)
        if not warm:
            raise RuntimeError(f"the streaming query did not commit its warm-up files in {WARMUP_TIMEOUT_S:.0f} s")
        warm_batches = set(committed(self.dirs.output).batches)
        started = time.perf_counter()

        def produced(index: int) -> None:
            if on_file is not None:
                on_file(index + 1, time.perf_counter() - started)

        self.producer.run(self.files, on_file=produced)
        expected = self.producer.ids(self.files)
        state, complete = wait_for(self.dirs.output, expected, cfg["seconds"] + CATCH_UP_S, self.query)
        gave_up = time.time()
        rows = state.rows()
        missing, duplicated = exactly_once(rows["id"], range(0, expected.stop))  # the warm-up's ids and the step's
        if duplicated or (complete and missing):
            raise RuntimeError(f"exactly-once violated: {missing} ids missing, {duplicated} duplicated")
        commit_time = {b: when for b, (when, _) in state.batches.items()}
        step = rows["id"] >= expected.start
        done: dict[int, float] = {}
        arrived: Counter[int] = Counter()
        for file_index, batch in zip(rows["file"][step].tolist(), rows["batch"][step].tolist(), strict=True):
            done[file_index] = max(done.get(file_index, 0.0), commit_time[batch])  # all of a file's rows visible
            arrived[file_index] += 1
        produced_at = self.producer.produced_at
        rows_per_file = cfg["rows_per_file"]
        # A file the query had not wholly committed when the wait ended: its latency is at least the wait so far
        # (a lower bound, counted in `uncommitted`; such a step is never called sustained).
        late = [i for i in range(self.files) if arrived[i] < rows_per_file]
        latencies = [(gave_up if i in late else done[i]) - produced_at[i] for i in range(self.files)]
        if min(latencies) <= 0:
            raise RuntimeError(
                "a commit time precedes its file's production: the driver's and producer's clocks differ"
            )
        record = {
            "offered_rows_per_s": self.rate,
            "interval_s": cfg["interval_s"],
            "files": self.files,
            "produced_s": [round(t - produced_at[0], 6) for t in produced_at],
            "uncommitted": len(late),
            "micro_batches": len(set(state.batches) - warm_batches),
        }
        found = figures(record["produced_s"], latencies, cfg["interval_s"], rows_per_file, len(late))
        record.update(
            p95_s=found.p95_s,
            p99_s=found.p99_s,
            growth=found.growth,
            producer_lag_s=found.producer_lag_s,
            bounded=found.bounded,
        )
        if not found.bounded:
            why = (
                f"{len(late)} of {self.files} files not committed {cfg['seconds'] + CATCH_UP_S:.0f} s after the "
                "producer stopped"
                if late
                else f"the latency grew {found.growth:.2f} s per second of stream, the producer "
                f"{found.producer_lag_s:.2f} s behind its schedule"
            )
            _LADDER_STOPPED[(self.case.point["model"], self.device.kind)] = (
                self.rate,
                f"above the sustained rate: at {self.rate:g} rows/s {why}",
            )
        self.notes = (
            f"spark {self.spark.version}; master {self.spark_master}; executors {self.executors}; "
            f"cores per executor {self.cores}; driver heap {driver_heap(self.spark)}; file source, "
            f"{cfg['rows_per_file']} rows per file every {cfg['interval_s']:g} s; parquet sink with checkpoint; "
            f"batch {cfg['batch']} rows per predict call",
        )
        return {"latencies_s": latencies, "stream": record, "figures": found}

    def close(self) -> None:
        try:
            if self.query is not None:
                self.query.stop()
        finally:
            shutil.rmtree(self.dirs.root, ignore_errors=True)


def spark_streaming(case: Case, variant: str, device: EngineDevice, predict_fn: PredictFactory) -> SparkStreaming:
    """The spark-streaming program of a point (a rate), predicting with a framework's predict function (a
    framework's builder passes its own: runner.frameworks.torch.predict)."""
    if variant != "as-written":  # the workload has one loop: Spark's own streaming query
        raise ValueError(f"spark-streaming has no {variant!r} loop")
    return SparkStreaming(case, device, predict_fn)


def main(argv: list[str] | None = None) -> int:
    """Run one streaming query over a folder until stopped (Ctrl-C or a kill): what the restart test kills.
    `python -m runner.engines.spark.streaming DIR MODEL [--master URL] [--batch N] [--framework NAME]`."""
    import argparse

    from runner.workloads.suite import MODELS

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("dir", type=Path, help="the step's folder (input/, output/, checkpoint/ inside)")
    parser.add_argument("model", choices=sorted(MODELS))
    parser.add_argument("--master", default=os.environ.get(MASTER_ENV) or DEFAULT_MASTER)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--framework", default="torch", help="whose predict function (runner.engines.spark.predict)")
    args = parser.parse_args(argv)
    spark = _session(args.master, "cpu", args.batch)
    predict_fn = predict_factory(args.framework)
    query = start_query(spark, StreamDirs(args.dir), MODELS[args.model], "cpu", args.batch, predict_fn)
    print("started", flush=True)
    query.awaitTermination()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
