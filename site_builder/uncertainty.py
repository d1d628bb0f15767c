"""Intervals for the figures the site derives from two sets of samples: a speedup and a break-even point.

A speedup is a ratio of medians, CPU time / accelerator time, each median taken over that measurement's raw
samples (every sample is kept in the result files). Its 95% interval comes from a seeded percentile bootstrap:
each side is resampled with replacement on its own (the two measurements ran apart, so their samples are
independent), the ratio of the resampled medians is taken, and the 2.5th and 97.5th percentiles of those ratios
bound the interval. The seed makes every build of the site print the same interval for the same files.

A break-even (the model size or batch size where the accelerator starts to win) is bootstrapped whole: each
replicate resamples every point of the sweep, finds where the replicate's ratio first crosses 1 (log-log
interpolation between neighbouring points, as for the point estimate), and the interval is the percentiles
of those crossings. When some replicates do not cross inside the measured range, the interval is open on that
side: the site says "below the smallest measured" or "beyond the largest measured", never a number it did not
measure.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

CONFIDENCE = 0.95
RESAMPLES = 2000
SEED = 20261122  # fixed: the same files always give the same intervals


@dataclass(frozen=True)
class Interval:
    estimate: float
    lo: float | None  # None: open below (beyond the measured range)
    hi: float | None  # None: open above

    def spans(self, value: float) -> bool:
        """Whether `value` lies inside the interval (an open side reaches past any value)."""
        return (self.lo is None or self.lo <= value) and (self.hi is None or value <= self.hi)


def _resampled_medians(samples: Sequence[float], resamples: int, rng: np.random.Generator) -> np.ndarray:
    values = np.asarray(samples, dtype=float)
    if values.size == 1:  # one sample: nothing to resample, the interval reflects only the other side
        return np.full(resamples, values[0])
    picks = rng.integers(0, values.size, size=(resamples, values.size))
    return np.median(values[picks], axis=1)


def ratio_of_medians(
    numerator: Sequence[float],
    denominator: Sequence[float],
    *,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Interval:
    """median(numerator) / median(denominator) with its percentile-bootstrap interval."""
    if not len(numerator) or not len(denominator):
        raise ValueError("a ratio of medians needs at least one sample on each side")
    rng = np.random.default_rng(seed)
    ratios = _resampled_medians(numerator, resamples, rng) / _resampled_medians(denominator, resamples, rng)
    tail = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(ratios, [tail, 1.0 - tail])
    return Interval(float(np.median(numerator) / np.median(denominator)), float(lo), float(hi))


def verdict(speedup: Interval) -> str:
    """Which side wins, only where the interval says so."""
    if speedup.lo is not None and speedup.lo > 1.0:
        return "accelerator faster"
    if speedup.hi is not None and speedup.hi < 1.0:
        return "CPU faster"
    return "no clear winner"


def crossing(xs: Sequence[float], ratios: Sequence[float]) -> float | None:
    """Where a ratio (CPU time / accelerator time) first crosses 1 going up, interpolated in log-log between
    neighbouring sweep points; None if it does not cross inside the measured range."""
    for (x0, r0), (x1, r1) in itertools.pairwise(zip(xs, ratios, strict=True)):
        if r0 < 1 <= r1:
            lx0, lx1, lr0, lr1 = math.log(x0), math.log(x1), math.log(r0), math.log(r1)
            return math.exp(lx0 - lr0 * (lx1 - lx0) / (lr1 - lr0))
    return None


def break_even(
    xs: Sequence[float],
    cpu_samples: Sequence[Sequence[float]],
    accelerator_samples: Sequence[Sequence[float]],
    *,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Interval | None:
    """The break-even of a sweep (xs ascending) with its bootstrap interval; None when the point estimate does
    not cross inside the measured range. A side where more than the tail's share of replicates find no crossing
    is open (None)."""
    if not (len(xs) == len(cpu_samples) == len(accelerator_samples)) or len(xs) < 2:
        raise ValueError("a break-even needs two or more sweep points, each with samples on both sides")
    pairs = list(zip(cpu_samples, accelerator_samples, strict=True))
    estimate = crossing(xs, [float(np.median(c) / np.median(a)) for c, a in pairs])
    if estimate is None:
        return None
    rng = np.random.default_rng(seed)
    columns = [_resampled_medians(c, resamples, rng) / _resampled_medians(a, resamples, rng) for c, a in pairs]
    ratios = np.stack(columns, axis=1)  # replicate x sweep point
    found = [crossing(xs, row.tolist()) for row in ratios]
    # A replicate with no crossing has the accelerator winning everywhere (crossing below the range) or nowhere
    # (beyond it); which one decides the side that stays open.
    below = sum(1 for row, at in zip(ratios, found, strict=True) if at is None and row[0] >= 1)
    above = sum(1 for at in found if at is None) - below
    tail = (1.0 - confidence) / 2.0
    crossed = np.array([at for at in found if at is not None])
    lo = hi = None
    if crossed.size:
        # Percentiles over every replicate, with the ones that did not cross placed at the end they fell off.
        ordered = np.concatenate([np.full(below, -np.inf), np.sort(crossed), np.full(above, np.inf)])
        q_lo, q_hi = np.quantile(ordered, [tail, 1.0 - tail], method="inverted_cdf")
        lo = float(q_lo) if np.isfinite(q_lo) else None
        hi = float(q_hi) if np.isfinite(q_hi) else None
    return Interval(estimate, lo, hi)
