"""What one result file answers, as the site shows it once the file is published: its machine's CPU-or-accelerator
verdicts (each of the run's speedups with the interval the site gives one run's speedup: analyses.between.shown)
and where the machine stands against the published ones (runner.contribute.standing, with the site's spread between
runs of one machine). `benchsite run` prints it at its end and `benchsite compare` for any file."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from runner.contribute import standing
from runner.results import intervals
from runner.results.schema import ResultFile
from runner.results.storage import iter_result_paths
from site_builder.analyses import between
from site_builder.analyses.speedups import along
from site_builder.load import Loaded


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


def _rate(value: float) -> str:
    """A rate with three significant figures, thousands separated: 2.23, 75,506."""
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def own_figures(frame: pd.DataFrame) -> list[str]:
    """A user's own model's measurements (own_model's frame), one sentence each: mode, batch size, loop and device,
    the time per step with the interval the site gives it, samples/s and the achieved TFLOP/s."""
    from site_builder.render import seconds

    lines = []
    ok = frame[(frame["workload"] == "custom") & (frame["status"] == "ok") & frame["median_s"].notna()]
    for row in ok.sort_values(["mode", "batch_size", "variant", "device"]).itertuples():
        lo, hi = _value(row.ci_lo_s), _value(row.ci_hi_s)
        shown = intervals.NO_INTERVAL if lo is None or hi is None else f"{seconds(lo)} .. {seconds(hi)}"
        rate = _value(row.achieved_tflops)
        flops = f", {rate:.3g} TFLOP/s" if rate is not None else ""
        unstable = "" if row.stable is not False else " (unstable)"
        lines.append(
            f"{row.mode}, batch {int(row.batch_size)}, {row.variant}, {row.framework} on {row.device_name}: "
            f"{seconds(float(row.median_s))} per step ({shown}), {_rate(float(row.samples_per_s))} samples/s{flops}"
            f"{unstable}"
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


def _value(x: object) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)  # type: ignore[arg-type]


def answer(result: ResultFile, path: Path | None, published: Path) -> Answer:
    """The answer of `result` (written at `path`, or None where it was not) against every valid file under
    `published`: the files are read and checked as the site reads them (a refused file is left out), so the
    verdicts and the standing carry the site's intervals."""
    paths = iter_result_paths([published]) if published.exists() else []
    if path is not None and path.resolve() not in {p.resolve() for p in paths}:
        paths.append(path)
    loaded = Loaded().take(paths, own_models=True)  # a run of the user's own model gets its answer too
    mine = path.resolve() if path is not None else None
    refused = [str(p) for p in loaded.problems if p.severity == "error" and Path(p.path).resolve() == mine]
    every = loaded.collector.every_run()
    runs = between.measurement_runs(every) if not every.empty else pd.DataFrame()
    speedup_runs = between.speedup_runs(runs) if not runs.empty else pd.DataFrame()
    spread = between.estimate_all(runs, speedup_runs) if not runs.empty else between.Between()
    shown = between.shown(speedup_runs, between.SPEEDUP, spread) if not speedup_runs.empty else speedup_runs
    verdicts = _verdicts(shown, result.run.id)
    frame = loaded.collector.frame()
    others = standing.Published.from_table(standing.TableRows(frame)) if not frame.empty else standing.Published([])
    places = standing.standing_of(result.machine.id, standing.rows_of(result), others, tau2=spread.tau2_of_time)
    return Answer(verdicts, places, between.note(spread), refused, between_runs=spread.machines > 0, spread=spread)
