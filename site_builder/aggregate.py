"""Aggregation: result files in, tidy pandas frames out. Pure: no file I/O, no rendering.

Only measurements with the same workload_hash are ever compared; a speedup compares an accelerator with
the CPU of the same machine, same framework and same workload_hash.

Files stream through a Collector one at a time and are reduced to columns at once, so that ten thousand
contributed files never sit in memory as objects: the frame holds one row per measurement, the machine
summaries the newest fingerprint and top operators per machine.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

from runner.schema import Machine, ResultFile, Software, SyncSelfTest
from site_builder.uncertainty import crossing

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
]
KEY = ["machine_id", "workload_hash", "framework", "device"]
NUMERIC = ["suite", "median_s", "ci_lo_s", "ci_hi_s", "samples_per_s", "achieved_tflops", "params", "depth"]
# Repeated text columns are stored once per distinct value (pandas categoricals); workload_hash and the
# numbers, dates and flags stay as they are.
CATEGORIES = [c for c in COLUMNS if c not in {*NUMERIC, "workload_hash", "started_at", "batch_size", "stable"}]
VENDOR_NAMES = {"nvidia": "NVIDIA", "amd": "AMD", "apple": "Apple", "intel": "Intel", "other": "other"}
TOP_OPS_PER_MEASUREMENT = 5


def point_label(point: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in point.items())


@dataclass
class MachineSummary:
    """What a machine page shows besides the measurements: the newest fingerprint and every run."""

    machine: Machine
    software: Software
    sync_selftests: list[SyncSelfTest]
    started_at: datetime
    runs: list[tuple[datetime, str, str, int]] = field(default_factory=list)  # date, profile, command, count
    # (workload_hash, framework, device) -> (started_at, row): the newest run's top operators per measurement
    top_ops: dict[tuple[str, str, str], tuple[datetime, dict[str, Any]]] = field(default_factory=dict)
    # (framework, workload, point) -> (started_at, status, gradient difference): the newest equivalence check
    equivalence: dict[tuple[str, str, str], tuple[datetime, str, float | None]] = field(default_factory=dict)


class Collector:
    """Reduce result files to a measurement frame and per-machine summaries, one file at a time."""

    def __init__(self) -> None:
        self._columns: dict[str, list[Any]] = {name: [] for name in COLUMNS}
        self.machines: dict[str, MachineSummary] = {}
        self.files = 0

    def add(self, path: Path, result: ResultFile) -> None:
        self.files += 1
        machine, run = result.machine, result.run
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
        columns = self._columns
        summary = self._summary(result)
        for check in result.equivalence:
            key = (intern(check.framework), intern(check.workload), intern(point_label(check.point)))
            if key not in summary.equivalence or summary.equivalence[key][0] <= run.started_at:
                summary.equivalence[key] = (run.started_at, check.status, check.grad_rel_diff)
        for m in result.measurements:
            ci = m.ci95_s or (None, None)
            label = intern(point_label(m.point))
            row = {
                "workload": intern(m.workload),
                "workload_hash": intern(m.workload_hash),
                "point": label,
                "depth": m.point.get("depth"),
                "model": m.point.get("model"),
                "mode": m.point.get("mode"),
                "batch_size": m.point.get("batch_size"),
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
            }
            for name, value in common.items():
                columns[name].append(value)
            for name, value in row.items():
                columns[name].append(value)
            if m.top_ops:
                key = (m.workload_hash, m.framework, m.device)
                known = summary.top_ops.get(key)
                if known is None or known[0] <= run.started_at:
                    ops = sorted(m.top_ops, key=lambda op: op.self_s, reverse=True)[:TOP_OPS_PER_MEASUREMENT]
                    summary.top_ops[key] = (
                        run.started_at,
                        {
                            "workload": m.workload,
                            "point": label,
                            "variant": m.variant,
                            "framework": m.framework,
                            "device": m.device,
                            "device_name": m.device_name,
                            "ops": [(op.name, op.self_s, op.calls) for op in ops],
                        },
                    )

    def _summary(self, result: ResultFile) -> MachineSummary:
        machine, run = result.machine, result.run
        summary = self.machines.get(machine.id)
        if summary is None or summary.started_at < run.started_at:
            fresh = MachineSummary(machine, result.software, list(result.sync_selftests), run.started_at)
            if summary is not None:
                fresh.runs, fresh.top_ops, fresh.equivalence = summary.runs, summary.top_ops, summary.equivalence
            summary = self.machines[machine.id] = fresh
        summary.runs.append((run.started_at, result.suite.profile, run.command, len(result.measurements)))
        return summary

    def merge(self, other: Collector) -> None:
        """Fold in a collector filled elsewhere (a loading process): its rows appended; per machine the newest
        fingerprint, every run, and the newest top operators per measurement."""
        self.files += other.files
        for name, values in other._columns.items():
            self._columns[name].extend(values)
        for machine_id, theirs in other.machines.items():
            ours = self.machines.get(machine_id)
            if ours is None:
                self.machines[machine_id] = theirs
                continue
            newer, older = (theirs, ours) if theirs.started_at > ours.started_at else (ours, theirs)
            newer.runs = ours.runs + theirs.runs
            for key, (when, row) in older.top_ops.items():
                if key not in newer.top_ops or newer.top_ops[key][0] < when:
                    newer.top_ops[key] = (when, row)
            for key, check in older.equivalence.items():
                if key not in newer.equivalence or newer.equivalence[key][0] < check[0]:
                    newer.equivalence[key] = check
            self.machines[machine_id] = newer

    def frame(self) -> pd.DataFrame:
        """One row per measurement; where a machine ran the same measurement more than once, the newest run.

        Only the newest suite version present: a new suite changes loops (and every workload hash), so its
        numbers are never summarised with an older suite's. Older runs stay listed on their machine pages."""
        frame = pd.DataFrame(self._columns, columns=COLUMNS)
        if frame.empty:
            return frame
        frame = frame[frame["suite"] == frame["suite"].max()]
        for name in NUMERIC:
            frame[name] = pd.to_numeric(frame[name], errors="coerce")
        frame["started_at"] = pd.to_datetime(frame["started_at"], utc=True)
        frame = frame.sort_values("started_at", kind="stable").drop_duplicates(KEY, keep="last")
        for name in CATEGORIES:
            frame[name] = frame[name].astype("category")
        return frame.reset_index(drop=True)


def measurements_frame(results: Iterable[tuple[Path, ResultFile]]) -> pd.DataFrame:
    collector = Collector()
    for path, result in results:
        collector.add(path, result)
    return collector.frame()


def plain(frame: pd.DataFrame) -> pd.DataFrame:
    """Categoricals back to plain columns: merges and group-bys on them then behave like ordinary text."""
    return frame.astype({c: "object" for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype)})


def ok_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The measurements that have a time, as plain columns."""
    return plain(frame[(frame["status"] == "ok") & frame["median_s"].notna()])


def speedups(frame: pd.DataFrame) -> pd.DataFrame:
    """Accelerator rows joined with the same machine's CPU row: speedup = CPU time / accelerator time."""
    ok = ok_rows(frame)
    cpu = ok[ok["device"] == "cpu"][["machine_id", "workload_hash", "framework", "median_s", "device_name"]]
    accel = ok[ok["device"] != "cpu"]
    joined = accel.merge(
        cpu.rename(columns={"device_name": "cpu_device_name"}),
        on=["machine_id", "workload_hash", "framework"],
        suffixes=("", "_cpu"),
    )
    joined["speedup"] = joined["median_s_cpu"] / joined["median_s"]
    return joined.reset_index(drop=True)


def speedup_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Across machines: per workload point, variant, framework and accelerator model, the median speedup."""
    if table.empty:
        return table.assign(machines=[], lo=[], hi=[])
    keys = ["workload", "point", "variant", "framework", "gpu_vendor", "gpu_model"]
    grouped = table.groupby(keys, sort=False, observed=True)
    out = grouped.agg(
        speedup=("speedup", "median"),
        lo=("speedup", "min"),
        hi=("speedup", "max"),
        machines=("machine_id", "nunique"),
        params=("params", "first"),
        batch_size=("batch_size", "first"),
        depth=("depth", "first"),
    ).reset_index()
    return out


def workload_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per workload and variant: over all machines and points, the median and range of the speedup."""
    if table.empty:
        return pd.DataFrame(columns=["workload", "variant", "machines", "median", "lo", "hi", "gpu_wins"])
    grouped = table.groupby(["workload", "variant"], sort=True, observed=True)
    return grouped.agg(
        machines=("machine_id", "nunique"),
        median=("speedup", "median"),
        lo=("speedup", "min"),
        hi=("speedup", "max"),
        gpu_wins=("speedup", lambda s: float((s > 1).mean())),
    ).reset_index()


def _verdict(xs: list[float], ratio: list[float]) -> tuple[str, float | None]:
    if all(r >= 1 for r in ratio):
        return "accelerator always faster", None
    if all(r < 1 for r in ratio):
        return "CPU always faster", None
    at = crossing(xs, ratio)
    return ("crossover" if at is not None else "mixed"), at


CROSSOVER_COLUMNS = ["machine_id", "variant", "framework", "device", "gpu_model", "verdict", "break_even_params"]


def crossovers(table: pd.DataFrame, workload: str = "depth-sweep") -> pd.DataFrame:
    """Per machine, variant, framework and accelerator: the parameter count where the accelerator wins.
    `table` is the speedups() table."""
    if table.empty:
        return pd.DataFrame(columns=CROSSOVER_COLUMNS)
    table = table[table["workload"] == workload]
    rows = []
    for (machine, variant, framework, device), group in table.groupby(
        ["machine_id", "variant", "framework", "device"], sort=True
    ):
        group = group.sort_values("params")
        verdict, at = _verdict(group["params"].astype(float).tolist(), group["speedup"].tolist())
        rows.append(
            {
                "machine_id": machine,
                "variant": variant,
                "framework": framework,
                "device": device,
                "gpu_model": group["gpu_model"].iloc[0],
                "verdict": verdict,
                "break_even_params": at,
            }
        )
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
]


def batch_crossovers(table: pd.DataFrame) -> pd.DataFrame:
    """Per machine, model, mode and variant of a batch-size sweep: the batch size where the accelerator wins.
    `table` is the speedups() table."""
    if table.empty:
        return pd.DataFrame(columns=BATCH_COLUMNS)
    table = table[table["batch_size"].notna()]
    rows = []
    keys = ["machine_id", "model", "mode", "variant", "framework", "device"]
    for values, group in table.groupby(keys, sort=True):
        group = group.sort_values("batch_size")
        if len(group) < 2:
            continue
        verdict, at = _verdict(group["batch_size"].astype(float).tolist(), group["speedup"].tolist())
        rows.append(
            {
                **dict(zip(keys, values, strict=True)),
                "gpu_model": group["gpu_model"].iloc[0],
                "verdict": verdict,
                "break_even_batch": at,
            }
        )
    return pd.DataFrame(rows, columns=BATCH_COLUMNS)


def loop_effect(table: pd.DataFrame) -> pd.DataFrame:
    """As-written against tuned, per machine, workload point, framework and accelerator: each variant's
    speedup over the CPU, and whether the verdict (CPU or accelerator) changes with the loop."""
    if table.empty:
        return pd.DataFrame(
            columns=[
                "machine_id",
                "gpu_model",
                "workload",
                "point",
                "framework",
                "device",
                "as_written",
                "tuned",
                "flips",
                "gpu_gain",
                "cpu_gain",
            ]
        )
    keys = ["machine_id", "gpu_model", "workload", "point", "framework", "device"]
    cols = [*keys, "speedup", "median_s", "median_s_cpu"]
    written = table[table["variant"] == "as-written"][cols]
    tuned = table[table["variant"] == "tuned"][cols]
    both = written.merge(tuned, on=keys, suffixes=("_written", "_tuned"))
    both = both.rename(columns={"speedup_written": "as_written", "speedup_tuned": "tuned"})
    both["flips"] = (both["as_written"] >= 1) != (both["tuned"] >= 1)
    both["gpu_gain"] = both["median_s_written"] / both["median_s_tuned"]
    both["cpu_gain"] = both["median_s_cpu_written"] / both["median_s_cpu_tuned"]
    return both[[*keys, "as_written", "tuned", "flips", "gpu_gain", "cpu_gain"]].reset_index(drop=True)


def framework_comparison(frame: pd.DataFrame, baseline: str = "torch") -> pd.DataFrame:
    """Each framework's time over the baseline framework's on the same machine and device for the same
    workload_hash (the hash leaves the framework out, so it names the same model, data and loop): >1 means
    the baseline is faster."""
    ok = ok_rows(frame)
    keys = ["machine_id", "device", "workload_hash"]
    base = ok[ok["framework"] == baseline][[*keys, "median_s"]]
    other = ok[ok["framework"] != baseline]
    both = other.merge(base, on=keys, suffixes=("", "_base"))
    both["ratio"] = both["median_s"] / both["median_s_base"]
    return both.reset_index(drop=True)


# --- summaries by device model: what the charts and site-wide tables show, bounded however many machines ---

CHART_MODELS = 12


def _top(table: pd.DataFrame, column: str, limit: int = CHART_MODELS) -> pd.DataFrame:
    """Rows of the `limit` values of column that the most machines share (ties: by name)."""
    if table.empty:
        return table
    counts = table.groupby(column, observed=True)["machine_id"].nunique().reset_index(name="n")
    keep = counts.sort_values(["n", column], ascending=[False, True])[column].head(limit)
    return table[table[column].isin(set(keep))]


def sweep_by_device(frame: pd.DataFrame, workload: str = "depth-sweep") -> pd.DataFrame:
    """Per device model, loop, framework and sweep point: the median time over machines."""
    rows = ok_rows(frame[frame["workload"] == workload])
    rows = _top(rows, "device_name", 2 * CHART_MODELS)
    keys = ["device", "device_name", "variant", "framework", "depth", "params"]
    return (
        rows.groupby(keys, dropna=False)
        .agg(median_s=("median_s", "median"), machines=("machine_id", "nunique"))
        .reset_index()
    )


def batch_by_accelerator(table: pd.DataFrame) -> pd.DataFrame:
    """Per accelerator model, transformer model, mode, loop, framework and batch size: the median speedup."""
    rows = _top(table[table["batch_size"].notna()], "gpu_model")
    keys = ["gpu_model", "model", "mode", "variant", "framework", "batch_size"]
    return rows.groupby(keys).agg(speedup=("speedup", "median"), machines=("machine_id", "nunique")).reset_index()


def crossover_summary(crossings: pd.DataFrame, at: str = "break_even_params") -> pd.DataFrame:
    """Per accelerator model, loop and framework: machines, how many cross over, the median break-even."""
    if crossings.empty:
        return pd.DataFrame(columns=["gpu_model", "variant", "framework", "machines", "crossing", "verdicts", at])
    keys = ["gpu_model", "variant", "framework"]
    out = crossings.groupby(keys).agg(
        machines=("machine_id", "nunique"),
        crossing=("verdict", lambda v: int((v == "crossover").sum())),
        verdicts=("verdict", lambda v: "; ".join(f"{k} {n}" for k, n in v.value_counts().items())),
        **{at: (at, "median")},
    )
    return out.reset_index()


def loop_by_accelerator(effect: pd.DataFrame) -> pd.DataFrame:
    """Per accelerator model, workload point and framework: median speedups with each loop and gains."""
    if effect.empty:
        return effect.assign(machines=[])
    rows = _top(effect, "gpu_model")
    keys = ["gpu_model", "workload", "point", "framework"]
    out = (
        rows.groupby(keys)
        .agg(
            as_written=("as_written", "median"),
            tuned=("tuned", "median"),
            gpu_gain=("gpu_gain", "median"),
            cpu_gain=("cpu_gain", "median"),
            machines=("machine_id", "nunique"),
        )
        .reset_index()
    )
    out["flips"] = (out["as_written"] >= 1) != (out["tuned"] >= 1)
    return out


def equivalence_summary(machines: dict[str, MachineSummary]) -> pd.DataFrame:
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
    """Per device model, workload point, loop and framework: the median time over the baseline's."""
    if table.empty:
        return table.assign(machines=[])
    rows = _top(table, "device_name", 2 * CHART_MODELS)
    keys = ["device", "device_name", "workload", "point", "params", "variant", "framework"]
    return (
        rows.groupby(keys, dropna=False)
        .agg(
            ratio=("ratio", "median"),
            median_s=("median_s", "median"),
            median_s_base=("median_s_base", "median"),
            machines=("machine_id", "nunique"),
        )
        .reset_index()
    )
