"""A machine's runs of one measurement combined into one row (combine_runs): the median over the runs' medians,
an interval across the runs (from three; for two, the span of their intervals), and every run's samples, run by
run; its energy a unit alike, over the runs that read it (energy_of_runs).

Collector.frame (site_builder.collect) combines in two steps, so that only the rows kept are converted whole:
combine_plan from the few columns that decide (PLAN_COLUMNS), then combine_apply to the rows kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from runner.results import intervals
from site_builder import uncertainty
from site_builder.columns import KEY


def combine_runs(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per machine, measurement and profile, whatever the number of runs: the newest run no longer
    replaces the others (a replayed or edited newest file would otherwise set the machine's figures alone).

    A measurement run more than once is the median over its runs' medians; its interval, from ACROSS_RUNS runs
    on, the interval of the runs' medians (across runs), and for two runs the span of both runs' intervals;
    `runs_lo_s`..`runs_hi_s` the fastest and slowest run; and its samples every run's, run by run
    (uncertainty.RunSamples: the speedup bootstraps resample runs, then samples within each, around the same
    median of run medians). Rates are rescaled to that median;
    the other columns are the newest run's (the newest with a time, where there is one). `frame` must be
    sorted by start time. Vectorised: grouped aggregates over the repeated rows' positions and four columns, one pass
    over the repeated groups' samples, and one copy of the rows kept (at 10,000 files, copies of the repeated rows
    took it 0.60 GiB above the frame; 0.22 to 0.27 GiB then). Collector.frame does the same in two steps, so that
    only the rows kept are converted whole: `combine_plan` from the columns that decide (PLAN_COLUMNS), then
    `combine_apply` to the rows kept."""
    frame = frame.assign(runs=1, runs_lo_s=frame["median_s"], runs_hi_s=frame["median_s"], joules_runs=1)
    plan = combine_plan(frame)
    if plan is None:
        return frame
    return combine_apply(frame.take(plan.positions).reset_index(drop=True), plan)


ACROSS_RUNS = 3  # runs from which a combined measurement's interval is across its runs (two: their intervals' span)


def _run_figures(runs: list[np.ndarray]) -> list[float]:
    """Each run's figure: the median of what its figure is computed from (its rounds' medians, or its samples)."""
    return [float(np.median(run)) for run in runs]


# What decides which runs' rows are combined, and how (combine_runs)
ENERGY_COLUMNS = ["joules_per_unit", "joules_lo", "joules_hi"]  # combined the same way (energy_of_runs)
PLAN_COLUMNS = [*KEY, "profile", "status", "median_s", "ci_lo_s", "ci_hi_s", "samples", "started_at", *ENERGY_COLUMNS]


@dataclass
class Plan:
    """combine_runs' rows kept and what changes in them: `positions`, the rows kept, in the order they come out;
    `rows`, which of those are combined; `stats`, their runs' median, interval span, count, fastest and slowest;
    `samples`, their runs' samples pooled (uncertainty.RunSamples); `energy`, for the combined rows whose runs read
    the energy of two or more of them, its median, interval and count (energy_of_runs)."""

    positions: np.ndarray
    rows: np.ndarray
    stats: pd.DataFrame
    samples: list[uncertainty.RunSamples]
    energy: dict[int, tuple[float, float, float, int]] = field(default_factory=dict)


def combine_plan(frame: pd.DataFrame) -> Plan | None:
    """combine_runs' plan, from PLAN_COLUMNS of the rows (sorted by start time); None where no row repeats."""
    group_key = [*KEY, "profile"]
    repeated = frame.duplicated(group_key, keep=False).to_numpy()
    if not repeated.any():
        return None
    # Positions and a few columns, never a copy of the repeated rows (at 10,000 files nearly every row repeats, and
    # three copies of the frame set the build's peak): which rows are combined, and into which one.
    where = np.flatnonzero(repeated)
    # the key columns alone are cut to the repeated rows: the whole frame's rows cut cost a copy of nearly all of it
    keys = frame[group_key].iloc[where]
    group = keys.groupby(group_key, sort=False, observed=True, dropna=False).ngroup().to_numpy()
    del keys
    median = frame["median_s"].to_numpy(dtype=float)[where]
    ok = (frame["status"].to_numpy()[where] == "ok") & ~np.isnan(median)
    groups = int(group.max()) + 1
    # the newest row with a time per group (rows are in start-time order), else the newest
    newest = np.full(groups, -1)
    newest[group] = np.arange(len(where))  # the last row of each group wins
    newest_ok = np.full(groups, -1)
    newest_ok[group[ok]] = np.flatnonzero(ok)
    newest = np.where(newest_ok >= 0, newest_ok, newest)
    timed = pd.DataFrame({"g": group[ok], "m": median[ok]})
    timed["lo"] = frame["ci_lo_s"].to_numpy(dtype=float)[where][ok]
    timed["hi"] = frame["ci_hi_s"].to_numpy(dtype=float)[where][ok]
    stats = timed.groupby("g").agg(
        median=("m", "median"),
        lo=("lo", "min"),
        hi=("hi", "max"),
        n=("m", "size"),
        fastest=("m", "min"),
        slowest=("m", "max"),
    )
    stats = stats[stats["n"] > 1]
    combine = np.zeros(groups, dtype=bool)
    combine[stats.index.to_numpy()] = True
    pooled: dict[int, list[np.ndarray]] = {}
    samples = frame["samples"].to_numpy()
    for g, at in zip(group[ok], where[ok], strict=True):
        if combine[g]:
            pooled.setdefault(int(g), []).append(np.asarray(samples[at], dtype=float))
    # a combination of runs none of which has an interval of its own (one sample each) is bounded by its runs'
    # medians, as the run-level bootstrap draws them (runner.results.intervals.measurement_interval); from
    # ACROSS_RUNS runs on, the interval is across the runs: that of their figures, as a measurement's is of its
    # rounds' medians (runner.results.intervals.process_interval); none where the runs show no spread. Each set of
    # groups is written in one assignment: one .loc write a group cost most of the plan at 10,000 files.
    few = stats.index[(stats["lo"].isna() | stats["hi"].isna()) & (stats["n"] < ACROSS_RUNS)]
    many = stats.index[stats["n"] >= ACROSS_RUNS]
    for chosen, rule in ((few, intervals.measurement_interval), (many, intervals.process_interval)):
        if len(chosen):
            found = [rule(_run_figures(pooled[int(g)])) for g in chosen]
            bounds = np.array([f if f is not None else (np.nan, np.nan) for f in found], dtype=float)
            stats.loc[chosen, "lo"], stats.loc[chosen, "hi"] = bounds[:, 0], bounds[:, 1]
    # The rows kept, in the order the earlier concatenation and stable sort gave: by start time, then the rows no
    # other run repeats, then the combined rows whose newest has no time, then the rest, each in frame order.
    alone = np.flatnonzero(~repeated)
    positions = np.concatenate([alone, where[newest]])
    tiers = np.concatenate([np.zeros(len(alone), dtype=int), np.where(newest_ok >= 0, 2, 1)])
    at_group = np.concatenate([np.full(len(alone), -1), np.arange(groups)])
    order = np.lexsort((positions, tiers, frame["started_at"].to_numpy()[positions]))
    positions, at_group = positions[order], at_group[order]
    rows = np.flatnonzero((at_group >= 0) & combine[np.maximum(at_group, 0)])
    g = at_group[rows]
    energy = _energy_plan(frame, where, group, ok, newest, rows, g)
    return Plan(positions, rows, stats.loc[g], [uncertainty.RunSamples(pooled[int(i)]) for i in g], energy)


def _energy_plan(
    frame: pd.DataFrame,
    where: np.ndarray,
    group: np.ndarray,
    ok: np.ndarray,
    newest: np.ndarray,
    rows: np.ndarray,
    groups: np.ndarray,
) -> dict[int, tuple[float, float, float, int]]:
    """For each combined row (position in `rows`) whose kept, newest run has a figure of energy: energy_of_runs over
    its group's runs with a time and joules, where two or more have them."""
    if not set(ENERGY_COLUMNS) <= set(frame.columns):
        return {}
    joules = frame["joules_per_unit"].to_numpy(dtype=float)[where]
    has = ok & (joules > 0)
    if not has.any():
        return {}
    lo, hi = (frame[c].to_numpy(dtype=float)[where] for c in ("joules_lo", "joules_hi"))
    members: dict[int, list[int]] = {}
    for i in np.flatnonzero(has):
        members.setdefault(int(group[i]), []).append(int(i))
    out = {}
    for row, g in zip(rows, groups, strict=True):
        runs = members.get(int(g), [])
        if len(runs) >= 2 and has[newest[g]]:
            out[int(row)] = energy_of_runs(joules[runs], lo[runs], hi[runs])
    return out


def energy_of_runs(joules: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[float, float, float, int]:
    """A machine's energy a unit over its runs, as its time is (combine_runs): the median of the runs' figures; from
    ACROSS_RUNS runs the interval across them (runner.results.intervals.process_interval), for two the span of their
    intervals, or where neither has one, the runs' figures' (intervals.measurement_interval); NaN bounds where there
    is none."""
    n = len(joules)
    lo, hi = lo[~np.isnan(lo)], hi[~np.isnan(hi)]
    if n >= ACROSS_RUNS:
        found = intervals.process_interval(list(joules))
    elif lo.size and hi.size:
        found = (float(lo.min()), float(hi.max()))
    else:
        found = intervals.measurement_interval(list(joules))
    low, high = found if found is not None else (np.nan, np.nan)
    return float(np.median(joules)), float(low), float(high), n


def combine_apply(out: pd.DataFrame, plan: Plan) -> pd.DataFrame:
    """The rows kept (`plan.positions` of the rows, with runs, runs_lo_s and runs_hi_s), their combined ones
    changed as combine_runs says."""
    rows, s = plan.rows, plan.stats
    scale = out["median_s"].to_numpy(dtype=float)[rows] / s["median"].to_numpy()
    for name, values in (
        ("median_s", s["median"]),
        ("ci_lo_s", s["lo"]),
        ("ci_hi_s", s["hi"]),
        ("samples_per_s", out["samples_per_s"].to_numpy(dtype=float)[rows] * scale),
        ("achieved_tflops", out["achieved_tflops"].to_numpy(dtype=float)[rows] * scale),
        ("runs", s["n"]),
        ("runs_lo_s", s["fastest"]),
        ("runs_hi_s", s["slowest"]),
    ):
        column = out[name].to_numpy(dtype=float, copy=True) if name != "runs" else out[name].to_numpy(copy=True)
        column[rows] = np.asarray(values)
        out[name] = column
    merged = out["samples"].to_numpy(copy=True)
    for row, pooled in zip(rows, plan.samples, strict=True):
        merged[row] = pooled
    out["samples"] = merged
    out["runs"] = out["runs"].astype(int)
    if plan.energy:
        at = np.fromiter(plan.energy, dtype=int, count=len(plan.energy))
        figures = np.array(list(plan.energy.values()), dtype=float)
        for i, name in enumerate([*ENERGY_COLUMNS, "joules_runs"]):
            column = out[name].to_numpy(dtype=float, copy=True)
            column[at] = figures[:, i]
            out[name] = column
        out["joules_runs"] = out["joules_runs"].astype(int)
    return out
