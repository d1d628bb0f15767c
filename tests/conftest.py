"""Shared fixtures: a real, small result file built from the product's own models."""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from runner.schema import Cpu, Machine, Measurement, OperatingSystem, ResultFile, Run, Software, Suite, SyncSelfTest

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


def make_measurement(**overrides) -> Measurement:
    fields = dict(
        workload="depth-sweep",
        workload_hash="0123456789abcdef",
        point={"depth": 4},
        variant="tuned",
        framework="torch",
        device="cpu",
        device_name="AMD EPYC",
        status="ok",
        unit="epoch",
        samples_per_unit=1000,
        warmup_s=0.5,
        samples_s=[0.010, 0.011, 0.012],
        median_s=0.011,
        iqr_s=0.001,
        ci95_s=(0.010, 0.012),
        rel_ci_halfwidth=0.09,
        stable=False,
        samples_per_s=90909.0,
        params=230,
        flops_per_unit=1.2e6,
        achieved_tflops=1e-4,
    )
    fields.update(overrides)
    # keep the figures consistent, as the validation gate (and the site) require
    median = fields.get("median_s")
    if median and "samples_s" not in overrides:
        fields["samples_s"] = [median * 0.99, median, median * 1.01]
    if median and fields.get("flops_per_unit") and "achieved_tflops" not in overrides:
        fields["achieved_tflops"] = fields["flops_per_unit"] / median / 1e12
    return Measurement(**fields)


def retime(m: Measurement, median_s: float, **update) -> Measurement:
    """A copy of m with another median and the samples and FLOP/s that go with it."""
    scale = median_s / m.median_s
    return m.model_copy(
        update={
            "median_s": median_s,
            "samples_s": [s * scale for s in m.samples_s],
            "achieved_tflops": m.achieved_tflops / scale if m.achieved_tflops else None,
            **update,
        }
    )


def make_result(measurements=None, machine_id="a23074609b32f305") -> ResultFile:
    now = datetime(2026, 11, 22, 2, 0, tzinfo=timezone.utc)
    return ResultFile(
        schema_version=1,
        benchsite_version="0.1.0",
        suite=Suite(version=1, profile="tiny"),
        run=Run(id="0" * 32, started_at=now, finished_at=now, command="benchsite run", time_budget_s=1.0),
        machine=Machine(
            id=machine_id,
            cpu=Cpu(model="AMD EPYC", vendor="AuthenticAMD", arch="x86_64", logical_cpus=2),
            memory_gib=23.5,
            os=OperatingSystem(system="Linux", release="6.1"),
            system_type="cloud",
        ),
        software=Software(python="3.11.7", python_implementation="CPython"),
        # every accelerator timing needs a passed sync self-test (the validation gate and the site enforce it)
        sync_selftests=[
            SyncSelfTest(framework=f, device=d, passed=True, unsynced_s=0.001, synced_s=0.1)
            for f, d in sorted({(m.framework, m.device) for m in measurements or [] if m.device != "cpu"})
        ],
        measurements=measurements if measurements is not None else [make_measurement()],
    )


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


def hostile_result(machine_id: str = "badc0ffee0ddf00d") -> ResultFile:
    """A result file with a hostile string in every free-text field the schema accepts one in (found by
    trying each string field in turn, so a field added later is covered without editing this test)."""
    from runner.schema import Accelerator, ErrorInfo, FrameworkInfo, SyncSelfTest, TopOp

    measurements = [
        make_measurement(
            device="cpu", workload_hash="1" * 16, top_ops=[TopOp(name="x", self_s=1e-3, total_s=2e-3, calls=3)]
        ),
        make_measurement(device="cuda", workload_hash="1" * 16, median_s=0.001, ci95_s=(0.001, 0.001), warnings=["w"]),
        make_measurement(device="cpu", workload_hash="1" * 16, framework="jax", median_s=0.02, ci95_s=(0.02, 0.02)),
        make_measurement(
            device="cuda",
            workload_hash="2" * 16,
            status="failed",
            error=ErrorInfo(type="RuntimeError", message="m", traceback="t"),
            median_s=None,
            ci95_s=None,
            samples_s=[],
            skip_reason=None,
        ),
        make_measurement(
            workload="transformer",
            workload_hash="3" * 16,
            point={"model": "m", "mode": "train", "batch_size": 8},
            device="cpu",
            unit="step",
        ),
    ]
    base = make_result(measurements, machine_id=machine_id)
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
            if isinstance(value, dict | list):
                poison(value, (*path, key))
            elif isinstance(value, str):
                node[key] = HOSTILE[next(counter) % len(HOSTILE)]  # type: ignore[index]
                try:
                    ResultFile.model_validate(data)
                except ValueError:
                    node[key] = value  # a field with a pattern or a fixed set of values: cannot hold text

    poison(data, ())
    return ResultFile.model_validate(data)


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
