"""The two interactive pages: the advisor (CPU or GPU for my model?) and compare (two machines side by side).

Both are Vega-Lite charts whose controls are Vega-Lite parameters bound to form inputs (Altair), with every
number they can show computed here and embedded: no other JavaScript, no server, so they work offline and
over file://.

Advisor: for each accelerator model, the median speedup over its machines' CPUs (speedup_summary, with its
95% interval) along a measured sweep: the depth sweep by parameter count, each transformer model and mode
by batch size. Between two measured points the speedup and both interval ends are interpolated in log-log;
outside the measured range there is no estimate, and the page says so instead of extrapolating.

Compare: per device class and loop, the geometric mean of machine A's time over machine B's with its interval
(runner.contribute.standing.ratio_interval, precomputed per pair of machines) and how many measurements each wins;
then A's time over B's for every measurement both ran (same workload_hash, profile, framework and device kind; every
suite version, each labelled), grouped by workload, with a 95% interval from each side's own interval (log-normal,
the two sides independent).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, cast

import altair as alt
import numpy as np
import pandas as pd

from runner.contribute import standing
from runner.contribute.standing import device_class
from runner.results import intervals
from runner.results.labels import cpu_label
from runner.workloads.base import VARIANTS
from site_builder.analyses.frames import ok_rows, top_models
from site_builder.analyses.speedups import TOO_FEW, speedup_summary
from site_builder.charts import one_x, ordered, point_labels
from site_builder.render import per

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


def family_key(workload: str, point: str) -> str:
    """Which sweep of the advisor a suite point lies on: "depth-sweep" (along parameters), or a transformer model
    and mode (its point with or without the batch size, along batch size); "" for a point on none."""
    if workload == "depth-sweep":
        return workload
    if workload == "transformer":
        return f"{workload} " + re.sub(r", batch_size=\d+", "", point)
    return ""


def _families(summary: pd.DataFrame) -> list[tuple[str, str, pd.DataFrame]]:
    """(family label, axis, rows) for each sweep the advisor can read: the depth sweep along parameters and
    each transformer model and mode along batch size (family_key names them)."""
    out = []
    depth = summary[summary["workload"] == "depth-sweep"]
    if not depth.empty:
        out.append((DEPTH_FAMILY, "params", depth.assign(x=depth["params"])))
    batch = summary[summary["batch_size"].notna()]
    for point, group in batch.groupby(batch["point"].str.replace(r", batch_size=\d+", "", regex=True), sort=True):
        label = point.replace("model=", "").replace(", mode=", " ") + ", by batch size"
        out.append((label, "batch", group.assign(x=group["batch_size"].astype(float))))
    return out


DEPTH_FAMILY = "MLP, by parameter count (seed 001's depth sweep)"


def advisor_summary(site_speedups: pd.DataFrame) -> pd.DataFrame:
    """What the advisor reads: per workload point, loop, framework and accelerator model (the accelerator models
    most machines share), the median speedup over machines with its interval (speedup_summary), and the accelerator's
    median seconds a unit over those machines (t: what the money answer prices)."""
    if site_speedups.empty:
        return pd.DataFrame()
    table = top_models(site_speedups, "gpu_model")
    keys = ["workload", "point", "variant", "framework", "gpu_vendor", "gpu_model"]
    seconds = table.groupby(keys, dropna=False, observed=True, sort=False)["median_s"].median().rename("t")
    return speedup_summary(table).merge(seconds.reset_index(), on=keys, how="left")


@dataclass(frozen=True)
class Estimate:
    """The advisor's answer for one accelerator model, framework and loop at one size of one sweep: the figure the
    page shows at that size (s, lo, hi: NaN without an interval; verdict; how it was had), or why there is none."""

    family: str  # the sweep's label, as the page lists it
    x: float  # the size: parameters, or batch size
    s: float = float("nan")
    lo: float = float("nan")
    hi: float = float("nan")
    verdict: str = ""
    how: str = ""  # "" at a measured point, else which two points it was interpolated between
    machines: int = 0  # machines behind the nearest measured point
    why: str = ""  # where there is no figure: why

    @property
    def shown(self) -> bool:
        return not self.why


def estimate_at(summary: pd.DataFrame, key: str, gpu_model: str, framework: str, variant: str, x: float) -> Estimate:
    """The advisor's figure for the sweep `key` (family_key) at size x, for one accelerator model, framework and
    loop, computed as its page computes every position (_estimate), or an Estimate saying why there is none: no
    such sweep, no machine with that accelerator on it, or x outside the measured range (the advisor does not
    extrapolate)."""
    label = DEPTH_FAMILY if key == "depth-sweep" else ""
    if key.startswith("transformer "):
        label = key.removeprefix("transformer ").replace("model=", "").replace(", mode=", " ") + ", by batch size"
    family = next((part for name, _, part in _families(summary) if name == label), None) if label else None
    if family is None:
        return Estimate(label or key, x, why="the advisor has no sweep for it")
    sweep = family[
        (family["gpu_model"] == gpu_model) & (family["framework"] == framework) & (family["variant"] == variant)
    ]
    if sweep.empty:
        return Estimate(label, x, why=f"no published machine with the {gpu_model} has measured it ({variant})")
    sweep = sweep.sort_values("x").drop_duplicates("x")
    xs = sweep["x"].to_numpy(float)
    if not xs[0] * (1 - 1e-9) <= x <= xs[-1] * (1 + 1e-9):
        unit = "parameters" if key == "depth-sweep" else "batch"
        if len(xs) == 1:
            at = f"batch {xs[0]:,.0f}" if unit == "batch" else f"{xs[0]:,.0f} parameters"
            return Estimate(label, x, why=f"measured at {at} only")
        return Estimate(label, x, why=f"measured from {xs[0]:,.0f} to {xs[-1]:,.0f} {unit} only")
    got = _estimate(sweep, xs, x)
    nearest = sweep.iloc[int(np.argmin(np.abs(np.log(xs) - math.log(x))))]
    return Estimate(label, x, got["s"], got["lo"], got["hi"], got["v"], got["w"], int(nearest["machines"]))


def _interpolate(xs: np.ndarray, ys: np.ndarray, x: float) -> float:
    return float(np.exp(np.interp(math.log(x), np.log(xs), np.log(ys))))


GRID_COLUMNS = [
    "f", "a", "g", "x", "gpu", "fw", "loop", "s", "lo", "hi", "v", "w", "t", "near", "href", "n", "low", "high",
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
        t = float(row["t"]) if "t" in sweep.columns else float("nan")
    else:
        right = int(np.searchsorted(xs, x))
        pair = sweep.iloc[[right - 1, right]]
        s = _interpolate(xs, sweep["speedup"].to_numpy(float), x)
        lo = hi = float("nan")
        if pair["speedup_lo"].notna().all() and pair["speedup_hi"].notna().all():
            lo = _interpolate(xs[[right - 1, right]], pair["speedup_lo"].to_numpy(float), x)
            hi = _interpolate(xs[[right - 1, right]], pair["speedup_hi"].to_numpy(float), x)
        how = f"interpolated between {pair['point'].iloc[0]} and {pair['point'].iloc[1]}"
        t = _interpolate(xs, sweep["t"].to_numpy(float), x) if "t" in sweep.columns else float("nan")
    said = intervals.verdict(lo, hi)  # no interval: no clear winner (the sentence says why)
    return {"s": s, "lo": lo, "hi": hi, "v": said, "w": how, "t": t}


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
    summary = advisor_summary(site_speedups)
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


# Example prices of an hour (US dollars) that the advisor's money answer starts from; the reader types theirs.
CPU_USD_H, GPU_USD_H = 0.50, 4.00
MONEY_CHEAPER_GPU, MONEY_CHEAPER_CPU = "the accelerator's machine costs less", "the CPU machine costs less"


def usd(value: float) -> str:
    """Dollars with cents, and below a cent with two significant digits more: $0.35, $0.00112 (charts.js, usd)."""
    places = 2 if value >= 0.01 else max(2, math.ceil(-math.log10(value)) + 2) if value > 0 else 2
    return f"${value:,.{places}f}"


def money_answer(row: dict[str, Any], cpu_usd_h: float, gpu_usd_h: float) -> str:
    """The advisor's answer in money for one accelerator's grid row, at the reader's prices of an hour of the CPU
    machine and of the accelerator's machine, exactly as the page writes it (docs/javascripts/charts.js,
    benchsiteAdvisorAnswers): what 1,000 units cost on each, and the CPU's cost over the accelerator's (the
    speedup times the price ratio) with the speedup's own 95% interval scaled alike, and which costs less. "" where
    the row has no figure."""
    if row["g"] < 0 or _missing(row.get("t")) or _missing(row.get("s")) or gpu_usd_h <= 0 or cpu_usd_h <= 0:
        return ""
    unit = "epochs" if row["a"] == 0 else "steps"
    hours = float(row["t"]) * 1000 / 3600
    accelerator, cpu = hours * gpu_usd_h, hours * float(row["s"]) * cpu_usd_h
    k = cpu_usd_h / gpu_usd_h
    if _missing(row["lo"]) or _missing(row["hi"]):
        ratio, said = f"{float(row['s']) * k:.2f}x ({TOO_FEW})", intervals.NO_CLEAR_WINNER
    else:
        lo, hi = float(row["lo"]) * k, float(row["hi"]) * k
        ratio = f"{float(row['s']) * k:.2f}x (95% interval {lo:.2f} .. {hi:.2f})"
        said = intervals.verdict(lo, hi, MONEY_CHEAPER_GPU, MONEY_CHEAPER_CPU)
    return (
        f"{row['gpu']}: 1,000 {unit} cost {usd(cpu)} on the CPU and {usd(accelerator)} on the accelerator; CPU cost "
        f"over accelerator cost {ratio}: {said}."
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
    # The reader's prices: the page's money sentences read them (charts.js); the chart itself does not.
    cpu_price = alt.param(
        name="cpu_usd_h", value=CPU_USD_H, bind=alt.binding(input="number", name="CPU machine, $ an hour ")
    )
    gpu_price = alt.param(
        name="gpu_usd_h", value=GPU_USD_H, bind=alt.binding(input="number", name="accelerator's machine, $ an hour ")
    )
    return chart.add_params(family, framework, loop, params, batch, cpu_price, gpu_price).properties(
        title="Expected speedup of each accelerator over its machine's CPU"
    )


@dataclass(frozen=True)
class CompareData:
    """What the compare page draws, slim: `rows` every ok measurement of the newest machines that another of them
    also ran (m: machine, k: measurement number, t: median seconds, s: log-width of its own 95% interval, NO_WIDTH
    where it has none, x: 1 where it is unstable); `machines` one fingerprint per machine; `keys` each measurement's
    labels by number (key: the full label; w: workload; c: device class; l: loop; lab: the row's label within its
    workload; u: what its time is per; info: profile and workload hash; g: 1 where the summary counts it);
    `summary` per pair of machines, device class and loop (pcl: "A|B|class|loop" with A < B), the geometric mean of
    A's time over B's over the measurements both ran with an interval on both sides (r), its 95% interval (lo, hi)
    and their count (n)."""

    rows: pd.DataFrame
    machines: pd.DataFrame
    keys: pd.DataFrame
    summary: pd.DataFrame


def compare_data(site: Any) -> CompareData:
    """The compare page's data (CompareData) for the newest COMPARE_MACHINES machines."""
    newest = site.newest_machines[:COMPARE_MACHINES]
    wanted = set(newest)
    # The newest machines' rows are taken from each table first: the concatenation of every row of both, then in
    # plain columns, was a copy of the whole frame, which grows with the files, for a bounded number of machines.
    frame = site.frame[site.frame["machine_id"].isin(wanted)] if not site.frame.empty else site.frame
    if site.apart.empty:
        everything = frame
    else:
        everything = pd.concat([frame, site.apart[site.apart["machine_id"].isin(wanted)]], ignore_index=True)
    ok = ordered(ok_rows(everything)).reset_index(drop=True)
    # within a point (its workload's order), loop, framework and device in turn
    ok = ok.assign(_point=ok.groupby(["workload", "point"], sort=False, observed=True, dropna=False).ngroup())
    ok = ok.sort_values(["_point", "variant", "framework", "device"], kind="stable").drop(columns="_point")
    ok = ok.assign(label=lambda t: point_labels(t))
    width = np.log(ok["ci_hi_s"].astype(float) / ok["ci_lo_s"].astype(float)) / (2 * Z95)
    # Only the same measurement is paired: the hash names workload, size, loop and suite; the profile (time
    # budget) and the framework and device kind are in the key too.
    suite = "suite " + ok["suite"].astype(int).astype(str) + " " + ok["profile"].astype(str)
    within = pd.Series(
        [_within(str(w), str(lab)) for w, lab in zip(ok["workload"], ok["label"], strict=True)], index=ok.index
    )
    device = ok["device"].astype(str).map(lambda d: "CPU" if d == "cpu" else d.upper())
    labels = (
        ok["label"] + " · " + ok["variant"] + " · " + ok["framework"] + " · " + ok["device"] + " · " + suite
        + " · " + ok["workload_hash"].astype(str).str[:6]
    )  # fmt: skip
    short = (within + " · ").where(within != "", "") + ok["variant"] + " · " + ok["framework"] + " · " + device
    info = ok["profile"].astype(str) + " · " + ok["workload_hash"].astype(str).str[:6]
    # A measurement only one machine ran can never be paired: left out. Each row names its measurement by a
    # number; the labels travel once, in a table of their own.
    shared = labels.map(labels.groupby(labels).size()) > 1
    ok, labels, width, short, info = ok[shared], labels[shared], width[shared], short[shared], info[shared]
    first = (~labels.duplicated()).to_numpy()
    keys = pd.DataFrame(
        {
            "key": labels.to_numpy()[first],
            "w": ok["workload"].astype(str).to_numpy()[first],
            "c": [device_class(str(d)) for d in ok["device"].to_numpy()[first]],
            "l": ok["variant"].astype(str).to_numpy()[first],
            "lab": short.to_numpy()[first],
            "u": [per(u) for u in ok["unit"].to_numpy()[first]],
            "info": info.to_numpy()[first],
            "g": standing.timed(ok)[first].astype(int),  # in the summary: one device, a time (no latency)
        }
    ).reset_index(names="k")
    number = dict(zip(keys["key"], keys["k"], strict=True))
    rows = pd.DataFrame(
        {
            "m": ok["machine_id"].astype(str),
            "k": labels.map(number),
            "t": ok["median_s"].astype(float),
            "s": width.where(width > 0, NO_WIDTH),  # a measurement without an interval: no ratio interval either
            "x": ok["stable"].astype(object).eq(False).astype(int),  # unstable: marked on its row
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
    summary = _compare_summary(ok.assign(_k=labels.map(number).to_numpy()), keys, site.spread.tau2_of_time)
    return CompareData(rows, machines, keys, summary)


def _within(workload: str, label: str) -> str:
    """A point's label within its workload's group: 'd=4' of 'depth-sweep d=4'; empty for a workload of one point."""
    return label[len(workload) :].strip() if label.startswith(workload) else label


def _compare_summary(ok: pd.DataFrame, keys: pd.DataFrame, tau2: standing.Tau2) -> pd.DataFrame:
    """Per pair of machines (A < B), device class and loop: the geometric mean of A's time over B's over the
    measurements both ran, with its interval, as every standing computes it (runner.contribute.standing
    .ratio_interval: Student's t on each side's rounds, the spread between runs of each machine added)."""
    ok = ok.reset_index(drop=True)
    table = standing.TableRows(ok)
    timed = set(keys["k"][keys["g"] == 1])
    by_machine: dict[str, dict[int, standing.Row]] = {}
    for m, g in ok.groupby("machine_id", observed=True):
        rows = ((k, table.row(i)) for k, i in zip(g["_k"], g.index, strict=True) if k in timed)
        by_machine[str(m)] = {k: r for k, r in rows if r is not None}  # a row without samples: not compared
    group_of = dict(zip(keys["k"], zip(keys["c"], keys["l"], strict=True), strict=True))
    out = []
    machines = sorted(by_machine)
    for i, a in enumerate(machines):
        for b in machines[i + 1 :]:
            both = sorted(set(by_machine[a]) & set(by_machine[b]))
            groups: dict[tuple[str, str], list[int]] = {}
            for k in both:
                groups.setdefault(group_of[k], []).append(k)
            for (cls, loop), ks in sorted(groups.items()):
                # over the measurements with an interval on both sides (two rounds or more): one without makes
                # the whole geometric mean's interval unknown (ratio_interval)
                ks = [k for k in ks if by_machine[a][k].has_interval and by_machine[b][k].has_interval]
                if not ks:
                    continue
                mine = [by_machine[a][k] for k in ks]
                theirs = [by_machine[b][k] for k in ks]
                between = tau2(mine[0].device, loop, all(r.rounds for r in mine))
                between += tau2(theirs[0].device, loop, all(r.rounds for r in theirs))
                lo_hi = intervals.interval_or_none(*standing.ratio_interval(mine, theirs, between))
                logs = [math.log(m.median / t.median) for m, t in zip(mine, theirs, strict=True)]
                out.append(
                    {
                        "pcl": f"{a}|{b}|{cls}|{loop}",
                        "r": math.exp(sum(logs) / len(logs)),
                        "lo": lo_hi[0] if lo_hi else None,
                        "hi": lo_hi[1] if lo_hi else None,
                        "n": len(ks),
                    }
                )
    return pd.DataFrame(out, columns=["pcl", "r", "lo", "hi", "n"])


def _verdict_of(lo: str, hi: str) -> str:
    """The Vega expression of a time ratio A / B's verdict from its interval's ends (null: none)."""
    return f"{lo} == null ? 'no clear winner' : ({lo} > 1 ? 'B faster' : ({hi} < 1 ? 'A faster' : 'no clear winner'))"


VERDICTS = alt.Scale(domain=["A faster", "no clear winner", "B faster"], range=["#1f77b4", "#999999", "#ff7f0e"])
PAIR_KEY = "(a < b ? a + '|' + b : b + '|' + a)"  # the summary's pair key of the two picked machines


def compare_chart(data: CompareData) -> alt.VConcatChart:
    """Two pickers (machine A, machine B): their fingerprints; per device class and loop the geometric mean of A's
    time over B's with its interval and how many measurements each side wins; then every measurement both ran,
    grouped by workload, A's time over B's with its 95% interval and both times."""
    machines, keys = data.machines, data.keys
    ids = machines["machine_id"].tolist()
    labels = machines["label"].tolist()
    a = alt.param(name="a", value=ids[0], bind=alt.binding_select(options=ids, labels=labels, name="Machine A "))
    b = alt.param(
        name="b",
        value=ids[min(1, len(ids) - 1)],
        bind=alt.binding_select(options=ids, labels=labels, name="Machine B "),
    )
    paired = [
        alt.FilterTransform("datum.m == a || datum.m == b"),
        alt.CalculateTransform(calculate="datum.m == a ? datum.t : 0", **{"as": "ma"}),
        alt.CalculateTransform(calculate="datum.m == b ? datum.t : 0", **{"as": "mb"}),
        alt.CalculateTransform(calculate="datum.m == a ? datum.s : -2", **{"as": "la"}),
        alt.CalculateTransform(calculate="datum.m == b ? datum.s : -2", **{"as": "lb"}),
        alt.CalculateTransform(calculate="datum.m == a || datum.m == b ? datum.x : 0", **{"as": "x"}),
        alt.AggregateTransform(
            aggregate=[alt.AggregatedFieldDef(op="max", field=f, **{"as": f}) for f in ("ma", "mb", "la", "lb", "x")],
            groupby=["k"],
        ),
        alt.FilterTransform("datum.ma > 0 && datum.mb > 0"),
        alt.LookupTransform(
            lookup="k", **{"from": alt.LookupData(_values(keys), "k", ["key", "w", "c", "l", "lab", "u", "info", "g"])}
        ),
        alt.CalculateTransform(calculate="datum.ma / datum.mb", **{"as": "ratio"}),
        alt.CalculateTransform(
            calculate=f"{Z95} * sqrt(datum.la * datum.la + datum.lb * datum.lb)", **{"as": "spread"}
        ),
        alt.CalculateTransform(
            calculate="datum.la < 0 || datum.lb < 0 ? null : datum.ratio * exp(-datum.spread)", **{"as": "ratio_lo"}
        ),
        alt.CalculateTransform(
            calculate="datum.la < 0 || datum.lb < 0 ? null : datum.ratio * exp(datum.spread)", **{"as": "ratio_hi"}
        ),
        alt.CalculateTransform(calculate=_verdict_of("datum.ratio_lo", "datum.ratio_hi"), **{"as": "verdict"}),
        alt.CalculateTransform(
            calculate=f"datum.ratio_lo === null ? '{TOO_FEW}' : format(datum.ratio_lo, '.3f') + ' .. ' + "
            "format(datum.ratio_hi, '.3f')",
            **{"as": "shown"},
        ),
    ]
    fingerprint = (
        alt.Chart(_values(machines))
        .transform_filter("datum.machine_id == a || datum.machine_id == b")
        .transform_calculate(
            side="datum.machine_id == a ? 'A' : 'B'",
            parts="split(datum.fingerprint, '; ')",
        )
        .transform_calculate(
            lines="[datum.side + ': ' + datum.machine_id, join(slice(datum.parts, 0, 3), '; '), "
            "join(slice(datum.parts, 3), '; ')]"
        )
        .mark_text(align="left", baseline="top", lineHeight=15)
        .encode(x=alt.value(0), y=alt.Y("side:N", title=None, axis=None), text="lines:N")
        .properties(width=PANEL_WIDTH, height=alt.Step(50))
    )
    summary = alt.Chart(
        _values(data.rows),
        title="A's time / B's time, per device class and loop",
        transform=[
            *paired,
            alt.FilterTransform("datum.g == 1"),
            alt.CalculateTransform(calculate="datum.verdict == 'A faster' ? 1 : 0", **{"as": "wa"}),
            alt.CalculateTransform(calculate="datum.verdict == 'B faster' ? 1 : 0", **{"as": "wb"}),
            alt.AggregateTransform(
                aggregate=[
                    alt.AggregatedFieldDef(op="sum", field="wa", **{"as": "wa"}),
                    alt.AggregatedFieldDef(op="sum", field="wb", **{"as": "wb"}),
                    alt.AggregatedFieldDef(op="count", **{"as": "count"}),
                ],
                groupby=["c", "l"],
            ),
            alt.CalculateTransform(calculate=f"{PAIR_KEY} + '|' + datum.c + '|' + datum.l", **{"as": "pcl"}),
            alt.LookupTransform(
                lookup="pcl", **{"from": alt.LookupData(_values(data.summary), "pcl", ["r", "lo", "hi", "n"])}
            ),
            alt.CalculateTransform(calculate="a > b", **{"as": "flip"}),
            alt.CalculateTransform(calculate="datum.flip ? 1 / datum.r : datum.r", **{"as": "gr"}),
            alt.CalculateTransform(
                calculate="datum.lo == null ? null : (datum.flip ? 1 / datum.hi : datum.lo)", **{"as": "glo"}
            ),
            alt.CalculateTransform(
                calculate="datum.hi == null ? null : (datum.flip ? 1 / datum.lo : datum.hi)", **{"as": "ghi"}
            ),
            alt.CalculateTransform(calculate=_verdict_of("datum.glo", "datum.ghi"), **{"as": "gverdict"}),
            alt.CalculateTransform(
                calculate="datum.c + ', ' + datum.l + ': ' + (a == b ? 'A and B are the same machine' : datum.r == null"
                " ? 'no measurement with an interval on both sides' : format(datum.gr, '.3f') + 'x'"
                " + (datum.glo == null ? ', no interval' : ' (' + format(datum.glo, '.3f') + ' .. '"
                " + format(datum.ghi, '.3f') + '), ' + datum.gverdict))",
                **{"as": "head"},
            ),
            alt.CalculateTransform(
                calculate="datum.r == null ? '' : 'geometric mean over ' + datum.n + ' of them with intervals'",
                **{"as": "over"},
            ),
            alt.CalculateTransform(
                calculate="datum.count + (datum.count == 1 ? ' measurement' : ' measurements') + ': A faster in '"
                " + datum.wa + ', B in ' + datum.wb"
                " + ', neither in ' + (datum.count - datum.wa - datum.wb)",
                **{"as": "tail"},
            ),
            alt.CalculateTransform(calculate="[datum.head, datum.tail, datum.over]", **{"as": "lines"}),
        ],
    )
    summary = (
        summary.mark_text(align="left", baseline="top", lineHeight=15)
        .encode(x=alt.value(0), y=alt.Y("order:N", title=None, axis=None), text="lines:N")
        .transform_calculate(order="datum.c + ' ' + datum.l")
        .properties(width=PANEL_WIDTH, height=alt.Step(56))
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
    y = alt.Y("k:O", title=None, axis=None, sort="ascending")
    scale = alt.Scale(type="log")
    base = alt.Chart().transform_calculate(
        line1="datum.lab + ': ' + format(datum.ratio, '.3f') + 'x' + (datum.x > 0 ? ' (unstable)' : '')",
        line2="(datum.ratio_lo === null ? 'no interval' : '95% ' + datum.shown) + ' · A ' + format(datum.ma, '.4g')"
        " + ' s, B ' + format(datum.mb, '.4g') + ' s' + datum.u",
    )
    text1 = base.mark_text(align="left", baseline="bottom", dy=-4, fontSize=10.5).encode(
        x=alt.value(0), y=y, text="line1:N", tooltip=tooltip
    )
    text2 = base.mark_text(align="left", baseline="bottom", dy=8, fontSize=10, color="#555").encode(
        x=alt.value(0), y=y, text="line2:N", tooltip=tooltip
    )
    bars = base.mark_rule(strokeWidth=2, yOffset=16).encode(
        x=alt.X("ratio_lo:Q", scale=scale, title="A's time / B's time (below 1x: A faster)", axis=alt.Axis(grid=False)),
        x2="ratio_hi:Q",
        y=y,
        tooltip=tooltip,
    )
    points = base.mark_point(filled=True, size=60, yOffset=16).encode(
        x=alt.X("ratio:Q", scale=scale), y=y, color=alt.Color("verdict:N", scale=VERDICTS, legend=None), tooltip=tooltip
    )
    one = base.mark_tick(color="#555", thickness=1, size=14, yOffset=16).encode(x=alt.datum(1.0), y=y)
    rows = (
        alt.layer(bars, points, text1, text2, one, data=_values(data.rows), transform=paired)
        .properties(width=PANEL_WIDTH, height=alt.Step(48))
        .facet(
            row=alt.Row(
                "w:N",
                title=None,
                header=alt.Header(
                    labelAngle=0,
                    labelAlign="left",
                    labelAnchor="start",
                    labelFontWeight="bold",
                    labelFontSize=13,
                    labelOrient="top",
                ),
            ),
            spacing=14,
        )
        .resolve_scale(y="independent")
    )
    # the pickers are top-level parameters (Altair's add_params would push them into the faceted view, which it
    # cannot name)
    chart = alt.VConcatChart(vconcat=[fingerprint, summary, rows], params=[cast(Any, a.param), cast(Any, b.param)])
    return chart.configure_axisY(labelLimit=0).configure_view(stroke=None)
