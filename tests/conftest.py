"""Shared fixtures: a real, small result file built from the product's own models."""

from __future__ import annotations

import itertools
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from runner import SUITE_VERSION
from runner.fingerprint import machine_id
from runner.results.intervals import summarize
from runner.results.schema import (
    Cpu,
    Machine,
    Measurement,
    OperatingSystem,
    ResultFile,
    Run,
    Software,
    Suite,
    SyncSelfTest,
)
from runner.results.storage import file_name
from runner.workloads import known

TESTS = Path(__file__).parent
ROOT = TESTS.parent
# The failure-isolation workloads live in tests/plugins; the measuring children import them by name.
sys.path.insert(0, str(TESTS / "plugins"))


def shadow_modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **modules: str) -> None:
    """Put modules that shadow real ones (a framework that is missing or broken) first on the path of every
    measuring child process."""
    import os

    shim = tmp_path / "shim"
    shim.mkdir()
    for name, source in modules.items():
        (shim / f"{name}.py").write_text(source)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(shim), os.environ.get("PYTHONPATH")])))


def suite_fields(
    workload: str = "depth-sweep", point: dict | None = None, variant: str = "tuned", suite: int = SUITE_VERSION
) -> dict:
    """The figures the suite (this version, or an earlier one the gate still knows) fixes for one of its points
    (hash, unit, examples per unit, parameters, FLOPs): what a measurement of that point must carry to pass the
    gate."""
    point = {"depth": 4} if point is None and workload == "depth-sweep" else (point or {})
    earlier = known.superseded(suite)  # a loop fixed within the version: today's hash first
    for digest, entry in sorted((known.table(suite) or {}).items(), key=lambda item: item[0] in earlier):
        if (entry.workload, entry.point, entry.variant) == (workload, point, variant):
            return {
                "workload": workload,
                "workload_hash": digest,
                "point": point,
                "variant": variant,
                "unit": entry.unit,
                "samples_per_unit": entry.samples_per_unit,
                "params": entry.params,
                "flops_per_unit": entry.flops_per_unit,
            }
    raise KeyError(f"no {workload} {point} {variant} in suite {suite}")


_JITTER = (i * 1e-4 % 0.005 + i * 1e-9 for i in itertools.count(1))


def make_measurement(**overrides) -> Measurement:
    """A measurement of a real suite point (depth-sweep at depth 4 by default; `workload`, `point` and `variant`
    pick another), its statistics and rates computed from its samples, as the gate and the site recompute them.
    A `workload_hash` override keeps the other fields as given (a file that names no suite point); `suite`
    picks an earlier suite version's point."""
    suite = overrides.pop("suite", SUITE_VERSION)
    fields: dict = dict(
        framework="torch",
        device="cpu",
        device_name="AMD EPYC",
        status="ok",
        warmup_s=0.5,
        median_s=0.011,
        stable=False,
    )
    if "workload_hash" in overrides:
        fields.update(workload="depth-sweep", point={"depth": 4}, variant="tuned", unit="epoch", samples_per_unit=1000)
    else:
        pick = overrides.get("workload", "depth-sweep"), overrides.get("point"), overrides.get("variant", "tuned")
        fields.update(suite_fields(*pick, suite=suite))
    fields.update(overrides)
    median = fields.get("median_s")
    if fields["status"] == "ok" and median:
        # each call its own spread: real samples never repeat another measurement's, and the gate refuses copies
        jitter = next(_JITTER)
        samples = fields.setdefault("samples_s", [median * (0.99 - jitter), median, median * (1.01 + jitter)])
        stats = summarize(samples)
        flops = fields.get("flops_per_unit")
        fields.update(
            median_s=stats.median_s,
            iqr_s=stats.iqr_s,
            ci95_s=stats.ci95_s,
            rel_ci_halfwidth=stats.rel_ci_halfwidth,
            samples_per_s=fields["samples_per_unit"] / stats.median_s,
            achieved_tflops=flops / stats.median_s / 1e12 if flops else None,
        )
    return Measurement(**fields)


def retime(m: Measurement, median_s: float, **update) -> Measurement:
    """m measured again with another median: fresh samples, and the statistics and rates that go with them."""
    fields = {**m.model_dump(), "median_s": median_s, **update}
    if "samples_s" not in update:
        del fields["samples_s"]
    return make_measurement(**fields)


def same_cpu_model(result: ResultFile, k: int) -> ResultFile:
    """The result on another machine of the same CPU model as make_result's unlabelled one ('AMD EPYC, 2 cores' as the
    site names it): the k-th such machine, told apart by its socket count, which the machine id hashes and the CPU's
    name leaves out."""
    cpu = result.machine.cpu.model_copy(update={"model": "AMD EPYC", "sockets": k})
    machine = result.machine.model_copy(update={"cpu": cpu, "id": machine_id(cpu, result.machine.accelerators)})
    return result.model_copy(update={"machine": machine})


def make_result(measurements=None, label: str = "", suite: int = SUITE_VERSION) -> ResultFile:
    """A run of `measurements` on a 2-core AMD EPYC ('AMD EPYC <label>': another label, another machine), with
    the machine id its hardware hashes to."""
    now = datetime(2026, 11, 22, 2, 0, tzinfo=timezone.utc)
    measurements = measurements if measurements is not None else [make_measurement()]
    cpu = Cpu(model=f"AMD EPYC {label}".strip(), vendor="AuthenticAMD", arch="x86_64", logical_cpus=2)
    return ResultFile(
        schema_version=1,
        benchsite_version="0.1.0",
        suite=Suite(version=suite, profile="tiny"),
        run=Run(
            id="0" * 32,
            started_at=now,
            finished_at=now + timedelta(seconds=max([m.wall_s or 0.0 for m in measurements] + [60.0])),
            command="benchsite run",
            time_budget_s=1.0,
        ),
        machine=Machine(
            id=machine_id(cpu, []),
            cpu=cpu,
            memory_gib=23.5,
            os=OperatingSystem(system="Linux", release="6.1"),
            system_type="cloud",
        ),
        software=Software(python="3.11.7", python_implementation="CPython"),
        # every accelerator timing needs a passed sync self-test (the validation gate and the site enforce it)
        sync_selftests=[
            SyncSelfTest(framework=f, device=d, passed=True, unsynced_s=0.001, synced_s=0.1)
            for f, d in sorted({(m.framework, m.device) for m in measurements if m.device != "cpu"})
        ],
        measurements=measurements,
    )


def save_under(results: Path, result: ResultFile) -> Path:
    """Write result where a contributor's file goes: results/<machine-id>/<start time>.yaml."""
    from runner.results import storage

    return storage.save(result, results / result.machine.id / file_name(result))


@pytest.fixture
def result() -> ResultFile:
    return make_result()


# Hostile text for every free-text field: each would run script or make a link if a page used it raw.
HOSTILE = [
    "<script>window.__pwned=1</script>",
    "<img src=x onerror=window.__pwned=1>",
    "[click](javascript:window.__pwned=1)",
    "=HYPERLINK(1)",
    "**bold** `code` | cell | <b>x</b> &amp;",
]


def hostile_result(label: str = "hostile", suite: int = SUITE_VERSION) -> ResultFile:
    """A result file with a hostile string in every free-text field the schema accepts one in (found by
    trying each string field in turn, so a field added later is covered without editing this test). The
    figures the gate pins to the suite (workload, point) stay the suite's, and machine.id is recomputed from the
    hostile hardware names, so that the file passes every rule but the character rule the site leaves out."""
    from runner.results.schema import Accelerator, ErrorInfo, FrameworkInfo, SyncSelfTest, TopOp

    measurements = [
        make_measurement(suite=suite, device="cpu", top_ops=[TopOp(name="x", self_s=1e-3, total_s=2e-3, calls=3)]),
        make_measurement(suite=suite, device="cuda", median_s=0.001, warnings=["w"]),
        make_measurement(suite=suite, device="cpu", framework="jax", median_s=0.02),
        make_measurement(
            suite=suite,
            device="cuda",
            point={"depth": 2},
            status="failed",
            error=ErrorInfo(type="RuntimeError", message="m", traceback="t"),
            median_s=None,
            samples_s=[],
            skip_reason=None,
        ),
        make_measurement(
            suite=suite, workload="transformer", point={"model": "bert-tiny", "mode": "train", "batch_size": 2}
        ),
    ]
    base = make_result(measurements, label=label, suite=suite)
    machine = base.machine.model_copy(
        update={
            "accelerators": [
                Accelerator(
                    vendor="nvidia",
                    model="g",
                    driver="d",
                    cuda_version="c",
                    rocm_version="r",
                    compute_capability="9",
                    gfx_target="gfx",
                    source="nvml",
                )
            ],
            "system_type_evidence": ["e"],
            "os": base.machine.os.model_copy(update={"distro": "d"}),
        }
    )
    software = base.software.model_copy(
        update={
            "numpy": "n",
            "frameworks": [
                FrameworkInfo(name="torch", version="v", available=True, build={"cuda": "b"}, devices=["cpu"]),
                FrameworkInfo(name="jax", available=False, reason="r"),
            ],
            "env": {"OMP_NUM_THREADS": "e"},
        }
    )
    selftest = SyncSelfTest(framework="torch", device="cuda", passed=True, unsynced_s=1e-3, synced_s=2e-3, detail="d")
    data = base.model_copy(update={"machine": machine, "software": software, "sync_selftests": [selftest]}).model_dump(
        mode="json"
    )
    counter = iter(range(10**6))

    def poison(node: object, path: tuple) -> None:
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, value in list(items):
            if key == "point":
                continue  # a point is one of the suite's: the gate refuses any other
            if isinstance(value, dict | list):
                poison(value, (*path, key))
            elif isinstance(value, str):
                node[key] = HOSTILE[next(counter) % len(HOSTILE)]  # type: ignore[index]
                try:
                    ResultFile.model_validate(data)
                except ValueError:
                    node[key] = value  # a field with a pattern or a fixed set of values: cannot hold text

    poison(data, ())
    hostile = ResultFile.model_validate(data)
    data["machine"]["id"] = machine_id(hostile.machine.cpu, hostile.machine.accelerators)
    return ResultFile.model_validate(data)


# a real `benchsite run --model` of BERT-base on the H100 machine, kept with the benchmarks, named as its run names it
OWN_MODEL = ROOT / "tests" / "benchmarks" / "data" / "own_model" / "bert-base_h100.yaml"
OWN_MODEL_AS = Path("0c9b4be27c3326c3") / "20261206T115738Z.yaml"


@pytest.fixture(scope="session")
def committed_site(tmp_path_factory) -> Path:
    """`benchsite site build --strict` of the committed results and OWN_MODEL beside them, built once for every test
    that reads that site (a build of every committed file takes about half a minute). Returns the site's folder."""
    import os
    import shutil
    import subprocess

    where = tmp_path_factory.mktemp("committed-site")
    results, site = where / "results", where / "site"
    shutil.copytree(ROOT / "results", results)
    shutil.copy(OWN_MODEL, results / OWN_MODEL_AS)
    env = {k: v for k, v in os.environ.items() if k not in ("BENCHSITE_SITE_URL", "BENCHSITE_RESULTS")}
    cmd = [sys.executable, "-m", "runner", "site", "build", "--strict", "--results", str(results), "--out", str(site)]
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return site


def build_site(results: Path, out: Path, strict: bool = False, site_url: str | None = None):
    """`mkdocs build --strict` of the real site from a results folder, as a user runs it."""
    import os
    import subprocess

    env = {**os.environ, "BENCHSITE_RESULTS": str(results), "BENCHSITE_STRICT": "1" if strict else "0"}
    env.pop("BENCHSITE_SITE_URL", None)  # the default unless the test names one
    if site_url:
        env["BENCHSITE_SITE_URL"] = site_url
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)],
        cwd=TESTS.parent,
        env=env,
        capture_output=True,
        text=True,
    )


def twinned(m: Measurement, harness_rest: list[float], script_s: list[float]) -> Measurement:
    """m with a seed-script twin (runner.fidelity) made from these lists: round 1's harness figure is m itself."""
    from runner import fidelity
    from runner.workloads import get

    case = next(c for c in get(m.workload).cases("tiny") if c.point == m.point)
    twin = fidelity.twin_for(m.workload, m.variant, m.point, case.config, m.framework, m.device)
    assert twin is not None, m.point
    harness = [fidelity.mean_per_unit(m.samples_s), *harness_rest]
    block = fidelity.block(twin, m.device, harness, script_s, [10] * len(script_s))
    return Measurement(**{**m.model_dump(), "fidelity": block})


def twinned_result() -> ResultFile:
    """A machine whose twins found one as-written measurement harness-affected (tabular-mlp, 1.6x its script) and one
    faithful (depth-sweep at depth 2)."""
    mlp = make_measurement(workload="tabular-mlp", variant="as-written", median_s=0.16)
    depth = make_measurement(workload="depth-sweep", point={"depth": 2}, variant="as-written", median_s=0.011)
    return make_result(
        [
            twinned(mlp, [0.161, 0.162], [0.100, 0.101, 0.099]),
            twinned(depth, [0.0110, 0.0111], [0.0110, 0.0109, 0.0111]),
        ],
        label="twinned",
    )


def cpu_torch_plan(tmp_path: Path, workloads: list[str], variants: list[str], budget_s: float, **options):
    """A plan of the tiny profile for PyTorch on the CPU, with nothing measured beside the points (no equivalence
    check, peaks or profiler)."""
    from runner import api

    return api.plan_run(
        api.RunOptions(
            profile="tiny",
            workloads=workloads,
            frameworks=["torch"],
            devices=["cpu"],
            variants=variants,
            equivalence=False,
            peaks=False,
            profile_ops=False,
            time_budget_s=budget_s,
            output=tmp_path,
            **options,
        )
    )
