"""The between-run component (site_builder.analyses.between): its estimator recovers a known variance, is zero where
runs agree and is deterministic; a single run's interval is widened by it, on the site's pages and open data."""

from __future__ import annotations

import math
from datetime import timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from site_builder import opendata, uncertainty
from site_builder.analyses import between
from site_builder.collect import Collector
from site_builder.site import Site
from tests.conftest import make_measurement, make_result


def synthetic(tau: float, se: float, groups: int = 400, runs: int = 3, seed: int = 1) -> pd.DataFrame:
    """Runs of `groups` figures: each figure's runs drawn around its own true value with between-run sd `tau`, each
    run's own estimate off by its within-run sd `se` and carrying a 95% interval of that sd."""
    rng = np.random.default_rng(seed)
    rows = []
    for g in range(groups):
        truth = rng.normal(0.0, 1.0)
        for j in range(runs):
            y = truth + rng.normal(0.0, tau) + rng.normal(0.0, se)
            half = uncertainty.Z95 * se
            rows.append(
                {
                    "machine_id": f"m{g % 7}",
                    "benchsite_version": "1.0",
                    "profile": "quick",
                    "workload_hash": f"h{g}",
                    "framework": "torch",
                    "device": "cpu" if g % 2 else "cuda",
                    "run_id": f"r{j}",
                    "variant": "tuned" if g % 3 else "as-written",
                    "value": math.exp(y),
                    "lo": math.exp(y - half),
                    "hi": math.exp(y + half),
                }
            )
    return pd.DataFrame(rows)


def test_the_estimator_recovers_a_known_between_run_variance():
    for tau in (0.05, 0.15, 0.3):
        found = between.estimate(synthetic(tau, se=0.03))
        assert found.groups == 400 and found.runs == 1200 and found.machines == 7
        assert abs(found.within - 0.03**2) < 1e-12  # W: each run's own interval gives se back
        assert abs(found.tau - tau) < 0.15 * tau, (tau, found.tau)


def test_a_few_runs_with_wide_intervals_do_not_hide_that_the_others_disagree():
    # runs spread by tau = 0.1 between runs, each precise within itself (se 0.01); one run in ten had a stalled
    # round, which widens its interval (se 0.5) but not its figure (the median of its rounds). The mean s^2 (0.025)
    # then exceeds the runs' whole spread (0.01): the method of moments said 0, and every precise run's interval
    # missed the next run. Weighing each run by its own noise recovers tau.
    table = synthetic(0.1, se=0.01, groups=600, seed=5)
    noisy = np.arange(len(table)) % 10 == 0
    half = uncertainty.Z95 * np.where(noisy, 0.5, 0.01)
    table = table.assign(lo=table["value"] * np.exp(-half), hi=table["value"] * np.exp(half))
    found = between.estimate(table)
    assert found.within > found.pooled  # what V - W floored at 0
    assert abs(found.tau - 0.1) < 0.015, found.tau


def test_the_estimator_is_zero_where_runs_agree_within_their_own_noise():
    assert between.estimate(synthetic(0.0, se=0.05)).tau2 < 0.05**2 * 0.2  # the floor of V - W: near 0
    table = synthetic(0.2, se=0.05)
    table["value"] = table.groupby("workload_hash")["value"].transform("first")  # every run the same figure
    assert between.estimate(table).tau2 == 0.0


def test_the_estimator_is_deterministic_and_ignores_row_order():
    table = synthetic(0.1, se=0.02)
    first = between.estimate_all(table, table.iloc[:0])
    again = between.estimate_all(table.sample(frac=1.0, random_state=3), table.iloc[:0])
    assert first.components.keys() == again.components.keys()
    for key, component in first.components.items():
        assert math.isclose(component.tau2, again.components[key].tau2, rel_tol=1e-12, abs_tol=1e-15)
    assert set(first.components) >= {("measurement", "all", "all"), ("measurement", "cpu", "tuned")}


def test_a_group_of_one_run_or_runs_without_an_interval_estimate_nothing():
    table = synthetic(0.2, se=0.02, runs=1)
    assert between.estimate(table) == between.NONE
    table = synthetic(0.2, se=0.02)
    table[["lo", "hi"]] = np.nan
    assert between.estimate(table) == between.NONE


def test_a_speedup_with_no_group_of_its_own_takes_its_two_sides_variance():
    spread = between.Between(
        {
            ("measurement", "all", "all"): between.Component(0.03, 2, 4, 1, 0.031, 0.001),
            ("measurement", "cpu", "tuned"): between.Component(0.01, 1, 2, 1, 0.011, 0.001),
            ("measurement", "accelerator", "tuned"): between.Component(0.02, 1, 2, 1, 0.021, 0.001),
        },
        1,
    )
    assert math.isclose(spread.tau2("speedup", "cuda", "tuned"), 0.03)
    assert spread.tau2("measurement", "cuda", "as-written") == 0.03  # no group of its own: the figure's over all


def test_single_run_interval_adds_tau_on_the_log_scale():
    se, tau = 0.02, 0.1
    lo, hi = uncertainty.single_run_interval([2.0], [2.0 * math.exp(-1.96 * se)], [2.0 * math.exp(1.96 * se)], tau**2)
    half = math.log(hi[0] / lo[0]) / 2
    s = 1.96 / uncertainty.Z95 * se
    assert math.isclose(half, uncertainty.Z95 * math.sqrt(2 * (s**2 + tau**2)), rel_tol=1e-9)
    same = uncertainty.single_run_interval([2.0], [1.9], [2.2], 0.0)
    assert (same[0][0], same[1][0]) == (1.9, 2.2)  # no between-run variance: the run's own interval
    none = uncertainty.single_run_interval([2.0], [np.nan], [np.nan], tau**2)
    assert np.isnan(none[0][0]) and np.isnan(none[1][0])  # no within-run interval: none
    lopsided = uncertainty.single_run_interval([2.0], [1.0], [2.01], 0.001)
    assert lopsided[0][0] == 1.0 and lopsided[1][0] > 2.01  # never narrower than the run's own on either side


def test_single_run_interval_holds_another_run_of_the_machine_95_percent_of_the_time():
    # runs of one machine: log figure = mu + b (between runs, sd tau) + e (within the run, sd se); run 1's interval
    # as the site shows it must hold run 2's figure about 95% of the time (an interval for mu alone holds it ~83%)
    rng = np.random.default_rng(7)
    n, se, tau = 4000, 0.03, 0.12
    y1 = rng.normal(0.0, tau, n) + rng.normal(0.0, se, n)
    y2 = rng.normal(0.0, tau, n) + rng.normal(0.0, se, n)
    est = np.exp(y1)
    lo, hi = uncertainty.single_run_interval(est, est * np.exp(-1.96 * se), est * np.exp(1.96 * se), tau**2)
    inside = float(np.mean((np.exp(y2) >= lo) & (np.exp(y2) <= hi)))
    assert 0.935 <= inside <= 0.965, inside


def _run(result, day: int, run_id: int):
    run = result.run.model_copy(
        update={"id": f"{run_id:032x}", "started_at": result.run.started_at + timedelta(days=day)}
    )
    return result.model_copy(update={"run": run})


def _pair(cpu_s: float, gpu_s: float) -> list:
    return [
        make_measurement(device="cpu", median_s=cpu_s),
        make_measurement(device="cuda", device_name="NVIDIA H100", median_s=gpu_s),
    ]


def test_a_single_run_is_widened_by_the_spread_between_another_machines_runs():
    """Machine A ran twice (its CPU 20% apart, its speedups too); machine B once: B's measurement and speedup
    intervals hold the between-run variance A's runs show, and the open data's per-run rows carry them."""
    collector = Collector()
    for day, (cpu_s, gpu_s) in enumerate([(0.010, 0.002), (0.012, 0.002)]):
        collector.add(Path(f"a{day}"), _run(make_result(_pair(cpu_s, gpu_s), label="A"), day, day + 1))
    single = _run(make_result(_pair(0.011, 0.002), label="B"), 0, 9)
    collector.add(Path("b"), single)
    site = Site.from_collector(collector, [])
    tau2 = site.spread.tau2("measurement", "cpu", "tuned")
    assert tau2 > 0.005 and site.spread.machines == 1
    b = single.machine.id
    row = site.frame[(site.frame["machine_id"] == b) & (site.frame["device"] == "cpu")].iloc[0]
    own = single.measurements[0].ci95_s
    se = math.log(own[1] / own[0]) / (2 * uncertainty.Z95)
    half = math.log(row["ci_hi_s"] / row["ci_lo_s"]) / 2
    assert math.isclose(half, uncertainty.Z95 * math.sqrt(2 * (se**2 + tau2)), rel_tol=1e-6)
    speedup = site.speedups[site.speedups["machine_id"] == b].iloc[0]
    within = uncertainty.ratio_interval_columns([single.measurements[0].samples_s], [single.measurements[1].samples_s])
    assert math.log(speedup["speedup_hi"] / speedup["speedup_lo"]) > math.log(within[1][0] / within[0][0]) + 0.1
    # the open data: one row per run beside the machine's, the single run's the same interval as its machine's
    table = opendata.speedups_table(site)
    runs = opendata.speedup_run_rows(site)
    assert set(table["level"]) == {"machine"} and set(runs["level"]) == {"run"} and len(runs) == 3
    mine = runs[runs["machine_id"] == b].iloc[0]
    assert math.isclose(mine["speedup_lo"], speedup["speedup_lo"]) and mine["run_id"] == f"{9:032x}"
    measured = pd.concat(list(opendata.measurement_blocks(site)))
    assert (measured["level"] == "run").sum() == 6 and (measured["level"] == "machine").sum() == 4


def rounds_runs(tau: float, round_sd: float, groups: int = 60, runs: int = 6, rounds: int = 3, seed: int = 2):
    """Speedups as calibration.py tabulates them: each run's figure the median of its CPU rounds over the median
    of its accelerator rounds, the two sides drawn round by round around the run's own offset (between-run sd
    `tau`), the log ratio of a round off by `round_sd`."""
    rng = np.random.default_rng(seed)
    side_sd = round_sd / math.sqrt(2.0)
    rows = []
    for g in range(groups):
        truth = rng.normal(0.0, 1.0)
        for j in range(runs):
            offset = truth + rng.normal(0.0, tau)
            cpu = uncertainty.Rounds(np.exp(offset + rng.normal(0.0, side_sd, rounds)), f"r{j}")
            gpu = uncertainty.Rounds(np.exp(rng.normal(0.0, side_sd, rounds)), f"r{j}")
            lo, hi = uncertainty.ratio_interval_columns([cpu], [gpu])
            rows.append(
                {
                    "machine_id": "m",
                    "benchsite_version": "1.0",
                    "profile": "standard",
                    "workload_hash": f"h{g}",
                    "framework": "torch",
                    "device": "cuda",
                    "run_id": f"r{j}",
                    "variant": "as-written",
                    "gpu_model": "NVIDIA H100 80GB HBM3",
                    "value": float(np.median(cpu) / np.median(gpu)),
                    "lo": float(lo[0]),
                    "hi": float(hi[0]),
                    "se2": uncertainty.rounds_se2(cpu, gpu),
                    "era": between.era_of(cpu, gpu),
                    "rounds": rounds,
                }
            )
    return pd.DataFrame(rows)


def test_the_spread_forecast_reproduces_the_measured_spread_and_bounds_what_more_rounds_buy():
    # tests/benchmarks/calibration.py's forecast of the run-to-run spread: at the runs' own rounds it must give the
    # spread the pairs of runs show; with more rounds it falls towards the between-run floor, never below it
    from tests.benchmarks import calibration

    table = rounds_runs(tau=0.11, round_sd=0.18)
    found = calibration.forecast(table, "H100")
    assert found is not None and found["groups"] == 60 and found["runs"] == 360 and found["rounds"] == 3
    logs = np.log(table["value"].to_numpy()).reshape(60, 6)
    measured = np.quantile([abs(a - b) for row in logs for i, a in enumerate(row) for b in row[i + 1 :]], 0.9)
    assert abs(math.log(found["spread_p90"]["3"]) - measured) < 0.1 * measured, (found, math.exp(measured))
    at = [found["spread_p90"][str(r)] for r in (3, 5, 10)]
    floor = math.exp(calibration.Z90 * math.sqrt(2.0) * found["tau"])
    assert at[0] > at[1] > at[2] > found["spread_p90_unlimited"] == pytest.approx(floor)
    assert abs(found["tau"] - 0.11) < 0.3 * 0.11
    # nothing to forecast from: another accelerator, or figures without rounds (--interval file)
    assert calibration.forecast(table, "H200") is None
    assert calibration.forecast(table.drop(columns=["rounds"]), "H100") is None


def test_whether_a_side_has_an_interval_is_what_computing_it_says():
    """side_has_interval decides without computing the interval where it can; over samples of every size, ties,
    near-ties and zeros, as plain runs, runs of several and rounds, it agrees with the intervals."""
    rng = np.random.default_rng(7)
    cases: list[np.ndarray] = []
    for n in range(1, 13):
        for _ in range(30):
            base = rng.lognormal(0, 1, n)
            cases += [base, np.full(n, base[0]), np.round(base, 1), base[0] * (1 + rng.integers(0, 2, n) * 1e-13)]
    cases += [np.array([0.0, 1.0]), np.array([-1.0, 2.0])]  # samples are finite (the gate refuses others)
    cases += [np.array([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 2.0]), np.array([1.0] * 5 + [2.0] * 5)]

    def computed(side: object) -> bool:
        if isinstance(side, uncertainty.Rounds):
            return uncertainty.intervals.process_interval(side.tolist()) is not None
        runs = side.runs() if isinstance(side, uncertainty.RunSamples) else [np.asarray(side)]
        if any(uncertainty.intervals.measurement_interval(r.tolist()) is not None for r in runs):
            return True
        medians = [float(np.median(r)) for r in runs]
        return len(runs) > 1 and uncertainty.intervals.measurement_interval(medians) is not None

    sides: list[object] = [*cases, *(uncertainty.Rounds(c, "run/torch/as-written") for c in cases)]
    sides += [uncertainty.RunSamples([a, b]) for a, b in zip(cases[::2], cases[1::2], strict=False)]
    disagree = [s for s in sides if uncertainty.side_has_interval(s) != computed(s)]
    assert not disagree, disagree[:3]
    assert {uncertainty.side_has_interval(s) for s in sides} == {True, False}


def test_the_estimate_is_the_same_whether_the_text_columns_are_categorical_or_text():
    """estimate_all groups and orders runs by their text (GROUP, run, loop): categorical columns, whose categories
    come in an order of their own (the build's), must give bit for bit the estimate text columns give, rows and
    runs summed in the same order."""
    table = synthetic(tau=0.1, se=0.05, groups=120, runs=3, seed=4)
    table["workload_hash"] = [f"h{int(h[1:]) * 7919 % 1000}" for h in table["workload_hash"]]  # not in row order
    names = [*between.GROUP, "run_id", "variant"]
    categorical = table.astype(dict.fromkeys(names, "category"))
    for name in names:  # categories reversed, with one no row uses
        column = categorical[name]
        categorical[name] = column.cat.set_categories(["~unused", *reversed(column.cat.categories)])
    text = between.estimate_all(table, table.iloc[:0])
    assert between.estimate_all(categorical, categorical.iloc[:0]) == text
    assert text.components[("measurement", "all", "all")].tau2 > 0
