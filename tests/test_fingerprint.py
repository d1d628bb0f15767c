"""Fingerprint probes against canned tool outputs, and the machine id's stability and privacy."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from runner.fingerprint import Sources, collect_machine, machine_id
from runner.fingerprint.accelerators import (
    NVIDIA_SMI_QUERY,
    parse_nvidia_smi_csv,
    parse_nvidia_smi_cuda_version,
    parse_rocm_smi_json,
    parse_system_profiler_displays,
)
from runner.fingerprint.cpu import parse_lscpu, parse_proc_cpuinfo, parse_sysctl
from runner.fingerprint.system import guess_system_type, parse_meminfo
from runner.results.schema import Accelerator

DATA = Path(__file__).parent / "data" / "fingerprint"


def canned(name: str) -> str:
    return (DATA / name).read_text()


def fake_root(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = tmp_path / rel.lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def commands(outputs: dict[str, str]):
    """A command runner that answers from canned outputs and acts as 'not installed' for the rest."""

    def run(argv: list[str]) -> str | None:
        return outputs.get(" ".join(argv))

    return run


def test_proc_cpuinfo_x86_counts_sockets_cores_threads_and_ml_flags():
    info = parse_proc_cpuinfo(canned("proc_cpuinfo_xeon.txt"))
    assert info["model"] == "Intel(R) Xeon(R) Platinum 8480+"
    assert info["vendor"] == "GenuineIntel"
    assert (info["logical_cpus"], info["physical_cores"], info["sockets"]) == (8, 4, 2)
    for flag in ("avx2", "fma", "avx512f", "avx512_bf16", "amx_bf16", "amx_int8", "avx512_fp16"):
        assert flag in info["isa"]
    assert "sse2" not in info["isa"] and "hypervisor" not in info["isa"]


def test_proc_cpuinfo_arm_maps_asimd_to_neon():
    info = parse_proc_cpuinfo(canned("proc_cpuinfo_graviton.txt"))
    assert info["vendor"] == "ARM"
    assert info["logical_cpus"] == 4
    assert info["model"] is None  # Arm kernels do not print a model name; lscpu does
    assert {"neon", "sve", "sve2", "bf16", "i8mm", "asimddp"} <= set(info["isa"])


def test_lscpu_gives_model_max_clock_and_topology():
    info = parse_lscpu(canned("lscpu_xeon.txt"))
    assert info["model"] == "Intel(R) Xeon(R) Platinum 8480+"
    assert info["max_mhz"] == 3800.0
    assert (info["logical_cpus"], info["physical_cores"], info["sockets"]) == (8, 4, 2)
    arm = parse_lscpu(canned("lscpu_graviton.txt"))
    assert arm["model"] == "Neoverse-V2" and arm["arch"] == "aarch64" and "sve" in arm["isa"]


def test_sysctl_apple_silicon():
    info = parse_sysctl(canned("sysctl_m2pro.txt"))
    assert info["model"] == "Apple M2 Pro" and info["vendor"] == "Apple"
    assert info["physical_cores"] == 12 and info["logical_cpus"] == 12
    assert info["isa"] == ["neon", "asimddp", "bf16", "asimdhp"]


def test_nvidia_smi_groups_identical_gpus():
    cuda = parse_nvidia_smi_cuda_version(canned("nvidia_smi.txt"))
    assert cuda == "13.0"
    gpus = parse_nvidia_smi_csv(canned("nvidia_smi_query.csv"), cuda)
    assert len(gpus) == 1
    gpu = gpus[0]
    assert gpu.count == 2 and gpu.model == "NVIDIA H100 80GB HBM3" and gpu.vendor == "nvidia"
    assert gpu.memory_gib == pytest.approx(79.65, abs=0.01)
    assert gpu.compute_capability == "9.0" and gpu.driver == "580.159.04" and gpu.cuda_version == "13.0"


def test_rocm_smi_json():
    gpus = parse_rocm_smi_json(canned("rocm_smi.json"), "6.2.4")
    assert len(gpus) == 1
    gpu = gpus[0]
    assert gpu.vendor == "amd" and gpu.gfx_target == "gfx1031" and gpu.driver == "6.3.6"
    assert gpu.memory_gib == pytest.approx(11.98, abs=0.01) and gpu.rocm_version == "6.2.4"
    assert "Navi 22" in gpu.model
    assert "61497" not in gpu.model_dump_json()  # the GUID is never copied


def test_rocm_smi_garbage_is_ignored():
    assert parse_rocm_smi_json("not json") == []
    assert parse_rocm_smi_json("[1, 2]") == []


def test_system_profiler_reads_gpu_not_display_serials():
    gpus = parse_system_profiler_displays(canned("system_profiler_displays.json"), 32.0)
    assert len(gpus) == 1
    gpu = gpus[0]
    assert gpu.vendor == "apple" and gpu.model == "Apple M2 Pro" and gpu.cores == 19
    assert gpu.memory_gib == 32.0 and gpu.driver == "Metal 3"
    assert "fd626d62" not in gpu.model_dump_json()


def test_meminfo():
    assert parse_meminfo("MemTotal:       24683520 kB\nMemFree: 1 kB\n") == pytest.approx(23.54, abs=0.01)


def linux_sources(
    tmp_path: Path, extra_files: dict[str, str] | None = None, outputs: dict[str, str] | None = None
) -> Sources:
    files = {
        "/proc/cpuinfo": canned("proc_cpuinfo_xeon.txt"),
        "/proc/meminfo": "MemTotal: 16384000 kB\n",
        "/etc/os-release": 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n',
        **(extra_files or {}),
    }
    return Sources(
        root=fake_root(tmp_path, files), run=commands(outputs or {}), system="Linux", arch="x86_64", release="6.1.0"
    )


def test_collect_machine_on_a_linux_box_with_two_h100s(tmp_path):
    outputs = {
        " ".join(NVIDIA_SMI_QUERY): canned("nvidia_smi_query.csv"),
        "nvidia-smi": canned("nvidia_smi.txt"),
        "lscpu": canned("lscpu_xeon.txt"),
    }
    machine = collect_machine(linux_sources(tmp_path, outputs=outputs), use_nvml=False)
    assert machine.cpu.max_mhz == 3800.0
    assert machine.accelerators[0].count == 2
    assert machine.os.distro == "Debian GNU/Linux 12 (bookworm)"
    assert machine.memory_gib == pytest.approx(15.62, abs=0.01)


def test_every_probe_tolerates_missing_tools_and_files(tmp_path):
    src = Sources(root=tmp_path, run=commands({}), system="Linux", arch="x86_64", release="6.1.0")
    machine = collect_machine(src, use_nvml=False)
    assert machine.cpu.model == "unknown" and machine.cpu.logical_cpus == 1
    assert machine.accelerators == [] and machine.system_type == "unknown"
    mac = Sources(root=tmp_path, run=commands({}), system="Darwin", arch="arm64", release="23.5.0")
    assert collect_machine(mac, use_nvml=False).cpu.arch == "arm64"


def test_collect_machine_on_a_mac(tmp_path):
    outputs = {
        "sysctl machdep.cpu hw": canned("sysctl_m2pro.txt"),
        "sysctl -n hw.memsize": "34359738368\n",
        "system_profiler SPDisplaysDataType -json": canned("system_profiler_displays.json"),
        "sw_vers -productVersion": "14.5\n",
        "sysctl -n hw.model": "Mac14,10\n",
        "pmset -g batt": "Now drawing from 'AC Power'\n -InternalBattery-0 (id=1)\t100%; charged;\n",
    }
    src = Sources(root=tmp_path, run=commands(outputs), system="Darwin", arch="arm64", release="23.5.0")
    machine = collect_machine(src, use_nvml=False)
    assert machine.cpu.model == "Apple M2 Pro" and machine.memory_gib == 32.0
    assert machine.accelerators[0].vendor == "apple" and machine.accelerators[0].memory_gib == 32.0
    assert machine.os.distro == "macOS 14.5"
    assert machine.system_type == "laptop"


def test_rocm_without_rocm_smi_is_found_through_torch(tmp_path):
    from_torch = [
        Accelerator(vendor="amd", model="AMD Radeon RX 6800M", memory_gib=12.0, gfx_target="gfx1031", source="torch")
    ]
    machine = collect_machine(linux_sources(tmp_path), framework_accelerators=from_torch, use_nvml=False)
    assert [a.model for a in machine.accelerators] == ["AMD Radeon RX 6800M"]


@pytest.mark.parametrize(
    ("files", "hypervisor", "expected"),
    [
        ({"/sys/class/dmi/id/chassis_type": "10\n"}, False, "laptop"),
        ({"/sys/class/dmi/id/chassis_type": "3\n"}, False, "desktop"),
        ({"/sys/class/dmi/id/chassis_type": "23\n"}, False, "server"),
        ({"/sys/class/dmi/id/sys_vendor": "Amazon EC2\n", "/sys/class/dmi/id/chassis_type": "1\n"}, True, "cloud"),
        (
            {"/sys/class/dmi/id/sys_vendor": "Google\n", "/sys/class/dmi/id/product_name": "Google Compute Engine\n"},
            True,
            "cloud",
        ),
        ({"/sys/class/power_supply/BAT0/type": "Battery\n"}, False, "laptop"),
        ({}, True, "cloud"),
        ({}, False, "unknown"),
    ],
)
def test_system_type_guess(tmp_path, files, hypervisor, expected):
    src = Sources(root=fake_root(tmp_path, files), run=commands({}), system="Linux")
    kind, evidence = guess_system_type(src, hypervisor)
    assert kind == expected
    assert bool(evidence) == (expected != "unknown")


def test_machine_id_is_stable_across_software_and_changes_with_the_gpu(tmp_path):
    outputs = {" ".join(NVIDIA_SMI_QUERY): canned("nvidia_smi_query.csv"), "nvidia-smi": canned("nvidia_smi.txt")}
    first = collect_machine(linux_sources(tmp_path / "a", outputs=outputs), use_nvml=False)
    # A driver upgrade, a kernel upgrade, a different RAM reading and a new ISA flag name: same machine.
    upgraded = {
        " ".join(NVIDIA_SMI_QUERY): canned("nvidia_smi_query.csv").replace("580.159.04", "590.1"),
        "nvidia-smi": canned("nvidia_smi.txt").replace("13.0", "13.1"),
    }
    src = linux_sources(tmp_path / "b", {"/proc/meminfo": "MemTotal: 16000000 kB\n"}, upgraded)
    second = collect_machine(
        Sources(root=src.root, run=src.run, system="Linux", arch="x86_64", release="6.9.0"), use_nvml=False
    )
    assert first.id == second.id
    other_gpu = {" ".join(NVIDIA_SMI_QUERY): "NVIDIA A100-SXM4-40GB, 40960, 580.159.04, 8.0\n" * 2}
    third = collect_machine(linux_sources(tmp_path / "c", outputs=other_gpu), use_nvml=False)
    assert third.id != first.id
    one_gpu = {" ".join(NVIDIA_SMI_QUERY): canned("nvidia_smi_query.csv").splitlines()[0] + "\n"}
    assert collect_machine(linux_sources(tmp_path / "d", outputs=one_gpu), use_nvml=False).id != first.id


def test_machine_id_is_a_hash_of_hardware_only():
    machine = collect_machine()
    assert machine.id == machine_id(machine.cpu, machine.accelerators)
    assert collect_machine().id == machine.id  # same machine, same id, run to run


def test_real_machine_fingerprint_has_no_personal_data():
    text = collect_machine().model_dump_json()
    host = socket.gethostname()
    if len(host) >= 4:
        assert host not in text
    assert str(Path.home()) not in text or str(Path.home()) == "/"
