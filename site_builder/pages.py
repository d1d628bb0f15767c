"""Pages: frames in, view data out, a Jinja2 template per page (site_builder/templates).

Every page is a registry entry (path, title, render). A render function builds plain view data from the Site
(dicts, lists, numbers and strings, with no HTML or Markdown in them) and hands it to its template, where
escaping is the default (site_builder.render). Pages stay bounded however many files there are: charts
summarise across machines, and long leaderboards show the fastest entries with the full table in the CSV.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel

from runner.results import intervals
from runner.results.labels import cpu_label
from site_builder import advisor, charts, memo, opendata, seeds
from site_builder.analyses.crossovers import batch_by_accelerator, crossover_summary, sweep_by_device
from site_builder.analyses.frames import ok_rows, states
from site_builder.analyses.scaling import scaling, scaling_spread
from site_builder.analyses.spark import spark_inference, spark_streaming, sustained
from site_builder.analyses.speedups import (
    TOO_FEW,
    equivalence_summary,
    framework_comparison,
    frameworks_by_device,
    glance,
    loop_by_accelerator,
    loop_effect,
    speedup_summary,
    summarise,
)
from site_builder.machines import MachineSummary, top_ops_rows
from site_builder.render import RAW, page_url, render
from site_builder.site import Site

__all__ = ["RAW", "Page", "csv_files", "registry"]

LEADERBOARD_ROWS_PER_GROUP = 25
GLANCE_MACHINES = 3  # machines named on a line of the answer at a glance; the rest are counted
GLANCE_LINES = 24  # lines of the answer at a glance per workload and loop (the kinds of machine most machines share)
LATEST_CONTRIBUTIONS = 10
WORKLOAD_TITLES = {
    "tabular-mlp": "seed 000: MLP on tabular data",
    "depth-sweep": "seed 001: MLP depth sweep",
    "cifar-lenet": "seed 002: LeNet on CIFAR-10",
    "transformer": "seed 003: transformers",
    "mnist-cnn": "seed 004: MNIST convnet",
}


@dataclass(frozen=True)
class Page:
    path: str
    title: str
    render: Callable[[Site], str]
    in_nav: bool = True
    section: str | None = None


def shows_energy(rows: pd.DataFrame) -> bool:
    """Whether a table of measurements gets the energy columns: some row has joules, says why it has none, or has a
    CPU-or-accelerator energy note."""
    said = (rows[c].astype(object).fillna("").astype(str).ne("").any() for c in ("energy_why", "energy_note"))
    return bool(not rows.empty and (rows["joules_per_unit"].notna().any() or any(said)))


def _records(table: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as dicts, missing values as None (a template prints them as '-')."""
    return [{k: (None if _missing(v) else v) for k, v in row.items()} for row in table.to_dict("records")]


def _missing(value: Any) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # lists and arrays are values, not missing
        return False


def _gpu(summary: MachineSummary) -> str:
    return summary.machine.accelerators[0].model if summary.machine.accelerators else ""


# --- pages -------------------------------------------------------------------------------------------------


def home(site: Site) -> str:
    view: dict[str, Any] = {
        "site": site.view(),
        "machines": len(site.machines),
        "accelerated": site.hardware.accelerated,
        "runs": site.hardware.runs,
        "measurements": len(site.frame) + len(site.apart),
        "several_frameworks": len(site.frameworks) > 1,
        "glance": [],
        "compared": 0,
        "overview": None,
        "rejected": len(site.rejected),
    }
    if not site.speedups.empty:
        view["compared"] = int(site.speedups["machine_id"].nunique())
        lines = glance(site.speedups)
        order = {w: i for i, w in enumerate(WORKLOAD_TITLES)}  # the seeds' order
        for workload, rows in sorted(
            lines.groupby("workload", sort=True, observed=True), key=lambda item: order.get(str(item[0]), len(order))
        ):
            # the kinds of machine most machines share, at most GLANCE_LINES a loop: the page stays short however
            # many CPUs and accelerators contribute (the leaderboard has every machine)
            ranked = rows.sort_values(["variant", "machines"], ascending=[True, False], kind="stable")
            shown = ranked.groupby("variant", sort=False).head(GLANCE_LINES).sort_index()
            records = _records(shown)
            for r in records:
                r["shown"] = r["machine_ids"][:GLANCE_MACHINES]
            view["glance"].append(
                {
                    "workload": workload,
                    "title": f"{WORKLOAD_TITLES.get(str(workload), '')} ({workload})",
                    "parts": bool(rows["part"].astype(bool).any()),
                    "rows": records,
                    "left_out": len(rows) - len(shown),
                }
            )
        view["overview"] = site.chart("speedups-overview", charts.speedup_overview(speedup_summary(site.speedups)))
    latest = [(m, site.machines[m]) for m in site.newest_machines[:LATEST_CONTRIBUTIONS]]
    view["latest"] = [
        {
            "id": mid,
            "cpu": cpu_label(s.machine.cpu),
            "gpu": _gpu(s),
            "profile": s.runs[-1][1] if s.runs else None,
            "date": f"{s.started_at:%Y-%m-%d}",
        }
        for mid, s in latest
    ]
    return render("home.md.j2", **view)


def speedups_page(site: Site) -> str:
    view: dict[str, Any] = {"site": site.view(), "empty": site.speedups.empty}
    if not site.speedups.empty:
        summary = speedup_summary(site.speedups)
        view["vendor_chart"] = site.chart("speedups-by-vendor", charts.vendor_chart(summary))
        by_model = summarise(
            site.speedups,
            ["gpu_vendor", "gpu_model", "variant"],
            "speedup",
            lo=("speedup", "min"),
            hi=("speedup", "max"),
            comparisons=("speedup", "size"),
            unclear=("verdict", lambda v: int((v == "no clear winner").sum())),
        )
        view["by_model"] = _records(by_model)
        measured = set(site.speedups["machine_id"])
        shown = [m for m in site.newest_machines if m in measured][: charts.HEATMAP_MACHINES]
        view["shown"] = len(shown)
        view["heatmap"] = site.chart("speedups-by-machine", charts.machine_heatmap(site.speedups, shown))
    return render("speedups.md.j2", **view)


def crossover(site: Site) -> str:
    view: dict[str, Any] = {"site": site.view(), "depth": None, "batch": None}
    frame = site.frame
    if not frame.empty and (frame["workload"] == "depth-sweep").any():
        view["depth"] = {
            "chart": site.chart("crossover-depth", charts.crossover_chart(sweep_by_device(frame))),
            "rows": _records(crossover_summary(site.crossings)),
        }
    batches = site.batch_crossings
    if not batches.empty:
        table = batch_by_accelerator(site.speedups)
        labelled = batches.assign(variant=batches["variant"] + " " + batches["model"] + " " + batches["mode"])
        view["batch"] = {
            "charts": [
                {"variant": v, "chart": site.chart(f"crossover-batch-{v}", charts.batch_chart(table, v))}
                for v in sorted(table["variant"].unique())
            ],
            "rows": _records(crossover_summary(labelled, at="break_even_batch")),
        }
    return render("crossover.md.j2", **view)


def loops_page(site: Site) -> str:
    effect = loop_effect(site.speedups)
    view: dict[str, Any] = {"site": site.view(), "empty": effect.empty}
    if not effect.empty:
        by_model = loop_by_accelerator(effect)
        view.update(
            verdict_chart=site.chart("loops-verdict", charts.loop_chart(by_model)),
            gain_chart=site.chart("loops-gain", charts.gain_chart(by_model)),
            flips=int(effect["flips"].sum()),
            comparisons=len(effect),
            rows=_records(by_model.sort_values(["flips", "workload", "point"], ascending=[False, True, True])),
        )
    return render("loops.md.j2", **view)


SCALE_MACHINES = 25  # machines each section of the scale page lists and draws (BENCHSITE_SCALE_MACHINES overrides)


def scale_machines() -> int:
    return max(1, int(os.environ.get("BENCHSITE_SCALE_MACHINES", SCALE_MACHINES)))


def _newest(site: Site, table: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int]]:
    """The rows of the scale_machines() most recently contributed machines among the table's (the machines index's
    order), and how many machines that leaves out of how many: the page lists every machine's own rows only up to
    that bound, however many files there are; every row is on its machine's page and in the open data."""
    present = set(table["machine_id"].astype(str))
    keep = set([m for m in site.newest_machines if m in present][: scale_machines()])
    return table[table["machine_id"].astype(str).isin(keep)], {"shown": len(keep), "machines": len(present)}


def scale_page(site: Site) -> str:
    table = scaling(site.scale_runs)
    view: dict[str, Any] = {"site": site.view(), "rows": [], "spread": [], "summary": []}
    if not table.empty:
        view["summary"] = _records(
            summarise(
                table[table["world_size"] > 1],
                ["device_name", "loop", "framework", "model", "batch_size", "world_size"],
                "efficiency",
                runs=("run_id", "nunique"),
                lo=("efficiency", "min"),
                hi=("efficiency", "max"),
            )
        )
        shown, view["ddp_count"] = _newest(site, table)
        view["rows"] = _records(shown)
        view["spread"] = _records(scaling_spread(shown))
        view["efficiency"] = site.chart("scale-efficiency", charts.scaling_chart(shown, "efficiency"))
        view["throughput"] = site.chart("scale-throughput", charts.scaling_chart(shown, "samples_per_s"))
    spark = spark_inference(site.frame)
    view["spark_rows"], view["spark_summary"] = [], []
    if not spark.empty:
        keys = ["device_name", "spark_master", "model", "batch_size", "partitions"]
        view["spark_summary"] = _records(
            summarise(
                spark, keys, "samples_per_s", lo=("samples_per_s", "min"), hi=("samples_per_s", "max")
            ).sort_values(keys)
        )
        shown, view["spark_count"] = _newest(site, spark)
        view["spark_rows"] = _records(shown)
        view["spark"] = site.chart("scale-spark", charts.spark_chart(shown))
    stream = spark_streaming(site.frame)
    view["stream_rows"], view["sustained_rows"] = [], []
    if not stream.empty:
        shown, view["stream_count"] = _newest(site, stream)
        view["stream_rows"] = _records(shown)
        view["sustained_rows"] = _records(sustained(shown))
        view["stream"] = site.chart("scale-stream", charts.stream_chart(shown))
    return render("scale.md.j2", **view)


def _equivalence_verdict(row: Any) -> str:
    if row.failed:
        return f"failed on {row.failed} of {row.machines}"
    if row.error:
        return f"could not run on {row.error} of {row.machines}"
    return "passed"


def frameworks_page(site: Site) -> str:
    table = framework_comparison(site.frame)
    checks = equivalence_summary(site.machines)
    verdicts = {(r.framework, r.workload, r.point): _equivalence_verdict(r) for r in checks.itertuples()}
    view: dict[str, Any] = {"site": site.view(), "chart": None, "ratios": [], "checks": _records(checks)}
    if not table.empty:
        by_device = frameworks_by_device(table)
        view["chart"] = site.chart("frameworks", charts.framework_chart(by_device))
        ratios = _records(by_device.sort_values(["workload", "point", "variant", "device"]))
        for r in ratios:
            r["equivalence"] = verdicts.get((r["framework"], r["workload"], r["point"]), "unchecked")
        view["ratios"] = ratios
    versions = sorted({(f.name, f.version) for m in site.machines.values() for f in m.software.frameworks if f.version})
    view["versions"] = [{"name": n, "version": v} for n, v in versions]
    return render("frameworks.md.j2", **view)


MACHINES_PER_PAGE = 500  # the machines index's rows per page (BENCHSITE_MACHINES_PER_PAGE overrides, for tests)


def machines_per_page() -> int:
    return max(1, int(os.environ.get("BENCHSITE_MACHINES_PER_PAGE", MACHINES_PER_PAGE)))


def machine_index_path(number: int) -> str:
    """The machines index's page `number` (1 is machines.md, in the navigation)."""
    return "machines.md" if number == 1 else f"machines/page-{number}.md"


def _machine_rows(site: Site) -> list[dict[str, Any]]:
    everything = pd.concat([site.frame, site.apart]) if not site.apart.empty else site.frame
    counts = everything.groupby("machine_id", observed=True).size() if not everything.empty else pd.Series()
    rows = []
    for mid in site.newest_machines:
        s = site.machines[mid]
        m = s.machine
        gpu = m.accelerators[0] if m.accelerators else None
        rows.append(
            {
                "id": mid,
                "cpu": cpu_label(m.cpu),
                "threads": m.cpu.logical_cpus,
                "gpu": gpu.model if gpu else "",
                "gpu_count": gpu.count if gpu else 0,
                "type": m.system_type,
                "runs": len(s.runs),
                "measurements": int(counts.get(mid, 0)),
                "date": f"{s.started_at:%Y-%m-%d}",
            }
        )
    return rows


def machines_index_pages(site: Site) -> list[Page]:
    """The machines index, newest first, machines_per_page() machines a page: the rows are made once for all."""
    per_page = machines_per_page()
    count = max(1, math.ceil(len(site.machines) / per_page))
    made: list[list[dict[str, Any]]] = []

    def rows() -> list[dict[str, Any]]:
        if not made:
            made.append(_machine_rows(site))
        return made[0]

    def page(number: int) -> Callable[[Site], str]:
        def render_page(site: Site) -> str:
            prefix = "" if number == 1 else "../"  # page 1 is at the top, the others under machines/

            def href(n: int) -> str:
                return prefix + page_url(machine_index_path(n))

            pager = {
                "number": number,
                "count": count,
                "pages": [{"number": n, "href": href(n), "here": n == number} for n in range(1, count + 1)],
                "newer": href(number - 1) if number > 1 else None,
                "older": href(number + 1) if number < count else None,
            }
            chunk = rows()[(number - 1) * per_page : number * per_page]
            return render(
                "machines.md.j2",
                site=site.view(),
                machines=chunk,
                prefix=prefix,
                pager=pager,
                first=(number - 1) * per_page + 1,
                total=len(site.machines),
            )

        return render_page

    return [
        Page(machine_index_path(n), "Machines" if n == 1 else f"Machines, page {n}", page(n), in_nav=n == 1)
        for n in range(1, count + 1)
    ]


def machine_search_entry(machine_id: str, s: MachineSummary) -> dict[str, Any]:
    """A machine page's one entry in the site's search index: what a person searches a machine by (its id, CPU,
    accelerators, memory, system), as HTML text escaped as every template escapes it. The page itself is left out
    of the theme's indexing (search: exclude), which parses every page's whole HTML: one short entry a machine
    keeps both the build and the index small when there are thousands."""
    m = s.machine
    cpu = m.cpu
    gpus = [
        " ".join(
            str(x)
            for x in (
                g.vendor,
                g.model,
                f"x{g.count}" if g.count > 1 else "",
                f"{g.memory_gib:,.1f} GiB" if g.memory_gib is not None else "",
                g.driver,
                g.cuda_version,
                g.rocm_version,
                g.compute_capability,
                g.gfx_target,
                g.source,
            )
            if x
        )
        for g in m.accelerators
    ]
    parts = [
        f"{cpu.model} with {m.accelerators[0].model}" if m.accelerators else f"{cpu.model}, no accelerator",
        f"CPU {cpu.model}, {cpu.vendor} / {cpu.arch}, {cpu.logical_cpus} threads, memory {m.memory_gib:,.1f} GiB",
        f"{m.os.system} {m.os.release} {m.os.distro or ''}".strip(),
        f"system type {m.system_type}",
        *(f"accelerator {g}" for g in gpus),
    ]
    return {
        "location": f"machines/{machine_id}.html",
        "title": f"Machine {machine_id}",
        "text": render("machine-search.html.j2", parts=parts).strip(),
        "boost": 4,
    }


# this build's machine pages: their own part found in the build memo, or rendered (the build log says how many)
MACHINE_PAGES = {"kept": 0, "rendered": 0}
STANDING_MARK = "<!--benchsite-standing-->"  # where machine.md.j2 takes machine-standing.md.j2


def machine_page(machine_id: str) -> Callable[[Site], str]:
    """A machine's page: what only its own files decide (kept between builds, see _machine_local), with where it
    stands against every other machine rendered afresh in its place."""

    def page(site: Site) -> str:
        standing_md = render("machine-standing.md.j2", site=site.view(), standing=site.standing(machine_id))
        return _machine_local(site, machine_id).replace(STANDING_MARK, standing_md.rstrip("\n"), 1)

    return page


def _summary_state(s: MachineSummary) -> list[Any]:
    """Every field of a machine's summary, as something that pickles alike in every process and whether the build
    read the files or the cache: a pydantic model pickles the set of fields it was given, whose order varies between
    processes, so models go in as JSON; a time goes in as its ISO text, whose time zone object differs by source."""

    def stable(value: Any) -> Any:
        if isinstance(value, BaseModel):
            return value.model_dump_json()
        if isinstance(value, datetime):  # pydantic's TzInfo(0) from a file, datetime.timezone.utc from the cache
            return ("datetime", value.isoformat())
        if isinstance(value, list | tuple):
            return [stable(v) for v in value]
        if isinstance(value, dict):
            return [(stable(k), stable(v)) for k, v in value.items()]
        return value

    return [(f.name, stable(getattr(s, f.name))) for f in dataclasses.fields(s)]


def _machine_local(site: Site, machine_id: str) -> str:
    s = site.machines[machine_id]
    key = b""
    if site.memo is not None:  # the key is written from the frames' columns, without making the frames
        key = memo.inputs_key(
            memo.MACHINE_PAGE, machine_id, _summary_state(s), *site.machine_inputs(machine_id), site.view()
        )
        found = site.memo.blob(memo.MACHINE_PAGE, key)
        if found is not None:
            MACHINE_PAGES["kept"] += 1
            kept = json.loads(found)
            return RAW.attach(kept["markdown"], kept["blocks"])
    MACHINE_PAGES["rendered"] += 1
    rows, apart, crossings = site.machine_parts(machine_id)
    first = RAW.next
    m, sw = s.machine, s.software
    by_framework: dict[str, list[str]] = {}
    for (framework, _, _), (_, status, _) in sorted(s.equivalence.items()):
        by_framework.setdefault(framework, []).append(status)
    entries = sorted(top_ops_rows(s), key=lambda r: (r["device"], r["workload"], r["point"], r["variant"]))
    view = {
        "site": site.view(),
        "id": machine_id,
        "m": m,
        "sw": sw,
        "os": " ".join(x for x in (m.os.system, m.os.release, m.os.distro or "") if x),
        "equivalence": [
            {"framework": f, "passed": st.count("passed"), "of": len(st)} for f, st in by_framework.items()
        ],
        "selftests": s.sync_selftests,
        "runs": [
            {"date": f"{d:%Y-%m-%d %H:%M} UTC", "profile": p, "command": c, "count": n}
            for d, p, c, n, _ in sorted(s.runs, reverse=True)
        ],
        "rows": _records(rows.sort_values(["workload", "point", "variant", "device"])),
        "energy": shows_energy(rows),
        "apart": _records(apart.sort_values(["suite", "profile", "workload", "point", "variant", "device"]))
        if apart is not None and not apart.empty
        else [],
        "crossings": _records(crossings),
        "fidelity": sorted(
            (row for _, row in s.fidelity.values()), key=lambda r: (r["device"], r["script"], r["point"])
        ),
        "top_ops": [
            {"device": device, "rows": [e for e in entries if e["device"] == device]}
            for device in sorted({r["device"] for r in entries})
        ],
    }
    markdown = render("machine.md.j2", **view)
    if site.memo is not None:
        detached, blocks = RAW.detach(markdown, first)
        site.memo.put_blob(memo.MACHINE_PAGE, key, json.dumps({"markdown": detached, "blocks": blocks}).encode())
    return markdown


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
    "unit",
    "ci_lo_s",
    "ci_hi_s",
    "samples_per_s",
    "speedup",
    "speedup_lo",
    "speedup_hi",
    "peak_share",
    "peak_share_lo",
    "peak_share_hi",
    "peak_source",
    "joules_per_unit",
    "joules_lo",
    "joules_hi",
    "energy_source",
    "energy_why",
    "energy_ratio",
    "energy_ratio_lo",
    "energy_ratio_hi",
    "energy_verdict",
    "energy_note",
    "state",
]


def leaderboard_frame(site: Site, workload: str) -> pd.DataFrame:
    """Every ok measurement of the workload, with the speedup over the same machine's CPU where there is one."""
    rows = site.rows_where((site.frame["workload"] == workload) & (site.frame["status"] == "ok"))
    return rows.sort_values(["params", "point", "variant", "median_s"])[LEADERBOARD_COLUMNS]


def leaderboard(workload: str) -> Callable[[Site], str]:
    def page(site: Site) -> str:
        rows = leaderboard_frame(site, workload)
        shown = rows.groupby(["point", "variant"], sort=False, dropna=False).head(LEADERBOARD_ROWS_PER_GROUP)
        first = ~shown.duplicated(["point", "variant"])  # the advisor links each point and loop's first row
        anchors = [advisor.row_anchor(p, v) for p, v in zip(shown["point"], shown["variant"], strict=True)]
        shown = shown.assign(anchor=[a if f else None for a, f in zip(anchors, first, strict=True)])
        return render(
            "leaderboard.md.j2",
            site=site.view(),
            workload=workload,
            title=WORKLOAD_TITLES.get(workload, ""),
            per_group=LEADERBOARD_ROWS_PER_GROUP,
            total=len(rows),
            rows=_records(shown),
            energy=shows_energy(shown),
        )

    return page


def other_runs(site: Site) -> str:
    """Every profile and suite version the site does not compare by default, each summarised on its own."""
    groups = []
    if not site.apart.empty:
        apart = ok_rows(site.apart)
        for (suite, profile, earlier), part in apart.groupby(["suite", "profile", "earlier_loop"], sort=True):
            keys = ["workload", "point", "variant", "framework", "device", "device_name"]
            part = part.assign(median_s_lo=part["ci_lo_s"], median_s_hi=part["ci_hi_s"])
            table = summarise(part, keys, "median_s").sort_values(keys[:5])
            groups.append(
                {
                    "suite": int(suite),
                    "profile": profile,
                    "earlier_loop": bool(earlier),
                    "machines": part["machine_id"].nunique(),
                    "rows": _records(table),
                }
            )
    return render("other-runs.md.j2", site=site.view(), groups=groups)


def csv_files(site: Site, folder: Path) -> dict[str, str | Path]:
    """path -> content, or the file under `folder` it was written to: one CSV per leaderboard and per seed (every
    machine's reproductions; pandas quotes every field that needs it) and the open data (written to files:
    site_builder.opendata)."""
    files: dict[str, str | Path] = {
        f"leaderboards/{w}.csv": opendata.inert(leaderboard_frame(site, w)).to_csv(index=False) for w in site.workloads
    }
    for s in _seeds():
        files[f"seeds/{s.seed}.csv"] = opendata.inert(seeds.seed_csv(seeds.seed_view(site, s))).to_csv(index=False)
    files.update(opendata.write_data_files(site, folder))
    return files


def advisor_page(site: Site) -> str:
    grid, families = advisor.advisor_grid(site.speedups)
    chart = site.chart("advisor", advisor.advisor_chart(grid, families)) if not grid.empty else None
    return render(
        "advisor.md.j2",
        site=site.view(),
        chart=chart,
        steps=advisor.PARAM_STEPS,
        nothing=advisor.NOTHING_MEASURED,
        no_interval=TOO_FEW,
        no_clear=intervals.NO_CLEAR_WINNER,
        cheaper_gpu=advisor.MONEY_CHEAPER_GPU,
        cheaper_cpu=advisor.MONEY_CHEAPER_CPU,
        cpu_price=f"{advisor.CPU_USD_H:.2f}",
        gpu_price=f"{advisor.GPU_USD_H:.2f}",
    )


def compare_page(site: Site) -> str:
    data = advisor.compare_data(site)
    chart = None
    if len(data.machines) >= 2 and not data.rows.empty:
        chart = site.chart("compare", advisor.compare_chart(data))
    limited = len(site.machines) > advisor.COMPARE_MACHINES
    return render("compare.md.j2", site=site.view(), chart=chart, limited=limited, limit=advisor.COMPARE_MACHINES)


@functools.cache
def _seeds() -> list[seeds.Seed]:
    return seeds.load_seeds()


def seeds_index(site: Site) -> str:
    rows = []
    for seed in _seeds():
        view = seeds.seed_view(site, seed)
        machines = {m["machine_id"] for c in view["claims"] for m in c["machines"]}
        rows.append({"seed": seed, "claims": view["claims"], "machines": len(machines), "status": view["status"]})
    return render("seeds.md.j2", site=site.view(), seeds=rows)


def seed_page(seed: seeds.Seed) -> Callable[[Site], str]:
    def page(site: Site) -> str:
        view = seeds.seed_view(site, seed)
        claims = []
        for claim in view["claims"]:
            rows = seeds.claim_rows(claim, claim["shown"])
            title = "break-even (parameters)" if claim["kind"] == "break-even" else charts.SPEEDUP_AXIS
            chart = site.chart(f"seed-{claim['id']}", charts.claim_chart(rows, title), "../") if len(rows) > 1 else None
            claims.append({**claim, "chart": chart})
        return render("seed.md.j2", site=site.view(), no_interval=TOO_FEW, **{**view, "claims": claims})

    return page


def data_page(site: Site) -> str:
    measurements = len(site.frame) + len(site.apart)
    return render(
        "data.md.j2",
        measurements=measurements,
        speedups=len(site.speedups),
        measurement_runs=len(site.run_measurements),
        speedup_runs=len(site.run_speedups),
        measurement_columns=[{"name": k, "meaning": v} for k, v in opendata.MEASUREMENT_COLUMNS.items()],
        speedup_columns=[{"name": k, "meaning": v} for k, v in opendata.SPEEDUP_COLUMNS.items()],
    )


def models_page(site: Site) -> str:
    """Your models: each file of a user's own model (`benchsite run --model`) in the results folder, apart from the
    suite: its measurements per mode, batch size, loop and device, and its CPU-or-accelerator verdicts, each with
    the interval the site gives a figure of one run."""
    from site_builder.answer import along_batch_sizes, beside_suite, memory_of, own_model

    files = []
    for path, result in sorted(site.own, key=lambda item: item[1].run.started_at, reverse=True):
        frame, verdicts = own_model(path, result, site.spread)
        near, beside = beside_suite(frame, verdicts, site.frame, site.speedups)
        memory = memory_of(result)
        rows = frame.assign(state=states(frame)) if not frame.empty else frame
        rows = rows.sort_values(["mode", "batch_size", "variant", "device"]) if not rows.empty else rows
        models = sorted({str(m.point.get("model")) for m in result.measurements if m.workload == "custom"})
        files.append(
            {
                "name": path.name,
                "machine_id": result.machine.id,
                "cpu": result.machine.cpu,
                "accelerators": ", ".join(f"{a.count}x {a.model}" for a in result.machine.accelerators) or "none",
                "started": result.run.started_at.strftime("%Y-%m-%d %H:%M UTC"),
                "models": models,
                "params": next((m.params for m in result.measurements if m.params), None),
                "rows": [
                    {**r, "memory": memory.get((r["workload_hash"], r["framework"], r["device"]), (None, None))}
                    for r in (_records(rows[rows["workload"] == "custom"]) if not rows.empty else [])
                ],
                "near": near,
                "beside": beside,
                "along": along_batch_sizes([v for v in verdicts if v.workload == "custom"]),
            }
        )
    return render("models.md.j2", site=site.view(), files=files)


def registry(site: Site) -> list[Page]:
    """Every generated page, in navigation order; machine pages are reached from the machines index."""
    from site_builder import reference

    pages = [
        Page("index.md", "Home", home),
        Page("advisor.md", "Advisor", advisor_page),
        Page("compare.md", "Compare", compare_page),
        Page("seeds.md", "The seeds", seeds_index, section="The seeds"),
        *(Page(f"seeds/{s.seed}.md", f"Seed {s.seed}", seed_page(s), section="The seeds") for s in _seeds()),
        Page("speedups.md", "Speedups", speedups_page),
        Page("crossover.md", "Crossover", crossover),
        Page("loops.md", "As-written vs tuned", loops_page),
        Page("scale.md", "Scale", scale_page),
    ]
    if len(site.frameworks) > 1:
        pages.append(Page("frameworks.md", "Frameworks", frameworks_page))
    pages += [Page(f"leaderboards/{w}.md", w, leaderboard(w), section="Leaderboards") for w in site.workloads]
    pages += machines_index_pages(site)
    pages += [Page(f"machines/{m}.md", f"Machine {m}", machine_page(m), in_nav=False) for m in site.machine_order]
    if site.own:  # files of a user's own model in the results folder: never the published suite's
        pages.append(Page("models.md", "Your models", models_page))
    pages.append(Page("other-runs.md", "Other profiles and suites", other_runs))
    pages.append(Page("data.md", "Open data", data_page))
    pages += [
        Page("suite.md", "The suite", reference.suite_page, section="Reference"),
        Page("schema.md", "Result schema", reference.schema_page, section="Reference"),
    ]
    return pages
