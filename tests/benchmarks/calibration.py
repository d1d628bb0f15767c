"""Are the 95% intervals calibrated? How often another run's figure of the same point lands inside a run's interval.

    python tests/benchmarks/calibration.py [RESULTS_DIR] [--interval file|rules|site-rules|site]
        [--tau leave-one-out|all] [--site-data DIR] [--min-schema 9] [--json]

A run's 95% interval of a figure says where that figure would fall if the run were done again. So, over the committed
results, take every two runs of one machine that measured the same thing and ask whether the second run's figure lies
inside the first one's interval; a calibrated interval holds it about 95% of the time (90% or more is the goal). The
script reports that share (coverage) with its pair counts and the median interval width (hi / lo) beside it, for
measurements, for speedups and for the energy a unit (joules per epoch or step on the measured device, schema 11
on), overall, by device class (cpu, accelerator) and by variant (as-written, tuned); and
the run-to-run spread of the figures (per pair of runs the larger figure over the smaller: median and 90th
percentile), overall and for the as-written speedups of the machines whose accelerator model contains `--accelerator`
(H200). It ends with a line comparing the figures with the goals: coverage >= 90% for both, and that spread <= 1.25x
at the 90th percentile; and, where the figures carry their rounds (`--interval rules` or `site-rules`), a forecast of
that spread with 3, 5 and 10 rounds a run and with unlimited rounds (forecast(): the between-run floor that no number
of rounds removes).

The files are read as the site reads them (site_builder.load.load_results: the schema, the gate's checks and the
replay rule; a refused file is left out) and then one by one with runner.results.storage.load. Nothing is written.

Definitions (the defaults reproduce the baseline: 21.8% of 1,790 measurement pairs; 243 speedup run pairs,
spread 1.22x median and 1.79x at the 90th percentile):

- A measurement counts where its status is ok and it has a median. Its group is (machine id, benchsite version,
  profile, workload hash, framework, device): the profile as well, because the site combines a machine's runs of one
  measurement per profile, and some workloads' hashes do not change with the profile. Streaming latencies
  (spark-streaming) and data-parallel points (world_size) are included; `--single-process` leaves them out, as the
  speedups always do.
- A speedup is one run's CPU median over its accelerator median, the two measurements paired as the site pairs them:
  the same run file, workload hash, framework and profile, device cpu against an accelerator, both ok with a median,
  no streaming latency, no world_size. Its group is (machine id, benchsite version, profile, workload, point,
  variant, framework, accelerator device): the point, not the workload hash, as the baseline counted them (the hash
  changes with the loop's code within one benchsite version: the H200 machine's two 0.8.0 runs hash cifar-lenet
  differently). `--speedup-group hash` groups by (machine id, benchsite version, profile, workload hash, framework,
  device) instead.
- Coverage: every ordered pair (A, B) of distinct runs (run ids) in a group, where A has an interval: is lo_A <=
  figure_B <= hi_A? Both orders count, because the question is asked of each run's interval. The width is the
  median of hi_A / lo_A over those same pairs.
- Spread: every unordered pair {A, B} of distinct runs in a group (with or without intervals): max / min of the two
  figures. "run pairs" counts these (for speedups the baseline's 243).
- Energy: a measurement's joules a unit on its device (its energy block of `of: device` with a figure), grouped as
  the measurements are; its interval the file's across the run's rounds (`ci95_joules_per_unit`), widened by the
  energy's tau^2 under site-rules (site_builder.analyses.between.widen_energy, as the pages show it); under site,
  the per-run rows' joules_per_unit, joules_lo and joules_hi.
- Subsets: device class by the measurement's device (cpu, or any accelerator; a speedup's is always the
  accelerator), variant as the file gives it.

Where the intervals come from is pluggable (`--interval`, one function each in INTERVALS):

- file: a measurement's own `ci95_s`, as written in its file (order statistics of the median; a t-interval below 6
  samples; none for one sample: such a run is never an A). A speedup's: the site's per-run seeded bootstrap of the
  two sides' raw samples (site_builder.uncertainty.ratio_intervals, the interval the site gives one run's speedup).
- rules: the file's intervals under the site's rules for one run: a measurement's through
  runner.results.intervals.interval_or_none, a speedup's through site_builder.uncertainty.ratio_interval_columns (none
  of no width, none where a side has none).
- site-rules: the rules' intervals as the site gives a figure of one run: widened by the between-run variance
  (site_builder.uncertainty.single_run_interval, tau^2 of site_builder.analyses.between by figure, device class and
  loop), tau estimated leave-one-machine-out (`--tau leave-one-out`, the default: the pairs of a machine are judged
  by a width its own runs did not set) or from every machine (`--tau all`, as the site estimates it: then the
  figures are the site's per-run rows', `--interval site`).
- site: the per-run rows (`level == "run"`) of a built site's open data (`--site-data`, the site's data/ folder):
  measurements.parquet (or measurements.csv) with run_id, benchsite_version, machine_id, workload_hash, framework,
  device, variant, median_s and its interval (ci_lo_s / ci_hi_s), and speedups.csv with the same keys and speedup,
  speedup_lo, speedup_hi. The figures and intervals are then the site's own; the same groups and filters apply where
  the columns are there (profile, status, unit, world_size, workload, point, gpu_model).

Not part of the test run. The figures depend on the result files only (the bootstrap is seeded), not on the host.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from runner.results import energy as energy_rules
from runner.results import intervals
from runner.results.storage import load
from site_builder import uncertainty
from site_builder.analyses import between
from site_builder.collect import frame_samples, pairing_of
from site_builder.load import load_results

GOAL_COVERAGE = 0.90
GOAL_SPREAD_P90 = 1.25
# |a - b| of two runs' log figures, each normal with sd s: its 90th percentile is Z90 * sqrt(2) * s
Z90 = 1.6448536269514722
FORECAST_ROUNDS = (3, 5, 10)  # rounds a run, for the spread forecast
# The baseline: what today's intervals gave on the committed files, for the comparison line.
BASELINE = {"coverage": 0.218, "pairs": 1790, "speedup_run_pairs": 243, "spread_median": 1.22, "spread_p90": 1.79}

MEASUREMENT_GROUP = ["machine_id", "benchsite_version", "profile", "workload_hash", "framework", "device"]
SPEEDUP_GROUPS = {
    "point": ["machine_id", "benchsite_version", "profile", "workload", "point", "variant", "framework", "device"],
    "hash": ["machine_id", "benchsite_version", "profile", "workload_hash", "framework", "device"],
}
# Every figures table has these columns (a group's columns besides): the run, the figure and its interval (NaN where
# none), and what the subsets are cut by.
FIGURE_COLUMNS = ["run_id", "value", "lo", "hi", "variant", "device", "gpu_model"]


@dataclass
class Figures:
    """Each run's figures with their intervals: one row per measurement, one per speedup."""

    measurements: pd.DataFrame
    speedups: pd.DataFrame
    source: str  # what was read, for the heading
    energy: pd.DataFrame = field(default_factory=pd.DataFrame)  # joules a unit, one row per measurement with one


def point_label(point: dict[str, Any]) -> str:
    """As the site labels a point (site_builder.collect.point_label)."""
    return ", ".join(f"{k}={v}" for k, v in point.items())


def side(result: Any, m: Any, rules: bool) -> np.ndarray:
    """One side of a speedup: its raw samples, or with `rules` what the site computes it from (its rounds'
    medians, paired by run, framework and loop: site_builder.collect.frame_samples)."""
    if not rules:
        return np.asarray(m.samples_s, dtype=float)
    return frame_samples(intervals.measurement_values(m, result.schema_version), pairing_of(result, m))


def file_intervals(args: argparse.Namespace, rules: bool = False) -> Figures:
    """The intervals the result files give: a measurement's ci95_s as written; a speedup's, the seeded bootstrap of
    the two measurements' raw samples (uncertainty.ratio_intervals). With `rules`, the intervals the site shows for
    one run today: a measurement's through runner.results.intervals.interval_or_none (none of no width), a speedup's
    through uncertainty.ratio_interval_columns (none where a side has none)."""
    root = Path(args.results)
    if not root.is_dir():
        raise SystemExit(f"{root}: no such folder of result files")
    loaded = load_results(root)
    measurements: list[dict[str, Any]] = []
    speedups: list[dict[str, Any]] = []
    energy: list[dict[str, Any]] = []
    numerators: list[np.ndarray] = []
    denominators: list[np.ndarray] = []
    for path in loaded.accepted:
        result, _ = load(path)
        if result is None:  # accepted a moment ago: only a file changed since would fail here
            continue
        if result.schema_version < args.min_schema:
            continue
        gpu = result.machine.accelerators[0].model if result.machine.accelerators else ""
        common = {
            "machine_id": result.machine.id,
            "benchsite_version": result.benchsite_version,
            "profile": result.suite.profile,
            "run_id": result.run.id,
            "gpu_model": gpu,
        }
        cpu: dict[tuple[str, str], Any] = {}
        accelerator = []
        for m in result.measurements:
            if m.status != "ok" or m.median_s is None:
                continue
            single = m.unit != "latency" and "world_size" not in m.point
            lo, hi = m.ci95_s if m.ci95_s is not None else (math.nan, math.nan)
            if rules:  # as the site reads a measurement (site_builder.collect): over its rounds where it has them
                values = intervals.measurement_values(m, result.schema_version)
                found = (
                    intervals.measurement_interval(values)
                    if result.schema_version >= intervals.ROUNDS_SCHEMA
                    else intervals.interval_or_none(lo, hi)
                )
                lo, hi = found or (math.nan, math.nan)
            measurements.append(
                {
                    **common,
                    "workload_hash": m.workload_hash,
                    "framework": m.framework,
                    "device": m.device,
                    "variant": m.variant,
                    "value": m.median_s,
                    "lo": lo,
                    "hi": hi,
                    "single_process": single,
                    "era": between.ROUNDS if rules and pairing_of(result, m) else between.SAMPLES,
                    "se2": uncertainty.rounds_se2(side(result, m, rules)),
                }
            )
            own = energy_rules.device_figure(m.energy)
            if own is not None and own.joules_per_unit > 0:  # as the site reads it (site_builder.collect)
                joules = own.ci95_joules_per_unit or (math.nan, math.nan)
                energy.append(
                    {
                        **measurements[-1],
                        "value": own.joules_per_unit,
                        "lo": joules[0],
                        "hi": joules[1],
                        "era": between.ROUNDS,
                        "se2": energy_rules.log_se2(own),
                    }
                )
            if single and m.samples_s:
                if m.device == "cpu":
                    cpu[(m.workload_hash, m.framework)] = m
                else:
                    accelerator.append(m)
        for m in accelerator:
            c = cpu.get((m.workload_hash, m.framework))
            if c is None:
                continue
            speedups.append(
                {
                    **common,
                    "workload_hash": m.workload_hash,
                    "workload": m.workload,
                    "point": point_label(m.point),
                    "framework": m.framework,
                    "device": m.device,
                    "variant": m.variant,
                    "value": c.median_s / m.median_s,
                }
            )
            numerators.append(side(result, c, rules))
            denominators.append(side(result, m, rules))
            speedups[-1]["era"] = between.era_of(numerators[-1], denominators[-1])
            speedups[-1]["se2"] = uncertainty.rounds_se2(numerators[-1], denominators[-1])
            speedups[-1]["rounds"] = min(len(numerators[-1]), len(denominators[-1]))
    speedup_table = pd.DataFrame(speedups)
    if len(speedup_table):
        interval = uncertainty.ratio_interval_columns if rules else uncertainty.ratio_intervals
        lo, hi = interval(numerators, denominators)
        speedup_table = speedup_table.assign(lo=lo, hi=hi)
    source = f"{root}: {len(loaded.accepted)} result files accepted, {len(loaded.rejected)} refused"
    return Figures(pd.DataFrame(measurements), speedup_table, source, pd.DataFrame(energy))


# The interval columns a site's per-run measurement rows may carry, the current names first.
MEASUREMENT_INTERVAL_NAMES = [("ci_lo_s", "ci_hi_s"), ("ci95_lo_s", "ci95_hi_s"), ("median_lo_s", "median_hi_s")]
SITE_KEYS = ["level", "run_id", "benchsite_version", "machine_id", "workload_hash", "framework", "device", "variant"]


def _run_rows(table: pd.DataFrame, name: str, needed: list[str]) -> pd.DataFrame:
    missing = [c for c in needed if c not in table.columns]
    if "level" not in table.columns or not (table["level"].astype(str) == "run").any():
        raise SystemExit(
            f"{name} has no per-run rows (a column `level` with rows `run`): the site publishes one row per "
            "machine and measurement only. Build the site with a site_builder that writes per-run rows, or use "
            "--interval file."
        )
    if missing:
        raise SystemExit(f"{name}: its per-run rows lack the columns {', '.join(missing)}")
    rows = table[table["level"].astype(str) == "run"].copy()
    if "status" in rows.columns:
        rows = rows[rows["status"].astype(str) == "ok"]
    if "profile" not in rows.columns:
        rows["profile"] = ""  # one profile: the groups are the same without it
    if "gpu_model" not in rows.columns:
        rows["gpu_model"] = ""
    rows["gpu_model"] = rows["gpu_model"].fillna("").astype(str)
    for column in ["run_id", "benchsite_version", "machine_id", "workload_hash", "framework", "device", "variant"]:
        rows[column] = rows[column].astype(str)
    return rows


def _single_process(rows: pd.DataFrame) -> pd.Series:
    """Neither a streaming latency nor a data-parallel point, by the columns the rows have."""
    keep = pd.Series(True, index=rows.index)
    if "unit" in rows.columns:
        keep &= rows["unit"].astype(str) != "latency"
    if "world_size" in rows.columns:
        keep &= pd.to_numeric(rows["world_size"], errors="coerce").isna()
    elif "point" in rows.columns:
        keep &= ~rows["point"].fillna("").astype(str).str.contains("world_size=", regex=False)
    return keep


def site_intervals(args: argparse.Namespace) -> Figures:
    """The intervals a built site publishes for each run: its open data's rows with level == "run"."""
    if args.site_data is None:
        raise SystemExit("--interval site needs --site-data DIR: a built site's data/ folder")
    folder = Path(args.site_data)
    parquet, csv, speedups_csv = (folder / n for n in ("measurements.parquet", "measurements.csv", "speedups.csv"))
    measurements = None
    if parquet.exists():
        try:
            measurements = pd.read_parquet(parquet)
        except (OSError, ValueError) as exc:  # not Parquet (a golden record's digest, a partial copy): the CSV then
            if not csv.exists():
                raise SystemExit(f"{parquet}: not readable as Parquet ({exc})") from exc
    if measurements is None:
        if not csv.exists():
            raise SystemExit(f"{folder}: no measurements.parquet or measurements.csv (a built site's data/ folder?)")
        measurements = pd.read_csv(csv, low_memory=False)
    if not speedups_csv.exists():
        raise SystemExit(f"{folder}: no speedups.csv")
    names = next(((lo, hi) for lo, hi in MEASUREMENT_INTERVAL_NAMES if {lo, hi} <= set(measurements.columns)), None)
    if names is None:
        wanted = " or ".join(f"{lo}/{hi}" for lo, hi in MEASUREMENT_INTERVAL_NAMES)
        raise SystemExit(f"{folder / 'measurements'}: no interval columns ({wanted})")
    m = _run_rows(measurements, "measurements", [*SITE_KEYS, "median_s"])
    m = m.assign(
        value=pd.to_numeric(m["median_s"], errors="coerce"),
        lo=pd.to_numeric(m[names[0]], errors="coerce"),
        hi=pd.to_numeric(m[names[1]], errors="coerce"),
        single_process=_single_process(m),
    )
    m = m[m["value"].notna()]
    energy = pd.DataFrame()
    if {"joules_per_unit", "joules_lo", "joules_hi"} <= set(m.columns):
        read = m[pd.to_numeric(m["joules_per_unit"], errors="coerce") > 0]
        energy = read.assign(**{k: pd.to_numeric(read[c], errors="coerce") for k, c in
                                (("value", "joules_per_unit"), ("lo", "joules_lo"), ("hi", "joules_hi"))})  # fmt: skip
    needed = [*SITE_KEYS, "speedup", "speedup_lo", "speedup_hi"]
    s = _run_rows(pd.read_csv(speedups_csv, low_memory=False), "speedups.csv", needed)
    s = s.assign(
        value=pd.to_numeric(s["speedup"], errors="coerce"),
        lo=pd.to_numeric(s["speedup_lo"], errors="coerce"),
        hi=pd.to_numeric(s["speedup_hi"], errors="coerce"),
    )
    s = s[s["value"].notna() & _single_process(s)]
    for column in ("workload", "point"):
        if column not in s.columns:
            if args.speedup_group == "point":
                raise SystemExit(f"speedups.csv has no {column} column: use --speedup-group hash")
        else:
            s[column] = s[column].fillna("").astype(str)
    source = f"{folder}: {m['run_id'].nunique()} runs' measurement rows, {s['run_id'].nunique()} runs' speedup rows"
    return Figures(m.reset_index(drop=True), s.reset_index(drop=True), source, energy.reset_index(drop=True))


def spread_of(figures: Figures, leave_out: str | None = None) -> between.Between:
    """The between-run component (site_builder.analyses.between) estimated from the figures' runs, without the
    runs of machine `leave_out`."""
    m, s, e = figures.measurements, figures.speedups, figures.energy
    if leave_out is not None:
        m, s = m[m["machine_id"] != leave_out], s[s["machine_id"] != leave_out]
        e = e[e["machine_id"] != leave_out] if len(e) else e
    return between.estimate_all(m, s, e)


def site_rule_intervals(args: argparse.Namespace) -> Figures:
    """The intervals the site gives a figure of one run: the rules' within-run interval widened by the between-run
    variance (uncertainty.single_run_interval), tau estimated from the other machines' runs (--tau leave-one-out,
    the default: a machine's own runs never set the width its pairs are judged by) or from every machine's (--tau
    all, as the site estimates it)."""
    figures = file_intervals(args, rules=True)
    tables = {
        between.MEASUREMENT: figures.measurements,
        between.SPEEDUP: figures.speedups,
        between.ENERGY: figures.energy,
    }
    machines = sorted(set().union(*(set(t["machine_id"]) for t in tables.values() if len(t))))
    spreads = {m: spread_of(figures, m if args.tau == "leave-one-out" else None) for m in machines}
    out = {}
    for figure, table in tables.items():
        if table.empty:
            out[figure] = table
            continue
        tau2 = np.array(
            [
                spreads[m].tau2(figure, d, v, e)
                for m, d, v, e in zip(table["machine_id"], table["device"], table["variant"], table["era"], strict=True)
            ]
        )
        lo, hi = uncertainty.single_run_interval(table["value"], table["lo"], table["hi"], tau2)
        out[figure] = table.assign(lo=lo, hi=hi, tau=np.sqrt(tau2))
    source = f"{figures.source}; tau {args.tau}"
    return Figures(out[between.MEASUREMENT], out[between.SPEEDUP], source, out[between.ENERGY])


INTERVALS: dict[str, Callable[[argparse.Namespace], Figures]] = {
    "file": file_intervals,
    "rules": lambda args: file_intervals(args, rules=True),
    "site-rules": site_rule_intervals,
    "site": site_intervals,
}


@dataclass
class Pairs:
    """One kind of figure's pairs of runs: ordered (coverage) and unordered (spread), with A's row's subset
    columns."""

    ordered: pd.DataFrame  # value_b, lo_a, hi_a, device, variant, gpu_model (A's)
    unordered: pd.DataFrame  # spread, device, variant, gpu_model


def pairs_of(table: pd.DataFrame, group: list[str]) -> Pairs:
    """Every pair of distinct runs in a group of `group`'s columns."""
    if table.empty:
        empty = pd.DataFrame(columns=["value_b", "lo", "hi", "spread", "device", "variant", "gpu_model"])
        return Pairs(empty, empty)
    table = table[[*dict.fromkeys([*group, *FIGURE_COLUMNS])]].reset_index(drop=True)
    table = table.assign(row=np.arange(len(table)))
    right = table[[*group, "run_id", "value", "row"]]
    joined = table.merge(right, on=group, suffixes=("", "_b"))
    joined = joined[joined["run_id"] != joined["run_id_b"]]
    ordered = joined[joined["lo"].notna() & joined["hi"].notna()]
    unordered = joined[joined["row"] < joined["row_b"]]
    high, low = np.fmax(unordered["value"], unordered["value_b"]), np.fmin(unordered["value"], unordered["value_b"])
    return Pairs(ordered.reset_index(drop=True), unordered.assign(spread=high / low).reset_index(drop=True))


def summary(pairs: Pairs, mask: Callable[[pd.DataFrame], pd.Series] | None = None) -> dict[str, Any]:
    """Coverage, width and spread over the pairs (the subset `mask` picks, by A's row)."""
    ordered, unordered = pairs.ordered, pairs.unordered
    if mask is not None:
        ordered = ordered[mask(ordered)] if len(ordered) else ordered
        unordered = unordered[mask(unordered)] if len(unordered) else unordered
    inside = int(((ordered["lo"] <= ordered["value_b"]) & (ordered["value_b"] <= ordered["hi"])).sum())
    width = (ordered["hi"] / ordered["lo"]).to_numpy(float)
    spread = unordered["spread"].to_numpy(float) if len(unordered) else np.array([])
    return {
        "pairs": len(ordered),
        "inside": inside,
        "coverage": inside / len(ordered) if len(ordered) else None,
        "width_median": float(np.median(width)) if len(width) else None,
        "run_pairs": len(unordered),
        "spread_median": float(np.median(spread)) if len(spread) else None,
        "spread_p90": float(np.quantile(spread, 0.9)) if len(spread) else None,
    }


def subsets(accelerator: str) -> dict[str, list[tuple[str, Callable[[pd.DataFrame], pd.Series] | None]]]:
    by_variant: list[tuple[str, Callable[[pd.DataFrame], pd.Series] | None]] = [
        ("as-written", lambda t: t["variant"] == "as-written"),
        ("tuned", lambda t: t["variant"] == "tuned"),
    ]

    def theirs(t: pd.DataFrame) -> pd.Series:  # the spread goal's machines' as-written figures
        return (t["variant"] == "as-written") & t["gpu_model"].str.contains(accelerator, regex=False)

    return {
        "measurement": [
            ("all", None),
            ("cpu", lambda t: t["device"] == "cpu"),
            ("accelerator", lambda t: t["device"] != "cpu"),
            *by_variant,
            # which side of the goal's speedups moves between runs
            (f"{accelerator} as-written, cpu", lambda t: theirs(t) & (t["device"] == "cpu")),
            (f"{accelerator} as-written, accelerator", lambda t: theirs(t) & (t["device"] != "cpu")),
        ],
        "speedup": [
            ("all", None),
            *by_variant,
            (f"{accelerator} as-written", theirs),
        ],
        "energy": [
            ("all", None),
            ("cpu", lambda t: t["device"] == "cpu"),
            ("accelerator", lambda t: t["device"] != "cpu"),
            *by_variant,
        ],
    }


def report(args: argparse.Namespace) -> dict[str, Any]:
    figures = INTERVALS[args.interval](args)
    measurements = figures.measurements
    energy = figures.energy
    if args.single_process and len(measurements):
        measurements = measurements[measurements["single_process"].astype(bool)]
        energy = energy[energy["single_process"].astype(bool)] if len(energy) else energy
    kinds = {
        "measurement": pairs_of(measurements, MEASUREMENT_GROUP),
        "speedup": pairs_of(figures.speedups, SPEEDUP_GROUPS[args.speedup_group]),
        "energy": pairs_of(energy, MEASUREMENT_GROUP),
    }
    rows = []
    for kind, cuts in subsets(args.accelerator).items():
        for name, mask in cuts:
            rows.append({"figure": kind, "subset": name, **summary(kinds[kind], mask)})
    goal_spread = next(r for r in rows if r["figure"] == "speedup" and r["subset"] == f"{args.accelerator} as-written")
    coverage = {r["figure"]: r["coverage"] for r in rows if r["subset"] == "all"}
    machines = sorted(
        set(figures.speedups["machine_id"][figures.speedups["gpu_model"].str.contains(args.accelerator, regex=False)])
        if len(figures.speedups)
        else set()
    )
    return {
        "interval": args.interval,
        "source": figures.source,
        "definition": {
            "measurement_group": MEASUREMENT_GROUP,
            "measurements": "single-process only" if args.single_process else "streaming and data-parallel included",
            "speedup_group": SPEEDUP_GROUPS[args.speedup_group],
            "coverage_pairs": "ordered pairs (A, B) of distinct runs in a group, A with an interval",
            "spread_pairs": "unordered pairs of distinct runs in a group: max / min of the two figures",
        },
        "rows": rows,
        "goals": {
            "coverage_min": GOAL_COVERAGE,
            "spread_p90_max": GOAL_SPREAD_P90,
            "measurement_coverage": coverage["measurement"],
            "speedup_coverage": coverage["speedup"],
            "spread_subset": goal_spread["subset"],
            "spread_machines": machines,
            "spread_run_pairs": goal_spread["run_pairs"],
            "spread_p90": goal_spread["spread_p90"],
            "met": {
                "measurement_coverage": _met(coverage["measurement"], lambda x: x >= GOAL_COVERAGE),
                "speedup_coverage": _met(coverage["speedup"], lambda x: x >= GOAL_COVERAGE),
                "spread_p90": _met(goal_spread["spread_p90"], lambda x: x <= GOAL_SPREAD_P90),
            },
        },
        "baseline": BASELINE,
        "forecast": forecast(figures.speedups, args.accelerator),
    }


def median_factor(n: int) -> float:
    """n times the variance of the median of n standard normals: how much more a figure that is the median of its n
    rounds varies than their mean would (1 for n <= 2, 1.35 for 3, towards pi / 2). By simulation, seeded."""
    if n <= 2:
        return 1.0
    draws = np.random.default_rng(0).standard_normal((200_000, n))
    return float(n * np.var(np.median(draws, axis=1)))


def forecast(speedups: pd.DataFrame, accelerator: str) -> dict[str, Any] | None:
    """What more rounds a run would do to the spread goal. A run's speedup is the median of its CPU rounds over the
    median of its accelerator rounds; its log varies between runs by tau^2 (the host's drift between runs) plus
    m(r) round^2 / r (its own r rounds: round^2 one round's variance of the log ratio, the mean of each run's
    rounds_se2 times its rounds; m(r) median_factor, the median's cost over a mean). tau^2 is the site's estimate
    (site_builder.analyses.between.estimate) with each run's within-run variance so scaled. Two runs of r rounds
    each then differ in the log by a normal of variance 2 (tau^2 + m(r) round^2 / r), whose |difference| has its
    90th percentile at Z90 sqrt(2 (tau^2 + m(r) round^2 / r)). The forecast at the runs' own rounds is the check
    against the measured p90; with unlimited rounds, the between-run floor. None where the figures carry no rounds
    (`--interval file` or `site`) or no goal machine ran a speedup twice."""
    if speedups.empty or not {"se2", "era", "rounds"} <= set(speedups.columns):
        return None
    mine = speedups[
        (speedups["variant"] == "as-written")
        & speedups["gpu_model"].str.contains(accelerator, regex=False)
        & (speedups["era"] == between.ROUNDS)
        & speedups["se2"].notna()
    ]
    if mine.empty:
        return None
    factor = {int(n): median_factor(int(n)) for n in {*mine["rounds"], *FORECAST_ROUNDS}}
    component = between.estimate(mine.assign(se2=mine["se2"] * mine["rounds"].map(factor)))
    if not component.groups:
        return None
    per_round = float(np.mean(mine["se2"] * mine["rounds"]))
    rounds = int(np.median(mine["rounds"]))

    def p90(r: int | None) -> float:
        own = factor[r] * per_round / r if r else 0.0
        return float(np.exp(Z90 * math.sqrt(2.0 * (component.tau2 + own))))

    return {
        "subset": f"{accelerator} as-written",
        "groups": component.groups,
        "runs": component.runs,
        "rounds": rounds,
        "tau": component.tau,
        "round_sd": math.sqrt(per_round),
        "spread_p90": {str(r): p90(r) for r in sorted({rounds, *FORECAST_ROUNDS})},
        "spread_p90_unlimited": p90(None),
    }


def forecast_text(f: dict[str, Any]) -> str:
    at = ", ".join(f"{r} {v:.3f}x" for r, v in f["spread_p90"].items())
    return (
        f"spread forecast ({f['subset']} speedups in rounds: {f['groups']} figures, {f['runs']} runs of mostly "
        f"{f['rounds']} rounds): between runs tau {f['tau']:.3f}, one round {f['round_sd']:.3f} (sd of the log); "
        f"p90 spread with rounds a run {at}, unlimited {f['spread_p90_unlimited']:.3f}x"
    )


def _met(value: float | None, test: Callable[[float], bool]) -> bool | None:
    return None if value is None else bool(test(value))


def _cell(value: Any, form: str) -> str:
    if value is None:
        return "-"
    if form == "pct":
        return f"{value:.1%}"
    if form == "x":
        return f"{value:.3f}x"
    return f"{value:,}"


TABLE = [  # heading, key, format
    ("figure", "figure", "text"),
    ("subset", "subset", "text"),
    ("pairs", "pairs", "int"),
    ("inside", "inside", "int"),
    ("coverage", "coverage", "pct"),
    ("width hi/lo", "width_median", "x"),
    ("run pairs", "run_pairs", "int"),
    ("spread median", "spread_median", "x"),
    ("spread p90", "spread_p90", "x"),
]


def table_text(rows: list[dict[str, Any]]) -> str:
    cells = [[h for h, _, _ in TABLE]]
    cells += [[r[k] if f == "text" else _cell(r[k], f) for _, k, f in TABLE] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(TABLE))]
    lines = []
    for row in cells:
        parts = [c.ljust(w) if f == "text" else c.rjust(w) for c, w, (_, _, f) in zip(row, widths, TABLE, strict=True)]
        lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)


def goals_text(goals: dict[str, Any]) -> str:
    def verdict(met: bool | None) -> str:
        return "no pairs" if met is None else "met" if met else "not met"

    met = goals["met"]
    spread = goals["spread_p90"]
    machines = ", ".join(goals["spread_machines"]) or "no machine"
    return (
        f"goals: coverage >= {GOAL_COVERAGE:.0%}: measurements {_cell(goals['measurement_coverage'], 'pct')} "
        f"({verdict(met['measurement_coverage'])}), speedups {_cell(goals['speedup_coverage'], 'pct')} "
        f"({verdict(met['speedup_coverage'])}); {goals['spread_subset']} speedup spread p90 <= {GOAL_SPREAD_P90}x: "
        f"{_cell(spread, 'x')} over {goals['spread_run_pairs']} run pairs of {machines} ({verdict(met['spread_p90'])})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="?", default="results", help="folder of result files (default: results)")
    parser.add_argument(
        "--interval", choices=sorted(INTERVALS), default="file", help="where each run's interval comes from"
    )
    parser.add_argument("--site-data", help="--interval site: a built site's data/ folder")
    parser.add_argument(
        "--tau",
        choices=["leave-one-out", "all"],
        default="leave-one-out",
        help="--interval site-rules: the between-run variance from the other machines' runs, or from every machine's",
    )
    parser.add_argument(
        "--speedup-group",
        choices=sorted(SPEEDUP_GROUPS),
        default="point",
        help="group speedups by workload point and variant (default, as the baseline) or by workload hash",
    )
    parser.add_argument(
        "--single-process",
        action="store_true",
        help="leave streaming latencies and data-parallel points out of the measurements",
    )
    parser.add_argument(
        "--accelerator", default="H200", help="the spread goal's machines: accelerator model contains this"
    )
    parser.add_argument(
        "--min-schema",
        type=int,
        default=1,
        help="only the files of this result schema or later (9: the runs that measure every point in rounds)",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args()
    out = report(args)
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(f"interval: {out['interval']}; {out['source']}")
    d = out["definition"]
    print(f"measurements grouped by {', '.join(d['measurement_group'])} ({d['measurements']})")
    print(f"speedups grouped by {', '.join(d['speedup_group'])}")
    print()
    print(table_text(out["rows"]))
    print()
    print(goals_text(out["goals"]))
    if out["forecast"] is not None:
        print(forecast_text(out["forecast"]))
    i = out["baseline"]
    print(
        f"baseline: {i['coverage']:.1%} of {i['pairs']:,} measurement pairs; {i['speedup_run_pairs']} speedup "
        f"run pairs, spread {i['spread_median']}x median, {i['spread_p90']}x p90"
    )


if __name__ == "__main__":
    main()
