"""Energy: RAPL through powercap trees laid out as Linux lays them out, NVML's counter and sampled power through the
calls nvidia-ml-py makes, the figures a measurement's rounds give, the gate's refusals, and a real run whose CPU
energy counter is a powercap tree that a thread advances at a known power."""

from __future__ import annotations

import html
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from runner.gate.validate import check_result
from runner.measure import energy
from runner.results import energy as figures
from runner.results.schema import Energy, EnergyRound
from runner.results.storage import load
from tests.conftest import ROOT

MAX_UJ = 262143328850  # a package zone's max_energy_range_uj on an Intel server


def zone(root: Path, name: str, label: str, uj: int = 0, top: int = MAX_UJ) -> Path:
    path = root / name
    path.mkdir(parents=True)
    (path / "name").write_text(label + "\n")
    (path / "energy_uj").write_text(f"{uj}\n")
    (path / "max_energy_range_uj").write_text(f"{top}\n")
    return path


def two_sockets(root: Path) -> Path:
    """A two-socket server: each package with core, uncore and DRAM subzones, psys, and the mmio copy of package 0."""
    for n in (0, 1):
        top = zone(root, f"intel-rapl:{n}", f"package-{n}", 1000 * (n + 1))
        zone(top, f"intel-rapl:{n}:0", "core", 5)
        zone(top, f"intel-rapl:{n}:1", "dram", 10 * (n + 1), top=65712999613)
        zone(top, f"intel-rapl:{n}:2", "uncore", 7)
    zone(root, "intel-rapl:2", "psys", 99999)
    zone(root, "intel-rapl-mmio:0", "package-0", 424242)
    return root


def test_rapl_reads_each_package_and_its_dram_once_and_nothing_else(tmp_path):
    zones = energy.rapl_zones(two_sockets(tmp_path))
    assert [(z.name, z.package) for z in zones] == [
        ("package-0", "package-0"), ("dram", "package-0"), ("package-1", "package-1"), ("dram", "package-1")
    ]  # fmt: skip
    assert all("mmio" not in str(z.energy) for z in zones)  # the mmio zone repeats package-0: read once
    meter = energy.RaplMeter(zones)
    assert meter.domains == ["package-0", "dram (package-0)", "package-1", "dram (package-1)"]
    (tmp_path / "intel-rapl:0" / "energy_uj").write_text("3000000\n")  # +2,999,000 uJ
    (tmp_path / "intel-rapl:1" / "intel-rapl:1:1" / "energy_uj").write_text("1000020\n")  # +1,000,000 uJ
    assert meter.read() == pytest.approx(3.999)


def test_a_machine_without_dram_zones_reads_its_packages(tmp_path):
    zone(tmp_path, "intel-rapl:0", "package-0", 10)
    zone(tmp_path / "intel-rapl:0", "intel-rapl:0:0", "core", 1)
    assert [z.name for z in energy.rapl_zones(tmp_path)] == ["package-0"]


def test_a_package_split_into_dies_reads_every_die(tmp_path):
    zone(tmp_path, "intel-rapl:0", "package-0-die-0", 10)
    zone(tmp_path, "intel-rapl:1", "package-0-die-1", 20)
    assert [z.name for z in energy.rapl_zones(tmp_path)] == ["package-0-die-0", "package-0-die-1"]


def test_a_counter_that_wrapped_is_read_across_the_wrap(tmp_path):
    zone(tmp_path, "intel-rapl:0", "package-0", MAX_UJ - 1_000_000)
    meter = energy.RaplMeter(energy.rapl_zones(tmp_path))
    (tmp_path / "intel-rapl:0" / "energy_uj").write_text("500000\n")  # wrapped: 1 J to the top, 0.5 J after it
    assert meter.read() == pytest.approx(1.5)
    (tmp_path / "intel-rapl:0" / "energy_uj").write_text("2500000\n")
    assert meter.read() == pytest.approx(3.5)


def test_no_powercap_or_only_psys_gives_no_cpu_energy_and_says_why(tmp_path):
    with pytest.raises(energy.Unreadable, match="does not exist"):
        energy.rapl_zones(tmp_path / "missing")
    zone(tmp_path, "intel-rapl:0", "psys", 10)
    with pytest.raises(energy.Unreadable, match="no RAPL package zone"):
        energy.rapl_zones(tmp_path)
    (probe,) = energy.probe(["cpu"], powercap=tmp_path / "missing")
    assert not probe.readable and "does not exist" in (probe.reason or "")


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="drops root's capabilities: root, setpriv")
def test_counters_another_user_owns_are_refused_with_how_to_allow_them(tmp_path):
    """As the kernel has them since 2020, energy_uj is mode 0400 and not ours: here a counter owned by another user,
    read by a process without the capability to read any file (setpriv drops it)."""
    zone(tmp_path, "intel-rapl:0", "package-0", 10)
    counter = tmp_path / "intel-rapl:0" / "energy_uj"
    counter.chmod(0o400)
    os.chown(counter, 65534, 65534)
    code = f"from pathlib import Path; from runner.measure import energy; energy.rapl_zones(Path({str(tmp_path)!r}))"
    done = subprocess.run(
        ["setpriv", "--inh-caps=-all", "--bounding-set=-dac_override,-dac_read_search", "--",
         sys.executable, "-c", code],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode != 0
    assert "readable by root only" in done.stderr and "sudo chmod a+r" in done.stderr, done.stderr


class Board:
    """An NVIDIA board as nvidia-ml-py answers for it: an energy counter (mJ) advancing in steps every `step_s` at
    `watts`, or, with counter=False, NVMLError_NotSupported for it and its power (mW) only."""

    class NotSupported(Exception):
        pass

    def __init__(self, watts: float, step_s: float = 0.1, counter: bool = True, clock=time.perf_counter) -> None:
        self.watts, self.step_s, self.counter, self.clock = watts, step_s, counter, clock
        self.t0 = clock()
        self.base_mj = 123_456_789  # since the driver loaded

    def nvmlInit(self) -> None:
        pass

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        return index

    def nvmlDeviceGetTotalEnergyConsumption(self, handle: int) -> int:
        if not self.counter:
            raise Board.NotSupported("Not Supported")
        steps = int((self.clock() - self.t0) / self.step_s)
        return self.base_mj + int(steps * self.step_s * self.watts * 1e3)

    def nvmlDeviceGetPowerUsage(self, handle: int) -> int:
        return int(self.watts * 1e3)


def test_nvml_reads_the_counter_and_its_update_period():
    board = Board(watts=300.0, step_s=0.02)
    meter = energy.nvml_meter(0, board)
    assert meter.source == "nvml-counter" and meter.domains == ["gpu 0"]
    period = energy.counter_period(meter.read, watch_s=0.3)
    assert period == pytest.approx(0.02, rel=0.3)
    start = meter.read()
    time.sleep(0.5)
    assert meter.read() - start == pytest.approx(0.5 * 300.0, rel=0.15)  # off by a step or so at each end


def test_a_board_without_a_counter_has_its_power_sampled_and_integrated():
    board = Board(watts=40.0, counter=False)
    meter = energy.nvml_meter(1, board)
    try:
        assert meter.source == "nvml-power-samples" and meter.domains == ["gpu 1"]
        start = meter.read()
        time.sleep(0.3)
        assert meter.read() - start == pytest.approx(0.3 * 40.0, rel=0.1)
    finally:
        meter.close()


def test_a_sampler_prefers_the_boards_instantaneous_power_to_its_one_second_average():
    class Field:
        def __init__(self, mw: int) -> None:
            self.nvmlReturn, self.value = 0, type("V", (), {"uiVal": mw})()

    class Hopper(Board):  # the usage reading averages a second; the instant field follows the load
        def nvmlDeviceGetFieldValues(self, handle: int, ids: list[int]) -> list[Field]:
            assert ids == [energy.NVML_FI_DEV_POWER_INSTANT]
            return [Field(int(250.0 * 1e3))]

    meter = energy.nvml_meter(0, Hopper(watts=100.0, counter=False))
    try:
        assert meter.instant
        start = meter.read()
        time.sleep(0.3)
        assert meter.read() - start == pytest.approx(0.3 * 250.0, rel=0.1)
    finally:
        meter.close()


class Instinct:
    """An AMD board as amdsmi answers for it: an energy accumulator in counts of `resolution` microjoules at `watts`
    (the key is `power` before ROCm 6.1, `energy_accumulator` after)."""

    def __init__(self, watts: float, resolution: float = 15.3, key: str = "energy_accumulator") -> None:
        self.watts, self.resolution, self.key, self.t0 = watts, resolution, key, time.perf_counter()

    def amdsmi_init(self) -> None:
        pass

    def amdsmi_get_processor_handles(self) -> list[str]:
        return ["gpu0", "gpu1"]

    def amdsmi_get_energy_count(self, handle: str) -> dict[str, float]:
        uj = (time.perf_counter() - self.t0) * self.watts * 1e6
        return {self.key: int(uj / self.resolution), "counter_resolution": self.resolution, "timestamp": 0}


@pytest.mark.parametrize("key", ["energy_accumulator", "power"])
def test_an_amd_boards_accumulator_is_read_in_joules(key):
    meter = energy.amdsmi_meter(1, Instinct(watts=200.0, key=key))
    assert meter.source == "amdsmi-counter" and meter.domains == ["gpu 1"]
    start = meter.read()
    time.sleep(0.3)
    assert meter.read() - start == pytest.approx(0.3 * 200.0, rel=0.1)

    class VirtualGuest(Instinct):
        def amdsmi_get_energy_count(self, handle: str) -> dict[str, float]:
            raise RuntimeError("AMDSMI_STATUS_NOT_SUPPORTED")

    with pytest.raises(energy.Unreadable, match="amdsmi cannot read GPU 0's energy counter"):
        energy.amdsmi_meter(0, VirtualGuest(1.0))


def test_powermetrics_samples_are_summed_per_domain(tmp_path):
    """powermetrics' property lists, each ended by a NUL, as it streams them: the GPU's energy is the sum of its
    samples' gpu_energy (millijoules), the CPU's of cpu_energy."""
    script = tmp_path / "powermetrics.py"
    script.write_text(
        "import plistlib, sys, time\n"
        "for i in range(1000):\n"
        "    doc = {'elapsed_ns': 20_000_000, 'processor': {'cpu_energy': 30, 'gpu_energy': 100, 'cpu_power': 1500}}\n"
        "    sys.stdout.buffer.write(plistlib.dumps(doc) + b'\\0')\n"
        "    sys.stdout.buffer.flush()\n"
        "    time.sleep(0.02)\n"
    )
    for domain, mj in (("gpu", 100), ("cpu", 30)):
        meter = energy.PowermetricsSampler(domain, command=[sys.executable, str(script)])
        try:
            start = meter.read()
            time.sleep(0.5)
            got = meter.read() - start
            samples = got / (mj / 1e3)
            assert samples == pytest.approx(round(samples)) and 10 <= samples <= 30  # whole samples, about 25
        finally:
            meter.close()
    silent = tmp_path / "silent.py"
    silent.write_text("import time\ntime.sleep(30)\n")
    with pytest.raises(energy.Unreadable, match="powermetrics gave no sample"):
        energy.PowermetricsSampler("gpu", command=[sys.executable, str(silent)])


def test_the_period_of_a_counter_that_never_moves_is_unknown():
    assert energy.counter_period(lambda: 5.0, watch_s=0.05) is None


def test_a_round_shorter_than_ten_counter_updates_is_not_a_figure():
    rounds = [{"joules": 30.0, "units": 10, "window_s": 0.5}, {"joules": 32.0, "units": 10, "window_s": 0.6}]
    out = figures.figures(rounds, period_s=0.1, idle_w=20.0, samples_per_unit=64)
    assert out["joules_per_unit"] is None and "too short to attribute" in out["note"]
    assert out["avg_power_w"] == pytest.approx(62.0 / 1.1)
    rounds = [{"joules": 300.0, "units": 100, "window_s": 1.5}, {"joules": 330.0, "units": 100, "window_s": 1.6},
              {"joules": 310.0, "units": 100, "window_s": 1.4}]  # fmt: skip
    out = figures.figures(rounds, period_s=0.1, idle_w=20.0, samples_per_unit=64)
    assert out["joules_per_unit"] == pytest.approx(3.1) and out["joules_per_sample"] == pytest.approx(3.1 / 64)
    lo, hi = out["ci95_joules_per_unit"]
    assert lo < 3.1 < hi
    assert out["above_idle_joules_per_unit"] == pytest.approx((310.0 - 20.0 * 1.4) / 100)
    assert out["note"] is None


def _gpu_file():
    result, _ = load(ROOT / "results" / "0c9b4be27c3326c3" / "20261206T114717Z.yaml")
    assert result is not None
    return result


def _with_energy(result, index: int, e: Energy, limit: float | None = 700.0):
    accelerators = [a.model_copy(update={"power_limit_w": limit}) for a in result.machine.accelerators]
    machine = result.machine.model_copy(update={"accelerators": accelerators})
    ms = list(result.measurements)
    ms[index] = ms[index].model_copy(update={"energy": [e]})
    return result.model_copy(update={"measurements": ms, "machine": machine, "schema_version": 11})


def _block(source: str, of: str, rounds: list[EnergyRound], spu: int = 1, period: float | None = 0.1) -> Energy:
    numbers = figures.figures([r.model_dump() for r in rounds], period, 60.0, spu)
    return Energy(source=source, of=of, domains=["gpu 0"], counter_period_s=period, idle_power_w=60.0,
                  rounds=rounds, **numbers)  # fmt: skip


def test_the_gate_recomputes_energy_and_refuses_what_the_device_could_not_have_drawn():
    result = _gpu_file()
    i = next(i for i, m in enumerate(result.measurements) if m.device == "cuda" and len(m.rounds) == 3)
    spu = result.measurements[i].samples_per_unit
    good = [EnergyRound(joules=400.0 + k, units=100, window_s=2.0) for k in range(3)]
    assert not [p for p in check_result("f", _with_energy(result, i, _block("nvml-counter", "device", good, spu)))
                if "energy" in p.field]  # fmt: skip

    short = [EnergyRound(joules=40.0 + k, units=10, window_s=0.5) for k in range(3)]  # 5 of the counter's updates
    assert _block("nvml-counter", "device", short, spu).note.startswith("too short to attribute")
    assert not [p for p in check_result("f", _with_energy(result, i, _block("nvml-counter", "device", short, spu)))
                if "energy" in p.field]  # fmt: skip
    noted = _block("nvml-counter", "device", short, spu).model_copy(update={"note": "made up"})
    said = [p.message for p in check_result("f", _with_energy(result, i, noted)) if "energy" in p.field]
    assert any(m.startswith("'made up', but its rounds give \"too short to attribute") for m in said)

    forged = _block("nvml-counter", "device", good, spu).model_copy(update={"joules_per_unit": 1.0})
    said = [p.message for p in check_result("f", _with_energy(result, i, forged)) if "energy" in p.field]
    assert any("but its rounds give" in m for m in said)

    hot = [EnergyRound(joules=2000.0, units=100, window_s=2.0)] * 3  # 1,000 W against a 700 W limit
    said = [p.message for p in check_result("f", _with_energy(result, i, _block("nvml-counter", "device", hot, spu)))
            if "energy" in p.field]  # fmt: skip
    assert any("above its enforced power limit (700 W)" in m for m in said)

    j = next(j for j, m in enumerate(result.measurements) if m.device == "cpu" and len(m.rounds) == 3)
    said = [p.message for p in check_result("f", _with_energy(result, j, _block("nvml-counter", "device", good)))
            if "energy" in p.field]  # fmt: skip
    assert any("NVML reads an NVIDIA device, the measured one" in m for m in said)

    cpu_only = result.machine.model_copy(update={"accelerators": []})
    bare = _with_energy(result, j, _block("nvml-counter", "device", good)).model_copy(update={"machine": cpu_only})
    assert any("no NVIDIA accelerator" in p.message for p in check_result("f", bare) if "energy" in p.field)

    arm = result.machine.cpu.model_copy(update={"arch": "aarch64"})
    on_arm = _with_energy(result, j, _block("rapl", "device", good)).model_copy(
        update={"machine": result.machine.model_copy(update={"cpu": arm})}
    )
    assert any("RAPL is an x86 CPU's" in p.message for p in check_result("f", on_arm) if "energy" in p.field)

    said = [p.message for p in check_result("f", _with_energy(result, i, _block("amdsmi-counter", "device", good)))
            if "energy" in p.field]  # fmt: skip
    assert any("this machine has no AMD accelerator" in m for m in said)
    said = [p.message for p in check_result("f", _with_energy(result, j, _block("powermetrics", "device", good)))
            if "energy" in p.field]  # fmt: skip
    assert any("powermetrics is macOS's, this machine runs Linux" in m for m in said)

    too_many = _block("nvml-counter", "device", good * 2, spu)
    assert any("6 rounds, the measurement has 3" in p.message
               for p in check_result("f", _with_energy(result, i, too_many)) if "energy" in p.field)  # fmt: skip


@pytest.fixture(scope="module")
def powered_run(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """A real tiny run (PyTorch's tabular-mlp on the CPU, two rounds) whose powercap (BENCHSITE_POWERCAP) is a tree
    whose package counter a thread advances at 50 W."""
    tmp_path = tmp_path_factory.mktemp("powered")
    root = tmp_path / "powercap"
    counter = zone(root, "intel-rapl:0", "package-0", 0) / "energy_uj"
    stop = threading.Event()

    def advance() -> None:
        t0 = time.perf_counter()
        while not stop.wait(0.001):
            tmp = counter.with_suffix(".tmp")
            tmp.write_text(f"{int((time.perf_counter() - t0) * 50.0 * 1e6)}\n")
            tmp.replace(counter)

    thread = threading.Thread(target=advance, daemon=True)
    thread.start()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "runner", "run", "--profile", "tiny", "-f", "torch", "-w", "tabular-mlp",
             "-d", "cpu", "--rounds", "2", "--time-budget", "1", "--no-equivalence", "--output", str(tmp_path / "out")],
            cwd=ROOT, env={**os.environ, energy.POWERCAP_ENV: str(root)}, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
    finally:
        stop.set()
        thread.join()
    assert done.returncode == 0, done.stdout + done.stderr
    (path,) = (tmp_path / "out").rglob("*.yaml")
    return path, done


def test_a_run_reads_a_cpus_energy_counter_around_each_round(powered_run):
    """Every measurement's CPU energy has a round per process, 50 W on average, figures the gate recomputes."""
    path, done = powered_run
    said = re.search(r"Energy on cpu: rapl \(package-0\), idle ([\d.]+) W", " ".join(done.stdout.split()))
    assert said and float(said.group(1)) == pytest.approx(50.0, rel=0.05), done.stdout
    data = yaml.safe_load(path.read_text())
    assert data["schema_version"] == 11
    (probe,) = data["run"]["energy"]
    assert probe["source"] == "rapl" and 0.0005 <= probe["counter_period_s"] <= 0.05  # a write every millisecond
    for m in data["measurements"]:
        (e,) = m["energy"]
        assert e["source"] == "rapl" and e["of"] == "device" and len(e["rounds"]) == len(m["rounds"]) == 2
        assert e["avg_power_w"] == pytest.approx(50.0, rel=0.1)
        # the energy of every unit the window ran: 50 W times the window's mean time a unit (at least the median's)
        per_unit = [r["window_s"] / r["units"] for r in e["rounds"]]
        assert e["joules_per_unit"] == pytest.approx(50.0 * statistics.median(per_unit), rel=0.1)
        assert min(per_unit) >= 0.9 * min(r["median_s"] for r in m["rounds"])
    result, problems = load(path)
    assert result is not None and not [p for p in problems if p.severity == "error"]
    assert not [p for p in check_result(str(path), result) if p.severity == "error"]


def test_the_leaderboard_gives_each_measurements_energy_with_its_interval_and_source(powered_run, tmp_path):
    """A site built from that run: the leaderboard's and the machine page's energy column hold each measurement's
    joules per unit with its interval, samples per joule and the counter, and the CSV the same figures."""
    from site_builder.render import joules
    from tests.conftest import build_site

    path, _ = powered_run
    data = yaml.safe_load(path.read_text())
    results = tmp_path / "results" / data["machine"]["id"]
    results.mkdir(parents=True)
    shutil.copy(path, results / path.name)
    done = build_site(tmp_path / "results", tmp_path / "site", strict=True)
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "site" / "leaderboards" / "tabular-mlp.html").read_text()
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())
    assert "energy a unit (95% interval), samples/J" in text
    for m in data["measurements"]:
        (e,) = m["energy"]
        lo, hi = e["ci95_joules_per_unit"]
        assert f"{joules(e['joules_per_unit'])} ({joules(lo)} .. {joules(hi)}); " in text
    assert text.count(" samples/J, rapl") == len(data["measurements"])
    machine = (tmp_path / "site" / "machines" / f"{data['machine']['id']}.html").read_text()
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", machine)).split())
    assert text.count(" samples/J, rapl") == len(data["measurements"])  # the machine page, every measurement
    csv = (tmp_path / "site" / "leaderboards" / "tabular-mlp.csv").read_text().splitlines()
    assert {"joules_per_unit", "joules_lo", "joules_hi", "energy_source"} <= set(csv[0].split(","))


def test_a_side_sums_its_device_and_host_round_by_round_and_leaves_out_rounds_too_short():
    gpu = {"of": "device", "source": "nvml-counter", "counter_period_s": 0.1,
           "rounds": [{"joules": 50.0, "units": 100, "window_s": 2.0}, {"joules": 60.0, "units": 100, "window_s": 0.5},
                      {"joules": 55.0, "units": 100, "window_s": 2.0}]}  # fmt: skip
    host = {"of": "host", "source": "rapl", "counter_period_s": 0.001,
            "rounds": [{"joules": 30.0, "units": 100, "window_s": 2.0}, {"joules": 30.0, "units": 100, "window_s": 0.5},
                       {"joules": 31.0, "units": 100, "window_s": 2.0}]}  # fmt: skip
    values, scope = figures.side_rounds([gpu, host])
    assert scope == "nvml-counter + host rapl"
    assert values[0] == pytest.approx(0.8) and values[2] == pytest.approx(0.86)
    assert values[1] != values[1]  # 0.5 s is 5 of the counter's updates: not attributable, NaN in its place
    assert figures.side_rounds([host]) == ([], "") and figures.side_rounds([]) == ([], "")


def test_the_energy_ratio_pairs_a_runs_rounds_and_says_which_side_was_not_measured():
    from site_builder.analyses.speedups import energy_ratio
    from site_builder.uncertainty import Rounds

    cpu, gpu = Rounds([2.0, 2.4, 1.9], "run/torch/as-written"), Rounds([0.8, 0.95, 0.76], "run/torch/as-written")
    out = energy_ratio(cpu, gpu, "rapl", "nvml-counter + host rapl")
    assert out["energy_ratio"] == pytest.approx(2.0 / 0.8)
    # paired: the rounds' log ratios are nearly constant, so the interval is narrow; unpaired (Welch) it is wide
    welch = energy_ratio(Rounds(cpu, "a"), Rounds(gpu, "b"), "rapl", "nvml-counter + host rapl")
    assert out["energy_ratio_lo"] > welch["energy_ratio_lo"] and out["energy_ratio_hi"] < welch["energy_ratio_hi"]
    assert out["energy_ratio_lo"] > 1 and out["energy_verdict"] == figures.ENERGY_ABOVE
    assert energy_ratio(gpu, cpu, "rapl", "nvml-counter + host rapl")["energy_verdict"] == figures.ENERGY_BELOW
    none = energy_ratio(None, gpu, "", "nvml-counter")
    assert none["energy_ratio"] != none["energy_ratio"] and none["energy_note"] == figures.NO_CPU_SIDE
    assert energy_ratio(cpu, None, "rapl", "")["energy_note"] == figures.NO_ACCELERATOR_SIDE
    assert energy_ratio(cpu, gpu, "rapl", "nvml-counter")["energy_note"] == figures.NO_HOST_SIDE
    one = energy_ratio(Rounds([2.0], "r"), Rounds([0.8], "r"), "rapl", "nvml-counter + host rapl")
    assert one["energy_ratio"] == pytest.approx(2.5) and one["energy_ratio_lo"] != one["energy_ratio_lo"]
    assert "no interval" in one["energy_note"] and one["energy_verdict"] == ""
    # a round one side cannot attribute drops that pair, not the pairing
    gapped = energy_ratio(Rounds([2.0, float("nan"), 1.9, 2.1], "r"), Rounds([0.8, 0.9, 0.76, 0.84], "r"), "rapl",
                          "nvml-counter + host rapl")  # fmt: skip
    assert gapped["energy_ratio"] == pytest.approx(2.0 / 0.8) and gapped["energy_ratio_lo"] > 1
    # one run's rounds on each side: the two sides' spread between runs widens the interval (on the log scale, as a
    # single run's figure), so a ratio its rounds alone call clear can lose its verdict
    from site_builder.uncertainty import single_run_interval

    wide = energy_ratio(cpu, gpu, "rapl", "nvml-counter + host rapl", tau2=0.25)
    want = single_run_interval([2.5], [out["energy_ratio_lo"]], [out["energy_ratio_hi"]], 0.25)
    assert wide["energy_ratio_lo"] == pytest.approx(want[0][0]) and wide["energy_ratio_hi"] == pytest.approx(want[1][0])
    assert wide["energy_ratio_lo"] < 1 < wide["energy_ratio_hi"] and wide["energy_verdict"] != figures.ENERGY_ABOVE


def _powered_gpu_file(cpu_energy: bool = True, gpu_joules: float = 0.5):
    """The H100 machine's committed run with energy blocks on every measurement: the CPU's RAPL on the CPU side, the
    board's counter (`gpu_joules` a unit) and the host's RAPL on the GPU side, each a round per process (schema 11)."""
    result = _gpu_file()
    accelerators = [a.model_copy(update={"power_limit_w": 700.0}) for a in result.machine.accelerators]
    ms = []
    for m in result.measurements:
        n = len(m.rounds)

        def block(source: str, of: str, per_unit: float, period: float, n: int = n, m=m) -> Energy:
            drift = [1.0, 1.06, 0.97, 1.03][:n] if source == "rapl" else [1.0, 1.02, 1.01, 0.99][:n]
            rounds = [EnergyRound(joules=per_unit * 100 * d, units=100, window_s=2.0) for d in drift]
            numbers = figures.figures([r.model_dump() for r in rounds], period, 20.0, m.samples_per_unit)
            return Energy(source=source, of=of, domains=["x"], counter_period_s=period, idle_power_w=20.0,
                          rounds=rounds, **numbers)  # fmt: skip

        if m.device == "cpu":
            blocks = [block("rapl", "device", 3.0, 0.001)] if cpu_energy else []
        else:
            blocks = [block("nvml-counter", "device", gpu_joules, 0.1), block("rapl", "host", 0.3, 0.001)]
        ms.append(m.model_copy(update={"energy": blocks}))
    machine = result.machine.model_copy(update={"accelerators": accelerators})
    return result.model_copy(update={"measurements": ms, "machine": machine, "schema_version": 11})


@pytest.mark.parametrize("cpu_energy", [True, False])
def test_machine_pages_and_the_open_data_give_the_energy_answer_from_one_rule(tmp_path, cpu_energy):
    """With both sides read, every accelerator row on the machine page shows the CPU-over-accelerator energy ratio
    (3.0 J against 0.5 + 0.3 J a unit: 3.75x, the accelerator uses less), the same figure and interval as
    speedups.csv; with the CPU side unread, the page says so instead of a figure."""
    import csv as csvmod

    from runner.results.storage import dumps, file_name
    from site_builder.render import interval, times
    from tests.conftest import build_site

    result = _powered_gpu_file(cpu_energy)
    folder = tmp_path / "results" / result.machine.id
    folder.mkdir(parents=True)
    (folder / file_name(result)).write_text(dumps(result))
    done = build_site(tmp_path / "results", tmp_path / "site", strict=True)
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "site" / "machines" / f"{result.machine.id}.html").read_text()
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split()).replace(" :", ":")
    with open(tmp_path / "site" / "data" / "speedups.csv", newline="") as f:
        rows = [r for r in csvmod.DictReader(f) if r["level"] == "machine"]
    assert rows
    if cpu_energy:
        for r in rows:
            ratio, lo, hi = float(r["energy_ratio"]), float(r["energy_ratio_lo"]), float(r["energy_ratio_hi"])
            assert ratio == pytest.approx(3.75, rel=0.05) and lo < ratio < hi
            assert r["energy_verdict"] == figures.ENERGY_ABOVE
            assert f"{times(ratio)} ({interval(lo, hi)}): {figures.ENERGY_ABOVE}" in text
        assert text.count(figures.ENERGY_ABOVE) >= len(rows)
    else:
        assert all(r["energy_ratio"] == "" and r["energy_note"] == figures.NO_CPU_SIDE for r in rows)
        assert text.count(figures.NO_CPU_SIDE) >= len(rows)


H100 = "0c9b4be27c3326c3"


def test_a_counter_read_without_a_figure_says_why_on_the_machine_page(tmp_path):
    """The H100 machine's standard run whose GPU rounds were shorter than ten NVML steps (before a round's floor): its
    rows carry "too short to attribute" for the energy cell of every such measurement, rather than "-" (which reads as
    no counter). Its later run of the same workloads under the floor gives each of them a figure, which the machine's
    rows then show."""
    from site_builder.load import load_results
    from site_builder.site import Site

    def gpu_rows(results: Path):
        loaded = load_results(results, strict=True, cache=None)
        site = Site.from_collector(loaded.collector, loaded.rejected)
        rows = site.rows_where(site.frame["machine_id"] == H100)
        small = rows["workload"].isin(["tabular-mlp", "depth-sweep", "cifar-lenet"])
        return rows[(rows["device"] == "cuda") & small & (rows["profile"] == "standard")]

    (tmp_path / H100).mkdir()
    shutil.copy(ROOT / "results" / H100 / "20261206T152537Z.yaml", tmp_path / H100)
    short = gpu_rows(tmp_path)
    assert len(short) == 52 and short["joules_per_unit"].isna().all()
    assert all(w.startswith("too short to attribute") for w in short["energy_why"].astype(str))
    shutil.copy(ROOT / "results" / H100 / "20261206T183751Z.yaml", tmp_path / H100)
    floored = gpu_rows(tmp_path)
    assert len(floored) == 52 and (floored["joules_per_unit"] > 0).all() and (floored["energy_why"] == "").all()
    assert (floored["joules_lo"] < floored["joules_per_unit"]).all()


def test_a_round_runs_long_enough_for_its_slowest_counter_to_attribute_it():
    """NVML's counter steps every 0.1 s: a round of a short budget keeps its steady state going for ten steps, so
    that a standard run's rounds (a third of a 2 s budget each) get a figure rather than "too short"."""
    from runner.measure.timing import measure

    sources = [{"source": "nvml-counter", "counter_period_s": 0.1}, {"source": "rapl", "counter_period_s": 0.001}]
    assert figures.min_window(sources) == pytest.approx(1.0)
    assert (
        figures.min_window([{"source": "nvml-power-samples", "counter_period_s": None}]) == figures.MIN_SAMPLED_WINDOW_S
    )
    assert figures.min_window([]) == 0.0
    assert figures.min_window(sources, "quick") == 0.0 and figures.min_window(sources, "standard") == pytest.approx(1.0)

    def unit() -> None:
        time.sleep(0.002)

    short = measure(unit, lambda: None, budget_s=0.05, target_rel_ci=1.0)
    long = measure(unit, lambda: None, budget_s=0.05, target_rel_ci=1.0, min_window_s=0.3)
    assert short.steady_wall_s < 0.3 <= long.steady_wall_s
    assert figures.attributable(long.steady_wall_s, 0.03) and not figures.attributable(short.steady_wall_s, 0.03)


TRACE = ROOT / "tests" / "data" / "energy" / "nvml_h100.json.gz"


class Replay:
    """NVML as nvidia-ml-py answers it, from a log recorded on an H100 (tests/benchmarks/energy_agreement.py --record:
    the counter, the power usage and the instantaneous power every few milliseconds, idle and under two seed loops),
    at a virtual time the test moves (`clock`, `pause`)."""

    def __init__(self, path: Path) -> None:
        import gzip
        import json

        log = json.loads(gzip.decompress(path.read_bytes()))
        self.segments = {s["what"]: (s["from_s"], s["to_s"]) for s in log["segments"]}
        self.t = [r[0] for r in log["rows"]]
        self.mj, self.usage, self.instant = ([r[i] for r in log["rows"]] for i in (1, 2, 3))
        self.now = 0.0

    def clock(self) -> float:
        return self.now

    def pause(self, seconds: float) -> None:
        self.now += seconds

    def _at(self, column: list) -> int:
        import bisect

        return column[max(0, bisect.bisect_right(self.t, self.now) - 1)]

    def nvmlInit(self) -> None:
        pass

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        return index

    def nvmlDeviceGetTotalEnergyConsumption(self, handle: int) -> int:
        return self._at(self.mj)

    def nvmlDeviceGetPowerUsage(self, handle: int) -> int:
        return self._at(self.usage)

    def integral(self, a: float, b: float) -> float:
        """Joules of the instantaneous power over [a, b] (trapezoids between the logged readings)."""
        import numpy as np

        t, w = np.asarray(self.t), np.asarray(self.instant, dtype=float) / 1e3
        inside = (t > a) & (t < b)
        ts = np.concatenate([[a], t[inside], [b]])
        ws = np.concatenate([[np.interp(a, t, w)], w[inside], [np.interp(b, t, w)]])
        return float(np.sum(np.diff(ts) * (ws[1:] + ws[:-1]) / 2))


def test_a_recorded_h100_counter_gives_its_period_idle_power_and_energy_within_the_attribution_rule():
    """Against the recorded H100 log: the counter's update period is found (0.1 s), the idle power matches the board's
    instantaneous power, and every window of at least MIN_PERIODS steps at a random phase under load reads within 12%
    of the integrated instantaneous power (5% at the median), where windows of two or three steps miss by 20%."""
    import random

    board = Replay(TRACE)
    meter = energy.nvml_meter(0, board)
    board.now = 0.05
    period = energy.counter_period(meter.read, watch_s=1.5, clock=board.clock, pause=board.pause)
    assert period == pytest.approx(0.1, rel=0.05)
    idle_from, _ = board.segments["idle"]
    board.now = idle_from + 0.05
    idle = energy.idle_power(meter.read, over_s=2.0, clock=board.clock, pause=board.pause)
    assert idle == pytest.approx(board.integral(idle_from + 0.05, idle_from + 2.05) / 2.0, rel=0.1)

    pick = random.Random(7)

    def misses(shortest: float, longest: float) -> list[float]:
        out = []
        for what in ("tabular-mlp, two blocks", "mnist-cnn, two blocks"):
            a, b = board.segments[what]
            for _ in range(300):
                width = pick.uniform(shortest, longest)
                board.now = pick.uniform(a + 0.2, b - width - 0.05)
                start, e0 = board.now, meter.read()
                board.now += width
                out.append(abs((meter.read() - e0) / board.integral(start, board.now) - 1))
        return out

    long = misses(figures.MIN_PERIODS * period, 2 * figures.MIN_PERIODS * period)
    assert max(long) < 0.12 and statistics.median(long) < 0.05, (max(long), statistics.median(long))
    short = misses(2 * period, 3 * period)
    assert max(short) > 0.2
    assert all(figures.attributable(w, period) for w in (1.0, 1.5)) and not figures.attributable(0.3, period)


def test_a_run_s_energy_interval_holds_the_machine_s_other_runs(tmp_path):
    """The H100 machine's three standard runs with energy, hours apart: the energy of an epoch moves with the host's
    speed between runs, far beyond one run's rounds (the files' own intervals hold the other runs' figures for fewer
    than 70% of the GPU measurements). A run's joules as the site gives them (the open data's row of that run) have
    their interval widened by the spread between runs (analyses.between, figure energy), which holds most of the
    other runs' figures; the machine's row is the median over its three runs with the interval across them, as its
    time is."""
    from runner.results import intervals
    from site_builder import opendata, uncertainty
    from site_builder.analyses import between
    from site_builder.load import load_results
    from site_builder.site import Site

    names = ["20261206T183751Z.yaml", "20261207T085307Z.yaml", "20261207T120543Z.yaml"]
    (tmp_path / H100).mkdir()
    for name in names:
        shutil.copy(ROOT / "results" / H100 / name, tmp_path / H100)
    loaded = load_results(tmp_path, strict=True, cache=None)
    site = Site.from_collector(loaded.collector, loaded.rejected)
    assert site.spread.component(between.ENERGY, "accelerator", "as-written").tau > 0.05

    runs = [load(tmp_path / H100 / name)[0] for name in names]
    key = ["workload_hash", "framework", "variant"]

    def joules(result):
        out = {}
        for m in result.measurements:
            own = figures.device_figure(m.energy)
            if own is not None:
                out[(m.workload_hash, m.framework, m.variant)] = (own.joules_per_unit, own.ci95_joules_per_unit)
        return out

    each = [joules(r) for r in runs]
    assert all(len(j) == 52 for j in each)
    measured = pd.concat(list(opendata.measurement_blocks(site)))
    measured = measured[measured["joules_per_unit"].notna()]
    own_inside = shown_inside = pairs = 0
    for i, run in enumerate(runs):
        rows = measured[(measured["level"] == "run") & (measured["run_id"] == run.run.id)]
        assert len(rows) == 52
        for r in rows.itertuples():
            figure, (lo, hi) = each[i][(r.workload_hash, r.framework, r.variant)]
            tau2 = site.spread.tau2(between.ENERGY, r.device, r.variant)
            want = uncertainty.single_run_interval([figure], [lo], [hi], tau2)
            assert r.joules_per_unit == figure
            assert r.joules_lo == pytest.approx(want[0][0]) and r.joules_hi == pytest.approx(want[1][0])
            assert r.joules_lo < lo and hi < r.joules_hi
            for j, other in enumerate(each):
                if j != i:
                    value = other[(r.workload_hash, r.framework, r.variant)][0]
                    pairs += 1
                    own_inside += lo <= value <= hi
                    shown_inside += r.joules_lo <= value <= r.joules_hi
    assert pairs == 312 and own_inside / pairs < 0.7 and shown_inside / pairs >= 0.9

    machine = site.frame[(site.frame["machine_id"] == H100) & site.frame["joules_per_unit"].notna()]
    assert len(machine) == 52 and (machine["joules_runs"] == 3).all()
    for r in machine.itertuples():
        values = [e[(r.workload_hash, r.framework, r.variant)][0] for e in each]
        across = intervals.process_interval(values)
        assert r.joules_per_unit == pytest.approx(sorted(values)[1])
        assert (r.joules_lo, r.joules_hi) == pytest.approx(across)
    # the pages and the open data's machine rows show that figure
    rows = measured[measured["level"] == "machine"].merge(machine[[*key, "joules_lo"]], on=key, suffixes=("", "_f"))
    assert len(rows) == 52 and (rows["joules_lo"] == rows["joules_lo_f"]).all()
    # a row without joules keeps none; the CPU rows (no RAPL on that host) have no energy interval to widen
    cpu = site.frame[(site.frame["machine_id"] == H100) & (site.frame["device"] == "cpu")]
    assert len(cpu) and cpu["joules_per_unit"].isna().all() and cpu["joules_lo"].isna().all()


def test_a_machine_s_energy_over_runs_is_their_median_with_an_interval_across_them():
    """As a machine's time over its runs (site_builder.combine): two runs span their intervals, three or more have
    Student's t across their figures, and runs that agree exactly give no interval of no width."""
    from runner.results import intervals
    from site_builder.combine import energy_of_runs

    assert energy_of_runs(np.array([20.0, 30.0]), np.array([19.0, 29.0]), np.array([21.0, 31.0])) == (
        25.0, 19.0, 31.0, 2)  # fmt: skip
    three = energy_of_runs(np.array([20.0, 31.0, 25.0]), np.full(3, np.nan), np.full(3, np.nan))
    assert three[0] == 25.0 and three[1] < 20.0 and three[2] > 31.0 and three[3] == 3
    bare = energy_of_runs(np.array([20.0, 30.0]), np.full(2, np.nan), np.full(2, np.nan))  # as two runs' time
    assert bare[1:3] == pytest.approx(intervals.measurement_interval([20.0, 30.0]))
    same = energy_of_runs(np.array([20.0, 20.0, 20.0]), np.full(3, 19.0), np.full(3, 21.0))
    assert math.isnan(same[1]) and math.isnan(same[2])  # runs that agree exactly: no interval of no width


def test_a_block_s_standard_error_is_its_rounds_own_and_the_energy_ratio_widens_by_both_sides_spread():
    """The between-run estimate weighs each run's energy by its rounds' own standard error of the log (var / n over
    the rounds it is figured from, not read back from its t-interval). A machine that ran twice, its board's joules 40%
    apart, gives the energy a between-run spread: its newest run's energy ratio on the site is the rounds' interval
    widened by the two sides' tau^2, as energy_ratio gives it."""
    from site_builder.analyses import between
    from site_builder.analyses.speedups import energy_ratio
    from site_builder.collect import Collector
    from site_builder.site import Site
    from site_builder.uncertainty import single_run_interval

    rounds = [
        EnergyRound(joules=j, units=100, window_s=w) for j, w in [(50.0, 2.0), (55.0, 2.0), (9.0, 0.3), (48.0, 2.0)]
    ]
    block = _block("nvml-counter", "device", rounds)
    logs = [math.log(j / 100) for j in (50.0, 55.0, 48.0)]  # the 0.3 s round is too short to attribute
    assert figures.log_se2(block) == pytest.approx(statistics.variance(logs) / 3)
    assert math.isnan(figures.log_se2(_block("nvml-counter", "device", rounds[:1])))
    assert figures.device_figure([block]) is block and figures.device_figure([]) is None

    first = _powered_gpu_file(True)
    later_run = first.run.model_copy(update={"id": "f" * 32, "started_at": first.run.started_at + timedelta(days=1)})
    later = _powered_gpu_file(True, gpu_joules=0.7).model_copy(update={"run": later_run})
    collector = Collector()
    collector.add(Path("first"), first)
    collector.add(Path("later"), later)
    site = Site.from_collector(collector, [])
    tau2 = site.spread.tau2(between.ENERGY, "cuda", "as-written")
    assert tau2 > 0.01
    rows = site.speedups[site.speedups["energy_ratio_lo"].notna()]
    ratio_tau2 = site.spread.energy_ratio_tau2_column(rows["device"], rows["variant"])
    assert len(rows) and (ratio_tau2 >= tau2).all()
    for row, t2 in zip(rows.itertuples(), ratio_tau2, strict=True):
        plain = energy_ratio(row.energy_rounds_cpu, row.energy_rounds, "rapl", "nvml-counter + host rapl")
        lo, hi = single_run_interval(
            [plain["energy_ratio"]], [plain["energy_ratio_lo"]], [plain["energy_ratio_hi"]], t2
        )
        assert row.energy_ratio_lo == pytest.approx(lo[0]) and row.energy_ratio_hi == pytest.approx(hi[0])
        assert row.energy_ratio_lo < plain["energy_ratio_lo"]
