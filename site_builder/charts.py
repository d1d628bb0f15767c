"""Charts: a DataFrame in, an Altair chart out. No I/O; every chart has tooltips, every chart with a
categorical legend lets a click on the legend pick one series out, and every figure is drawn with its 95%
interval (error bars, or a band along a sweep). Charts fill their container's width where Vega-Lite allows
it (faceted charts have a fixed panel width and scroll sideways in their own box).

Strings from result files reach charts only as data values (Vega renders them as text, never as markup), and
only the fields a chart shows are embedded in the page. Chart data is bounded by design (summaries across
machines, a fixed number of machines in the heatmap), so a page never grows with the number of files.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from site_builder.render import framework as framework_name

HEATMAP_MACHINES = 40
SPEEDUP_AXIS = "speedup over the same machine's CPU (x)"


def _legend_highlight(chart: alt.Chart, field: str) -> alt.Chart:
    """Clicking a legend entry highlights its series and fades the rest."""
    pick = alt.selection_point(fields=[field], bind="legend")
    return chart.encode(opacity=alt.condition(pick, alt.value(1.0), alt.value(0.15))).add_params(pick)


CONTAINER = "container"


def one_x(axis: str = "x") -> alt.Chart:
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


def point_labels(table: pd.DataFrame) -> pd.Series:
    points = table["point"].astype("object").fillna("").astype(str)
    return pd.Series(
        [short_point(str(w), p) for w, p in zip(table["workload"], points, strict=True)], index=table.index
    )


def _interval_tooltips(field: str, title: str) -> list[alt.Tooltip]:
    return [
        alt.Tooltip(f"{field}:Q", format=".3g", title=title),
        alt.Tooltip(f"{field}_lo:Q", format=".3g", title="95% interval from"),
        alt.Tooltip(f"{field}_hi:Q", format=".3g", title="95% interval to"),
    ]


def _errorbar(base: alt.Chart, field: str, axis: str = "x") -> alt.Chart:
    """A rule from the interval's low to its high end (the interval marks every chart carries)."""
    if axis == "x":
        return base.mark_rule(strokeWidth=2).encode(x=f"{field}_lo:Q", x2=f"{field}_hi:Q")
    return base.mark_rule(strokeWidth=2).encode(y=f"{field}_lo:Q", y2=f"{field}_hi:Q")


def _dot_plot(
    base: alt.Chart, field: str, title: str, pick: str, shape: alt.Shape | None = None, size: int = 60
) -> alt.LayerChart:
    """One point per row at `field` (log x) with its interval bar and the 1x rule; a legend click on `pick`
    picks one series out. The shape of the site's dot plots; callers configure the legend."""
    points = base.mark_point(filled=True, size=size).encode(
        x=alt.X(f"{field}:Q", scale=alt.Scale(type="log"), title=title)
    )
    if shape is not None:
        points = points.encode(shape=shape)
    layered = _legend_highlight(_errorbar(base, field), pick) + _legend_highlight(points, pick) + one_x()
    return layered.properties(width=CONTAINER).configure_axisY(labelLimit=0, titleLimit=0)


def speedup_overview(summary: pd.DataFrame) -> alt.LayerChart:
    """Median speedup across machines per workload point, loop and accelerator model, log scale, with the
    median's 95% interval and its verdict (speedup_summary: of one machine, its leaderboard row's)."""
    data = ordered(summary).assign(
        label=lambda t: point_labels(t),
        series=lambda t: t["variant"].astype(str) + ", " + t["framework"].astype(str).map(framework_name),
    )
    data = data[
        [
            "label", "series", "variant", "framework", "gpu_model", "speedup", "speedup_lo", "speedup_hi", "verdict",
            "machines",
        ]
    ]  # fmt: skip
    tooltip: list[str | alt.Tooltip] = [
        alt.Tooltip("label:N", title="workload"),
        alt.Tooltip("series:N", title="loop, framework"),
        alt.Tooltip("gpu_model:N", title="accelerator"),
        *_interval_tooltips("speedup", "median speedup"),
        "verdict:N",
        "machines:Q",
    ]
    base = alt.Chart(data).encode(
        y=alt.Y("label:N", title=None, sort=list(dict.fromkeys(data["label"]))),
        # each loop and framework a row of its own within a point: JAX's and PyTorch's points never overlap
        yOffset=alt.YOffset("series:N"),
        color=alt.Color("gpu_model:N", title="accelerator"),
        tooltip=tooltip,
    )
    shape = alt.Shape("series:N", title="loop, framework")
    chart = _dot_plot(base, "speedup", SPEEDUP_AXIS, "gpu_model", shape)
    # one legend entry a line, each whole: at phone width two columns cut "NVIDIA H100 80GB HBM3" to "NVIDIA"
    return chart.configure_legend(orient="bottom", direction="vertical", columns=1, labelLimit=0, titleLimit=0)


def vendor_chart(summary: pd.DataFrame) -> alt.LayerChart:
    """Speedup per workload point by accelerator model, a colour per model (its vendor named in the legend): the
    median over machines with its 95% interval (the bar); the tooltip gives the range over machines."""
    data = ordered(summary).assign(
        label=lambda t: point_labels(t),
        accelerator=lambda t: [
            m if str(m).lower().startswith(str(v).lower()) else f"{v} {m}"
            for v, m in zip(t["gpu_vendor"], t["gpu_model"], strict=True)
        ],
        series=lambda t: t["gpu_model"].astype(str) + ", " + t["framework"].astype(str).map(framework_name),
    )
    cols = [
        "label", "variant", "framework", "gpu_vendor", "gpu_model", "accelerator", "series", "speedup", "speedup_lo",
        "speedup_hi", "lo", "hi",
    ]  # fmt: skip
    data = data[[*cols, "machines"]]
    tooltip: list[str | alt.Tooltip] = [
        alt.Tooltip("label:N", title="workload"),
        alt.Tooltip("variant:N", title="loop"),
        alt.Tooltip("gpu_vendor:N", title="vendor"),
        alt.Tooltip("gpu_model:N", title="accelerator"),
        "framework:N",
        *_interval_tooltips("speedup", "median speedup"),
        alt.Tooltip("lo:Q", format=".3g", title="slowest machine"),
        alt.Tooltip("hi:Q", format=".3g", title="fastest machine"),
        "machines:Q",
    ]
    base = alt.Chart(data).encode(
        y=alt.Y("label:N", title=None, sort=list(dict.fromkeys(data["label"]))),
        yOffset=alt.YOffset("series:N"),  # a row per accelerator and framework within each point
        # a colour per accelerator model (a vendor's colour made every NVIDIA model one green); the vendor is in the
        # legend's label and the tooltip
        color=alt.Color("accelerator:N", title="accelerator"),
        tooltip=tooltip,
    )
    loop = alt.Shape("variant:N", title="loop")
    chart = _dot_plot(base, "speedup", SPEEDUP_AXIS, "accelerator", loop, size=50)
    return chart.configure_legend(orient="bottom", direction="vertical", columns=1, labelLimit=0, titleLimit=0)


def machine_heatmap(table: pd.DataFrame, machines: list[str]) -> alt.FacetChart:
    """Speedup of every workload point on each of the given machines, coloured on a log scale around 1x; a
    cell whose 95% interval spans 1x is marked '?' (no clear winner)."""
    data = table[table["machine_id"].isin(machines)]
    data = ordered(data).assign(
        label=lambda t: point_labels(t),
        machine=lambda t: t["machine_id"].astype(str).str[:8] + " " + t["gpu_model"].astype(str),
        unclear=lambda t: (t["verdict"] == "no clear winner").map({True: "?", False: ""}),
    )
    cols = ["label", "machine", "machine_id", "variant", "framework", "cpu_model", "gpu_model", "speedup"]
    data = data[[*cols, "speedup_lo", "speedup_hi", "verdict", "unclear"]]
    # no data of its own: the facet hands each panel its rows (layers with data draw every row in every panel)
    base = alt.Chart().encode(
        x=alt.X("label:N", title=None, sort=list(dict.fromkeys(data["label"])), axis=alt.Axis(labelAngle=-60)),
        y=alt.Y("machine:N", title=None),
        tooltip=[
            alt.Tooltip("machine_id:N", title="machine"),
            alt.Tooltip("cpu_model:N", title="CPU"),
            alt.Tooltip("gpu_model:N", title="accelerator"),
            alt.Tooltip("label:N", title="workload"),
            "framework:N",
            *_interval_tooltips("speedup", "speedup"),
            "verdict:N",
        ],
    )
    cells = base.mark_rect().encode(
        color=alt.Color(
            "speedup:Q",
            title="speedup (x)",
            scale=alt.Scale(type="log", scheme="blueorange", domainMid=1),
            legend=alt.Legend(format=".3~g"),
        )
    )
    marks = base.mark_text(fontSize=10, fontWeight="bold").encode(text="unclear:N")
    layered = alt.layer(cells, marks).properties(width=alt.Step(14), height=alt.Step(16))
    faceted = layered.facet(column=alt.Column("variant:N", title="loop"), data=data)
    return faceted.configure_axisY(labelLimit=0, titleLimit=0).configure_axisX(labelLimit=0, titleLimit=0)


def crossover_chart(sweep: pd.DataFrame) -> alt.FacetChart:
    """Time per epoch against parameters, log-log: one line per device model and loop (median over machines)
    with its 95% band; one panel per framework, so frameworks never share a line."""
    data = sweep.assign(series=sweep["device"].astype(str) + ": " + sweep["device_name"].astype(str))
    cols = ["series", "device_name", "variant", "framework", "depth", "params", "median_s"]
    data = data[[*cols, "median_s_lo", "median_s_hi", "machines"]]
    x = alt.X("params:Q", scale=alt.Scale(type="log"), title="parameters")
    # no data of its own: the facet hands each framework's panel its rows (layers with data drew every framework's
    # rows in every panel, joined into one sawtooth line)
    base = alt.Chart().encode(
        x=x,
        color=alt.Color("series:N", title="device"),
        detail="variant:N",
        tooltip=[
            alt.Tooltip("device_name:N", title="device"),
            alt.Tooltip("variant:N", title="loop"),
            "framework:N",
            "depth:Q",
            alt.Tooltip("params:Q", format=","),
            *_interval_tooltips("median_s", "seconds"),
            "machines:Q",
        ],
    )
    band = base.mark_area(opacity=0.2).encode(
        y=alt.Y("median_s_lo:Q", scale=alt.Scale(type="log"), title="seconds per epoch (median over machines)"),
        y2="median_s_hi:Q",
    )
    lines = base.mark_line(point=True).encode(
        y=alt.Y("median_s:Q", scale=alt.Scale(type="log")), strokeDash=alt.StrokeDash("variant:N", title="loop")
    )
    layered = alt.layer(_legend_highlight(band, "series"), _legend_highlight(lines, "series"))
    return (
        # one panel under another: side by side, three frameworks ran past a desk's content width and a phone's
        layered.properties(width=280, height=240)
        .facet(facet=alt.Facet("framework:N", title=None), columns=1, data=data)
        .configure_legend(orient="bottom", columns=1, labelLimit=0, titleLimit=0)
    )


def batch_chart(table: pd.DataFrame, variant: str) -> alt.LayerChart:
    """Speedup over the CPU against batch size per accelerator model, model and mode (log-log), with the
    median's 95% band."""
    data = table[table["variant"] == variant]
    data = data.assign(series=data["gpu_model"].astype(str) + " · " + data["model"].astype(str))
    cols = ["series", "gpu_model", "model", "mode", "framework", "batch_size", "speedup"]
    data = data[[*cols, "speedup_lo", "speedup_hi", "machines"]]
    base = alt.Chart(data).encode(
        x=alt.X("batch_size:Q", scale=alt.Scale(type="log", base=2), title="batch size"),
        color=alt.Color("series:N", title="accelerator · model"),
        detail="mode:N",
        tooltip=[
            alt.Tooltip("gpu_model:N", title="accelerator"),
            "model:N",
            "mode:N",
            "framework:N",
            "batch_size:Q",
            *_interval_tooltips("speedup", "median speedup"),
            "machines:Q",
        ],
    )
    band = base.mark_area(opacity=0.2).encode(
        y=alt.Y("speedup_lo:Q", scale=alt.Scale(type="log"), title=SPEEDUP_AXIS), y2="speedup_hi:Q"
    )
    lines = base.mark_line(point=True).encode(
        y=alt.Y("speedup:Q", scale=alt.Scale(type="log")), strokeDash=alt.StrokeDash("mode:N", title="mode")
    )
    return (
        (_legend_highlight(band, "series") + _legend_highlight(lines, "series") + one_x("y"))
        .properties(width=CONTAINER, height=320)
        .configure_legend(orient="bottom", columns=1, labelLimit=0, titleLimit=0)
    )


def loop_chart(effect: pd.DataFrame) -> alt.LayerChart:
    """Each workload point per accelerator model: speedup with the as-written loop (x) and the tuned one (y),
    each with its 95% interval."""
    data = effect.assign(label=lambda t: point_labels(t), verdict=effect["flips"].map({True: "flips", False: "same"}))
    cols = ["label", "workload", "gpu_model", "framework", "as_written", "tuned", "verdict", "machines"]
    data = data[[*cols, "as_written_lo", "as_written_hi", "tuned_lo", "tuned_hi"]]
    log = alt.Scale(type="log")
    base = alt.Chart(data).encode(
        color=alt.Color("workload:N"),
        tooltip=[
            alt.Tooltip("label:N", title="workload"),
            alt.Tooltip("gpu_model:N", title="accelerator"),
            "framework:N",
            "machines:Q",
            *_interval_tooltips("as_written", "as-written"),
            *_interval_tooltips("tuned", "tuned"),
            "verdict:N",
        ],
    )
    points = base.mark_point(filled=True, size=70).encode(
        x=alt.X("as_written:Q", scale=log, title="speedup, as-written loop (x)"),
        y=alt.Y("tuned:Q", scale=log, title="speedup, tuned loop (x)"),
        shape=alt.Shape("verdict:N", title="CPU/GPU verdict"),
    )
    across = base.mark_rule().encode(x="as_written_lo:Q", x2="as_written_hi:Q", y="tuned:Q")
    up = base.mark_rule().encode(y="tuned_lo:Q", y2="tuned_hi:Q", x="as_written:Q")
    layered = alt.layer(
        _legend_highlight(across, "workload"),
        _legend_highlight(up, "workload"),
        _legend_highlight(points, "workload"),
        one_x("x"),
        one_x("y"),
    )
    return layered.properties(width=CONTAINER, height=400).configure_legend(orient="bottom")


def gain_chart(effect: pd.DataFrame) -> alt.LayerChart:
    """How much the tuned loop speeds up each side: as-written time over tuned time, CPU and accelerator,
    each with its 95% interval."""
    data = effect.assign(label=lambda t: point_labels(t))
    long = pd.concat(
        [
            data.assign(
                side="accelerator", gain=data["gpu_gain"], gain_lo=data["gpu_gain_lo"], gain_hi=data["gpu_gain_hi"]
            ),
            data.assign(side="CPU", gain=data["cpu_gain"], gain_lo=data["cpu_gain_lo"], gain_hi=data["cpu_gain_hi"]),
        ]
    )[["label", "gpu_model", "framework", "side", "gain", "gain_lo", "gain_hi", "machines"]]
    base = alt.Chart(long).encode(
        y=alt.Y("label:N", title=None, sort=None),
        yOffset=alt.YOffset("side:N"),
        color=alt.Color("side:N", title="device"),
        tooltip=[
            alt.Tooltip("label:N", title="workload"),
            alt.Tooltip("gpu_model:N", title="accelerator"),
            "framework:N",
            "machines:Q",
            "side:N",
            *_interval_tooltips("gain", "gain"),
        ],
    )
    title = "as-written time / tuned time (x)"
    return _dot_plot(base, "gain", title, "side").configure_legend(orient="bottom")


def framework_chart(table: pd.DataFrame) -> alt.LayerChart:
    """Each framework's time over PyTorch's on the same machine, device and workload, log scale, with the
    median's 95% interval."""
    data = ordered(table).assign(label=lambda t: point_labels(t))
    data = data[["label", "variant", "framework", "device", "device_name", "machines", "ratio", "ratio_lo", "ratio_hi"]]
    base = alt.Chart(data).encode(
        # the points in the order `ordered` gives them (depth 2 before 10), named: layers keep an explicit order
        y=alt.Y("label:N", title=None, sort=list(dict.fromkeys(data["label"]))),
        yOffset=alt.YOffset("framework:N"),
        color=alt.Color("framework:N"),
        tooltip=[
            alt.Tooltip("label:N", title="workload"),
            "variant:N",
            "framework:N",
            "device_name:N",
            "machines:Q",
            *_interval_tooltips("ratio", "time / PyTorch's"),
        ],
    )
    title = "time / PyTorch's time (below 1x: faster)"
    chart = _dot_plot(base, "ratio", title, "framework", alt.Shape("device:N"), size=70)
    return chart.configure_legend(orient="bottom")


def scaling_chart(table: pd.DataFrame, field: str) -> alt.LayerChart:
    """Data-parallel scaling against the number of processes (one per GPU), one line per machine, device, loop,
    model and run (a machine's CPU processes over gloo and its GPUs over NCCL are two lines, never one; two runs
    of one machine are two lines, so their spread shows): examples per second (`field` 'samples_per_s', log) or
    the efficiency ('efficiency', with the 90% target and perfect scaling drawn), each point with its 95%
    interval."""
    # short enough for the legend not to cut off the run (the tooltip names everything in full)
    data = table.assign(
        series=table["machine_id"].astype(str).str[:8]
        + " · "
        + table["device_name"].astype(str).str.replace("(R)", "", regex=False)
        + " · "
        + table["loop"].astype(str).str.replace("earlier loop: ", "earlier: ", regex=False)
        + " · "
        + table["model"].astype(str)
        + " · "
        + table["run"].astype(str).str[5:16]
    )
    cols = ["series", "machine_id", "gpu_model", "device_name", "loop", "model", "batch_size", "world_size", "run"]
    data = data[[*cols, field, f"{field}_lo", f"{field}_hi"]]
    efficiency = field == "efficiency"
    title = "efficiency: examples/s over N x one process's" if efficiency else "examples per second"
    scale = alt.Scale(zero=False) if efficiency else alt.Scale(type="log")
    base = alt.Chart(data).encode(
        x=alt.X("world_size:O", title="processes (GPUs)"),
        # 20 distinct colours: up to 20 lines (runs) never share one
        color=alt.Color("series:N", title="machine · device · loop · model · run", scale=alt.Scale(scheme="tableau20")),
        tooltip=[
            alt.Tooltip("machine_id:N", title="machine"),
            alt.Tooltip("device_name:N", title="device"),
            "loop:N",
            "model:N",
            alt.Tooltip("batch_size:Q", title="batch per process"),
            alt.Tooltip("world_size:O", title="processes"),
            alt.Tooltip("run:N", title="run started"),
            *_interval_tooltips(field, title),
        ],
    )
    bars = _errorbar(base, field, axis="y")
    points = base.mark_line(point=True).encode(y=alt.Y(f"{field}:Q", scale=scale, title=title))
    layers = _legend_highlight(bars, "series") + _legend_highlight(points, "series")
    if efficiency:
        rules = pd.DataFrame({"y": [1.0, 0.9], "what": ["perfect scaling", "90% target"]})
        layers += (
            alt.Chart(rules)
            .mark_rule(strokeDash=[4, 4], color="gray")
            .encode(y="y:Q", tooltip=[alt.Tooltip("what:N", title="line")])
        )
    return layers.properties(width=CONTAINER, height=280).configure_legend(
        orient="bottom", columns=1, labelLimit=0, titleLimit=0
    )


# The tooltip fields that name a Spark point's machine, device, master and model.
_SPARK_TOOLTIPS = (
    alt.Tooltip("machine_id:N", title="machine"),
    alt.Tooltip("device_name:N", title="device"),
    alt.Tooltip("spark_master:N", title="Spark master"),
    alt.Tooltip("model:N"),
)


def spark_chart(table: pd.DataFrame) -> alt.FacetChart:
    """Spark inference rows per second against rows per predict call, one line per machine, device and number
    of partitions, one panel per model, each point with its 95% interval."""
    data = table.assign(
        series=table["machine_id"].astype(str)
        + " · "
        + table["device"].astype(str)
        + " · "
        + table["partitions"].astype(int).astype(str)
        + " partitions"
    )
    field = "samples_per_s"
    base = alt.Chart().encode(
        x=alt.X("batch_size:O", title="rows per predict call"),
        color=alt.Color("series:N", title="machine · device · partitions"),
        tooltip=[
            *_SPARK_TOOLTIPS,
            alt.Tooltip("batch_size:Q", title="rows per call"),
            alt.Tooltip("partitions:Q", title="partitions"),
            *_interval_tooltips(field, "rows per second"),
        ],
    )
    bars = _errorbar(base, field, axis="y")
    y = alt.Y(f"{field}:Q", scale=alt.Scale(type="log"), title="rows per second")
    points = base.mark_line(point=True).encode(y=y)
    layers = alt.layer(bars, points, data=data)
    return (
        layers.properties(width=260, height=240)
        .facet(column=alt.Column("model:N", title=None))
        .configure_legend(orient="bottom", columns=1, labelLimit=0, titleLimit=0)
    )


def stream_chart(table: pd.DataFrame) -> alt.FacetChart:
    """Spark streaming: end-to-end latency (p50, p95, p99) against the offered rate, log-log, one line per
    machine, device and percentile, a panel per model; each point with its 95% interval (none drawn where too
    few latencies bound a side) and hollow where the rate was not sustained."""
    long = []
    for name in ("p50", "p95", "p99"):
        part = table.assign(
            percentile=name,
            latency_s=table[f"{name}_s"],
            latency_s_lo=table[f"{name}_s_lo"],
            latency_s_hi=table[f"{name}_s_hi"],
            sustained=np.where(table["bounded"], "sustained", "not sustained"),
        )
        long.append(part)
    data = pd.concat(long, ignore_index=True)
    data["series"] = data["machine_id"].astype(str) + " · " + data["device"].astype(str) + " · " + data["percentile"]
    field = "latency_s"
    base = alt.Chart().encode(
        x=alt.X("rate:Q", scale=alt.Scale(type="log"), title="offered rows per second"),
        color=alt.Color("series:N", title="machine · device · percentile"),
        tooltip=[
            *_SPARK_TOOLTIPS,
            alt.Tooltip("rate:Q", title="offered rows/s"),
            alt.Tooltip("percentile:N"),
            *_interval_tooltips(field, "latency (s)"),
            alt.Tooltip("sustained:N", title="rate"),
            alt.Tooltip("growth:Q", format=".3f", title="latency growth (s per s)"),
        ],
    )
    bars = _errorbar(base, field, axis="y")
    y = alt.Y(f"{field}:Q", scale=alt.Scale(type="log"), title="end-to-end latency (s)")
    line = base.mark_line().encode(y=y, strokeDash=alt.StrokeDash("percentile:N", title="percentile"))
    points = base.mark_point(size=60).encode(
        y=y, fill=alt.condition(alt.datum.sustained == "sustained", "series:N", alt.value("white"))
    )
    layers = alt.layer(bars, line, points, data=data)
    return (
        layers.properties(width=320, height=260)
        .facet(column=alt.Column("model:N", title=None))
        .configure_legend(orient="bottom", columns=1, labelLimit=0, titleLimit=0)
    )


def claim_chart(rows: pd.DataFrame, title: str) -> alt.LayerChart:
    """A seed claim: the published figure (a diamond) beside each machine's reproduction with its 95% interval,
    one row each, log x. `rows`: label, source ('published' or 'reproduction'), value, value_lo, value_hi."""
    data = rows[["label", "source", "value", "value_lo", "value_hi"]]
    base = alt.Chart(data).encode(
        y=alt.Y("label:N", title=None, sort=None),
        color=alt.Color("source:N", title=None, scale=alt.Scale(domain=["published", "reproduction"])),
        tooltip=[alt.Tooltip("label:N", title="row"), "source:N", *_interval_tooltips("value", title)],
    )
    points = base.mark_point(filled=True, size=90).encode(
        x=alt.X("value:Q", scale=alt.Scale(type="log"), title=title),
        shape=alt.Shape("source:N", scale=alt.Scale(domain=["published", "reproduction"], range=["diamond", "circle"])),
    )
    layered = (
        (_errorbar(base, "value") + points).properties(width=CONTAINER).configure_axisY(labelLimit=0, titleLimit=0)
    )
    return layered.configure_legend(orient="bottom")
