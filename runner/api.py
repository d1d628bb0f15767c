"""The callable API behind `benchsite run`: plan, check, measure, assemble, save.

The CLI is a thin layer over `plan_run` and `execute` (and `find_unfinished`, `journal_folder` for --resume);
tests and other tools call them directly. The measuring itself is runner.measure's; what a run writes is
runner.results'.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib.metadata
import importlib.util
import os
import platform
import shlex
import shutil
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from runner import SUITE_VERSION, __version__, fidelity
from runner.fingerprint import collect_machine
from runner.frameworks import DEVICE_KINDS, FRAMEWORKS, REFERENCE, canonical_framework
from runner.measure import equivalence, executor, journal, protocol, spares
from runner.results import privacy
from runner.results.schema import (
    SCHEMA_VERSION,
    Accelerator,
    DevicePeak,
    EquivalenceCheck,
    FrameworkInfo,
    Machine,
    Measurement,
    ResultFile,
    Run,
    Software,
    Suite,
    SyncSelfTest,
)
from runner.results.storage import file_name, save
from runner.workloads import PROFILES, VARIANTS, Case, Workload, select
from runner.workloads.suite import CPU_WORLD_MAX

# Seconds of steady-state timing per measurement, by profile (the warm-up comes on top). A measurement stops earlier
# once its interval is within 2%; the budget caps the noisy ones (the run lists them). Standard's 2 s (was 6 s)
# brought a whole standard run on the H100 machine with PyTorch and JAX, CPU and GPU, to 1299 s, still above the
# 15-minute target (docs/methodology.md, "How long a run takes"); raise --time-budget for tighter intervals.
# BENCHSITE_SPARES=0: start each fresh measuring process and twin script when it is needed (runner.measure.spares).
SPARES_ENV = "BENCHSITE_SPARES"
DEFAULT_BUDGET_S = {"tiny": 0.5, "quick": 1.0, "standard": 2.0}
# A case with no result for this long is stopped and recorded as a time-out.
DEFAULT_TIMEOUT_S = {"tiny": 120.0, "quick": 600.0, "standard": 1800.0}
# Environment variables recorded in the result file (an allow-list: nothing else is read).
ENV_ALLOWLIST = (
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "OPENBLAS_CORETYPE",
    "VECLIB_MAXIMUM_THREADS",
    "KMP_AFFINITY",
    "KMP_BLOCKTIME",
    "OMP_PROC_BIND",
    "GOMP_CPU_AFFINITY",
    "CUDA_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "CUDA_LAUNCH_BLOCKING",
    "PYTORCH_CUDA_ALLOC_CONF",
    "PYTORCH_ENABLE_MPS_FALLBACK",
    "TF_ENABLE_ONEDNN_OPTS",
    "XLA_FLAGS",
    "NVIDIA_TF32_OVERRIDE",
    "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE",
)


@contextlib.contextmanager
def _phase(phases: dict[str, float], name: str) -> Iterator[None]:
    """Add the wall time of the block to phases[name] (benchmarks and the run's summary read it)."""
    start = time.perf_counter()
    try:
        yield
    finally:
        phases[name] = phases.get(name, 0.0) + time.perf_counter() - start


class PlanError(ValueError):
    """The options cannot be run here; the message says what to change."""


@dataclass
class RunOptions:
    profile: str = "quick"
    workloads: list[str] | None = None
    devices: list[str] | None = None
    frameworks: list[str] | None = None
    variants: list[str] | None = None
    time_budget_s: float | None = None
    timeout_s: float | None = None
    output: Path | None = None
    results_dir: Path = Path("results")
    profile_ops: bool = True
    equivalence: bool = True  # prove each non-PyTorch framework's models equal PyTorch's before measuring
    peaks: bool = True  # measure each device's matrix-product throughput (the denominator of "% of peak")
    compile_ahead: bool = True  # compile the points of a compiled loop several at a time first (compile_ahead)
    # time each point a seed script covers against that script, round by round (runner.fidelity); None: on for the
    # standard profile only
    fidelity: bool | None = None
    fidelity_rounds: int = 3
    command: str = "benchsite run"

    @property
    def twins(self) -> bool:
        return self.profile == "standard" if self.fidelity is None else self.fidelity


@dataclass
class Group:
    """Cases of one workload measured with one framework, device and variant in one child process."""

    workload: Workload
    framework: str
    device: str
    variant: str
    cases: list[Case]
    indices: list[int]  # each case's position in workload.cases(profile): how the child finds it
    skip_reason: str | None = None

    def case(self, index: int) -> Case:
        """The case at this position of the workload's list."""
        return self.cases[self.indices.index(index)]

    def only(self, positions: list[int]) -> None:
        """Keep only the cases at these positions of the workload's list (benchmarks use this)."""
        keep = [i for i, index in enumerate(self.indices) if index in positions]
        self.cases = [self.cases[i] for i in keep]
        self.indices = [self.indices[i] for i in keep]


@dataclass
class Plan:
    options: RunOptions
    machine: Machine
    software: Software
    devices: dict[str, list[str]]  # framework -> device kinds to measure
    groups: list[Group]
    notes: list[str] = field(default_factory=list)
    budget_s: float = 0.0
    timeout_s: float = 0.0
    phase_s: dict[str, float] = field(default_factory=dict)  # wall seconds per phase, filled as the run goes
    compile_cache: str | None = None  # where compilers cache their work during the run (see compile_cache)

    @property
    def total(self) -> int:
        return sum(len(g.cases) for g in self.groups)


@dataclass
class Progress:
    """Callbacks for a front end. Every one is optional."""

    note: Callable[[str], None] = lambda text: None
    case_started: Callable[[Group, Case], None] = lambda group, case: None
    case_progress: Callable[[Group, Case, int, float], None] = lambda group, case, n, elapsed: None
    case_finished: Callable[[Group, Case, Measurement], None] = lambda group, case, m: None
    # The compile-ahead pass of a group: (group, points compiled so far, points in all, children side by side).
    ahead: Callable[[Group, int, int, int], None] = lambda group, done, total, children: None


def _split(values: list[str] | None) -> list[str]:
    """Repeated options and comma-separated lists alike: ['torch,jax', 'tensorflow'] -> three names."""
    return [item for value in values or [] for item in filter(None, (v.strip() for v in value.split(",")))]


def _check_choices(values: list[str] | None, valid: tuple[str, ...], what: str) -> list[str] | None:
    if not values:
        return None
    out = _split(values)
    for item in out:
        if item not in valid:
            raise PlanError(f"unknown {what} {item!r}; valid {what}s: {', '.join(valid)}")
    return out


# A result file is at most 4 MiB; refuse to start a run that could not write one.
MIN_FREE_BYTES = 16 * 1024 * 1024


def check_writable(directory: Path) -> None:
    """Fail before any measuring if the result cannot be written: not a folder, not writable, or full."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".benchsite-write-test-") as probe:
            probe.write(b"x" * 4096)
            probe.flush()
            os.fsync(probe.fileno())
        free = shutil.disk_usage(directory).free
    except OSError as exc:
        raise PlanError(f"cannot write results to {directory}: {exc.strerror or exc}") from None
    if free < MIN_FREE_BYTES:
        raise PlanError(
            f"cannot write results to {directory}: only {free / 2**20:.1f} MiB free, "
            f"{MIN_FREE_BYTES / 2**20:.0f} MiB needed; free some space or pass --output elsewhere"
        )


def describe_frameworks(names: list[str], timeout_s: float = 300.0) -> tuple[list[FrameworkInfo], list[Accelerator]]:
    """Ask each framework about itself in its own child process; a broken one is recorded, not fatal.

    Also returns the accelerators the frameworks see (a ROCm GPU may be visible only to PyTorch)."""
    infos: list[FrameworkInfo] = []
    accelerators: list[Accelerator] = []
    # One child per framework, all at once: the probe is mostly imports (TensorFlow alone ~10 s on a 2-core
    # machine), and the children share nothing.
    with ThreadPoolExecutor(max_workers=max(1, len(names)), thread_name_prefix="describe") as pool:
        answers = list(pool.map(lambda n: executor.run_simple({"kind": "describe", "framework": n}, timeout_s), names))
    for name, (payload, failure) in zip(names, answers, strict=True):
        if payload is None:
            reason = failure.message if failure else "no answer"
            if failure and failure.traceback and "ModuleNotFoundError" in failure.traceback:
                reason = f"{name} is not installed (pip install 'benchsite[{name}]')"
            infos.append(FrameworkInfo(name=name, available=False, reason=reason[:4000]))
            continue
        info = dict(payload["info"])
        info.pop("accelerators", None)
        infos.append(FrameworkInfo(**info))
        accelerators += [Accelerator(**a) for a in payload["info"].get("accelerators", [])]
    return infos, accelerators


def software_info(frameworks: list[FrameworkInfo]) -> Software:
    try:
        numpy_version: str | None = importlib.metadata.version("numpy")
    except importlib.metadata.PackageNotFoundError:
        numpy_version = None
    env = {k: os.environ[k][:200] for k in ENV_ALLOWLIST if k in os.environ}
    return Software(
        python=platform.python_version(),
        python_implementation=platform.python_implementation(),
        numpy=numpy_version,
        frameworks=frameworks,
        env=env,
    )


def plan_run(options: RunOptions, progress: Progress | None = None) -> Plan:
    """Check every option, probe the machine and frameworks, and list what will be measured.

    Raises PlanError (with the valid choices) before anything slow happens where it can.
    """
    progress = progress or Progress()
    if options.profile not in PROFILES:
        raise PlanError(f"unknown profile {options.profile!r}; valid profiles: {', '.join(PROFILES)}")
    try:
        workloads = select(options.workloads)
        frameworks = [canonical_framework(f) for f in _split(options.frameworks)] or list(FRAMEWORKS)
        frameworks = list(dict.fromkeys(frameworks))
    except ValueError as exc:
        raise PlanError(str(exc)) from None
    # Probe only the frameworks some chosen workload is written for (or records as unsupported).
    used = {f for w in workloads for f in (*w.implementations, *w.unsupported)}
    frameworks = [f for f in frameworks if f in used] or frameworks
    devices_wanted = _check_choices(options.devices, DEVICE_KINDS, "device")
    variants = _check_choices(options.variants, VARIANTS, "variant") or list(VARIANTS)
    check_writable(output_folder(options))
    ahead_children_override()  # a malformed BENCHSITE_AHEAD_CHILDREN is refused here, not mid-run

    progress.note("Probing frameworks and hardware ...")
    phases: dict[str, float] = {}
    with _phase(phases, "probe frameworks and hardware"):
        infos, accelerators = describe_frameworks(frameworks)
        machine = collect_machine(framework_accelerators=accelerators)
        software = software_info(infos)

    notes: list[str] = []
    devices: dict[str, list[str]] = {}
    for info in infos:
        if not info.available:
            notes.append(f"{info.name}: skipped, {info.reason}")
            continue
        found = list(info.devices)
        if devices_wanted:
            missing = [d for d in devices_wanted if d not in found]
            if missing and len(infos) == 1:
                raise PlanError(
                    f"device {', '.join(missing)} not available to {info.name} on this machine; "
                    f"available: {', '.join(found)}"
                )
            found = [d for d in found if d in devices_wanted]
        devices[info.name] = found
    if not any(devices.values()):
        raise PlanError("no framework can run here: " + "; ".join(notes))
    if all(d == ["cpu"] for d in devices.values() if d) and not devices_wanted:
        notes.append("No GPU found: running on the CPU only.")

    groups: list[Group] = []
    for workload in workloads:
        cases = workload.cases(options.profile)
        if not cases:
            continue  # e.g. the data-parallel workload has no point in the quick profile
        missing_modules = [m for m in workload.requires if importlib.util.find_spec(m) is None]
        for framework, kinds in devices.items():
            skip = None
            if framework not in workload.implementations:
                if framework not in workload.unsupported:
                    continue  # e.g. a plugin workload written for one framework: nothing to record
                skip = workload.unsupported[framework]
            elif missing_modules:
                skip = f"needs {', '.join(missing_modules)} (pip install 'benchsite[{missing_modules[0]}]')"
            for variant in variants:
                if variant not in workload.variants:
                    continue
                for kind in kinds:
                    groups += _groups(workload, framework, kind, variant, cases, skip, device_count(machine, kind))
    budget = options.time_budget_s or DEFAULT_BUDGET_S[options.profile]
    timeout = options.timeout_s or DEFAULT_TIMEOUT_S[options.profile]
    return Plan(options, machine, software, devices, groups, notes, budget, timeout, phases)


def device_count(machine: Machine, kind: str) -> int:
    """Devices of this kind a data-parallel point can spread over: the machine's GPUs of the kind's vendor, as many
    as CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES leave visible; on the CPU, CPU_WORLD_MAX processes."""
    if kind == "cpu":
        return CPU_WORLD_MAX
    vendor = {"cuda": "nvidia", "rocm": "amd"}.get(kind)
    if vendor is None:
        return 1
    count = sum(a.count for a in machine.accelerators if a.vendor == vendor)
    for variable in ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"):
        visible = os.environ.get(variable)
        if visible is not None:
            count = min(count, len([v for v in visible.split(",") if v.strip()]))
    return max(count, 1)


def _groups(
    workload: Workload, framework: str, kind: str, variant: str, cases: list[Case], skip: str | None, devices: int
) -> list[Group]:
    """One group for the cases this device can run, and one recorded as skipped for points whose world size
    (processes, one per device) is larger than the devices there are. A data-parallel sweep on a machine with one
    accelerator is skipped whole: one process shows no scaling, and its step is one-device training, which the
    transformer workload measures. The CPU counts as CPU_WORLD_MAX devices (gloo processes splitting its cores)."""
    fits = [i for i, c in enumerate(cases) if c.config.get("world_size", 1) <= devices]
    over = [i for i, c in enumerate(cases) if i not in fits]
    scaling = workload.swept is not None and workload.swept.field == "world_size"
    if scaling and devices < 2 and skip is None:
        reason = f"one {kind} device: data-parallel scaling needs 2 or more; the transformer workload times one device"
        return [Group(workload, framework, kind, variant, list(cases), list(range(len(cases))), reason)]
    out = []
    if fits:
        out.append(Group(workload, framework, kind, variant, [cases[i] for i in fits], fits, skip))
    if over:
        what = "the CPU runs at most" if kind == "cpu" else "this machine has"
        reason = skip or f"needs more {kind} devices than there are: {what} {devices}"
        out.append(Group(workload, framework, kind, variant, [cases[i] for i in over], over, reason))
    return out


def run_selftests(plan: Plan) -> list[SyncSelfTest]:
    results = []
    for framework, kinds in plan.devices.items():
        for kind in kinds:
            if kind == "cpu":
                continue
            payload, failure = executor.run_simple(
                {"kind": "selftest", "framework": framework, "device": kind}, plan.timeout_s
            )
            if payload is not None:
                results.append(SyncSelfTest(**payload["result"]))
            else:
                message = failure.message if failure else "no answer"
                results.append(
                    SyncSelfTest(
                        framework=framework,
                        device=kind,
                        passed=False,
                        unsynced_s=0,
                        synced_s=0,
                        detail=f"self-test failed: {message}"[:4000],
                    )
                )
    return results


def run_peaks(plan: Plan, progress: Progress) -> list[DevicePeak]:
    """The matrix-product throughput of every device PyTorch measures: the honest denominator of "% of peak"."""
    peaks: list[DevicePeak] = []
    if not plan.options.peaks:
        return peaks
    for kind in plan.devices.get(REFERENCE, []):
        payload, failure = executor.run_simple({"kind": "peak", "framework": REFERENCE, "device": kind}, plan.timeout_s)
        if payload is None:
            progress.note(f"WARNING: could not measure the matrix-product peak on {kind}: {failure}")
            continue
        peaks += [DevicePeak(**p) for p in payload["peaks"]]
    for peak in peaks:
        progress.note(f"Peak on {peak.device}: {peak.tflops:.2f} TFLOP/s in {peak.dtype} ({peak.n}x{peak.n} products)")
    return peaks


def run_equivalence(plan: Plan, progress: Progress) -> list[EquivalenceCheck]:
    """The equivalence check for every workload that a framework other than PyTorch is about to measure."""
    measured = [g for g in plan.groups if g.framework != REFERENCE and not g.skip_reason]
    if not plan.options.equivalence or not measured:
        return []
    workloads = list({g.workload.id: g.workload for g in measured}.values())
    frameworks = list(dict.fromkeys(g.framework for g in measured))
    checks = equivalence.check(workloads, frameworks, plan.options.profile, plan.timeout_s, progress.note)
    passed = sum(c.status == "passed" for c in checks)
    progress.note(f"Equivalence with PyTorch: {passed} of {len(checks)} checks passed.")
    for c in checks:
        if c.status != "passed":
            progress.note(f"WARNING: {c.framework} {c.workload} {c.point or ''} {c.status}: {c.detail}")
    return checks


def _unmeasured(group: Group, case: Case, device_name: str, **outcome: Any) -> Measurement:
    """A measurement that has no timings: skipped (with skip_reason) or failed (with error)."""
    return Measurement(
        workload=case.workload,
        workload_hash=case.workload_hash(group.variant),
        point=case.point,
        variant=group.variant,
        framework=group.framework,
        device=group.device,
        device_name=device_name,
        unit=case.unit,
        samples_per_unit=case.samples_per_unit,
        params=case.params,
        flops_per_unit=case.flops_per_unit,
        **outcome,
    )


def device_name(plan: Plan, kind: str) -> str:
    if kind == "cpu":
        return plan.machine.cpu.model
    vendor = {"cuda": "nvidia", "rocm": "amd", "mps": "apple"}[kind]
    return next((a.model for a in plan.machine.accelerators if a.vendor == vendor), kind)


# The compile-ahead pass (compile_ahead): at most this many children side by side, each with at least this many CPU
# cores and this much device memory. A child spends most of its time in Dynamo's, AOTAutograd's and Inductor's
# Python (one core), and the tuned sweep's largest first step peaks at 6.3 GiB: on the H100 machine (16 cores) the
# 13 children's seconds summed to 481 s with 8 side by side and 483 s with 4, the pass taking 78 s against 135 s
# (docs/methodology.md, Compiling ahead). BENCHSITE_AHEAD_CHILDREN=N sets the number instead (docs/cli.md).
AHEAD_MAX_CHILDREN = 8
AHEAD_CORES_PER_CHILD = 2
AHEAD_GIB_PER_CHILD = 8


def ahead_children(plan: Plan, group: Group, pending: int) -> int:
    """How many compile-ahead children the group gets: none where its loop compiles nothing on this device, and
    none where fewer than two fit side by side (one child compiles no sooner than the measuring process)."""
    if not plan.options.compile_ahead or group.skip_reason:
        return 0
    if group.device not in group.workload.compiled_on.get((group.framework, group.variant), ()):
        return 0
    if group.device == "cpu":
        memory = plan.machine.memory_gib
    else:
        vendor = {"cuda": "nvidia", "rocm": "amd", "mps": "apple"}[group.device]
        memory = next((a.memory_gib or 0.0 for a in plan.machine.accelerators if a.vendor == vendor), 0.0)
    cores = os.cpu_count() or 1
    forced = ahead_children_override()
    if forced is None:
        children = min(AHEAD_MAX_CHILDREN, cores // AHEAD_CORES_PER_CHILD, int(memory // AHEAD_GIB_PER_CHILD))
    else:
        children = forced
    children = min(children, pending)
    return children if children >= 2 else 0


def ahead_children_override() -> int | None:
    """BENCHSITE_AHEAD_CHILDREN, where set: how many compile-ahead children side by side (0 or 1: no pass)."""
    forced = os.environ.get("BENCHSITE_AHEAD_CHILDREN", "").strip()
    if not forced:
        return None
    if not forced.isdigit():
        raise PlanError(f"BENCHSITE_AHEAD_CHILDREN={forced!r}: expected a whole number of children (0 or more)")
    return int(forced)


def compile_ahead(plan: Plan, group: Group, progress: Progress, done: dict[int, Measurement] | None = None) -> None:
    """Compile the group's points ahead of their measurements, several at a time, into the run's compile cache.

    A compiled point's warm-up is mostly its compilation, and the measuring process compiles its points one after
    another while the device idles and most cores wait: the tuned transformer sweep's 13 points on an H100 spent
    347 s warming up. Here each point's first step runs in a child of its own, `ahead_children` at a time, largest
    first. The measuring process then compiles each point from a fresh Dynamo (runner.frameworks.torch.workloads.
    compile_fresh) and Inductor loads the graphs from the cache; its notes say how many it loaded and how many it
    compiled itself. What is timed does not change: the same kernels, autotuned by the measuring process alone
    (runner.frameworks.torch.compile_ahead_setup), all before the clock. A point that fails here only loses its
    head start."""
    done = done or {}
    pending = [(i, c) for i, c in zip(group.indices, group.cases, strict=True) if i not in done]
    children = ahead_children(plan, group, len(pending))
    if not children:
        return
    pending.sort(key=lambda item: -(item[1].flops_per_unit or 0.0))
    cores = os.cpu_count() or 1
    job = {
        "kind": "compile",
        "framework": group.framework,
        "device": group.device,
        "cpu_name": plan.machine.cpu.model,
        "workload": group.workload.id,
        "variant": group.variant,
        "profile": plan.options.profile,
        "compile_cache": plan.compile_cache,
        "compile_threads": max(1, cores // children),
    }
    finished: list[dict[str, Any]] = []
    started = time.perf_counter()
    progress.ahead(group, 0, len(pending), children)

    def on_event(event: dict[str, Any]) -> None:
        if event.get("event") == "compiled":
            finished.append(event)
            progress.ahead(group, len(finished), len(pending), children)

    jobs = [{**job, "case_indices": [index]} for index, _ in pending]
    failures = executor.run_parallel(jobs, children, plan.timeout_s, on_event)
    failed = [e for e in finished if e["status"] == "failed"]
    reasons = [f"{e['error']['type']}: {e['error']['message'][:200]}" for e in failed]
    reasons += [f"{f.type}: {f.message[:200]}" for f in failures if f is not None]
    ok = sum(e["status"] == "ok" for e in finished)
    seconds = time.perf_counter() - started
    text = (
        f"Compiled {ok} of {len(pending)} {group.workload.id} {group.variant} {group.framework}/{group.device} points "
        f"ahead in {seconds:.0f} s, {children} at a time"
    )
    protocol.log_phases(
        {
            "workload": group.workload.id,
            "variant": group.variant,
            "framework": group.framework,
            "device": group.device,
            "ahead_pass_s": seconds,
            "children": children,
            "points": len(pending),
        }
    )
    if reasons:
        text += f"; the rest compile in their measurement ({reasons[0]})"
    progress.note(text)


@contextlib.contextmanager
def compile_cache(plan: Plan) -> Iterator[None]:
    """The folder compilers cache their work in during the run (plan.compile_cache, handed to every child): the
    user's TORCHINDUCTOR_CACHE_DIR where set, else a folder of this run's own, removed at its end. A run's own cache
    makes its warm-up and wall times the same on a machine whose cache is cold or warm from other work, and leaves
    nothing behind (Inductor's cache of the transformer sweep holds hundreds of MB)."""
    own = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if own:
        plan.compile_cache = own
        yield
        return
    folder = tempfile.mkdtemp(prefix="benchsite-compile-")
    plan.compile_cache = folder
    try:
        yield
    finally:
        plan.compile_cache = None
        shutil.rmtree(folder, ignore_errors=True)


def measure_group(
    plan: Plan,
    group: Group,
    progress: Progress,
    done: dict[int, Measurement] | None = None,
    on_measured: Callable[[int, Measurement], None] = lambda index, m: None,
    peaks: list[DevicePeak] | None = None,
) -> list[Measurement]:
    """Measure the group's cases in one child process. `done`: cases an interrupted run finished (by index),
    kept and not measured again; `on_measured` is told each new measurement as it finishes (the journal);
    `peaks`, the run's matrix-product peaks, bound how short a unit can be (runner.measure.worker.SweepCeiling)."""
    done = done or {}
    if done:
        for case, index in zip(group.cases, group.indices, strict=True):
            if index in done:
                progress.case_finished(group, case, done[index])
        if all(index in done for index in group.indices) and not _untwinned(plan, group, done):
            return [done[i] for i in group.indices]
    if group.skip_reason:
        out = [_unmeasured(group, case, "-", status="skipped", skip_reason=group.skip_reason) for case in group.cases]
        for case, index, m in zip(group.cases, group.indices, out, strict=True):
            on_measured(index, m)
            progress.case_finished(group, case, m)
        return out
    job = {
        "kind": "measure",
        "framework": group.framework,
        "device": group.device,
        "cpu_name": plan.machine.cpu.model,
        "workload": group.workload.id,
        "variant": group.variant,
        "profile": plan.options.profile,
        "budget_s": plan.budget_s,
        "profile_ops": plan.options.profile_ops,
        "peaks": {p.dtype: p.tflops for p in peaks or [] if p.device == group.device},
        "compile_cache": plan.compile_cache,
    }
    job["seed_process"] = protocol.seed_process(job)
    # what an interrupted run recorded as failed: a ladder resumed above a failed rung stays stopped
    failed = [[i, m.error.type if m.error else "failed"] for i, m in done.items() if m.status == "failed"]
    if failed:
        job["failed"] = failed
    measurements: dict[int, Measurement] = dict(done)
    by_index = {i: case for i, case in zip(group.indices, group.cases, strict=True) if i not in done}

    def on_event(event: dict[str, Any]) -> None:
        kind = event.get("event")
        index = event.get("index")
        if index not in by_index:
            return
        case = by_index[index]
        if kind == "start":
            progress.case_started(group, case)
        elif kind == "progress":
            progress.case_progress(group, case, event["samples"], event["elapsed"])
        elif kind == "result":
            error = event.get("error")
            if event["status"] == "ok":
                try:
                    m = Measurement(**event["measurement"])
                except ValidationError as exc:  # a workload produced numbers the format rejects
                    error = {"type": "InvalidMeasurement", "message": str(exc)[:4000]}
            if event["status"] == "skipped":
                reason = str(event.get("skip_reason") or "skipped by the workload")[:4000]
                m = _unmeasured(group, case, device_name(plan, group.device), status="skipped", skip_reason=reason)
            elif error is not None:
                m = _unmeasured(group, case, device_name(plan, group.device), status="failed", error=error)
            measurements[index] = m
            on_measured(index, m)
            progress.case_finished(group, case, m)

    # A seed's loop runs a process per point anyway: its twin, where it has one, follows each point at once, so that
    # the rounds of both sides are taken close together.
    batches = [[i] for i in by_index] if job["seed_process"] else [list(by_index)]
    untwinned = _untwinned(plan, group, done)
    spare_pools = _Spares(plan, group, job, [i for b in batches for i in b] + untwinned)

    def twin(index: int) -> None:
        twinned = _with_twin(plan, group, job, index, measurements.get(index), progress, spare_pools)
        if twinned is not None:
            measurements[index] = twinned
            on_measured(index, twinned)  # the journal's later line for this point replaces the earlier one

    try:
        # A point an interrupted run measured but did not twin (the kill came during its rounds) gets its twin first.
        for index in untwinned:
            twin(index)
        for batch in batches:
            if batch:
                # spares are on only where each batch is one point (a seed's group)
                take = functools.partial(spare_pools.take_worker, batch[0])
                executor.run_cases(job, batch, plan.timeout_s, on_event, take)
            for index in batch:
                twin(index)
    finally:
        spare_pools.close()
    return [measurements[i] for i in group.indices if i in measurements]


class _Spares:
    """The group's spare interpreters (runner.measure.spares), where its points each run in a fresh one: the
    measuring processes (one per point, and one per twin round after the first) and the twins' scripts (one per
    round). Started a batch at a time, sized by what the group still needs. Off with BENCHSITE_SPARES=0, and for
    every other group (those fork their framework's server)."""

    def __init__(self, plan: Plan, group: Group, job: dict[str, Any], indices: list[int]):
        self.on = bool(job["seed_process"]) and os.environ.get(SPARES_ENV, "1") != "0"
        twinned = [i for i in indices if plan.options.twins and _twin_of(group, i) is not None]
        rounds = plan.options.fidelity_rounds
        # What each point imports before its loop in any case (a transformer point: its model family's module too).
        # Upper bounds of how many measuring processes will want each (a point with long units takes fewer twin
        # rounds) size the batches.
        self.imports = {i: protocol.seed_imports(group.workload.id, group.case(i).config) for i in indices}
        expected = Counter(self.imports[i] for i in indices)
        expected.update(self.imports[i] for i in twinned for _ in range(rounds - 1))
        self.workers = {
            imports: spares.Pool(spares.worker_argv(group.framework, imports), expected=count)
            for imports, count in expected.items()
        }
        twin = _twin_of(group, twinned[0]) if twinned else None  # a group's points are one seed's
        scripts = spares.script_argv(*(twin.imports if twin else fidelity.SCRIPT_IMPORTS))
        self.scripts = spares.Pool(scripts, expected=len(twinned) * rounds)
        # every kind starts beside the others (the scripts' first, as a twin follows its point): one wait, not several
        pools = [self.scripts, *self.workers.values()]
        for pool in pools:
            pool.partners = [other for other in pools if other is not pool]

    def worker_pool(self, index: int) -> spares.Pool:
        """The pool of measuring processes that imported ahead what this point imports."""
        return self.workers[self.imports[index]]

    def take_worker(self, index: int) -> spares.Spare | None:
        return self.worker_pool(index).take() if self.on else None

    def take_script(self) -> spares.Spare | None:
        return self.scripts.take() if self.on else None

    def close(self) -> None:
        for pool in self.workers.values():
            pool.close()
        self.scripts.close()


def _twin_of(group: Group, index: int) -> fidelity.Twin | None:
    case = group.case(index)
    return fidelity.twin_for(group.workload.id, group.variant, case.point, case.config, group.framework, group.device)


def _untwinned(plan: Plan, group: Group, done: dict[int, Measurement]) -> list[int]:
    """Points an interrupted run measured whose twin is due but was not recorded (nor given up on)."""
    if not plan.options.twins:
        return []
    return [
        index
        for index, m in done.items()
        if m.status == "ok"
        and m.fidelity is None
        and not any(w.startswith("fidelity twin not recorded") for w in m.warnings)
        and index in group.indices
        and fidelity.twin_for(
            group.workload.id,
            group.variant,
            m.point,
            group.case(index).config,
            group.framework,
            group.device,
        )
        is not None
    ]


def _with_twin(
    plan: Plan,
    group: Group,
    job: dict[str, Any],
    index: int,
    m: Measurement | None,
    progress: Progress,
    pools: _Spares | None = None,
) -> Measurement | None:
    """The measurement with its `fidelity` block (runner.fidelity), where the run asks for twins and a seed script
    covers the point; None otherwise. Rounds alternate: the harness (round 1 is `m` itself, later rounds measure the
    point again in a fresh measuring process with a budget of fidelity.SIDE_S) and the script in a fresh
    interpreter, timing about SIDE_S of units (at least one). A point with long units takes fewer rounds
    (fidelity.rounds_for). A script or re-measurement that fails ends the twin with a warning on the measurement;
    the measurement itself stands."""
    if m is None or m.status != "ok" or not m.samples_s or not plan.options.twins:
        return None
    case = group.case(index)
    twin = _twin_of(group, index)
    if twin is None:
        return None
    harness = [fidelity.mean_per_unit(m.samples_s)]
    side_s = min(plan.budget_s, fidelity.SIDE_S)
    units = fidelity.units_for(harness[0], side_s)
    rounds = fidelity.rounds_for(plan.options.fidelity_rounds, (m.warmup_s or harness[0]) + units * harness[0])
    again_job = {**job, "budget_s": side_s}
    script: list[float] = []
    label = " ".join([group.workload.id, *(f"{k}={v}" for k, v in case.point.items()), "on", group.device])
    try:
        for round_ in range(rounds):
            progress.note(f"Fidelity twin {twin.script} for {label}: round {round_ + 1} of {rounds}")
            script_first = fidelity.script_first(round_)
            if script_first:
                script.append(_twin_script(twin, group.device, units, plan.timeout_s, pools, round_))
            if round_:
                began = time.perf_counter()
                again = executor.run_cases(
                    again_job,
                    [index],
                    plan.timeout_s,
                    lambda event: None,
                    functools.partial(pools.take_worker, index) if pools else None,
                )
                _log_twin_side(twin, "harness", round_, began)
                event = again.get(index, {})
                if event.get("status") != "ok":
                    raise fidelity.ScriptFailed(
                        f"the harness's round {round_ + 1} did not measure: {event.get('error')}"
                    )
                harness.append(fidelity.mean_per_unit(event["measurement"]["samples_s"]))
            if not script_first:
                script.append(_twin_script(twin, group.device, units, plan.timeout_s, pools, round_))
    except fidelity.ScriptFailed as exc:
        warning = f"fidelity twin not recorded: {privacy.scrub(str(exc))}"[:4000]
        return m.model_copy(update={"warnings": [*m.warnings, warning]})
    block = fidelity.block(twin, group.device, harness, script, [units] * len(script))
    twinned = Measurement(**{**m.model_dump(), "fidelity": block})
    progress.note(
        f"Fidelity {twin.script} for {label}: benchsite / script {block['ratio']:.3f} "
        f"({block['ci95'][0]:.3f} .. {block['ci95'][1]:.3f}), {block['verdict']}"
    )
    return twinned


def _twin_script(
    twin: fidelity.Twin, device: str, units: int, timeout_s: float, pools: _Spares | None, round_: int = 0
) -> float:
    """One run of a twin's script, in a spare interpreter where the run started them ahead."""
    began = time.perf_counter()
    spare = pools.take_script() if pools is not None else None
    ran = time.perf_counter()
    per_unit = fidelity.run_script(twin, device, units, timeout_s, spare)
    _log_twin_side(twin, "script", round_, began, spare_s=ran - began, timed_s=per_unit * units)
    return per_unit


def _log_twin_side(twin: fidelity.Twin, side: str, round_: int, began: float, **more: float) -> None:
    """A twin round's side in the phase log (runner.measure.protocol.log_phases): its wall time, and for the script
    the wait for its spare interpreter and the seconds its own timer covered (the rest is its start, data, model
    and warm-up unit)."""
    protocol.log_phases(
        {
            "twin": twin.script,
            "args": list(twin.args),
            "side": side,
            "round": round_ + 1,
            "wall_s": time.perf_counter() - began,
            **more,
            "ended_at": time.time(),
        }
    )


def output_is_folder(output: Path) -> bool:
    """--output names a folder when it is one, or when it does not end in .yaml or .yml."""
    return output.is_dir() or output.suffix.lower() not in (".yaml", ".yml")


def output_folder(options: RunOptions) -> Path:
    """The folder the result file goes into (or under, for <machine-id>/): checked before measuring."""
    if options.output is None:
        return options.results_dir
    return options.output if output_is_folder(options.output) else options.output.parent


def default_output(plan: Plan, started: datetime) -> Path:
    """--output FILE as given; otherwise <folder>/<machine-id>/<UTC time>.yaml, the folder being --output's or
    results/."""
    output = plan.options.output
    if output is not None and not output_is_folder(output):
        return output
    return output_folder(plan.options) / plan.machine.id / file_name(started)


def options_record(options: RunOptions) -> dict[str, Any]:
    """The options as JSON (the journal keeps them, so that --resume measures what the run set out to)."""
    record = dataclasses.asdict(options)
    for name in ("output", "results_dir"):
        record[name] = str(record[name]) if record[name] is not None else None
    return record


def options_from_record(record: dict[str, Any]) -> RunOptions:
    fields = {f.name for f in dataclasses.fields(RunOptions)}
    values = {k: v for k, v in record.items() if k in fields}
    for name in ("output", "results_dir"):
        if values.get(name) is not None:
            values[name] = Path(values[name])
    return RunOptions(**values)


def journal_folder(options: RunOptions) -> Path:
    """Where a run with these options keeps its journal (what `--resume` reads)."""
    return journal.journal_dir(output_folder(options))


def find_unfinished(options: RunOptions, machine_id: str = "*") -> journal.Recovered | None:
    """The newest unfinished run (of this machine, given its id) whose journal lies beside `options`' results
    folder."""
    for path in journal.unfinished(journal.journal_dir(output_folder(options)), machine_id):
        try:
            return journal.read(path)
        except (OSError, ValueError):
            continue
    return None


def execute(
    plan: Plan, progress: Progress | None = None, resume: journal.Recovered | None = None
) -> tuple[ResultFile, Path | None]:
    """Run the plan and write the result file; Ctrl-C keeps what finished and still writes it.

    Every finished piece is journaled as it ends (runner.measure.journal), so a run killed outright (kill -9, the
    out-of-memory killer, a power cut) loses nothing that finished: `resume`, that run's journal, skips what
    it holds and the file gets the run's own id and start time. Returns the result and where it was written
    (None if interrupted before anything finished)."""
    progress = progress or Progress()
    if resume is not None and resume.machine_id != plan.machine.id:
        raise PlanError(f"{resume.path} is a run of machine {resume.machine_id}; this machine is {plan.machine.id}")
    run_id = resume.run_id if resume else uuid.uuid4().hex
    started = resume.started_at if resume else datetime.now(timezone.utc)
    log = _open_journal(plan, run_id, started, resume, progress)
    if resume is not None:
        progress.note(f"Resuming run {run_id}: {resume.count} measurement(s) already finished are kept.")
    for note in plan.notes:
        progress.note(note)
    measurements: list[Measurement] = []
    selftests: list[SyncSelfTest] = []
    checks: list[EquivalenceCheck] = []
    peaks: list[DevicePeak] = []
    interrupted = False
    phases = plan.phase_s

    def phase(kind: str, kept: list[Any] | None, run: Callable[[], list[Any]]) -> list[Any]:
        if kept is not None:
            return kept
        items = run()
        if log is not None:
            log.phase(kind, items)
        return items

    cache = contextlib.ExitStack()
    try:
        cache.enter_context(compile_cache(plan))
        with _phase(phases, "sync self-tests"):
            selftests = phase("selftests", resume.selftests if resume else None, lambda: run_selftests(plan))
        for test in selftests:
            if not test.passed:
                progress.note(f"WARNING: {test.framework} sync self-test failed on {test.device}: {test.detail}")
        with _phase(phases, "matrix-product peaks"):
            peaks = phase("peaks", resume.peaks if resume else None, lambda: run_peaks(plan, progress))
        with _phase(phases, "equivalence check"):
            checks = phase(
                "equivalence", resume.equivalence if resume else None, lambda: run_equivalence(plan, progress)
            )
        for group in plan.groups:
            key = journal.group_key(group.framework, group.device, group.workload.id, group.variant)
            done = resume.measurements.get(key, {}) if resume else {}

            def record(index: int, m: Measurement, key: str = key) -> None:
                if log is not None:
                    log.measurement(key, index, m)

            if ahead_children(plan, group, len(group.indices)):
                with _phase(phases, f"compile ahead {group.framework} {group.workload.id}"):
                    compile_ahead(plan, group, progress, done)
            with _phase(phases, f"measure {group.framework} {group.workload.id}"):
                measurements.extend(measure_group(plan, group, progress, done, record, peaks))
    except (executor.Interrupted, KeyboardInterrupt):
        interrupted = True
        progress.note("Interrupted: writing the measurements that finished.")
    finally:
        executor.close_fork_servers()
        cache.close()
        if log is not None:
            log.close()
    finished = datetime.now(timezone.utc)
    result = ResultFile(
        schema_version=SCHEMA_VERSION,
        benchsite_version=__version__,
        suite=Suite(version=SUITE_VERSION, profile=plan.options.profile),
        run=Run(
            id=run_id,
            started_at=started,
            finished_at=finished,
            command=plan.options.command,
            time_budget_s=plan.budget_s,
            interrupted=interrupted,
        ),
        machine=plan.machine,
        software=plan.software,
        sync_selftests=selftests,
        equivalence=checks,
        device_peaks=peaks,
        measurements=measurements,
    )
    if interrupted and not measurements:
        return result, None
    path = default_output(plan, started)
    try:
        save(result, path)
    except OSError as exc:  # the disk filled up or the folder went away during the run: keep the numbers
        fallback = Path(tempfile.gettempdir()) / f"benchsite-{result.run.id}.yaml"
        save(result, fallback)
        progress.note(f"WARNING: could not write {path} ({exc.strerror or exc}); the result is in {fallback}")
        return result, fallback
    if log is not None and not interrupted:
        log.remove()  # the file holds everything now; an interrupted run keeps its journal for --resume
    return result, path


def _open_journal(
    plan: Plan, run_id: str, started: datetime, resume: journal.Recovered | None, progress: Progress
) -> journal.Journal | None:
    try:
        if resume is not None:
            return journal.Journal.reopen(resume)
        folder = journal.journal_dir(output_folder(plan.options))
        return journal.Journal.create(folder, run_id, started, plan.machine.id, options_record(plan.options))
    except OSError as exc:
        progress.note(f"WARNING: no journal ({exc.strerror or exc}): a run killed outright loses what it measured")
        return None


def command_line(args: dict[str, Any]) -> str:
    """The benchsite command as run, without paths (they can name the user) or a Spark master's address."""
    parts = ["benchsite", "run"]
    for key, value in args.items():
        if value in (None, [], False) or key in ("output", "results_dir"):
            continue
        flag = "--" + key.replace("_", "-")
        if key == "spark_master":  # a cluster's address names the user's hosts: its kind only
            from runner.engines.spark.master import master_kind

            value = master_kind(str(value))
        for item in value if isinstance(value, list) else [value]:
            parts += [flag] if item is True else [flag, str(item)]
    return shlex.join(parts)[:200]
