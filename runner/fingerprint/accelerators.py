"""Accelerator probes: NVIDIA (NVML, else nvidia-smi), AMD (rocm-smi), Apple (system_profiler).

Only model, memory, driver and architecture are read. UUIDs, serial numbers, PCI bus ids and attached
displays are never read or written (privacy by default).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections import Counter
from typing import Any

from runner.fingerprint.sources import Sources
from runner.results.schema import Accelerator

GIB = 1024**3


def _group(devices: list[dict[str, Any]]) -> list[Accelerator]:
    """Identical devices become one entry with a count, in first-seen order."""
    keys = [json.dumps(d, sort_keys=True) for d in devices]
    counts = Counter(keys)
    out: list[Accelerator] = []
    for key in dict.fromkeys(keys):
        out.append(Accelerator(**json.loads(key), count=counts[key]))
    return out


# --- NVIDIA ------------------------------------------------------------------------------------------------

NVIDIA_SMI_QUERY = [
    "nvidia-smi",
    "--query-gpu=name,memory.total,driver_version,compute_cap",
    "--format=csv,noheader,nounits",
]


def parse_nvidia_smi_csv(text: str, cuda_version: str | None = None) -> list[Accelerator]:
    devices = []
    for line in text.strip().splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 4:
            continue
        name, mem_mib, driver, cc = parts[:4]
        devices.append(
            {
                "vendor": "nvidia",
                "model": name,
                "memory_gib": round(float(mem_mib) / 1024, 2) if _is_number(mem_mib) else None,
                "driver": driver or None,
                "cuda_version": cuda_version,
                "compute_capability": cc if _is_number(cc) else None,
                "source": "nvidia-smi",
            }
        )
    return _group(devices)


def parse_nvidia_smi_cuda_version(text: str) -> str | None:
    match = re.search(r"CUDA Version:\s*([0-9.]+)", text)
    return match.group(1) if match else None


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _probe_nvml() -> list[Accelerator] | None:
    try:
        import pynvml  # nvidia-ml-py
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
    except Exception:  # NVMLError_LibraryNotFound, DriverNotLoaded, ...
        return None
    try:
        driver = _text(pynvml.nvmlSystemGetDriverVersion())
        cuda_int = pynvml.nvmlSystemGetCudaDriverVersion_v2()
        cuda = f"{cuda_int // 1000}.{cuda_int % 1000 // 10}"
        devices = []
        for i in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(i)
            major, minor = pynvml.nvmlDeviceGetCudaComputeCapability(handle)
            devices.append(
                {
                    "vendor": "nvidia",
                    "model": _text(pynvml.nvmlDeviceGetName(handle)),
                    "memory_gib": round(pynvml.nvmlDeviceGetMemoryInfo(handle).total / GIB, 2),
                    "driver": driver,
                    "cuda_version": cuda,
                    "compute_capability": f"{major}.{minor}",
                    "source": "nvml",
                    "power_limit_w": _power_limit_w(pynvml, handle),
                }
            )
        return _group(devices)
    except Exception:
        return None
    finally:
        with contextlib.suppress(Exception):
            pynvml.nvmlShutdown()


def _power_limit_w(pynvml: Any, handle: Any) -> float | None:
    """The device's enforced power limit in watts (the gate checks energy figures against it), where NVML says."""
    try:
        return round(float(pynvml.nvmlDeviceGetEnforcedPowerLimit(handle)) / 1e3, 1)
    except Exception:
        return None


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value


def probe_nvidia(src: Sources, use_nvml: bool = True) -> list[Accelerator]:
    if use_nvml:
        found = _probe_nvml()
        if found is not None:
            return found
    text = src.run(NVIDIA_SMI_QUERY)
    if not text:
        return []
    header = src.run(["nvidia-smi"]) or ""
    return parse_nvidia_smi_csv(text, parse_nvidia_smi_cuda_version(header))


# --- AMD ---------------------------------------------------------------------------------------------------

ROCM_SMI = ["rocm-smi", "--showproductname", "--showmeminfo", "vram", "--showdriverversion", "--json"]


def parse_rocm_smi_json(text: str, rocm_version: str | None = None) -> list[Accelerator]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return []
    if not isinstance(data, dict):
        return []
    system = (
        {k.lower(): v for k, v in (data.get("system") or {}).items()} if isinstance(data.get("system"), dict) else {}
    )
    driver = system.get("driver version")
    devices = []
    for key, card in data.items():
        if not key.startswith("card") or not isinstance(card, dict):
            continue
        fields = {k.lower(): str(v) for k, v in card.items()}
        model = fields.get("market name") or fields.get("card series") or fields.get("card model") or "AMD GPU"
        vram = fields.get("vram total memory (b)")
        devices.append(
            {
                "vendor": "amd",
                "model": model.strip(),
                "memory_gib": round(int(vram) / GIB, 2) if vram and vram.isdigit() else None,
                "driver": driver,
                "rocm_version": rocm_version,
                "gfx_target": fields.get("gfx version") or None,
                "source": "rocm-smi",
            }
        )
    return _group(devices)


def probe_amd(src: Sources) -> list[Accelerator]:
    text = src.run(ROCM_SMI)
    if not text:
        return []
    version = src.read("/opt/rocm/.info/version")
    return parse_rocm_smi_json(text, version.strip() if version else None)


# --- Apple -------------------------------------------------------------------------------------------------


def parse_system_profiler_displays(text: str, memory_gib: float | None) -> list[Accelerator]:
    """`system_profiler SPDisplaysDataType -json`. Attached displays (with their serials) are ignored."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return []
    devices = []
    for gpu in data.get("SPDisplaysDataType", []) if isinstance(data, dict) else []:
        if not isinstance(gpu, dict):
            continue
        vendor_field = str(gpu.get("sppci_vendor", "")) + str(gpu.get("spdisplays_vendor", ""))
        model = str(gpu.get("sppci_model") or gpu.get("_name") or "unknown")
        apple = "Apple" in vendor_field or model.startswith("Apple")
        cores = str(gpu.get("sppci_cores", ""))
        vram = re.match(r"(\d+)\s*GB", str(gpu.get("spdisplays_vram", "")))
        devices.append(
            {
                "vendor": "apple"
                if apple
                else (
                    "amd"
                    if "AMD" in vendor_field or "ATI" in vendor_field
                    else "intel"
                    if "Intel" in vendor_field
                    else "other"
                ),
                "model": model,
                "memory_gib": memory_gib if apple else (float(vram.group(1)) if vram else None),
                "cores": int(cores) if cores.isdigit() else None,
                "driver": _metal(gpu.get("spdisplays_mtlgpufamilysupport")),
                "source": "system_profiler",
            }
        )
    return _group(devices)


def _metal(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    return value.replace("spdisplays_", "").replace("metal", "Metal ").strip()


def probe_apple(src: Sources, memory_gib: float | None) -> list[Accelerator]:
    if src.system != "Darwin":
        return []
    text = src.run(["system_profiler", "SPDisplaysDataType", "-json"])
    return parse_system_profiler_displays(text, memory_gib) if text else []
