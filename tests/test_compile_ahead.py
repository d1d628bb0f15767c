"""The compile-ahead pass (runner.api.compile_ahead), end to end on the CPU: the suite's tuned transformer loop,
told to compile on the CPU too (tests/plugins/compile_workloads.py), measured by `api.execute` as a run measures.

Points compiled ahead, side by side in children of their own, fill the run's compile cache; each measuring process
then compiles from a fresh Dynamo and loads Inductor's graphs instead of compiling them again, and says so."""

from __future__ import annotations

import os
import re
import tempfile

import pytest

from runner import api
from tests.conftest import TESTS

PLUGIN_ENV = {
    "BENCHSITE_PLUGINS": "compile_workloads",
    "PYTHONPATH": os.pathsep.join([str(TESTS / "plugins"), str(TESTS.parent)]),
}
GRAPHS = re.compile(r"Inductor graphs: (\d+) loaded from the run's compile cache, (\d+) compiled here")


@pytest.fixture
def compiled_plugin(monkeypatch):
    pytest.importorskip("transformers")
    for key, value in PLUGIN_ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    # By the product's own rule a 2-core machine gets no compile-ahead children (4 cores and 16 GiB each): two here.
    monkeypatch.setattr(api, "AHEAD_CORES_PER_CHILD", 1)
    monkeypatch.setattr(api, "AHEAD_GIB_PER_CHILD", 1)


def _run(tmp_path, **options):
    notes: list[str] = []
    ahead: list[tuple[int, int, int]] = []
    progress = api.Progress(note=notes.append, ahead=lambda group, done, total, n: ahead.append((done, total, n)))
    plan = api.plan_run(
        api.RunOptions(
            profile="tiny",
            workloads=["test-compiled"],
            devices=["cpu"],
            frameworks=["torch"],
            variants=["tuned"],
            time_budget_s=0.1,
            output=tmp_path / "r.yaml",
            equivalence=False,
            peaks=False,
            profile_ops=False,
            **options,
        )
    )
    result, _ = api.execute(plan, progress)
    assert [m.status for m in result.measurements] == ["ok", "ok"], result.measurements
    graphs = [next(GRAPHS.fullmatch(n) for n in m.notes if GRAPHS.fullmatch(n)) for m in result.measurements]
    return [(int(g[1]), int(g[2])) for g in graphs], notes, ahead, plan


def test_points_compiled_ahead_are_loaded_by_their_measurement(compiled_plugin, tmp_path, monkeypatch):
    made: list[str] = []
    mkdtemp = tempfile.mkdtemp

    def remember(**kwargs):
        made.append(mkdtemp(**kwargs))
        return made[-1]

    monkeypatch.setattr(api.tempfile, "mkdtemp", remember)
    held: dict[str, list[str]] = {}
    rmtree = api.shutil.rmtree

    def listed(path, **kwargs):
        held[os.path.basename(path)] = sorted(os.listdir(path))
        rmtree(path, **kwargs)

    monkeypatch.setattr(api.shutil, "rmtree", listed)
    graphs, notes, ahead, plan = _run(tmp_path)
    assert any(n.startswith("Compiled 2 of 2 test-compiled tuned torch/cpu points ahead") for n in notes), notes
    assert ahead[0] == (0, 2, 2) and ahead[-1] == (2, 2, 2), ahead
    assert all(loaded >= 1 and compiled == 0 for loaded, compiled in graphs), graphs
    assert "compile ahead torch test-compiled" in plan.phase_s
    # the run's own cache went with the run
    caches = [m for m in made if os.path.basename(m).startswith("benchsite-compile-")]
    assert len(caches) == 1 and not os.path.exists(caches[0])
    assert "fxgraph" in held[os.path.basename(caches[0])]  # Inductor's graphs were cached there, not elsewhere


def test_without_the_pass_each_measurement_compiles_its_points_itself(compiled_plugin, tmp_path):
    graphs, notes, ahead, _ = _run(tmp_path, compile_ahead=False)
    assert ahead == [] and not any(n.startswith("Compiled") for n in notes), notes
    assert all(loaded == 0 and compiled >= 1 for loaded, compiled in graphs), graphs


@pytest.fixture(scope="module")
def transformer_plan():
    return api.plan_run(
        api.RunOptions(profile="tiny", workloads=["transformer"], devices=["cpu"], frameworks=["torch"])
    )


@pytest.mark.parametrize(
    ("device", "variant", "cores", "gib", "pending", "children"),
    [
        ("cuda", "tuned", 16, 80.0, 13, 4),  # the H100 machine: four side by side
        ("cuda", "tuned", 16, 80.0, 3, 3),  # no more children than points
        ("cuda", "tuned", 16, 24.0, 13, 0),  # one 16 GiB share of a 24 GiB GPU: one child is no head start
        ("cuda", "tuned", 4, 80.0, 13, 0),  # a 4-core machine: one child
        ("cuda", "tuned", 16, 80.0, 1, 0),  # one point: nothing to do side by side
        ("cuda", "as-written", 16, 80.0, 13, 0),  # the eager loop compiles nothing
        ("cpu", "tuned", 16, 80.0, 13, 0),  # nor does the tuned loop on a CPU
    ],
)
def test_how_many_children_compile_ahead(transformer_plan, monkeypatch, device, variant, cores, gib, pending, children):
    import dataclasses

    from runner.schema import Accelerator
    from runner.workloads import get

    gpu = Accelerator(vendor="nvidia", model="GPU", memory_gib=gib, source="nvml")
    plan = dataclasses.replace(
        transformer_plan,
        options=dataclasses.replace(transformer_plan.options),
        machine=transformer_plan.machine.model_copy(update={"accelerators": [gpu], "memory_gib": gib}),
    )
    monkeypatch.setattr(api.os, "cpu_count", lambda: cores)
    workload = get("transformer")
    group = api.Group(workload, "torch", device, variant, workload.cases("tiny"), list(range(4)))
    assert api.ahead_children(plan, group, pending) == children
    plan.options.compile_ahead = False
    assert api.ahead_children(plan, group, pending) == 0
