"""Data-parallel scaling (transformer-ddp): each world size's examples per second and efficiency against one process
within the same run, and the spread between runs."""

from __future__ import annotations

import numpy as np
import pandas as pd

from site_builder.analyses.frames import ok_rows, ratio_intervals


def scaling(frame: pd.DataFrame, workload: str = "transformer-ddp") -> pd.DataFrame:
    """Data-parallel scaling per machine, loop, framework, device, model, batch per process and run (`frame`
    one row per run: Collector.runs_of): each world size's examples per second (with the interval its median's
    gives) and its efficiency, the examples per second over world size times one process's, within the same
    run. A step takes one batch per process, so the efficiency is the ratio of the two step times,
    t(1) / t(N), with the bootstrap interval of that ratio of medians."""
    rows = ok_rows(frame[frame["workload"] == workload]) if not frame.empty else frame
    if rows.empty:
        return pd.DataFrame()
    # a loop fixed within the suite is its own loop, "tuned (earlier loop: eager)", never divided by the fixed one
    earlier = rows["earlier_loop"] if "earlier_loop" in rows else pd.Series(False, index=rows.index)
    how = rows["runs_as"].astype(str) if "runs_as" in rows else pd.Series("", index=rows.index)
    label = rows["variant"].astype(str) + np.where(how != "", " (earlier loop: " + how + ")", " (earlier loop)")
    rows = rows.assign(loop=np.where(earlier, label, rows["variant"]))
    keys = [
        "machine_id", "gpu_model", "device", "device_name", "framework", "variant", "loop", "model", "batch_size",
        "run_id", "started_at",
    ]  # fmt: skip
    out = []
    for _, group in rows.groupby(keys, sort=True, observed=True, dropna=False):
        base = group[group["world_size"] == 1]
        for _, r in group.sort_values("world_size").iterrows():
            per_unit = r["samples_per_s"] * r["median_s"]  # examples per step
            entry = {k: r[k] for k in keys}
            entry.update(
                run=f"{r['started_at']:%Y-%m-%d %H:%M} UTC",
                world_size=int(r["world_size"]),
                interconnect=r["interconnect"],
                allreduce=r.get("allreduce", ""),
                samples_per_s=r["samples_per_s"],
                samples_per_s_lo=per_unit / r["ci_hi_s"] if r["ci_hi_s"] > 0 else np.nan,
                samples_per_s_hi=per_unit / r["ci_lo_s"] if r["ci_lo_s"] > 0 else np.nan,
                base=base["samples"].iloc[0] if len(base) else np.asarray([]),
                samples=r["samples"],
                efficiency=float(base["median_s"].iloc[0] / r["median_s"]) if len(base) else np.nan,
            )
            out.append(entry)
    table = ratio_intervals(pd.DataFrame(out), "base", "samples", "efficiency")
    return table.drop(columns=["base", "samples"])


def scaling_spread(table: pd.DataFrame) -> pd.DataFrame:
    """Between runs: per machine, device, loop, framework, model, batch and world size measured in more than one
    run, how many runs and the lowest and highest efficiency and examples per second among them."""
    keys = ["machine_id", "device_name", "loop", "framework", "model", "batch_size", "world_size"]
    if table.empty:
        return pd.DataFrame()
    grouped = table.groupby(keys, sort=True, observed=True, dropna=False).agg(
        runs=("run_id", "nunique"),
        efficiency_min=("efficiency", "min"),
        efficiency_max=("efficiency", "max"),
        samples_per_s_min=("samples_per_s", "min"),
        samples_per_s_max=("samples_per_s", "max"),
    )
    return grouped[grouped["runs"] > 1].reset_index()
