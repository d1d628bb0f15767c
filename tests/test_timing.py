"""The timing engine's statistics and stopping rule, with a fake clock so the tests are exact."""

from __future__ import annotations

import itertools
import random

import pytest

from runner.timing import measure, median_ci, summarize


class FakeDevice:
    """A clock that advances only when a unit runs, by the unit's scripted duration."""

    def __init__(self, durations):
        self.now = 0.0
        self.durations = iter(durations)
        self.syncs = 0

    def clock(self) -> float:
        return self.now

    def run_unit(self) -> None:
        self.now += next(self.durations)

    def sync(self) -> None:
        self.syncs += 1


def test_summarize_median_iqr():
    stats = summarize([1.0, 2.0, 3.0, 4.0, 100.0])
    assert stats.median_s == 3.0
    assert stats.iqr_s == pytest.approx(2.0)


def test_median_ci_order_statistics_bounds():
    samples = sorted(float(i) for i in range(1, 21))  # n=20: the 95% CI is [x_(6), x_(15)]
    assert median_ci(samples) == (6.0, 15.0)
    assert median_ci([1.0]) is None
    lo, hi = median_ci([1.0, 1.1, 0.9])
    assert lo <= 1.0 <= hi


def test_median_ci_covers_true_median_about_95_percent():
    rng = random.Random(1)
    hits = 0
    for _ in range(2000):
        samples = sorted(rng.lognormvariate(0, 0.5) for _ in range(25))
        lo, hi = median_ci(samples)
        hits += lo <= 1.0 <= hi  # the median of lognormal(0, s) is exp(0) = 1
    assert 0.93 <= hits / 2000 <= 0.99


def test_warmup_is_recorded_apart_and_stable_measurement_stops_early():
    dev = FakeDevice(itertools.chain([5.0], itertools.repeat(0.1)))
    timing = measure(dev.run_unit, dev.sync, budget_s=100.0, clock=dev.clock)
    assert timing.warmup_s == 5.0
    assert timing.stable and timing.warnings == []
    assert len(timing.samples_s) == 6  # the minimum for an order-statistic CI
    assert all(s == pytest.approx(0.1) for s in timing.samples_s)


def test_noisy_measurement_stops_at_budget_with_a_warning():
    rng = random.Random(0)
    dev = FakeDevice(itertools.chain([1.0], (rng.uniform(0.05, 0.5) for _ in itertools.count())))
    timing = measure(dev.run_unit, dev.sync, budget_s=3.0, clock=dev.clock)
    assert not timing.stable
    assert "unstable" in timing.warnings[0]
    # the budget is checked between samples, so the last one may run past it by at most one unit
    assert 3.0 <= sum(timing.samples_s) <= 3.5


def test_a_unit_longer_than_the_budget_still_gives_one_sample():
    dev = FakeDevice(itertools.chain([10.0], itertools.repeat(8.0)))
    timing = measure(dev.run_unit, dev.sync, budget_s=1.0, clock=dev.clock)
    assert timing.samples_s == [8.0]


def test_tiny_units_are_blocked_and_synchronised_once_per_block():
    dev = FakeDevice(itertools.chain([0.01], itertools.repeat(0.001)))
    timing = measure(dev.run_unit, dev.sync, budget_s=1.0, clock=dev.clock, min_sample_s=0.02)
    assert timing.units_per_sample == 20
    assert timing.samples_s[0] == pytest.approx(0.001)
    # one sync before and after warm-up, one after the probe, one per block
    assert dev.syncs == 3 + len(timing.samples_s)
