"""The measurement frame's columns: one row per measurement, as site_builder.collect stores and converts it.

COLUMNS is every column in order (the Arrow tables', the build cache's and the frame's); KEY names a measurement
of one machine; NUMERIC and CATEGORIES say how a column is converted to pandas.
"""

from __future__ import annotations

COLUMNS = [
    "machine_id",
    "cpu_model",
    "gpu_model",
    "gpu_vendor",
    "system_type",
    "run_id",
    "benchsite_version",
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
    # energy (schema 11): the device's own source's joules per unit and its interval, and the source's name
    "joules_per_unit",
    "joules_lo",
    "joules_hi",
    "joules_se2",  # the squared standard error of its log over its rounds (the between-run estimate weighs it)
    "energy_source",
    "energy_why",  # where the device's own source has no figure: why (too short to attribute)
    # the CPU-or-accelerator comparison in energy: what the measured side used a unit, round by round (its device's
    # source plus the host CPU's, runner.results.energy.side_rounds; paired as `samples` are), and what was summed
    "energy_rounds",
    "energy_scope",
    "pairing",  # what pairs a measurement's rounds with another's (collect: a run, framework and loop), or ""
    "samples",  # what the figure is computed from: one value per round (schema 9), else the raw samples
]
# What names one measurement of one machine: a machine's runs of it (one profile) are combined into one row
# (site_builder.combine), and a row's speedup is looked up by it.
KEY = ["machine_id", "workload_hash", "framework", "device"]
# Converted to numbers in the frame (pd.to_numeric: a value that is no number becomes NaN).
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
    "joules_per_unit",
    "joules_lo",
    "joules_hi",
    "joules_se2",
]
# Repeated text columns are stored once per distinct value (pandas categoricals); workload_hash and the
# numbers, dates and flags stay as they are.
CATEGORIES = [
    c
    for c in COLUMNS
    if c not in {*NUMERIC, "workload_hash", "started_at", "batch_size", "stable", "bounded", "samples", "energy_rounds"}
]
