"""One figure, one interval: the committed results' site shows each figure with the same estimate, interval and
verdict wherever it appears, never an interval of no width, no interval on a ratio whose side has none, no clear
verdict without an interval that excludes 1, and every `stable: false` measurement marked unstable.

Built in-process from results/ as site_builder/mkdocs_hooks.py:on_config builds it (no build cache)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from runner.contribute import standing
from site_builder import advisor, opendata, pages
from site_builder.analyses.speedups import glance, speedup_summary
from site_builder.load import load_results
from site_builder.site import Site

ROOT = Path(__file__).resolve().parent.parent
KEY = ["machine_id", "workload", "point", "variant", "framework", "device"]
CLEAR = {"accelerator faster", "CPU faster"}


@pytest.fixture(scope="module")
def site() -> Site:
    loaded = load_results(ROOT / "results", strict=True, cache=None)
    return Site.from_collector(loaded.collector, loaded.rejected)


def _num(x: Any) -> float:
    return float("nan") if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def _said(lo: float, hi: float) -> str:
    """The verdict an interval gives: clear only where the whole interval lies on one side of 1."""
    if math.isnan(lo) or math.isnan(hi):
        return "none"
    return "accelerator faster" if lo > 1 else "CPU faster" if hi < 1 else "no clear winner"


def _figures(table: pd.DataFrame, where: str, s: str = "speedup", lo: str = "speedup_lo", hi: str = "speedup_hi"):
    for row in table.to_dict("records"):
        if pd.isna(row.get(s)):
            continue
        key = tuple("" if pd.isna(row[k]) else str(row[k]) for k in KEY)
        a, b = _num(row[lo]), _num(row[hi])
        yield key, where, (float(row[s]), a, b, _said(a, b))


def _everywhere(site: Site) -> Iterator[tuple[tuple[str, ...], str, tuple[float, float, float, str]]]:
    """Every (figure key, place, (estimate, lo, hi, verdict)) the site shows a speedup at."""
    for workload in site.workloads:
        rows = pages.leaderboard_frame(site, workload).assign(workload=workload)
        yield from _figures(rows, f"leaderboard {workload}")
    for mid in site.machine_order:
        rows, _, _ = site.machine_parts(mid)
        yield from _figures(rows, f"machine page {mid}")
    yield from _figures(opendata.speedups_table(site), "data/speedups.csv")
    # summaries over machines (the speedups page, the home chart, the advisor): a group of one machine is that
    # machine's figure
    summary = speedup_summary(site.speedups)
    one = site.speedups.groupby(["workload", "point", "variant", "framework", "gpu_model"], dropna=False)
    machine_of = {k: g for k, g in one}
    for row in summary[summary["machines"] == 1].to_dict("records"):
        group = machine_of[(row["workload"], row["point"], row["variant"], row["framework"], row["gpu_model"])]
        member = group.iloc[0].to_dict()
        member.update(speedup=row["speedup"], speedup_lo=row["speedup_lo"], speedup_hi=row["speedup_hi"])
        yield from _figures(pd.DataFrame([member]), "speedups summary / home chart")
    grid, _ = advisor.advisor_grid(site.speedups)
    measured = site.speedups
    for row in grid[grid["g"] >= 0].to_dict("records"):
        rows = measured[
            (measured["gpu_model"] == row["gpu"])
            & (measured["framework"] == row["fw"])
            & (measured["variant"] == row["loop"])
            & (measured["point"] == row["near"])
        ]
        x = row["x"]
        size = rows["params"] if row["a"] == 0 else pd.to_numeric(rows["batch_size"], errors="coerce")
        at = rows[np.isclose(size.astype(float), x, rtol=1e-9)]
        if row["n"] != 1 or len(at) != 1:
            continue  # interpolated, or a median over several machines
        member = at.iloc[0].to_dict()
        member.update(speedup=row["s"], speedup_lo=row["lo"], speedup_hi=row["hi"])
        yield from _figures(pd.DataFrame([member]), "advisor (measured point)")


def test_each_speedup_has_one_estimate_interval_and_verdict_everywhere(site):
    seen: dict[tuple[str, ...], dict[str, tuple[float, float, float, str]]] = {}
    for key, where, figure in _everywhere(site):
        seen.setdefault(key, {})[where] = figure
    differ = []
    for key, places in seen.items():
        values = list(places.values())
        first = values[0]
        for other in values[1:]:
            same = first[3] == other[3] and all(
                (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-4)
                for a, b in zip(first[:3], other[:3], strict=True)
            )
            if not same:
                differ.append((key, places))
                break
    assert len(seen) > 100
    assert not differ, f"{len(differ)} of {len(seen)} figures differ between pages, e.g. {differ[:2]}"


def test_each_energy_figure_has_one_interval_everywhere(site):
    """A measurement's joules a unit reads the same, with the same interval (across its runs, or one run's widened by
    the spread between runs), on its leaderboard, its machine's page and the open data's machine row."""
    seen: dict[tuple[str, ...], dict[str, tuple[float, float, float]]] = {}

    def take(table: pd.DataFrame, where: str) -> None:
        for row in table.to_dict("records"):
            if pd.isna(row.get("joules_per_unit")):
                continue
            row.setdefault("profile", site.profile)  # a leaderboard is of the site's primary profile
            key = tuple("" if pd.isna(row[k]) else str(row[k]) for k in [*KEY, "profile"])
            seen.setdefault(key, {})[where] = (
                float(row["joules_per_unit"]),
                _num(row["joules_lo"]),
                _num(row["joules_hi"]),
            )

    for workload in site.workloads:
        take(pages.leaderboard_frame(site, workload).assign(workload=workload), f"leaderboard {workload}")
    for mid in site.machine_order:
        take(site.machine_parts(mid)[0], f"machine page {mid}")
    data = pd.concat(list(opendata.measurement_blocks(site)))
    take(data[data["level"] == "machine"], "data/measurements")
    places = [p for p in seen.values() if len(p) > 1]
    differ = [p for p in places if len({tuple(round(x, 9) for x in f) for f in p.values()}) > 1]
    assert len(places) > 50
    assert not differ, f"{len(differ)} of {len(places)} energy figures differ between pages, e.g. {differ[:2]}"
    bounds = [f[1:] for p in places for f in p.values() if not (math.isnan(f[1]) or math.isnan(f[2]))]
    assert bounds and all(hi > lo for lo, hi in bounds)  # never an interval of no width


def test_the_advisor_at_a_measured_point_says_so_and_between_points_says_it_interpolates(site):
    grid, _ = advisor.advisor_grid(site.speedups)
    inside = grid[grid["g"] >= 0]
    assert len(inside)
    for row in inside.to_dict("records"):
        sentence = advisor.answer(row)
        assert ("interpolated between" in sentence) != (" at measured point " in sentence), sentence


def test_compare_rows_carry_each_measurement_time_and_interval(site):
    rows = advisor.compare_data(site).rows
    frame = pd.concat([site.frame, site.apart], ignore_index=True)
    ok = frame[(frame["status"] == "ok") & frame["median_s"].notna()]
    by_machine = {m: g for m, g in ok.groupby("machine_id", observed=True)}
    for row in rows.to_dict("records"):
        mine = by_machine[row["m"]]
        match = mine[np.isclose(mine["median_s"].astype(float), row["t"], rtol=1e-12)]
        assert len(match)
        widths = np.log(match["ci_hi_s"].astype(float) / match["ci_lo_s"].astype(float)) / (2 * advisor.Z95)
        if widths.isna().all():
            assert row["s"] < 0, "a measurement without an interval is paired as if exact"
        else:
            assert np.isclose(widths.dropna(), row["s"]).any()


def test_the_compare_summary_is_a_standing_s_geometric_mean_and_interval(site):
    """The compare page's summary of the H100 machine against the H200 machine, accelerators, as-written: the
    geometric mean of the time ratios over the measurements both ran with an interval on both sides, and the interval
    runner.contribute.standing.ratio_interval gives them (the between-run spread of both machines added): the
    function the machine pages' standings and `benchsite compare` take theirs from."""
    h100, h200 = "0c9b4be27c3326c3", "412f73aecce46bad"
    summary = advisor.compare_data(site).summary.set_index("pcl")
    shown = summary.loc[f"{h100}|{h200}|accelerator|as-written"]
    everything = pd.concat([site.frame, site.apart], ignore_index=True)
    rows = standing.rows_from_table(everything)

    def side(machine: str) -> dict:
        return {
            (r.workload_hash, r.framework, r.device, r.profile, r.suite): r
            for r in rows
            if r.machine_id == machine and r.device != "cpu" and r.variant == "as-written"
        }

    mine, theirs = side(h100), side(h200)
    both = sorted(k for k in set(mine) & set(theirs) if mine[k].has_interval and theirs[k].has_interval)
    assert len(both) == shown["n"] >= 10
    a, b = [mine[k] for k in both], [theirs[k] for k in both]
    tau2 = site.spread.tau2_of_time("cuda", "as-written", all(r.rounds for r in a))
    tau2 += site.spread.tau2_of_time("cuda", "as-written", all(r.rounds for r in b))
    lo, hi = standing.ratio_interval(a, b, tau2)
    geomean = math.exp(sum(math.log(x.median / y.median) for x, y in zip(a, b, strict=True)) / len(a))
    assert math.isclose(shown["r"], geomean, rel_tol=1e-9)
    assert math.isclose(shown["lo"], lo, rel_tol=1e-9) and math.isclose(shown["hi"], hi, rel_tol=1e-9)


# --- no false precision ---------------------------------------------------------------------------------------


def test_no_summary_table_holds_an_interval_of_no_width(site):
    from site_builder.analyses.scaling import scaling
    from site_builder.analyses.speedups import framework_comparison, frameworks_by_device, summarise

    tables = {
        "frameworks": (frameworks_by_device(framework_comparison(site.frame)), "ratio"),
        "speedups": (site.speedups, "speedup"),
        "summary": (speedup_summary(site.speedups), "speedup"),
    }
    scale = scaling(site.scale_runs)
    if not scale.empty:
        keys = ["device_name", "loop", "framework", "model", "batch_size", "world_size"]
        tables["scale"] = (summarise(scale[scale["world_size"] > 1], keys, "efficiency"), "efficiency")
    for name, (table, column) in tables.items():
        lo, hi = table[f"{column}_lo"].astype(float), table[f"{column}_hi"].astype(float)
        both = lo.notna() & hi.notna()
        assert (lo[both] < hi[both]).all(), f"{name}: {int((lo[both] >= hi[both]).sum())} intervals of no width"
    frame = site.frame
    both = frame["ci_lo_s"].notna() & frame["ci_hi_s"].notna()
    assert (frame.loc[both, "ci_lo_s"] < frame.loc[both, "ci_hi_s"]).all()


def test_a_ratio_one_of_whose_sides_has_no_interval_has_none(site):
    frame = site.frame
    has = frame["ci_lo_s"].notna() & frame["ci_hi_s"].notna() & (frame["ci_lo_s"] < frame["ci_hi_s"])
    sides = frame.assign(has=has)[["machine_id", "workload_hash", "framework", "profile", "device", "has"]]
    speed = site.speedups
    cpu = sides[sides["device"] == "cpu"].drop(columns="device").rename(columns={"has": "has_cpu"})
    joined = speed.merge(sides, on=["machine_id", "workload_hash", "framework", "profile", "device"], how="left")
    joined = joined.merge(cpu, on=["machine_id", "workload_hash", "framework", "profile"], how="left")
    lacking = joined[~(joined["has"].astype(bool) & joined["has_cpu"].astype(bool))]
    assert len(lacking), "the committed results have speedups with a side without an interval"
    with_interval = lacking[lacking["speedup_lo"].notna() | lacking["speedup_hi"].notna()]
    assert with_interval.empty, with_interval[[*KEY, "speedup", "speedup_lo", "speedup_hi"]].to_string()
    assert set(lacking["verdict"]) <= {"one process or too few samples: no interval"}


def test_a_clear_verdict_needs_an_interval_that_excludes_1(site):
    grid, _ = advisor.advisor_grid(site.speedups)
    for row in grid[grid["g"] >= 0].to_dict("records"):
        if row["v"] in CLEAR:
            assert _said(_num(row["lo"]), _num(row["hi"])) == row["v"] and row["lo"] < row["hi"], row
    for table in (site.speedups, speedup_summary(site.speedups)):
        for row in table.to_dict("records"):
            if row["verdict"] in CLEAR:
                assert row["speedup_lo"] < row["speedup_hi"]
                assert _said(row["speedup_lo"], row["speedup_hi"]) == row["verdict"]
            else:
                assert _said(_num(row["speedup_lo"]), _num(row["speedup_hi"])) not in CLEAR


def test_every_unstable_measurement_is_marked_unstable(site):
    unstable = site.frame["stable"].astype(object).eq(False) & (site.frame["status"] == "ok")
    assert unstable.any()
    for workload in site.workloads:
        rows = pages.leaderboard_frame(site, workload)
        marked = site.frame.loc[rows.index, "stable"].astype(object).eq(False)
        assert (rows.loc[marked, "state"] == "ok, unstable").all()
        assert (rows.loc[~marked, "state"] != "ok, unstable").all()
    for mid in site.machine_order:
        rows, _, _ = site.machine_parts(mid)
        marked = rows["stable"].astype(object).eq(False) & (rows["status"] == "ok")
        assert (rows.loc[marked, "state"] == "ok, unstable").all()
    every = pd.concat(list(opendata.measurement_blocks(site)), ignore_index=True)
    every_marked = every["stable"].astype(object).eq(False) & (every["status"] == "ok")
    assert (every.loc[every_marked, "state"] == "ok, unstable").all()  # the per-run rows too
    data = every[every["level"] == "machine"]
    marked = data["stable"].astype(object).eq(False) & (data["status"] == "ok")
    assert (
        marked.sum()
        == unstable.sum() + (site.apart["stable"].astype(object).eq(False) & (site.apart["status"] == "ok")).sum()
    )
    assert (data.loc[marked, "state"] == "ok, unstable").all()
    speedups = opendata.speedups_table(site)
    assert (speedups["state"] == "ok, unstable").any()
    # the answer at a glance: a line whose shown speedup rests on an unstable measurement says so
    lines = glance(site.speedups)
    one = lines[(lines["machines"] == 1) & (lines["points"] == 1)]
    speedups = site.speedups
    part = (speedups["model"].astype(str) + " " + speedups["mode"].astype(str)).where(speedups["model"].notna(), "")
    for line in one.to_dict("records"):
        rows = speedups[
            (speedups["machine_id"] == line["machine_ids"][0])
            & (speedups["workload"] == line["workload"])
            & (speedups["variant"] == line["variant"])
            & (speedups["framework"] == line["framework"])
            & (speedups["gpu_model"] == line["gpu_model"])
            & (part == line["part"])
        ]
        assert len(rows) == 1, line  # one machine, one point: its own speedup row
        assert line["unstable"] == (rows["state"] == "ok, unstable").any(), line
    assert lines["unstable"].any() and not lines["unstable"].all()
    # compare: each measurement's row carries whether it is unstable (matched to the machine's row by its median)
    data = advisor.compare_data(site)
    frame = pd.concat([site.frame, site.apart], ignore_index=True)
    ok = frame[(frame["status"] == "ok") & frame["median_s"].notna()]
    by_machine = {m: g for m, g in ok.groupby("machine_id", observed=True)}
    for row in data.rows.to_dict("records"):
        mine = by_machine[row["m"]]
        match = mine[np.isclose(mine["median_s"].astype(float), row["t"], rtol=1e-12)]
        assert row["x"] in {int(s is False) for s in match["stable"].astype(object)}, row
    assert data.rows["x"].any() and not data.rows["x"].all()


def test_the_end_of_a_run_gives_each_speedup_the_interval_the_site_gives_that_runs(site):
    """What `benchsite run` and `benchsite compare` print for a file (site_builder.answer) is the site's figure: each
    of the committed H200 run's speedups with the interval and verdict of its per-run row (the open data's `level`
    run rows, Site.run_speedups), and the standing the site's machine page computes with the same spread."""
    from runner.results.storage import load
    from site_builder.answer import answer

    path = ROOT / "results" / "412f73aecce46bad" / "20261204T184934Z.yaml"
    result, _ = load(path)
    assert result is not None
    found = answer(result, path, ROOT / "results")
    runs = site.run_speedups[site.run_speedups["run_id"] == result.run.id]
    assert len(found.verdicts) == len(runs) > 20
    for verdict, row in zip(found.verdicts, runs.itertuples(), strict=True):
        assert (verdict.workload, verdict.point, verdict.variant, verdict.framework) == (
            row.workload,
            row.point,
            row.variant,
            row.framework,
        )
        assert verdict.speedup == pytest.approx(row.value, rel=1e-12)
        assert (_num(verdict.lo), _num(verdict.hi)) == pytest.approx(
            (_num(row.lo), _num(row.hi)), rel=1e-12, nan_ok=True
        )
        if verdict.lo is None:
            assert verdict.verdict == "one process or too few samples: no interval"
        else:
            assert verdict.verdict == _said(verdict.lo, _num(verdict.hi))
    assert any(v.verdict in CLEAR for v in found.verdicts)
    assert found.standings and all(p.versus for p in found.standings)
    assert "spread between runs" in found.note and found.between_runs
