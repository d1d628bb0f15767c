"""Charts: a DataFrame in, an Altair chart out. No I/O; every chart has tooltips and a clickable legend.

Strings from result files reach charts only as data values (Vega renders them as text, never as markup), and
only the fields a chart shows are embedded in the page.
"""

from __future__ import annotations

import altair as alt
import pandas as pd


def _legend_highlight(chart: alt.Chart, field: str) -> alt.Chart:
    """Clicking a legend entry highlights its series and fades the rest."""
    pick = alt.selection_point(fields=[field], bind="legend")
    return chart.encode(opacity=alt.condition(pick, alt.value(1.0), alt.value(0.15))).add_params(pick)


def speedup_chart(table: pd.DataFrame) -> alt.LayerChart:
    """GPU-over-CPU speedup per workload point and accelerator, log scale; 1x is the break-even rule."""
    shown = ["workload", "point", "variant", "framework", "gpu_model", "cpu_model"]
    data = table.sort_values(["workload", "params", "point"])[[*shown, "speedup", "median_s", "median_s_cpu"]]
    data = data.assign(label=data["workload"] + " " + data["point"].fillna(""))
    points = (
        alt.Chart(data)
        .mark_point(filled=True, size=80)
        .encode(
            x=alt.X("speedup:Q", scale=alt.Scale(type="log"), title="speedup over the same machine's CPU (x)"),
            y=alt.Y("label:N", title=None, sort=None),
            color=alt.Color("gpu_model:N", title="accelerator"),
            shape=alt.Shape("variant:N"),
            tooltip=[
                *shown,
                alt.Tooltip("speedup:Q", format=".2f"),
                alt.Tooltip("median_s:Q", format=".4g"),
                alt.Tooltip("median_s_cpu:Q", format=".4g"),
            ],
        )
    )
    rule = alt.Chart(pd.DataFrame({"x": [1.0]})).mark_rule(strokeDash=[4, 4]).encode(x="x:Q")
    return (_legend_highlight(points, "gpu_model") + rule).properties(width=520).configure_axisY(labelLimit=320)


def crossover_chart(frame: pd.DataFrame, workload: str = "depth-sweep") -> alt.Chart:
    """Time per epoch against parameters, log-log, one line per machine and device."""
    shown = ["machine_id", "device_name", "variant", "framework", "depth"]
    data = frame[(frame["workload"] == workload) & (frame["status"] == "ok")][[*shown, "device", "params", "median_s"]]
    data = data.assign(series=data["machine_id"].str[:8] + " " + data["device"] + " (" + data["device_name"] + ")")
    lines = (
        alt.Chart(data)
        .mark_line(point=True)
        .encode(
            x=alt.X("params:Q", scale=alt.Scale(type="log"), title="parameters"),
            y=alt.Y("median_s:Q", scale=alt.Scale(type="log"), title="seconds per epoch"),
            color=alt.Color("series:N", title="machine and device"),
            strokeDash=alt.StrokeDash("variant:N"),
            tooltip=[*shown, alt.Tooltip("params:Q", format=","), alt.Tooltip("median_s:Q", format=".4g")],
        )
    )
    return _legend_highlight(lines, "series").properties(width=640, height=360)
