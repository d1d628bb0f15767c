"""The end-of-run summary: each workload point's CPU time against the best accelerator's."""

from __future__ import annotations

from typing import Any

from runner.results.schema import ResultFile


def format_seconds(seconds: float) -> str:
    """A duration with three significant digits in s, ms or µs."""
    if seconds >= 1:
        return f"{seconds:.3g} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} µs"


def speedup_rows(result: ResultFile) -> list[dict[str, Any]]:
    """One row per (workload, point, variant, framework) with CPU and best-accelerator medians.

    speedup = CPU time / accelerator time, so above 1 means the accelerator wins.
    """
    table: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for m in result.measurements:
        if m.status != "ok" or m.median_s is None or m.unit == "latency":  # a latency is not a time per unit
            continue
        point = ", ".join(f"{k}={v}" for k, v in m.point.items())
        row = table.setdefault(
            (m.workload, point, m.variant, m.framework),
            {
                "workload": m.workload,
                "point": point,
                "variant": m.variant,
                "framework": m.framework,
                "cpu_s": None,
                "accel_s": None,
                "accel": None,
            },
        )
        if m.device == "cpu":
            row["cpu_s"] = m.median_s
        elif row["accel_s"] is None or m.median_s < row["accel_s"]:
            row["accel_s"], row["accel"] = m.median_s, m.device
    rows = list(table.values())
    for row in rows:
        row["speedup"] = row["cpu_s"] / row["accel_s"] if row["cpu_s"] and row["accel_s"] else None
    return rows
