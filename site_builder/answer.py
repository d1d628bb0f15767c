"""What one result file answers, as the site shows it once the file is published: its machine's CPU-or-accelerator
verdicts (each of the run's speedups with the interval the site gives one run's speedup: analyses.between.shown)
and where the machine stands against the published ones (runner.contribute.standing, with the site's spread between
runs of one machine). `benchsite run` prints it at its end and `benchsite compare` for any file."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from runner.contribute import standing
from runner.results import intervals
from runner.results.schema import ResultFile
from runner.results.storage import iter_result_paths
from runner.workloads.custom import WORKLOAD
from site_builder.analyses import between
from site_builder.analyses.speedups import along
from site_builder.load import Loaded

if TYPE_CHECKING:
    from site_builder.advisor import Estimate


@dataclass(frozen=True)
class Verdict:
    """One speedup of the run: CPU time over the accelerator's, of one workload point, loop and framework."""

    workload: str
    point: str
    variant: str
    framework: str
    accelerator: str
    speedup: float
    lo: float | None
    hi: float | None
    verdict: str
    stable: bool

    def sentence(self) -> str:
        where = f"{self.workload}{f' {self.point}' if self.point else ''}, {self.variant}, {self.framework}"
        shown = intervals.NO_INTERVAL if self.lo is None or self.hi is None else f"{self.lo:.2f} .. {self.hi:.2f}"
        unstable = "" if self.stable else " (unstable)"
        return f"{where}: {self.speedup:.2f}x ({shown}) on the {self.accelerator}: {self.verdict}{unstable}"


def _verdicts(shown: pd.DataFrame, run_id: str) -> list[Verdict]:
    """A run's speedups as between.shown gives them, in the file's order (the suite's workloads and points, loop by
    loop), each with its verdict."""
    verdicts: list[Verdict] = []
    if shown.empty:
        return verdicts
    for row in shown[shown["run_id"] == run_id].itertuples():
        lo, hi = _value(row.lo), _value(row.hi)
        verdicts.append(
            Verdict(
                str(row.workload),
                str(row.point),
                str(row.variant),
                str(row.framework),
                str(row.device_name),
                float(row.value),
                lo,
                hi,
                intervals.verdict(lo, hi) if lo is not None and hi is not None else intervals.NO_INTERVAL,
                row.stable is not False and row.stable_cpu is not False,
            )
        )
    return verdicts


def own_model(path: Path, result: ResultFile, spread: between.Between) -> tuple[pd.DataFrame, list[Verdict]]:
    """A file of a user's own model on the site: its measurements (the site's frame columns) and its speedups, each
    with the interval the site gives a figure of one run (the spread between runs the suite's files give)."""
    loaded = Loaded().take([path], own_models=True)
    runs = between.measurement_runs(loaded.collector.every_run())
    speedup_runs = between.speedup_runs(runs) if not runs.empty else pd.DataFrame()
    shown = between.shown(speedup_runs, between.SPEEDUP, spread) if not speedup_runs.empty else speedup_runs
    frame = between.widen_single_runs(loaded.collector.frame(), spread)
    return frame, _verdicts(shown, result.run.id)


NEAREST = 3  # suite workloads listed beside a user's own model


@dataclass(frozen=True)
class Near:
    """A suite workload point (a sweep's points that differ only in batch size are one) near a user's model: its
    parameters and FLOPs of one sample's step, the medians over the published measurements."""

    workload: str
    point: str
    params: float
    flops: float
    key: str  # the advisor's sweep it lies on (advisor.family_key), or ""

    @property
    def name(self) -> str:
        return f"{self.workload} {self.point}" if self.point else self.workload

    def figures(self) -> str:
        from site_builder.render import count

        return f"{count(self.params)} parameters, {self.flops / 1e9:.3g} GFLOP a sample"

    def label(self) -> str:
        return f"{self.name} ({self.figures()})"


def _is_mode(frame: pd.DataFrame, mode: str) -> pd.Series:
    """Rows of single-device training steps and epochs (mode train), or of inference steps (mode infer): the suite's
    workloads other than the transformers train; the Spark points and data-parallel runs answer other questions."""
    single = ~frame["workload"].astype(str).str.startswith("spark-") & frame["world_size"].isna()
    named = frame["mode"].astype(object)
    return single & (named.eq(mode) | (named.isna() & (mode == "train")))


def nearest(suite: pd.DataFrame, params: float, flops: float, mode: str, k: int = NEAREST) -> list[Near]:
    """The k suite points of this mode nearest to a model of `params` parameters and `flops` FLOPs a sample, by
    distance in log10 of both: each point's figures the medians of its published measurements that count FLOPs."""
    from site_builder.advisor import family_key

    if suite.empty or not params or not flops:
        return []
    rows = suite[(suite["status"] == "ok") & suite["params"].notna() & suite["achieved_tflops"].notna()]
    rows = rows[_is_mode(rows, mode) & (rows["workload"] != WORKLOAD) & (rows["samples_per_s"] > 0)]
    if rows.empty:
        return []
    point = rows["point"].astype(str).str.replace(r", batch_size=\d+", "", regex=True)
    per_sample = rows["achieved_tflops"].astype(float) * 1e12 / rows["samples_per_s"].astype(float)
    table = pd.DataFrame({"workload": rows["workload"].astype(str), "point": point, "params": rows["params"]})
    table = table.assign(flops=per_sample).groupby(["workload", "point"], sort=True)[["params", "flops"]].median()
    distance = (np.log10(table["params"]) - math.log10(params)) ** 2
    distance += (np.log10(table["flops"]) - math.log10(flops)) ** 2
    out = []
    for (workload, where), row in table.assign(d=distance).sort_values("d").head(k).iterrows():
        out.append(Near(workload, where, float(row["params"]), float(row["flops"]), family_key(workload, where)))
    return out


@dataclass(frozen=True)
class Beside:
    """A user's own model's measured speedup at one mode, batch size and loop, beside the advisor's estimate from
    the nearest suite sweep the advisor reads (at the same batch size, or along the depth sweep at the model's
    parameter count), for the same accelerator model and framework: how far the advisor can be trusted for it."""

    measured: Verdict
    mode: str
    batch_size: int
    estimate: Estimate

    def sentence(self) -> str:
        m, e = self.measured, self.estimate
        measured = f"{m.speedup:.2f}x ({_between(m.lo, m.hi)}), {m.verdict}"
        head = f"{self.mode}, batch {self.batch_size}, {m.variant}, {m.framework} on the {m.accelerator}"
        head = f"{head}: measured {measured}"
        if not e.shown:
            return f"{head}; the advisor ({e.family}): no estimate, {e.why}"
        lo, hi = _value(e.lo), _value(e.hi)
        where = "at the measured point" if not e.how else e.how
        machines = f"{e.machines} machine" + ("" if e.machines == 1 else "s")
        off = m.speedup / e.s
        inside = ""
        if lo is not None and hi is not None:
            inside = ", inside its interval" if lo <= m.speedup <= hi else ", outside its interval"
        return (
            f"{head}; the advisor ({e.family}, {where}, {machines}): {e.s:.2f}x ({_between(lo, hi)}), {e.verdict}; "
            f"measured / advisor {off:.2f}x{inside}"
        )


def _between(lo: float | None, hi: float | None) -> str:
    return intervals.NO_INTERVAL if lo is None or hi is None else f"{lo:.2f} .. {hi:.2f}"


def beside_suite(
    own: pd.DataFrame, verdicts: list[Verdict], suite: pd.DataFrame, suite_speedups: pd.DataFrame
) -> tuple[dict[str, tuple[Near, list[Near]]], list[Beside]]:
    """For a user's own model (own_model's frame and verdicts) against the published suite (the site's frame and
    speedups): per mode, the model's own parameters and FLOPs a sample and the suite points nearest to it; and per
    measured speedup the advisor's estimate from the nearest of them on a sweep the advisor reads
    (advisor.estimate_at: the same figure its page shows)."""
    from site_builder.advisor import Estimate, advisor_summary, estimate_at

    rows = own[(own["workload"] == WORKLOAD) & (own["status"] == "ok")] if not own.empty else own
    near: dict[str, tuple[Near, list[Near]]] = {}
    if rows.empty:
        return near, []
    if not suite.empty:
        suite = suite[suite["workload"] != WORKLOAD]
    if not suite_speedups.empty:
        suite_speedups = suite_speedups[suite_speedups["workload"] != WORKLOAD]
    for mode, group in rows.groupby("mode", observed=True, sort=True):
        per_sample = group["achieved_tflops"].astype(float) * 1e12 / group["samples_per_s"].astype(float)
        flops = float(per_sample.median()) if per_sample.notna().any() else 0.0
        params = float(group["params"].iloc[0])
        found = nearest(suite, params, flops, str(mode))
        if found:
            near[str(mode)] = (Near(WORKLOAD, "your model", params, flops, ""), found)
    summary = advisor_summary(suite_speedups)
    models = dict(zip(rows["device_name"].astype(str), rows["gpu_model"].astype(str), strict=False))
    out = []
    for v in verdicts:
        parts = dict(part.split("=", 1) for part in v.point.split(", ") if "=" in part)
        mode, size = parts.get("mode", ""), int(parts.get("batch_size", "0") or 0)
        on_sweep = [n for n in near.get(mode, (None, []))[1] if n.key]
        if not on_sweep or not size:
            why = "no published suite result to read" if suite.empty else "no suite sweep the advisor reads is near it"
            estimate = Estimate("", float(size), why=why)
        else:
            key = on_sweep[0].key
            x = float(rows["params"].iloc[0]) if key == "depth-sweep" else float(size)
            gpu = models.get(v.accelerator, v.accelerator)
            estimate = estimate_at(summary, key, gpu, v.framework, v.variant, x)
        out.append(Beside(v, mode, size, estimate))
    return near, out


Peaks = dict[tuple[str, str, str], tuple[float | None, float | None]]  # (hash, framework, device): host, device MiB


def memory_of(result: ResultFile) -> Peaks:
    """Each measurement's peak host and device memory (MiB), by workload hash, framework and device."""
    return {(m.workload_hash, m.framework, m.device): (m.peak_host_mib, m.peak_device_mib) for m in result.measurements}


def own_figures(frame: pd.DataFrame, memory: Peaks) -> list[str]:
    """A user's own model's measurements (own_model's frame), one sentence each: mode, batch size, loop and device,
    the time per step with the interval the site gives it, samples/s, the achieved TFLOP/s and its share of the
    device's peak (measured in the run where it was), and the peak host and device memory (memory_of)."""
    from site_builder.render import mib, rate, seconds

    lines = []
    ok = frame[(frame["workload"] == WORKLOAD) & (frame["status"] == "ok") & frame["median_s"].notna()]
    for row in ok.sort_values(["mode", "batch_size", "variant", "device"]).itertuples():
        lo, hi = _value(row.ci_lo_s), _value(row.ci_hi_s)
        shown = intervals.NO_INTERVAL if lo is None or hi is None else f"{seconds(lo)} .. {seconds(hi)}"
        tflops, peak = _value(row.achieved_tflops), _value(row.peak_tflops)
        flops = f", {tflops:.3g} TFLOP/s" if tflops is not None else ""
        if tflops is not None and peak:
            flops += f" ({tflops / peak:.1%} of its {row.peak_source} peak)"
        host, device = memory.get((str(row.workload_hash), str(row.framework), str(row.device)), (None, None))
        peaks = f"; peak memory {mib(host)} host" + (f", {mib(device)} device" if row.device != "cpu" else "")
        unstable = "" if row.stable is not False else " (unstable)"
        lines.append(
            f"{row.mode}, batch {int(row.batch_size)}, {row.variant}, {row.framework} on {row.device_name}: "
            f"{seconds(float(row.median_s))} per step ({shown}), {rate(float(row.samples_per_s))} samples/s{flops}"
            f"{peaks}{unstable}"
        )
    return lines


def along_batch_sizes(verdicts: list[Verdict]) -> list[str]:
    """For each workload point swept over batch sizes (a transformer's, a user's own model's), loop, framework and
    accelerator with two batch sizes or more: where each side clearly wins along the sizes (speedups.along)."""
    lines: dict[tuple[str, ...], list[tuple[int, str]]] = {}
    for v in verdicts:
        parts = dict(part.split("=", 1) for part in v.point.split(", ") if "=" in part)
        size = parts.pop("batch_size", None)
        if size is None or not size.isdigit():
            continue
        rest = ", ".join(f"{k}={value}" for k, value in parts.items())
        lines.setdefault((v.workload, rest, v.variant, v.framework, v.accelerator), []).append((int(size), v.verdict))
    out = []
    for (workload, rest, variant, framework, accelerator), points in lines.items():
        if len(points) < 2:
            continue
        points.sort()
        said = along([s for s, _ in points], [v for _, v in points], "batch size", "batch sizes")
        out.append(f"{workload} {rest}, {variant}, {framework} on the {accelerator}: {said}")
    return out


@dataclass
class Answer:
    verdicts: list[Verdict] = field(default_factory=list)
    standings: list[standing.Standing] = field(default_factory=list)
    note: str = ""  # what a figure of one run's interval includes (analyses.between.note): the verdicts'
    refused: list[str] = field(default_factory=list)  # why this file itself could not be read as the site reads it
    between_runs: bool = False  # whether the standings' intervals include the machines' spread between runs
    spread: between.Between = field(default_factory=between.Between)  # the spread between runs it was read with
    # a run of a user's own model: the published suite as the site compares it (its frame and speedups), which the
    # nearest suite workloads and the advisor's estimates are read from (beside_suite)
    suite: pd.DataFrame = field(default_factory=pd.DataFrame)
    suite_speedups: pd.DataFrame = field(default_factory=pd.DataFrame)


def _value(x: object) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)  # type: ignore[arg-type]


def read_published(published: Path, path: Path | None) -> Loaded:
    """The files under `published` as the site reads them (site_builder.load.load_results, replays refused), through
    the build cache of the site whose `results/` folder it is (site_builder.cache: a run after the first, and the
    site build after a run, read only the files new to them; BENCHSITE_CACHE=off reads every file), and the file at
    `path` where that did not take it among the suite's: written elsewhere, or a run of the user's own model, which
    gets its answer too (the site reads such a file apart)."""
    from site_builder.cache import CACHE_ENV, BuildCache, folder_for
    from site_builder.load import load_results

    if published.is_dir():
        folder = published.resolve()  # the cache knows a file by its path: the site build gives it absolute
        cache = None if os.environ.get(CACHE_ENV) == "off" else BuildCache(folder_for(folder.parent))
        try:
            loaded = load_results(folder, workers=1, cache=cache)  # in this process: its caller may be no script
        except OSError:  # the cache cannot be written there (a read-only folder): every file read, nothing kept
            loaded = load_results(folder, workers=1)
    else:
        loaded = Loaded().take(iter_result_paths([published]) if published.exists() else [], own_models=True)
    if path is not None:
        mine = path.resolve()
        own = {p.resolve(): r for p, r in loaded.own}
        refused = {Path(p.path).resolve() for p in loaded.problems if p.severity == "error"}
        if mine in own:  # checked already, read apart from the suite's
            loaded.collector.add(path, own[mine])
            loaded.accepted.append(path)
        elif mine not in {p.resolve() for p in loaded.accepted} | refused:
            loaded.take([path], own_models=True)
    return loaded


def answer(result: ResultFile, path: Path | None, published: Path) -> Answer:
    """The answer of `result` (written at `path`, or None where it was not) against every valid file under
    `published`: the files are read and checked as the site reads them (a refused file is left out), so the
    verdicts and the standing carry the site's intervals."""
    loaded = read_published(published, path)
    mine = path.resolve() if path is not None else None
    refused = [str(p) for p in loaded.problems if p.severity == "error" and Path(p.path).resolve() == mine]
    frame = loaded.collector.frame()
    site = None
    if any(m.workload == WORKLOAD for m in result.measurements) and not frame.empty:
        from site_builder.site import Site

        site = Site.from_collector(loaded.collector, [])  # the suite as the site's pages compare it, for beside_suite
        spread, shown = site.spread, site.run_speedups
    else:
        every = loaded.collector.every_run()
        runs = between.measurement_runs(every) if not every.empty else pd.DataFrame()
        speedup_runs = between.speedup_runs(runs) if not runs.empty else pd.DataFrame()
        spread = between.estimate_all(runs, speedup_runs) if not runs.empty else between.Between()
        shown = between.shown(speedup_runs, between.SPEEDUP, spread) if not speedup_runs.empty else speedup_runs
    verdicts = _verdicts(shown, result.run.id)
    others = standing.Published.from_table(standing.TableRows(frame)) if not frame.empty else standing.Published([])
    places = standing.standing_of(result.machine.id, standing.rows_of(result), others, tau2=spread.tau2_of_time)
    said = Answer(verdicts, places, between.note(spread), refused, between_runs=spread.machines > 0, spread=spread)
    if site is not None:
        said.suite, said.suite_speedups = site.frame, site.speedups
    return said
