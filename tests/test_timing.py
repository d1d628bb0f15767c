"""The timing engine's statistics and stopping rule, with a fake clock so the tests are exact."""

from __future__ import annotations

import itertools
import random
import statistics

import pytest

from runner.measure.timing import measure
from runner.results.intervals import median_ci, summarize


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


class AsyncDevice:
    """A device that runs enqueued work on its own thread, as a GPU runs kernels after the host moves on."""

    def __init__(self):
        import queue
        import threading

        self.queue: queue.Queue = queue.Queue()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while True:
            self.queue.get()()
            self.queue.task_done()

    def enqueue_work(self, seconds: float) -> None:
        import time

        self.queue.put(lambda: time.sleep(seconds))

    def sync(self) -> None:
        self.queue.join()


class QueueTimer:
    """Timestamps taken when the device reaches them: what CUDA events do."""

    def __init__(self, device: AsyncDevice):
        self.device = device

    def mark(self):
        import time

        stamp: list[float] = []
        self.device.queue.put(lambda: stamp.append(time.perf_counter()))
        return stamp

    def elapsed(self, start, end) -> float:
        return end[0] - start[0]


class HostTimer:
    """A broken timer: host timestamps taken at enqueue time, never waiting for the device."""

    def mark(self):
        import time

        return time.perf_counter()

    def elapsed(self, start, end) -> float:
        return end - start


def test_device_timer_rounds_time_the_device_and_an_unsynchronised_timer_is_caught():
    from runner.measure.timing import check_engine

    device = AsyncDevice()

    def unit():  # 10 ms of device work, enqueued in a moment
        device.enqueue_work(0.01)

    timing = measure(unit, device.sync, budget_s=0.3, timer=QueueTimer(device), min_samples=3, target_rel_ci=0)
    assert timing.timer == "device-events"
    assert timing.syncs < len(timing.samples_s)  # several samples per host sync
    assert statistics.median(timing.samples_s) == pytest.approx(0.01, rel=0.3)
    ok, engine, _ = check_engine(unit, device.sync, QueueTimer(device), synced_per_unit_s=0.01, enqueue_per_unit_s=1e-5)
    assert ok and engine >= 0.009
    bad, engine, detail = check_engine(unit, device.sync, HostTimer(), synced_per_unit_s=0.01, enqueue_per_unit_s=1e-5)
    assert not bad and engine < 0.005 and "device-events" in detail


def test_order_statistic_rank_matches_the_exact_binomial_sum():
    import math

    from runner.results.intervals import order_stat_rank

    def exact(n: int) -> int:
        k = 0
        while k + 1 <= n // 2 and sum(math.comb(n, i) for i in range(k + 1)) / 2.0**n <= 0.025:
            k += 1
        return max(k, 1)

    assert all(order_stat_rank(n) == exact(n) for n in [*range(6, 60), 99, 100, 250, 999])
