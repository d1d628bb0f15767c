"""Where a machine stands: its times against every published machine's on the measurements they share.

For one result file and a set of published measurements (the result files under `results/`, or the site's open
data `data/measurements.parquet`), per device class (the CPU; an accelerator) and loop (as-written, tuned):

- each published machine's device that shares at least one measurement with this file (the same workload hash, so
  the same suite version, point, loop and data, and the same framework, whatever the profile: a quick point is a
  standard point; only `ok` measurements) is compared pairwise: the ratio of this file's time to its time, per
  shared measurement the ratio of the medians, over the shared measurements their geometric mean;
- this file's rank among those devices, fastest first (a device is ahead when its ratio is above 1), and the ratio
  against the fastest one with its 95% interval (ratio_interval): Student's t on the log values of each side (one
  value per process in a file measured in rounds), Welch's degrees of freedom, and where the caller knows it (the
  site's between-run spread) the spread between runs of one machine on each side.

A machine's newest run counts for each measurement, and a machine is never compared with itself. `benchsite run`
prints this at its end, `benchsite compare FILE` for any file, and each machine page shows its own.
"""

from __future__ import annotations

import functools
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from runner.results import intervals
from runner.results.labels import cpu_label
from runner.results.schema import ResultFile

# A side's between-run variance of a log time (site_builder.analyses.between), by device kind, loop and whether the
# side was measured in rounds (its own interval then holds the spread between processes already).
Tau2 = Callable[[str, str, bool], float]


@dataclass(frozen=True)
class Row:
    """One measurement, as the comparison needs it."""

    machine_id: str
    device: str  # cpu, cuda, rocm, mps
    device_name: str
    workload: str
    workload_hash: str
    framework: str
    variant: str
    suite: int
    profile: str
    started_at: str
    # what the figure is computed from (runner.results.intervals.measurement_values: one value per round where the
    # file measures in rounds); an array where the rows come from the site's frame
    samples_s: tuple[float, ...] | np.ndarray
    rounds: bool = False  # whether the values are the rounds' medians of one run (schema 9 on)

    @property
    def device_class(self) -> str:
        return device_class(self.device)

    @functools.cached_property
    def median(self) -> float:
        return float(np.median(self.samples_s))

    @functools.cached_property
    def log_spread(self) -> tuple[float, float, int]:
        """The log of its median, the variance of its values' mean log, and their degrees of freedom (_log_spread):
        what ratio_interval combines, computed once however many comparisons it enters."""
        return _log_spread(self.samples_s)

    @property
    def has_interval(self) -> bool:
        """Whether its values have a spread (two or more, not all equal): ratio_interval gives an interval only where
        every measurement on both sides has one."""
        return not math.isnan(self.log_spread[1])


def device_class(device: str) -> str:
    return "CPU" if device == "cpu" else "accelerator"


@dataclass(frozen=True)
class Versus:
    """This file's time over another machine's device's, over the measurements the two share: those with an interval
    on both sides where they share any such, else all of them (`left_out` counts the shared ones without an interval
    that the ratio leaves out). The interval (lo, hi) is computed for the fastest device only, the one a standing
    names; None for the others."""

    machine_id: str
    device_name: str
    ratio: float
    lo: float | None
    hi: float | None
    shared: int
    left_out: int = 0

    @property
    def not_clearly_apart(self) -> bool:
        """Whether its interval includes 1 (intervals.verdict finds no clear winner): whatever the rank (by the point
        estimate), the two are not clearly apart. False where it has no interval."""
        if self.lo is None or self.hi is None:
            return False
        return intervals.verdict(self.lo, self.hi) == intervals.NO_CLEAR_WINNER

    @property
    def basis(self) -> str:
        """What the ratio rests on, e.g. '25 shared measurements; 1 without an interval left out'."""
        left = f"; {self.left_out} without an interval left out" if self.left_out else ""
        return _shared(self.shared) + left


@dataclass(frozen=True)
class Standing:
    device_class: str
    variant: str
    device_name: str
    rank: int  # 1 = fastest
    of: int
    versus: list[Versus]  # fastest first

    @property
    def fastest(self) -> Versus | None:
        """The fastest other device, where it is ahead of this one."""
        return self.versus[0] if self.versus and self.versus[0].ratio > 1 else None

    def sentence(self) -> str:
        """E.g. 'your CPU (AMD EPYC, 2 cores): 3rd of 7 CPUs on the as-written loops; 1.40x (1.30 .. 1.50) the time
        of the fastest (machine 0c9b...'s Intel Xeon Processor, 16 cores; 12 shared measurements).'"""
        what = f"your {self.device_class} ({self.device_name}): {_ordinal(self.rank)} of {self.of} {self.device_class}s"
        what += f" on the {self.variant} loops"
        best = self.fastest
        if best is not None:
            shown = intervals.NO_INTERVAL if best.lo is None or best.hi is None else f"{best.lo:.2f} .. {best.hi:.2f}"
            return (
                f"{what}; {best.ratio:.2f}x ({shown}) the time of the fastest "
                f"(machine {best.machine_id}'s {best.device_name}; {best.basis}){_tie(best, 'slower')}."
            )
        # this device is the fastest: the next is the one with the largest ratio, the first of `versus`
        nearest = self.versus[0] if self.versus else None
        if nearest is None:
            return f"{what}."
        shown = (
            intervals.NO_INTERVAL
            if nearest.lo is None or nearest.hi is None
            else f"{1 / nearest.hi:.2f} .. {1 / nearest.lo:.2f}"
        )
        return (
            f"{what}; the next, machine {nearest.machine_id}'s {nearest.device_name}, takes "
            f"{1 / nearest.ratio:.2f}x ({shown}) your time ({nearest.basis}){_tie(nearest, 'ahead')}."
        )


def _tie(versus: Versus, side: str) -> str:
    """A rank is by the ratio's point estimate; where the named device's interval includes 1, the sentence says that
    the two are not clearly apart ('not clearly slower', 'not clearly ahead'), as a verdict says 'no clear winner'."""
    return f": not clearly {side}, the interval includes 1" if versus.not_clearly_apart else ""


def _shared(n: int) -> str:
    return f"{n} shared measurement{'s' if n != 1 else ''}"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def rows_of(result: ResultFile) -> list[Row]:
    """A result file's `ok` timed measurements (streaming latencies and data-parallel points aside)."""
    cpu = cpu_label(result.machine.cpu)  # as the site names it (site_builder.collect)
    return [
        Row(
            result.machine.id,
            m.device,
            cpu if m.device == "cpu" else m.device_name,
            m.workload,
            m.workload_hash,
            m.framework,
            m.variant,
            result.suite.version,
            result.suite.profile,
            result.run.started_at.isoformat(),
            tuple(intervals.measurement_values(m, result.schema_version)),
            len(m.rounds) >= 2,
        )
        for m in result.measurements
        if m.status == "ok" and m.samples_s and m.unit != "latency" and "world_size" not in m.point
    ]


def rows_from_results(paths: Iterable[Path]) -> list[Row]:
    """Every valid file's rows under the given files or folders (a file the gate refuses is left out)."""
    from runner.results.storage import iter_all

    rows: list[Row] = []
    for _, result, problems in iter_all(list(paths)):
        if result is not None and not any(p.severity == "error" for p in problems):
            rows += rows_of(result)
    return rows


def _samples(raw: Any) -> tuple[float, ...] | np.ndarray:
    """A table cell's raw samples: the frame's own array, viewed, not copied into Python floats (the site holds one
    per measurement); the open data's text, split."""
    if raw is None:
        return ()
    if isinstance(raw, str):
        return tuple(float(x) for x in raw.split())
    return np.asarray(raw, dtype=float)


def timed(table: Any) -> np.ndarray:
    """Which rows of a table of measurements (the site's frame or its open data) a standing compares: `ok`, timed
    (no streaming latencies), on one device (no data-parallel point)."""
    keep = (table["status"] == "ok") & (table["unit"] != "latency")
    if "world_size" in table:
        keep &= table["world_size"].isna()
    else:
        keep &= ~table["point"].astype(str).str.contains("world_size=", regex=False)
    return np.asarray(keep, dtype=bool)


class TableRows:
    """A table's rows as Rows, each made when asked for: the site's frame holds millions of measurements, and a
    Row for each of them (with its dictionary, its date as text and its samples' array view) kept 28.6 MiB at 2,000
    result files, traced, against 1.9 MiB this way; the first machine page kept 1.46 GiB at 100,000. Holds the
    table's own columns (no copy)."""

    NAMES = ("machine_id", "device", "device_name", "workload", "workload_hash", "framework", "variant", "profile")

    def __init__(self, table: Any):
        self.table = table
        self._columns = [_Coded(table[name].array, str) for name in self.NAMES]
        self.suites = table["suite"].to_numpy()
        self._started = table["started_at"].array
        self.samples = table["samples_s" if "samples_s" in table else "samples"].to_numpy()
        # a measurement of rounds has what pairs them (the frame's and the open data's `pairing`, empty otherwise)
        self._pairing = _Coded(table["pairing"].array, _paired) if "pairing" in table else None
        self.timed = timed(table)

    def row(self, i: int) -> Row | None:
        """Row i (a position), or None where it is not compared or has no samples."""
        samples = _samples(self.samples[i])
        if not self.timed[i] or not len(samples):
            return None
        machine_id, device, device_name, workload, digest, framework, variant, profile = (
            column[i] for column in self._columns
        )
        started = self._started[i]
        return Row(
            machine_id,
            device,
            device_name,
            workload,
            digest,
            framework,
            variant,
            int(self.suites[i]),
            profile,
            started.isoformat() if hasattr(started, "isoformat") else str(started),
            samples,
            self._pairing is not None and self._pairing[i],
        )

    def compared(self, i: int) -> Row:
        """Row i, known to be compared."""
        row = self.row(i)
        if row is None:
            raise ValueError(f"row {i} is not a compared measurement")
        return row

    def rows(self, positions: Iterable[int]) -> list[Row]:
        """The compared rows among these positions, in their order."""
        return [r for r in (self.row(int(i)) for i in positions) if r is not None]


class _Coded:
    """A column's values by position, each made what `convert` makes of it. In a categorical column or one of
    pandas' string type, each distinct value is converted once and a position looks its code up: a scalar taken from
    a pandas array costs its boxing (16 s of the 42 s the machine pages' standings took in a profiled build of
    10,000 files)."""

    __slots__ = ("array", "codes", "convert", "labels")

    def __init__(self, array: Any, convert: Callable[[Any], Any]):
        import pandas as pd

        self.array, self.convert = array, convert
        self.codes: np.ndarray | None = None
        self.labels: list[Any] = []
        if isinstance(array.dtype, pd.CategoricalDtype):
            self.codes, values, missing = array.codes, list(array.categories), np.nan
        elif isinstance(array.dtype, pd.StringDtype):
            codes, uniques = pd.factorize(array, use_na_sentinel=True)
            self.codes, values, missing = codes.astype(np.int32), list(uniques), array.dtype.na_value
        if self.codes is not None:
            self.labels = [convert(v) for v in values] + [convert(missing)]  # code -1, a missing value, last

    def __getitem__(self, i: int) -> Any:
        if self.codes is not None:
            return self.labels[self.codes[i]]
        return self.convert(self.array[i])


def _paired(value: Any) -> bool:
    return isinstance(value, str) and bool(value)


def rows_from_table(table: Any) -> list[Row]:
    """Rows from a table of measurements with the site's columns: its frame (samples as arrays, `world_size` a
    column) or its open data (`samples_s` as text, the point as text)."""
    rows = TableRows(table)
    return rows.rows(np.flatnonzero(rows.timed))


def _newest(rows: Iterable[Row]) -> dict[tuple[str, str, str, str], Row]:
    """(machine, device, workload hash, framework) -> that machine's newest measurement of it."""
    newest: dict[tuple[str, str, str, str], Row] = {}
    for r in rows:
        key = (r.machine_id, r.device, r.workload_hash, r.framework)
        if key not in newest or r.started_at > newest[key].started_at:
            newest[key] = r
    return newest


def _log_spread(values: tuple[float, ...] | np.ndarray) -> tuple[float, float, int]:
    """A side's log median, the squared standard error of its log figure (var(log x) / n) and its degrees of
    freedom; NaN where it has fewer than 2 values or no spread (one process: no interval). Plain Python: a side is
    a few rounds' medians, and a site asks once per machine page."""
    ordered = sorted(float(v) for v in values)
    n = len(ordered)
    if n == 0 or not ordered[0] > 0:
        return math.nan, math.nan, 0
    half = n // 2
    centre = math.log(ordered[half] if n % 2 else (ordered[half - 1] + ordered[half]) / 2)
    if n < 2:
        return centre, math.nan, 0
    logs = [math.log(v) for v in ordered]
    mean = sum(logs) / n
    v = sum((x - mean) ** 2 for x in logs) / (n - 1) / n
    return centre, (v if v > 0 and math.isfinite(v) else math.nan), n - 1


def ratio_interval(mine: list[Row], theirs: list[Row], tau2: float = 0.0) -> tuple[float, float]:
    """The 95% interval of a standing's ratio, the geometric mean over pairs of measurements of my median over theirs.
    Each pair's log ratio has the standard error of its two sides (each var(log values) / n: a side's values are its
    rounds' medians, one per process, or an older file's samples); the mean over K pairs has their variances summed
    over K^2, plus `tau2`, the two machines' runs' spread (one shift of a whole run, common to its measurements, so
    not divided by K); Student's t with Welch-Satterthwaite's degrees of freedom. (NaN, NaN) where a measurement on
    either side has fewer than 2 values or no spread: such a ratio has no interval."""
    k = len(mine)
    if k == 0:
        return math.nan, math.nan
    logs, parts = [], []
    for m, t in zip(mine, theirs, strict=True):
        (cm, vm, dm), (ct, vt, dt) = m.log_spread, t.log_spread
        if math.isnan(vm) or math.isnan(vt):
            return math.nan, math.nan
        logs.append(cm - ct)
        parts += [(vm / k**2, dm), (vt / k**2, dt)]
    within = sum(v for v, _ in parts)
    se2 = within + max(float(tau2), 0.0)
    df = se2**2 / sum(v * v / d for v, d in parts)  # the between-run part: infinite degrees of freedom
    half = intervals.t_quantile(df) * math.sqrt(se2)
    centre = sum(logs) / k
    return math.exp(centre - half), math.exp(centre + half)


class Published:
    """The published rows, indexed once for any number of standings (the site asks for one per machine page): each
    machine's newest measurement per device, workload hash and framework,
    grouped by (machine, device, device name, loop), and per loop and device class one matrix of the groups'
    medians (a row per group in the index's order, a column per (workload hash, framework), NaN where a group did
    not measure it), so that one standing compares with every group at once instead of one group at a time.
    `from_table` makes the same index from the site's frame without a Row per measurement."""

    def __init__(self, rows: Iterable[Row]):
        newest = list(_newest(rows).values())
        keys = [(r.machine_id, r.device, r.device_name, r.variant) for r in newest]
        self._make(keys, newest, [(r.workload_hash, r.framework) for r in newest], newest.__getitem__)

    @classmethod
    def from_table(cls, rows: TableRows) -> Published:
        """The index of the compared rows of a table (TableRows), the same as Published(rows_from_table(table), ...)
        gives: the newest of each machine, device, workload hash and framework is the latest started, the first
        in table order among equals (as `_newest` keeps it); only those rows' medians are computed, and a Row is
        made only for the rows a standing's interval draws from."""
        import pandas as pd

        table = rows.table
        positions = np.flatnonzero(rows.timed)
        positions = positions[[len(_samples(rows.samples[i])) > 0 for i in positions]]
        names = ["machine_id", "device", "workload_hash", "framework", "device_name", "variant"]
        part = pd.DataFrame({name: np.asarray(table[name].array[positions], dtype=object) for name in names})
        started = pd.to_datetime(table["started_at"].array[positions], utc=True)
        # latest started first, table order among equals; then the first row of each key is its newest
        order = np.lexsort((positions, -started.asi8))
        part = part.iloc[order]
        first = ~part.duplicated(["machine_id", "device", "workload_hash", "framework"], keep="first").to_numpy()
        part, newest = part[first], positions[order[first]]
        obj = cls.__new__(cls)
        obj._make(
            list(zip(part["machine_id"], part["device"], part["device_name"], part["variant"], strict=True)),
            [rows.samples[i] for i in newest],
            list(zip(part["workload_hash"], part["framework"], strict=True)),
            lambda j: rows.compared(int(newest[j])),
        )
        return obj

    def _make(
        self,
        groups: list[tuple[str, str, str, str]],
        samples: list[Any],
        columns: list[tuple[str, str]],
        row: Callable[[int], Row],
    ) -> None:
        """The index over the newest rows: each one's group (machine, device, device name, loop), its samples (or
        its Row: whatever has `median`/samples) and its column (workload hash, framework); `row(j)` makes row j."""
        members: dict[tuple[str, str, str, str], list[int]] = defaultdict(list)
        for j, key in enumerate(groups):
            members[key].append(j)
        by_block: dict[tuple[str, str], list[tuple[tuple[str, str, str, str], list[int]]]] = defaultdict(list)
        for key in sorted(members):
            by_block[(key[3], device_class(key[1]))].append((key, members[key]))
        self.blocks = {block: _Block(in_block, samples, columns, row) for block, in_block in sorted(by_block.items())}

    @property
    def groups(self) -> Iterator[tuple[tuple[str, str, str, str], dict[tuple[str, str], Row]]]:
        """Every group with its rows, block by block (made here, for a test or a reader; standings use the
        blocks)."""
        for block in self.blocks.values():
            for g, key in enumerate(block.keys):
                yield key, {k: block.row(g, k) for k, j in block.columns.items() if block.which[g, j] >= 0}


def _median_and_interval(samples: Any) -> tuple[float, bool]:
    """A row's (or its samples') median, and whether it has an interval (Row.has_interval: two values or more,
    positive, not all equal)."""
    if isinstance(samples, Row):  # its values, not its log_spread: a plain-Python pass per row of every machine
        samples = samples.samples_s
    # one sort gives both, several times faster than np.median alone on a few rounds' values (the index takes one
    # per newest row of every machine); the same median as np.median's, NaN where a value is
    values = np.sort(np.asarray(_samples(samples), dtype=float))
    n = len(values)
    if n == 0 or np.isnan(values[-1]):
        return math.nan, False
    half = n // 2
    median = float(values[half]) if n % 2 else float((values[half - 1] + values[half]) / 2)
    return median, bool(n >= 2 and values[0] > 0 and values[-1] > values[0])


class _Block:
    """The groups of one loop and device class (Published.blocks), in the index's order."""

    def __init__(
        self,
        groups: list[tuple[tuple[str, str, str, str], list[int]]],
        samples: list[Any],
        columns: list[tuple[str, str]],
        row: Callable[[int], Row],
    ):
        self.keys = [key for key, _ in groups]
        self.machines = np.array([machine for (machine, _, _, _) in self.keys], dtype=object)
        self.names = [name for (_, _, name, _) in self.keys]
        self.columns = {k: j for j, k in enumerate(sorted({columns[j] for _, js in groups for j in js}))}
        self.medians = np.full((len(groups), len(self.columns)), np.nan)
        # 1 where the group's row there has an interval (Row.has_interval: two values or more with a spread)
        self.spread = np.zeros((len(groups), len(self.columns)))
        # which newest row each (group, column) is, -1 where the group did not measure it
        self.which = np.full((len(groups), len(self.columns)), -1, dtype=np.int64)
        for g, (_, js) in enumerate(groups):
            for j in js:
                c = self.columns[columns[j]]
                self.medians[g, c], has = _median_and_interval(samples[j])
                self.spread[g, c] = float(has)
                self.which[g, c] = j
        self._row = row
        # what every standing against this block reads, computed once: per group and column, 1 where the group
        # measured it (a positive, finite median), and the log of its median (0 where it did not)
        with np.errstate(invalid="ignore", divide="ignore"):
            logs = np.log(self.medians)
        self.present = np.isfinite(logs).astype(float)
        self.logs = np.where(self.present > 0, logs, 0.0)
        self.spread *= self.present
        self.spread_logs = self.logs * self.spread

    def row(self, group: int, column: tuple[str, str]) -> Row:
        """The Row a group measured in a column (made now where the index was made from a table)."""
        return self._row(int(self.which[group, self.columns[column]]))


def standing(result: ResultFile, published: Iterable[Row], tau2: Tau2 | None = None) -> list[Standing]:
    """Per device of this file and loop: its rank among every published device of its class that shares a
    measurement with it, and its time ratio against each."""
    return standing_of(result.machine.id, rows_of(result), published, tau2=tau2)


def standing_of(
    machine_id: str,
    mine_rows: Iterable[Row],
    published: Iterable[Row] | Published,
    keep: int | None = None,
    tau2: Tau2 | None = None,
) -> list[Standing]:
    """`standing` for one machine's rows (the site's machine pages pass the rows of its frame, and one
    `Published` index for all of them). Every other device is ranked by its point estimate; the interval
    (ratio_interval) is computed for the fastest alone. `keep`: how many of the other devices each standing lists,
    fastest first (None: all; the rank counts all). `tau2`: a side's between-run variance of a log time by device
    kind and loop (the site's, site_builder.analyses.between), added for both sides; none where not given."""
    index = published if isinstance(published, Published) else Published(published)
    by_device: dict[tuple[str, str, str], dict[tuple[str, str], Row]] = defaultdict(dict)
    for r in mine_rows:
        by_device[(r.device, r.variant, r.device_name)][(r.workload_hash, r.framework)] = r
    out = []
    for (device, variant, device_name), mine in sorted(by_device.items()):
        block = index.blocks.get((variant, device_class(device)))
        keys = sorted(k for k in mine if block is not None and k in block.columns and 0 < mine[k].median < np.inf)
        if block is None or not keys:
            continue
        # per group, over the measurements both measured: the sum of the logs of my median over its, and how many
        # there are; the ratio is their geometric mean. Two matrix-vector products over the block (the columns this
        # device did not measure weigh 0), not a copy of its columns per standing: a site asks once per machine.
        columns = [block.columns[k] for k in keys]
        mask, mine_logs = np.zeros(len(block.columns)), np.zeros(len(block.columns))
        mask[columns] = 1.0
        mine_logs[columns] = np.log([mine[k].median for k in keys])
        # Where a group shares measurements with an interval on both sides, the comparison rests on those alone:
        # one shared measurement of one process or one sample (an older file's long epoch) would otherwise leave a
        # ratio over dozens without an interval. A group that shares none such is compared over all it shares.
        own = np.zeros(len(block.columns))
        own[[block.columns[k] for k in keys if mine[k].has_interval]] = 1.0
        every, with_spread = (
            block.present @ np.column_stack([mask, mine_logs]),
            block.spread @ np.column_stack([own, mine_logs * own]),
        )
        counts, with_interval = np.rint(every[:, 0]).astype(int), np.rint(with_spread[:, 0]).astype(int)
        use = with_interval > 0
        counts_used = np.where(use, with_interval, counts)
        sums = np.where(use, with_spread[:, 1] - block.spread_logs @ own, every[:, 1] - block.logs @ mask)
        valid = np.flatnonzero((counts > 0) & (block.machines != machine_id))
        if not len(valid):
            continue
        ratios = np.exp(sums[valid] / counts_used[valid])
        order = np.argsort(-ratios, kind="stable")  # fastest first; ties keep the index's order
        best = int(order[0])
        group = int(valid[best])
        both = [
            k
            for k in keys
            if block.present[group, block.columns[k]] > 0
            and (not use[group] or (block.spread[group, block.columns[k]] > 0 and mine[k].has_interval))
        ]
        theirs = [block.row(group, k) for k in both]
        mine_both = [mine[k] for k in both]
        between = 0.0
        if tau2 is not None:
            between = tau2(device, variant, all(r.rounds for r in mine_both))
            between += tau2(theirs[0].device, variant, all(r.rounds for r in theirs))
        # no interval where a side has too few values or it has no width (runner.results.intervals.interval_or_none)
        found = intervals.interval_or_none(*ratio_interval(mine_both, theirs, between))
        lo, hi = found if found is not None else (None, None)
        versus = []
        for position in order[: len(order) if keep is None else keep]:
            g = int(valid[position])
            first = int(position) == best
            versus.append(
                Versus(
                    block.machines[g],
                    block.names[g],
                    float(ratios[position]),
                    lo if first else None,
                    hi if first else None,
                    int(counts_used[g]),
                    int(counts[g] - counts_used[g]),
                )
            )
        rank = 1 + int((ratios > 1).sum())
        out.append(Standing(device_class(device), variant, device_name, rank, len(valid) + 1, versus))
    return out


def published_rows(source: Path) -> list[Row]:
    """Rows from a results folder (or file) or the site's measurements.parquet (its machine rows: `level` run rows
    are each run's apart)."""
    if source.suffix == ".parquet":
        import pandas as pd

        table = pd.read_parquet(source)
        if "level" in table.columns:
            table = table[table["level"] == "machine"].reset_index(drop=True)
        return rows_from_table(table)
    return rows_from_results([source])
