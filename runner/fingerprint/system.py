"""Memory, operating system and the laptop/desktop/server/cloud guess."""

from __future__ import annotations

import re

from runner.fingerprint.sources import Sources
from runner.results.schema import OperatingSystem

GIB = 1024**3

# SMBIOS chassis types (DMTF DSP0134, table 17).
LAPTOP_CHASSIS = {8, 9, 10, 14, 30, 31, 32}
DESKTOP_CHASSIS = {3, 4, 5, 6, 7, 13, 15, 16, 35, 36}
SERVER_CHASSIS = {17, 23, 25, 28, 29}
# Strings cloud providers put in DMI vendor/product fields.
CLOUD_VENDORS = (
    "amazon ec2",
    "google",
    "microsoft corporation virtual machine",
    "alibaba cloud",
    "openstack",
    "digitalocean",
    "hetzner",
    "oraclecloud",
    "scaleway",
    "linode",
    "akamai",
    "vultr",
    "tencent cloud",
    "exoscale",
    "ovh",
    "lambda labs",
    "coreweave",
    "runpod",
)


def parse_meminfo(text: str) -> float | None:
    match = re.search(r"^MemTotal:\s+(\d+)\s*kB", text, re.MULTILINE)
    return round(int(match.group(1)) * 1024 / GIB, 2) if match else None


def probe_memory(src: Sources) -> float:
    if src.system == "Darwin":
        text = src.run(["sysctl", "-n", "hw.memsize"])
        if text and text.strip().isdigit():
            return round(int(text.strip()) / GIB, 2)
        return 0.0
    text = src.read("/proc/meminfo")
    return (parse_meminfo(text) if text else None) or 0.0


def parse_os_release(text: str) -> str | None:
    match = re.search(r'^PRETTY_NAME="?([^"\n]*)"?', text, re.MULTILINE)
    return match.group(1) if match else None


def probe_os(src: Sources) -> OperatingSystem:
    distro: str | None = None
    if src.system == "Darwin":
        version = src.run(["sw_vers", "-productVersion"])
        distro = f"macOS {version.strip()}" if version else None
    elif src.system == "Linux":
        text = src.read("/etc/os-release")
        distro = parse_os_release(text) if text else None
    return OperatingSystem(system=src.system or "unknown", release=src.release or "unknown", distro=distro)


def _dmi(src: Sources, name: str) -> str:
    text = src.read(f"/sys/class/dmi/id/{name}")
    return text.strip() if text else ""


def _has_battery(src: Sources) -> bool:
    for supply in src.glob("/sys/class/power_supply", "*"):
        kind = supply / "type"
        try:
            if kind.read_text().strip() == "Battery":
                return True
        except OSError:
            continue
    return False


def guess_system_type(src: Sources, hypervisor: bool) -> tuple[str, list[str]]:
    """(laptop|desktop|server|cloud|unknown, the evidence for it)."""
    if src.system == "Darwin":
        model = (src.run(["sysctl", "-n", "hw.model"]) or "").strip()
        battery = "InternalBattery" in (src.run(["pmset", "-g", "batt"]) or "")
        if battery or "Book" in model:
            return "laptop", [f"hw.model {model}" if "Book" in model else "internal battery"]
        return ("desktop", [f"hw.model {model}"]) if model else ("unknown", [])
    vendor_text = " ".join(
        _dmi(src, f) for f in ("sys_vendor", "product_name", "bios_vendor", "board_vendor", "chassis_vendor")
    ).lower()
    for cloud in CLOUD_VENDORS:
        if all(word in vendor_text for word in cloud.split()):
            return "cloud", [f"DMI vendor '{cloud}'"]
    hyp_uuid = src.read("/sys/hypervisor/uuid") or ""
    if hyp_uuid.lower().startswith("ec2"):
        return "cloud", ["/sys/hypervisor/uuid is EC2"]
    chassis = _dmi(src, "chassis_type")
    if chassis.isdigit():
        number = int(chassis)
        for kind, table in (("laptop", LAPTOP_CHASSIS), ("desktop", DESKTOP_CHASSIS), ("server", SERVER_CHASSIS)):
            if number in table:
                return kind, [f"DMI chassis type {number}"]
    if _has_battery(src):
        return "laptop", ["battery present"]
    if hypervisor:
        return "cloud", ["virtual machine (hypervisor CPU flag), assumed cloud"]
    return "unknown", []
