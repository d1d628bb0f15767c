"""The machine fingerprint: what the hardware is, and a stable, privacy-safe id for it.

Each probe reads one source and quietly returns nothing when its tool or file is missing, so the same code
runs on a laptop without a GPU, a ROCm workstation, a Mac and a cloud VM. Nothing here runs at import.
No hostname, user name, serial number, UUID or MAC address is ever read.
"""

from __future__ import annotations

import hashlib
import json

from runner.fingerprint.accelerators import probe_amd, probe_apple, probe_nvidia
from runner.fingerprint.cpu import probe_cpu
from runner.fingerprint.sources import Sources
from runner.fingerprint.system import guess_system_type, probe_memory, probe_os
from runner.results.schema import Accelerator, Cpu, Machine

__all__ = ["Sources", "collect_machine", "machine_id"]


def machine_id(cpu: Cpu, accelerators: list[Accelerator]) -> str:
    """A hash of the hardware alone.

    In: CPU vendor, model, architecture, core and socket counts; each accelerator's vendor, model, count
    and memory (whole GiB). Out, because they change without the hardware changing: drivers, OS and
    framework versions, ISA flags (new kernels name more of them), the clock (governors), and RAM (VMs and
    kernels report MemTotal differently from boot to boot).
    """
    key = {
        "cpu": [cpu.vendor, cpu.model, cpu.arch, cpu.physical_cores, cpu.logical_cpus, cpu.sockets],
        "accelerators": sorted(
            [a.vendor, a.model, a.count, round(a.memory_gib) if a.memory_gib is not None else None]
            for a in accelerators
        ),
    }
    canonical = json.dumps(key, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def _hypervisor(src: Sources) -> bool:
    text = src.read("/proc/cpuinfo") or ""
    return any(line.startswith("flags") and " hypervisor" in line for line in text.splitlines())


def merge_accelerators(found: list[Accelerator], from_frameworks: list[Accelerator]) -> list[Accelerator]:
    """Add devices a framework sees that no system tool reported (e.g. ROCm without rocm-smi)."""
    vendors = {a.vendor for a in found}
    return found + [a for a in from_frameworks if a.vendor not in vendors]


def collect_machine(
    src: Sources | None = None, framework_accelerators: list[Accelerator] | None = None, use_nvml: bool = True
) -> Machine:
    src = src or Sources()
    cpu = probe_cpu(src)
    memory = probe_memory(src)
    accelerators = probe_nvidia(src, use_nvml=use_nvml) + probe_amd(src) + probe_apple(src, memory)
    accelerators = merge_accelerators(accelerators, framework_accelerators or [])
    system_type, evidence = guess_system_type(src, _hypervisor(src))
    return Machine(
        id=machine_id(cpu, accelerators),
        cpu=cpu,
        memory_gib=memory,
        accelerators=accelerators,
        os=probe_os(src),
        system_type=system_type,
        system_type_evidence=evidence,
    )
