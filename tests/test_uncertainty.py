"""Intervals of speedups and break-evens: coverage on synthetic samples whose true values are known."""

from __future__ import annotations

import numpy as np
import pytest

from runner.results.intervals import row_medians
from site_builder.uncertainty import (
    Interval,
    RunSamples,
    break_even,
    crossing,
    median_replicates,
    median_replicates_many,
    point_median,
    ratio_of_medians,
    verdict,
)


def lognormal(rng: np.random.Generator, median: float, n: int, sigma: float = 0.1) -> list[float]:
    """Samples whose population median is exactly `median` (timings are skewed to the right, like these)."""
    return list(np.exp(rng.normal(np.log(median), sigma, n)))


def test_ratio_interval_covers_the_true_ratio_about_95_percent_of_the_time():
    rng = np.random.default_rng(1)
    trials, covered = 300, 0
    for trial in range(trials):
        cpu, gpu = lognormal(rng, 2.0, 25), lognormal(rng, 1.0, 25)
        interval = ratio_of_medians(cpu, gpu, resamples=1000, seed=trial)
        covered += interval.spans(2.0)
    assert 0.90 <= covered / trials <= 0.99, covered / trials


def test_ratio_interval_narrows_with_more_samples_and_is_reproducible():
    rng = np.random.default_rng(2)
    few = ratio_of_medians(lognormal(rng, 3.0, 8), lognormal(rng, 1.0, 8))
    many = ratio_of_medians(lognormal(rng, 3.0, 400), lognormal(rng, 1.0, 400))
    assert (many.hi - many.lo) < (few.hi - few.lo) / 3
    cpu, gpu = lognormal(rng, 1.0, 30), lognormal(rng, 1.0, 30)
    assert ratio_of_medians(cpu, gpu) == ratio_of_medians(cpu, gpu)  # seeded: every build prints the same


def test_single_samples_still_give_an_interval_from_the_other_side():
    rng = np.random.default_rng(3)
    interval = ratio_of_medians([2.0], lognormal(rng, 1.0, 20))
    assert interval.lo < interval.estimate < interval.hi
    assert ratio_of_medians([2.0], [1.0]) == Interval(2.0, 2.0, 2.0)
    with pytest.raises(ValueError):
        ratio_of_medians([], [1.0])


@pytest.mark.parametrize(
    ("interval", "expected"),
    [
        (Interval(1.3, 1.1, 1.5), "accelerator faster"),
        (Interval(0.7, 0.6, 0.8), "CPU faster"),
        (Interval(1.05, 0.9, 1.2), "no clear winner"),
        (Interval(0.95, None, 1.2), "no clear winner"),
    ],
)
def test_a_verdict_needs_the_whole_interval_on_one_side_of_1x(interval, expected):
    assert verdict(interval) == expected


def test_crossing_interpolates_in_log_log():
    # ratio = x / 4 on a doubling sweep: it crosses 1 at exactly 4, between the sweep points 2 and 8
    assert crossing([1, 2, 8, 16], [0.25, 0.5, 2.0, 4.0]) == pytest.approx(4.0)
    assert crossing([1, 2], [1.5, 2.0]) is None  # the accelerator wins everywhere: no crossing inside
    assert crossing([1, 2], [0.5, 0.8]) is None


def test_break_even_interval_covers_the_true_crossing():
    xs = [1.0, 2.0, 8.0, 16.0]
    rng = np.random.default_rng(4)
    trials, covered = 120, 0
    for trial in range(trials):
        cpu = [lognormal(rng, x / 4, 20, 0.05) for x in xs]  # CPU time grows with x, the GPU's stays 1
        gpu = [lognormal(rng, 1.0, 20, 0.05) for _ in xs]
        interval = break_even(xs, cpu, gpu, resamples=500, seed=trial)
        assert interval is not None and 2.0 < interval.estimate < 8.0
        covered += interval.spans(4.0)
    assert covered / trials >= 0.88, covered / trials


def test_break_even_interval_is_open_where_replicates_leave_the_measured_range():
    xs = [1.0, 2.0]
    # At the smallest point the CPU's median is just below the GPU's, with a wide spread: about a third of the
    # replicates have the accelerator winning there already, so the break-even may lie below anything measured.
    cpu = [[0.7, 0.8, 0.95, 1.2, 1.3], [1.5] * 5]
    gpu = [[1.0] * 5, [1.0] * 5]
    interval = break_even(xs, cpu, gpu, resamples=1000)
    assert interval is not None and 1.0 < interval.estimate < 2.0
    assert interval.lo is None and interval.hi is not None and interval.hi <= 2.0
    assert interval.spans(0.5)  # open below: "below the smallest measured", not a number
    # No crossing at all in the point estimate: nothing to bound.
    assert break_even([1.0, 2.0, 4.0], [[3.0]] * 3, [[1.0]] * 3) is None
    with pytest.raises(ValueError):
        break_even([1.0], [[1.0]], [[1.0]])


def test_several_runs_are_bootstrapped_run_by_run_around_the_median_of_their_medians():
    """A long run of many fast samples must not pull the interval away from the median of the runs' medians: the
    pooled median (1.0 here) lies far below the figure the site shows (2.0)."""
    rng = np.random.default_rng(3)
    runs = RunSamples([lognormal(rng, 1.0, 200), lognormal(rng, 2.0, 5), lognormal(rng, 2.1, 5)])
    assert len(runs) == 210 and runs.sizes == (200, 5, 5)
    assert point_median(runs) == pytest.approx(float(np.median([np.median(r) for r in runs.runs()])))
    assert float(np.median(np.asarray(runs))) < 1.2 < point_median(runs)
    interval = ratio_of_medians(runs, lognormal(rng, 1.0, 30))
    assert interval.spans(interval.estimate) and interval.lo < 2.0 < interval.hi
    # the run-to-run spread is in the interval: wider than any one run's own
    alone = ratio_of_medians(runs.runs()[1], lognormal(rng, 1.0, 30))
    assert interval.hi - interval.lo > alone.hi - alone.lo
    # the vectorised path gives the same replicates as the one at a time
    together = median_replicates_many([runs, lognormal(rng, 1.0, 9)])
    assert np.array_equal(together[0], median_replicates(runs))
    # a slice forgets the runs; one run is a plain bootstrap
    assert len(runs[:7].runs()) == 1
    single = RunSamples([[1.0, 2.0, 3.0]])
    assert np.array_equal(median_replicates(single), median_replicates([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("n", [1, 2, 3, 7, 8, 64, 65, 200])
def test_row_medians_are_bit_for_bit_numpys_medians(n):
    """The bootstrap's quick medians (a sort per short row) must change no published interval: every row's median
    equals np.median's exactly, ties, repeated values, infinities and NaN included (those go to np.median)."""
    rng = np.random.default_rng(n)
    values = np.exp(rng.normal(0.0, 1.0, size=(50, n)))
    values[::7] = np.round(values[::7], 1)  # ties
    for table in (values, values[np.newaxis], values[0]):
        got = row_medians(table)
        assert np.array_equal(got, np.median(table, axis=-1)), n
        assert np.asarray(got).dtype == np.float64
    odd = values.copy()
    odd[3, 0], odd[4, -1] = np.inf, np.nan
    assert np.array_equal(row_medians(odd), np.median(odd, axis=-1), equal_nan=True)


def test_the_median_over_machines_is_drawn_a_block_of_resamples_at_a_time_with_the_same_interval(monkeypatch):
    """median_over draws its resamples of machines a block at a time (a summary over 40,000 machines held 320 MB
    arrays at once), and lognormal_replicates works in one array: every interval must be what drawing and computing
    all of it at once gives, bit for bit, open sides (infinite replicates) included."""
    from site_builder import uncertainty

    def at_once(estimates, replicates, seed=uncertainty.SEED):
        table = np.stack([np.asarray(r, dtype=float) for r in replicates])
        machines, resamples = table.shape
        picks = np.random.default_rng([seed, 2, machines]).integers(0, machines, size=(resamples, machines))
        pooled = np.median(table[picks, np.arange(resamples)[:, None]], axis=-1)
        tail = (1.0 - uncertainty.CONFIDENCE) / 2.0  # as median_over writes it (not exactly 0.025)
        lo, hi = np.quantile(pooled, [tail, 1.0 - tail], method="inverted_cdf")
        return (
            float(np.median(estimates)),
            float(lo) if np.isfinite(lo) else None,
            float(hi) if np.isfinite(hi) else None,
        )

    monkeypatch.setattr(uncertainty, "_CHUNK_VALUES", 5_000)  # blocks of 5,000 // machines resamples
    rng = np.random.default_rng(8)
    for machines in (2, 3, 40, 333, 4_999):
        estimates = np.exp(rng.normal(0, 1, machines))
        lo, hi = estimates * np.exp(-rng.uniform(0, 0.3, machines)), estimates * np.exp(rng.uniform(0, 0.3, machines))
        lo[rng.random(machines) < 0.1] = np.nan  # no interval: exact
        sigma = np.nan_to_num(np.log(hi / lo) / (2 * 1.959964), nan=0.0)
        z = np.random.default_rng([uncertainty.SEED, 3, machines]).standard_normal((machines, uncertainty.RESAMPLES))
        replicates = uncertainty.lognormal_replicates(estimates, lo, hi)
        assert np.array_equal(replicates, estimates[:, None] * np.exp(z * sigma[:, None]))
        replicates[rng.random(replicates.shape) < 0.05] = np.inf
        expected = at_once(estimates, replicates)
        for given in (replicates, list(replicates)):
            got = uncertainty.median_over(list(estimates), given)
            assert (got.estimate, got.lo, got.hi) == expected
