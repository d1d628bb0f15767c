"""`benchsite validate`: the gate a contributed result file must pass before it is published.

On top of the format (runner.results.storage: size limit, no YAML anchors or aliases, safe loader, the strict schema,
the results/<machine-id>/ path rule) it checks what a schema cannot:

- recomputed, not trusted: each measurement's workload hash must be one of its suite version's
  (runner.workloads.known), and its workload, variant, point, unit, examples per unit, parameters and FLOPs must
  be that hash's; median, IQR, confidence interval, samples/s and achieved FLOP/s are recomputed from the raw
  samples; a device peak's TFLOP/s from its size and time; an equivalence check that says 'passed' must hold
  figures that pass the check's own tolerances; machine.id must be the hash of the file's hardware;
- plausible times: a warm-up and samples that fit in the measurement's wall time, which fits in the run;
- synchronisation: a timing on an accelerator needs a passed sync self-test for that framework and device;
- physics: achieved FLOP/s above the device's peak (runner.fingerprint.peaks) is impossible;
- uniqueness: a run id appears in one file only, and a measurement's raw samples in one measurement only: the
  same samples again, or the same samples scaled by a constant (a replay made to look faster or slower), are
  refused;
- history (warnings): a measurement more than 25% faster than the median of the same machine's earlier runs
  of the same workload hash, framework and device;
- time and version: no run from the future (beyond a day of skew) or before the first release, none that ends
  before it starts, no benchsite_version newer than this gate;
- unknown GPUs (warnings): an accelerator model the peak table does not know cannot be checked by physics;
- cohorts (warnings): a measurement 10x away from the median of the same workload, loop, framework and
  device model on at least three other machines.

Every problem is collected, with its file and field, before anything is reported; `strict` makes warnings
errors. Memory stays bounded: per file only the figures the cross-file checks need are kept.
"""

from __future__ import annotations

import bisect
import hashlib
import math
import re
import statistics
import struct
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from runner import __version__, fidelity
from runner.fingerprint import machine_id
from runner.fingerprint.peaks import cpu_peak_tflops, gpu_peak_tflops
from runner.results import storage, streaming
from runner.results.energy import figures as energy_figures
from runner.results.intervals import ROUNDS_SCHEMA, split_rounds, summarize, summarize_rounds
from runner.results.schema import VERSION_PATTERN, Machine, Measurement, ResultFile
from runner.results.storage import Problem
from runner.workloads import custom, known

# Characters refused in names and other short fields (machine, software, device names, sweep points, the
# command): a CPU model or version string never needs them, and markup does. Messages, tracebacks and
# profiler operator names (C++ templates) keep them; the site escapes every string either way.
UNSAFE_CHARS = frozenset("<>`")
FREE_TEXT_EXEMPT = {"error", "traceback", "reason", "detail", "top_ops", "warnings", "notes", "skip_reason", "message"}
COHORT_MIN_MACHINES = 3
COHORT_FACTOR = 10.0
# Figures recomputed from others must agree to float rounding: the runner computes them from the same numbers
# and YAML keeps every float's shortest exact form.
DERIVED_RTOL = 1e-9
# Harness time outside the measured units (building the model, the process's start) is never negative; this
# slack covers clock granularity and the rounding of the run's timestamps.
WALL_SLACK_S = 1.0
# Replays: samples are compared (exactly, and each over its median) from this many on: one or two samples, on a
# device timer that counts in half microseconds, could repeat by chance.
REPLAY_MIN_SAMPLES = 3
# A run this much faster (by time) than the median of the machine's earlier runs of the same measurement.
FASTER_FACTOR = 1.25
# The equivalence tolerances a 'passed' check may state, at most: the loosest any release used (the fp32 check
# that the committed results ran; runner.measure.equivalence's fp64 check states 1e-10 and 1e-9).
LOSS_RTOL_MAX = 1e-5
GRAD_RTOL_MAX = 1e-4
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
                    f"{accelerator.model!r} is not in the peak table (runner/fingerprint/peaks.py): its timings "
                    "cannot be checked against what the device can do; a maintainer adds its spec-sheet peaks",
                    "warning",
                )
            )
    problems += _time_and_version(path, result)
    problems += _registry(path, result)
    problems += _peaks_and_equivalence(path, result)
    recomputed = machine_id(result.machine.cpu, result.machine.accelerators)
    if recomputed != result.machine.id:
        problems.append(
            Problem(
                path,
                "machine.id",
                f"{result.machine.id} is not the hash of this file's hardware ({recomputed}): the id belongs to "
                "other hardware",
            )
        )
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
        problems += _recomputed(path, where, m, result.schema_version)
        if m.fidelity is not None:
            problems += _fidelity_problems(path, where, m, result.suite.profile)
        problems += _above_peak(path, where, m, result.machine)
        problems += _energy_problems(path, where, m, result)
    problems += _alternation_problems(path, result)
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


RAPL_WATTS_PER_SOCKET = 1000.0  # above any package's and its DRAM's power: a RAPL figure beyond it is no reading
POWER_SLACK = 1.1  # an average over a window may exceed the enforced limit by transients, not by more


def _energy_problems(path: str, where: str, m: Measurement, result: ResultFile) -> list[Problem]:
    """A measurement's energy (schema 11): a source this machine and device could have, no more rounds than the
    measurement has, figures recomputed from its rounds (runner.results.energy), and no power above what the device
    can draw (an NVIDIA board's enforced limit, recorded from NVML; RAPL: RAPL_WATTS_PER_SOCKET a socket)."""
    problems = []
    machine = result.machine
    nvidia = [a for a in machine.accelerators if a.vendor == "nvidia"]
    for j, e in enumerate(m.energy):
        at = f"{where}.energy[{j}]"
        wrong = None
        if e.source.startswith("nvml") and not nvidia:
            wrong = "this machine has no NVIDIA accelerator"
        elif e.source.startswith("nvml") and (e.of != "device" or m.device != "cuda"):
            wrong = "NVML reads an NVIDIA device, the measured one"
        elif e.source == "rapl" and machine.cpu.arch not in ("x86_64", "amd64", "AMD64"):
            wrong = f"RAPL is an x86 CPU's, this CPU is {machine.cpu.arch}"
        elif e.source == "rapl" and (e.of == "device") != (m.device == "cpu"):
            wrong = "RAPL is the CPU's: the measured device on the CPU, the host beside an accelerator"
        elif e.source == "amdsmi-counter" and not any(a.vendor == "amd" for a in machine.accelerators):
            wrong = "this machine has no AMD accelerator"
        elif e.source == "amdsmi-counter" and (e.of != "device" or m.device != "rocm"):
            wrong = "amdsmi reads an AMD device, the measured one"
        elif e.source == "powermetrics" and machine.os.system != "Darwin":
            wrong = f"powermetrics is macOS's, this machine runs {machine.os.system}"
        elif e.source == "powermetrics" and m.device not in ("cpu", "mps"):
            wrong = "powermetrics reads Apple silicon's CPU and GPU"
        if wrong:
            problems.append(Problem(path, f"{at}.source", f"{e.source} ({e.of}): {wrong}"))
            continue
        if len(e.rounds) > max(1, len(m.rounds)):
            problems.append(
                Problem(path, f"{at}.rounds", f"{len(e.rounds)} rounds, the measurement has {len(m.rounds)}")
            )
            continue
        expected = energy_figures([r.model_dump() for r in e.rounds], e.counter_period_s, e.idle_power_w,
                                  m.samples_per_unit)  # fmt: skip
        for name, value in expected.items():
            stated = getattr(e, name)
            if not _same_figure(stated, value):
                problems.append(
                    Problem(path, f"{at}.{name}", f"{stated!r}, but its rounds give {value!r} (runner.results.energy)")
                )
        if e.source.startswith("nvml"):
            limit = max((a.power_limit_w or 0.0 for a in nvidia), default=0.0)
            device = "its enforced power limit"
        elif e.source in ("amdsmi-counter", "powermetrics"):
            limit, device = 0.0, ""  # no limit recorded: the figures are recomputed, the power is not bounded
        else:
            limit = RAPL_WATTS_PER_SOCKET * max(1, machine.cpu.sockets or 1)
            device = f"{RAPL_WATTS_PER_SOCKET:g} W a socket"
        for k, r in enumerate(e.rounds):
            watts = r.joules / r.window_s
            if limit and watts > limit * POWER_SLACK:
                problems.append(
                    Problem(path, f"{at}.rounds[{k}]", f"{watts:.6g} W on average, above {device} ({limit:g} W)")
                )
    return problems


def _same_figure(stated: object, value: object) -> bool:
    if stated is None or value is None:
        return stated is None and value is None
    if isinstance(value, str) or isinstance(stated, str):  # a note: why there is no figure
        return stated == value
    if isinstance(value, tuple):
        return isinstance(stated, tuple) and all(_same_figure(a, b) for a, b in zip(stated, value, strict=True))
    return math.isclose(float(stated), float(value), rel_tol=1e-6, abs_tol=1e-12)  # type: ignore[arg-type]


def _alternation_problems(path: str, result: ResultFile) -> list[Problem]:
    """A point's CPU and accelerator rounds (one workload hash and framework) alternated: the CPU's round r ran before
    the accelerator's round r, which ran before the CPU's round r + 1, over the rounds both have. The site pairs
    such rounds round by round (site_builder.uncertainty.rounds_interval), which is narrower than two sides timed
    apart, so a file that claims the pairing must have timed it."""
    cpu: dict[tuple[str, str], list[int]] = {}
    for m in result.measurements:
        if m.device == "cpu" and m.status == "ok" and len(m.rounds) >= 2:
            cpu[(m.workload_hash, m.framework)] = [r.process for r in m.rounds]
    problems = []
    for i, m in enumerate(result.measurements):
        theirs = cpu.get((m.workload_hash, m.framework))
        if m.device == "cpu" or m.status != "ok" or len(m.rounds) < 2 or theirs is None:
            continue
        mine = [r.process for r in m.rounds]
        after = all(c < a for c, a in zip(theirs, mine, strict=False))
        before = all(a < c for a, c in zip(mine, theirs[1:], strict=False))
        if not (after and before):
            problems.append(
                Problem(
                    path,
                    f"measurements[{i}].rounds",
                    f"processes {mine} did not alternate with the CPU's {theirs} (CPU, accelerator, CPU, ...)",
                )
            )
    return problems


def _above_peak(path: str, where: str, m: Measurement, machine: Machine) -> list[Problem]:
    """The measurement's FLOP/s against its device's peak (a spec sheet's, or the CPU's ceiling): above it is
    physically impossible."""
    if not m.flops_per_unit or m.median_s is None:
        return []
    achieved = m.flops_per_unit / m.median_s / 1e12
    if m.device == "cpu":
        peak: float | None = cpu_peak_tflops(machine.cpu, m.precision)
        what = f"the CPU's ceiling ({machine.cpu.logical_cpus} CPUs x clock x vector width)"
    else:
        peak = gpu_peak_tflops(m.device_name, m.precision)
        what = f"the {m.device_name} peak"
    if peak is not None and achieved > peak:
        return [
            Problem(
                path,
                f"{where}.median_s",
                f"{achieved:.4g} TFLOP/s ({m.precision}) is above {what} of {peak:.4g} TFLOP/s: physically "
                "impossible (unsynchronised timing, wrong FLOP count, or an edited file)",
            )
        ]
    return []


def _differs(stated: float | None, computed: float | None) -> bool:
    if stated is None or computed is None:
        return stated is not computed and stated is not None
    return abs(stated - computed) > DERIVED_RTOL * max(abs(stated), abs(computed))


def _round_problems(path: str, where: str, m: Measurement) -> list[Problem]:
    """A measurement's rounds (schema 9): they cut its samples exactly, each round's median is its samples', the
    processes are numbered in order, and each round's wall time holds its warm-up and samples."""
    sizes = [r.samples for r in m.rounds]
    if sum(sizes) != len(m.samples_s):
        return [
            Problem(
                path, f"{where}.rounds", f"the rounds take {sum(sizes)} samples, but samples_s holds {len(m.samples_s)}"
            )
        ]
    problems = []
    first, walls, stable = m.rounds[0], [r.wall_s for r in m.rounds], [r.stable for r in m.rounds]
    joined = [  # what the measurement takes from its rounds (runner.api.rounds.merged)
        ("warmup_s", m.warmup_s, first.warmup_s, "its first round's warm-up"),
        ("units_per_sample", m.units_per_sample, first.units_per_sample, "its first round's units per sample"),
        ("wall_s", m.wall_s, sum(walls) if None not in walls else None, "its rounds' wall times added"),  # type: ignore[arg-type]
    ]
    for name, stated, derived, what in joined:
        if stated is not None and derived is not None and _differs(float(stated), float(derived)):
            problems.append(Problem(path, f"{where}.{name}", f"{stated:.6g} is not {what} ({derived:.6g})"))
    if m.stable is not None and None not in stable and m.stable != all(stable):
        problems.append(Problem(path, f"{where}.stable", f"{m.stable} but its rounds' are {stable}"))
    processes = [r.process for r in m.rounds]
    if processes != sorted(set(processes)):
        problems.append(Problem(path, f"{where}.rounds", f"processes {processes} are not distinct and in order"))
    for k, (r, run) in enumerate(zip(m.rounds, split_rounds(list(m.samples_s), sizes), strict=True)):
        median = statistics.median(run)
        if _differs(r.median_s, median):
            problems.append(
                Problem(
                    path, f"{where}.rounds[{k}].median_s", f"{r.median_s:.6g} is not its samples' median ({median:.6g})"
                )
            )
        steady = (r.warmup_s or 0.0) + sum(run) * r.units_per_sample
        if r.wall_s is not None and steady > r.wall_s * (1 + DERIVED_RTOL) + WALL_SLACK_S:
            problems.append(
                Problem(
                    path,
                    f"{where}.rounds[{k}].wall_s",
                    f"{r.wall_s:.6g} s is shorter than the warm-up and samples it contains ({steady:.6g} s)",
                )
            )
    return problems


def _recomputed(path: str, where: str, m: Measurement, schema_version: int) -> list[Problem]:
    """An 'ok' measurement's statistics and rates, recomputed from its raw samples (with rounds, over the rounds by
    the file's schema's rule: runner.results.intervals.summarize_rounds)."""
    assert m.median_s is not None
    if m.rounds:
        if schema_version < ROUNDS_SCHEMA:
            return [Problem(path, f"{where}.rounds", f"schema {schema_version} has no rounds (from schema 9 on)")]
        problems = _round_problems(path, where, m)
        if problems:
            return problems
    sizes = [r.samples for r in m.rounds]
    stats = summarize_rounds(m.samples_s, sizes, schema_version) if m.rounds else summarize(m.samples_s)
    of = "of the rounds' medians" if m.rounds else "of samples_s"
    ci = stats.ci95_s or (None, None)
    stated_ci = m.ci95_s or (None, None)
    flops = m.flops_per_unit / stats.median_s / 1e12 if m.flops_per_unit else None
    figures = [
        ("median_s", m.median_s, stats.median_s, f"the median {of}"),
        ("iqr_s", m.iqr_s, stats.iqr_s, "the interquartile range of samples_s"),
        ("ci95_s[0]", stated_ci[0], ci[0], f"the 95% interval of the median {of}"),
        ("ci95_s[1]", stated_ci[1], ci[1], f"the 95% interval of the median {of}"),
        ("rel_ci_halfwidth", m.rel_ci_halfwidth, stats.rel_ci_halfwidth, "the interval's half-width over the median"),
    ]
    if m.unit != "latency":  # a streaming step's rate and wall time are checked against its record below
        figures += [
            ("samples_per_s", m.samples_per_s, m.samples_per_unit / stats.median_s, "samples_per_unit / median_s"),
            ("achieved_tflops", m.achieved_tflops, flops, "flops_per_unit / median_s"),
        ]
    problems = [
        Problem(
            path,
            f"{where}.{name}",
            f"{stated:.6g} is not {what} ({computed:.6g})"
            if computed is not None
            else f"{stated:.6g} given, but {what} is undefined",
        )
        for name, stated, computed, what in figures
        if _differs(stated, computed)
    ]
    if m.unit == "latency":
        return problems + _stream_problems(path, where, m)
    if m.rounds:
        return problems  # each round's wall time is checked with the round
    steady = sum(m.samples_s) * m.units_per_sample
    if m.wall_s is not None and (m.warmup_s or 0.0) + steady > m.wall_s * (1 + DERIVED_RTOL) + WALL_SLACK_S:
        problems.append(
            Problem(
                path,
                f"{where}.wall_s",
                f"{m.wall_s:.6g} s is shorter than the warm-up and samples it contains "
                f"({(m.warmup_s or 0.0) + steady:.6g} s)",
            )
        )
    return problems


def _fidelity_problems(path: str, where: str, m: Measurement, profile: str) -> list[Problem]:
    """A seed script's twin (runner.fidelity): the shipped transcription of this point's seed, run with this
    point's arguments; its harness side is this measurement's rounds (before schema 9, round 1's figure is the
    measurement's own); the ratio, its interval and the verdict
    recomputed from the two raw lists by the file's own method (its `interval`)."""
    f = m.fidelity
    assert f is not None
    at = f"{where}.fidelity"
    twin = fidelity.expected_twin(m, profile)
    if twin is None:
        return [Problem(path, at, f"no seed script twins {m.framework} {m.variant} {m.workload} on {m.device}")]
    problems = []
    if f.script != twin.script:
        problems.append(Problem(path, f"{at}.script", f"{f.script} is not this point's transcription ({twin.script})"))
    elif f.script_sha256 not in fidelity.shipped_sha256(f.script):
        problems.append(
            Problem(path, f"{at}.script_sha256", f"not the hash of any {f.script} benchsite shipped: another ran")
        )
    expected_args = ["--device", fidelity.TWIN_DEVICES[m.device], *twin.args]
    if list(f.args) != expected_args:
        problems.append(Problem(path, f"{at}.args", f"{f.args} are not this point's arguments ({expected_args})"))
    lengths = {len(f.script_s), len(f.harness_s), len(f.units)}
    if lengths != {f.rounds}:
        problems.append(
            Problem(
                path, f"{at}.rounds", f"{f.rounds} rounds, but script_s, harness_s and units hold {sorted(lengths)}"
            )
        )
        return problems
    if m.rounds and sum(r.samples for r in m.rounds) != len(m.samples_s):
        return problems  # rounds that do not cut the samples are refused already (_round_problems)
    if m.rounds:  # schema 9: the harness's side is the measurement's rounds, each its mean seconds per unit
        rounds = fidelity.harness_rounds(list(m.samples_s), [r.samples for r in m.rounds])
        if len(rounds) != f.rounds or any(_differs(a, b) for a, b in zip(f.harness_s, rounds, strict=True)):
            problems.append(
                Problem(
                    path,
                    f"{at}.harness_s",
                    f"{list(f.harness_s)} are not this measurement's rounds' seconds per unit "
                    f"({[float(f'{x:.6g}') for x in rounds]})",
                )
            )
    own = fidelity.mean_per_unit(m.samples_s[: m.rounds[0].samples] if m.rounds else m.samples_s)
    if _differs(f.harness_s[0], own):
        problems.append(
            Problem(
                path,
                f"{at}.harness_s[0]",
                f"{f.harness_s[0]:.6g} is not this measurement's own seconds per unit ({own:.6g}), which is round 1",
            )
        )
    if f.interval == "welch-log" and f.rounds < fidelity.MIN_ROUNDS:
        problems.append(Problem(path, f"{at}.rounds", f"{f.rounds}: Welch's interval needs {fidelity.MIN_ROUNDS}"))
        return problems
    s = fidelity.summarise(list(f.harness_s), list(f.script_s), f.interval)
    for name, stated, computed in (
        ("ratio", f.ratio, s.ratio),
        ("ci95[0]", f.ci95[0], s.ci95[0]),
        ("ci95[1]", f.ci95[1], s.ci95[1]),
    ):
        if _differs(stated, computed):
            problems.append(
                Problem(
                    path, f"{at}.{name}", f"{stated:.6g} is not recomputed from harness_s and script_s ({computed:.6g})"
                )
            )
    if f.verdict != s.verdict:
        problems.append(Problem(path, f"{at}.verdict", f"{f.verdict!r}, but its interval makes it {s.verdict!r}"))
    return problems


def _stream_problems(path: str, where: str, m: Measurement) -> list[Problem]:
    """A streaming step: its record is whole and each derived figure is recomputed from the raw lists."""
    record = m.stream
    if record is None:
        return [Problem(path, f"{where}.stream", "a latency measurement without its stream record")]
    problems = []
    rate = m.point.get("rate")
    shape = [
        ("offered_rows_per_s", record.offered_rows_per_s == rate, f"is not the point's rate ({rate!r})"),
        (
            "interval_s",
            isinstance(rate, int | float)
            and abs(record.interval_s * rate - m.samples_per_unit) <= 1e-9 * m.samples_per_unit,
            f"does not give samples_per_unit ({m.samples_per_unit}) rows per file at the point's rate",
        ),
        (
            "files",
            record.files == len(m.samples_s) == len(record.produced_s),
            "differs from the latencies and produced_s",
        ),
        ("uncommitted", record.uncommitted <= record.files, "exceeds the files produced"),
    ]
    problems += [
        Problem(path, f"{where}.stream.{name}", f"{getattr(record, name)!r} {what}")
        for name, ok, what in shape
        if not ok
    ]
    if problems:
        return problems
    found = streaming.figures(record.produced_s, m.samples_s, record.interval_s, m.samples_per_unit, record.uncommitted)
    derived = [
        ("stream.p95_s", record.p95_s, found.p95_s, "the 95th percentile of samples_s"),
        ("stream.p99_s", record.p99_s, found.p99_s, "the 99th percentile of samples_s"),
        ("stream.growth", record.growth, found.growth, "the slope of samples_s against produced_s"),
        ("stream.producer_lag_s", record.producer_lag_s, found.producer_lag_s, "the latest start against the schedule"),
        ("samples_per_s", m.samples_per_s, found.achieved_rows_per_s, "the rows over first production to last commit"),
    ]
    problems += [
        Problem(path, f"{where}.{name}", f"{stated:.6g} is not {what} ({computed:.6g})")
        for name, stated, computed, what in derived
        if _differs(stated, computed)
    ]
    if record.bounded != found.bounded:
        problems.append(
            Problem(
                path,
                f"{where}.stream.bounded",
                f"{record.bounded} contradicts the record (growth {found.growth:.3g} s/s, limit "
                f"{streaming.GROWTH_LIMIT}; producer lag {found.producer_lag_s:.3g} s; "
                f"{record.uncommitted} uncommitted)",
            )
        )
    if m.wall_s is not None and found.span_s > m.wall_s * (1 + DERIVED_RTOL) + WALL_SLACK_S:
        problems.append(
            Problem(
                path,
                f"{where}.wall_s",
                f"{m.wall_s:.6g} s is shorter than the stream it records ({found.span_s:.6g} s)",
            )
        )
    if m.achieved_tflops is not None:
        problems.append(Problem(path, f"{where}.achieved_tflops", "a streaming step states no FLOP rate"))
    return problems


def _registry(path: str, result: ResultFile) -> list[Problem]:
    """Every measurement is one of its suite's workloads, with that workload's own figures."""
    table = known.table(result.suite.version)
    if table is None:
        return [Problem(path, "suite.version", f"suite {result.suite.version} is unknown to this gate")]
    problems = []
    run_s = (_utc(result.run.finished_at) - _utc(result.run.started_at)).total_seconds()
    for i, m in enumerate(result.measurements):
        where = f"measurements[{i}]"
        for name, seconds in (("warmup_s", m.warmup_s), ("wall_s", m.wall_s)):
            if seconds is not None and seconds > run_s + WALL_SLACK_S:
                problems.append(
                    Problem(path, f"{where}.{name}", f"{seconds:.6g} s is longer than the whole run ({run_s:.6g} s)")
                )
        if m.workload == custom.WORKLOAD:  # a user's own model: no suite entry to hold it to, its form only
            problems += _custom(path, where, m)
            continue
        entry = table.get(m.workload_hash)
        if entry is None:
            problems.append(
                Problem(
                    path,
                    f"{where}.workload_hash",
                    f"{m.workload_hash} is not a workload of suite {result.suite.version}",
                )
            )
            continue
        expected = {
            "workload": entry.workload,
            "variant": entry.variant,
            "point": entry.point,
            "unit": entry.unit,
            "samples_per_unit": entry.samples_per_unit,
        }
        for name, value in expected.items():
            if getattr(m, name) != value:
                problems.append(
                    Problem(
                        path,
                        f"{where}.{name}",
                        f"{getattr(m, name)!r}, but workload hash {m.workload_hash} is {value!r}",
                    )
                )
        for name, value in (("params", entry.params), ("flops_per_unit", entry.flops_per_unit)):
            stated = getattr(m, name)
            if stated is not None and (value is None or _differs(float(stated), float(value))):
                problems.append(
                    Problem(
                        path,
                        f"{where}.{name}",
                        f"{stated:,} is not the suite's {value:,} for {entry.workload} {entry.point}"
                        if value is not None
                        else f"{stated:,} given, but the suite has no such figure for {entry.workload}",
                    )
                )
    return problems


def _custom(path: str, where: str, m: Measurement) -> list[Problem]:
    """A measurement of a user's own model (`benchsite run --model`, runner.workloads.custom): the point its case
    gives (the model's structure hash, a mode, a batch size), a step of batch_size examples. Its workload hash and
    parameters cannot be recomputed without the model; the pull-request gate keeps such files out of results/."""
    problems = []
    point = m.point or {}
    if set(point) != {"model", "mode", "batch_size"}:
        problems.append(Problem(path, f"{where}.point", f"{point!r}: a custom point is its model, mode and batch_size"))
        return problems
    if point["mode"] not in custom.MODES:
        problems.append(
            Problem(path, f"{where}.point.mode", f"{point['mode']!r} is not one of {', '.join(custom.MODES)}")
        )
    size = point["batch_size"]
    if not isinstance(size, int) or size < 1 or m.samples_per_unit != size:
        problems.append(
            Problem(path, f"{where}.samples_per_unit", f"{m.samples_per_unit!r}, but a step is a batch of {size!r}")
        )
    if m.unit != "step":
        problems.append(Problem(path, f"{where}.unit", f"{m.unit!r}: a custom model is timed per step"))
    if not (
        isinstance(point["model"], str) and len(point["model"]) == 16 and set(point["model"]) <= set("0123456789abcdef")
    ):
        problems.append(Problem(path, f"{where}.point.model", f"{point['model']!r} is not a structure hash"))
    return problems


def _peaks_and_equivalence(path: str, result: ResultFile) -> list[Problem]:
    """Figures stated beside the measurements: each device peak's TFLOP/s, and the equivalence verdicts."""
    problems = []
    for i, peak in enumerate(result.device_peaks):
        tflops = 2 * peak.n**3 / peak.median_s / 1e12
        if _differs(peak.tflops, tflops):
            problems.append(
                Problem(path, f"device_peaks[{i}].tflops", f"{peak.tflops:.6g} is not 2 n^3 / median_s ({tflops:.6g})")
            )
    by_point = known.by_point(result.suite.version)
    for i, check in enumerate(result.equivalence):
        if check.status != "passed":
            continue
        where = f"equivalence[{i}]"
        entry = by_point.get((check.workload, known.point_key(check.point)))
        reasons = []
        if entry is None:
            reasons.append(f"{check.workload} {check.point} is not a point of suite {result.suite.version}")
        else:
            if entry.params is not None and (check.params, check.reference_params) != (entry.params, entry.params):
                reasons.append(
                    f"parameters {check.params} and {check.reference_params}, the suite's are {entry.params}"
                )
            if entry.forward_flops is not None and _differs(check.analytic_flops, entry.forward_flops):
                reasons.append(f"analytic_flops {check.analytic_flops}, the suite's are {entry.forward_flops:.6g}")
        if (
            check.forward_flops is not None
            and check.analytic_flops
            and _differs(check.forward_flops, check.analytic_flops)
        ):
            reasons.append("forward_flops differ from analytic_flops")
        if check.loss is not None and check.reference_loss is not None:
            diff = abs(check.loss - check.reference_loss) / abs(check.reference_loss) if check.reference_loss else 0.0
            if _differs(check.loss_rel_diff, diff):
                reasons.append(f"loss_rel_diff {check.loss_rel_diff} is not |loss - reference_loss| / |reference_loss|")
        if check.loss_rtol > LOSS_RTOL_MAX or check.grad_rtol > GRAD_RTOL_MAX:
            reasons.append(f"tolerances above the check's own ({LOSS_RTOL_MAX:g} loss, {GRAD_RTOL_MAX:g} gradients)")
        if (check.loss_rel_diff or 0.0) > check.loss_rtol or (check.grad_rel_diff or 0.0) > check.grad_rtol:
            reasons.append("differences beyond its tolerances")
        problems += [Problem(path, where, f"status is 'passed' but {reason}") for reason in reasons]
    return problems


def _utc(when: datetime) -> datetime:
    """A file's time as an aware UTC time: a time without an offset is read as UTC (as the runner writes them),
    so that a file mixing the two cannot make the gate compare them."""
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


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
    started, finished = _utc(run.started_at), _utc(run.finished_at)
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
    replays = Replays()
    # (machine, workload_hash, framework, device) -> [(started_at, path, index, median)]
    history: dict[tuple[str, ...], list[tuple[datetime, str, int, float]]] = defaultdict(list)
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
        started = _utc(result.run.started_at)
        for i, m in enumerate(result.measurements):
            if m.status == "ok" and m.median_s:
                key = (m.workload_hash, m.variant, m.framework, m.device, m.device_name)
                cohorts[key].append((result.machine.id, name, i, m.median_s))
                history[(result.machine.id, m.workload_hash, m.framework, m.device)].append(
                    (started, name, i, m.median_s)
                )
                replayed = replays.check(name, i, replay_digests(m), m.median_s)
                if replayed is not None:
                    report.problems.append(replayed)
    report.problems.extend(_cohort_outliers(cohorts))
    report.problems.extend(_faster_than_before(history))
    if strict:
        report.problems = [
            Problem(p.path, p.field, p.message, "error") if p.severity == "warning" else p for p in report.problems
        ]
    return report


def replay_digests(m: Measurement) -> tuple[bytes, bytes] | None:
    """Two 16-byte digests of an 'ok' measurement's raw samples: exactly, and each over its median (so a copy
    scaled by any constant has the same second digest). None for fewer than REPLAY_MIN_SAMPLES samples."""
    if m.status != "ok" or len(m.samples_s) < REPLAY_MIN_SAMPLES or not m.median_s:
        return None
    median = m.median_s
    return _digest(m.samples_s), _digest([float(f"{s / median:.9e}") for s in m.samples_s])


def _digest(values: list[float]) -> bytes:
    return hashlib.blake2b(struct.pack(f"<{len(values)}d", *values), digest_size=16).digest()


class Replays:
    """Raw samples seen so far, by digest (replay_digests). Timings of real runs never repeat to the last bit:
    a measurement whose samples another already has, exactly or scaled, is a copy. Used by the gate and by the
    site's loader, each in its own file order."""

    def __init__(self) -> None:
        self.exact: dict[bytes, tuple[str, int]] = {}
        self.shape: dict[bytes, tuple[str, int, float]] = {}

    def check(self, path: str, index: int, digests: tuple[bytes, bytes] | None, median: float) -> Problem | None:
        if digests is None:
            return None
        first = self.exact.setdefault(digests[0], (path, index))
        if first != (path, index):
            return replayed_exactly(path, index, *first)
        other = self.shape.setdefault(digests[1], (path, index, median))
        if other[:2] != (path, index):
            return replayed_scaled(path, index, median, *other)
        return None


def replayed_exactly(path: str, index: int, first_path: str, first_index: int) -> Problem:
    """What Replays says of a measurement whose samples an earlier one has exactly."""
    return Problem(
        path,
        f"measurements[{index}].samples_s",
        f"the same samples as {first_path} measurements[{first_index}]: a measurement is timed once, and a "
        "replayed one is not a new result",
    )


def replayed_scaled(
    path: str, index: int, median: float, first_path: str, first_index: int, first_median: float
) -> Problem:
    """What Replays says of a measurement whose samples are an earlier one's scaled by a constant."""
    return Problem(
        path,
        f"measurements[{index}].samples_s",
        f"the samples of {first_path} measurements[{first_index}] scaled by {median / first_median:.4g}: a replayed "
        "measurement made to look faster or slower",
    )


def _faster_than_before(history: dict[tuple[str, ...], list[tuple[datetime, str, int, float]]]) -> list[Problem]:
    """A run much faster than the same machine's earlier runs of the same measurement: a warning (a driver or
    framework upgrade can do it; so can an edited file), an error under --strict."""
    problems = []
    for key, rows in history.items():
        if len(rows) < 2:
            continue
        rows.sort(key=lambda row: row[0])
        for k in range(1, len(rows)):
            started, path, index, median = rows[k]
            earlier = [row[3] for row in rows[:k] if row[0] < started]
            if not earlier:
                continue
            typical = statistics.median(earlier)
            if median * FASTER_FACTOR < typical:
                problems.append(
                    Problem(
                        path,
                        f"measurements[{index}].median_s",
                        f"{median:.4g} s is {typical / median:.2f}x faster than the median {typical:.4g} s of this "
                        f"machine's {len(earlier)} earlier run(s) of {key[1]} ({key[2]}, {key[3]})",
                        "warning",
                    )
                )
    return problems


def median_without(ordered: list[float], value: float) -> float:
    """The median of `ordered` (sorted) with one occurrence of `value` taken out, without copying: O(log n). The
    cohort check asks it once per machine of a cohort, so the check grows with the rows, not with their square (a
    list of the others for every row: 0.36 s against 0.011 s for 20 cohorts of 420 machines, about what 10,000
    files give; a hundred times that per cohort at 100,000)."""
    where = bisect.bisect_left(ordered, value)
    if where >= len(ordered) or ordered[where] != value:
        raise ValueError(f"{value} is not in the list")
    n = len(ordered) - 1  # the others

    def kth(k: int) -> float:  # the k-th smallest of the others
        return ordered[k] if k < where else ordered[k + 1]

    return kth(n // 2) if n % 2 else (kth(n // 2 - 1) + kth(n // 2)) / 2


def _cohort_outliers(cohorts: dict[tuple[str, ...], list[tuple[str, str, int, float]]]) -> list[Problem]:
    problems = []
    for key, rows in cohorts.items():
        by_machine: dict[str, float] = {}
        for machine, _, _, median in rows:
            by_machine[machine] = min(median, by_machine.get(machine, median))
        if len(by_machine) < COHORT_MIN_MACHINES + 1:
            continue
        ordered = sorted(by_machine.values())
        typical_for = {machine: median_without(ordered, value) for machine, value in by_machine.items()}
        for machine, path, index, median in rows:
            typical = typical_for[machine]
            others = len(by_machine) - 1
            factor = max(median / typical, typical / median)
            if factor >= COHORT_FACTOR:
                problems.append(
                    Problem(
                        path,
                        f"measurements[{index}].median_s",
                        f"{median:.4g} s is {factor:.0f}x away from the median {typical:.4g} s of {others} "
                        f"other machines with a {key[4]} ({key[2]}, {key[1]}, {key[3]})",
                        "warning",
                    )
                )
    return problems
