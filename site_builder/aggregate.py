"""Aggregation: result files in, tidy pandas frames out. Pure: no file I/O, no rendering.

Only measurements with the same workload_hash are ever compared; a speedup compares an accelerator with
the CPU of the same machine, same framework and same workload_hash.

Files stream through a Collector one at a time and are reduced to columns at once, so that ten thousand
contributed files never sit in memory as objects: the rows are kept as Apache Arrow tables (a few Python values per
row only until a batch of them is converted), the frame holds one row per measurement, the machine summaries the
newest fingerprint and top operators per machine.
"""

from __future__ import annotations

import json
import math
import re
import statistics
import sys
import zlib
from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from runner import fidelity
from runner.fingerprint.peaks import cpu_peak_tflops, gpu_peak_tflops
from runner.results import streaming
from runner.results.schema import Machine, ResultFile, Software, SyncSelfTest
from runner.workloads import known
from site_builder import uncertainty
from site_builder.uncertainty import Interval

COLUMNS = [
    "machine_id",
    "cpu_model",
    "gpu_model",
    "gpu_vendor",
    "system_type",
    "run_id",
    "started_at",
    "profile",
    "suite",
    "workload",
    "workload_hash",
    "point",
    "depth",
    "model",
    "mode",
    "batch_size",
    "world_size",
    "interconnect",
    "runs_as",
    "allreduce",
    "partitions",
    "spark_master",
    "rate",
    "bounded",
    "growth",
    "variant",
    "framework",
    "device",
    "device_name",
    "precision",
    "status",
    "median_s",
    "ci_lo_s",
    "ci_hi_s",
    "samples_per_s",
    "params",
    "achieved_tflops",
    "stable",
    "unit",
    "peak_tflops",
    "peak_source",
    "samples",
]
KEY = ["machine_id", "workload_hash", "framework", "device"]
NUMERIC = [
    "suite",
    "median_s",
    "ci_lo_s",
    "ci_hi_s",
    "samples_per_s",
    "achieved_tflops",
    "params",
    "depth",
    "world_size",
    "partitions",
    "rate",
    "growth",
    "peak_tflops",
]
# Repeated text columns are stored once per distinct value (pandas categoricals); workload_hash and the
# numbers, dates and flags stay as they are.
CATEGORIES = [
    c
    for c in COLUMNS
    if c not in {*NUMERIC, "workload_hash", "started_at", "batch_size", "stable", "bounded", "samples"}
]
# The summaries the site leads with: this profile of the newest suite; the rest is shown apart, labelled.
PRIMARY_PROFILE = "standard"
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


def _interconnect(notes: list[str]) -> str:
    """How the GPUs of a data-parallel measurement were linked, from its notes ('interconnect GPU0-GPU1 NV18')."""
    for note in notes:
        _, found, rest = note.partition("; interconnect ")
        if found:
            return rest
    return ""


def _runs_as(notes: list[str]) -> str:
    """How a tuned step ran, from its notes: compiled (torch.compile), replayed from a CUDA graph, or eager."""
    for note in notes:
        if "torch.compile" in note:
            return "compiled"
        if "replayed from one CUDA graph" in note:
            return "CUDA graph"
        if "; eager" in note:
            return "eager"
    return ""


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


def _spark_master(notes: list[str]) -> str:
    """The kind of Spark master a spark-* measurement ran on, from its notes ('...; master local[*]; ...')."""
    for note in notes:
        found = re.search(r"; master ([^;]+);", note)
        if note.startswith("spark ") and found:
            return found.group(1)
    return ""


def point_label(point: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in point.items())


@dataclass
class MachineSummary:
    """What a machine page shows besides the measurements: the newest fingerprint and every run."""

    machine: Machine
    software: Software
    sync_selftests: list[SyncSelfTest]
    started_at: datetime
    # date, profile, command, measurements, file
    runs: list[tuple[datetime, str, str, int, str]] = field(default_factory=list)
    # (workload_hash, framework, device) -> (started_at, row as JSON text, see pack_top_ops): the newest run's top
    # operators per measurement
    top_ops: dict[tuple[str, str, str], tuple[datetime, str]] = field(default_factory=dict)
    # (framework, workload, point) -> (started_at, status, gradient difference): the newest equivalence check
    equivalence: dict[tuple[str, str, str], tuple[datetime, str, float | None]] = field(default_factory=dict)
    # (workload_hash, framework, device) -> (started_at, row): each run's seed-script twin (runner.fidelity), the
    # newest per measurement; a harness-affected measurement is not in the frame, so in no median or verdict
    fidelity: dict[tuple[str, str, str], tuple[datetime, dict[str, Any]]] = field(default_factory=dict)


def pack_top_ops(row: dict[str, Any]) -> str:
    """One measurement's top operators as the machine summary keeps them: one compact JSON text, not a dict of
    Python values. Every machine's are held at once and only that machine's page reads them back: a generated
    file's took 10.3 KiB as text against 23.7 as values (docs/methodology.md, "Less memory per machine")."""
    return json.dumps(row, separators=(",", ":"))


def top_ops_rows(summary: MachineSummary) -> list[dict[str, Any]]:
    """A machine's top operator rows, unpacked (each op a [name, self seconds, calls] list)."""
    return [json.loads(text) for _, text in summary.top_ops.values()]


def measurement_key(workload_hash: str, framework: str, device: str) -> tuple[str, str, str]:
    """A summary's key, its texts interned: every machine's keys share the same few workload hashes."""
    return (sys.intern(workload_hash), sys.intern(framework), sys.intern(device))


def summary_json(s: MachineSummary) -> dict[str, Any]:
    """A machine summary as plain JSON values (summary_from reads them back into an equal summary)."""
    return {
        "machine": s.machine.model_dump(mode="json"),
        "software": s.software.model_dump(mode="json"),
        "sync_selftests": [t.model_dump(mode="json") for t in s.sync_selftests],
        "started_at": s.started_at.isoformat(),
        "runs": [[when.isoformat(), *rest] for when, *rest in s.runs],
        "top_ops": [[list(key), when.isoformat(), text] for key, (when, text) in s.top_ops.items()],
        "equivalence": [[list(key), when.isoformat(), *rest] for key, (when, *rest) in s.equivalence.items()],
        "fidelity": [[list(key), when.isoformat(), row] for key, (when, row) in s.fidelity.items()],
    }


def summary_from(d: dict[str, Any]) -> MachineSummary:
    when = datetime.fromisoformat
    summary = MachineSummary(
        Machine.model_validate(d["machine"]),
        Software.model_validate(d["software"]),
        [SyncSelfTest.model_validate(t) for t in d["sync_selftests"]],
        when(d["started_at"]),
    )
    summary.runs = [(when(at), profile, command, count, source) for at, profile, command, count, source in d["runs"]]
    summary.top_ops = {measurement_key(*key): (when(at), text) for key, at, text in d["top_ops"]}
    summary.equivalence = {tuple(key): (when(at), status, diff) for key, at, status, diff in d["equivalence"]}
    summary.fidelity = {tuple(key): (when(at), row) for key, at, row in d["fidelity"]}
    return summary


def pack_summary(summary: MachineSummary) -> bytes:
    """A summary as Machines keeps it: its JSON (summary_json), compressed."""
    return zlib.compress(json.dumps(summary_json(summary), separators=(",", ":")).encode(), 1)


def unpack_summary(packed: bytes) -> MachineSummary:
    return summary_from(json.loads(zlib.decompress(packed)))


class Machines(MutableMapping[str, MachineSummary]):
    """Every machine's summary, by machine id, each kept packed (pack_summary) and unpacked when asked for.

    A summary holds a fingerprint's validated models and a run's top operators, seed-script twins and equivalence
    checks: 27 KiB of Python values per generated file, 3.8 KiB a machine of two files packed
    (docs/methodology.md, "Less memory while reading"). Every machine's is held from the first file read to the last
    page, and a page wants one machine's at a time. A summary asked for is a fresh copy: a change to it is kept only
    once it is stored again (`machines[id] = summary`). `started_at` gives a machine's newest run without unpacking
    it (the machines index sorts by it)."""

    def __init__(self) -> None:
        self._packed: dict[str, bytes] = {}
        self._started: dict[str, datetime] = {}

    def __getitem__(self, machine_id: str) -> MachineSummary:
        return unpack_summary(self._packed[machine_id])

    def __setitem__(self, machine_id: str, summary: MachineSummary) -> None:
        self._packed[machine_id] = pack_summary(summary)
        self._started[machine_id] = summary.started_at

    def __delitem__(self, machine_id: str) -> None:
        del self._packed[machine_id]
        del self._started[machine_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._packed)

    def __len__(self) -> int:
        return len(self._packed)

    def __contains__(self, machine_id: object) -> bool:
        return machine_id in self._packed

    def started_at(self, machine_id: str) -> datetime:
        """The machine's newest run's start (its summary's `started_at`)."""
        return self._started[machine_id]

    def packed(self, machine_id: str) -> bytes:
        """The machine's summary as stored (pack_summary's bytes): what the build cache keeps."""
        return self._packed[machine_id]

    def put_packed(self, machine_id: str, packed: bytes, started_at: datetime) -> None:
        """Store a summary packed elsewhere (the build cache's) whose `started_at` is given."""
        self._packed[machine_id] = packed
        self._started[machine_id] = started_at


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
        self.files += 1
        machine, run = result.machine, result.run
        source = sys.intern(str(path))
        gpu = machine.accelerators[0] if machine.accelerators else None
        intern = sys.intern
        common = {
            "machine_id": intern(machine.id),
            "cpu_model": intern(machine.cpu.model),
            "gpu_model": intern(gpu.model if gpu else ""),
            "gpu_vendor": VENDOR_NAMES[gpu.vendor] if gpu else "",
            "system_type": machine.system_type,
            "run_id": run.id,
            "started_at": run.started_at,
            "profile": result.suite.profile,
            "suite": result.suite.version,
        }
        if not self._pending:
            self._pending = {name: [] for name in COLUMNS}
        columns = self._pending
        rows = 0
        summary = self._summary(result, source)
        for check in result.equivalence:
            key = (intern(check.framework), intern(check.workload), intern(point_label(check.point)))
            if key not in summary.equivalence or summary.equivalence[key][0] <= run.started_at:
                summary.equivalence[key] = (run.started_at, check.status, check.grad_rel_diff)
        measured_peaks = {(p.framework, str(p.device), str(p.dtype)): p.tflops for p in result.device_peaks}
        for m in result.measurements:
            if m.fidelity is not None and self._twin(summary, run.started_at, m):
                continue  # harness-affected: shown on its machine's page, kept out of every median and verdict
            ci = m.ci95_s or (None, None)
            peak, peak_source = _peak(result, m, measured_peaks)
            label = intern(point_label(m.point))
            row = {
                "workload": intern(m.workload),
                "workload_hash": intern(m.workload_hash),
                "point": label,
                "depth": m.point.get("depth"),
                "model": m.point.get("model"),
                "mode": m.point.get("mode"),
                "batch_size": m.point.get("batch_size"),
                "world_size": m.point.get("world_size"),
                "interconnect": intern(m.interconnect or _interconnect(m.notes)),
                "runs_as": intern(_runs_as(m.notes)),
                "allreduce": intern(_allreduce(m.collective)),
                "partitions": m.point.get("partitions"),
                "spark_master": intern(_spark_master(m.notes)),
                "rate": m.point.get("rate"),
                "bounded": m.stream.bounded if m.stream else None,
                "growth": m.stream.growth if m.stream else None,
                "variant": m.variant,
                "framework": intern(m.framework),
                "device": m.device,
                "device_name": intern(m.device_name),
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
                "samples": m.samples_s,
            }
            for name, value in common.items():
                columns[name].append(value)
            for name, value in row.items():
                columns[name].append(value)
            rows += 1
            if m.top_ops:
                key = measurement_key(m.workload_hash, m.framework, m.device)
                known = summary.top_ops.get(key)
                if known is None or known[0] <= run.started_at:
                    ops = sorted(m.top_ops, key=lambda op: op.self_s, reverse=True)[:TOP_OPS_PER_MEASUREMENT]
                    summary.top_ops[key] = (
                        run.started_at,
                        pack_top_ops(
                            {
                                "workload": m.workload,
                                "point": label,
                                "variant": m.variant,
                                "framework": m.framework,
                                "device": m.device,
                                "device_name": m.device_name,
                                "ops": [(op.name, op.self_s, op.calls) for op in ops],
                            }
                        ),
                    )

        self.machines[machine.id] = summary  # stored (packed) again with this run's part
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

        Which rows are kept and how they combine is found from the few columns that decide it (`_combine_plan`);
        only the rows kept are then converted whole, taken in Arrow. Converting every run's row whole first, then
        taking the kept ones in pandas, held both frames at once: at 10,000 files most of the build's peak."""
        table = self.table()
        if not len(table):
            return pd.DataFrame(columns=COLUMNS)
        order = _start_order(table)  # the rows are taken once, in start order and kept, never sorted whole first
        deciding = table.select(PLAN_COLUMNS)
        plan = _combine_plan(
            self._convert(deciding if order is None else deciding.take(order), CATEGORIES, PLAN_COLUMNS)
        )
        rows = order if plan is None else plan.positions if order is None else order[plan.positions]
        frame = self._convert(table if rows is None else table.take(pa.array(rows)), CATEGORIES)
        frame = frame.assign(runs=1, runs_lo_s=frame["median_s"], runs_hi_s=frame["median_s"])
        if plan is not None:
            frame = _combine_apply(frame, plan)
        for name in CATEGORIES:  # a value only an older run of a combined measurement had is not a category
            frame[name] = frame[name].cat.remove_unused_categories()
        return frame.reset_index(drop=True)

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
        if name == "samples":
            values = column.cast(pa.list_(pa.float64())).to_pandas()
            data[name] = pd.Series(
                [np.asarray(v if v is not None else [], dtype=float) for v in values], dtype=object, copy=False
            )
        elif name in categories:
            data[name] = column.to_pandas().astype("category")
        else:
            data[name] = column.to_pandas()
    return pd.DataFrame(data, columns=columns, copy=False)  # the columns as converted, not copied once more


def combine_runs(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per machine, measurement and profile, whatever the number of runs: the newest run no longer
    replaces the others (a replayed or edited newest file would otherwise set the machine's figures alone).

    A measurement run more than once is the median over its runs' medians, its interval the span of every
    run's interval (so run-to-run spread widens it), `runs_lo_s`..`runs_hi_s` the fastest and slowest run, and
    its samples every run's, run by run (uncertainty.RunSamples: the speedup bootstraps resample runs, then
    samples within each, around the same median of run medians). Rates are rescaled to that median;
    the other columns are the newest run's (the newest with a time, where there is one). `frame` must be
    sorted by start time. Vectorised: grouped aggregates over the repeated rows' positions and four columns, one pass
    over the repeated groups' samples, and one copy of the rows kept (at 10,000 files, copies of the repeated rows
    took it 0.60 GiB above the frame; 0.22 to 0.27 GiB then). Collector.frame does the same in two steps, so that
    only the rows kept are converted whole: `_combine_plan` from the columns that decide (PLAN_COLUMNS), then
    `_combine_apply` to the rows kept."""
    frame = frame.assign(runs=1, runs_lo_s=frame["median_s"], runs_hi_s=frame["median_s"])
    plan = _combine_plan(frame)
    if plan is None:
        return frame
    return _combine_apply(frame.take(plan.positions).reset_index(drop=True), plan)


# What decides which runs' rows are combined, and how (combine_runs)
PLAN_COLUMNS = [*KEY, "profile", "status", "median_s", "ci_lo_s", "ci_hi_s", "samples", "started_at"]


@dataclass
class _Plan:
    """combine_runs' rows kept and what changes in them: `positions`, the rows kept, in the order they come out;
    `rows`, which of those are combined; `stats`, their runs' median, interval span, count, fastest and slowest;
    `samples`, their runs' samples pooled (uncertainty.RunSamples)."""

    positions: np.ndarray
    rows: np.ndarray
    stats: pd.DataFrame
    samples: list[uncertainty.RunSamples]


def _combine_plan(frame: pd.DataFrame) -> _Plan | None:
    """combine_runs' plan, from PLAN_COLUMNS of the rows (sorted by start time); None where no row repeats."""
    group_key = [*KEY, "profile"]
    repeated = frame.duplicated(group_key, keep=False).to_numpy()
    if not repeated.any():
        return None
    # Positions and a few columns, never a copy of the repeated rows (at 10,000 files nearly every row repeats, and
    # three copies of the frame set the build's peak): which rows are combined, and into which one.
    where = np.flatnonzero(repeated)
    # the key columns alone are cut to the repeated rows: the whole frame's rows cut cost a copy of nearly all of it
    keys = frame[group_key].iloc[where]
    group = keys.groupby(group_key, sort=False, observed=True, dropna=False).ngroup().to_numpy()
    del keys
    median = frame["median_s"].to_numpy(dtype=float)[where]
    ok = (frame["status"].to_numpy()[where] == "ok") & ~np.isnan(median)
    groups = int(group.max()) + 1
    # the newest row with a time per group (rows are in start-time order), else the newest
    newest = np.full(groups, -1)
    newest[group] = np.arange(len(where))  # the last row of each group wins
    newest_ok = np.full(groups, -1)
    newest_ok[group[ok]] = np.flatnonzero(ok)
    newest = np.where(newest_ok >= 0, newest_ok, newest)
    timed = pd.DataFrame({"g": group[ok], "m": median[ok]})
    timed["lo"] = frame["ci_lo_s"].to_numpy(dtype=float)[where][ok]
    timed["hi"] = frame["ci_hi_s"].to_numpy(dtype=float)[where][ok]
    stats = timed.groupby("g").agg(
        median=("m", "median"),
        lo=("lo", "min"),
        hi=("hi", "max"),
        n=("m", "size"),
        fastest=("m", "min"),
        slowest=("m", "max"),
    )
    stats = stats[stats["n"] > 1]
    combine = np.zeros(groups, dtype=bool)
    combine[stats.index.to_numpy()] = True
    pooled: dict[int, list[np.ndarray]] = {}
    samples = frame["samples"].to_numpy()
    for g, at in zip(group[ok], where[ok], strict=True):
        if combine[g]:
            pooled.setdefault(int(g), []).append(np.asarray(samples[at], dtype=float))
    # The rows kept, in the order the earlier concatenation and stable sort gave: by start time, then the rows no
    # other run repeats, then the combined rows whose newest has no time, then the rest, each in frame order.
    alone = np.flatnonzero(~repeated)
    positions = np.concatenate([alone, where[newest]])
    tiers = np.concatenate([np.zeros(len(alone), dtype=int), np.where(newest_ok >= 0, 2, 1)])
    at_group = np.concatenate([np.full(len(alone), -1), np.arange(groups)])
    order = np.lexsort((positions, tiers, frame["started_at"].to_numpy()[positions]))
    positions, at_group = positions[order], at_group[order]
    rows = np.flatnonzero((at_group >= 0) & combine[np.maximum(at_group, 0)])
    g = at_group[rows]
    return _Plan(positions, rows, stats.loc[g], [uncertainty.RunSamples(pooled[int(i)]) for i in g])


def _combine_apply(out: pd.DataFrame, plan: _Plan) -> pd.DataFrame:
    """The rows kept (`plan.positions` of the rows, with runs, runs_lo_s and runs_hi_s), their combined ones
    changed as combine_runs says."""
    rows, s = plan.rows, plan.stats
    scale = out["median_s"].to_numpy(dtype=float)[rows] / s["median"].to_numpy()
    for name, values in (
        ("median_s", s["median"]),
        ("ci_lo_s", s["lo"]),
        ("ci_hi_s", s["hi"]),
        ("samples_per_s", out["samples_per_s"].to_numpy(dtype=float)[rows] * scale),
        ("achieved_tflops", out["achieved_tflops"].to_numpy(dtype=float)[rows] * scale),
        ("runs", s["n"]),
        ("runs_lo_s", s["fastest"]),
        ("runs_hi_s", s["slowest"]),
    ):
        column = out[name].to_numpy(dtype=float, copy=True) if name != "runs" else out[name].to_numpy(copy=True)
        column[rows] = np.asarray(values)
        out[name] = column
    merged = out["samples"].to_numpy(copy=True)
    for row, pooled in zip(rows, plan.samples, strict=True):
        merged[row] = pooled
    out["samples"] = merged
    out["runs"] = out["runs"].astype(int)
    return out


PROFILE_ORDER = ("standard", "quick", "tiny")


def primary_slice(frame: pd.DataFrame) -> tuple[int | None, str | None]:
    """The suite version and profile the site compares by default: the newest suite, and within it the
    standard profile (or, before anyone ran standard, the fullest profile there is)."""
    if frame.empty:
        return None, None
    suite = int(frame["suite"].max())
    profiles = set(frame.loc[frame["suite"] == suite, "profile"].astype(str))
    ranked = [p for p in PROFILE_ORDER if p in profiles] or sorted(profiles)
    return suite, ranked[0]


def in_slice(frame: pd.DataFrame, suite: int | None, profile: str | None) -> pd.DataFrame:
    """The rows of one suite version and profile, each marked `earlier_loop` where its loop was fixed within the
    version (see split): a page that shows them labels them, never mixes them with the fixed loop."""
    if suite is None or frame.empty:
        return frame.assign(earlier_loop=False)
    keep = (frame["suite"] == suite) & (frame["profile"].astype(str) == profile)
    frame = frame[keep]
    return frame.assign(earlier_loop=frame["workload_hash"].isin(known.superseded(suite))).reset_index(drop=True)


def split(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(compared, apart): the primary suite version and profile, and everything else. A new suite changes
    loops (and every workload hash) and a profile changes sizes and budgets, so the two are never summarised
    together; the rest is shown on its own page, labelled. A measurement of the primary suite whose loop was
    fixed within the version (its hash `known.superseded`) is apart too, marked `earlier_loop`: it would
    otherwise stand beside the fixed loop's measurements under the same name."""
    suite, profile = primary_slice(frame)
    if suite is None:
        return frame, frame
    earlier = frame["workload_hash"].isin(known.superseded(suite)).to_numpy()
    frame = frame.assign(earlier_loop=earlier)
    mask = (frame["suite"] == suite) & (frame["profile"].astype(str) == profile) & ~earlier
    return frame[mask].reset_index(drop=True), frame[~mask].reset_index(drop=True)


def measurements_frame(results: Iterable[tuple[Path, ResultFile]]) -> pd.DataFrame:
    collector = Collector()
    for path, result in results:
        collector.add(path, result)
    return collector.frame()


def plain(frame: pd.DataFrame) -> pd.DataFrame:
    """Categoricals back to plain columns: merges and group-bys on them then behave like ordinary text."""
    return frame.astype({c: "object" for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype)})


def with_peak_share(rows: pd.DataFrame) -> pd.DataFrame:
    """Each measurement's share of its device's peak FLOP/s, with the interval its time's 95% CI gives."""
    share = rows["achieved_tflops"] / rows["peak_tflops"]
    return rows.assign(
        peak_share=share,
        peak_share_lo=share * rows["median_s"] / rows["ci_hi_s"],
        peak_share_hi=share * rows["median_s"] / rows["ci_lo_s"],
    )


def ok_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The measurements that have a time, as plain columns."""
    return plain(frame[(frame["status"] == "ok") & frame["median_s"].notna()])


def _ratio_intervals(table: pd.DataFrame, numerator: str, denominator: str, estimate: str) -> pd.DataFrame:
    """Columns {estimate}_lo and {estimate}_hi: the 95% bootstrap interval of each row's ratio of medians
    (NaN where a side has no samples, as in files older than the samples field)."""
    lo = np.full(len(table), np.nan)
    hi = np.full(len(table), np.nan)
    nums, dens = list(table[numerator]), list(table[denominator])
    # With a single sample on both sides nothing is known of the noise: no interval (and no verdict).
    rows = [i for i, (a, b) in enumerate(zip(nums, dens, strict=True)) if len(a) and len(b) and len(a) + len(b) > 2]
    if rows:
        lo[rows], hi[rows] = uncertainty.ratio_intervals([nums[i] for i in rows], [dens[i] for i in rows])
    return table.assign(**{f"{estimate}_lo": lo, f"{estimate}_hi": hi})


TOO_FEW = "too few samples"


def interval_columns(name: str, interval: Interval | None) -> dict[str, float]:
    """{name, name_lo, name_hi} from an interval: NaN for an open side, and all NaN without an interval."""

    def value(x: float | None) -> float:
        return np.nan if x is None else x

    if interval is None:
        return {name: np.nan, f"{name}_lo": np.nan, f"{name}_hi": np.nan}
    return {name: interval.estimate, f"{name}_lo": value(interval.lo), f"{name}_hi": value(interval.hi)}


def verdicts(table: pd.DataFrame, estimate: str = "speedup") -> list[str]:
    """Which side wins each row, only where its interval clears 1x; a row without an interval (one sample
    on each side) gets none."""
    return [
        TOO_FEW
        if pd.isna(lo) and pd.isna(hi)
        else uncertainty.verdict(Interval(e, None if pd.isna(lo) else lo, None if pd.isna(hi) else hi))
        for e, lo, hi in zip(table[estimate], table[f"{estimate}_lo"], table[f"{estimate}_hi"], strict=True)
    ]


def speedups(frame: pd.DataFrame) -> pd.DataFrame:
    """Accelerator rows joined with the same machine's CPU row (same framework, workload_hash and profile):
    speedup = CPU time / accelerator time, with its bootstrap interval and verdict. One device against one device
    only: a data-parallel point (several processes: NCCL on GPUs against gloo on the CPU) answers another question
    and lives on the Scale page."""
    ok = ok_rows(frame)
    ok = ok[ok["unit"] != "latency"]  # a streaming latency is not a training or inference time
    ok = ok[ok["world_size"].isna()]
    join = ["machine_id", "workload_hash", "framework", "profile"]
    cpu = ok[ok["device"] == "cpu"][[*join, "median_s", "device_name", "samples", "runs", "runs_lo_s", "runs_hi_s"]]
    accel = ok[ok["device"] != "cpu"]
    joined = accel.merge(cpu.rename(columns={"device_name": "cpu_device_name"}), on=join, suffixes=("", "_cpu"))
    joined["speedup"] = joined["median_s_cpu"] / joined["median_s"]
    # between runs: the slowest run's median over the fastest's, the larger of the two sides (1 for one run each)
    joined["run_spread"] = np.fmax(
        joined["runs_hi_s_cpu"] / joined["runs_lo_s_cpu"], joined["runs_hi_s"] / joined["runs_lo_s"]
    )
    joined["repeated"] = (joined["runs_cpu"] > 1) | (joined["runs"] > 1)
    joined = _ratio_intervals(joined, "samples_cpu", "samples", "speedup")
    joined["verdict"] = verdicts(joined)
    return joined.reset_index(drop=True)


def summarise(table: pd.DataFrame, keys: list[str], estimate: str, **extra: tuple[str, Any]) -> pd.DataFrame:
    """Per group of `keys`: the median of `estimate` over its rows (machines) with the two-level bootstrap
    interval (uncertainty.median_over; each row's own uncertainty from its {estimate}_lo/_hi interval), as
    {estimate}, {estimate}_lo, {estimate}_hi, and machines; extra columns are (column, aggregation) pairs."""
    columns = [*keys, estimate, f"{estimate}_lo", f"{estimate}_hi", "machines", *extra]
    rows = []
    if not table.empty:
        # Only the columns read here: grouping sorts a copy of the table it is given, every column of it. (The
        # speedups page's peak at 100,000 files, 1.7 GiB above its start, was median_over's arrays, not this copy.)
        read = [*keys, estimate, f"{estimate}_lo", f"{estimate}_hi", "machine_id", *(c for c, _ in extra.values())]
        table = table[list(dict.fromkeys(read))]
        for values, group in table.groupby(keys, sort=True, dropna=False, observed=True):
            values = values if isinstance(values, tuple) else (values,)
            interval = uncertainty.median_of_intervals(
                group[estimate].to_numpy(float),
                group[f"{estimate}_lo"].to_numpy(float),
                group[f"{estimate}_hi"].to_numpy(float),
            )
            row = dict(zip(keys, values, strict=True))
            row.update(
                {
                    **interval_columns(estimate, interval),
                    "machines": group["machine_id"].nunique(),
                }
            )
            row.update({name: _aggregate(group[column], how) for name, (column, how) in extra.items()})
            rows.append(row)
    return pd.DataFrame(rows, columns=columns)


def _aggregate(values: pd.Series, how: Any) -> Any:
    if how == "first":
        return values.iloc[0] if len(values) else None
    return values.agg(how)


def speedup_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Across machines: per workload point, variant, framework and accelerator model, the median speedup with
    its interval, the range over machines, and the point's size."""
    keys = ["workload", "point", "variant", "framework", "gpu_vendor", "gpu_model"]
    return summarise(
        table,
        keys,
        "speedup",
        lo=("speedup", "min"),
        hi=("speedup", "max"),
        params=("params", "first"),
        batch_size=("batch_size", "first"),
        depth=("depth", "first"),
    )


def workload_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per workload and variant, over all machines and points: the median and range of the speedups, how
    many comparisons each side clearly wins (its interval clear of 1x), and between runs: how many machines ran
    it more than once (each still counts once) and the largest spread between one machine's runs (the slowest
    run's median over the fastest's, CPU or accelerator side)."""
    columns = [
        "workload", "variant", "machines", "median", "lo", "hi", "comparisons", "gpu", "cpu", "unclear",
        "repeated_machines", "run_spread",
    ]  # fmt: skip
    if table.empty:
        return pd.DataFrame(columns=columns)
    table = table.assign(_repeated_id=table["machine_id"].where(table["repeated"]))
    grouped = table.groupby(["workload", "variant"], sort=True, observed=True)
    return grouped.agg(
        machines=("machine_id", "nunique"),
        median=("speedup", "median"),
        lo=("speedup", "min"),
        hi=("speedup", "max"),
        comparisons=("speedup", "size"),
        gpu=("verdict", lambda v: int((v == "accelerator faster").sum())),
        cpu=("verdict", lambda v: int((v == "CPU faster").sum())),
        unclear=("verdict", lambda v: int((v == "no clear winner").sum())),
        repeated_machines=("_repeated_id", "nunique"),
        run_spread=("run_spread", "max"),
    ).reset_index()[columns]


def _sweep_verdict(ratio: list[float]) -> str:
    if all(r >= 1 for r in ratio):
        return "accelerator always faster"
    if all(r < 1 for r in ratio):
        return "CPU always faster"
    return "crossover"


CROSSOVER_COLUMNS = [
    "machine_id",
    "variant",
    "framework",
    "device",
    "gpu_model",
    "verdict",
    "break_even_params",
    "break_even_params_lo",
    "break_even_params_hi",
    "low",
    "high",
    "replicates",
]


def _sweep_crossings(table: pd.DataFrame, keys: list[str], axis: str, at: str) -> list[dict[str, Any]]:
    """Per group of a sweep (rows along `axis`): the verdict, the break-even with its interval (open sides as
    NaN) and its replicates, and the measured range."""
    rows = []
    for values, group in table.groupby(keys, sort=True):
        group = group.sort_values(axis)
        if len(group) < 2:
            continue
        xs = group[axis].astype(float).tolist()
        verdict = _sweep_verdict(group["speedup"].tolist())
        found = None
        if verdict == "crossover" and all(
            len(c) and len(a) for c, a in zip(group["samples_cpu"], group["samples"], strict=True)
        ):
            found = uncertainty.break_even_replicates(xs, list(group["samples_cpu"]), list(group["samples"]))
        elif verdict == "crossover":
            exact = uncertainty.crossing(xs, group["speedup"].tolist())
            found = (exact, np.full(uncertainty.RESAMPLES, exact)) if exact is not None else None
        if verdict == "crossover" and found is None:
            verdict = "mixed"  # crosses back and forth without a first upward crossing
        interval = uncertainty.median_over([found[0]], [found[1]]) if found else None
        rows.append(
            {
                **dict(zip(keys, values, strict=True)),
                "gpu_model": group["gpu_model"].iloc[0],
                "verdict": verdict,
                **interval_columns(at, interval),
                "low": xs[0],
                "high": xs[-1],
                "replicates": found[1].astype(np.float32) if found else None,
            }
        )
    return rows


def crossovers(table: pd.DataFrame, workload: str = "depth-sweep") -> pd.DataFrame:
    """Per machine, variant, framework and accelerator: the parameter count where the accelerator starts to
    win, with its interval. `table` is the speedups() table."""
    if table.empty:
        return pd.DataFrame(columns=CROSSOVER_COLUMNS)
    table = table[table["workload"] == workload]
    rows = _sweep_crossings(table, ["machine_id", "variant", "framework", "device"], "params", "break_even_params")
    return pd.DataFrame(rows, columns=CROSSOVER_COLUMNS)


BATCH_COLUMNS = [
    "machine_id",
    "model",
    "mode",
    "variant",
    "framework",
    "device",
    "gpu_model",
    "verdict",
    "break_even_batch",
    "break_even_batch_lo",
    "break_even_batch_hi",
    "low",
    "high",
    "replicates",
]


def batch_crossovers(table: pd.DataFrame) -> pd.DataFrame:
    """Per machine, model, mode and variant of a batch-size sweep: the batch size where the accelerator wins,
    with its interval. `table` is the speedups() table."""
    if table.empty:
        return pd.DataFrame(columns=BATCH_COLUMNS)
    table = table[table["batch_size"].notna()]
    keys = ["machine_id", "model", "mode", "variant", "framework", "device"]
    return pd.DataFrame(_sweep_crossings(table, keys, "batch_size", "break_even_batch"), columns=BATCH_COLUMNS)


LOOP_COLUMNS = [
    "machine_id",
    "gpu_model",
    "workload",
    "point",
    "framework",
    "device",
    "as_written",
    "as_written_lo",
    "as_written_hi",
    "tuned",
    "tuned_lo",
    "tuned_hi",
    "flips",
    "gpu_gain",
    "gpu_gain_lo",
    "gpu_gain_hi",
    "cpu_gain",
    "cpu_gain_lo",
    "cpu_gain_hi",
]


def loop_effect(table: pd.DataFrame) -> pd.DataFrame:
    """As-written against tuned, per machine, workload point, framework and accelerator: each variant's
    speedup over the CPU with its interval, and whether the verdict flips with the loop (both verdicts clear
    of 1x and on opposite sides)."""
    if table.empty:
        return pd.DataFrame(columns=LOOP_COLUMNS)
    keys = ["machine_id", "gpu_model", "workload", "point", "framework", "device"]
    cols = [
        *keys,
        "speedup",
        "speedup_lo",
        "speedup_hi",
        "verdict",
        "median_s",
        "median_s_cpu",
        "samples",
        "samples_cpu",
    ]
    written = table[table["variant"] == "as-written"][cols]
    tuned = table[table["variant"] == "tuned"][cols]
    both = written.merge(tuned, on=keys, suffixes=("_written", "_tuned"))
    both = both.rename(
        columns={
            "speedup_written": "as_written",
            "speedup_lo_written": "as_written_lo",
            "speedup_hi_written": "as_written_hi",
            "speedup_tuned": "tuned",
            "speedup_lo_tuned": "tuned_lo",
            "speedup_hi_tuned": "tuned_hi",
        }
    )
    clear = ("accelerator faster", "CPU faster")
    both["flips"] = (
        both["verdict_written"].isin(clear)
        & both["verdict_tuned"].isin(clear)
        & (both["verdict_written"] != both["verdict_tuned"])
    )
    both["gpu_gain"] = both["median_s_written"] / both["median_s_tuned"]
    both["cpu_gain"] = both["median_s_cpu_written"] / both["median_s_cpu_tuned"]
    both = _ratio_intervals(both, "samples_written", "samples_tuned", "gpu_gain")
    both = _ratio_intervals(both, "samples_cpu_written", "samples_cpu_tuned", "cpu_gain")
    return both[LOOP_COLUMNS].reset_index(drop=True)


def framework_comparison(frame: pd.DataFrame, baseline: str = "torch") -> pd.DataFrame:
    """Each framework's time over the baseline framework's on the same machine and device for the same
    workload_hash (the hash leaves the framework out, so it names the same model, data and loop): >1 means
    the baseline is faster. With the ratio's interval."""
    ok = ok_rows(frame)
    keys = ["machine_id", "device", "workload_hash", "profile"]
    base = ok[ok["framework"] == baseline][[*keys, "median_s", "samples"]]
    other = ok[ok["framework"] != baseline]
    both = other.merge(base, on=keys, suffixes=("", "_base"))
    both["ratio"] = both["median_s"] / both["median_s_base"]
    return _ratio_intervals(both, "samples", "samples_base", "ratio").reset_index(drop=True)


# --- summaries by device model: what the charts and site-wide tables show, bounded however many machines ---

CHART_MODELS = 12


def top_models(table: pd.DataFrame, column: str, limit: int = CHART_MODELS) -> pd.DataFrame:
    """Rows of the `limit` values of column that the most machines share (ties: by name)."""
    if table.empty:
        return table
    counts = table.groupby(column, observed=True)["machine_id"].nunique().reset_index(name="n")
    keep = counts.sort_values(["n", column], ascending=[False, True])[column].head(limit)
    return table[table[column].isin(set(keep))]


def sweep_by_device(frame: pd.DataFrame, workload: str = "depth-sweep") -> pd.DataFrame:
    """Per device model, loop, framework and sweep point: the median time over machines, with its interval."""
    rows = ok_rows(frame[frame["workload"] == workload])
    rows = top_models(rows, "device_name", 2 * CHART_MODELS)
    keys = ["device", "device_name", "variant", "framework", "depth", "params"]
    rows = rows.assign(median_s_lo=rows["ci_lo_s"], median_s_hi=rows["ci_hi_s"])  # the engine's CI of the median
    return summarise(rows, keys, "median_s")


def batch_by_accelerator(table: pd.DataFrame) -> pd.DataFrame:
    """Per accelerator model, transformer model, mode, loop, framework and batch size: the median speedup
    with its interval."""
    rows = top_models(table[table["batch_size"].notna()], "gpu_model")
    keys = ["gpu_model", "model", "mode", "variant", "framework", "batch_size"]
    return summarise(rows, keys, "speedup")


def crossover_summary(crossings: pd.DataFrame, at: str = "break_even_params") -> pd.DataFrame:
    """Per accelerator model, loop and framework: machines, the verdicts, and the median break-even over the
    machines that cross, with its interval (NaN on a side left open by the measured range)."""
    columns = ["gpu_model", "variant", "framework", "machines", "crossing", "verdicts", at, f"{at}_lo", f"{at}_hi"]
    if crossings.empty:
        return pd.DataFrame(columns=columns)
    rows = []
    for (gpu, variant, framework), group in crossings.groupby(["gpu_model", "variant", "framework"], sort=True):
        crossed = group[group["verdict"] == "crossover"]
        interval = uncertainty.median_over(crossed[at].tolist(), list(crossed["replicates"])) if len(crossed) else None
        rows.append(
            {
                "gpu_model": gpu,
                "variant": variant,
                "framework": framework,
                "machines": group["machine_id"].nunique(),
                "crossing": len(crossed),
                "verdicts": "; ".join(f"{k} {n}" for k, n in group["verdict"].value_counts().items()),
                **interval_columns(at, interval),
            }
        )
    return pd.DataFrame(rows, columns=columns)


def loop_by_accelerator(effect: pd.DataFrame) -> pd.DataFrame:
    """Per accelerator model, workload point and framework: median speedups with each loop (with intervals)
    and the median gains."""
    columns = ["gpu_model", "workload", "point", "framework"]
    if effect.empty:
        return pd.DataFrame(
            columns=[*columns, "machines", "flips"]
            + [f"{f}{s}" for f in ("as_written", "tuned", "gpu_gain", "cpu_gain") for s in ("", "_lo", "_hi")]
        )
    rows = top_models(effect, "gpu_model")
    parts = [
        summarise(rows, columns, "as_written"),
        summarise(rows, columns, "tuned"),
        summarise(rows, columns, "gpu_gain"),
        summarise(rows, columns, "cpu_gain"),
    ]
    out = parts[0]
    for part in parts[1:]:
        out = out.merge(part.drop(columns="machines"), on=columns)
    clear = {"accelerator faster", "CPU faster"}
    a = verdicts(out, "as_written")
    t = verdicts(out, "tuned")
    out["flips"] = [x in clear and y in clear and x != y for x, y in zip(a, t, strict=True)]
    return out


def equivalence_summary(machines: Mapping[str, MachineSummary]) -> pd.DataFrame:
    """Per framework, workload and point: on how many machines the equivalence check passed, failed or could
    not run, and the largest gradient difference seen."""
    rows = [
        {"framework": f, "workload": w, "point": p, "machine_id": mid, "status": status, "grad": grad}
        for mid, summary in machines.items()
        for (f, w, p), (_, status, grad) in summary.equivalence.items()
    ]
    columns = ["framework", "workload", "point", "machines", "passed", "failed", "error", "worst_grad_rel_diff"]
    if not rows:
        return pd.DataFrame(columns=columns)
    table = pd.DataFrame(rows)
    return (
        table.groupby(["framework", "workload", "point"])
        .agg(
            machines=("machine_id", "nunique"),
            passed=("status", lambda s: int((s == "passed").sum())),
            failed=("status", lambda s: int((s == "failed").sum())),
            error=("status", lambda s: int((s == "error").sum())),
            worst_grad_rel_diff=("grad", "max"),
        )
        .reset_index()[columns]
    )


def frameworks_by_device(table: pd.DataFrame) -> pd.DataFrame:
    """Per device model, workload point, loop and framework: the median time over the baseline's, with its
    interval."""
    rows = top_models(table, "device_name", 2 * CHART_MODELS)
    keys = ["device", "device_name", "workload", "point", "params", "variant", "framework"]
    return summarise(
        rows,
        keys,
        "ratio",
        median_s=("median_s", "median"),
        median_s_base=("median_s_base", "median"),
    )


def scaling(frame: pd.DataFrame, workload: str = "transformer-ddp") -> pd.DataFrame:
    """Data-parallel scaling per machine, loop, framework, device, model, batch per process and run (`frame`
    one row per run: Collector.runs_of): each world size's examples per second (with the interval its median's
    gives) and its efficiency, the examples per second over world size times one process's, within the same
    run. A step takes one batch per process, so the efficiency is the ratio of the two step times,
    t(1) / t(N), with the bootstrap interval of that ratio of medians."""
    rows = ok_rows(frame[frame["workload"] == workload]) if not frame.empty else frame
    if rows.empty:
        return pd.DataFrame()
    # a loop fixed within the suite is its own loop, "tuned (earlier loop: eager)", never divided by the fixed one
    earlier = rows["earlier_loop"] if "earlier_loop" in rows else pd.Series(False, index=rows.index)
    how = rows["runs_as"].astype(str) if "runs_as" in rows else pd.Series("", index=rows.index)
    label = rows["variant"].astype(str) + np.where(how != "", " (earlier loop: " + how + ")", " (earlier loop)")
    rows = rows.assign(loop=np.where(earlier, label, rows["variant"]))
    keys = [
        "machine_id", "gpu_model", "device", "device_name", "framework", "variant", "loop", "model", "batch_size",
        "run_id", "started_at",
    ]  # fmt: skip
    out = []
    for _, group in rows.groupby(keys, sort=True, observed=True, dropna=False):
        base = group[group["world_size"] == 1]
        for _, r in group.sort_values("world_size").iterrows():
            per_unit = r["samples_per_s"] * r["median_s"]  # examples per step
            entry = {k: r[k] for k in keys}
            entry.update(
                run=f"{r['started_at']:%Y-%m-%d %H:%M} UTC",
                world_size=int(r["world_size"]),
                interconnect=r["interconnect"],
                allreduce=r.get("allreduce", ""),
                samples_per_s=r["samples_per_s"],
                samples_per_s_lo=per_unit / r["ci_hi_s"] if r["ci_hi_s"] > 0 else np.nan,
                samples_per_s_hi=per_unit / r["ci_lo_s"] if r["ci_lo_s"] > 0 else np.nan,
                base=base["samples"].iloc[0] if len(base) else np.asarray([]),
                samples=r["samples"],
                efficiency=float(base["median_s"].iloc[0] / r["median_s"]) if len(base) else np.nan,
            )
            out.append(entry)
    table = _ratio_intervals(pd.DataFrame(out), "base", "samples", "efficiency")
    return table.drop(columns=["base", "samples"])


def scaling_spread(table: pd.DataFrame) -> pd.DataFrame:
    """Between runs: per machine, device, loop, framework, model, batch and world size measured in more than one
    run, how many runs and the lowest and highest efficiency and examples per second among them."""
    keys = ["machine_id", "device_name", "loop", "framework", "model", "batch_size", "world_size"]
    if table.empty:
        return pd.DataFrame()
    grouped = table.groupby(keys, sort=True, observed=True, dropna=False).agg(
        runs=("run_id", "nunique"),
        efficiency_min=("efficiency", "min"),
        efficiency_max=("efficiency", "max"),
        samples_per_s_min=("samples_per_s", "min"),
        samples_per_s_max=("samples_per_s", "max"),
    )
    return grouped[grouped["runs"] > 1].reset_index()


def spark_inference(frame: pd.DataFrame) -> pd.DataFrame:
    """Spark batch inference: rows per second (with the interval its median's gives) per machine, device, model,
    rows per predict call and partitions, with the kind of Spark master it ran on."""
    rows = ok_rows(frame[frame["workload"] == "spark-inference"]) if not frame.empty else frame
    if rows.empty:
        return pd.DataFrame()
    out = rows.assign(
        samples_per_s_lo=rows["samples_per_s"] * rows["median_s"] / rows["ci_hi_s"].where(rows["ci_hi_s"] > 0),
        samples_per_s_hi=rows["samples_per_s"] * rows["median_s"] / rows["ci_lo_s"].where(rows["ci_lo_s"] > 0),
    )
    cols = ["machine_id", "gpu_model", "device", "device_name", "spark_master", "model", "batch_size", "partitions"]
    out = out[[*cols, "samples_per_s", "samples_per_s_lo", "samples_per_s_hi"]]
    return plain(out).sort_values(cols).reset_index(drop=True)


def spark_streaming(frame: pd.DataFrame) -> pd.DataFrame:
    """Spark streaming: per machine, device, model and offered rate, the end-to-end latency's p50, p95 and p99
    with their distribution-free 95% intervals (runner.results.streaming.quantile_ci over the latencies; a side that
    too few latencies cannot bound is NaN), whether the rate was sustained, and the growth of its latency."""
    rows = ok_rows(frame[frame["workload"] == "spark-streaming"]) if not frame.empty else frame
    if rows.empty:
        return pd.DataFrame()
    cols = ["machine_id", "gpu_model", "device", "device_name", "spark_master", "model", "rate"]
    out = []
    for _, r in rows.sort_values(cols).iterrows():
        entry = {c: r[c] for c in cols}
        latencies = [float(x) for x in r["samples"]]
        for name, q in (("p50", 0.5), ("p95", 0.95), ("p99", 0.99)):
            lo, hi = streaming.quantile_ci(latencies, q)
            entry.update(
                {
                    f"{name}_s": streaming.quantile(latencies, q),
                    f"{name}_s_lo": np.nan if lo is None else lo,
                    f"{name}_s_hi": np.nan if hi is None else hi,
                }
            )
        entry.update(
            files=len(latencies),
            bounded=bool(r["bounded"]),
            growth=float(r["growth"]),
            samples_per_s=r["samples_per_s"],
        )
        out.append(entry)
    return plain(pd.DataFrame(out))


def sustained(table: pd.DataFrame) -> pd.DataFrame:
    """The sustained throughput per machine, device and model: the highest offered rate that was sustained
    below the first that was not (every rate is a doubling, so the true figure lies in [rate, next_rate));
    next_rate is NaN where no measured rate failed (open above), rate NaN where even the lowest failed."""
    if table.empty:
        return pd.DataFrame()
    keys = ["machine_id", "gpu_model", "device", "device_name", "spark_master", "model"]
    out = []
    for values, group in table.groupby(keys, sort=True, dropna=False):
        group = group.sort_values("rate")
        failed = group[~group["bounded"]]
        first_fail = failed["rate"].min() if len(failed) else np.nan
        held = group[group["bounded"] & ~(group["rate"] > first_fail)]
        best = held.iloc[-1] if len(held) else None
        entry = dict(zip(keys, values, strict=True))
        entry.update(
            rate=float(best["rate"]) if best is not None else np.nan,
            next_rate=float(first_fail),
            p99_s=best["p99_s"] if best is not None else np.nan,
            p99_s_lo=best["p99_s_lo"] if best is not None else np.nan,
            p99_s_hi=best["p99_s_hi"] if best is not None else np.nan,
            rates=len(group),
        )
        out.append(entry)
    return pd.DataFrame(out)
