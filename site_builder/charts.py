"""Charts: a DataFrame in, an Altair chart out. No I/O; every chart has tooltips and a clickable legend.

Strings from result files reach charts only as data values (Vega renders them as text, never as markup).
"""

from __future__ import annotations

import altair as alt
import pandas as pd


def speedup_chart(table: pd.DataFrame) -> alt.Chart:
    """GPU-over-CPU speedup per workload point and accelerator, log scale; 1x is the break-even rule."""
    fields = [
        "workload",
        "point",
        "variant",
        "framework",
        "gpu_model",
        "cpu_model",
        "speedup",
        "median_s",
        "median_s_cpu",
    ]
    data = table[fields].assign(label=table["workload"] + " " + table["point"].fillna(""))
    pick = alt.selection_point(fields=["gpu_model"], bind="legend")
    bars = (
        alt.Chart(data)
        .mark_point(filled=True, size=80)
        .encode(
            x=alt.X("speedup:Q", scale=alt.Scale(type="log"), title="speedup over the same machine's CPU (x)"),
            y=alt.Y("label:N", title=None, sort=None),
            color=alt.Color("gpu_model:N", title="accelerator"),
            shape=alt.Shape("variant:N"),
            opacity=alt.condition(pick, alt.value(1.0), alt.value(0.15)),
            tooltip=[
                "workload",
                "point",
                "variant",
                "framework",
                "gpu_model",
                "cpu_model",
                alt.Tooltip("speedup:Q", format=".2f"),
                alt.Tooltip("median_s:Q", format=".4g"),
                alt.Tooltip("median_s_cpu:Q", format=".4g"),
            ],
        )
        .add_params(pick)
    )
    rule = alt.Chart(pd.DataFrame({"x": [1.0]})).mark_rule(strokeDash=[4, 4]).encode(x="x:Q")
    return (bars + rule).properties(width=520).configure_axisY(labelLimit=320)


def crossover_chart(frame: pd.DataFrame, workload: str = "depth-sweep") -> alt.Chart:
    """Time per epoch against parameters, log-log, one line per machine and device."""
    fields = ["machine_id", "device", "device_name", "variant", "framework", "depth", "params", "median_s"]
    data = frame[(frame["workload"] == workload) & (frame["status"] == "ok")][fields].copy()
    data["series"] = data["machine_id"].str[:8] + " " + data["device"] + " (" + data["device_name"] + ")"
    pick = alt.selection_point(fields=["series"], bind="legend")
    return (
        alt.Chart(data)
        .mark_line(point=True)
        .encode(
            x=alt.X("params:Q", scale=alt.Scale(type="log"), title="parameters"),
            y=alt.Y("median_s:Q", scale=alt.Scale(type="log"), title="seconds per epoch"),
            color=alt.Color("series:N", title="machine and device"),
            strokeDash=alt.StrokeDash("variant:N"),
            opacity=alt.condition(pick, alt.value(1.0), alt.value(0.15)),
            tooltip=[
                "machine_id",
                "device_name",
                "variant",
                "framework",
                "depth",
                alt.Tooltip("params:Q", format=","),
                alt.Tooltip("median_s:Q", format=".4g"),
            ],
        )
        .add_params(pick)
        .properties(width=640, height=360)
    )
