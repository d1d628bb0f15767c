"""TensorFlow and JAX measured for real through `benchsite run`'s API, each in its own child process; a missing
or broken framework is recorded with its reason and never stops the others."""

from __future__ import annotations

import pytest

from runner import api
from runner.frameworks import canonical_framework
from runner.results import storage
from tests.conftest import shadow_modules


def _run(tmp_path, **options):
    opts = api.RunOptions(profile="tiny", devices=["cpu"], time_budget_s=0.05, output=tmp_path / "r.yaml", **options)
    plan = api.plan_run(opts)
    result, path = api.execute(plan)
    loaded, problems = storage.load(path)
    assert problems == [] and loaded == result
    return plan, result


@pytest.mark.parametrize("framework", ["tensorflow", "jax"])
def test_framework_measures_the_suite(tmp_path, framework):
    pytest.importorskip(framework)
    plan, result = _run(tmp_path, frameworks=[framework], workloads=["tabular-mlp", "mnist-cnn"])
    assert plan.devices == {framework: ["cpu"]}
    info = next(f for f in result.software.frameworks if f.name == framework)
    assert info.available and info.version
    got = [(m.workload, m.variant, m.framework, m.status) for m in result.measurements]
    assert got == [
        ("tabular-mlp", "as-written", framework, "ok"),
        ("tabular-mlp", "tuned", framework, "ok"),
        ("mnist-cnn", "as-written", framework, "ok"),
        ("mnist-cnn", "tuned", framework, "ok"),
    ]
    for m in result.measurements:
        assert m.median_s and m.median_s > 0 and m.params == (1010 if m.workload == "tabular-mlp" else 1_199_882)
    # the tuned convnet on the CPU says how it ran
    tuned_cnn = result.measurements[3]
    assert tuned_cnn.notes and ("XLA" in tuned_cnn.notes[0] or "step per batch" in tuned_cnn.notes[0])
    # the equivalence check ran first and is in the file
    # (a TensorFlow mnist-cnn check once "failed" in a full run and never again; its detail says why next time)
    checks = {(c.workload, c.framework, c.status) for c in result.equivalence}
    assert checks == {("tabular-mlp", framework, "passed"), ("mnist-cnn", framework, "passed")}, [
        (c.workload, c.status, c.detail) for c in result.equivalence
    ]


def test_transformer_says_why_it_is_pytorch_only(tmp_path):
    pytest.importorskip("jax")
    plan = api.plan_run(
        api.RunOptions(
            profile="tiny", devices=["cpu"], frameworks=["jax"], workloads=["transformer"], output=tmp_path / "r.yaml"
        )
    )
    assert plan.groups and all("PyTorch-only" in (g.skip_reason or "") for g in plan.groups)


def test_framework_names_and_aliases():
    assert [canonical_framework(n) for n in ("PyTorch", "tf", "keras", "jax")] == [
        "torch",
        "tensorflow",
        "tensorflow",
        "jax",
    ]
    with pytest.raises(ValueError, match="valid frameworks: torch, tensorflow, jax"):
        canonical_framework("mxnet")


def test_missing_and_crashing_frameworks_are_recorded_and_the_others_run(tmp_path, monkeypatch):
    shadow_modules(
        tmp_path,
        monkeypatch,
        jax="raise ModuleNotFoundError(\"No module named 'jax'\", name='jax')\n",
        tensorflow="import os\nos._exit(7)\n",  # dies on import: no traceback, just an exit code
    )
    plan, result = _run(tmp_path, workloads=["tabular-mlp"])  # default: every framework
    assert list(plan.devices) == ["torch"]
    infos = {f.name: f for f in result.software.frameworks}
    assert infos["torch"].available
    assert not infos["jax"].available and "jax is not installed" in (infos["jax"].reason or "")
    assert "pip install 'benchsite[jax]'" in (infos["jax"].reason or "")
    assert not infos["tensorflow"].available and "exited with code 7" in (infos["tensorflow"].reason or "")
    assert {(m.framework, m.status) for m in result.measurements} == {("torch", "ok")}
    assert any("jax: skipped" in note for note in plan.notes)


def test_asking_only_for_a_missing_framework_is_a_clear_error(tmp_path, monkeypatch):
    shadow_modules(tmp_path, monkeypatch, jax="raise ModuleNotFoundError(\"No module named 'jax'\", name='jax')\n")
    with pytest.raises(api.PlanError, match=r"jax is not installed \(pip install 'benchsite\[jax\]'\)"):
        api.plan_run(api.RunOptions(profile="tiny", frameworks=["jax"], output=tmp_path / "r.yaml"))
