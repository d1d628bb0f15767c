"""The two interactive pages: the advisor (CPU or GPU for my model?) and compare (two machines side by side).

Both are Vega-Lite charts whose controls are Vega-Lite parameters bound to form inputs (Altair), with every
number they can show computed here and embedded: no other JavaScript, no server, so they work offline and
over file://.

Advisor: for each accelerator model, the median speedup over its machines' CPUs (speedup_summary, with its
95% interval) along a measured sweep: the depth sweep by parameter count, each transformer model and mode
by batch size. Between two measured points the speedup and both interval ends are interpolated in log-log;
outside the measured range there is no estimate, and the page says so instead of extrapolating.

Compare: machine A's time over machine B's for every measurement both ran (same workload_hash, profile,
framework and device kind; every suite version, each labelled), with a 95% interval from each side's own
interval (log-normal, the two sides independent).
"""

from __future__ import annotations

import math
import re
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from runner.results import intervals
from runner.results.labels import cpu_label
from runner.workloads.base import VARIANTS
from site_builder.analyses.frames import ok_rows, top_models
from site_builder.analyses.speedups import TOO_FEW, speedup_summary
from site_builder.charts import one_x, ordered, point_labels

PARAM_STEPS = 4  # slider positions per decade of parameters
PARAM_RANGE = (1.0, 8.0)  # 10 .. 100,000,000 parameters
BATCH_RANGE = (0, 10)  # batch 1 .. 1024, powers of two
COMPARE_MACHINES = 60  # the newest machines offered by the compare page (its data grows with each)
# Concatenated views cannot take their container's width in Vega-Lite: a width that fits a phone, with the
# text of the answers broken into short lines.
PANEL_WIDTH = 300
Z95 = 1.959964
NO_WIDTH = -1.0  # the compare page's log-width of a measurement without an interval (a pair with one has none)


def _values(table: pd.DataFrame) -> pd.DataFrame:
    """A table for a chart, numbers to 5 significant digits to keep the page small. Its size is bounded here
    (by machines and device models), beyond Altair's default row limit, which Site.chart lifts."""
    return table.map(lambda v: float(f"{v:.5g}") if isinstance(v, float) and math.isfinite(v) else v)


def _interval_panel(
    base: alt.Chart,
    fields: tuple[str, str, str],
    title: str,
    y: alt.Y,
    color: alt.Color,
    tooltip: list[Any],
    row: int,
) -> alt.LayerChart:
    """A figure per row (log x) with its interval bar and the dashed 1x rule, PANEL_WIDTH wide."""
    value, lo, hi = fields
    scale = alt.Scale(type="log")
    bars = base.mark_rule(strokeWidth=2).encode(
        x=alt.X(f"{lo}:Q", scale=scale, title=title), x2=f"{hi}:Q", y=y, tooltip=tooltip
    )
    points = base.mark_point(filled=True, size=70).encode(
        x=alt.X(f"{value}:Q", scale=scale), y=y, color=color, tooltip=tooltip
    )
    return alt.layer(bars, points, one_x()).properties(width=PANEL_WIDTH, height=alt.Step(row))


def _families(summary: pd.DataFrame) -> list[tuple[str, str, pd.DataFrame]]:
    """(family label, axis, rows) for each sweep the advisor can read: the depth sweep along parameters and
    each transformer model and mode along batch size."""
    out = []
    depth = summary[summary["workload"] == "depth-sweep"]
    if not depth.empty:
        out.append(("MLP, by parameter count (seed 001's depth sweep)", "params", depth.assign(x=depth["params"])))
    batch = summary[summary["batch_size"].notna()]
    for point, group in batch.groupby(batch["point"].str.replace(r", batch_size=\d+", "", regex=True), sort=True):
        label = point.replace("model=", "").replace(", mode=", " ") + ", by batch size"
        out.append((label, "batch", group.assign(x=group["batch_size"].astype(float))))
    return out


def _interpolate(xs: np.ndarray, ys: np.ndarray, x: float) -> float:
    return float(np.exp(np.interp(math.log(x), np.log(xs), np.log(ys))))


GRID_COLUMNS = [
    "f", "a", "g", "x", "gpu", "fw", "loop", "s", "lo", "hi", "v", "w", "near", "href", "n", "low", "high",
]  # fmt: skip


def _estimate(sweep: pd.DataFrame, xs: np.ndarray, x: float) -> dict[str, Any]:
    """The grid's figure at size x (s, lo, hi), its verdict (v) and how it was had (w): at a measured point exactly
    that point's speedup_summary row (its leaderboard row's, for one machine; NaN where it has no interval), w empty;
    between two measured points the speedup and both interval ends interpolated in log-log, w naming the two points,
    and no interval where either point has none."""
    at = np.flatnonzero(np.abs(np.log(xs) - math.log(x)) < 1e-9)
    if len(at):
        row = sweep.iloc[int(at[0])]
        s, lo, hi, how = float(row["speedup"]), float(row["speedup_lo"]), float(row["speedup_hi"]), ""
    else:
        right = int(np.searchsorted(xs, x))
        pair = sweep.iloc[[right - 1, right]]
        s = _interpolate(xs, sweep["speedup"].to_numpy(float), x)
        lo = hi = float("nan")
        if pair["speedup_lo"].notna().all() and pair["speedup_hi"].notna().all():
            lo = _interpolate(xs[[right - 1, right]], pair["speedup_lo"].to_numpy(float), x)
            hi = _interpolate(xs[[right - 1, right]], pair["speedup_hi"].to_numpy(float), x)
        how = f"interpolated between {pair['point'].iloc[0]} and {pair['point'].iloc[1]}"
    said = intervals.verdict(lo, hi)  # no interval: no clear winner (the sentence says why)
    return {"s": s, "lo": lo, "hi": hi, "v": said, "w": how}


def row_anchor(point: str, variant: str) -> str:
    """The id of a leaderboard's first row for one workload point and loop (the advisor links it)."""
    named = point if isinstance(point, str) and point else "all"
    slug = re.sub(r"[^a-z0-9]+", "-", f"{named} {variant}".lower()).strip("-")
    return f"p-{slug}"


def advisor_grid(site_speedups: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """(grid, families). The grid has, per accelerator model, family (index f into families; axis a: 0
    parameters, 1 batch), framework and loop: one row per slider position g inside the measured range, with
    the interpolated speedup s and its interval (lo, hi), the nearest measured point, the address of its
    leaderboard row (href, from the site's root) and how many machines stand behind it; and one row with g = -1
    that gives the measured range (low, high), which the page shows where the slider is outside it. A family,
    framework and loop that no accelerator has (no machine timed it on both its CPU and an accelerator in the
    compared suite) gets one row with g = -2, so the page says so
    instead of showing nothing. Short names: the grid travels in the page."""
    if site_speedups.empty:
        return pd.DataFrame(columns=GRID_COLUMNS), []
    summary = speedup_summary(top_models(site_speedups, "gpu_model"))
    rows: list[dict[str, Any]] = []
    families = _families(summary)
    for f, (_, axis, part) in enumerate(families):
        positions = (
            [
                (g, 10 ** (g / PARAM_STEPS))
                for g in range(int(PARAM_RANGE[0] * PARAM_STEPS), int(PARAM_RANGE[1] * PARAM_STEPS) + 1)
            ]
            if axis == "params"
            else [(g, float(2**g)) for g in range(BATCH_RANGE[0], BATCH_RANGE[1] + 1)]
        )
        for (gpu, framework, variant), sweep in part.groupby(["gpu_model", "framework", "variant"], sort=True):
            sweep = sweep.sort_values("x").drop_duplicates("x")
            xs = sweep["x"].to_numpy(float)
            base = {"f": f, "a": 0 if axis == "params" else 1, "gpu": gpu, "fw": framework, "loop": variant}
            rows.append({**base, "g": -1, "low": xs[0], "high": xs[-1]})
            for g, x in positions:
                if not xs[0] * (1 - 1e-9) <= x <= xs[-1] * (1 + 1e-9):
                    continue  # outside the measured range: no estimate, the g = -1 row says why
                nearest = sweep.iloc[int(np.argmin(np.abs(np.log(xs) - math.log(x))))]
                rows.append(
                    {
                        **base,
                        "g": g,
                        "x": x,
                        **_estimate(sweep, xs, x),
                        "near": nearest["point"],
                        "href": f"leaderboards/{nearest['workload']}.html#{row_anchor(nearest['point'], variant)}",
                        "n": int(nearest["machines"]),
                    }
                )
    frameworks = sorted({row["fw"] for row in rows})
    have = {(row["f"], row["fw"], row["loop"]) for row in rows}
    for f, (_, axis, _) in enumerate(families):
        for framework in frameworks:
            for variant in VARIANTS:
                if (f, framework, variant) not in have:
                    a = 0 if axis == "params" else 1
                    rows.append({"f": f, "a": a, "g": -2, "gpu": "-", "fw": framework, "loop": variant})
    return pd.DataFrame(rows, columns=GRID_COLUMNS), [label for label, _, _ in families]


NOTHING_MEASURED = "no machine has timed this on its CPU and an accelerator"


def answer(row: dict[str, Any]) -> str:
    """The advisor's sentence for one accelerator's grid row, exactly as the page writes it below the chart
    (docs/javascripts/charts.js, benchsiteAdvisorAnswers), for tests and docs/methodology/uncertainty.md."""
    if row["g"] == -2:
        return f"No estimate: {NOTHING_MEASURED}."
    unit = "parameters" if row["a"] == 0 else "batch"
    if row["g"] == -1:
        return f"{row['gpu']}: no estimate, measured from {row['low']:,.0f} to {row['high']:,.0f} {unit} only."
    machines = f"{int(row['n'])} machine" + ("" if int(row["n"]) == 1 else "s")
    shown = (
        TOO_FEW if _missing(row["lo"]) or _missing(row["hi"]) else f"95% interval {row['lo']:.2f} .. {row['hi']:.2f}"
    )
    how = f"{row['w']}, nearest" if row["w"] else "at"
    return (
        f"{row['gpu']}: {row['s']:.2f}x its machine's CPU speed ({shown}), "
        f"{row['v']}; from {machines}, {how} measured point {row['near']}."
    )


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def human_count(n: float) -> str:
    """A size as a person writes it: 178,000 rather than 10^5.25 (three significant figures, thousands separated)."""
    return f"{float(f'{n:.3g}'):,.0f}"


def advisor_chart(grid: pd.DataFrame, families: list[str]) -> alt.LayerChart:
    """Pick a family, a size (parameters or batch), a framework and a loop: each accelerator's expected
    speedup with its interval. The answer in words, one sentence per accelerator (`answer`), is written into
    the page's text below the chart from the same grid and the same controls (docs/javascripts/charts.js)."""
    frameworks = sorted(grid["fw"].unique())
    family = alt.param(
        name="family",
        value=0,
        bind=alt.binding_select(options=list(range(len(families))), labels=families, name="Model "),
    )
    framework = alt.param(
        name="framework",
        value="torch" if "torch" in frameworks else frameworks[0],
        bind=alt.binding_select(options=frameworks, name="Framework "),
    )
    loop = alt.param(name="loop", value="as-written", bind=alt.binding_select(options=list(VARIANTS), name="Loop "))
    # Sizes offered in human units (a list of sizes, each labelled as a person writes it), not as exponents.
    param_steps = [
        PARAM_RANGE[0] + i / PARAM_STEPS for i in range(int((PARAM_RANGE[1] - PARAM_RANGE[0]) * PARAM_STEPS) + 1)
    ]
    params = alt.param(
        name="log_params",
        value=5.0,
        bind=alt.binding_select(
            options=param_steps, labels=[human_count(10**x) + " parameters" for x in param_steps], name="Size "
        ),
    )
    batch_steps = list(range(BATCH_RANGE[0], BATCH_RANGE[1] + 1))
    batch = alt.param(
        name="log_batch",
        value=5,
        bind=alt.binding_select(options=batch_steps, labels=[f"batch {2**b:,}" for b in batch_steps], name="Batch "),
    )
    position = f"(datum.a == 0 ? round(log_params * {PARAM_STEPS}) : log_batch)"
    chosen = (
        f"datum.f == family && datum.fw == framework && datum.loop == loop && (datum.g < 0 || datum.g == {position})"
    )
    # Per accelerator: the row at the slider's position if there is one, else its measured-range row.
    base = (
        alt.Chart(_values(grid))
        .transform_filter(chosen)
        .transform_joinaggregate(rows="count()", groupby=["gpu"])
        .transform_filter("datum.rows == 1 || datum.g != -1")
    )
    tooltip = [
        alt.Tooltip("gpu:N", title="accelerator"),
        alt.Tooltip("x:Q", format=",.0f", title="size"),
        alt.Tooltip("s:Q", format=".2f", title="expected speedup"),
        alt.Tooltip("lo:Q", format=".2f", title="95% interval from"),
        alt.Tooltip("hi:Q", format=".2f", title="95% interval to"),
        alt.Tooltip("near:N", title="nearest measured"),
        alt.Tooltip("n:Q", title="machines"),
    ]
    inside = base.transform_filter("datum.g >= 0")
    chart = _interval_panel(
        inside,
        ("s", "lo", "hi"),
        "expected speedup over the CPU (x)",
        alt.Y("gpu:N", title=None),
        alt.Color("gpu:N", legend=None),
        tooltip,
        row=36,
    )
    return chart.add_params(family, framework, loop, params, batch).properties(
        title="Expected speedup of each accelerator over its machine's CPU"
    )


def compare_data(site: Any) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(rows, machines, keys): every ok measurement of the newest machines that another of them also ran, slim
    (m: machine, k: measurement number, t: median seconds, s: log-width of its own 95% interval, NO_WIDTH where it
    has none); one
    fingerprint per machine; the measurements' labels by number."""
    newest = site.newest_machines[:COMPARE_MACHINES]
    wanted = set(newest)
    # The newest machines' rows are taken from each table first: the concatenation of every row of both, then in
    # plain columns, was a copy of the whole frame, which grows with the files, for a bounded number of machines.
    frame = site.frame[site.frame["machine_id"].isin(wanted)] if not site.frame.empty else site.frame
    if site.apart.empty:
        everything = frame
    else:
        everything = pd.concat([frame, site.apart[site.apart["machine_id"].isin(wanted)]], ignore_index=True)
    ok = ok_rows(everything)
    ok = ordered(ok).assign(label=lambda t: point_labels(t))
    width = np.log(ok["ci_hi_s"].astype(float) / ok["ci_lo_s"].astype(float)) / (2 * Z95)
    # Only the same measurement is paired: the hash names workload, size, loop and suite; the profile (time
    # budget) and the framework and device kind are in the key too.
    labels = (
        ok["label"]
        + " · "
        + ok["variant"]
        + " · "
        + ok["framework"]
        + " · "
        + ok["device"]
        + " · suite "
        + ok["suite"].astype(int).astype(str)
        + " "
        + ok["profile"].astype(str)
        + " · "
        + ok["workload_hash"].astype(str).str[:6]
    )
    # A measurement only one machine ran can never be paired: left out. Each row names its measurement by a
    # number; the labels travel once, in a table of their own.
    shared = labels.map(labels.groupby(labels).size()) > 1
    ok, labels, width = ok[shared], labels[shared], width[shared]
    keys = pd.DataFrame({"key": list(dict.fromkeys(labels))}).reset_index(names="k")
    rows = pd.DataFrame(
        {
            "m": ok["machine_id"].astype(str),
            "k": labels.map(dict(zip(keys["key"], keys["k"], strict=True))),
            "t": ok["median_s"].astype(float),
            "s": width.where(width > 0, NO_WIDTH),  # a measurement without an interval: no ratio interval either
        }
    )
    # Only machines with a measurement another also ran are offered: one with none (a machine that ran only the
    # data-parallel workload, say) would open the page on an empty table.
    paired = set(rows["m"])
    machines = pd.DataFrame(
        [
            {
                "machine_id": mid,
                "label": f"{mid[:8]} · {cpu_label(s.machine.cpu)}"
                + (f" + {s.machine.accelerators[0].model}" if s.machine.accelerators else ""),
                "fingerprint": "; ".join(
                    x
                    for x in (
                        s.machine.cpu.model,
                        f"{s.machine.cpu.logical_cpus} threads",
                        f"{s.machine.memory_gib:,.0f} GiB",
                        ", ".join(f"{a.model} x{a.count}" for a in s.machine.accelerators) or "no accelerator",
                        s.machine.os.system,
                        s.machine.system_type,
                    )
                    if x
                ),
            }
            for mid, s in ((m, site.machines[m]) for m in newest if m in paired)
        ]
    )
    return rows, machines, keys


def compare_chart(rows: pd.DataFrame, machines: pd.DataFrame, keys: pd.DataFrame) -> alt.VConcatChart:
    """Two pickers (machine A, machine B): their fingerprints, then per measurement both ran, A's time over
    B's with its 95% interval, as a chart and as a table."""
    ids = machines["machine_id"].tolist()
    labels = machines["label"].tolist()
    a = alt.param(name="a", value=ids[0], bind=alt.binding_select(options=ids, labels=labels, name="Machine A "))
    b = alt.param(
        name="b",
        value=ids[min(1, len(ids) - 1)],
        bind=alt.binding_select(options=ids, labels=labels, name="Machine B "),
    )
    paired = (
        alt.Chart(_values(rows))
        .transform_filter("datum.m == a || datum.m == b")
        .transform_calculate(
            ma="datum.m == a ? datum.t : 0",
            mb="datum.m == b ? datum.t : 0",
            la="datum.m == a ? datum.s : -2",
            lb="datum.m == b ? datum.s : -2",
        )
        .transform_aggregate(ma="max(ma)", mb="max(mb)", la="max(la)", lb="max(lb)", groupby=["k"])
        .transform_filter("datum.ma > 0 && datum.mb > 0")
        .transform_lookup(lookup="k", from_=alt.LookupData(_values(keys), "k", ["key"]))
        .transform_calculate(
            ratio="datum.ma / datum.mb",
            spread=f"{Z95} * sqrt(datum.la * datum.la + datum.lb * datum.lb)",
        )
        .transform_calculate(
            ratio_lo="datum.la < 0 || datum.lb < 0 ? null : datum.ratio * exp(-datum.spread)",
            ratio_hi="datum.la < 0 || datum.lb < 0 ? null : datum.ratio * exp(datum.spread)",
        )
        .transform_calculate(
            verdict="datum.ratio_lo === null ? 'no clear winner' : (datum.ratio_lo > 1 ? 'B faster' : "
            "(datum.ratio_hi < 1 ? 'A faster' : 'no clear winner'))",
            shown=f"datum.ratio_lo === null ? '{TOO_FEW}' : format(datum.ratio_lo, '.3f') + ' .. ' + "
            "format(datum.ratio_hi, '.3f')",
        )
    )
    tooltip = [
        alt.Tooltip("key:N", title="measurement"),
        alt.Tooltip("ma:Q", format=".4g", title="A seconds"),
        alt.Tooltip("mb:Q", format=".4g", title="B seconds"),
        alt.Tooltip("ratio:Q", format=".3f", title="A / B"),
        alt.Tooltip("ratio_lo:Q", format=".3f", title="95% interval from"),
        alt.Tooltip("ratio_hi:Q", format=".3f", title="95% interval to"),
        "verdict:N",
    ]
    verdicts = alt.Scale(domain=["A faster", "no clear winner", "B faster"], range=["#1f77b4", "#999999", "#ff7f0e"])
    chart = _interval_panel(
        paired,
        ("ratio", "ratio_lo", "ratio_hi"),
        "A's time / B's time (below 1x: A faster)",
        alt.Y("key:N", title=None, sort=alt.EncodingSortField("k")),
        alt.Color("verdict:N", scale=verdicts),
        tooltip,
        row=18,
    )
    fingerprint = (
        alt.Chart(_values(machines))
        .transform_filter("datum.machine_id == a || datum.machine_id == b")
        .transform_calculate(
            side="datum.machine_id == a ? 'A' : 'B'", line="datum.machine_id + ': ' + datum.fingerprint"
        )
        .mark_text(align="left", limit=1200)
        .encode(x=alt.value(0), y=alt.Y("side:N", title=None), text="line:N")
        .properties(width="container", height=alt.Step(20))
    )
    table = (
        paired.transform_calculate(
            line="format(datum.ma, '.4g') + ' s / ' + format(datum.mb, '.4g') + ' s = ' + format(datum.ratio, '.3f')"
            " + 'x (' + datum.shown + '): ' + datum.verdict"
        )
        .mark_text(align="left", fontSize=10)
        .encode(x=alt.value(0), y=alt.Y("key:N", title=None, sort=alt.EncodingSortField("k")), text="line:N")
        .properties(width=PANEL_WIDTH, height=alt.Step(18), title="A's time / B's time, per measurement both ran")
    )
    return alt.vconcat(fingerprint, chart, table).add_params(a, b).configure_axisY(labelLimit=0)
