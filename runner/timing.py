"""The timing engine: a pure measuring function and the statistics of its raw samples.

It knows nothing of frameworks: it is handed `run_unit` (one epoch or step, possibly asynchronous) and
`sync` (the framework's wait-for-the-device), and synchronises only at the timer boundary, once per
sample, as torch.utils.benchmark's blocked_autorange does.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

# Stop repeating once the 95% CI half-width is within this fraction of the median (pyperf-style target).
TARGET_REL_CI = 0.02
# Order-statistic CIs for the median need at least 6 samples for 95% coverage (0.5**5 * 2 > 0.05).
MIN_ORDER_STAT_SAMPLES = 6
# Samples shorter than this are dominated by timer and sync overhead; units are blocked to reach it.
MIN_SAMPLE_S = 0.02
# t-distribution 97.5% quantiles for the small-sample fallback, by degrees of freedom.
_T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571}


@dataclass(frozen=True)
class Stats:
    median_s: float
    iqr_s: float
    ci95_s: tuple[float, float] | None
    rel_ci_halfwidth: float | None


@dataclass
class Timing:
    warmup_s: float
    samples_s: list[float] = field(default_factory=list)
    units_per_sample: int = 1
    stable: bool = False
    warnings: list[str] = field(default_factory=list)
    steady_wall_s: float = 0.0


def _binom_cdf(k: int, n: int) -> float:
    return sum(math.comb(n, i) for i in range(k + 1)) / 2.0**n


def median_ci(sorted_samples: list[float], confidence: float = 0.95) -> tuple[float, float] | None:
    """Distribution-free CI of the median from order statistics (no normality assumed: timings are
    skewed). Falls back to a t-interval around the median for 2..5 samples; None for one sample."""
    n = len(sorted_samples)
    if n >= MIN_ORDER_STAT_SAMPLES:
        alpha = 1.0 - confidence
        # Largest k with P(B <= k-1) <= alpha/2 for B ~ Binomial(n, 1/2): CI = [x_(k), x_(n-k+1)].
        k = 0
        while k + 1 <= n // 2 and _binom_cdf(k, n) <= alpha / 2:
            k += 1
        k = max(k, 1)
        return sorted_samples[k - 1], sorted_samples[n - k]
    if n >= 2:
        med = statistics.median(sorted_samples)
        half = _T975[n - 1] * statistics.stdev(sorted_samples) / math.sqrt(n)
        return max(med - half, sorted_samples[0]), med + half
    return None


def summarize(samples: list[float]) -> Stats:
    if not samples:
        raise ValueError("no samples")
    ordered = sorted(samples)
    med = statistics.median(ordered)
    if len(ordered) >= 2:
        q = statistics.quantiles(ordered, n=4, method="inclusive")
        iqr = q[2] - q[0]
    else:
        iqr = 0.0
    ci = median_ci(ordered)
    rel = (ci[1] - ci[0]) / 2 / med if ci is not None and med > 0 else None
    return Stats(median_s=med, iqr_s=iqr, ci95_s=ci, rel_ci_halfwidth=rel)


def measure(
    run_unit: Callable[[], object],
    sync: Callable[[], object],
    *,
    budget_s: float,
    min_samples: int = MIN_ORDER_STAT_SAMPLES,
    max_samples: int = 1000,
    target_rel_ci: float = TARGET_REL_CI,
    min_sample_s: float = MIN_SAMPLE_S,
    clock: Callable[[], float] = time.perf_counter,
    on_sample: Callable[[int, float], object] | None = None,
) -> Timing:
    """Time one unit as warm-up, then repeat blocks of units until the CI is tight or the budget is spent.

    The budget covers the steady-state samples (not the warm-up). At least one sample is always taken,
    even when a single unit outlasts the budget; a measurement that ends unconverged gets a warning.
    """
    sync()
    start = clock()
    run_unit()
    sync()
    warmup = clock() - start
    timing = Timing(warmup_s=warmup)

    # Probe one unit to choose the block size: warm-up includes compilation and is no guide.
    steady_start = clock()
    run_unit()
    sync()
    first = clock() - steady_start
    block = max(1, math.ceil(min_sample_s / first - 1e-9)) if first > 0 else 1
    timing.units_per_sample = block
    if block == 1:
        timing.samples_s.append(first)

    while True:
        elapsed = clock() - steady_start
        n = len(timing.samples_s)
        if on_sample is not None and n:
            on_sample(n, elapsed)
        if n >= max_samples:
            break
        if n >= min_samples:
            stats = summarize(timing.samples_s)
            if stats.rel_ci_halfwidth is not None and stats.rel_ci_halfwidth <= target_rel_ci:
                timing.stable = True
                break
        if n >= 1 and elapsed >= budget_s:
            break
        t0 = clock()
        for _ in range(block):
            run_unit()
        sync()
        timing.samples_s.append((clock() - t0) / block)

    timing.steady_wall_s = clock() - steady_start
    if not timing.stable:
        stats = summarize(timing.samples_s)
        width = f"{stats.rel_ci_halfwidth:.1%}" if stats.rel_ci_halfwidth is not None else "unknown"
        timing.warnings.append(
            f"unstable: 95% CI half-width {width} of the median after {len(timing.samples_s)} samples "
            f"(target {target_rel_ci:.0%}); raise --time-budget or quiet the machine"
        )
    return timing
