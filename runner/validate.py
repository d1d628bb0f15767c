"""`benchsite validate`: the gate a contributed result file must pass before it is published.

On top of the format (runner.storage: size limit, no YAML anchors or aliases, safe loader, the strict schema,
the results/<machine-id>/ path rule) it checks what a schema cannot:

- consistency: each median lies within its own raw samples, and achieved FLOP/s equals FLOPs / median;
- synchronisation: a timing on an accelerator needs a passed sync self-test for that framework and device;
- physics: achieved FLOP/s above the device's peak (runner.peaks) is impossible;
- uniqueness: a run id appears in one file only;
- time and version: no run from the future (beyond a day of skew) or before the first release, none that ends
  before it starts, no benchsite_version newer than this gate;
- unknown GPUs (warnings): an accelerator model the peak table does not know cannot be checked by physics;
- cohorts (warnings): a measurement 10x away from the median of the same workload, loop, framework and
  device model on at least three other machines.

Every problem is collected, with its file and field, before anything is reported; `strict` makes warnings
errors. Memory stays bounded: per file only the figures the cross-file checks need are kept.
"""

from __future__ import annotations

import re
import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from runner import __version__, storage
from runner.peaks import cpu_peak_tflops, gpu_peak_tflops
from runner.schema import VERSION_PATTERN, ResultFile
from runner.storage import Problem

# Characters refused in names and other short fields (machine, software, device names, sweep points, the
# command): a CPU model or version string never needs them, and markup does. Messages, tracebacks and
# profiler operator names (C++ templates) keep them; the site escapes every string either way.
UNSAFE_CHARS = frozenset("<>`")
FREE_TEXT_EXEMPT = {"error", "traceback", "reason", "detail", "top_ops", "warnings", "notes", "skip_reason", "message"}
COHORT_MIN_MACHINES = 3
COHORT_FACTOR = 10.0
FLOPS_RTOL = 0.01
# No result can be older than benchsite's first release, or from further ahead than a badly set clock allows.
FIRST_RELEASE = datetime(2026, 11, 22, tzinfo=timezone.utc)
CLOCK_SKEW = timedelta(days=1)


@dataclass
class Report:
    files: int = 0
    problems: list[Problem] = field(default_factory=list)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def bad_files(self) -> int:
        return len({p.path for p in self.errors})


def _unsafe_text(value: object, where: str) -> Iterable[tuple[str, str]]:
    if isinstance(value, str):
        bad = sorted(UNSAFE_CHARS.intersection(value))
        if bad:
            yield where, "".join(bad)
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in FREE_TEXT_EXEMPT:
                yield from _unsafe_text(item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _unsafe_text(item, f"{where}[{i}]")


def check_result(path: str, result: ResultFile, text_rules: bool = True) -> list[Problem]:
    """Every per-file rule beyond the schema. The site builder applies them too, except the character
    rule (text_rules), so that its escaping stays tested against hostile strings."""
    problems: list[Problem] = []
    if text_rules:
        for where, chars in _unsafe_text(result.model_dump(mode="json", exclude={"measurements"}), ""):
            problems.append(Problem(path, where, f"contains {chars!r}: not allowed in names and versions"))
        for i, m in enumerate(result.measurements):
            short = {"device_name": m.device_name, "point": m.point, "workload": m.workload}
            for where, chars in _unsafe_text(short, f"measurements[{i}]"):
                problems.append(Problem(path, where, f"contains {chars!r}: not allowed in names and versions"))
    for i, accelerator in enumerate(result.machine.accelerators):
        if not any(gpu_peak_tflops(accelerator.model, p) for p in ("fp32", "tf32", "bf16", "fp16")):
            problems.append(
                Problem(
                    path,
                    f"machine.accelerators[{i}].model",
                    f"{accelerator.model!r} is not in the peak table (runner/peaks.py): its timings cannot be "
                    "checked against what the device can do; a maintainer adds its spec-sheet peaks",
                    "warning",
                )
            )
    problems += _time_and_version(path, result)
    synced = {(t.framework, t.device) for t in result.sync_selftests if t.passed}
    unsynced: dict[tuple[str, str], int] = defaultdict(int)
    for i, m in enumerate(result.measurements):
        where = f"measurements[{i}]"
        if m.status != "ok":
            continue
        if m.median_s is None or not m.samples_s:
            problems.append(Problem(path, f"{where}.median_s", "status is ok but there is no time"))
            continue
        if not min(m.samples_s) <= m.median_s <= max(m.samples_s):
            problems.append(
                Problem(
                    path,
                    f"{where}.median_s",
                    f"{m.median_s:.6g} s lies outside its own samples "
                    f"({min(m.samples_s):.6g} .. {max(m.samples_s):.6g})",
                )
            )
        if m.device != "cpu" and (m.framework, m.device) not in synced:
            unsynced[(m.framework, m.device)] += 1
        if not m.flops_per_unit:
            continue
        achieved = m.flops_per_unit / m.median_s / 1e12
        if m.achieved_tflops is not None and abs(m.achieved_tflops - achieved) > FLOPS_RTOL * achieved:
            problems.append(
                Problem(
                    path,
                    f"{where}.achieved_tflops",
                    f"{m.achieved_tflops:.4g} does not equal flops_per_unit / median_s = {achieved:.4g}",
                )
            )
        if m.device == "cpu":
            peak: float | None = cpu_peak_tflops(result.machine.cpu, m.precision)
            what = f"the CPU's ceiling ({result.machine.cpu.logical_cpus} CPUs x clock x vector width)"
        else:
            peak = gpu_peak_tflops(m.device_name, m.precision)
            what = f"the {m.device_name} peak"
        if peak is not None and achieved > peak:
            problems.append(
                Problem(
                    path,
                    f"{where}.median_s",
                    f"{achieved:.4g} TFLOP/s ({m.precision}) is above {what} of {peak:.4g} TFLOP/s: physically "
                    "impossible (unsynchronised timing, wrong FLOP count, or an edited file)",
                )
            )
    for (framework, device), count in sorted(unsynced.items()):
        problems.append(
            Problem(
                path,
                "sync_selftests",
                f"{count} {framework} timing(s) on {device} but no passed sync self-test for {framework}/{device}: "
                "accelerator timings that may not wait for the device are not accepted",
            )
        )
    return problems


def _release(version: str) -> tuple[int, ...]:
    """(major, minor, patch) of a version the schema's VERSION_PATTERN has already accepted."""
    match = re.match(VERSION_PATTERN, version)
    assert match is not None, version
    return tuple(int(part) for part in match.groups())


def _time_and_version(path: str, result: ResultFile) -> list[Problem]:
    """When the run happened and which benchsite wrote it: nothing from the future (beyond a day of clock skew),
    nothing before the first release, and no benchsite newer than this gate."""
    problems = []
    run = result.run
    now = datetime.now(timezone.utc)
    started, finished = (t if t.tzinfo else t.replace(tzinfo=timezone.utc) for t in (run.started_at, run.finished_at))
    for name, when in (("started_at", started), ("finished_at", finished)):
        if when > now + CLOCK_SKEW:
            problems.append(Problem(path, f"run.{name}", f"{when.isoformat()} is in the future"))
        elif when < FIRST_RELEASE:
            problems.append(
                Problem(
                    path,
                    f"run.{name}",
                    f"{when.isoformat()} is before benchsite's first release ({FIRST_RELEASE:%Y-%m-%d})",
                )
            )
    if finished < started:
        problems.append(Problem(path, "run.finished_at", "the run finished before it started"))
    if _release(result.benchsite_version) > _release(__version__):
        problems.append(
            Problem(
                path,
                "benchsite_version",
                f"{result.benchsite_version} is newer than this gate ({__version__}): no such release exists yet",
            )
        )
    return problems


def validate(paths: Iterable[Path], strict: bool = False) -> Report:
    report = Report()
    runs: dict[str, str] = {}
    # (workload_hash, variant, framework, device, device_name) -> [(machine, path, index, median)]
    cohorts: dict[tuple[str, ...], list[tuple[str, str, int, float]]] = defaultdict(list)
    for path, result, problems in storage.iter_all(list(paths)):
        report.files += 1
        report.problems.extend(problems)
        if result is None:
            continue
        name = str(path)
        report.problems.extend(check_result(name, result))
        first = runs.setdefault(result.run.id, name)
        if first != name:
            report.problems.append(Problem(name, "run.id", f"run id {result.run.id} is also the run id of {first}"))
        for i, m in enumerate(result.measurements):
            if m.status == "ok" and m.median_s:
                key = (m.workload_hash, m.variant, m.framework, m.device, m.device_name)
                cohorts[key].append((result.machine.id, name, i, m.median_s))
    report.problems.extend(_cohort_outliers(cohorts))
    if strict:
        report.problems = [
            Problem(p.path, p.field, p.message, "error") if p.severity == "warning" else p for p in report.problems
        ]
    return report


def _cohort_outliers(cohorts: dict[tuple[str, ...], list[tuple[str, str, int, float]]]) -> list[Problem]:
    problems = []
    for key, rows in cohorts.items():
        by_machine: dict[str, float] = {}
        for machine, _, _, median in rows:
            by_machine[machine] = min(median, by_machine.get(machine, median))
        if len(by_machine) < COHORT_MIN_MACHINES + 1:
            continue
        for machine, path, index, median in rows:
            others = [v for m, v in by_machine.items() if m != machine]
            typical = statistics.median(others)
            factor = max(median / typical, typical / median)
            if factor >= COHORT_FACTOR:
                problems.append(
                    Problem(
                        path,
                        f"measurements[{index}].median_s",
                        f"{median:.4g} s is {factor:.0f}x away from the median {typical:.4g} s of {len(others)} "
                        f"other machines with a {key[4]} ({key[2]}, {key[1]}, {key[3]})",
                        "warning",
                    )
                )
    return problems
