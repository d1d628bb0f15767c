"""A measurement's median and its 95% interval, from its raw samples: one definition for the measuring child (its
stopping rule), the gate (which recomputes every figure a contributor could edit) and the tests.

The interval is distribution-free (order statistics of the median; timings are skewed), with a t-interval around
the median for 2 to 5 samples and none for one.

A measurement of several rounds (schema 9: the point measured in independent processes) has the median of its
rounds' medians as its figure and the same interval computed over those medians (summarize_rounds): a round is one
value, as a sample is within a process, so three rounds give a Student's t interval and one round none.

What every reader of a figure shares (the site, `benchsite compare` and the end of a run): `interval_or_none`, the
rule that an interval of no width is no interval (too few distinct samples to resample); `measurement_interval`, a
measurement's interval as every page shows it; and `verdict`, which side an interval says is faster.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # numpy is imported where row_medians runs: the measuring child's summaries need none of it
    import numpy as np

ROUNDS_SCHEMA = 9  # the first result-file schema that measures each point in rounds (independent processes)


class _Round(Protocol):
    @property
    def samples(self) -> int: ...


class _Measured(Protocol):
    """What measurement_values reads of a measurement (runner.results.schema.Measurement)."""

    @property
    def samples_s(self) -> Sequence[float]: ...
    @property
    def rounds(self) -> Sequence[_Round]: ...
    @property
    def unit(self) -> str: ...


# Order-statistic CIs for the median need at least 6 samples for 95% coverage (0.5**5 * 2 > 0.05).
MIN_ORDER_STAT_SAMPLES = 6
# t-distribution 97.5% quantiles for the small-sample fallback, by degrees of freedom.
_T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571}


# Rows up to this long get their medians from a sort (row_medians); longer ones from np.median's partition.
SORT_MEDIAN_MAX = 64


def row_medians(values: np.ndarray) -> np.ndarray:
    """The median of each row (the last axis), bit for bit what np.median(values, axis=-1) gives. Bootstrap
    replicates are many short rows (thousands of resamples of a few samples), where sorting each row and taking the
    middle (or the mean of the middle two, as np.median does) is about four times quicker than np.median's partition;
    rows longer than SORT_MEDIAN_MAX, and anything not finite (np.median's NaN rules), go to np.median itself."""
    import numpy as np

    a = np.asarray(values, dtype=float)
    n = a.shape[-1] if a.ndim else 0
    if n == 0 or n > SORT_MEDIAN_MAX or not np.isfinite(a).all():
        return np.median(a, axis=-1)
    ordered = np.sort(a, axis=-1)
    half = n // 2
    if n % 2:
        return ordered[..., half]
    return (ordered[..., half - 1] + ordered[..., half]) / 2


@dataclass(frozen=True)
class Stats:
    median_s: float
    iqr_s: float
    ci95_s: tuple[float, float] | None
    rel_ci_halfwidth: float | None


@functools.lru_cache(maxsize=4096)
def order_stat_rank(n: int, confidence: float = 0.95) -> int:
    """Largest k with P(B <= k-1) <= alpha/2 for B ~ Binomial(n, 1/2): the median's CI is [x_(k), x_(n-k+1)].

    Summed in log space (no big integers) and cached per n: the engine asks after every sample, and the
    exact big-integer sum it replaces cost O(n^2) work per sample, milliseconds by a few hundred samples."""
    half_alpha = (1.0 - confidence) / 2
    log_norm = math.lgamma(n + 1) - n * math.log(2.0)
    cdf, k = 0.0, 0
    while k + 1 <= n // 2:
        cdf += math.exp(log_norm - math.lgamma(k + 1) - math.lgamma(n - k + 1))  # P(B <= k)
        if cdf > half_alpha:
            break
        k += 1
    return max(k, 1)


def median_ci(sorted_samples: list[float], confidence: float = 0.95) -> tuple[float, float] | None:
    """Distribution-free CI of the median from order statistics (no normality assumed: timings are
    skewed). Falls back to a t-interval around the median for 2..5 samples; None for one sample."""
    n = len(sorted_samples)
    if n >= MIN_ORDER_STAT_SAMPLES:
        k = order_stat_rank(n, confidence)
        return sorted_samples[k - 1], sorted_samples[n - k]
    if n >= 2:
        med = statistics.median(sorted_samples)
        half = _T975[n - 1] * statistics.stdev(sorted_samples) / math.sqrt(n)
        return max(med - half, sorted_samples[0]), med + half
    return None


NO_INTERVAL = "one process or too few samples: no interval"  # what a page says where a figure has no interval
FASTER_ABOVE = "accelerator faster"  # the verdicts on a ratio of CPU time over another's (above 1: the other wins)
FASTER_BELOW = "CPU faster"
NO_CLEAR_WINNER = "no clear winner"


def interval_or_none(lo: float | None, hi: float | None) -> tuple[float, float] | None:
    """(lo, hi) where both ends are finite numbers and lo < hi; None otherwise: an interval of no width (a
    resampling of too few distinct samples gives one) claims a precision nobody measured, so it is no interval."""
    if lo is None or hi is None:
        return None
    lo, hi = float(lo), float(hi)
    if not (math.isfinite(lo) and math.isfinite(hi)) or not lo < hi:
        return None
    return lo, hi


def measurement_interval(samples: list[float] | tuple[float, ...]) -> tuple[float, float] | None:
    """A measurement's 95% interval of its median as every page, table and standing shows it: median_ci, and none
    where that has no width."""
    found = median_ci(sorted(float(x) for x in samples)) if len(samples) else None
    return None if found is None else interval_or_none(*found)


def verdict(lo: float | None, hi: float | None, above: str = FASTER_ABOVE, below: str = FASTER_BELOW) -> str:
    """Which side a ratio's interval says is faster: `above` where the whole interval is above 1, `below` where it
    is below, else no clear winner; a figure without an interval (None or NaN on both sides) has no clear winner.
    An open side (None, from a break-even beyond the range) reaches past 1."""

    def known(x: float | None) -> bool:
        return x is not None and not math.isnan(float(x))

    if not known(lo) and not known(hi):
        return NO_CLEAR_WINNER
    if known(lo) and float(lo) > 1.0:  # type: ignore[arg-type]
        return above
    if known(hi) and float(hi) < 1.0:  # type: ignore[arg-type]
        return below
    return NO_CLEAR_WINNER


def split_rounds(samples: list[float], sizes: list[int]) -> list[list[float]]:
    """Each round's samples: `samples` cut in order by the rounds' sizes (which must add up to its length)."""
    if sum(sizes) != len(samples) or any(n < 1 for n in sizes):
        raise ValueError(f"rounds of {sizes} samples do not cut {len(samples)} samples")
    out, at = [], 0
    for n in sizes:
        out.append(samples[at : at + n])
        at += n
    return out


def process_interval(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float] | None:
    """The 95% interval of a figure known by one value per independent process (a measurement's rounds' medians, a
    machine's runs' figures): Student's t on the logarithms, n - 1 degrees of freedom, centred on the values'
    median, median x exp(+-t sd(log x) / sqrt n). Timings are skewed and compared as ratios, so the spread is taken
    on the log scale; nothing is clipped to the values measured (the median of three lies below the fastest one an
    eighth of the time). None for one value, or where the values show no spread."""
    n = len(values)
    if n < 2 or any(not v > 0 for v in values):
        return None
    logs = [math.log(v) for v in values]
    sd = statistics.stdev(logs)
    if not sd > 0 or not math.isfinite(sd):
        return None
    half = t_quantile(n - 1, confidence) * sd / math.sqrt(n)
    med = statistics.median(values)
    return interval_or_none(med * math.exp(-half), med * math.exp(half))


@functools.lru_cache(maxsize=256)
def t_quantile(df: float, confidence: float = 0.95) -> float:
    """Student's t quantile of a two-sided interval of `confidence` at `df` degrees of freedom (not only whole)."""
    if confidence == 0.95 and df in _T975:
        return _T975[int(df)]
    from scipy.stats import t  # only past 5 degrees of freedom: the measuring child never needs it

    return float(t.ppf(0.5 + confidence / 2, df))


def summarize_rounds(samples: list[float], sizes: list[int], schema_version: int | None = None) -> Stats:
    """A measurement of several rounds: the median of its rounds' medians (one value a process) and their interval
    (process_interval; a file of schema 9 has median_ci's, which clipped the interval to the rounds measured), and
    the interquartile range of every sample. One round: its median, no interval."""
    medians = [statistics.median(run) for run in split_rounds(samples, sizes)]
    med = statistics.median(medians)
    pooled = summarize(samples)
    if schema_version == ROUNDS_SCHEMA:
        found = median_ci(sorted(medians))
        ci = interval_or_none(*found) if found is not None else None
    else:
        ci = process_interval(medians)
    rel = (ci[1] - ci[0]) / 2 / med if ci is not None and med > 0 else None
    return Stats(median_s=med, iqr_s=pooled.iqr_s, ci95_s=ci, rel_ci_halfwidth=rel)


def measurement_values(m: _Measured, schema_version: int) -> list[float]:
    """What a result file's measurement's figure and interval are computed from (process_interval, the site's
    ratios): one value per independent process. Its rounds' medians where it has rounds (schema 9 on); for a timed
    point of a file that measures in rounds but has none (`--rounds 1`), its one process's median alone, which
    bounds no interval; for an older file's measurement, or a streaming step's latencies, its raw samples."""
    samples, sizes = list(m.samples_s), [r.samples for r in m.rounds]
    if sizes:
        return [statistics.median(run) for run in split_rounds(samples, sizes)]
    if schema_version >= ROUNDS_SCHEMA and m.unit != "latency" and samples:
        return [statistics.median(samples)]
    return samples


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
