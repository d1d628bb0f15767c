"""Energy counters read at the bounds of a measurement's steady state: what a unit of work costs in joules.

Energy is measured, never estimated (no figure from a TDP). Sources:

- **NVIDIA, `nvml-counter`**: NVML's total-energy counter of the device (millijoules since the driver loaded; Volta
  and later). **`nvml-power-samples`** where the counter does not exist: the board's power read every
  SAMPLE_EVERY_S by a thread and integrated (trapezoids).
- **AMD, `amdsmi-counter`**: ROCm amdsmi's energy accumulator of the board (bare metal; not in a VM's guest).
- **Apple silicon, `powermetrics`**: macOS's powermetrics (root only), a sample every 100 ms of the energy the CPU
  or the GPU used, summed; on a Mac it is the CPU's source too.
- **CPU, `rapl`**: RAPL through Linux's powercap (`/sys/class/powercap`): every package's zone and its DRAM subzone,
  summed. `psys` (the whole platform, which holds the packages) and the `core` and `uncore` subzones (inside their
  package) are left out, and a zone whose name repeats another's (the `intel-rapl-mmio` copy of a package) is read
  once, so nothing is counted twice; a package split into dies lists each die as a zone of its own, and each is read.
  A counter wraps at its `max_energy_range_uj`: a reading below the one before it has wrapped once (reads come
  seconds apart, a wrap takes minutes at full power).

A counter advances in steps (NVML's about every 0.1 s on an H200), so a window of a few steps cannot be attributed:
each source's update period is measured once before measuring (counter_period), and a round whose steady window is
shorter than MIN_PERIODS of it is reported as too short, never as a figure (runner.results.energy). The idle power
is measured once too (idle_power), so that energy above idle can be reported beside the total.

Where a source cannot be read, `probe` says why (RAPL's counters are readable by root only on current kernels) and
the run goes on without it.
"""

from __future__ import annotations

import dataclasses
import importlib
import itertools
import os
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

POWERCAP = Path("/sys/class/powercap")
POWERCAP_ENV = "BENCHSITE_POWERCAP"  # where powercap is, where a container mounts it elsewhere
NVML_FI_DEV_POWER_INSTANT = 186  # nvmlDeviceGetFieldValues' field id of the board's instantaneous power (milliwatts)
SAMPLE_EVERY_S = 0.01  # the power sampler's period where NVML has no energy counter
PERIOD_PROBE_S = 1.0  # how long a counter is watched to find its update period
IDLE_PROBE_S = 2.0  # how long the idle power is measured over
RAPL_HOW_TO_ALLOW = (
    "run as root, or allow reading the counters until the next boot: "
    "sudo chmod a+r /sys/class/powercap/intel-rapl:*/energy_uj /sys/class/powercap/intel-rapl:*:*/energy_uj"
)


class Unreadable(Exception):
    """A source that cannot be read here; the message says why and, where it can be allowed, how."""


@dataclass(frozen=True)
class RaplZone:
    name: str  # the zone's own name: package-0, package-0-die-1, dram
    package: str  # the package zone it belongs to (itself for a package)
    energy: Path  # energy_uj
    max_range_uj: int


def powercap_root() -> Path:
    """Linux powercap's folder: BENCHSITE_POWERCAP where set, else /sys/class/powercap."""
    return Path(os.environ.get(POWERCAP_ENV) or POWERCAP)


def rapl_zones(root: Path | None = None) -> list[RaplZone]:
    """The zones to sum for the CPU's energy: each package (or die) and its DRAM subzone, nothing twice (module
    docstring). Unreadable where there are none or their counters cannot be read (the reason in the message)."""
    root = root or powercap_root()
    if not root.is_dir():
        raise Unreadable(f"no RAPL: {root} does not exist (a VM or a CPU without RAPL gives no CPU energy)")
    tops = sorted(p for p in root.iterdir() if p.name.startswith("intel-rapl") and p.name.count(":") == 1)
    zones: list[RaplZone] = []
    seen: set[str] = set()
    for top in sorted(tops, key=lambda p: (p.name.startswith("intel-rapl-mmio"), p.name)):  # the msr zones first
        name = _name(top)
        if not name.startswith("package") or name in seen:
            continue  # psys holds the packages; a repeated name is a copy (intel-rapl-mmio)
        seen.add(name)
        zones.append(_zone(top, name, name))
        for sub in sorted(top.glob(f"{top.name}:*")):
            if _name(sub) == "dram":
                zones.append(_zone(sub, "dram", name))
    if not zones:
        raise Unreadable(f"no RAPL package zone under {root} (a VM or a CPU without RAPL gives no CPU energy)")
    for zone in zones:
        try:
            int(zone.energy.read_text())
        except PermissionError:
            raise Unreadable(
                f"RAPL's counters ({zone.energy}) are readable by root only; {RAPL_HOW_TO_ALLOW}"
            ) from None
        except (OSError, ValueError) as exc:
            raise Unreadable(f"RAPL's counter {zone.energy} cannot be read: {exc}") from None
    return zones


def _name(zone: Path) -> str:
    try:
        return (zone / "name").read_text().strip()
    except OSError:
        return ""


def _zone(path: Path, name: str, package: str) -> RaplZone:
    try:
        top = int((path / "max_energy_range_uj").read_text())
    except (OSError, ValueError):
        raise Unreadable(f"RAPL zone {path} has no readable max_energy_range_uj") from None
    return RaplZone(name, package, path / "energy_uj", top)


class RaplMeter:
    """The CPU's energy since the meter was made (joules), summed over rapl_zones, each zone's wraps undone."""

    source = "rapl"

    def __init__(self, zones: list[RaplZone]) -> None:
        self.zones = zones
        self.domains = [z.name if z.name != "dram" else f"dram ({z.package})" for z in zones]
        self._last = [int(z.energy.read_text()) for z in zones]
        self._total_uj = 0

    def read(self) -> float:
        for i, zone in enumerate(self.zones):
            raw = int(zone.energy.read_text())
            step = raw - self._last[i]
            if step < 0:  # wrapped once since the last read
                step += zone.max_range_uj
            self._total_uj += step
            self._last[i] = raw
        return self._total_uj / 1e6

    def close(self) -> None:
        pass


class NvmlCounter:
    """An NVIDIA device's energy counter (joules since the driver loaded)."""

    source = "nvml-counter"

    def __init__(self, nvml: Any, handle: Any, index: int) -> None:
        self.nvml, self.handle = nvml, handle
        self.domains = [f"gpu {index}"]

    def read(self) -> float:
        return float(self.nvml.nvmlDeviceGetTotalEnergyConsumption(self.handle)) / 1e3

    def close(self) -> None:
        pass


def instant_watts(nvml: Any, handle: Any) -> float | None:
    """The board's instantaneous power (NVML_FI_DEV_POWER_INSTANT), or None where the driver has no such field.
    nvmlDeviceGetPowerUsage averages over a second on Ampere (except GA100) and later boards, so integrating it
    lags every change of load by up to a second; before Ampere it is instantaneous itself."""
    try:
        value = nvml.nvmlDeviceGetFieldValues(handle, [NVML_FI_DEV_POWER_INSTANT])[0]
    except Exception:  # an older driver or nvidia-ml-py without field values
        return None
    if value.nvmlReturn != 0:
        return None
    return float(value.value.uiVal) / 1e3


class NvmlPowerSampler:
    """Where a device has no energy counter (before Volta): its power read every SAMPLE_EVERY_S by a thread and
    integrated (trapezoids); read() is the energy up to its last sample (joules). The instantaneous power where the
    driver gives it (instant_watts), else nvmlDeviceGetPowerUsage."""

    source = "nvml-power-samples"

    def __init__(self, nvml: Any, handle: Any, index: int, every_s: float = SAMPLE_EVERY_S) -> None:
        self.nvml, self.handle, self.every_s = nvml, handle, every_s
        self.domains = [f"gpu {index}"]
        self.instant = instant_watts(nvml, handle) is not None
        self._lock = threading.Lock()
        self._joules = 0.0
        self._last = (time.perf_counter(), self._watts())
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="benchsite-power-sampler", daemon=True)
        self._thread.start()

    def _watts(self) -> float:
        if self.instant:
            watts = instant_watts(self.nvml, self.handle)
            if watts is not None:
                return watts
        return float(self.nvml.nvmlDeviceGetPowerUsage(self.handle)) / 1e3

    def _sample(self) -> None:
        now, watts = time.perf_counter(), self._watts()
        with self._lock:
            then, before = self._last
            self._joules += (now - then) * (watts + before) / 2
            self._last = (now, watts)

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            self._sample()

    def read(self) -> float:
        self._sample()
        with self._lock:
            return self._joules

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=1.0)


def nvml_meter(index: int, nvml: Any = None) -> NvmlCounter | NvmlPowerSampler:
    """The NVML source of the device at NVML index `index`: its counter, or sampled power where it has none."""
    if nvml is None:
        try:
            import pynvml  # nvidia-ml-py
        except ImportError:
            raise Unreadable("NVIDIA energy needs nvidia-ml-py (pip install 'benchsite[nvidia]')") from None
        nvml = pynvml
    try:
        nvml.nvmlInit()
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
    except Exception as exc:  # NVMLError_LibraryNotFound, DriverNotLoaded, InvalidArgument
        raise Unreadable(f"NVML cannot read GPU {index}: {exc}") from None
    try:
        nvml.nvmlDeviceGetTotalEnergyConsumption(handle)
        return NvmlCounter(nvml, handle, index)
    except Exception:  # NVMLError_NotSupported: a board before Volta
        try:
            nvml.nvmlDeviceGetPowerUsage(handle)
        except Exception as exc:
            raise Unreadable(f"GPU {index} reports neither an energy counter nor its power: {exc}") from None
        return NvmlPowerSampler(nvml, handle, index)


class AmdsmiCounter:
    """An AMD accelerator's energy accumulator through amdsmi (joules since the driver loaded): the accumulator times
    its resolution (microjoules a count)."""

    source = "amdsmi-counter"

    def __init__(self, amdsmi: Any, handle: Any, index: int) -> None:
        self.amdsmi, self.handle = amdsmi, handle
        self.domains = [f"gpu {index}"]

    def read(self) -> float:
        got = self.amdsmi.amdsmi_get_energy_count(self.handle)
        count = got["energy_accumulator"] if "energy_accumulator" in got else got["power"]  # the name before ROCm 6.1
        return float(count) * float(got["counter_resolution"]) / 1e6

    def close(self) -> None:
        pass


def amdsmi_meter(index: int, amdsmi: Any = None) -> AmdsmiCounter:
    """The energy counter of the AMD accelerator at amdsmi's index `index` (an Instinct or Radeon board on bare metal;
    amdsmi does not give it in a virtual machine's guest)."""
    if amdsmi is None:
        try:
            amdsmi = importlib.import_module("amdsmi")  # ROCm's amd_smi Python package
        except ImportError:
            raise Unreadable("AMD energy needs ROCm's amdsmi Python package (it ships with ROCm 6)") from None
    try:
        amdsmi.amdsmi_init()
        handle = amdsmi.amdsmi_get_processor_handles()[index]
        meter = AmdsmiCounter(amdsmi, handle, index)
        meter.read()
    except Exception as exc:  # AmdSmiLibraryException: not supported (a VM guest), no such device
        raise Unreadable(f"amdsmi cannot read GPU {index}'s energy counter: {exc}") from None
    return meter


POWERMETRICS = "/usr/bin/powermetrics"
POWERMETRICS_EVERY_MS = 100


class PowermetricsSampler:
    """Apple silicon's CPU or GPU energy from macOS's powermetrics (root only): a sample every POWERMETRICS_EVERY_MS
    as a property list, each with the energy the domain used over its interval (`processor`'s `cpu_energy` or
    `gpu_energy`, millijoules), summed by a thread; read() is the energy up to the last sample (joules)."""

    source = "powermetrics"

    def __init__(self, domain: str, command: list[str] | None = None) -> None:
        import subprocess

        self.domain = domain  # cpu or gpu
        self.domains = [domain]
        self._lock = threading.Lock()
        self._joules = 0.0
        self._proc = subprocess.Popen(
            command or [POWERMETRICS, "--samplers", "cpu_power,gpu_power", "-i", str(POWERMETRICS_EVERY_MS),
                        "-f", "plist"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        self._first = threading.Event()
        self._thread = threading.Thread(target=self._run, name="benchsite-powermetrics", daemon=True)
        self._thread.start()
        if not self._first.wait(2.0 + 5 * POWERMETRICS_EVERY_MS / 1e3):
            self.close()
            raise Unreadable("powermetrics gave no sample (it needs root: sudo benchsite run)")

    def _run(self) -> None:
        import plistlib

        assert self._proc.stdout is not None
        buffer = b""
        while chunk := self._proc.stdout.read1(65536):  # type: ignore[attr-defined]
            buffer += chunk
            *documents, buffer = buffer.split(b"\0")  # powermetrics ends each sample's property list with a NUL
            for document in documents:
                if not document.strip():
                    continue
                try:
                    sample = plistlib.loads(document.strip())
                except Exception:
                    continue
                millijoules = sample.get("processor", {}).get(f"{self.domain}_energy")
                if millijoules is None:
                    continue
                with self._lock:
                    self._joules += float(millijoules) / 1e3
                self._first.set()

    def read(self) -> float:
        with self._lock:
            return self._joules

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=2.0)
            except Exception:
                self._proc.kill()
                self._proc.wait()
        self._thread.join(timeout=1.0)
        if self._proc.stdout is not None:
            self._proc.stdout.close()


def powermetrics_meter(domain: str) -> PowermetricsSampler:
    """Apple silicon's `domain` (cpu or gpu) energy, where powermetrics can run (macOS, as root)."""
    import platform

    if platform.system() != "Darwin":
        raise Unreadable("powermetrics is macOS's")
    if os.geteuid() != 0:
        raise Unreadable("powermetrics needs root on macOS: sudo benchsite run (or --no-energy)")
    return PowermetricsSampler(domain)


def visible_gpu_index() -> int:
    """The index of the GPU a measuring process uses (its first device) for NVML or amdsmi: the first entry of
    CUDA_VISIBLE_DEVICES (or ROCm's HIP_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES) where it names an index, else 0."""
    for name in ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"):
        first = os.environ.get(name, "").split(",")[0].strip()
        if first.isdigit():
            return int(first)
    return 0


def counter_period(
    read: Callable[[], float],
    watch_s: float = PERIOD_PROBE_S,
    clock: Callable[[], float] = time.perf_counter,
    pause: Callable[[float], None] = time.sleep,
) -> float | None:
    """How often the counter advances (seconds): the median time between changes of its reading, watched for
    watch_s; None where it changed fewer than three times."""
    changes: list[float] = []
    start = clock()
    last = read()
    while clock() - start < watch_s:
        pause(0.0005)
        value = read()
        if value != last:
            changes.append(clock())
            last = value
    if len(changes) < 3:
        return None
    return statistics.median(b - a for a, b in itertools.pairwise(changes))


def idle_power(
    read: Callable[[], float],
    over_s: float = IDLE_PROBE_S,
    clock: Callable[[], float] = time.perf_counter,
    pause: Callable[[float], None] = time.sleep,
) -> float:
    """The average power (watts) over over_s with nothing measured."""
    t0, e0 = clock(), read()
    pause(over_s)
    t1, e1 = clock(), read()
    return (e1 - e0) / (t1 - t0) if t1 > t0 else 0.0


@dataclass
class Probe:
    """One energy source as the run found it before measuring: readable (with its domains, update period and idle
    power) or why not. `of`: the measured device itself (`device`), or the host CPU read while an accelerator
    measures (`host`)."""

    device: str  # the device kind whose measurements it serves: cpu, cuda
    source: str
    of: str = "device"
    domains: list[str] = field(default_factory=list)
    counter_period_s: float | None = None
    idle_power_w: float | None = None
    reason: str | None = None  # why it cannot be read, and how to allow it where it can be

    @property
    def readable(self) -> bool:
        return self.reason is None

    def as_job(self) -> dict[str, Any]:
        """What a measuring process is told of a readable source (its job's `energy`)."""
        return {k: v for k, v in dataclasses.asdict(self).items() if k != "reason"}


def probe(devices: list[str], powercap: Path | None = None, nvml: Any = None) -> list[Probe]:
    """Every energy source for the run's devices (cpu, cuda, rocm, mps), each read once for its update period and
    idle power, or why it cannot be read. An accelerator's measurements read the host CPU's source too (RAPL, or
    powermetrics on a Mac), where it is readable."""
    import platform

    found: list[Probe] = []
    rapl: Probe
    if platform.system() == "Darwin":  # Apple silicon: the CPU's energy is powermetrics', there is no RAPL
        rapl = _probe_of("cpu", "powermetrics", lambda: powermetrics_meter("cpu"))
    else:
        rapl = _probe_of("cpu", "rapl", lambda: RaplMeter(rapl_zones(powercap)))
    if "cpu" in devices:
        found.append(rapl)
    if "rocm" in devices:
        found.append(_probe_of("rocm", "amdsmi-counter", lambda: amdsmi_meter(visible_gpu_index())))
        found.append(Probe("rocm", rapl.source, "host", rapl.domains, rapl.counter_period_s, rapl.idle_power_w,
                           rapl.reason))  # fmt: skip
    if "mps" in devices:
        found.append(_probe_of("mps", "powermetrics", lambda: powermetrics_meter("gpu")))
        found.append(Probe("mps", rapl.source, "host", rapl.domains, rapl.counter_period_s, rapl.idle_power_w,
                           rapl.reason))  # fmt: skip
    if "cuda" in devices:
        try:
            gpu = nvml_meter(visible_gpu_index(), nvml)
            try:
                period = counter_period(gpu.read) if gpu.source == "nvml-counter" else None
                idle = idle_power(gpu.read)
            finally:
                gpu.close()
            found.append(Probe("cuda", gpu.source, domains=gpu.domains, counter_period_s=period, idle_power_w=idle))
        except Unreadable as exc:
            found.append(Probe("cuda", "nvml-counter", reason=str(exc)))
        found.append(Probe("cuda", "rapl", "host", rapl.domains, rapl.counter_period_s, rapl.idle_power_w, rapl.reason))
    return found


def _probe_of(device: str, source: str, make: Callable[[], Any]) -> Probe:
    """A source probed as `probe` does: opened, watched for its update period and idle power, closed; or why not."""
    try:
        meter = make()
    except Unreadable as exc:
        return Probe(device, source, reason=str(exc))
    try:
        period = counter_period(meter.read)
        return Probe(
            device, source, domains=meter.domains, counter_period_s=period, idle_power_w=idle_power(meter.read)
        )
    finally:
        meter.close()


def meters_for(jobs: list[dict[str, Any]], nvml: Any = None) -> list[tuple[dict[str, Any], Any]]:
    """In a measuring process: a meter for each readable source of its device (Probe.as_job), with its probe; a
    source that cannot be opened here is left out."""
    out: list[tuple[dict[str, Any], Any]] = []
    for job in jobs:
        try:
            if job["source"] == "rapl":
                out.append((job, RaplMeter(rapl_zones())))
            elif job["source"].startswith("nvml"):
                out.append((job, nvml_meter(visible_gpu_index(), nvml)))
            elif job["source"] == "amdsmi-counter":
                out.append((job, amdsmi_meter(visible_gpu_index())))
            elif job["source"] == "powermetrics":
                out.append((job, powermetrics_meter("cpu" if job["device"] == "cpu" or job["of"] == "host" else "gpu")))
        except Unreadable:
            continue
    return out


@contextmanager
def opened(jobs: list[dict[str, Any]]) -> Iterator[list[tuple[dict[str, Any], Any]]]:
    """meters_for, closed at the end (a power sampler's thread stops)."""
    meters = meters_for(jobs)
    try:
        yield meters
    finally:
        for _, meter in meters:
            meter.close()
