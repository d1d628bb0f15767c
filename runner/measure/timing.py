"""The timing engine: a pure measuring function (the statistics of its samples are runner.results.intervals).

It knows nothing of frameworks: it is handed `run_unit` (one epoch or step, possibly asynchronous), `sync`
(the framework's wait-for-the-device) and, where the device has them, a `DeviceTimer` (timestamps recorded in
the device's own queue, such as CUDA events). It synchronises only at the timer boundary:

- without a device timer, once per sample (torch.utils.benchmark's blocked_autorange does the same); on an
  accelerator the samples are then long enough (ACCEL_MIN_SAMPLE_S) that the queue drained at each sync costs
  well under 1%;
- with one, samples are bounded by device timestamps and the host synchronises once per round of samples
  (ROUND_S), so a launch-bound loop keeps its queue full across sample boundaries, as it does in a plain loop.
  The sync at the end of a round is what makes the timestamps valid: they are read only after it.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from runner.results.intervals import MIN_ORDER_STAT_SAMPLES, summarize

# Stop repeating once the 95% CI half-width is within this fraction of the median (pyperf-style target).
TARGET_REL_CI = 0.02
# Samples shorter than this are dominated by timer and sync overhead; units are blocked to reach it.
MIN_SAMPLE_S = 0.02
# On an accelerator timed without device timestamps every sample ends in a host sync, which drains the launch
# queue: the next sample starts on an idle device, losing the overlap a plain loop keeps across units (suite 1's
# sync after every ~0.1 s LeNet epoch cost 11% on an H100). Samples of at least 0.2 s spread that loss thinner.
ACCEL_MIN_SAMPLE_S = 0.2
# With device timestamps the host synchronises once per round of samples of about this length.
ROUND_S = 0.25


class Meter(Protocol):
    """An energy counter (runner.measure.energy): joules since it was opened."""

    def read(self) -> float: ...


class DeviceTimer(Protocol):
    """Timestamps taken by the device in its own queue, in order with the work (CUDA/HIP events)."""

    def mark(self) -> Any:
        """Record a timestamp after everything enqueued so far; returns a handle."""

    def elapsed(self, start: Any, end: Any) -> float:
        """Seconds between two marks. Valid only once the host has synchronised past `end`."""


@dataclass
class Timing:
    warmup_s: float
    samples_s: list[float] = field(default_factory=list)
    units_per_sample: int = 1
    stable: bool = False
    warnings: list[str] = field(default_factory=list)
    steady_wall_s: float = 0.0
    timer: str = "host-sync"  # how samples were bounded: 'host-sync' or 'device-events'
    syncs: int = 0  # host synchronisations during the steady state
    steady_units: int = 0  # units run in the steady state (the probe unit and every sample's)
    energy_j: list[float] = field(default_factory=list)  # each meter's joules over the steady state


def measure(
    run_unit: Callable[[], object],
    sync: Callable[[], object],
    *,
    budget_s: float,
    timer: DeviceTimer | None = None,
    min_samples: int = MIN_ORDER_STAT_SAMPLES,
    max_samples: int = 1000,
    target_rel_ci: float = TARGET_REL_CI,
    min_sample_s: float = MIN_SAMPLE_S,
    round_s: float = ROUND_S,
    warmup_units: int = 1,
    warmup: Callable[[], object] | None = None,
    clock: Callable[[], float] = time.perf_counter,
    on_sample: Callable[[int, float], object] | None = None,
    meters: Sequence[Meter] = (),
    min_window_s: float = 0.0,
) -> Timing:
    """Time one unit as warm-up, then repeat blocks of units until the CI is tight or the budget is spent.

    The budget covers the steady-state samples (not the warm-up). At least one sample is always taken,
    even when a single unit outlasts the budget; a measurement that ends unconverged gets a warning.
    `on_sample(samples, elapsed)` is called after each host synchronisation. `warmup_units` > 1 runs more
    units untimed after the first (compiled programs record their CUDA graphs in the first few calls).
    `warmup`, where given, runs instead of the first unit: a shorter pass through the same code (an epoch loop's
    first batches and its last, partial one) that compiles, autotunes and allocates what a unit needs.
    `meters` (energy counters: runner.measure.energy) are read at the steady state's two bounds, each right after
    the device synchronised, so their difference is the energy of exactly the units the steady state ran;
    `min_window_s` keeps the steady state going at least that long (a counter that advances in steps needs a window
    of several of its steps: runner.results.energy.min_window), budget and a tight interval notwithstanding.
    """
    sync()
    start = clock()
    (warmup or run_unit)()
    sync()
    timing = Timing(warmup_s=clock() - start)
    if warmup_units > 1:
        for _ in range(warmup_units - 1):
            run_unit()
        sync()

    # Probe one unit to choose the block size: warm-up includes compilation and is no guide.
    at_start = [meter.read() for meter in meters]  # the device is idle here: the warm-up's sync returned
    steady_start = clock()
    run_unit()
    sync()
    first = clock() - steady_start
    timing.steady_units = 1
    block = max(1, math.ceil(min_sample_s / first - 1e-9)) if first > 0 else 1
    timing.units_per_sample = block
    if block == 1:
        timing.samples_s.append(first)
    if timer is not None:
        timing.timer = "device-events"
    per_round = max(1, math.ceil(round_s / (first * block))) if first > 0 else 1

    def done() -> bool:
        n = len(timing.samples_s)
        if n >= max_samples:
            return True
        if clock() - steady_start < min_window_s:
            return False
        if n >= min_samples:
            stats = summarize(timing.samples_s)
            if stats.rel_ci_halfwidth is not None and stats.rel_ci_halfwidth <= target_rel_ci:
                timing.stable = True
                return True
        return n >= 1 and clock() - steady_start >= budget_s

    while True:
        if on_sample is not None and timing.samples_s:
            on_sample(len(timing.samples_s), clock() - steady_start)
        if done():
            break
        if timer is None:
            t0 = clock()
            for _ in range(block):
                run_unit()
            sync()
            timing.samples_s.append((clock() - t0) / block)
            timing.steady_units += block
        else:
            # A round: device timestamps between samples, one host sync at the end, then read them.
            # The host may run far ahead of the device, so a round is bounded by the probe's synchronised time
            # too: about round_s of device work, whatever the host's pace.
            marks = [timer.mark()]
            t0 = clock()
            room = min(max_samples - len(timing.samples_s), per_round)
            while len(marks) <= room:
                for _ in range(block):
                    run_unit()
                marks.append(timer.mark())
                timing.steady_units += block
                if clock() - t0 >= round_s:
                    break
            sync()
            timing.samples_s += [timer.elapsed(a, b) / block for a, b in itertools.pairwise(marks)]
        timing.syncs += 1

    timing.steady_wall_s = clock() - steady_start
    timing.energy_j = [meter.read() - before for meter, before in zip(meters, at_start, strict=True)]
    if not timing.stable:
        stats = summarize(timing.samples_s)
        width = f"{stats.rel_ci_halfwidth:.1%}" if stats.rel_ci_halfwidth is not None else "unknown"
        timing.warnings.append(
            f"unstable: 95% CI half-width {width} of the median after {len(timing.samples_s)} samples "
            f"(target {target_rel_ci:.0%}); raise --time-budget or quiet the machine"
        )
    return timing


def check_engine(
    run_unit: Callable[[], object],
    sync: Callable[[], object],
    timer: DeviceTimer | None,
    synced_per_unit_s: float,
    enqueue_per_unit_s: float,
    budget_s: float = 0.3,
) -> tuple[bool, float, str]:
    """The sync self-test's last step: time a unit of known device cost through this engine, as a measurement
    is timed (device timestamps included), and require the engine's median to cover the time the unit takes
    with a full host synchronisation. An unsynchronised timer sees only the enqueue time and fails.

    Returns (passed, engine seconds per unit, detail)."""
    timing = measure(run_unit, sync, budget_s=budget_s, timer=timer, min_samples=3, target_rel_ci=0.0)
    engine = summarize(timing.samples_s).median_s
    passed = engine >= 0.9 * synced_per_unit_s and engine >= 2.0 * enqueue_per_unit_s
    detail = (
        f"engine ({timing.timer}) {engine * 1e3:.3f} ms per unit against {synced_per_unit_s * 1e3:.3f} ms synchronised"
    )
    return passed, engine, detail
