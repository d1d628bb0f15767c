"""Pages: frames in, Markdown out. A registry of (path, title, render); every file-sourced string escaped."""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from dataclasses import dataclass

import altair as alt
import pandas as pd

from site_builder import aggregate, charts
from site_builder.escape import text as esc


@dataclass(frozen=True)
class Data:
    frame: pd.DataFrame
    speedups: pd.DataFrame
    rejected: list[str]


@dataclass(frozen=True)
class Page:
    path: str
    title: str
    render: Callable[[Data], str]


def chart_html(chart: alt.Chart | alt.LayerChart) -> str:
    """A placeholder that site JavaScript fills with vega-embed; the spec travels in an escaped attribute."""
    spec = json.dumps(chart.to_dict(), separators=(",", ":"))
    return f'<div class="benchsite-chart" data-spec="{html.escape(spec, quote=True)}"></div>'


def _seconds(value: float | None) -> str:
    if value is None or pd.isna(value):
        return "-"
    return f"{value:.3g} s" if value >= 1 else f"{value * 1e3:.3g} ms"


def _ci(row: object) -> str:
    lo, hi = getattr(row, "ci_lo_s", None), getattr(row, "ci_hi_s", None)
    return f"{_seconds(lo)} .. {_seconds(hi)}" if lo is not None and pd.notna(lo) else "-"


def home(data: Data) -> str:
    frame = data.frame
    machines = frame["machine_id"].nunique() if not frame.empty else 0
    runs = frame["run_id"].nunique() if not frame.empty else 0
    lines = [
        "# benchsite",
        "",
        "**For this model, on this hardware, should I train on the CPU or the GPU?** Each point is one "
        "workload on one machine: its accelerator's speedup over the same machine's CPU (log scale; left of "
        "the dashed line the CPU wins).",
        "",
        f"{machines} machines, {runs} runs, {len(frame)} measurements.",
        "",
    ]
    if not data.speedups.empty:
        lines += [chart_html(charts.speedup_chart(data.speedups)), ""]
    if not frame.empty:
        boards = ", ".join(f"[{esc(w)}](leaderboards/{w}.md)" for w in sorted(frame["workload"].unique()))
        lines += [f"**Leaderboards:** {boards}. **[Crossover](crossover.md)**: where the GPU starts to win.", ""]
        latest = frame.sort_values("started_at").drop_duplicates("run_id", keep="last").tail(10).iloc[::-1]
        lines += [
            "## Latest contributions",
            "",
            "| machine | CPU | accelerator | profile | date |",
            "|---|---|---|---|---|",
        ]
        for row in latest.itertuples():
            lines.append(
                f"| [{esc(row.machine_id)}](machines/{row.machine_id}.md) | {esc(row.cpu_model)} | "
                f"{esc(row.gpu_model or '-')} | {esc(row.profile)} | {row.started_at:%Y-%m-%d} |"
            )
    if data.rejected:
        lines += ["", f"{len(data.rejected)} contributed file(s) failed validation and are not shown."]
    return "\n".join(lines) + "\n"


def crossover(data: Data) -> str:
    lines = [
        "# Crossover: where the GPU starts to win",
        "",
        "The depth sweep (seed 001): seconds per epoch against parameters, log-log, per machine and device.",
        "",
    ]
    frame = data.frame
    if frame.empty or (frame["workload"] == "depth-sweep").sum() == 0:
        return "\n".join([*lines, "No depth-sweep results yet."]) + "\n"
    lines += [
        chart_html(charts.crossover_chart(frame)),
        "",
        "| machine | accelerator | variant | verdict | break-even (parameters) |",
        "|---|---|---|---|---|",
    ]
    for row in aggregate.crossovers(frame).itertuples():
        at = "-" if row.break_even_params is None or pd.isna(row.break_even_params) else f"{row.break_even_params:,.0f}"
        lines.append(
            f"| [{esc(row.machine_id)}](machines/{row.machine_id}.md) | {esc(row.gpu_model)} | "
            f"{esc(row.variant)} | {esc(row.verdict)} | {at} |"
        )
    return "\n".join(lines) + "\n"


def machine_page(machine_id: str) -> Callable[[Data], str]:
    def render(data: Data) -> str:
        rows = data.frame[data.frame["machine_id"] == machine_id].sort_values(
            ["workload", "point", "variant", "device"]
        )
        first = rows.iloc[0]
        lines = [
            f"# Machine {esc(machine_id)}",
            "",
            f"- CPU: {esc(first.cpu_model)}",
            f"- accelerator: {esc(first.gpu_model or 'none')}",
            f"- system type: {esc(first.system_type)}",
            "",
            "| workload | point | variant | framework | device | median | 95% CI | status |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for row in rows.itertuples():
            ci = _ci(row)
            lines.append(
                f"| {esc(row.workload)} | {esc(row.point or '-')} | {esc(row.variant)} | "
                f"{esc(row.framework)} | {esc(row.device_name)} ({esc(row.device)}) | "
                f"{_seconds(row.median_s)} | {ci} | {esc(row.status)} |"
            )
        return "\n".join(lines) + "\n"

    return render


LEADERBOARD_COLUMNS = [
    "machine_id",
    "cpu_model",
    "gpu_model",
    "framework",
    "variant",
    "point",
    "device",
    "device_name",
    "precision",
    "median_s",
    "ci_lo_s",
    "ci_hi_s",
    "samples_per_s",
    "speedup",
]


def leaderboard_frame(data: Data, workload: str) -> pd.DataFrame:
    """Every ok measurement of the workload, with the speedup over the same machine's CPU where there is one."""
    rows = data.frame[(data.frame["workload"] == workload) & (data.frame["status"] == "ok")]
    if not data.speedups.empty:
        speed = data.speedups[["machine_id", "workload_hash", "framework", "device", "speedup"]]
        rows = rows.merge(speed, on=["machine_id", "workload_hash", "framework", "device"], how="left")
    else:
        rows = rows.assign(speedup=None)
    return rows.sort_values(["point", "variant", "median_s"])[LEADERBOARD_COLUMNS]


def leaderboard(workload: str) -> Callable[[Data], str]:
    def render(data: Data) -> str:
        rows = leaderboard_frame(data, workload)
        lines = [
            f"# Leaderboard: {esc(workload)}",
            "",
            f"Fastest first within each point and variant. [Download as CSV]({workload}.csv)",
            "",
            "| point | variant | machine | CPU | accelerator | framework | device | median | 95% CI | samples/s |"
            " speedup vs CPU |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for row in rows.itertuples():
            speedup = "-" if row.speedup is None or pd.isna(row.speedup) else f"{row.speedup:.2f}x"
            ci = _ci(row)
            lines.append(
                f"| {esc(row.point or '-')} | {esc(row.variant)} | [{esc(row.machine_id)}](../machines/"
                f"{row.machine_id}.md) | {esc(row.cpu_model)} | {esc(row.gpu_model or '-')} | {esc(row.framework)} | "
                f"{esc(row.device_name)} ({esc(row.device)}) | {_seconds(row.median_s)} | {ci} | "
                f"{row.samples_per_s:,.0f} | {speedup} |"
            )
        return "\n".join(lines) + "\n"

    return render


def csv_files(data: Data) -> dict[str, str]:
    """path -> CSV text, one per leaderboard (pandas quotes every field that needs it)."""
    if data.frame.empty:
        return {}
    return {
        f"leaderboards/{w}.csv": leaderboard_frame(data, w).map(_inert_cell).to_csv(index=False)
        for w in sorted(data.frame["workload"].unique())
    }


def _inert_cell(value: object) -> object:
    """Spreadsheets run cells that start with = + - @ as formulas: prefix such text with a quote."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def registry(data: Data) -> list[Page]:
    pages = [Page("index.md", "Home", home), Page("crossover.md", "Crossover", crossover)]
    for workload in sorted(data.frame["workload"].unique()) if not data.frame.empty else []:
        pages.append(Page(f"leaderboards/{workload}.md", f"Leaderboard {workload}", leaderboard(workload)))
    for machine_id in sorted(data.frame["machine_id"].unique()) if not data.frame.empty else []:
        pages.append(Page(f"machines/{machine_id}.md", f"Machine {machine_id}", machine_page(machine_id)))
    return pages
