"""Crossovers: along a sweep (the depth sweep's parameters, a transformer's batch size), where the accelerator starts
to beat the same machine's CPU, with its interval, per machine and summarised per accelerator model; and the sweeps'
own figures per device model that the crossover charts draw."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from site_builder import uncertainty
from site_builder.analyses.frames import CHART_MODELS, ok_rows, top_models
from site_builder.analyses.speedups import interval_columns, summarise


def _sweep_verdict(ratio: list[float]) -> str:
    if all(r >= 1 for r in ratio):
        return "accelerator always faster"
    if all(r < 1 for r in ratio):
        return "CPU always faster"
    return "crossover"


CROSSOVER_COLUMNS = [
    "machine_id",
    "variant",
    "framework",
    "device",
    "gpu_model",
    "verdict",
    "break_even_params",
    "break_even_params_lo",
    "break_even_params_hi",
    "low",
    "high",
    "replicates",
]


def _sweep_crossings(table: pd.DataFrame, keys: list[str], axis: str, at: str) -> list[dict[str, Any]]:
    """Per group of a sweep (rows along `axis`): the verdict, the break-even with its interval (open sides as
    NaN) and its replicates, and the measured range."""
    rows = []
    for values, group in table.groupby(keys, sort=True):
        group = group.sort_values(axis)
        if len(group) < 2:
            continue
        xs = group[axis].astype(float).tolist()
        verdict = _sweep_verdict(group["speedup"].tolist())
        found = None
        if verdict == "crossover" and all(
            len(c) and len(a) for c, a in zip(group["samples_cpu"], group["samples"], strict=True)
        ):
            found = uncertainty.break_even_replicates(xs, list(group["samples_cpu"]), list(group["samples"]))
        elif verdict == "crossover":
            exact = uncertainty.crossing(xs, group["speedup"].tolist())
            found = (exact, np.full(uncertainty.RESAMPLES, exact)) if exact is not None else None
        if verdict == "crossover" and found is None:
            verdict = "mixed"  # crosses back and forth without a first upward crossing
        interval = uncertainty.median_over([found[0]], [found[1]]) if found else None
        rows.append(
            {
                **dict(zip(keys, values, strict=True)),
                "gpu_model": group["gpu_model"].iloc[0],
                "verdict": verdict,
                **interval_columns(at, interval),
                "low": xs[0],
                "high": xs[-1],
                "replicates": found[1].astype(np.float32) if found else None,
            }
        )
    return rows


def crossovers(table: pd.DataFrame, workload: str = "depth-sweep") -> pd.DataFrame:
    """Per machine, variant, framework and accelerator: the parameter count where the accelerator starts to
    win, with its interval. `table` is the speedups() table."""
    if table.empty:
        return pd.DataFrame(columns=CROSSOVER_COLUMNS)
    table = table[table["workload"] == workload]
    rows = _sweep_crossings(table, ["machine_id", "variant", "framework", "device"], "params", "break_even_params")
    return pd.DataFrame(rows, columns=CROSSOVER_COLUMNS)


BATCH_COLUMNS = [
    "machine_id",
    "model",
    "mode",
    "variant",
    "framework",
    "device",
    "gpu_model",
    "verdict",
    "break_even_batch",
    "break_even_batch_lo",
    "break_even_batch_hi",
    "low",
    "high",
    "replicates",
]


def batch_crossovers(table: pd.DataFrame) -> pd.DataFrame:
    """Per machine, model, mode and variant of a batch-size sweep: the batch size where the accelerator wins,
    with its interval. `table` is the speedups() table."""
    if table.empty:
        return pd.DataFrame(columns=BATCH_COLUMNS)
    table = table[table["batch_size"].notna()]
    keys = ["machine_id", "model", "mode", "variant", "framework", "device"]
    return pd.DataFrame(_sweep_crossings(table, keys, "batch_size", "break_even_batch"), columns=BATCH_COLUMNS)


def sweep_by_device(frame: pd.DataFrame, workload: str = "depth-sweep") -> pd.DataFrame:
    """Per device model, loop, framework and sweep point: the median time over machines, with its interval."""
    rows = ok_rows(frame[frame["workload"] == workload])
    rows = top_models(rows, "device_name", 2 * CHART_MODELS)
    keys = ["device", "device_name", "variant", "framework", "depth", "params"]
    rows = rows.assign(median_s_lo=rows["ci_lo_s"], median_s_hi=rows["ci_hi_s"])  # the engine's CI of the median
    return summarise(rows, keys, "median_s")


def batch_by_accelerator(table: pd.DataFrame) -> pd.DataFrame:
    """Per accelerator model, transformer model, mode, loop, framework and batch size: the median speedup
    with its interval."""
    rows = top_models(table[table["batch_size"].notna()], "gpu_model")
    keys = ["gpu_model", "model", "mode", "variant", "framework", "batch_size"]
    return summarise(rows, keys, "speedup")


def crossover_summary(crossings: pd.DataFrame, at: str = "break_even_params") -> pd.DataFrame:
    """Per accelerator model, loop and framework: machines, the verdicts, and the median break-even over the
    machines that cross, with its interval (NaN on a side left open by the measured range)."""
    columns = ["gpu_model", "variant", "framework", "machines", "crossing", "verdicts", at, f"{at}_lo", f"{at}_hi"]
    if crossings.empty:
        return pd.DataFrame(columns=columns)
    rows = []
    for (gpu, variant, framework), group in crossings.groupby(["gpu_model", "variant", "framework"], sort=True):
        crossed = group[group["verdict"] == "crossover"]
        interval = uncertainty.median_over(crossed[at].tolist(), list(crossed["replicates"])) if len(crossed) else None
        rows.append(
            {
                "gpu_model": gpu,
                "variant": variant,
                "framework": framework,
                "machines": group["machine_id"].nunique(),
                "crossing": len(crossed),
                "verdicts": "; ".join(f"{k} {n}" for k, n in group["verdict"].value_counts().items()),
                **interval_columns(at, interval),
            }
        )
    return pd.DataFrame(rows, columns=columns)
