"""The Site: the data every page draws on (the compared frame, speedups, machines, the charts drawn so far).

Built once per build from the collected rows (site_builder.collect) and their analyses (site_builder.analyses), and
handed to every page's render function (site_builder.pages, opendata, reference, seeds); it imports none of them.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from runner.contribute import standing
from runner.contribute.standing import Published
from runner.results.schema import ResultFile
from site_builder import memo
from site_builder.analyses import between
from site_builder.analyses.crossovers import batch_crossovers, crossovers
from site_builder.analyses.frames import plain, states, with_peak_share
from site_builder.analyses.slices import in_slice, primary_slice, split
from site_builder.analyses.speedups import ENERGY_COLUMNS, speedups
from site_builder.collect import Collector
from site_builder.columns import KEY
from site_builder.machines import Machines


def _positions(frame: pd.DataFrame) -> dict[str, np.ndarray]:
    """Each machine's row positions in `frame`, in frame order."""
    if frame.empty:
        return {}
    groups = frame.groupby("machine_id", sort=False, observed=True).indices
    return {str(key): positions for key, positions in groups.items()}


# Machines whose page rows are made together (Site.machine_rows): a few thousand rows at a time.
ROWS_WINDOW = 64
_NONE = np.zeros(0, dtype=np.intp)


def _spans(positions: list[np.ndarray]) -> list[slice]:
    """Where each part lies in the parts put end to end."""
    ends = np.cumsum([len(p) for p in positions], dtype=np.int64)
    return [slice(int(end) - len(p), int(end)) for p, end in zip(positions, ends, strict=True)]


@dataclass
class _Window:
    """Site.machine_rows and Site.machine_inputs of a window of machines: the window's rows, apart rows (None: the
    site has none) and break-evens, and where each machine's lie in them. The inputs' columns are taken out when
    first asked for (a build without the memo never asks)."""

    spans: dict[str, tuple[slice, slice, slice]]
    frames: tuple[pd.DataFrame, pd.DataFrame | None, pd.DataFrame]
    _columns: tuple[memo.Columns, memo.Columns | None, memo.Columns] | None = None

    def parts(self, machine_id: str) -> tuple[pd.DataFrame, pd.DataFrame | None, pd.DataFrame]:
        """The machine's rows, apart rows (None: the site has none) and break-evens."""
        (rows_at, apart_at, crossings_at), (rows, apart, crossings) = self.spans[machine_id], self.frames
        return rows.iloc[rows_at], None if apart is None else apart.iloc[apart_at], crossings.iloc[crossings_at]

    def inputs(self, machine_id: str) -> tuple[memo.Rows, memo.Rows | None, memo.Rows]:
        if self._columns is None:
            rows, apart, crossings = self.frames
            apart_of = None if apart is None else memo.Columns(apart)
            self._columns = (memo.Columns(rows), apart_of, memo.Columns(crossings))
        (rows_at, apart_at, crossings_at), (rows_of, apart_of, crossings_of) = self.spans[machine_id], self._columns
        return (
            memo.Rows(rows_of, rows_at),
            None if apart_of is None else memo.Rows(apart_of, apart_at),
            memo.Rows(crossings_of, crossings_at),
        )


@dataclass(frozen=True)
class Hardware:
    """Every contributed machine's CPU and accelerator models, how many machines have an accelerator, and their
    runs (any profile or suite)."""

    cpu_models: frozenset[str]
    accelerator_models: frozenset[str]
    accelerated: int
    runs: int


@dataclass(frozen=True)
class ChartView:
    """A chart placeholder for a template: its name (for the PNG and SVG exports), spec and link prefix."""

    name: str
    spec: dict[str, Any]
    prefix: str = ""


@dataclass
class Site:
    """The data every page draws on, and the charts drawn so far (exported as PNG and SVG).

    `frame` is what the site compares (the newest suite version's primary profile, see analyses.slices.split);
    `apart` holds every other profile and suite version, shown on their own page."""

    frame: pd.DataFrame
    speedups: pd.DataFrame
    machines: Machines = field(default_factory=Machines)
    rejected: list[str] = field(default_factory=list)
    files: int = 0
    exports: dict[str, dict[str, Any]] = field(default_factory=dict)
    apart: pd.DataFrame = field(default_factory=pd.DataFrame)
    suite: int | None = None
    profile: str | None = None
    scale_runs: pd.DataFrame = field(default_factory=pd.DataFrame)  # transformer-ddp, one row per run
    memo: Any = None  # what earlier builds rendered and computed (site_builder.memo.Memo), set by the build
    seed_views: dict[str, dict[str, Any]] = field(default_factory=dict)  # seeds.seed_view by seed: page and CSV
    # the machine pages' rows made last, by machine (see machine_rows): one window of machines at a time
    _rows_window: _Window | None = field(default=None, repr=False, compare=False)

    # the spread between runs of one machine (analyses.between), and each run's figures with the interval the site
    # shows for one run: the open data's per-run rows
    spread: between.Between = field(default_factory=between.Between)
    run_measurements: pd.DataFrame = field(default_factory=pd.DataFrame)
    run_speedups: pd.DataFrame = field(default_factory=pd.DataFrame)
    # files of a user's own model (`benchsite run --model`), apart from the suite's: the Your models page
    own: list[tuple[Path, ResultFile]] = field(default_factory=list)

    @classmethod
    def from_collector(cls, collector: Collector, rejected: list[str], release: bool = False) -> Site:
        """The site of every row collected. `release`: let the collector's rows go as soon as the last frame is
        made from them, rather than hold them through the speedups, where the build's memory peaks (the build does);
        the collector's files and machines stay."""
        every_run = collector.every_run()
        run_measurements = between.measurement_runs(every_run)
        del every_run
        run_speedups = between.speedup_runs(run_measurements)
        spread = between.estimate_all(run_measurements, run_speedups)
        run_measurements = between.widen_energy(between.shown(run_measurements, between.MEASUREMENT, spread), spread)
        run_speedups = between.shown(run_speedups, between.SPEEDUP, spread)
        everything = between.widen_single_runs(collector.frame(), spread)
        ddp_runs = collector.runs_of("transformer-ddp")
        if release:
            collector.release_rows()
        suite, profile = primary_slice(everything)
        frame, apart = split(everything)
        del everything  # split copied it into the two
        table = speedups(frame, spread) if not frame.empty else pd.DataFrame()
        scale_runs = in_slice(ddp_runs, suite, profile)
        site = cls(frame, table, collector.machines, rejected, collector.files, {}, apart, suite, profile, scale_runs)
        site.spread, site.run_measurements, site.run_speedups = spread, run_measurements, run_speedups
        return site

    def between_note(self) -> str:
        """What a page says of a single run's interval (analyses.between.note)."""
        return between.note(self.spread)

    @functools.cached_property
    def newest_machines(self) -> list[str]:
        """Every machine's id, the most recently contributed first (the machines index's order; ties keep the
        order the files were read in)."""
        return sorted(self.machines, key=self.machines.started_at, reverse=True)

    @functools.cached_property
    def hardware(self) -> Hardware:
        """What every machine summary says of its hardware and runs, read in one pass over the packed summaries
        (each pass unpacks every machine's: pages ask these of all machines many times)."""
        cpus: set[str] = set()
        accelerators: set[str] = set()
        accelerated = runs = 0
        for summary in self.machines.values():
            cpus.add(summary.machine.cpu.model)
            accelerators.update(a.model for a in summary.machine.accelerators)
            accelerated += bool(summary.machine.accelerators)
            runs += len(summary.runs)
        return Hardware(frozenset(cpus), frozenset(accelerators), accelerated, runs)

    @property
    def frameworks(self) -> list[str]:
        return sorted(self.frame["framework"].unique()) if not self.frame.empty else []

    @property
    def workloads(self) -> list[str]:
        return sorted(self.frame["workload"].unique()) if not self.frame.empty else []

    @functools.cached_property
    def crossings(self) -> pd.DataFrame:
        """Depth-sweep break-even per machine, loop, framework and accelerator."""
        return crossovers(self.speedups)

    @functools.cached_property
    def batch_crossings(self) -> pd.DataFrame:
        return batch_crossovers(self.speedups)

    def _plain_rows(self, part: pd.DataFrame, speedups: pd.DataFrame) -> pd.DataFrame:
        """Rows of the frame as plain columns with their speedup over the same machine's CPU (NaN if none) and that
        speedup's interval, keeping the frame's index; `speedups` holds at least the rows' own."""
        rows = with_peak_share(plain(part))
        rows = rows.assign(state=states(rows))
        if self.speedups.empty:
            nan = float("nan")
            return rows.assign(
                speedup=nan, speedup_lo=nan, speedup_hi=nan, verdict="", energy_ratio=nan, energy_ratio_lo=nan,
                energy_ratio_hi=nan, energy_verdict="", energy_note="",
            )  # fmt: skip
        speed = speedups[[*KEY, "speedup", "speedup_lo", "speedup_hi", "verdict", *ENERGY_COLUMNS]]
        merged = rows.merge(speed, on=KEY, how="left")  # one speedup per measurement: no row added
        merged.index = part.index
        return merged

    def rows_where(self, mask: pd.Series | np.ndarray) -> pd.DataFrame:
        """The compared measurements where `mask` holds, as plain columns with their speedups (see _plain_rows), in
        frame order. Made for the page that asks: a plain copy of the whole frame held through the build cost as
        much memory again as the frame."""
        return self._plain_rows(self.frame[np.asarray(mask, dtype=bool)], self.speedups)

    @functools.cached_property
    def _table_rows(self) -> standing.TableRows:
        """The compared slice's measurements as runner.contribute.standing compares them, each Row made when a
        standing asks for it (standing.TableRows)."""
        return standing.TableRows(self.frame)

    def standing(self, machine_id: str) -> list[standing.Standing]:
        """Where one machine stands against the others in the compared slice (runner.contribute.standing)."""
        if self.frame.empty:
            return []
        mine = self._table_rows.rows(self._by_machine.get(machine_id, _NONE))
        # the page names the fastest other device alone: the rank counts every one, the list keeps the first
        return standing.standing_of(machine_id, mine, self._published, keep=1, tau2=self.spread.tau2_of_time)

    @functools.cached_property
    def _published(self) -> Published:
        """The compared slice's rows indexed once for every machine page's standing."""
        return Published.from_table(self._table_rows)

    # Each machine's rows are found by their positions, grouped once: a scan of every row per machine page made the
    # build grow with the square of the machines, and a frame held per machine cost memory for every machine at
    # once. A page takes its machine's rows when it is rendered and lets them go.

    @functools.cached_property
    def _by_machine(self) -> dict[str, np.ndarray]:
        return _positions(self.frame)

    @functools.cached_property
    def _speedups_by_machine(self) -> dict[str, np.ndarray]:
        return _positions(self.speedups)

    @functools.cached_property
    def machine_order(self) -> list[str]:
        """The machines in the order their pages are made (site_builder.pages.registry), which machine_rows'
        windows follow."""
        return sorted(self.machines)

    @functools.cached_property
    def _page_position(self) -> dict[str, int]:
        return {machine_id: i for i, machine_id in enumerate(self.machine_order)}

    def machine_rows(self, machine_id: str) -> pd.DataFrame:
        """One machine's measurements with their speedups, in frame order.

        The pages ask for one machine after another, in page order, and made one at a time the rows cost a
        conversion and a merge each, whose fixed cost was most of a machine page's data work (about 18 ms of 57 a
        page at 1,000 files on the 2-core VM). So the rows are made for a window of ROWS_WINDOW machines at once,
        from this one on in page order, and split by machine; only the latest window is held. A machine's rows are
        the same either way: the merge matches on the machine id among its keys and keeps the left side's order."""
        return self._window(machine_id).parts(machine_id)[0]

    def machine_parts(self, machine_id: str) -> tuple[pd.DataFrame, pd.DataFrame | None, pd.DataFrame]:
        """What a machine page draws: machine_rows; the machine's rows of other profiles and suites, plain (None when
        the site has none at all); its break-evens without their replicates, in the order of `crossings`. The same
        rows `machine_inputs` writes the page's memo key from."""
        return self._window(machine_id).parts(machine_id)

    def machine_inputs(self, machine_id: str) -> tuple[memo.Rows, memo.Rows | None, memo.Rows]:
        """What decides a machine page's own part, as site_builder.memo.inputs_key writes it: the machine's rows
        (machine_parts: its rows, apart rows, break-evens), each written as that frame would be.
        Made with the window of machine_rows: each frame's columns taken out once for the window's machines."""
        return self._window(machine_id).inputs(machine_id)

    def _window(self, machine_id: str) -> _Window:
        window = self._rows_window
        if window is None or machine_id not in window.spans:
            start = self._page_position.get(machine_id)
            ids = [machine_id] if start is None else self.machine_order[start : start + ROWS_WINDOW]
            window = self._rows_window = self._window_of(ids)
        return window

    def _window_of(self, machine_ids: list[str]) -> _Window:
        """`machine_rows` and `machine_inputs` of each machine in `machine_ids`, made in one pass over each frame."""
        positions = [self._by_machine.get(m, _NONE) for m in machine_ids]
        speedup_positions = [self._speedups_by_machine.get(m, _NONE) for m in machine_ids]
        rows = self._plain_rows(
            self.frame.iloc[np.concatenate(positions)], self.speedups.iloc[np.concatenate(speedup_positions)]
        )
        crossings = [self._crossings_by_machine.get(m, _NONE) for m in machine_ids]
        apart: list[np.ndarray] = [_NONE] * len(machine_ids)
        apart_rows = None
        if not self.apart.empty:
            apart = [self._apart_by_machine.get(m, _NONE) for m in machine_ids]
            apart_rows = self._plain_apart.iloc[np.concatenate(apart)]
        crossing_rows = self.crossings.iloc[np.concatenate(crossings)].drop(columns="replicates")
        spans = zip(_spans(positions), _spans(apart), _spans(crossings), strict=True)
        return _Window(dict(zip(machine_ids, spans, strict=True)), (rows, apart_rows, crossing_rows))

    @functools.cached_property
    def _plain_apart(self) -> pd.DataFrame:
        apart = plain(self.apart)
        return apart.assign(state=states(apart)) if not apart.empty else apart

    @functools.cached_property
    def _apart_by_machine(self) -> dict[str, np.ndarray]:
        return _positions(self._plain_apart)

    @functools.cached_property
    def _crossings_by_machine(self) -> dict[str, np.ndarray]:
        return _positions(self.crossings)

    def chart(self, name: str, chart: alt.TopLevelMixin, prefix: str = "") -> ChartView:
        """Record a chart for export (PNG and SVG) and return its placeholder's view."""
        with alt.data_transformers.disable_max_rows():  # chart data is bounded by design (see charts.py)
            spec = chart.to_dict()
        self.exports[name] = spec
        return ChartView(name, spec, prefix)

    def view(self) -> dict[str, Any]:
        """What every template may say about the site as a whole."""
        return {
            "suite": self.suite,
            "profile": self.profile,
            "between_note": self.between_note(),
        }
