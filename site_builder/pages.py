"""Pages: frames in, Markdown out. A registry of (path, title, render); every file-sourced string escaped.

Every render function takes the Site (the data plus a record of the charts drawn) and returns Markdown. A
string that came from a result file goes through `esc` before it reaches a page, and into a chart only as a
data value. Pages stay bounded however many files there are: charts summarise across machines, and long
leaderboards show the fastest entries with the full table in the CSV.
"""

from __future__ import annotations

import functools
import html
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import altair as alt
import pandas as pd

from runner.summary import format_seconds
from site_builder import aggregate, charts
from site_builder.aggregate import MachineSummary
from site_builder.escape import text as esc

LEADERBOARD_ROWS_PER_GROUP = 25
LATEST_CONTRIBUTIONS = 10
WORKLOAD_TITLES = {
    "tabular-mlp": "seed 000: MLP on tabular data",
    "depth-sweep": "seed 001: MLP depth sweep",
    "cifar-lenet": "seed 002: LeNet on CIFAR-10",
    "transformer": "seed 003: transformers",
    "mnist-cnn": "seed 004: MNIST convnet",
}
FRAMEWORK_NAMES = {"torch": "PyTorch", "tensorflow": "TensorFlow", "jax": "JAX"}


@dataclass
class Site:
    """The data every page draws on, and the charts drawn so far (exported as PNG and SVG)."""

    frame: pd.DataFrame
    speedups: pd.DataFrame
    machines: dict[str, MachineSummary] = field(default_factory=dict)
    rejected: list[str] = field(default_factory=list)
    files: int = 0
    exports: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def from_collector(cls, collector: aggregate.Collector, rejected: list[str]) -> Site:
        frame = collector.frame()
        table = aggregate.speedups(frame) if not frame.empty else pd.DataFrame()
        return cls(frame, table, collector.machines, rejected, collector.files)

    @property
    def frameworks(self) -> list[str]:
        return sorted(self.frame["framework"].unique()) if not self.frame.empty else []

    @property
    def workloads(self) -> list[str]:
        return sorted(self.frame["workload"].unique()) if not self.frame.empty else []

    @functools.cached_property
    def crossings(self) -> pd.DataFrame:
        """Depth-sweep break-even per machine, loop, framework and accelerator."""
        return aggregate.crossovers(self.speedups)

    @functools.cached_property
    def batch_crossings(self) -> pd.DataFrame:
        return aggregate.batch_crossovers(self.speedups)

    @functools.cached_property
    def rows(self) -> pd.DataFrame:
        """Every measurement as plain columns with its speedup over the same machine's CPU (NaN if none)."""
        rows = aggregate.plain(self.frame)
        if self.speedups.empty:
            return rows.assign(speedup=float("nan"))
        speed = self.speedups[[*aggregate.KEY, "speedup"]]
        return rows.merge(speed, on=aggregate.KEY, how="left")

    @functools.cached_property
    def _by_machine(self) -> dict[str, pd.DataFrame]:
        return {str(key): group for key, group in self.rows.groupby("machine_id", sort=False)}

    def machine_rows(self, machine_id: str) -> pd.DataFrame:
        """One machine's measurements with their speedups; the rows are split by machine once, not per page."""
        return self._by_machine.get(machine_id, self.rows.iloc[:0])

    def chart(self, name: str, chart: alt.TopLevelMixin, prefix: str = "") -> str:
        """A placeholder that site JavaScript fills with vega-embed (the spec travels escaped in an
        attribute), and links to the PNG and SVG exports of the same chart."""
        spec = chart.to_dict()
        self.exports[name] = spec
        payload = html.escape(json.dumps(spec, separators=(",", ":")), quote=True)
        return (
            RAW.stash(f'<div class="benchsite-chart" id="chart-{name}" data-spec="{payload}"></div>') + "\n\n"
            f"Download this chart: [PNG]({prefix}charts/{name}.png) · [SVG]({prefix}charts/{name}.svg)\n"
        )


@dataclass(frozen=True)
class Page:
    path: str
    title: str
    render: Callable[[Site], str]
    in_nav: bool = True
    section: str | None = None


# --- formatting --------------------------------------------------------------------------------------------


def _seconds(value: float | None) -> str:
    return "-" if value is None or pd.isna(value) else format_seconds(value)


def _ci(row: Any) -> str:
    lo, hi = getattr(row, "ci_lo_s", None), getattr(row, "ci_hi_s", None)
    return f"{_seconds(lo)} .. {_seconds(hi)}" if lo is not None and pd.notna(lo) else "-"


def _x(value: float | None) -> str:
    return "-" if value is None or pd.isna(value) else f"{value:.2f}x"


def _count(value: float | None) -> str:
    return "-" if value is None or pd.isna(value) else f"{value:,.0f}"


def _framework(name: str) -> str:
    return esc(FRAMEWORK_NAMES.get(name, name))


def _machine_link(machine_id: str, prefix: str = "") -> str:
    return f"[{esc(machine_id)}]({prefix}machines/{machine_id}.md)"


def _accelerator(model: str) -> str:
    return esc(model) if model else "none"


_LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]*?)(\.md)?\)")
_STRONG = re.compile(r"\*\*([^*]+)\*\*")
_CODE = re.compile(r"`([^`]+)`")


def _cell_html(cell: str) -> str:
    """Our own Markdown in a cell (links to pages, bold, code) as HTML. Text from result files went through
    esc() first, which turns every Markdown character into a character reference, so none of it matches."""
    cell = _LINK.sub(lambda m: f'<a href="{m.group(2)}{".html" if m.group(3) else ""}">{m.group(1)}</a>', cell)
    cell = _STRONG.sub(r"<strong>\1</strong>", cell)
    return _CODE.sub(r"<code>\1</code>", cell)


class RawBlocks:
    """HTML that goes into a page untouched. Python-Markdown runs an HTML parser over every raw HTML block,
    which dominated long builds (a machine page's results, a leaderboard); a table is stashed here, its
    place marked by an HTML comment, and the hook's on_page_content puts it back after Markdown. Text from
    result files is escaped before it gets here (esc() makes '<' a character reference), so no file can
    forge a marker."""

    MARKER = re.compile(r"<!--benchsite-raw-(\d+)-->")

    def __init__(self) -> None:
        self.blocks: dict[str, str] = {}

    def stash(self, block: str) -> str:
        key = str(len(self.blocks))
        self.blocks[key] = block
        return f"<!--benchsite-raw-{key}-->"

    def restore(self, page_html: str) -> str:
        return self.MARKER.sub(lambda m: self.blocks.pop(m.group(1), m.group(0)), page_html)

    def clear(self) -> None:
        self.blocks.clear()


RAW = RawBlocks()


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A table of escaped cells as HTML, stashed past Markdown (see RawBlocks). Links point at the .html
    pages the offline build writes."""
    head = "".join(f"<th>{_cell_html(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_cell_html(c)}</td>" for c in row) + "</tr>" for row in rows)
    return ["", RAW.stash(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"), ""]


def _empty(title: str, what: str) -> str:
    return f"# {title}\n\nNo {what} yet. [Run benchsite](running.md) on your machine and contribute the file.\n"


# --- pages -------------------------------------------------------------------------------------------------


def home(site: Site) -> str:
    frame = site.frame
    machines = len(site.machines)
    accelerated = sum(1 for s in site.machines.values() if s.machine.accelerators)
    runs = sum(len(s.runs) for s in site.machines.values())
    lines = [
        "---",
        "hide:",
        "  - toc",
        "---",
        "",
        "# benchsite",
        "",
        "**For this model, on this hardware, should I train on the CPU or the GPU, and with which framework?** "
        "Every number here comes from a real `benchsite run` on the machine it names: the suite rebuilds five "
        "published CPU-against-GPU experiments and times each one the way its author wrote it (*as-written*) "
        "and the way an expert would (*tuned*).",
        "",
        f"**{machines}** machines ({accelerated} with an accelerator), **{runs}** runs, **{len(frame):,}** "
        "measurements.",
        "",
    ]
    if frame.empty:
        return "\n".join([*lines, "No results yet. [Run benchsite](running.md) and contribute the file."]) + "\n"
    if not site.speedups.empty:
        summary = aggregate.workload_summary(site.speedups)
        lines += [
            "## The answer at a glance",
            "",
            "Accelerator over the same machine's CPU (CPU time / accelerator time), median over every machine "
            "and workload size, with the range: above 1x the accelerator wins. *As-written* is the seed's own "
            "training loop, *tuned* the best loop for the device.",
            "",
        ]
        rows = []
        for workload, group in summary.groupby("workload", sort=True, observed=True):
            by_loop = {str(r.variant): r for r in group.itertuples()}
            cells = [
                f"[{esc(workload)}](leaderboards/{workload}.md)",
                esc(WORKLOAD_TITLES.get(str(workload), "")),
                str(group["machines"].max()),
            ]
            for variant in ("as-written", "tuned"):
                r = by_loop.get(variant)
                cells.append(
                    f"**{_x(r.median)}** ({_x(r.lo)} .. {_x(r.hi)}; accelerator faster in {r.gpu_wins:.0%})"
                    if r is not None
                    else "-"
                )
            rows.append(cells)
        lines += _table(["workload", "experiment", "machines", "as-written loop", "tuned loop"], rows)
        lines += [
            "",
            "Each point: the median speedup over machines with that accelerator, per workload size; hover for "
            "the range and the number of machines, click a legend entry to pick one accelerator out. Left of "
            "the dashed line the CPU wins.",
            "",
            site.chart("speedups-overview", charts.speedup_overview(aggregate.speedup_summary(site.speedups))),
        ]
    lines += [
        "See also: [speedups by vendor and machine](speedups.md) · [crossover](crossover.md) (where the GPU "
        "starts to win) · [as-written against tuned](loops.md) · [all machines](machines.md)"
        + (" · [frameworks](frameworks.md)" if len(site.frameworks) > 1 else ""),
        "",
        "## Latest contributions",
        "",
    ]
    latest = sorted(site.machines.items(), key=lambda kv: kv[1].started_at, reverse=True)[:LATEST_CONTRIBUTIONS]
    rows = [
        [
            _machine_link(mid),
            esc(s.machine.cpu.model),
            _accelerator(s.machine.accelerators[0].model if s.machine.accelerators else ""),
            esc(s.runs[-1][1] if s.runs else "-"),
            f"{s.started_at:%Y-%m-%d}",
        ]
        for mid, s in latest
    ]
    lines += _table(["machine", "CPU", "accelerator", "profile", "date"], rows)
    if site.rejected:
        lines += ["", f"{len(site.rejected)} contributed file(s) failed validation and are not shown."]
    return "\n".join(lines) + "\n"


def speedups_page(site: Site) -> str:
    title = "Speedups by vendor and by machine"
    if site.speedups.empty:
        return _empty(title, "accelerator results")
    summary = aggregate.speedup_summary(site.speedups)
    lines = [
        f"# {title}",
        "",
        "How much faster each accelerator trains each workload than the CPU in the same machine (CPU time / "
        "accelerator time, log scale; the dashed line is 1x). A speedup belongs to a machine, not to a GPU: "
        "a fast CPU beside the same GPU makes the ratio smaller.",
        "",
        "## By vendor",
        "",
        site.chart("speedups-by-vendor", charts.vendor_chart(summary)),
        "",
    ]
    by_vendor = summary.groupby(["gpu_vendor", "gpu_model", "variant"], observed=True).agg(
        machines=("machines", "max"), median=("speedup", "median"), lo=("lo", "min"), hi=("hi", "max")
    )
    rows = [
        [esc(vendor), esc(model), esc(variant), str(r.machines), _x(r.median), f"{_x(r.lo)} .. {_x(r.hi)}"]
        for (vendor, model, variant), r in zip(by_vendor.index, by_vendor.itertuples(), strict=True)
    ]
    lines += _table(["vendor", "accelerator", "loop", "machines", "median speedup", "range"], rows)
    newest = sorted(site.machines, key=lambda m: site.machines[m].started_at, reverse=True)
    shown = [m for m in newest if m in set(site.speedups["machine_id"])][: charts.HEATMAP_MACHINES]
    lines += [
        "",
        "## By machine",
        "",
        f"Every workload size on the {len(shown)} most recently contributed machines with an accelerator "
        "(orange: the accelerator wins; blue: the CPU wins). Each machine's page has the numbers.",
        "",
        site.chart("speedups-by-machine", charts.machine_heatmap(site.speedups, shown)),
    ]
    return "\n".join(lines) + "\n"


def crossover(site: Site) -> str:
    frame = site.frame
    lines = [
        "# Crossover: where the GPU starts to win",
        "",
        "## Model size: the depth sweep",
        "",
        "Seed 001 trained MLPs of growing depth on the CPU and the GPU and found the GPU slower below about "
        "700,000 parameters. Here: seconds per epoch against parameters, log-log, per machine and device; "
        "the table gives the break-even point, interpolated in log-log between the two sweep points where "
        "the ratio crosses 1.",
        "",
    ]
    if frame.empty or not (frame["workload"] == "depth-sweep").any():
        lines += ["No depth-sweep results yet.", ""]
    else:
        lines += [site.chart("crossover-depth", charts.crossover_chart(aggregate.sweep_by_device(frame))), ""]
        lines += _crossover_table(
            aggregate.crossover_summary(site.crossings), "break_even_params", "loop", "median break-even (parameters)"
        )
        lines += ["", "Each machine's own break-even point is on its page."]
    lines += [
        "",
        "## Batch size: the transformer sweeps",
        "",
        "A small batch leaves a big GPU idle between kernel launches; speedup over the CPU against batch size "
        "per model and mode.",
        "",
    ]
    batches = site.batch_crossings
    if batches.empty:
        lines.append("No batch-size sweeps with both a CPU and an accelerator yet.")
    else:
        table = aggregate.batch_by_accelerator(site.speedups)
        for variant in sorted(table["variant"].unique()):
            chart = site.chart(f"crossover-batch-{variant}", charts.batch_chart(table, variant))
            lines += [f"### {esc(variant)}", "", chart, ""]
        summary = aggregate.crossover_summary(
            batches.assign(variant=batches["variant"] + " " + batches["model"] + " " + batches["mode"]),
            at="break_even_batch",
        )
        lines += _crossover_table(summary, "break_even_batch", "loop, model and mode", "median break-even batch")
    return "\n".join(lines) + "\n"


def _crossover_table(summary: pd.DataFrame, at: str, what: str, title: str) -> list[str]:
    """A crossover_summary() table: per accelerator model and loop, the verdicts and the median break-even."""
    rows = [
        [
            _accelerator(r.gpu_model),
            esc(r.variant),
            _framework(r.framework),
            str(r.machines),
            esc(r.verdicts),
            _count(getattr(r, at)),
        ]
        for r in summary.itertuples()
    ]
    return _table(["accelerator", what, "framework", "machines", "verdicts", title], rows)


def loops_page(site: Site) -> str:
    title = "As-written against tuned"
    effect = aggregate.loop_effect(site.speedups)
    if effect.empty:
        return _empty(title, "workloads with both loops on a CPU and an accelerator")
    flips = effect[effect["flips"]]
    by_model = aggregate.loop_by_accelerator(effect)
    lines = [
        f"# {title}",
        "",
        "How much of the CPU-or-GPU verdict comes from the training loop rather than the hardware. The "
        "*as-written* loop is the seed's own code (a DataLoader with workers, a `.item()` per batch, one "
        "kernel launch per layer); the *tuned* loop keeps the data on the device, fuses the optimiser and, "
        "on CUDA, replays whole epochs from one CUDA graph. Each point is one workload size on one accelerator "
        "model (the median over its machines): its speedup over the CPU with each loop. Points in the "
        "top-left quadrant are where tuning turns a CPU win into a GPU win.",
        "",
        site.chart("loops-verdict", charts.loop_chart(by_model)),
        "",
        f"**The verdict flips with the loop in {len(flips)} of {len(effect)} comparisons** (one per machine, "
        "workload size and accelerator).",
        "",
        "Tuning speeds up both sides: *accelerator gain* and *CPU gain* are as-written time over tuned time "
        "on each device.",
        "",
        site.chart("loops-gain", charts.gain_chart(by_model)),
        "",
    ]
    ordered = by_model.sort_values(["flips", "workload", "point"], ascending=[False, True, True])
    rows = [
        [
            _accelerator(r.gpu_model),
            esc(r.workload),
            esc(r.point or "-"),
            _framework(r.framework),
            str(r.machines),
            _x(r.as_written),
            _x(r.tuned),
            "**yes**" if r.flips else "no",
            _x(r.gpu_gain),
            _x(r.cpu_gain),
        ]
        for r in ordered.itertuples()
    ]
    lines += _table(
        [
            "accelerator",
            "workload",
            "point",
            "framework",
            "machines",
            "speedup as-written",
            "speedup tuned",
            "verdict flips",
            "accelerator gain",
            "CPU gain",
        ],
        rows,
    )
    return "\n".join(lines) + "\n"


def frameworks_page(site: Site) -> str:
    table = aggregate.framework_comparison(site.frame)
    lines = [
        "# Frameworks",
        "",
        "The same workload (same model, data and loop: equal `workload_hash`) in each framework on the same "
        "machine and device: time over PyTorch's time (below 1x the framework is faster than PyTorch), median over "
        "the machines with each device.",
        "",
    ]
    checks = aggregate.equivalence_summary(site.machines)
    verdicts = {(r.framework, r.workload, r.point): _verdict(r) for r in checks.itertuples()}
    if table.empty:
        lines.append("No workload has been measured in two frameworks on one machine yet.")
    else:
        table = aggregate.frameworks_by_device(table)
        lines += _framework_ratios(site, table, verdicts)
    lines += [
        "",
        "## Equivalence with PyTorch",
        "",
        "Before measuring, `benchsite run` copies PyTorch's initial weights into each other framework's model and "
        "compares parameter count, forward FLOPs (counted from the framework's own traced computation), output "
        "shape, loss and gradients on one batch ([methodology](methodology.md#frameworks)). A comparison above "
        "is only as good as this check: *unchecked* rows come from runs with `--no-equivalence`.",
        "",
    ]
    lines += _table(
        ["framework", "workload", "point", "machines", "passed", "failed", "could not run", "worst gradient diff"],
        [
            [
                _framework(r.framework),
                esc(r.workload),
                esc(r.point or "-"),
                str(r.machines),
                str(r.passed),
                f"**{r.failed}**" if r.failed else "0",
                str(r.error),
                "-" if pd.isna(r.worst_grad_rel_diff) else f"{r.worst_grad_rel_diff:.1e}",
            ]
            for r in checks.itertuples()
        ],
    )
    versions = sorted({(f.name, f.version) for m in site.machines.values() for f in m.software.frameworks if f.version})
    if versions:
        lines += ["", "Versions measured: " + ", ".join(f"{_framework(n)} {esc(v)}" for n, v in versions) + "."]
    return "\n".join(lines) + "\n"


def _verdict(row: Any) -> str:
    if row.failed:
        return f"**failed on {row.failed} of {row.machines}**"
    if row.error:
        return f"could not run on {row.error} of {row.machines}"
    return "passed"


def _framework_ratios(site: Site, table: pd.DataFrame, verdicts: dict[tuple[str, str, str], str]) -> list[str]:
    lines = [site.chart("frameworks", charts.framework_chart(table)), ""]
    rows = [
        [
            f"{esc(r.device_name)} ({esc(r.device)})",
            esc(r.workload),
            esc(r.point or "-"),
            esc(r.variant),
            _framework(r.framework),
            str(r.machines),
            _seconds(r.median_s),
            _seconds(r.median_s_base),
            _x(r.ratio),
            verdicts.get((r.framework, r.workload, r.point), "unchecked"),
        ]
        for r in table.sort_values(["workload", "point", "variant", "device"]).itertuples()
    ]
    header = ["device", "workload", "point", "loop", "framework", "machines", "median", "PyTorch", "ratio"]
    return lines + _table([*header, "equivalence"], rows)


def machines_index(site: Site) -> str:
    lines = [
        "# Machines",
        "",
        "Every machine that contributed a result, newest first. A machine id is a hash of the hardware alone "
        "(CPU model, cores, accelerators): the same machine keeps its id across driver and OS upgrades.",
        "",
    ]
    counts = site.frame.groupby("machine_id", observed=True).size() if not site.frame.empty else pd.Series()
    rows = []
    for mid, s in sorted(site.machines.items(), key=lambda kv: kv[1].started_at, reverse=True):
        m = s.machine
        gpu = m.accelerators[0] if m.accelerators else None
        rows.append(
            [
                _machine_link(mid),
                esc(m.cpu.model),
                str(m.cpu.logical_cpus),
                f"{esc(gpu.model)}{f' x{gpu.count}' if gpu.count > 1 else ''}" if gpu else "none",
                esc(m.system_type),
                str(len(s.runs)),
                str(int(counts.get(mid, 0))),
                f"{s.started_at:%Y-%m-%d}",
            ]
        )
    lines += _table(["machine", "CPU", "threads", "accelerator", "type", "runs", "measurements", "latest"], rows)
    return "\n".join(lines) + "\n"


def machine_page(machine_id: str) -> Callable[[Site], str]:
    def render(site: Site) -> str:
        s = site.machines[machine_id]
        m, sw = s.machine, s.software
        cpu = m.cpu
        lines = [
            f"# Machine {esc(machine_id)}",
            "",
            f"{esc(cpu.model)}" + (f" with {esc(m.accelerators[0].model)}" if m.accelerators else ", no accelerator"),
            "",
            "## Fingerprint",
            "",
            "Hardware as `benchsite run` detected it in the newest run; no host name, user name, serial number or "
            "MAC address is ever collected.",
            "",
        ]
        facts = [
            ("CPU", esc(cpu.model)),
            ("CPU vendor / architecture", f"{esc(cpu.vendor)} / {esc(cpu.arch)}"),
            ("cores / threads / sockets", f"{cpu.physical_cores or '-'} / {cpu.logical_cpus} / {cpu.sockets or '-'}"),
            ("max clock", f"{cpu.max_mhz:,.0f} MHz" if cpu.max_mhz else "-"),
            ("ISA extensions", ", ".join(esc(f) for f in cpu.isa) or "-"),
            ("memory", f"{m.memory_gib:,.1f} GiB"),
            ("operating system", esc(" ".join(x for x in (m.os.system, m.os.release, m.os.distro or "") if x))),
            ("system type", f"{esc(m.system_type)} ({'; '.join(esc(e) for e in m.system_type_evidence) or '-'})"),
        ]
        lines += _table(["", ""], [[k, v] for k, v in facts])
        if m.accelerators:
            lines += ["", "### Accelerators", ""]
            lines += _table(
                ["vendor", "model", "count", "memory", "driver", "CUDA / ROCm", "compute", "found by"],
                [
                    [
                        esc(a.vendor),
                        esc(a.model),
                        str(a.count),
                        f"{a.memory_gib:,.1f} GiB" if a.memory_gib else "-",
                        esc(a.driver or "-"),
                        esc(a.cuda_version or a.rocm_version or "-"),
                        esc(a.compute_capability or a.gfx_target or (f"{a.cores} cores" if a.cores else "-")),
                        esc(a.source),
                    ]
                    for a in m.accelerators
                ],
            )
        lines += [
            "",
            "### Software",
            "",
            f"Python {esc(sw.python)} ({esc(sw.python_implementation)})"
            + (f", NumPy {esc(sw.numpy)}" if sw.numpy else ""),
            "",
        ]
        lines += _table(
            ["framework", "version", "devices", "threads", "build"],
            [
                [
                    _framework(f.name),
                    esc(f.version or "-") if f.available else f"unavailable: {esc(f.reason or '-')}",
                    ", ".join(esc(d) for d in f.devices) or "-",
                    ", ".join(f"{esc(k)} {v}" for k, v in f.threads.items()) or "-",
                    ", ".join(f"{esc(k)}={esc(v)}" for k, v in f.build.items() if v not in (None, False)) or "-",
                ]
                for f in sw.frameworks
            ],
        )
        if sw.env:
            lines += ["", "Environment: " + ", ".join(f"`{esc(k)}={esc(v)}`" for k, v in sw.env.items())]
        if s.equivalence:
            by_framework: dict[str, list[str]] = {}
            for (framework, _, _), (_, status, _) in sorted(s.equivalence.items()):
                by_framework.setdefault(framework, []).append(status)
            lines += [
                "",
                "Equivalence with PyTorch: "
                + "; ".join(
                    f"{_framework(f)} {st.count('passed')} of {len(st)} points passed" for f, st in by_framework.items()
                )
                + " ([what is checked](../methodology.md#frameworks)).",
            ]
        if s.sync_selftests:
            lines += ["", "### Synchronisation self-test", ""]
            lines += _table(
                ["framework", "device", "passed", "enqueue", "synchronised", "device events", "detail"],
                [
                    [
                        _framework(t.framework),
                        esc(t.device),
                        "yes" if t.passed else "**no**",
                        _seconds(t.unsynced_s),
                        _seconds(t.synced_s),
                        _seconds(t.reference_s),
                        esc(t.detail),
                    ]
                    for t in s.sync_selftests
                ],
            )
        lines += ["", "## Runs", ""]
        lines += _table(
            ["date", "profile", "command", "measurements"],
            [[f"{d:%Y-%m-%d %H:%M} UTC", esc(p), esc(c), str(n)] for d, p, c, n in sorted(s.runs, reverse=True)],
        )
        rows = site.machine_rows(machine_id)
        lines += [
            "",
            "## Results",
            "",
            "Every measurement, the newest run's where a measurement was repeated. *Speedup*: the same "
            "machine's CPU time over this device's time.",
            "",
        ]
        lines += _table(
            ["workload", "point", "loop", "framework", "device", "median", "95% CI", "samples/s", "speedup", "status"],
            [
                [
                    f"[{esc(r.workload)}](../leaderboards/{r.workload}.md)",
                    esc(r.point or "-"),
                    esc(r.variant),
                    _framework(r.framework),
                    f"{esc(r.device_name)} ({esc(r.device)})",
                    _seconds(r.median_s),
                    _ci(r),
                    _count(r.samples_per_s),
                    _x(r.speedup),
                    esc(r.status),
                ]
                for r in rows.sort_values(["workload", "point", "variant", "device"]).itertuples()
            ],
        )
        crossings = site.crossings[site.crossings["machine_id"] == machine_id]
        if not crossings.empty:
            lines += [
                "",
                "## Crossover",
                "",
                "Where this machine's accelerator starts to beat its CPU on the [depth sweep](../crossover.md).",
                "",
            ]
            lines += _table(
                ["accelerator", "loop", "framework", "verdict", "break-even (parameters)"],
                [
                    [
                        _accelerator(r.gpu_model),
                        esc(r.variant),
                        _framework(r.framework),
                        esc(r.verdict),
                        _count(r.break_even_params),
                    ]
                    for r in crossings.itertuples()
                ],
            )
        if s.top_ops:
            lines += [
                "",
                "## Top operators per device",
                "",
                "From the framework's profiler during the measured steps: the operators with the most self time "
                "(device time on an accelerator).",
                "",
            ]
            entries = sorted(
                (row for _, row in s.top_ops.values()),
                key=lambda r: (r["device"], r["workload"], r["point"], r["variant"]),
            )
            for device in sorted({r["device"] for r in entries}):
                lines += [f"### {esc(device)}", ""]
                table_rows = []
                for r in (e for e in entries if e["device"] == device):
                    for name, self_s, calls in r["ops"]:
                        table_rows.append(
                            [
                                esc(r["workload"]),
                                esc(r["point"] or "-"),
                                esc(r["variant"]),
                                _framework(r["framework"]),
                                f"`{esc(name)}`",
                                _seconds(self_s),
                                str(calls),
                            ]
                        )
                lines += _table(
                    ["workload", "point", "loop", "framework", "operator", "self time", "calls"], table_rows
                )
                lines.append("")
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


def leaderboard_frame(site: Site, workload: str) -> pd.DataFrame:
    """Every ok measurement of the workload, with the speedup over the same machine's CPU where there is one."""
    rows = site.rows[(site.rows["workload"] == workload) & (site.rows["status"] == "ok")]
    return rows.sort_values(["params", "point", "variant", "median_s"])[LEADERBOARD_COLUMNS]


def leaderboard(workload: str) -> Callable[[Site], str]:
    def render(site: Site) -> str:
        rows = leaderboard_frame(site, workload)
        shown = rows.groupby(["point", "variant"], sort=False, dropna=False).head(LEADERBOARD_ROWS_PER_GROUP)
        lines = [
            f"# Leaderboard: {esc(workload)}",
            "",
            f"{esc(WORKLOAD_TITLES.get(workload, ''))}. Fastest first within each workload size and loop; click a "
            f"column heading to sort. [Download the full table as CSV]({workload}.csv)",
            "",
        ]
        if len(shown) < len(rows):
            lines += [
                f"Showing the {LEADERBOARD_ROWS_PER_GROUP} fastest per size and loop ({len(shown):,} of "
                f"{len(rows):,}); the CSV has every row.",
                "",
            ]
        lines += _table(
            [
                "point",
                "loop",
                "machine",
                "CPU",
                "accelerator",
                "framework",
                "device",
                "median",
                "95% CI",
                "samples/s",
                "speedup vs CPU",
            ],
            [
                [
                    esc(r.point or "-"),
                    esc(r.variant),
                    _machine_link(r.machine_id, "../"),
                    esc(r.cpu_model),
                    _accelerator(r.gpu_model),
                    _framework(r.framework),
                    f"{esc(r.device_name)} ({esc(r.device)})",
                    _seconds(r.median_s),
                    _ci(r),
                    _count(r.samples_per_s),
                    _x(r.speedup),
                ]
                for r in shown.itertuples()
            ],
        )
        return "\n".join(lines) + "\n"

    return render


def csv_files(site: Site) -> dict[str, str]:
    """path -> CSV text, one per leaderboard (pandas quotes every field that needs it)."""
    return {
        f"leaderboards/{w}.csv": leaderboard_frame(site, w).map(_inert_cell).to_csv(index=False) for w in site.workloads
    }


def _inert_cell(value: object) -> object:
    """Spreadsheets run cells that start with = + - @ as formulas: prefix such text with a quote."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def registry(site: Site) -> list[Page]:
    """Every generated page, in navigation order; machine pages are reached from the machines index."""
    from site_builder import reference

    pages = [
        Page("index.md", "Home", home),
        Page("speedups.md", "Speedups", speedups_page),
        Page("crossover.md", "Crossover", crossover),
        Page("loops.md", "As-written vs tuned", loops_page),
    ]
    if len(site.frameworks) > 1:
        pages.append(Page("frameworks.md", "Frameworks", frameworks_page))
    pages += [Page(f"leaderboards/{w}.md", w, leaderboard(w), section="Leaderboards") for w in site.workloads]
    pages.append(Page("machines.md", "Machines", machines_index))
    pages += [Page(f"machines/{m}.md", f"Machine {m}", machine_page(m), in_nav=False) for m in sorted(site.machines)]
    pages += [
        Page("suite.md", "The suite", reference.suite_page, section="Reference"),
        Page("schema.md", "Result schema", reference.schema_page, section="Reference"),
    ]
    return pages
