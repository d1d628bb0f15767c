"""The figures of a streaming measurement, computed from its raw record: one place, used by the measuring child,
the gate (`benchsite validate` recomputes every figure a contributor could edit) and the site.

A streaming step offers `rate` rows per second: the producer writes one file of `rows_per_file` rows every
`interval_s` seconds for the step's duration. Each file's end-to-end latency runs from the moment the producer
began to write it to the moment Spark committed the micro-batch that holds its predictions (from then on every
reader of the output sees them). The raw record is, per file in production order, when it was produced (seconds
after the first file) and its latency.

A rate is sustained when the pipeline keeps up with it: the latency does not grow over the step. Its growth is the
least-squares slope of latency against production time, in seconds of latency gained per second of stream; a
queue that keeps up has a slope near 0 (micro-batches make the latency a saw-tooth around a flat line), one that
falls behind grows at (rate / capacity - 1). A step is bounded when:
- the growth is at most GROWTH_LIMIT (a pipeline more than 10% over its capacity is never called sustained),
- the producer itself kept the rate (no file begun more than one interval late), and
- the query committed every file before the wait after the step ended (a file it had not is counted as
  uncommitted, with the wait so far as a lower bound of its latency).

The sustained throughput of a model on a device is the highest offered rate whose step is bounded; the ladder of
rates stops at the first step that is not.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

GROWTH_LIMIT = 0.1
CONFIDENCE = 0.95


@dataclass(frozen=True)
class StreamFigures:
    p50_s: float
    p95_s: float
    p99_s: float
    growth: float  # seconds of latency per second of stream (least-squares slope)
    producer_lag_s: float  # how late the latest file started, against the schedule
    achieved_rows_per_s: float  # rows over span_s
    span_s: float  # from the first file's production to the last commit
    bounded: bool


def quantile(values: Sequence[float], q: float) -> float:
    """The q-quantile with linear interpolation between order statistics (NumPy's default, 'linear')."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("a quantile needs at least one value")
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@functools.lru_cache(maxsize=1024)
def _quantile_ranks(n: int, q: float, confidence: float) -> tuple[int | None, int | None]:
    """1-based ranks (l, u) of the order statistics bounding the q-quantile with the given confidence:
    P(X_(l) <= x_q) >= 1 - alpha/2 and P(x_q <= X_(u)) >= 1 - alpha/2, from Binomial(n, q); None where even
    the smallest (or largest) value does not reach that confidence: the interval is open on that side."""
    alpha_half = (1.0 - confidence) / 2
    log_q, log_1q = math.log(q), math.log1p(-q)

    def pmf(k: int) -> float:
        return math.exp(math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * log_q + (n - k) * log_1q)

    cdf = [0.0] * (n + 1)  # cdf[k] = P(B <= k)
    total = 0.0
    for k in range(n + 1):
        total += pmf(k)
        cdf[k] = total
    # X_(l) <= x_q  <=>  at least l of the n values fall below x_q  <=>  B >= l
    lower = None
    for rank in range(n, 0, -1):
        if 1.0 - (cdf[rank - 1]) >= 1.0 - alpha_half:
            lower = rank
            break
    # x_q <= X_(u)  <=>  fewer than u values fall below x_q  <=>  B <= u - 1
    upper = None
    for rank in range(1, n + 1):
        if cdf[rank - 1] >= 1.0 - alpha_half:
            upper = rank
            break
    return lower, upper


def quantile_ci(values: Sequence[float], q: float, confidence: float = CONFIDENCE) -> tuple[float | None, float | None]:
    """Distribution-free interval of the q-quantile from order statistics (latencies are far from normal). A
    side is None (open) where there are too few values to bound it: the 99th percentile of 60 latencies has
    no upper bound at 95%, and the site says so rather than print the largest value as one."""
    ordered = sorted(values)
    lower, upper = _quantile_ranks(len(ordered), q, confidence)
    return (ordered[lower - 1] if lower else None, ordered[upper - 1] if upper else None)


def growth(produced_s: Sequence[float], latencies_s: Sequence[float]) -> float:
    """Least-squares slope of latency against production time (0 for fewer than 3 files)."""
    n = len(latencies_s)
    if n < 3:
        return 0.0
    mean_t = sum(produced_s) / n
    mean_l = sum(latencies_s) / n
    var = sum((t - mean_t) ** 2 for t in produced_s)
    if var <= 0:
        return 0.0
    return sum((t - mean_t) * (lat - mean_l) for t, lat in zip(produced_s, latencies_s, strict=True)) / var


def figures(
    produced_s: Sequence[float],
    latencies_s: Sequence[float],
    interval_s: float,
    rows_per_file: int,
    uncommitted: int = 0,
) -> StreamFigures:
    """Every derived figure of one step, from its raw record (both lists in production order). `uncommitted`:
    files whose predictions were not all committed when the wait ended (their latencies are lower bounds)."""
    if len(produced_s) != len(latencies_s) or not latencies_s:
        raise ValueError("a stream step needs one production time per latency, and at least one file")
    slope = growth(produced_s, latencies_s)
    lag = max(0.0, max(t - i * interval_s for i, t in enumerate(produced_s)))
    span = max(t + lat for t, lat in zip(produced_s, latencies_s, strict=True))
    return StreamFigures(
        p50_s=quantile(latencies_s, 0.5),
        p95_s=quantile(latencies_s, 0.95),
        p99_s=quantile(latencies_s, 0.99),
        growth=slope,
        producer_lag_s=lag,
        achieved_rows_per_s=rows_per_file * len(latencies_s) / span,
        span_s=span,
        bounded=slope <= GROWTH_LIMIT and lag <= interval_s and uncommitted == 0,
    )
