"""Spark: batch inference's rows per second (spark-inference), streaming latencies' quantiles with their intervals
(spark-streaming), and the sustained rate, each with the kind of Spark master it ran on."""

from __future__ import annotations

import numpy as np
import pandas as pd

from runner.results import streaming
from site_builder.analyses.frames import ok_rows, plain


def spark_inference(frame: pd.DataFrame) -> pd.DataFrame:
    """Spark batch inference: rows per second (with the interval its median's gives) per machine, device, model,
    rows per predict call and partitions, with the kind of Spark master it ran on."""
    rows = ok_rows(frame[frame["workload"] == "spark-inference"]) if not frame.empty else frame
    if rows.empty:
        return pd.DataFrame()
    out = rows.assign(
        samples_per_s_lo=rows["samples_per_s"] * rows["median_s"] / rows["ci_hi_s"].where(rows["ci_hi_s"] > 0),
        samples_per_s_hi=rows["samples_per_s"] * rows["median_s"] / rows["ci_lo_s"].where(rows["ci_lo_s"] > 0),
    )
    cols = ["machine_id", "gpu_model", "device", "device_name", "spark_master", "model", "batch_size", "partitions"]
    out = out[[*cols, "samples_per_s", "samples_per_s_lo", "samples_per_s_hi"]]
    return plain(out).sort_values(cols).reset_index(drop=True)


def spark_streaming(frame: pd.DataFrame) -> pd.DataFrame:
    """Spark streaming: per machine, device, model and offered rate, the end-to-end latency's p50, p95 and p99
    with their distribution-free 95% intervals (runner.results.streaming.quantile_ci over the latencies; a side that
    too few latencies cannot bound is NaN), whether the rate was sustained, and the growth of its latency."""
    rows = ok_rows(frame[frame["workload"] == "spark-streaming"]) if not frame.empty else frame
    if rows.empty:
        return pd.DataFrame()
    cols = ["machine_id", "gpu_model", "device", "device_name", "spark_master", "model", "rate"]
    out = []
    for _, r in rows.sort_values(cols).iterrows():
        entry = {c: r[c] for c in cols}
        latencies = [float(x) for x in r["samples"]]
        for name, q in (("p50", 0.5), ("p95", 0.95), ("p99", 0.99)):
            lo, hi = streaming.quantile_ci(latencies, q)
            entry.update(
                {
                    f"{name}_s": streaming.quantile(latencies, q),
                    f"{name}_s_lo": np.nan if lo is None else lo,
                    f"{name}_s_hi": np.nan if hi is None else hi,
                }
            )
        entry.update(
            files=len(latencies),
            bounded=bool(r["bounded"]),
            growth=float(r["growth"]),
            samples_per_s=r["samples_per_s"],
        )
        out.append(entry)
    return plain(pd.DataFrame(out))


def sustained(table: pd.DataFrame) -> pd.DataFrame:
    """The sustained throughput per machine, device and model: the highest offered rate that was sustained
    below the first that was not (every rate is a doubling, so the true figure lies in [rate, next_rate)), and the
    rate that step achieved (`achieved`: the rows it committed per second, which the page reports as sustained);
    next_rate is NaN where no measured rate failed (open above), rate NaN where even the lowest failed."""
    if table.empty:
        return pd.DataFrame()
    keys = ["machine_id", "gpu_model", "device", "device_name", "spark_master", "model"]
    out = []
    for values, group in table.groupby(keys, sort=True, dropna=False):
        group = group.sort_values("rate")
        failed = group[~group["bounded"]]
        first_fail = failed["rate"].min() if len(failed) else np.nan
        held = group[group["bounded"] & ~(group["rate"] > first_fail)]
        best = held.iloc[-1] if len(held) else None
        entry = dict(zip(keys, values, strict=True))
        entry.update(
            rate=float(best["rate"]) if best is not None else np.nan,
            achieved=float(best["samples_per_s"]) if best is not None else np.nan,  # what that step delivered
            next_rate=float(first_fail),
            p99_s=best["p99_s"] if best is not None else np.nan,
            p99_s_lo=best["p99_s_lo"] if best is not None else np.nan,
            p99_s_hi=best["p99_s_hi"] if best is not None else np.nan,
            rates=len(group),
        )
        out.append(entry)
    return pd.DataFrame(out)
