"""spark-inference's predict function on a GPU, without Spark: the check for machines that have a GPU but no Java
or pyspark. Not part of the test run.

    python tests/benchmarks/spark_gpu_predict.py [--rows 128]

For one point of each model (standard and quick profiles), the function every Spark Python worker builds
(`make_predict_fn`) runs on `cuda` and on the CPU over the same synthetic rows, `batch_size` rows per call as
predict_batch_udf calls it; prints the share of rows whose predicted class agrees and the GPU's rows per
second (after a first pass that builds kernels)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from runner.engines.spark.inference import synthetic_rows
from runner.engines.spark.predict import assigned_gpu
from runner.frameworks.torch.predict import make_predict_fn
from runner.workloads import get


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=128)
    args = parser.parse_args()
    cases = get("spark-inference").cases("standard")[::4] + get("spark-inference").cases("quick")[::2]
    print("| point | rows | GPU class = CPU class | GPU rows/s |")
    print("|---|---:|---:|---:|")
    for case in cases:
        cfg = case.config
        rows, batch = synthetic_rows(cfg["model"], min(cfg["rows"], args.rows)), cfg["batch"]
        gpu, cpu = (
            make_predict_fn(cfg["model"], "cuda", assigned_gpu)(),
            make_predict_fn(cfg["model"], "cpu", assigned_gpu)(),
        )
        on_gpu = np.concatenate([gpu(rows[i : i + batch]) for i in range(0, len(rows), batch)])
        on_cpu = np.concatenate([cpu(rows[i : i + batch]) for i in range(0, len(rows), batch)])
        torch.cuda.synchronize()
        start = time.perf_counter()
        for i in range(0, len(rows), batch):
            gpu(rows[i : i + batch])  # returns host arrays: each call ends synchronised
        rate = len(rows) / (time.perf_counter() - start)
        print(f"| {case.label()} | {len(rows)} | {float((on_gpu == on_cpu).mean()):.3f} | {rate:,.0f} |")
    print(f"\non {torch.cuda.get_device_name(0)}")


if __name__ == "__main__":
    main()
