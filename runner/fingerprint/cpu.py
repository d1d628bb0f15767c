"""CPU probe: /proc/cpuinfo and lscpu on Linux, sysctl on macOS."""

from __future__ import annotations

import re

from runner.fingerprint.sources import Sources
from runner.results.schema import Cpu

# ISA extensions that decide which ML kernels a CPU can run (x86 flag names as Linux spells them).
X86_ML_FLAGS = (
    "sse4_2",
    "avx",
    "avx2",
    "fma",
    "f16c",
    "avx_vnni",
    "avx512f",
    "avx512bw",
    "avx512vl",
    "avx512dq",
    "avx512_vnni",
    "avx512_bf16",
    "avx512_fp16",
    "amx_tile",
    "amx_bf16",
    "amx_int8",
    "amx_fp16",
)
# Linux names on Arm: asimd is NEON; asimddp/i8mm/bf16 feed int8 and bf16 matrix kernels.
ARM_ML_FLAGS = ("asimd", "asimdhp", "asimddp", "i8mm", "bf16", "sve", "sve2", "sme", "sme2")
# macOS sysctl hw.optional.arm.FEAT_* names mapped to the Linux names above.
MAC_FEATURES = {
    "FEAT_DotProd": "asimddp",
    "FEAT_I8MM": "i8mm",
    "FEAT_BF16": "bf16",
    "FEAT_FP16": "asimdhp",
    "FEAT_SME": "sme",
    "FEAT_SME2": "sme2",
}
VENDOR_NAMES = {
    "0x41": "ARM",
    "0x61": "Apple",
    "0x51": "Qualcomm",
    "0x48": "HiSilicon",
    "0x46": "Fujitsu",
    "0xc0": "Ampere",
    "0x4e": "NVIDIA",
}


def _ml_isa(flags: set[str]) -> list[str]:
    isa = [f for f in X86_ML_FLAGS + ARM_ML_FLAGS if f in flags]
    if "asimd" in isa:
        isa[isa.index("asimd")] = "neon"
    return isa


def parse_proc_cpuinfo(text: str) -> dict[str, object]:
    """Model, vendor, flags, logical and physical cores from /proc/cpuinfo (x86 and Arm layouts)."""
    blocks = [b for b in text.strip().split("\n\n") if b.strip()]
    logical = 0
    cores: set[tuple[str, str]] = set()
    sockets: set[str] = set()
    info: dict[str, object] = {}
    flags: set[str] = set()
    for block in blocks:
        fields: dict[str, str] = {}
        for line in block.splitlines():
            key, sep, value = line.partition(":")
            if sep:
                fields[key.strip().lower()] = value.strip()
        if "processor" not in fields or not fields["processor"].isdigit():
            # Arm kernels end with a machine-wide block ("Hardware", "Revision", ...).
            continue
        logical += 1
        info.setdefault("model", fields.get("model name"))
        info.setdefault("vendor", fields.get("vendor_id") or VENDOR_NAMES.get(fields.get("cpu implementer", "")))
        if "cpu mhz" in fields:
            info.setdefault("mhz", float(fields["cpu mhz"]))
        flags |= set((fields.get("flags") or fields.get("features") or "").split())
        if "physical id" in fields and "core id" in fields:
            cores.add((fields["physical id"], fields["core id"]))
            sockets.add(fields["physical id"])
    info["logical_cpus"] = logical or None
    info["physical_cores"] = len(cores) or None
    info["sockets"] = len(sockets) or None
    info["isa"] = _ml_isa(flags)
    return info


def parse_lscpu(text: str) -> dict[str, object]:
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields.setdefault(key.strip(), value.strip())
    out: dict[str, object] = {}

    def num(key: str) -> float | None:
        try:
            return float(fields[key])
        except (KeyError, ValueError):
            return None

    if "Model name" in fields and fields["Model name"] != "-":
        out["model"] = fields["Model name"]
    if "Vendor ID" in fields:
        out["vendor"] = fields["Vendor ID"]
    if "Architecture" in fields:
        out["arch"] = fields["Architecture"]
    cpus, per_socket, sockets = num("CPU(s)"), num("Core(s) per socket"), num("Socket(s)")
    if cpus:
        out["logical_cpus"] = int(cpus)
    if per_socket and sockets:
        out["physical_cores"] = int(per_socket * sockets)
        out["sockets"] = int(sockets)
    if num("CPU max MHz"):
        out["max_mhz"] = num("CPU max MHz")
    if "Flags" in fields:
        out["isa"] = _ml_isa(set(fields["Flags"].split()))
    return out


def parse_sysctl(text: str) -> dict[str, object]:
    """`sysctl machdep.cpu hw` output (key: value lines) on macOS."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields[key.strip()] = value.strip()
    out: dict[str, object] = {}
    if "machdep.cpu.brand_string" in fields:
        out["model"] = fields["machdep.cpu.brand_string"]
        out["vendor"] = "Apple" if fields["machdep.cpu.brand_string"].startswith("Apple") else "GenuineIntel"
    for key, name in (
        ("hw.physicalcpu", "physical_cores"),
        ("machdep.cpu.core_count", "physical_cores"),
        ("hw.logicalcpu", "logical_cpus"),
        ("machdep.cpu.thread_count", "logical_cpus"),
        ("hw.packages", "sockets"),
    ):
        if key in fields and fields[key].isdigit():
            out.setdefault(name, int(fields[key]))
    if fields.get("hw.cpufrequency_max", "").isdigit():
        out["max_mhz"] = int(fields["hw.cpufrequency_max"]) / 1e6
    isa: list[str] = []
    if fields.get("hw.optional.neon") == "1" or fields.get("hw.optional.AdvSIMD") == "1":
        isa.append("neon")
    for feature, name in MAC_FEATURES.items():
        if fields.get(f"hw.optional.arm.{feature}") == "1":
            isa.append(name)
    x86 = set(fields.get("machdep.cpu.features", "").lower().split())
    x86 |= set(fields.get("machdep.cpu.leaf7_features", "").lower().split())
    x86 = {"avx" if f == "avx1.0" else f for f in x86}
    isa += [f for f in X86_ML_FLAGS if f in x86]
    out["isa"] = isa
    return out


def _max_mhz_from_sysfs(src: Sources) -> float | None:
    text = src.read("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
    if text and text.strip().isdigit():
        return int(text.strip()) / 1000.0
    return None


def probe_cpu(src: Sources) -> Cpu:
    info: dict[str, object] = {}
    if src.system == "Darwin":
        text = src.run(["sysctl", "machdep.cpu", "hw"])
        if text:
            info.update(parse_sysctl(text))
    else:
        cpuinfo = src.read("/proc/cpuinfo")
        if cpuinfo:
            info.update({k: v for k, v in parse_proc_cpuinfo(cpuinfo).items() if v})
        lscpu = src.run(["lscpu"])
        if lscpu:
            # lscpu knows the marketing name on Arm and the max clock; /proc/cpuinfo counts cores better
            # in VMs that hide "physical id". Take lscpu's value only where cpuinfo had none.
            for key, value in parse_lscpu(lscpu).items():
                if key in ("max_mhz", "model") or not info.get(key):
                    info[key] = value
        if "max_mhz" not in info:
            info["max_mhz"] = _max_mhz_from_sysfs(src)
    mhz = info.pop("mhz", None)
    if not info.get("max_mhz") and isinstance(mhz, float) and mhz > 0:
        info["max_mhz"] = mhz
    model = str(info.get("model") or "unknown")
    return Cpu.model_validate(
        {
            "model": re.sub(r"\s+", " ", model).strip(),
            "vendor": str(info.get("vendor") or "unknown"),
            "arch": str(info.get("arch") or src.arch or "unknown"),
            "physical_cores": info.get("physical_cores"),
            "logical_cpus": info.get("logical_cpus") or 1,
            "sockets": info.get("sockets"),
            "max_mhz": info.get("max_mhz"),
            "isa": info.get("isa") or [],
        }
    )
