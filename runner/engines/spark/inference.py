"""Seed 003 at scale: distributed batch inference of the suite's models with Apache Spark.

Seed 003 ran its image and text models over a PySpark cluster. This workload does the same with Spark's own
tool for it, `pyspark.ml.functions.predict_batch_udf`: a DataFrame of synthetic inputs (an id and the model's
input as a flat array), split into `partitions`, and a column of predictions computed by the model in Spark's
Python workers, `batch_size` rows at a time. One unit (an "epoch" of inference) is a full action that
materialises every prediction: Spark's `noop` sink writes each row of the predicted DataFrame and discards it,
so no prediction can be pruned away and nothing is collected to the driver.

Where Spark runs:
- embedded by default: `local[*]` (every core of this machine), started by the measuring process and stopped
  with it; the only system need besides the `spark` extra (pyspark) is a Java runtime (17 or newer);
- on an existing cluster (standalone `spark://`, YARN, Kubernetes) with `benchsite run --spark-master URL` or
  BENCHSITE_SPARK_MASTER. The file records the master's kind, never its address.

The device is the executors': on `cuda` each Python worker builds the model on the GPU its executor was given
(`spark.task.resource.gpu.amount`) or, in local mode, GPU 0. The model is built in each worker from its
published configuration with a fixed seed (random weights), once per worker process (`predict_batch_udf` caches
the predict function), so every worker computes the same function.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any

import numpy as np

from runner.engines.spark.master import DEFAULT_MASTER, MASTER_ENV, master_kind, require_spark
from runner.engines.spark.predict import EngineDevice, PredictFactory, assigned_gpu, input_shape
from runner.workloads.base import Case


def synthetic_rows(model_cfg: dict[str, Any], rows: int) -> np.ndarray:
    """Every row's input, flattened, from a fixed seed: token ids (as floats: one array type for every
    model) or standard-normal pixels."""
    rng = np.random.default_rng(20231003)
    size = int(np.prod(input_shape(model_cfg)))
    if model_cfg["family"] == "bert":
        return rng.integers(0, model_cfg["vocab_size"], (rows, size)).astype(np.float32)
    return rng.standard_normal((rows, size), dtype=np.float32)


class SparkInference:
    """One spark-inference point: a Spark session, the DataFrame of inputs cached in partitions, and the
    predicted DataFrame; `run_unit()` materialises every prediction."""

    precision = "fp32"

    def __init__(self, case: Case, device: EngineDevice, predict_fn: PredictFactory, master: str | None = None):
        from pyspark.ml.functions import predict_batch_udf
        from pyspark.sql.types import ArrayType, FloatType, IntegerType, StructField, StructType

        self.case, self.device = case, device
        cfg = case.config
        self.master = master or os.environ.get(MASTER_ENV) or DEFAULT_MASTER
        self.spark = start_session(self.master, device.kind, cfg["batch"])  # stopped by close() (not timed)
        self._package = ship_runner(self.spark)
        model_cfg = cfg["model"]
        flat = synthetic_rows(model_cfg, cfg["rows"])
        import pandas as pd

        table = pd.DataFrame({"id": np.arange(cfg["rows"], dtype=np.int32), "x": list(flat)})
        schema = StructType([StructField("id", IntegerType(), False), StructField("x", ArrayType(FloatType()), False)])
        self.inputs = self.spark.createDataFrame(table, schema).repartition(cfg["partitions"]).cache()
        self.inputs.count()  # the inputs are built and cached before timing: a unit times inference alone
        predict = predict_batch_udf(
            predict_fn(model_cfg, device.kind, assigned_gpu),
            return_type=IntegerType(),
            batch_size=cfg["batch"],
            input_tensor_shapes=[[int(np.prod(input_shape(model_cfg)))]],
        )
        self.predicted = self.inputs.select("id", predict("x").alias("prediction"))
        executors, cores = cluster_shape(self.spark, self.master)
        self._predict, self._schema, self._slots = predict, schema, executors * cores  # for short_epoch
        self.spark_master = master_kind(self.master)  # the measurement's `spark_master` field; the note says it too
        self.notes = (
            f"spark {self.spark.version}; master {self.spark_master}; executors {executors}; "
            f"cores per executor {cores}; driver heap {driver_heap(self.spark)}; partitions {cfg['partitions']}; "
            f"batch {cfg['batch']} rows per predict call; predictions materialised by the noop sink",
        )

    def run_unit(self) -> None:
        self.predicted.write.format("noop").mode("overwrite").save()

    def short_epoch(self) -> None:
        """A short warm-up, not the engine's (which runs a whole unit first): the prediction over one batch per task
        that a unit runs at once, so that every Python worker the unit uses has started, built its model and run it
        once. tests/benchmarks/warmup_ab.py --workload spark-inference --fresh compares the first timed unit after it
        with the first after a whole unit: slower after this one on the 2-core VM, so the engine keeps the whole."""
        import pandas as pd

        cfg = self.case.config
        slots = min(self._slots, cfg["partitions"])  # a partition each, at most one per core
        rows = min(cfg["rows"], slots * cfg["batch"])
        table = pd.DataFrame({"id": np.arange(rows, dtype=np.int32), "x": list(synthetic_rows(cfg["model"], rows))})
        warm = self.spark.createDataFrame(table, self._schema).repartition(slots)
        # the same UDF: its model cache is keyed by it, so a unit after this finds every worker's model built
        warm.select("id", self._predict("x").alias("prediction")).write.format("noop").mode("overwrite").save()

    def predictions(self) -> list[tuple[int, int]]:
        """Every (id, prediction) pair, for checks: each id must appear exactly once."""
        return [(r["id"], r["prediction"]) for r in self.predicted.collect()]

    def close(self) -> None:
        try:
            self.inputs.unpersist()
        finally:
            self.spark.stop()
            os.unlink(self._package)


def start_session(master: str, device_kind: str, batch: int) -> Any:
    """A Spark session on `master` for predicting `batch` rows per call (Arrow batches at least that large; on
    a cluster with GPU executors, one GPU per executor and per task)."""
    from pyspark.sql import SparkSession

    require_spark(master)
    builder = (
        SparkSession.builder.master(master)
        .appName("benchsite")
        .config("spark.ui.enabled", "false")
        .config("spark.python.worker.reuse", "true")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", str(max(batch, 1024)))
    )
    python = worker_python(master)
    if python is not None:
        # PySpark's functions carry the interpreter its SparkContext reads from PYSPARK_PYTHON (else `python3` on
        # PATH); this is the measuring process, so setting it here changes nothing for the user's shell
        os.environ["PYSPARK_PYTHON"] = python
        builder = builder.config("spark.pyspark.python", python)
    if master.startswith("local"):
        # in local mode the driver's JVM is the executor: every file the query reads and every Arrow batch sent to
        # the Python workers lives in its heap, and Spark's default (1 GiB) runs out at the suite's larger rates
        builder = builder.config("spark.driver.memory", driver_memory())
    if device_kind in ("cuda", "rocm") and not master.startswith("local"):
        # one GPU per executor and per task: each task's worker uses the GPU Spark assigned it
        builder = builder.config("spark.executor.resource.gpu.amount", "1").config(
            "spark.task.resource.gpu.amount", "1"
        )
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def driver_memory(physical: int | None = None) -> str:
    """The driver's heap for a local master: half of this machine's memory, at least Spark's default 1 GiB and
    at most 32 GiB (a heap only takes what it uses). Seed 003's streaming query at 1024 rows/s reads files of
    256 deit-tiny images (154 MB each); with the default heap the JVM died of OutOfMemoryError reading its first
    two (measured on the 2-core VM: `Cannot reserve additional contiguous bytes in the vectorized reader`), and
    every later point with it."""
    if physical is None:
        try:
            physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):  # not on this OS: Spark's own default
            return "1g"
    gib = max(1, min(32, physical // 2**31))
    return f"{gib}g"


def worker_python(master: str, env: Mapping[str, str] = os.environ) -> str | None:
    """The interpreter Spark's Python workers run: the one benchsite runs in (so a virtual environment's torch is
    theirs too, activated or not), unless the user named one in PYSPARK_PYTHON. Only for masters on this host
    (local, local-cluster, a standalone master on localhost): a remote cluster's executors may not have this
    path, and keep their own setting."""
    if env.get("PYSPARK_PYTHON"):
        return None
    here = master.startswith("local") or any(
        master.startswith(f"spark://{host}:") for host in ("localhost", "127.0.0.1", "[::1]")
    )
    return sys.executable if here else None


def ship_runner(spark: Any) -> str:
    """The predict function builds the suite's model with benchsite's own code: ship that code to the executors
    (a zip of the runner package), so a cluster needs only PyTorch and transformers there. Returns the zip's
    path, for the caller to delete once the session stops."""
    package = _package_zip()
    spark.sparkContext.addPyFile(package)
    return package


def driver_heap(spark: Any) -> str:
    """The driver's heap as the session was given it (Spark's default where nothing set it)."""
    return str(spark.sparkContext.getConf().get("spark.driver.memory", "1g"))


def cluster_shape(spark: Any, master: str) -> tuple[int, int]:
    """(executors, cores per executor) of the session: the block managers Spark knows are the driver's and one
    per executor (local mode: the driver is the executor)."""
    context = spark.sparkContext
    managers = int(context._jsc.sc().getExecutorMemoryStatus().size())
    executors = 1 if master.startswith("local") else max(1, managers - 1)
    return executors, max(1, context.defaultParallelism // executors)


def _package_zip() -> str:
    """The runner package as a zip file Spark can put on its executors' Python path."""
    import tempfile
    import zipfile
    from pathlib import Path

    import runner

    package = Path(runner.__file__).resolve().parent
    handle, path = tempfile.mkstemp(prefix="benchsite-runner-", suffix=".zip")
    os.close(handle)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in sorted(package.rglob("*.py")):
            archive.write(file, file.relative_to(package.parent).as_posix())
        for file in sorted(package.rglob("*.json")):
            archive.write(file, file.relative_to(package.parent).as_posix())
    return path


def spark_inference(case: Case, variant: str, device: EngineDevice, predict_fn: PredictFactory) -> SparkInference:
    """The spark-inference program of a point, predicting with a framework's predict function (a framework's
    builder passes its own: runner.frameworks.torch.predict)."""
    if variant != "as-written":  # the workload has one loop: Spark's own predict_batch_udf
        raise ValueError(f"spark-inference has no {variant!r} loop")
    return SparkInference(case, device, predict_fn)
