"""Reading result files into Arrow storage: result files in, a tidy pandas frame and per-machine summaries out. Pure:
no file I/O, no rendering.

Files stream through a Collector one at a time and are reduced to columns at once, so that ten thousand
contributed files never sit in memory as objects: the rows are kept as Apache Arrow tables (a few Python values per
row only until a batch of them is converted; site_builder.columns names them), the frame holds one row per
measurement (a machine's runs of it combined: site_builder.combine), the machine summaries the newest fingerprint
and top operators per machine (site_builder.machines). What the site computes from them is site_builder.analyses'.
"""

from __future__ import annotations

import math
import re
import statistics
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from runner import fidelity
from runner.fingerprint.peaks import cpu_peak_tflops, gpu_peak_tflops
from runner.results import energy as energy_rules
from runner.results import intervals
from runner.results.labels import cpu_label
from runner.results.schema import Measurement, ResultFile
from site_builder import uncertainty
from site_builder.columns import CATEGORIES, COLUMNS, NUMERIC
from site_builder.combine import PLAN_COLUMNS, combine_apply, combine_plan
from site_builder.machines import Machines, MachineSummary, measurement_key, pack_top_ops

VENDOR_NAMES = {"nvidia": "NVIDIA", "amd": "AMD", "apple": "Apple", "intel": "Intel", "other": "other"}
TOP_OPS_PER_MEASUREMENT = 5


def _peak(result: ResultFile, m: Any, measured: dict[tuple[str, str, str], float]) -> tuple[float | None, str | None]:
    """The device's peak FLOP/s for the measurement's precision: the matrix-product peak measured in the same
    run (runner.fingerprint.peaks, any framework) where there is one, else the spec-sheet ceiling; None where neither is
    known."""
    dtype = "bf16" if "bf16" in m.precision else "fp16" if "fp16" in m.precision else "fp32"
    for (_, device, kind), tflops in measured.items():
        if device == m.device and kind == dtype and tflops > 0:
            return tflops, "measured"
    if m.device == "cpu":
        return cpu_peak_tflops(result.machine.cpu, dtype), "spec sheet"
    gpu = result.machine.accelerators[0].model if result.machine.accelerators else m.device_name
    spec = gpu_peak_tflops(gpu, dtype)
    return (spec, "spec sheet") if spec else (None, None)


def _allreduce(collective: Any) -> str:
    """How a data-parallel step all-reduced its gradients, in a few words: 'NCCL 2.28.9, ring/ll, 15 buckets'."""
    if collective is None:
        return ""
    parts = [f"{collective.backend.upper()} {collective.version or ''}".strip()]
    chosen = {f"{k.algorithm}/{k.protocol}" for k in collective.kernels if k.name.lower().startswith("allreduce")}
    parts += sorted(chosen)
    if collective.buckets:
        parts.append(f"{collective.buckets} buckets" + (f", {collective.comm_hook}" if collective.comm_hook else ""))
    return ", ".join(parts)


# Facts that older files state only in a measurement's free-text notes (the interconnect before schema 4, runs_as and
# spark_master before schema 8) are read from the field where there is one, and parsed from the notes only in a file
# older than the field: a newer file's notes are for people. RUNS_AS: the site's words for each `runs_as`.
RUNS_AS = {"eager": "eager", "compiled": "compiled", "cuda-graph": "CUDA graph"}


def _interconnect(version: int, m: Measurement) -> str:
    """How the GPUs of a data-parallel measurement were linked: its `interconnect` (schema 4), else its notes'."""
    if m.interconnect:
        return m.interconnect
    return _interconnect_before_schema_4(m.notes) if version < 4 else ""


def _runs_as(version: int, m: Measurement) -> str:
    """How a tuned data-parallel step ran, in the site's words (RUNS_AS): its `runs_as` (schema 8), else its
    notes'."""
    if m.runs_as:
        return RUNS_AS[m.runs_as]
    return _runs_as_before_schema_8(m.notes) if version < 8 else ""


def _spark_master(version: int, m: Measurement) -> str:
    """The kind of Spark master a spark-* measurement ran on: its `spark_master` (schema 8), else its notes'."""
    if m.spark_master:
        return m.spark_master
    return _spark_master_before_schema_8(m.notes) if version < 8 else ""


def _interconnect_before_schema_4(notes: list[str]) -> str:
    """The fallback for files before schema 4: the interconnect from a data-parallel measurement's notes
    ('...; interconnect GPU0-GPU1 NV18')."""
    for note in notes:
        _, found, rest = note.partition("; interconnect ")
        if found:
            return rest
    return ""


def _runs_as_before_schema_8(notes: list[str]) -> str:
    """The fallback for files before schema 8: how a tuned step ran, from its notes: compiled (torch.compile),
    replayed from a CUDA graph, or eager."""
    for note in notes:
        if "torch.compile" in note:
            return "compiled"
        if "replayed from one CUDA graph" in note:
            return "CUDA graph"
        if "; eager" in note:
            return "eager"
    return ""


def _spark_master_before_schema_8(notes: list[str]) -> str:
    """The fallback for files before schema 8: the kind of Spark master a spark-* measurement ran on, from its notes
    ('spark 4.0.1; master local[*]; ...')."""
    for note in notes:
        found = re.search(r"; master ([^;]+);", note)
        if note.startswith("spark ") and found:
            return found.group(1)
    return ""


def point_label(point: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in point.items())


# Rows a Collector keeps as Python values before it converts them into one Arrow table: a table per result file
# would cost more in per-table overhead than its rows hold, at 100,000 files.
FLUSH_ROWS = 16_384


@dataclass(frozen=True)
class _Slice:
    """Rows start..stop of a table (the build cache's): kept as such until the rows are needed, so that the slices of
    consecutive cached files join into one."""

    table: pa.Table
    start: int
    stop: int


class Collector:
    """Reduce result files to a measurement frame and per-machine summaries, one file at a time.

    The rows are held column by column in Arrow tables (`table`): each added file's rows wait as Python values until
    FLUSH_ROWS of them are converted together, a cached file's rows stay a slice of the cache's own table. Each
    file's row count is kept in file order, so that a file's rows can be taken out again and the cache can save the
    rows file by file."""

    def __init__(self) -> None:
        # rows not yet converted, by column (none until a file is added: a collector per cached or merged file holds
        # no lists at all)
        self._pending: dict[str, list[Any]] = {}
        self._pending_rows = 0
        self._parts: list[pa.Table | _Slice] = []
        self._counts: list[tuple[str, int]] = []  # (file, rows), in the order the rows are held
        self.machines = Machines()
        self.files = 0

    def add(self, path: Path, result: ResultFile) -> None:
        """Collect one file: a row per measurement (but one its seed-script twin finds harness-affected), and the
        run's part of its machine's summary."""
        self.files += 1
        started_at = result.run.started_at
        source = sys.intern(str(path))
        common = _file_columns(result)
        if not self._pending:
            self._pending = {name: [] for name in COLUMNS}
        columns = self._pending
        rows = 0
        summary = self._summary(result, source)
        _keep_equivalence(summary, result)
        measured_peaks = {(p.framework, str(p.device), str(p.dtype)): p.tflops for p in result.device_peaks}
        for m in result.measurements:
            if m.fidelity is not None and self._twin(summary, started_at, m):
                continue  # harness-affected: shown on its machine's page, kept out of every median and verdict
            label = sys.intern(point_label(m.point))
            for name, value in common.items():
                columns[name].append(value)
            for name, value in _measurement_columns(result, m, label, measured_peaks, common["cpu_model"]).items():
                columns[name].append(value)
            rows += 1
            if m.top_ops:
                _keep_top_ops(summary, started_at, m, label)

        self.machines[result.machine.id] = summary  # stored (packed) again with this run's part
        self._counts.append((source, rows))
        self._pending_rows += rows
        if self._pending_rows >= FLUSH_ROWS:
            self._flush()

    @staticmethod
    def _twin(summary: MachineSummary, started_at: datetime, m: Any) -> bool:
        """Record a measurement's seed-script twin, judged by the current method (runner.fidelity.INTERVAL) from its
        raw lists whatever method the file used; True if it found the harness affected the measurement."""
        f = m.fidelity
        if min(len(f.harness_s), len(f.script_s)) < fidelity.MIN_ROUNDS:  # a file before schema 7 took one round
            judged = fidelity.Summary(f.ratio, (math.nan, math.nan), "inconclusive")
        else:
            judged = fidelity.summarise(list(f.harness_s), list(f.script_s))
        key = (m.workload_hash, m.framework, m.device)
        known = summary.fidelity.get(key)
        if known is None or known[0] <= started_at:
            summary.fidelity[key] = (
                started_at,
                {
                    "script": f.script,
                    "workload": m.workload,
                    "point": point_label(m.point),
                    "device": m.device,
                    "device_name": m.device_name,
                    "script_s": statistics.geometric_mean(f.script_s),
                    "harness_s": statistics.geometric_mean(f.harness_s),
                    "ratio": judged.ratio,
                    "ratio_lo": None if math.isnan(judged.ci95[0]) else judged.ci95[0],
                    "ratio_hi": None if math.isnan(judged.ci95[1]) else judged.ci95[1],
                    "rounds": f.rounds,
                    "verdict": judged.verdict,
                    # what the file itself stated, where its own method (an earlier bootstrap) judged otherwise
                    "file_verdict": f.verdict if f.verdict != judged.verdict else None,
                    "date": f"{started_at:%Y-%m-%d}",
                },
            )
        return judged.verdict == "harness-affected"

    def _summary(self, result: ResultFile, source: str) -> MachineSummary:
        """The file's machine's summary with this run in its runs, unpacked: `add` stores it again once the run's
        measurements are in."""
        machine, run = result.machine, result.run
        summary = self.machines.get(machine.id)
        if summary is None or summary.started_at < run.started_at:
            fresh = MachineSummary(machine, result.software, list(result.sync_selftests), run.started_at)
            if summary is not None:
                fresh.runs, fresh.top_ops, fresh.equivalence = summary.runs, summary.top_ops, summary.equivalence
                fresh.fidelity = summary.fidelity
            summary = fresh
        summary.runs.append((run.started_at, result.suite.profile, run.command, len(result.measurements), source))
        return summary

    def _flush(self) -> None:
        """Convert the rows waiting as Python values into one Arrow table (types inferred; see `table`)."""
        if self._pending_rows:
            table = pa.table(self._pending)
            for i, column in enumerate(table.columns):  # each distinct text once per batch: a row holds its indices
                if pa.types.is_string(column.type):
                    table = table.set_column(i, table.field(i).name, column.dictionary_encode())
            self._parts.append(table)
            self._pending = {}
            self._pending_rows = 0

    def table(self) -> pa.Table:
        """Every row collected so far, in the order added, as one Arrow table (COLUMNS). Parts whose types differ (a
        column all null in one, an integer sweep value given as 8.0 in another) are joined under the wider type."""
        self._flush()
        parts = [p.table.slice(p.start, p.stop - p.start) if isinstance(p, _Slice) else p for p in self._parts]
        if not parts:
            return pa.table({name: pa.array([], type=pa.null()) for name in COLUMNS})
        joined = parts[0] if len(parts) == 1 else pa.concat_tables(parts, promote_options="permissive")
        self._parts = [joined]
        return joined

    @property
    def rows(self) -> int:
        """How many rows were collected (site_builder.cache saves the rows file by file)."""
        return sum(n for _, n in self._counts)

    def restore(self, table: pa.Table, start: int, stop: int, source: str) -> None:
        """Put back one file's rows, `table`'s rows start..stop (site_builder.cache's table, its COLUMNS)."""
        self._flush()
        self._append(_Slice(table, start, stop))
        self._counts.append((sys.intern(source), stop - start))

    def hold(self, table: pa.Table, start: int, stop: int) -> None:
        """Hold the rows collected (one file's) as rows start..stop of `table`, where they were converted together
        with other files' rows; the same rows, no longer as Python values."""
        if stop - start != self.rows:
            raise ValueError(f"{stop - start} rows of a table for the {self.rows} rows collected")
        self._pending = {}
        self._pending_rows = 0
        self._parts = [_Slice(table, start, stop)] if stop > start else []

    def release_rows(self) -> None:
        """Let the rows go once another collector holds them (site_builder.load merges each file's as it comes); the
        files, machines and each file's row count stay."""
        self._pending = {}
        self._pending_rows = 0
        self._parts = []

    def _append(self, part: pa.Table | _Slice) -> None:
        last = self._parts[-1] if self._parts else None
        if (
            isinstance(last, _Slice)
            and isinstance(part, _Slice)
            and last.table is part.table
            and last.stop == part.start
        ):
            self._parts[-1] = _Slice(part.table, last.start, part.stop)  # the next cached file's rows follow on
        else:
            self._parts.append(part)

    def merge(self, other: Collector) -> None:
        """Fold in a collector filled elsewhere (a loading process, or a file's entry in the build cache): its rows
        appended; per machine the newest fingerprint, every run, and the newest top operators and seed-script twin
        per measurement. `other` is left as it was."""
        self.files += other.files
        if other._parts:
            self._flush()
            for part in other._parts:
                self._append(part)
        if other._pending_rows:
            if not self._pending:
                self._pending = {name: [] for name in COLUMNS}
            for name, values in other._pending.items():
                self._pending[name].extend(values)
        self._pending_rows += other._pending_rows
        self._counts.extend(other._counts)
        if self._pending_rows >= FLUSH_ROWS:
            self._flush()
        for machine_id in other.machines:
            if machine_id not in self.machines:  # as it is, still packed
                self.machines.put_packed(
                    machine_id, other.machines.packed(machine_id), other.machines.started_at(machine_id)
                )
                continue
            theirs, ours = other.machines[machine_id], self.machines[machine_id]  # each a copy of its own
            newer, older = (theirs, ours) if theirs.started_at > ours.started_at else (ours, theirs)
            newer.runs = ours.runs + theirs.runs
            for key, (when, text) in older.top_ops.items():
                if key not in newer.top_ops or newer.top_ops[key][0] < when:
                    newer.top_ops[key] = (when, text)
            for key, check in older.equivalence.items():
                if key not in newer.equivalence or newer.equivalence[key][0] < check[0]:
                    newer.equivalence[key] = check
            for key, (when, row) in older.fidelity.items():
                if key not in newer.fidelity or newer.fidelity[key][0] < when:
                    newer.fidelity[key] = (when, row)
            self.machines[machine_id] = newer

    def drop_files(self, paths: set[str]) -> None:
        """Take files back out (a replayed file, found once every file is read): their rows, and their runs in
        the machines' run lists; a machine left with no run goes."""
        table = self.table()
        keep = np.repeat([source not in paths for source, _ in self._counts], [n for _, n in self._counts])
        self._parts = [table.filter(pa.array(keep, type=pa.bool_()))]
        self._counts = [(source, n) for source, n in self._counts if source not in paths]
        for machine_id, summary in list(self.machines.items()):
            before = len(summary.runs)
            summary.runs = [run for run in summary.runs if run[4] not in paths]
            self.files -= before - len(summary.runs)
            if not summary.runs:
                del self.machines[machine_id]
            elif len(summary.runs) < before:
                self.machines[machine_id] = summary

    def frame(self) -> pd.DataFrame:
        """One row per measurement and profile; where a machine ran the same measurement more than once with
        one profile, every run combined (combine_runs). Every suite version and profile: split() picks what is
        compared.

        Which rows are kept and how they combine is found from the few columns that decide it (`combine_plan`);
        only the rows kept are then converted whole, taken in Arrow. Converting every run's row whole first, then
        taking the kept ones in pandas, held both frames at once: at 10,000 files most of the build's peak."""
        table = self.table()
        if not len(table):
            return pd.DataFrame(columns=COLUMNS)
        order = _start_order(table)  # the rows are taken once, in start order and kept, never sorted whole first
        deciding = table.select(PLAN_COLUMNS)
        plan = combine_plan(
            self._convert(deciding if order is None else deciding.take(order), CATEGORIES, PLAN_COLUMNS)
        )
        rows = order if plan is None else plan.positions if order is None else order[plan.positions]
        frame = self._convert(table if rows is None else table.take(pa.array(rows)), CATEGORIES)
        frame = frame.assign(runs=1, runs_lo_s=frame["median_s"], runs_hi_s=frame["median_s"], joules_runs=1)
        if plan is not None:
            frame = combine_apply(frame, plan)
        for name in CATEGORIES:  # a value only an older run of a combined measurement had is not a category
            frame[name] = frame[name].cat.remove_unused_categories()
        return frame.reset_index(drop=True)

    def every_run(self) -> pd.DataFrame:
        """Every row, one per run (never combined), sorted by start time: what the between-run component is
        estimated from (site_builder.analyses.between) and the open data's per-run rows."""
        return self._raw(None, categories=True).reset_index(drop=True)

    def runs_of(self, workload: str) -> pd.DataFrame:
        """One workload's rows, one per run (never combined): the Scale page draws every run."""
        return self._raw(workload).reset_index(drop=True)

    def _raw(self, workload: str | None, categories: bool = False) -> pd.DataFrame:
        """The rows (of one workload, or all) as a frame, one per run, sorted by start time (`_table`);
        `categories`: the CATEGORIES columns as categoricals from the start (a column of the frame's repeated text
        costs a byte or two a row, not a string each)."""
        table = self._table(workload)
        if table is None:
            return pd.DataFrame(columns=COLUMNS)
        return self._convert(table, CATEGORIES if categories else [])

    def _table(self, workload: str | None) -> pa.Table | None:
        """The rows (of one workload, or all) in Arrow, sorted by start time, stably (rows that started together
        keep the order they were added in), as sort_values sorts a frame; None where there are none. Put in order
        before the conversion: sorted after it, the frame was copied whole with the unsorted one still held."""
        table = self.table()
        if workload is not None:
            workload_column = table.column("workload")
            if pa.types.is_null(workload_column.type):
                return None
            table = table.filter(pc.equal(_plain_text(workload_column), workload))
        if not len(table):
            return None
        order = _start_order(table)
        return table if order is None else table.take(pa.array(order))

    def _convert(self, table: pa.Table, categories: list[str], columns: list[str] = COLUMNS) -> pd.DataFrame:
        """`columns` of `table` (some of this collector's rows) as the frame holds them: each of the types the whole
        of the rows give it (a column with gaps elsewhere stays float64 or object where these rows have none), the
        numbers numeric, the start a time in UTC."""
        everything = self.table()
        frame = _pandas(table, [c for c in categories if c in columns], columns)
        for name in columns:
            whole, part = everything.column(name), table.column(name)
            if whole.null_count and not part.null_count:
                if pa.types.is_integer(whole.type):
                    frame[name] = frame[name].astype("float64")
                elif pa.types.is_boolean(whole.type):
                    frame[name] = frame[name].astype(object)
        for name in NUMERIC:
            if name in columns:
                frame[name] = pd.to_numeric(frame[name], errors="coerce")
        if "started_at" in columns:
            frame["started_at"] = pd.to_datetime(frame["started_at"], utc=True)
        return frame


def _file_columns(result: ResultFile) -> dict[str, Any]:
    """The columns every row of a file shares: its machine, run and suite."""
    machine, run = result.machine, result.run
    gpu = machine.accelerators[0] if machine.accelerators else None
    intern = sys.intern
    return {
        "machine_id": intern(machine.id),
        "cpu_model": intern(cpu_label(machine.cpu)),
        "gpu_model": intern(gpu.model if gpu else ""),
        "gpu_vendor": VENDOR_NAMES[gpu.vendor] if gpu else "",
        "system_type": machine.system_type,
        "run_id": run.id,
        "benchsite_version": intern(result.benchsite_version),
        "started_at": run.started_at,
        "profile": result.suite.profile,
        "suite": result.suite.version,
    }


def _measurement_columns(
    result: ResultFile, m: Measurement, label: str, measured_peaks: dict[tuple[str, str, str], float], cpu: str
) -> dict[str, Any]:
    """A measurement's own columns (`label`: its point's, point_label), its texts interned. A CPU measurement's device
    is named `cpu`, the machine's CPU with its core count (runner.results.labels.cpu_label), not the name its
    framework reported."""
    intern = sys.intern
    version = result.schema_version
    # one value per independent process where the file measures in rounds: the figure, its interval and every ratio
    # of it come from those (runner.results.intervals.measurement_values)
    values = intervals.measurement_values(m, version)
    if version >= intervals.ROUNDS_SCHEMA:
        ci = intervals.process_interval(values) or (None, None)
    else:  # an interval of no width is none (runner.results.intervals.interval_or_none): the page says why
        ci = (intervals.interval_or_none(*m.ci95_s) if m.ci95_s else None) or (None, None)
    pairing = pairing_of(result, m)
    peak, peak_source = _peak(result, m, measured_peaks)
    own = energy_rules.device_figure(m.energy)
    joules_ci = (own.ci95_joules_per_unit if own is not None else None) or (None, None)
    side, scope = energy_rules.side_rounds(m.energy)
    unfigured = next((e for e in m.energy if e.of == "device" and e.joules_per_unit is None), None)
    return {
        "workload": intern(m.workload),
        "workload_hash": intern(m.workload_hash),
        "point": label,
        "depth": m.point.get("depth"),
        "model": m.point.get("model"),
        "mode": m.point.get("mode"),
        "batch_size": m.point.get("batch_size"),
        "world_size": m.point.get("world_size"),
        "interconnect": intern(_interconnect(version, m)),
        "runs_as": intern(_runs_as(version, m)),
        "allreduce": intern(_allreduce(m.collective)),
        "partitions": m.point.get("partitions"),
        "spark_master": intern(_spark_master(version, m)),
        "rate": m.point.get("rate"),
        "bounded": m.stream.bounded if m.stream else None,
        "growth": m.stream.growth if m.stream else None,
        "variant": m.variant,
        "framework": intern(m.framework),
        "device": m.device,
        "device_name": cpu if m.device == "cpu" else intern(m.device_name),
        "precision": m.precision,
        "status": m.status,
        "median_s": m.median_s,
        "ci_lo_s": ci[0],
        "ci_hi_s": ci[1],
        "samples_per_s": m.samples_per_s,
        "params": m.params,
        "achieved_tflops": m.achieved_tflops,
        "stable": m.stable,
        "unit": m.unit,
        "peak_tflops": peak,
        "peak_source": peak_source,
        "joules_per_unit": own.joules_per_unit if own is not None else None,
        "joules_lo": joules_ci[0],
        "joules_hi": joules_ci[1],
        "joules_se2": energy_rules.log_se2(own) if own is not None else None,
        "energy_source": intern(own.source) if own is not None else "",
        "energy_why": intern(unfigured.note or "") if own is None and unfigured is not None else "",
        "energy_rounds": side or None,
        "energy_scope": intern(scope),
        "pairing": pairing,
        "samples": values,
    }


def _keep_equivalence(summary: MachineSummary, result: ResultFile) -> None:
    """The file's equivalence checks into its machine's summary, where none newer is kept."""
    started_at, intern = result.run.started_at, sys.intern
    for check in result.equivalence:
        key = (intern(check.framework), intern(check.workload), intern(point_label(check.point)))
        if key not in summary.equivalence or summary.equivalence[key][0] <= started_at:
            summary.equivalence[key] = (started_at, check.status, check.grad_rel_diff)


def _keep_top_ops(summary: MachineSummary, started_at: datetime, m: Measurement, label: str) -> None:
    """A measurement's slowest operators (TOP_OPS_PER_MEASUREMENT) into its machine's summary, where none of a newer
    run is kept."""
    key = measurement_key(m.workload_hash, m.framework, m.device)
    kept = summary.top_ops.get(key)
    if kept is None or kept[0] <= started_at:
        ops = sorted(m.top_ops, key=lambda op: op.self_s, reverse=True)[:TOP_OPS_PER_MEASUREMENT]
        row = {
            "workload": m.workload,
            "point": label,
            "variant": m.variant,
            "framework": m.framework,
            "device": m.device,
            "device_name": m.device_name,
            "ops": [(op.name, op.self_s, op.calls) for op in ops],
        }
        summary.top_ops[key] = (started_at, pack_top_ops(row))


def _start_order(table: pa.Table) -> np.ndarray | None:
    """The rows' positions sorted by start time, stably, as a stable sort_values sorts a frame (a missing time
    last); None where they are in that order already."""
    started = pd.to_datetime(_plain_text(table.column("started_at")).to_pandas(), utc=True)
    order = np.argsort(started.to_numpy(), kind="stable")
    return order if np.any(order[1:] < order[:-1]) else None


def _plain_text(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """A dictionary-encoded text column as plain text (how the collector stores text: Collector._flush)."""
    return column.cast(column.type.value_type) if pa.types.is_dictionary(column.type) else column


def _pandas(table: pa.Table, categories: list[str], columns: list[str] = COLUMNS) -> pd.DataFrame:
    """The rows as pandas holds a frame built from the collected Python values (text as `str`, whole numbers as int64
    or, with a gap, float64, flags with a gap as objects: Arrow's conversion gives the same types), converted column
    by column; the raw sample lists become one read-only float64 array per row, each a view of Arrow's buffer; the
    `categories` columns become categoricals (their categories sorted, as `astype("category")` sorts them)."""
    data: dict[str, Any] = {}
    for name in columns:
        column = _plain_text(table.column(name))
        if name in ("samples", "energy_rounds"):
            values = column.cast(pa.list_(pa.float64())).to_pandas()
            pairing = (
                _plain_text(table.column("pairing")).to_pylist()
                if "pairing" in table.column_names
                else [None] * len(values)
            )
            data[name] = pd.Series(
                [frame_samples(v, p) for v, p in zip(values, pairing, strict=True)], dtype=object, copy=False
            )
        elif name in categories:
            data[name] = column.to_pandas().astype("category")
        else:
            data[name] = column.to_pandas()
    return pd.DataFrame(data, columns=columns, copy=False)  # the columns as converted, not copied once more


def pairing_of(result: ResultFile, m: Measurement) -> str:
    """What pairs a measurement's rounds with another's (uncertainty.Rounds): a run's CPU and accelerator rounds of
    one framework and loop alternate. "" for a measurement of fewer than two rounds."""
    return f"{result.run.id}/{m.framework}/{m.variant}" if len(m.rounds) >= 2 else ""


def frame_samples(values: Any, pairing: str | None) -> np.ndarray:
    """A row's sample list as the frame holds it: its rounds' medians tagged with what pairs them
    (uncertainty.Rounds) where it has rounds, else a plain array."""
    array = np.asarray(values if values is not None else [], dtype=float)
    return uncertainty.Rounds(array, pairing) if pairing else array


def measurements_frame(results: Iterable[tuple[Path, ResultFile]]) -> pd.DataFrame:
    collector = Collector()
    for path, result in results:
        collector.add(path, result)
    return collector.frame()
