"""Intervals for the figures the site derives from raw samples: speedups, time ratios and break-even points.

A speedup is a ratio of medians, CPU time / accelerator time. A file of schema 9 or later measures each point in
rounds, independent processes in which a run's CPU and accelerator rounds of one framework and loop alternate, and
each side is its rounds' medians (Rounds): the speedup's 95% interval is Student's t on the per-round log ratios,
paired round by round, centred on the figure (rounds_interval); two sides that were not timed in alternation (two
frameworks, two loops, two machines) combine their rounds' spreads as Welch's. A side of one process has no
interval, and neither has its ratio. An older file's measurement is its raw samples, and its interval comes from a
seeded percentile bootstrap: each side is resampled with replacement on its own, the ratio of the resampled medians
is taken, and the 2.5th and 97.5th percentiles of those ratios bound the interval. The seeds make every build of
the site print the same interval for the same files.

A measurement run more than once by one machine (several result files of one suite and profile) is the median of
its runs' medians, and its bootstrap has two levels too: each replicate draws the runs with replacement and,
within each drawn run, that run's samples, so the run-to-run spread widens the interval and the interval always
belongs to the figure beside it (RunSamples).

Across machines (the median speedup of every machine with one accelerator model) the bootstrap has two levels:
each replicate draws the machines with replacement and takes the median of their replicate ratios, so the
interval reflects both the spread between machines and the noise within each one. With one machine it is that
machine's interval.

A break-even (the model size or batch size where the accelerator starts to win) is bootstrapped whole: each
replicate resamples every point of the sweep, finds where the replicate's ratio first crosses 1 (log-log
interpolation between neighbouring points, as for the point estimate), and the interval is the percentiles
of those crossings. When some replicates do not cross inside the measured range, the interval is open on that
side: the site says "below the smallest measured" or "beyond the largest measured", never a number it did not
measure.

The site build keeps ratio intervals between builds (site_builder.memo), keyed by interval_key: what the interval
is computed from. While a build sets MEMO, ratio_intervals looks each row up there and computes only the rest;
each row's interval depends on its own samples alone, so the figures are the same either way. A sweep's break-even
replicates are kept the same way (break_even_replicates), under a hash of the sweep's points and samples.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, cast

import numpy as np

from runner.results import intervals
from runner.results.intervals import row_medians

CONFIDENCE = 0.95
RESAMPLES = 1000
SEED = 20261122  # fixed: the same files always give the same intervals
_CHUNK_VALUES = 4_000_000  # resampled values held at once (32 MB of float64)
_ROW_BLOCK = 1024  # ratio intervals computed at once: two sides' replicates, 16 MB each at 2,000 resamples


@dataclass(frozen=True)
class Interval:
    estimate: float
    lo: float | None  # None: open below (beyond the measured range)
    hi: float | None  # None: open above

    def spans(self, value: float) -> bool:
        """Whether `value` lies inside the interval (an open side reaches past any value)."""
        return (self.lo is None or self.lo <= value) and (self.hi is None or value <= self.hi)


class RunSamples(np.ndarray):
    """One measurement's raw samples from several runs: the samples of every run end to end (what anything that
    reads samples as one list sees), with each run's count in `sizes`, so that the point estimate is the median
    of the runs' medians (point_median) and the bootstrap resamples runs, then samples within each run
    (median_replicates). A slice or a copy of another length forgets the runs. Its one attribute is a slot, not an
    instance dictionary: the frame holds one of these per measurement, and the dictionary cost more than the samples
    (784 bytes a measurement of two runs of 8 samples, 440 with the slot)."""

    __slots__ = ("sizes",)
    sizes: tuple[int, ...]

    def __new__(cls, runs: Sequence[Sequence[float] | np.ndarray]) -> RunSamples:
        arrays = [np.asarray(r, dtype=float) for r in runs]
        if not arrays or any(a.size == 0 for a in arrays):
            raise ValueError("every run needs at least one sample")
        obj = np.concatenate(arrays).view(cls)
        obj.sizes = tuple(a.size for a in arrays)
        return obj

    def __array_finalize__(self, obj: object) -> None:
        self.sizes = getattr(obj, "sizes", ())

    def __reduce__(self) -> tuple:  # pickled (the site builder's worker processes) with its runs
        return (RunSamples, (self.runs(),))

    def runs(self) -> list[np.ndarray]:
        """Each run's samples, or the whole array as one run where the sizes no longer describe it."""
        flat = np.asarray(self)
        if sum(self.sizes) != flat.size or len(self.sizes) < 2:
            return [flat]
        return np.split(flat, np.cumsum(self.sizes)[:-1])


class Rounds(np.ndarray):
    """One run's measurement as its rounds' medians (one value per independent process, schema 9), tagged with
    what pairs them with another measurement's rounds (`pairing`: the run, framework and loop, whose CPU and
    accelerator rounds alternate). A ratio of two such sides is Student's t on the log of the rounds' medians
    (rounds_interval), paired round by round where the two pair; a break-even draws it so too (rounds_replicates).
    A ratio of rounds against an older file's raw samples is bootstrapped. A slice or a copy keeps the pairing."""

    __slots__ = ("pairing",)
    pairing: str

    def __new__(cls, medians: Sequence[float] | np.ndarray, pairing: str) -> Rounds:
        obj = np.asarray(medians, dtype=float).view(cls)
        obj.pairing = pairing
        return obj

    def __array_finalize__(self, obj: object) -> None:
        self.pairing = getattr(obj, "pairing", "")

    def __reduce__(self) -> tuple:  # pickled (the site builder's worker processes) with its pairing
        return (Rounds, (np.asarray(self), self.pairing))


def _rounds_of_one_run(side: object) -> bool:
    return isinstance(side, Rounds) and len(side) >= 2 and bool(side.pairing)


def rounds_interval(numerator: Rounds, denominator: Rounds, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The interval of point_median(numerator) / point_median(denominator) from the rounds: Student's t on the log
    ratio, centred on the figure. Where the two sides pair (the same pairing and as many rounds: a run's CPU and
    accelerator rounds, timed in alternation) the spread is that of the per-round log ratios (n - 1 degrees of
    freedom), so a drift of the host that hits both sides of a round cancels; otherwise the two sides' log spreads
    are combined as Welch's (Welch-Satterthwaite degrees of freedom). (NaN, NaN) where the rounds show no spread."""
    centre, se, df = _rounds_log_ratio(numerator, denominator)
    if not (se > 0 and math.isfinite(se) and df > 0):
        return math.nan, math.nan
    half = intervals.t_quantile(df, confidence) * se
    return math.exp(centre - half), math.exp(centre + half)


def rounds_se2(numerator: object, denominator: object = None) -> float:
    """The squared standard error of a run's log figure from its rounds (a measurement's: var(log x) / n; a ratio of
    two: _rounds_log_ratio's), what its t-interval is built on; NaN where the sides are not one run's rounds."""
    if not _rounds_of_one_run(numerator):
        return math.nan
    if denominator is None:
        return float(np.var(np.log(np.asarray(numerator, dtype=float)), ddof=1)) / len(cast(Rounds, numerator))
    if not _rounds_of_one_run(denominator):
        return math.nan
    _, se, _ = _rounds_log_ratio(cast(Rounds, numerator), cast(Rounds, denominator))
    return se * se


def _rounds_log_ratio(numerator: Rounds, denominator: Rounds) -> tuple[float, float, float]:
    """The log of the ratio of the two sides' medians, its standard error and degrees of freedom (rounds_interval)."""
    a, b = np.log(np.asarray(numerator, dtype=float)), np.log(np.asarray(denominator, dtype=float))
    centre = math.log(float(np.median(np.asarray(numerator))) / float(np.median(np.asarray(denominator))))
    if numerator.pairing == denominator.pairing and len(a) == len(b):
        diff = a - b
        return centre, float(np.std(diff, ddof=1)) / math.sqrt(len(diff)), float(len(diff) - 1)
    va, vb = float(np.var(a, ddof=1)) / len(a), float(np.var(b, ddof=1)) / len(b)
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1)) if va + vb > 0 else 0.0
    return centre, math.sqrt(va + vb), df


def point_median(samples: Sequence[float]) -> float:
    """A measurement's median: over its samples, or for several runs (RunSamples) the median of the runs'
    medians (the figure combine.combine_runs reports)."""
    if isinstance(samples, RunSamples):
        return float(np.median([np.median(run) for run in samples.runs()]))
    return float(np.median(samples))


def _rng(seed: int, *key: int) -> np.random.Generator:
    return np.random.default_rng([seed, *key])


def median_replicates(
    samples: Sequence[float] | np.ndarray, resamples: int = RESAMPLES, seed: int = SEED, side: int = 0
) -> np.ndarray:
    """The medians of `resamples` bootstrap resamples of `samples`. Deterministic: the resampling positions
    depend only on the seed, the side (numerator 0, denominator 1) and the number of samples."""
    if isinstance(samples, RunSamples) and len(samples.runs()) > 1:
        return _runs_median_replicates(samples.runs(), resamples, seed, side)
    values = np.asarray(samples, dtype=float)
    if values.size == 0:
        raise ValueError("a median needs at least one sample")
    if values.size == 1:  # one sample: nothing to resample, the interval reflects only the other side
        return np.full(resamples, values[0])
    picks = _picks(values.size, side, resamples, seed)
    out = np.empty(resamples)
    step = max(1, _CHUNK_VALUES // values.size)
    for start in range(0, resamples, step):
        out[start : start + step] = row_medians(values[picks[start : start + step]])
    return out


def _runs_median_replicates(runs: list[np.ndarray], resamples: int, seed: int, side: int) -> np.ndarray:
    """Two levels: each run's own median replicates (its own stream: run j of k), then per replicate the median
    over k runs drawn with replacement."""
    k = len(runs)
    per_run = np.empty((k, resamples))
    for j, run in enumerate(runs):
        if run.size == 1:
            per_run[j] = run[0]
        else:
            picks = _rng(seed, side, 5, k, j, run.size).integers(0, run.size, size=(resamples, run.size))
            per_run[j] = row_medians(run[picks])
    drawn = _rng(seed, side, 6, k).integers(0, k, size=(resamples, k))
    return row_medians(per_run[drawn, np.arange(resamples)[:, None]])


def ratio_replicates(
    numerator: Sequence[float], denominator: Sequence[float], resamples: int = RESAMPLES, seed: int = SEED
) -> np.ndarray:
    """Bootstrap replicates of median(numerator) / median(denominator), the two sides resampled apart."""
    if not len(numerator) or not len(denominator):
        raise ValueError("a ratio of medians needs at least one sample on each side")
    if _rounds_of_one_run(numerator) and _rounds_of_one_run(denominator):
        return rounds_replicates(cast(Rounds, numerator), cast(Rounds, denominator), resamples, seed)
    return median_replicates(numerator, resamples, seed, 0) / median_replicates(denominator, resamples, seed, 1)


def rounds_replicates(
    numerator: Rounds, denominator: Rounds, resamples: int = RESAMPLES, seed: int = SEED
) -> np.ndarray:
    """Replicates of a ratio of two runs' rounds as rounds_interval models it: the figure times exp(se * T), T drawn
    from Student's t with its degrees of freedom (seeded), so that a break-even's bootstrap draws each point's
    ratio with the spread its rounds show, not from three values resampled. No spread: the figure itself."""
    centre, se, df = _rounds_log_ratio(numerator, denominator)
    if not (se > 0 and df > 0):
        return np.full(resamples, math.exp(centre))
    draws = _rng(seed, 8, len(numerator), len(denominator)).standard_t(df, size=resamples)
    return np.exp(centre + se * draws)


def _picks(n: int, side: int, resamples: int, seed: int) -> np.ndarray:
    return _rng(seed, side, n).integers(0, n, size=(resamples, n))


def median_replicates_many(
    samples: Sequence[np.ndarray], resamples: int = RESAMPLES, seed: int = SEED, side: int = 0
) -> np.ndarray:
    """median_replicates for many measurements at once (one row each): measurements with the same number of
    samples share their resampling positions (as median_replicates draws them), so each gives exactly what
    median_replicates gives it alone, and the work is a few array operations per distinct sample count."""
    out = np.empty((len(samples), resamples))
    by_size: dict[int, list[int]] = {}
    for i, values in enumerate(samples):
        if len(values) == 0:
            raise ValueError("a median needs at least one sample")
        if isinstance(values, RunSamples) and len(values.runs()) > 1:
            out[i] = median_replicates(values, resamples, seed, side)
            continue
        by_size.setdefault(len(values), []).append(i)
    for n, rows in by_size.items():
        stacked = np.stack([np.asarray(samples[i], dtype=float) for i in rows])  # rows x n
        if n == 1:
            out[rows] = stacked[:, :1]
            continue
        picks = _picks(n, side, resamples, seed)
        step = max(1, _CHUNK_VALUES // (resamples * n))
        for start in range(0, len(rows), step):
            chunk = stacked[start : start + step]
            out[rows[start : start + step]] = row_medians(chunk[:, picks])
    return out


class IntervalMemo(Protocol):
    """Where ratio_intervals finds intervals computed before, and break_even_replicates its replicates
    (site_builder.memo.Memo)."""

    def get_intervals(self, keys: Sequence[bytes]) -> list[tuple[float, float] | None]: ...

    def put_intervals(self, keys: Sequence[bytes], lo: np.ndarray, hi: np.ndarray) -> None: ...

    def blob(self, kind: str, key: bytes) -> bytes | None: ...

    def put_blob(self, kind: str, key: bytes, value: bytes) -> None: ...


MEMO: IntervalMemo | None = None  # set by a site build for its duration (site_builder.mkdocs_hooks)


def _runs_of(samples: Sequence[float] | np.ndarray) -> list[np.ndarray]:
    """The runs the bootstrap resamples (median_replicates): several for RunSamples of more than one run."""
    if isinstance(samples, RunSamples):
        return samples.runs()
    return [np.asarray(samples, dtype=float)]


def interval_key(
    numerator: Sequence[float] | np.ndarray,
    denominator: Sequence[float] | np.ndarray,
    resamples: int,
    seed: int,
    confidence: float,
) -> bytes:
    """What a ratio interval is computed from, hashed: each side's runs (count, then each run's length and
    float64 values), the resamples, the seed and the confidence."""
    digest = hashlib.blake2b(struct.pack("<qqd", resamples, seed, confidence), digest_size=16)
    for side in (numerator, denominator):
        _hash_runs(digest, side)
    return digest.digest()


def _hash_runs(digest: hashlib.blake2b, side: Sequence[float] | np.ndarray) -> None:
    runs = _runs_of(side)
    digest.update(struct.pack("<q", len(runs)))
    for run in runs:
        values = np.ascontiguousarray(run, dtype="<f8")
        digest.update(struct.pack("<q", values.size))
        digest.update(values.tobytes())


BREAK_EVEN = "break-even"  # the memo's kind for break_even_replicates


def _break_even_key(
    xs: Sequence[float],
    cpu_samples: Sequence[Sequence[float]],
    accelerator_samples: Sequence[Sequence[float]],
    resamples: int,
    seed: int,
) -> bytes:
    """What a sweep's break-even replicates are computed from, hashed: the sweep's xs, each point's two sides'
    runs (as interval_key hashes them), the resamples and the seed."""
    digest = hashlib.blake2b(struct.pack("<qqq", resamples, seed, len(xs)), digest_size=16, person=b"break-even")
    digest.update(np.ascontiguousarray(xs, dtype="<f8").tobytes())
    for cpu, accelerator in zip(cpu_samples, accelerator_samples, strict=True):
        _hash_runs(digest, cpu)
        _hash_runs(digest, accelerator)
    return digest.digest()


def ratio_intervals(
    numerators: Sequence[np.ndarray],
    denominators: Sequence[np.ndarray],
    *,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> tuple[np.ndarray, np.ndarray]:
    """The 95% interval (lo, hi arrays) of each row's ratio of medians, vectorised; row i equals
    ratio_of_medians(numerators[i], denominators[i])'s interval. Rows MEMO holds are not computed again."""
    memo = MEMO
    if memo is None or not len(numerators):
        return _ratio_intervals(numerators, denominators, confidence, resamples, seed)
    keys = [interval_key(n, d, resamples, seed, confidence) for n, d in zip(numerators, denominators, strict=True)]
    found = memo.get_intervals(keys)
    lo = np.array([f[0] if f is not None else np.nan for f in found])
    hi = np.array([f[1] if f is not None else np.nan for f in found])
    missing = [i for i, f in enumerate(found) if f is None]
    if missing:
        new_lo, new_hi = _ratio_intervals(
            [numerators[i] for i in missing], [denominators[i] for i in missing], confidence, resamples, seed
        )
        lo[missing], hi[missing] = new_lo, new_hi
        memo.put_intervals([keys[i] for i in missing], new_lo, new_hi)
    return lo, hi


def _ratio_intervals(
    numerators: Sequence[np.ndarray], denominators: Sequence[np.ndarray], confidence: float, resamples: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Block by block of _ROW_BLOCK rows: a row's replicates do not depend on the rows beside it (its resampling
    positions depend on its sample count, side and seed alone), so the blocks give what one pass gives, and the
    replicates held at once stay a few tens of megabytes however many rows there are."""
    numerators, denominators = list(numerators), list(denominators)
    count = len(numerators)
    lo, hi = np.empty(count), np.empty(count)
    tail = (1.0 - confidence) / 2.0
    for start in range(0, count, _ROW_BLOCK):
        rows = slice(start, start + _ROW_BLOCK)
        ratios = median_replicates_many(numerators[rows], resamples, seed, 0) / median_replicates_many(
            denominators[rows], resamples, seed, 1
        )
        lo[rows], hi[rows] = np.quantile(ratios, [tail, 1.0 - tail], axis=1)
    return lo, hi


def lognormal_replicates(
    estimates: np.ndarray, lo: np.ndarray, hi: np.ndarray, resamples: int = RESAMPLES, seed: int = SEED
) -> np.ndarray:
    """Replicates (rows x resamples) of figures known by their estimate and 95% interval: log-normal with the
    interval's width (a missing interval counts as exact). What median_over needs from each machine when its
    raw-sample bootstrap has already been summarised as an interval."""
    estimates = np.asarray(estimates, dtype=float)
    width = np.log(np.asarray(hi, dtype=float) / np.asarray(lo, dtype=float)) / (2 * 1.959964)
    sigma = np.where(np.isfinite(width), width, 0.0)
    z = _rng(seed, 3, len(estimates)).standard_normal((len(estimates), resamples))
    # estimates * exp(z * sigma), computed in z's own memory: the same operations, one rows x resamples array where
    # the expression held up to three more (a summary over every machine of a group asks for one row per machine)
    z *= sigma[:, None]
    np.exp(z, out=z)
    z *= estimates[:, None]
    return z


def _percentiles(estimate: float, replicates: np.ndarray, confidence: float) -> Interval:
    tail = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(replicates, [tail, 1.0 - tail])
    return Interval(float(estimate), float(lo), float(hi))


def ratio_of_medians(
    numerator: Sequence[float],
    denominator: Sequence[float],
    *,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Interval:
    """median(numerator) / median(denominator) with its percentile-bootstrap interval."""
    replicates = ratio_replicates(numerator, denominator, resamples, seed)
    return _percentiles(point_median(numerator) / point_median(denominator), replicates, confidence)


def side_has_interval(samples: Sequence[float] | np.ndarray) -> bool:
    """Whether a measurement has a 95% interval as its pages show it (runner.results.intervals.measurement_interval;
    for several runs, RunSamples, whether any run has one, or else the runs' medians bound one: combine.py shows
    the combined interval so)."""
    if isinstance(samples, Rounds):
        return _has_process_interval(np.asarray(samples))
    runs = samples.runs() if isinstance(samples, RunSamples) else [np.asarray(samples, dtype=float)]
    if any(_has_measurement_interval(run) for run in runs):
        return True
    return len(runs) > 1 and _has_measurement_interval(np.array([np.median(run) for run in runs], dtype=float))


# Whether an interval exists, decided without computing it where that is certain (asked of every side of every
# ratio, the intervals' own arithmetic cost most of the speedups' frame): values that differ by more than this,
# relative to the largest, cannot give an interval of no width; closer ones, and anything not finite, are computed.
_DISTINCT = 1e-9


def _has_measurement_interval(run: np.ndarray) -> bool:
    """intervals.measurement_interval(run) is not None: with MIN_ORDER_STAT_SAMPLES samples or more, the two order
    statistics differ; with fewer (a t-interval about the median), the samples are not all one value."""
    n = run.size
    if n < 2:
        return False
    if np.isfinite(run).all():
        ordered = np.sort(run)
        if n >= intervals.MIN_ORDER_STAT_SAMPLES:
            k = intervals.order_stat_rank(n)
            return bool(ordered[k - 1] < ordered[n - k])
        spread = ordered[-1] - ordered[0]
        if spread == 0:
            return False
        if spread > _DISTINCT * max(abs(ordered[0]), abs(ordered[-1])):
            return True
    return intervals.measurement_interval(run.tolist()) is not None


def _has_process_interval(values: np.ndarray) -> bool:
    """intervals.process_interval(values) is not None: two values or more, all positive, not all one value."""
    if values.size < 2 or not (values > 0).all():
        return False
    low, high = values.min(), values.max()
    if np.isfinite(high) and low == high:
        return False
    if np.isfinite(high) and high - low > _DISTINCT * high:
        return True
    return intervals.process_interval(values.tolist()) is not None


Z95 = 1.959963984540054  # the normal 97.5% quantile: a 95% interval is +-Z95 standard errors


def single_run_interval(
    estimates: Sequence[float] | np.ndarray,
    lo: Sequence[float] | np.ndarray,
    hi: Sequence[float] | np.ndarray,
    tau2: float | Sequence[float] | np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The one definition of a single run's 95% interval of a figure (a measurement's time, a speedup) as the site
    shows it: where another run of the same machine would put that figure, 95% of the time (a prediction interval).
    Both runs carry their own within-run noise and their own draw of the spread between runs of one machine, tau^2
    on the log scale (site_builder.analyses.between), so with s = ln(hi / lo) / (2 * Z95), the within-run standard
    error of the log figure from its own interval (lo, hi), the interval is estimate * exp(+-Z95 * sqrt(2 * (s^2 +
    tau^2))), never narrower on either side than the within-run one (an order-statistic interval may be lopsided).
    Where tau^2 is 0 (no machine has several runs to estimate it from, or they spread no more than their own
    intervals say) the within-run interval is kept as it is; a figure without a within-run interval (NaN) keeps
    none: one sample measures no within-run noise, and tau alone would claim there is none."""
    estimates, lo, hi = (np.asarray(c, dtype=float) for c in (estimates, lo, hi))
    tau2 = np.broadcast_to(np.asarray(tau2, dtype=float), estimates.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        s2 = (np.log(hi / lo) / (2 * Z95)) ** 2
        half = Z95 * np.sqrt(2 * (s2 + tau2))
        wide = (tau2 > 0) & np.isfinite(half) & (estimates > 0)
        out_lo = np.where(wide, np.fmin(lo, estimates * np.exp(-half)), lo)
        out_hi = np.where(wide, np.fmax(hi, estimates * np.exp(half)), hi)
    return out_lo, out_hi


def is_single_run(samples: Sequence[float] | np.ndarray) -> bool:
    """Whether a measurement's samples come from one run (not RunSamples of several)."""
    return not (isinstance(samples, RunSamples) and len(samples.runs()) > 1)


def ratio_interval_columns(
    numerators: Sequence[Sequence[float] | np.ndarray],
    denominators: Sequence[Sequence[float] | np.ndarray],
    between: Sequence[float] | np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The one definition of a ratio of two measurements' interval (a speedup, a framework's time over PyTorch's, a
    loop's gain, a data-parallel efficiency), row by row, where both sides have an interval of their own
    (side_has_interval): Student's t over the rounds (rounds_interval) where both sides are one run's rounds
    (Rounds), else the seeded bootstrap of ratio_intervals; none (NaN) where either side has none or the interval
    has no width (runner.results.intervals.interval_or_none). `between`, each row's between-run variance tau^2 of
    the log ratio (the speedups pass it: site_builder.analyses.between): a row both of whose sides are one run gets
    single_run_interval's widening; a side of several runs is bootstrapped over its runs already."""
    count = len(numerators)
    lo, hi = np.full(count, np.nan), np.full(count, np.nan)
    rows = []
    for i, (a, b) in enumerate(zip(numerators, denominators, strict=True)):
        if not (len(a) and len(b) and side_has_interval(a) and side_has_interval(b)):
            continue
        if _rounds_of_one_run(a) and _rounds_of_one_run(b):
            kept = intervals.interval_or_none(*rounds_interval(cast(Rounds, a), cast(Rounds, b)))
            if kept is not None:
                lo[i], hi[i] = kept
        else:
            rows.append(i)
    if rows:
        found_lo, found_hi = ratio_intervals(
            [cast(np.ndarray, numerators[i]) for i in rows], [cast(np.ndarray, denominators[i]) for i in rows]
        )  # each side as given: a RunSamples keeps its runs
        for i, a, b in zip(rows, found_lo, found_hi, strict=True):
            kept = intervals.interval_or_none(a, b)
            if kept is not None:
                lo[i], hi[i] = kept
    if between is not None and count:
        tau2 = np.asarray(between, dtype=float)
        single = np.array(
            [is_single_run(a) and is_single_run(b) for a, b in zip(numerators, denominators, strict=True)]
        )
        estimates = np.array(
            [
                point_median(cast(Sequence[float], a)) / point_median(cast(Sequence[float], b))
                if len(a) and len(b)
                else np.nan
                for a, b in zip(numerators, denominators, strict=True)
            ]
        )
        lo, hi = single_run_interval(estimates, lo, hi, np.where(single, tau2, 0.0))
    return lo, hi


def ratio_interval(numerator: Sequence[float], denominator: Sequence[float]) -> Interval:
    """One ratio of medians with its interval as every page shows it (ratio_interval_columns); lo and hi None where
    it has none."""
    lo, hi = ratio_interval_columns([numerator], [denominator])
    estimate = point_median(numerator) / point_median(denominator)
    return Interval(estimate, None if np.isnan(lo[0]) else float(lo[0]), None if np.isnan(hi[0]) else float(hi[0]))


def median_over(
    estimates: Sequence[float],
    replicates: Sequence[np.ndarray] | np.ndarray,
    *,
    confidence: float = CONFIDENCE,
    seed: int = SEED,
) -> Interval:
    """The median of several machines' figures with a two-level bootstrap interval: each replicate draws the
    machines with replacement and takes the median of their own replicates (one row of `replicates` each).
    Open sides (infinite replicates, from break-evens outside the measured range) stay open."""
    if not len(estimates) or len(estimates) != len(replicates):
        raise ValueError("one replicate array per estimate, and at least one")
    if isinstance(replicates, np.ndarray) and replicates.ndim == 2:
        table = np.asarray(replicates, dtype=float)  # machine x replicate, as given (no copy)
    else:
        table = np.stack([np.asarray(r, dtype=float) for r in replicates])
    machines, resamples = table.shape
    if machines == 1:
        pooled = table[0]
    else:
        # resamples x machines picks, drawn and used a block of resamples at a time: the generator gives the same
        # numbers drawn in consecutive blocks as at once, and each resample's median is its own row's, so the
        # interval is the same; the picks and the picked values are held for one block, not for all (each whole
        # array was machines x resamples; the speedups page rose 1.88 GiB at 100,000 files that way, 0.57 now)
        rng = _rng(seed, 2, machines)
        pooled = np.empty(resamples)
        step = max(1, _CHUNK_VALUES // machines)
        for start in range(0, resamples, step):
            stop = min(start + step, resamples)
            picks = rng.integers(0, machines, size=(stop - start, machines))
            pooled[start:stop] = row_medians(table[picks, np.arange(start, stop)[:, None]])
    tail = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(pooled, [tail, 1.0 - tail], method="inverted_cdf")
    return Interval(
        float(np.median(estimates)),
        float(lo) if np.isfinite(lo) else None,
        float(hi) if np.isfinite(hi) else None,
    )


def median_of_intervals(
    estimates: Sequence[float] | np.ndarray,
    lo: Sequence[float] | np.ndarray,
    hi: Sequence[float] | np.ndarray,
    *,
    confidence: float = CONFIDENCE,
    seed: int = SEED,
) -> Interval:
    """The one definition of a median over machines (or runs) whose figures are known by estimate and 95% interval,
    as every summary, chart and the advisor take it. One machine: exactly its own figure and interval, so a summary
    of one machine reads as that machine's row. A member without an interval (NaN on both sides): no interval, as
    for a ratio one of whose sides has none. Otherwise median_over of log-normal replicates (lognormal_replicates).
    Kept in MEMO under a hash of the three columns, the seed and the confidence."""
    estimates, lo, hi = (np.asarray(c, dtype=float) for c in (estimates, lo, hi))
    if not len(estimates):
        raise ValueError("a median needs at least one figure")
    if (np.isnan(lo) & np.isnan(hi)).any():
        return Interval(float(np.median(estimates)), None, None)
    if len(estimates) == 1:
        return Interval(
            float(estimates[0]), None if np.isnan(lo[0]) else float(lo[0]), None if np.isnan(hi[0]) else float(hi[0])
        )
    memo = MEMO
    key = b""
    if memo is not None:
        digest = hashlib.blake2b(
            struct.pack("<qqd", RESAMPLES, seed, confidence), digest_size=16, person=b"median-over"
        )
        for column in (estimates, lo, hi):
            digest.update(np.ascontiguousarray(column, dtype="<f8").tobytes())
        key = digest.digest()
        found = memo.get_intervals([key])[0]
        if found is not None:  # an open side is kept as NaN (a computed side is never NaN: see median_over)
            a, b = found
            return Interval(float(np.median(estimates)), None if math.isnan(a) else a, None if math.isnan(b) else b)
    reps = lognormal_replicates(np.asarray(estimates, dtype=float), np.asarray(lo), np.asarray(hi), seed=seed)
    interval = median_over(list(np.asarray(estimates, dtype=float)), reps, confidence=confidence, seed=seed)
    if memo is not None:
        open_lo = np.nan if interval.lo is None else interval.lo
        open_hi = np.nan if interval.hi is None else interval.hi
        memo.put_intervals([key], np.array([open_lo]), np.array([open_hi]))
    return interval


def verdict(speedup: Interval) -> str:
    """Which side wins, only where the interval says so (runner.results.intervals.verdict)."""
    return intervals.verdict(speedup.lo, speedup.hi)


def crossing(xs: Sequence[float], ratios: Sequence[float]) -> float | None:
    """Where a ratio (CPU time / accelerator time) first crosses 1 going up, interpolated in log-log between
    neighbouring sweep points; None if it does not cross inside the measured range."""
    for (x0, r0), (x1, r1) in itertools.pairwise(zip(xs, ratios, strict=True)):
        if r0 < 1 <= r1:
            lx0, lx1, lr0, lr1 = math.log(x0), math.log(x1), math.log(r0), math.log(r1)
            return math.exp(lx0 - lr0 * (lx1 - lx0) / (lr1 - lr0))
    return None


def crossing_replicates(xs: Sequence[float], ratio_columns: Sequence[np.ndarray]) -> np.ndarray:
    """Per bootstrap replicate (one ratio replicate array per sweep point), where it crosses 1: -inf where the
    accelerator already wins at the smallest point and never falls back, +inf where it never crosses."""
    ratios = np.stack([np.asarray(c, dtype=float) for c in ratio_columns], axis=1)  # replicate x sweep point
    out = np.empty(ratios.shape[0])
    for i, row in enumerate(ratios):
        at = crossing(xs, row.tolist())
        out[i] = at if at is not None else (-np.inf if row[0] >= 1 else np.inf)
    return out


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
    found = break_even_replicates(xs, cpu_samples, accelerator_samples, resamples=resamples, seed=seed)
    if found is None:
        return None
    estimate, replicates = found
    return median_over([estimate], [replicates], confidence=confidence, seed=seed)


def break_even_replicates(
    xs: Sequence[float],
    cpu_samples: Sequence[Sequence[float]],
    accelerator_samples: Sequence[Sequence[float]],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> tuple[float, np.ndarray] | None:
    """The point estimate of a sweep's break-even and its replicates (see crossing_replicates), or None when
    the point estimate does not cross inside the measured range. Kept in MEMO (the estimate and the replicates as
    float64 bytes, nothing for None) under a hash of what they are computed from: a machine's sweep changes only
    with that machine's files."""
    if not (len(xs) == len(cpu_samples) == len(accelerator_samples)) or len(xs) < 2:
        raise ValueError("a break-even needs two or more sweep points, each with samples on both sides")
    memo = MEMO
    if memo is None:
        return _break_even_replicates(xs, cpu_samples, accelerator_samples, resamples, seed)
    key = _break_even_key(xs, cpu_samples, accelerator_samples, resamples, seed)
    kept = memo.blob(BREAK_EVEN, key)
    if kept is not None:
        if not kept:
            return None
        values = np.frombuffer(kept, dtype="<f8").astype(np.float64)
        return float(values[0]), values[1:]
    found = _break_even_replicates(xs, cpu_samples, accelerator_samples, resamples, seed)
    value = b"" if found is None else np.concatenate([[found[0]], found[1]]).astype("<f8").tobytes()
    memo.put_blob(BREAK_EVEN, key, value)
    return found


def _break_even_replicates(
    xs: Sequence[float],
    cpu_samples: Sequence[Sequence[float]],
    accelerator_samples: Sequence[Sequence[float]],
    resamples: int,
    seed: int,
) -> tuple[float, np.ndarray] | None:
    pairs = list(zip(cpu_samples, accelerator_samples, strict=True))
    estimate = crossing(xs, [point_median(c) / point_median(a) for c, a in pairs])
    if estimate is None:
        return None
    # Each sweep point gets its own stream (its index in the key): the points' samples are independent.
    columns = [ratio_replicates(c, a, resamples, seed + 7919 * (i + 1)) for i, (c, a) in enumerate(pairs)]
    return estimate, crossing_replicates(xs, columns)
