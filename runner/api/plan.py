"""The plan of a run: the options checked, the frameworks and the machine probed, and the groups of cases that
will be measured (plan_run); Progress, the callbacks a front end follows the run with."""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import os
import platform
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runner import fidelity
from runner.api.options import DEFAULT_BUDGET_S, DEFAULT_TIMEOUT_S, PlanError, RunOptions, ahead_children_override
from runner.api.output import output_folder
from runner.fingerprint import collect_machine
from runner.frameworks import DEVICE_KINDS, FRAMEWORKS, canonical_framework
from runner.measure import executor
from runner.results.schema import Accelerator, FrameworkInfo, Machine, Measurement, Software
from runner.workloads import PROFILES, VARIANTS, Case, Workload, select
from runner.workloads.suite import CPU_WORLD_MAX

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
def clocked(phases: dict[str, float], name: str) -> Iterator[None]:
    """Add the wall time of the block to phases[name] (benchmarks and the run's summary read it)."""
    start = time.perf_counter()
    try:
        yield
    finally:
        phases[name] = phases.get(name, 0.0) + time.perf_counter() - start


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

    def twin(self, index: int) -> fidelity.Twin | None:
        """The seed script that twins the point at this position (runner.fidelity), where one covers it."""
        case = self.case(index)
        return fidelity.twin_for(self.workload.id, self.variant, case.point, case.config, self.framework, self.device)


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
    energy: list[Any] = field(default_factory=list)  # the energy sources found before measuring (checks.run_energy)

    @property
    def total(self) -> int:
        return sum(len(g.cases) for g in self.groups)

    def rounds_of(self, group: Group) -> int:
        """How many rounds (independent processes) the group's points are measured in (runner.api.rounds): the
        run's --rounds, one for a streaming workload."""
        if all(case.unit == "latency" for case in group.cases):
            return 1
        return self.options.rounds

    def job(self, group: Group, kind: str) -> dict[str, Any]:
        """What every child process working for the group is told first (a measuring process, a compile-ahead
        child): the kind of job, the group and the run's profile."""
        return {
            "kind": kind,
            "framework": group.framework,
            "device": group.device,
            "cpu_name": self.machine.cpu.model,
            "workload": group.workload.id,
            "variant": group.variant,
            "profile": self.options.profile,
        }


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
    with clocked(phases, "probe frameworks and hardware"):
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
    left_out: dict[str, list[str]] = {}  # why -> what the profile leaves out for that reason
    standard_measures = True  # whether the standard profile measures everything left out here
    for workload in workloads:
        cases = workload.cases(options.profile)
        if not cases:
            continue
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
                    out = workload.left_out_on(options.profile, kind, variant)
                    if out is not None:
                        left_out.setdefault(out.why, []).append(workload.id + out.where(kind))
                        standard_measures &= workload.left_out_on("standard", kind, variant) is None
                        continue
                    groups += _groups(workload, framework, kind, variant, cases, skip, device_count(machine, kind))
    for why, what in left_out.items():
        notes.append(f"The {options.profile} profile leaves out {', '.join(dict.fromkeys(what))}: {why}.")
    if not groups and left_out:
        instead = " The standard profile measures it (--profile standard)." if standard_measures else ""
        raise PlanError(f"nothing to measure: {' '.join(notes[-len(left_out) :])}{instead}")
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
