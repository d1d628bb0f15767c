"""Aggregation: result files in, tidy pandas frames out. Pure: no I/O, no rendering.

Only measurements with the same workload_hash are ever compared; a speedup compares an accelerator with
the CPU of the same machine, same framework and same workload_hash.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from runner.schema import ResultFile

COLUMNS = [
    "machine_id",
    "cpu_model",
    "gpu_model",
    "gpu_vendor",
    "system_type",
    "run_id",
    "started_at",
    "profile",
    "file",
    "workload",
    "workload_hash",
    "point",
    "depth",
    "model",
    "mode",
    "batch_size",
    "variant",
    "framework",
    "device",
    "device_name",
    "precision",
    "status",
    "median_s",
    "ci_lo_s",
    "ci_hi_s",
    "samples_per_s",
    "params",
    "achieved_tflops",
    "stable",
    "unit",
]
KEY = ["machine_id", "workload_hash", "framework", "device"]


def point_label(point: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in point.items())


def measurements_frame(results: Iterable[tuple[Path, ResultFile]]) -> pd.DataFrame:
    """One row per measurement; where a machine ran the same measurement more than once, the newest run."""
    rows: list[dict[str, Any]] = []
    for path, result in results:
        machine = result.machine
        gpu = machine.accelerators[0] if machine.accelerators else None
        common = {
            "machine_id": machine.id,
            "cpu_model": machine.cpu.model,
            "gpu_model": gpu.model if gpu else "",
            "gpu_vendor": gpu.vendor if gpu else "",
            "system_type": machine.system_type,
            "run_id": result.run.id,
            "started_at": result.run.started_at,
            "profile": result.suite.profile,
            "file": str(path),
        }
        for m in result.measurements:
            ci = m.ci95_s or (None, None)
            rows.append(
                {
                    **common,
                    "workload": m.workload,
                    "workload_hash": m.workload_hash,
                    "point": point_label(m.point),
                    "depth": m.point.get("depth"),
                    "model": m.point.get("model"),
                    "mode": m.point.get("mode"),
                    "batch_size": m.point.get("batch_size"),
                    "variant": m.variant,
                    "framework": m.framework,
                    "device": m.device,
                    "device_name": m.device_name,
                    "precision": m.precision,
                    "status": m.status,
                    "median_s": m.median_s,
                    "ci_lo_s": ci[0],
                    "ci_hi_s": ci[1],
                    "samples_per_s": m.samples_per_s,
                    "params": m.params,
                    "achieved_tflops": m.achieved_tflops,
                    "stable": m.stable,
                    "unit": m.unit,
                }
            )
    frame = pd.DataFrame(rows, columns=COLUMNS)
    if frame.empty:
        return frame
    frame = frame.sort_values("started_at").drop_duplicates(KEY, keep="last")
    return frame.reset_index(drop=True)


def speedups(frame: pd.DataFrame) -> pd.DataFrame:
    """Accelerator rows joined with the same machine's CPU row: speedup = CPU time / accelerator time."""
    ok = frame[(frame["status"] == "ok") & frame["median_s"].notna()]
    cpu = ok[ok["device"] == "cpu"][["machine_id", "workload_hash", "framework", "median_s"]]
    accel = ok[ok["device"] != "cpu"]
    joined = accel.merge(cpu, on=["machine_id", "workload_hash", "framework"], suffixes=("", "_cpu"))
    joined["speedup"] = joined["median_s_cpu"] / joined["median_s"]
    return joined.reset_index(drop=True)


def _break_even(params: list[float], ratio: list[float]) -> float | None:
    """Parameters where CPU time / GPU time first crosses 1, interpolated in log-log between sweep points."""
    for (p0, r0), (p1, r1) in itertools.pairwise(zip(params, ratio, strict=True)):
        if r0 < 1 <= r1:
            lp0, lp1, lr0, lr1 = math.log(p0), math.log(p1), math.log(r0), math.log(r1)
            return math.exp(lp0 - lr0 * (lp1 - lp0) / (lr1 - lr0))
    return None


def crossovers(frame: pd.DataFrame, workload: str = "depth-sweep") -> pd.DataFrame:
    """Per machine, variant, framework and accelerator: where the accelerator starts to beat the CPU."""
    table = speedups(frame)
    table = table[table["workload"] == workload]
    rows = []
    for (machine, variant, framework, device), group in table.groupby(
        ["machine_id", "variant", "framework", "device"], sort=True
    ):
        group = group.sort_values("params")
        params, ratio = group["params"].astype(float).tolist(), group["speedup"].tolist()
        if all(r >= 1 for r in ratio):
            verdict, at = "accelerator always faster", None
        elif all(r < 1 for r in ratio):
            verdict, at = "CPU always faster", None
        else:
            at = _break_even(params, ratio)
            verdict = "crossover" if at is not None else "mixed"
        rows.append(
            {
                "machine_id": machine,
                "variant": variant,
                "framework": framework,
                "device": device,
                "gpu_model": group["gpu_model"].iloc[0],
                "verdict": verdict,
                "break_even_params": at,
            }
        )
    return pd.DataFrame(
        rows, columns=["machine_id", "variant", "framework", "device", "gpu_model", "verdict", "break_even_params"]
    )
