"""Charts: a DataFrame in, an Altair chart out. No I/O; every chart has tooltips, and every chart with a
categorical legend lets a click on the legend pick one series out.

Strings from result files reach charts only as data values (Vega renders them as text, never as markup), and
only the fields a chart shows are embedded in the page. Chart data is bounded by design (summaries across
machines, a fixed number of machines in the heatmap), so a page never grows with the number of files.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

HEATMAP_MACHINES = 40
SPEEDUP_AXIS = "speedup over the same machine's CPU (x)"


def _legend_highlight(chart: alt.Chart, field: str) -> alt.Chart:
    """Clicking a legend entry highlights its series and fades the rest."""
    pick = alt.selection_point(fields=[field], bind="legend")
    return chart.encode(opacity=alt.condition(pick, alt.value(1.0), alt.value(0.15))).add_params(pick)


def _one_x(axis: str = "x") -> alt.Chart:
    """The dashed 1x rule: left of it (or below it) the CPU wins."""
    rule = alt.Chart(pd.DataFrame({"one": [1.0]})).mark_rule(strokeDash=[4, 4], color="#555")
    return rule.encode(x="one:Q") if axis == "x" else rule.encode(y="one:Q")


def short_point(workload: str, point: str) -> str:
    """A compact label for a workload point: 'depth-sweep d=8', 'bert-base train bs32', 'cifar-lenet'."""
    if not point:
        return workload
    values = dict(part.split("=", 1) for part in point.split(", ") if "=" in part)
    if "model" in values:
        return " ".join(
            x
            for x in (
                values["model"],
                values.get("mode", ""),
                f"bs{values['batch_size']}" if "batch_size" in values else "",
            )
            if x
        )
    if "depth" in values and len(values) == 1:
        return f"{workload} d={values['depth']}"
    return f"{workload} [{point}]"


def _natural(values: pd.Series) -> pd.Series:
    """Sort key that orders numbers inside text by value: 'batch_size=32' before 'batch_size=256'."""
    return values.astype("object").fillna("").astype(str).str.replace(r"\d+", lambda m: m.group().zfill(10), regex=True)


def ordered(table: pd.DataFrame) -> pd.DataFrame:
    """Workload, then model size, then the point in natural order."""
    return (
        table.assign(_order=_natural(table["point"]))
        .sort_values(["workload", "params", "_order"])
        .drop(columns="_order")
    )


def _label(table: pd.DataFrame) -> pd.Series:
    points = table["point"].astype("object").fillna("").astype(str)
    return pd.Series(
        [short_point(str(w), p) for w, p in zip(table["workload"], points, strict=True)], index=table.index
    )


def speedup_overview(summary: pd.DataFrame) -> alt.LayerChart:
    """Median speedup across machines per workload point, loop and accelerator model, log scale."""
    data = ordered(summary).assign(label=lambda t: _label(t))
    data = data[["label", "variant", "framework", "gpu_model", "speedup", "lo", "hi", "machines"]]
    points = (
        alt.Chart(data)
        .mark_point(filled=True, size=70)
        .encode(
            x=alt.X("speedup:Q", scale=alt.Scale(type="log"), title=SPEEDUP_AXIS),
            y=alt.Y("label:N", title=None, sort=None),
            color=alt.Color("gpu_model:N", title="accelerator"),
            shape=alt.Shape("variant:N", title="loop"),
            tooltip=[
                alt.Tooltip("label:N", title="workload"),
                alt.Tooltip("variant:N", title="loop"),
                "framework:N",
                alt.Tooltip("gpu_model:N", title="accelerator"),
                alt.Tooltip("speedup:Q", format=".2f", title="median speedup"),
                alt.Tooltip("lo:Q", format=".2f", title="lowest"),
                alt.Tooltip("hi:Q", format=".2f", title="highest"),
                "machines:Q",
            ],
        )
    )
    return (_legend_highlight(points, "gpu_model") + _one_x()).properties(width=520).configure_axisY(labelLimit=240)


def vendor_chart(summary: pd.DataFrame) -> alt.LayerChart:
    """Speedup per workload point by accelerator vendor: one point per accelerator model, a bar from the
    lowest to the highest machine."""
    data = ordered(summary).assign(label=lambda t: _label(t))
    data = data[["label", "variant", "gpu_vendor", "gpu_model", "speedup", "lo", "hi", "machines"]]
    base = alt.Chart(data).encode(
        y=alt.Y("label:N", title=None, sort=None),
        color=alt.Color(
            "gpu_vendor:N",
            title="vendor",
            scale=alt.Scale(
                domain=["NVIDIA", "AMD", "Apple", "Intel", "other"],
                range=["#76b900", "#ed1c24", "#555555", "#0071c5", "#999"],
            ),
        ),
    )
    tooltip = [
        alt.Tooltip("label:N", title="workload"),
        alt.Tooltip("variant:N", title="loop"),
        alt.Tooltip("gpu_vendor:N", title="vendor"),
        alt.Tooltip("gpu_model:N", title="accelerator"),
        alt.Tooltip("speedup:Q", format=".2f", title="median speedup"),
        alt.Tooltip("lo:Q", format=".2f", title="lowest"),
        alt.Tooltip("hi:Q", format=".2f", title="highest"),
        "machines:Q",
    ]
    ranges = base.mark_rule(opacity=0.5).encode(
        x=alt.X("lo:Q", scale=alt.Scale(type="log"), title=SPEEDUP_AXIS), x2="hi:Q", tooltip=tooltip
    )
    points = base.mark_point(filled=True, size=70).encode(
        x=alt.X("speedup:Q", scale=alt.Scale(type="log")), shape=alt.Shape("variant:N", title="loop"), tooltip=tooltip
    )
    layered = _legend_highlight(ranges, "gpu_vendor") + _legend_highlight(points, "gpu_vendor") + _one_x()
    return layered.properties(width=520).configure_axisY(labelLimit=240)


def machine_heatmap(table: pd.DataFrame, machines: list[str]) -> alt.FacetChart:
    """Speedup of every workload point on each of the given machines, coloured on a log scale around 1x."""
    data = table[table["machine_id"].isin(machines)]
    data = ordered(data).assign(
        label=lambda t: _label(t),
        machine=lambda t: t["machine_id"].astype(str).str[:8] + " " + t["gpu_model"].astype(str),
    )
    data = data[["label", "machine", "machine_id", "variant", "framework", "cpu_model", "gpu_model", "speedup"]]
    cells = (
        alt.Chart(data)
        .mark_rect()
        .encode(
            x=alt.X("label:N", title=None, sort=None, axis=alt.Axis(labelAngle=-50, labelLimit=200)),
            y=alt.Y("machine:N", title=None),
            color=alt.Color(
                "speedup:Q",
                title="speedup (x)",
                scale=alt.Scale(type="log", scheme="blueorange", domainMid=1),
            ),
            tooltip=[
                alt.Tooltip("machine_id:N", title="machine"),
                "cpu_model:N",
                alt.Tooltip("gpu_model:N", title="accelerator"),
                alt.Tooltip("label:N", title="workload"),
                "framework:N",
                alt.Tooltip("speedup:Q", format=".2f"),
            ],
        )
        .properties(width=alt.Step(14), height=alt.Step(16))
    )
    return cells.facet(column=alt.Column("variant:N", title="loop")).configure_axisY(labelLimit=260)


def crossover_chart(sweep: pd.DataFrame) -> alt.Chart:
    """Time per epoch against parameters, log-log: one line per device model and loop (median over machines)."""
    data = sweep.assign(series=sweep["device"].astype(str) + ": " + sweep["device_name"].astype(str))
    data = data[["series", "device_name", "variant", "framework", "depth", "params", "median_s", "machines"]]
    lines = (
        alt.Chart(data)
        .mark_line(point=True)
        .encode(
            x=alt.X("params:Q", scale=alt.Scale(type="log"), title="parameters"),
            y=alt.Y("median_s:Q", scale=alt.Scale(type="log"), title="seconds per epoch (median over machines)"),
            color=alt.Color("series:N", title="device"),
            strokeDash=alt.StrokeDash("variant:N", title="loop"),
            detail="framework:N",
            tooltip=[
                alt.Tooltip("device_name:N", title="device"),
                alt.Tooltip("variant:N", title="loop"),
                "framework:N",
                "depth:Q",
                alt.Tooltip("params:Q", format=","),
                alt.Tooltip("median_s:Q", format=".4g", title="seconds"),
                "machines:Q",
            ],
        )
    )
    return _legend_highlight(lines, "series").properties(width=640, height=360).configure_legend(labelLimit=400)


def batch_chart(table: pd.DataFrame, variant: str) -> alt.LayerChart:
    """Speedup over the CPU against batch size per accelerator model, model and mode (log-log)."""
    data = table[table["variant"] == variant]
    data = data.assign(series=data["gpu_model"].astype(str) + " · " + data["model"].astype(str))
    data = data[["series", "gpu_model", "model", "mode", "framework", "batch_size", "speedup", "machines"]]
    lines = (
        alt.Chart(data)
        .mark_line(point=True)
        .encode(
            x=alt.X("batch_size:Q", scale=alt.Scale(type="log", base=2), title="batch size"),
            y=alt.Y("speedup:Q", scale=alt.Scale(type="log"), title=SPEEDUP_AXIS),
            color=alt.Color("series:N", title="accelerator · model"),
            strokeDash=alt.StrokeDash("mode:N", title="mode"),
            detail="framework:N",
            tooltip=[
                alt.Tooltip("gpu_model:N", title="accelerator"),
                "model:N",
                "mode:N",
                "framework:N",
                "batch_size:Q",
                alt.Tooltip("speedup:Q", format=".2f", title="median speedup"),
                "machines:Q",
            ],
        )
    )
    return (
        (_legend_highlight(lines, "series") + _one_x("y"))
        .properties(width=560, height=320)
        .configure_legend(labelLimit=400)
    )


def loop_chart(effect: pd.DataFrame) -> alt.LayerChart:
    """Each workload point on each machine: speedup with the as-written loop (x) and the tuned one (y)."""
    data = effect.assign(label=lambda t: _label(t), verdict=effect["flips"].map({True: "flips", False: "same"}))
    data = data[["label", "workload", "gpu_model", "framework", "as_written", "tuned", "verdict", "machines"]]
    log = alt.Scale(type="log")
    points = (
        alt.Chart(data)
        .mark_point(filled=True, size=70)
        .encode(
            x=alt.X("as_written:Q", scale=log, title="speedup, as-written loop (x)"),
            y=alt.Y("tuned:Q", scale=log, title="speedup, tuned loop (x)"),
            color=alt.Color("workload:N"),
            shape=alt.Shape("verdict:N", title="CPU/GPU verdict"),
            tooltip=[
                alt.Tooltip("label:N", title="workload"),
                alt.Tooltip("gpu_model:N", title="accelerator"),
                "framework:N",
                "machines:Q",
                alt.Tooltip("as_written:Q", format=".2f", title="as-written"),
                alt.Tooltip("tuned:Q", format=".2f", title="tuned"),
                "verdict:N",
            ],
        )
    )
    return (_legend_highlight(points, "workload") + _one_x("x") + _one_x("y")).properties(width=480, height=400)


def gain_chart(effect: pd.DataFrame) -> alt.LayerChart:
    """How much the tuned loop speeds up each side: as-written time over tuned time, CPU and accelerator."""
    data = effect.assign(label=lambda t: _label(t))
    long = pd.concat(
        [
            data.assign(side="accelerator", gain=data["gpu_gain"]),
            data.assign(side="CPU", gain=data["cpu_gain"]),
        ]
    )[["label", "gpu_model", "framework", "side", "gain", "machines"]]
    points = (
        alt.Chart(long)
        .mark_point(filled=True, size=60)
        .encode(
            x=alt.X("gain:Q", scale=alt.Scale(type="log"), title="as-written time / tuned time (x)"),
            y=alt.Y("label:N", title=None, sort=None),
            color=alt.Color("side:N", title="device"),
            tooltip=[
                alt.Tooltip("label:N", title="workload"),
                alt.Tooltip("gpu_model:N", title="accelerator"),
                "framework:N",
                "machines:Q",
                "side:N",
                alt.Tooltip("gain:Q", format=".2f"),
            ],
        )
    )
    return (_legend_highlight(points, "side") + _one_x()).properties(width=520).configure_axisY(labelLimit=240)


def framework_chart(table: pd.DataFrame) -> alt.LayerChart:
    """Each framework's time over PyTorch's on the same machine, device and workload, log scale."""
    data = ordered(table).assign(label=lambda t: _label(t))
    data = data[["label", "variant", "framework", "device", "device_name", "machines", "ratio"]]
    points = (
        alt.Chart(data)
        .mark_point(filled=True, size=70)
        .encode(
            x=alt.X("ratio:Q", scale=alt.Scale(type="log"), title="time / PyTorch's time (below 1x: faster)"),
            y=alt.Y("label:N", title=None, sort=None),
            color=alt.Color("framework:N"),
            shape=alt.Shape("device:N"),
            tooltip=[
                alt.Tooltip("label:N", title="workload"),
                "variant:N",
                "framework:N",
                "device_name:N",
                "machines:Q",
                alt.Tooltip("ratio:Q", format=".2f"),
            ],
        )
    )
    return (_legend_highlight(points, "framework") + _one_x()).properties(width=520).configure_axisY(labelLimit=240)
