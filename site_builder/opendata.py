"""Open data: the tables the site is built from, published with every build as CSV and Parquet.

data/measurements.csv and data/measurements.parquet hold the same rows and columns, at two levels (`level`):

- `machine`: every accepted measurement, all profiles and suite versions, one row per machine, measurement and
  profile as the pages show it (a measurement a machine ran more than once is the median over its runs, with
  their count and spread; `run_id` and `benchsite_version` are then the newest run's);
- `run`: one row per run of every measurement with a time (status ok), never combined, its interval the one the
  site gives a figure of one run: where another run of that machine would land, the run's own interval widened by
  the spread between runs of one machine (site_builder.uncertainty.single_run_interval; for a machine with one run
  of a measurement, its machine row's interval).

data/speedups.csv holds the compared speedups with their intervals (`level` machine: the pages' figures, with
`run_id` and `benchsite_version` empty) and one row per run's speedup (`level` run: the run file's CPU and
accelerator measurement of one workload hash, framework and profile, of every profile and suite version, its
interval the within-run one widened by the speedups' between-run spread as for a measurement of one run). Text
that a spreadsheet would run as a formula is made inert in both files.

The measurements files are written in blocks of rows to files on disk, so that their text is never held whole in
memory (a million rows at 100,000 result files).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.ipc
import pyarrow.parquet as pq

from site_builder.analyses.frames import UNSTABLE, plain, states
from site_builder.analyses.speedups import verdicts
from site_builder.site import Site

LEVEL = "machine or run: a machine's figure as the pages show it (its runs combined), or one run's."
MEASUREMENT_COLUMNS = {
    "level": LEVEL,
    "machine_id": "Hash of the machine's hardware (its page is machines/<id>.html).",
    "cpu_model": "The machine's CPU: its model (as the machine reports it, without trademark signs) and core count.",
    "gpu_model": "First accelerator's model, empty without one.",
    "gpu_vendor": "NVIDIA, AMD, Apple, Intel or other; empty without an accelerator.",
    "system_type": "laptop, desktop, server, cloud VM, ... (with the evidence on the machine page).",
    "run_id": "The run (one result file) the measurement comes from (level machine: the newest of its runs).",
    "benchsite_version": "The benchsite version that run was made with.",
    "started_at": "When that run started (UTC).",
    "profile": "tiny, quick or standard: sizes and time budget of the run.",
    "suite": "Suite version: loops and workload hashes change with it.",
    "workload": "Workload id (see the suite page).",
    "workload_hash": "Hash of suite version, workload, loop and configuration; only equal hashes are compared.",
    "point": "The workload point, e.g. depth=8 or model=bert-base, mode=train, batch_size=32.",
    "depth": "Depth-sweep depth, else empty.",
    "model": "Transformer model, else empty.",
    "mode": "train or infer for transformers, else empty.",
    "batch_size": "Transformer batch size, else empty.",
    "rate": "spark-streaming: the rows per second offered, else empty.",
    "bounded": "spark-streaming: whether that rate was sustained (latency did not grow), else empty.",
    "variant": "as-written (the seed's own loop) or tuned.",
    "framework": "torch, tensorflow or jax.",
    "device": "cpu, cuda, rocm or mps.",
    "device_name": "The device's model name.",
    "precision": "Numeric precision of the loop (fp32, bf16, ...).",
    "status": "ok, failed or skipped.",
    "median_s": "Median seconds per unit (epoch or step); for spark-streaming the median end-to-end latency.",
    "ci_lo_s": "Low end of the 95% interval of the median as the pages show it: one run's (order statistics) "
    "widened to where another run of the machine would land (its own spread and the spread between runs of one "
    "machine); for several runs of a machine, the span of their intervals.",
    "ci_hi_s": "High end of that interval.",
    "samples_per_s": "Training samples per second at the median.",
    "params": "Trainable parameters of the model.",
    "achieved_tflops": "FLOP/s at the median, in TFLOP/s (analytic FLOPs of matrix products and convolutions).",
    "stable": "Whether the measurement converged within its time budget.",
    "state": "What the pages say of it: ok; ok, unstable (stable is false: its interval did not reach the target "
    "width in its time budget); failed; skipped.",
    "unit": "What one sample times: epoch, step, or (spark-streaming) latency, one input file's end-to-end.",
    "peak_tflops": "The device's peak TFLOP/s at the measurement's precision: the run's own matrix-product "
    "peak, else the spec sheet.",
    "peak_source": "measured or spec sheet.",
    "joules_per_unit": "Energy of one unit on the measured device, joules (schema 11; methodology/energy.md): the "
    "run's own (level run), or the median over the machine's runs that read it (level machine); empty without one.",
    "joules_lo": "Low end of its 95% interval: over several runs, across them; of one run, where another run of the "
    "machine would land (Student's t on the log rounds, widened by the spread between runs of one machine where "
    "machines with several runs give it).",
    "joules_hi": "High end of that interval.",
    "energy_source": "The counter it came from: nvml-counter, nvml-power-samples, amdsmi-counter, powermetrics or "
    "rapl; empty without one.",
    "energy_why": "Where the device's counter was read but gave no figure, why (its rounds too short to attribute).",
    "runs": "How many runs of this machine the row combines (the median over their medians).",
    "runs_lo_s": "The fastest of those runs' medians.",
    "runs_hi_s": "The slowest of those runs' medians.",
    "samples_s": "What the figure and its interval are computed from, in seconds, separated by spaces (of every "
    "run combined): one value per independent measuring process (its median) for a file that measures in rounds "
    "(schema 9 and later), else every raw sample.",
}

SPEEDUP_COLUMNS = {
    "level": LEVEL,
    "run_id": "level run: the run (one result file) both measurements come from; empty for level machine.",
    "benchsite_version": "level run: the benchsite version of that run; empty for level machine.",
    "machine_id": "The machine.",
    "cpu_model": "Its CPU.",
    "gpu_model": "Its accelerator.",
    "gpu_vendor": "The accelerator's vendor.",
    "profile": "Profile of both measurements.",
    "suite": "Suite version.",
    "workload": "Workload id.",
    "workload_hash": "The hash both measurements share.",
    "point": "Workload point.",
    "variant": "as-written or tuned.",
    "framework": "Framework of both measurements.",
    "device": "The accelerator's device kind.",
    "median_s": "Accelerator's median seconds per unit.",
    "median_s_cpu": "The same machine's CPU median seconds per unit.",
    "speedup": "median_s_cpu / median_s: above 1 the accelerator is faster.",
    "speedup_lo": "Low end of the speedup's 95% interval (Student's t on the paired log ratios of the two sides' "
    "rounds, or for files before rounds a seeded bootstrap of both sides' raw samples; where both sides are one run, "
    "widened to where another run of the machine would land).",
    "speedup_hi": "High end of that interval.",
    "verdict": "accelerator faster or CPU faster where the interval clears 1x, else no clear winner; too few "
    "samples: no interval where either side has no interval of its own.",
    "state": "ok, or ok, unstable where either measurement is (stable false).",
    "energy_ratio": "level machine: the CPU's joules per unit over the accelerator's (its own counter plus the host "
    "CPU's over the same windows), each side's median over the newest run's rounds; above 1 the accelerator uses "
    "less energy. Empty where a side has no energy reading.",
    "energy_ratio_lo": "Low end of its 95% interval (Student's t on the log ratios of the rounds, paired where the run "
    "alternated them, widened by both sides' spread between runs of one machine).",
    "energy_ratio_hi": "High end of that interval.",
    "energy_verdict": "accelerator uses less energy or CPU uses less energy where the interval clears 1x.",
    "energy_note": "Why there is no energy ratio or no interval, where there is none.",
}


# Rows of the measurements files made at once.
BLOCK_ROWS = 50_000
_FORMULA = r"^[=+\-@\t\r]"  # what a spreadsheet runs as a formula (inert_cell)
_SORT = ["machine_id", "started_at", "workload", "point", "variant", "framework", "device"]


def inert_cell(value: object) -> object:
    """Spreadsheets run cells that start with = + - @ as formulas: prefix such text with a quote."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def inert(table: pd.DataFrame) -> pd.DataFrame:
    """inert_cell on every cell, column by column: only text columns can hold a formula."""
    out = {}
    for name in table.columns:
        column = table[name]
        if column.dtype == object or pd.api.types.is_string_dtype(column.dtype):
            column = _inert_column(column)
        out[name] = column
    return pd.DataFrame(out, index=table.index)


def _inert_column(column: pd.Series) -> pd.Series:
    """inert_cell on a text column: in a column of pandas' string type, the cells that start like a formula found in
    one match over the column (a call a cell cost seconds over the open data at 10,000 files), and only those
    prefixed, the type kept as mapping keeps it; any other column cell by cell, since mapping infers its type anew
    (objects become strings, Arrow's large strings plain ones) and the published files keep the types they had."""
    if not isinstance(column.dtype, pd.StringDtype):
        return column.map(inert_cell)
    formula = column.str.match(_FORMULA, na=False).to_numpy(dtype=bool)
    if not formula.any():
        return column
    column = column.copy()
    column[formula] = "'" + column[formula]
    return column


def _everything(site: Site) -> pd.DataFrame:
    return pd.concat([site.frame, site.apart], ignore_index=True) if not site.apart.empty else site.frame


def _measurement_rows(table: pd.DataFrame) -> pd.DataFrame:
    """Some rows of the frame as the measurements files publish them."""
    table = plain(table)
    table = table.assign(
        samples_s=[" ".join(map(repr, np.asarray(s, dtype=float).tolist())) for s in table["samples"]],
        started_at=table["started_at"].dt.strftime("%Y-%m-%dT%H:%M:%SZ"),
        batch_size=pd.to_numeric(table["batch_size"], errors="coerce"),
        stable=table["stable"].astype("boolean"),
        state=states(table),
    )
    return inert(table[list(MEASUREMENT_COLUMNS)]).reset_index(drop=True)


def _run_measurements(site: Site) -> pd.DataFrame:
    """Each run's measurements with a time as the measurements files publish a frame's rows: its own median, the
    interval the site gives one run (Site.run_measurements), one run."""
    runs = site.run_measurements.reset_index(drop=True)
    return runs.assign(
        ci_lo_s=runs["lo"], ci_hi_s=runs["hi"], runs=1, runs_lo_s=runs["median_s"], runs_hi_s=runs["median_s"]
    )


def measurement_blocks(site: Site) -> Iterator[pd.DataFrame]:
    """The measurements table: the machine rows, then the run rows, each in order (machine, start, workload, point,
    loop, framework, device), BLOCK_ROWS rows at a time: the order is found on those columns alone, then each block
    is made from its own rows."""
    everything = _everything(site)
    if everything.empty:
        yield pd.DataFrame(columns=list(MEASUREMENT_COLUMNS))
        return
    for level, table in (("machine", everything), ("run", _run_measurements(site))):
        if table.empty:
            continue
        order = plain(table[_SORT]).sort_values(_SORT).index.to_numpy()
        for start in range(0, len(order), BLOCK_ROWS):
            rows = table.iloc[order[start : start + BLOCK_ROWS]]
            yield _measurement_rows(rows.assign(level=level))


_SPEEDUP_SORT = ["workload", "point", "variant", "framework", "machine_id"]


def speedups_table(site: Site) -> pd.DataFrame:
    """The speedups as the pages show them (level machine)."""
    if site.speedups.empty:
        return pd.DataFrame(columns=list(SPEEDUP_COLUMNS))
    table = site.speedups.sort_values(_SPEEDUP_SORT).assign(level="machine", run_id="", benchsite_version="")
    return inert(table[list(SPEEDUP_COLUMNS)]).reset_index(drop=True)


def speedup_run_rows(site: Site) -> pd.DataFrame:
    """Each run's speedups with the interval the site gives one run's (Site.run_speedups; level run)."""
    runs = site.run_speedups
    if runs.empty:
        return pd.DataFrame(columns=list(SPEEDUP_COLUMNS))
    either = runs["stable"].astype(object).eq(False) | runs["stable_cpu"].astype(object).eq(False)
    table = runs.assign(
        level="run", speedup=runs["value"], speedup_lo=runs["lo"], speedup_hi=runs["hi"],
        state=np.where(either, UNSTABLE, "ok"),
    )  # fmt: skip
    table = table.assign(verdict=verdicts(table), energy_ratio=np.nan, energy_ratio_lo=np.nan, energy_ratio_hi=np.nan,
                         energy_verdict="", energy_note="")  # fmt: skip
    table = plain(table).sort_values([*_SPEEDUP_SORT, "started_at", "run_id"])
    return inert(table[list(SPEEDUP_COLUMNS)]).reset_index(drop=True)


def _common_schema(schemas: list[pa.Schema], filled: list[list[bool]]) -> pa.Schema:
    """One schema for the blocks: each column takes the type of the first block where it has a value (`filled`; a
    column wholly empty in a block reads as numbers there), with the first block's pandas metadata."""
    fields = []
    for i, field in enumerate(schemas[0]):
        typed = [schema.field(i).type for schema, has in zip(schemas, filled, strict=True) if has[i]]
        fields.append(pa.field(field.name, typed[0] if typed else field.type))
    return pa.schema(fields, metadata=schemas[0].metadata)


def _as(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """A block's table under the common schema."""
    return pa.Table.from_arrays(
        [
            column.cast(f.type) if column.null_count < len(column) else pa.nulls(len(column), f.type)
            for column, f in zip(table.columns, schema, strict=True)
        ],
        schema=schema,
    )


def write_data_files(site: Site, folder: Path) -> dict[str, Path]:
    """Write every open-data file under `folder`; returns site path -> file. The measurements go out block by
    block: the CSV appended to; each block's Arrow table (text as Arrow keeps it) to a file of its own beside, until
    every block's types are known, then the Parquet file from those, a block at a time under one schema (a column
    empty in one block takes the type the others give it). No more than one block is held at a time."""
    folder.mkdir(parents=True, exist_ok=True)
    csv, parquet, speedups = folder / "measurements.csv", folder / "measurements.parquet", folder / "speedups.csv"
    with tempfile.TemporaryDirectory(prefix=".blocks-", dir=folder) as spill:
        blocks: list[Path] = []
        schemas: list[pa.Schema] = []
        filled: list[list[bool]] = []
        with csv.open("w", encoding="utf-8", newline="") as out:
            for i, block in enumerate(measurement_blocks(site)):
                block.to_csv(out, index=False, header=i == 0)
                table = pa.Table.from_pandas(block, preserve_index=False)
                del block
                blocks.append(Path(spill) / f"{i}.arrow")
                with pa.OSFile(str(blocks[-1]), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
                    writer.write_table(table)
                schemas.append(table.schema)
                filled.append([column.null_count < len(column) for column in table.columns])
                del table
        schema = _common_schema(schemas, filled)
        with pq.ParquetWriter(parquet, schema) as writer:
            for path in blocks:
                with pa.memory_map(str(path)) as source:
                    writer.write_table(_as(pa.ipc.open_file(source).read_all(), schema))
    pd.concat([speedups_table(site), speedup_run_rows(site)], ignore_index=True).to_csv(speedups, index=False)
    return {"data/measurements.csv": csv, "data/measurements.parquet": parquet, "data/speedups.csv": speedups}
