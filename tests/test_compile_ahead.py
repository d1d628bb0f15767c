"""The compile-ahead pass (runner.api.compile_ahead), end to end on the CPU: the suite's tuned transformer loop,
told to compile on the CPU too (tests/plugins/compile_workloads.py), measured by `api.execute` as a run measures.

Points compiled ahead, side by side in children of their own, fill the run's compile cache; each measuring process
then compiles from a fresh Dynamo and loads Inductor's graphs instead of compiling them again, and says so."""

from __future__ import annotations

import json
import os
import re
import tempfile

import pytest

from runner import api
from runner.api import ahead as ahead_module
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
    # By the product's own rule a 2-core machine gets no compile-ahead children (2 cores and 8 GiB each): two here.
    monkeypatch.setattr(ahead_module, "AHEAD_CORES_PER_CHILD", 1)
    monkeypatch.setattr(ahead_module, "AHEAD_GIB_PER_CHILD", 1)


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

    monkeypatch.setattr(ahead_module.tempfile, "mkdtemp", remember)
    held: dict[str, list[str]] = {}
    rmtree = ahead_module.shutil.rmtree

    def listed(path, **kwargs):
        held[os.path.basename(path)] = sorted(os.listdir(path))
        rmtree(path, **kwargs)

    monkeypatch.setattr(ahead_module.shutil, "rmtree", listed)
    log = tmp_path / "phases.jsonl"
    monkeypatch.setenv("BENCHSITE_PHASE_LOG", str(log))
    graphs, notes, ahead, plan = _run(tmp_path)
    assert any(n.startswith("Compiled 2 of 2 test-compiled tuned torch/cpu points ahead") for n in notes), notes
    assert ahead[0] == (0, 2, 2) and ahead[-1] == (2, 2, 2), ahead
    assert all(loaded >= 1 and compiled == 0 for loaded, compiled in graphs), graphs
    assert "compile ahead torch test-compiled" in plan.phase_s
    # the run's own cache went with the run
    caches = [m for m in made if os.path.basename(m).startswith("benchsite-compile-")]
    assert len(caches) == 1 and not os.path.exists(caches[0])
    assert "fxgraph" in held[os.path.basename(caches[0])]  # Inductor's graphs were cached there, not elsewhere
    # the phase log has the pass and each point its child compiled, beside the two measurements' rounds
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    (ahead_pass,) = [e for e in lines if "ahead_pass_s" in e]
    assert ahead_pass["children"] == 2 and ahead_pass["points"] == 2 and ahead_pass["ahead_pass_s"] > 0
    children = [e for e in lines if "ahead" in e]
    batches = sorted(c.point["batch_size"] for c in plan_points(plan))
    assert sorted(e["point"]["batch_size"] for e in children) == batches
    assert all(e["ahead"] == "ok" and e["wall_s"] > 0 for e in children), children
    assert len([e for e in lines if "steady_s" in e]) == 2 * plan.options.rounds


def plan_points(plan):
    return [case for group in plan.groups for case in group.cases]


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
        ("cuda", "tuned", 16, 80.0, 13, 8),  # the H100 machine: eight side by side
        ("cuda", "tuned", 64, 141.0, 13, 8),  # never more than eight
        ("cuda", "tuned", 16, 80.0, 3, 3),  # no more children than points
        ("cuda", "tuned", 16, 24.0, 13, 3),  # three 8 GiB shares of a 24 GiB GPU
        ("cuda", "tuned", 16, 12.0, 13, 0),  # one share of a 12 GiB GPU: one child is no head start
        ("cuda", "tuned", 4, 80.0, 13, 2),  # a 4-core machine: two
        ("cuda", "tuned", 2, 80.0, 13, 0),  # a 2-core machine: one
        ("cuda", "tuned", 16, 80.0, 1, 0),  # one point: nothing to do side by side
        ("cuda", "as-written", 16, 80.0, 13, 0),  # the eager loop compiles nothing
        ("cpu", "tuned", 16, 80.0, 13, 0),  # nor does the tuned loop on a CPU
    ],
)
def test_how_many_children_compile_ahead(transformer_plan, monkeypatch, device, variant, cores, gib, pending, children):
    import dataclasses

    from runner.results.schema import Accelerator
    from runner.workloads import get

    gpu = Accelerator(vendor="nvidia", model="GPU", memory_gib=gib, source="nvml")
    plan = dataclasses.replace(
        transformer_plan,
        options=dataclasses.replace(transformer_plan.options),
        machine=transformer_plan.machine.model_copy(update={"accelerators": [gpu], "memory_gib": gib}),
    )
    monkeypatch.setattr(ahead_module.os, "cpu_count", lambda: cores)
    workload = get("transformer")
    group = api.Group(workload, "torch", device, variant, workload.cases("tiny"), list(range(4)))
    assert ahead_module.ahead_children(plan, group, pending) == children
    plan.options.compile_ahead = False
    assert ahead_module.ahead_children(plan, group, pending) == 0


@pytest.mark.parametrize(("forced", "children"), [("8", 8), ("20", 13), ("1", 0), ("0", 0)])
def test_benchsite_ahead_children_sets_the_number(transformer_plan, monkeypatch, forced, children):
    """BENCHSITE_AHEAD_CHILDREN overrides the rule (still no more children than points, and none alone)."""
    from runner.workloads import get

    monkeypatch.setenv("BENCHSITE_AHEAD_CHILDREN", forced)
    workload = get("transformer")
    group = api.Group(workload, "torch", "cuda", "tuned", workload.cases("tiny"), list(range(4)))
    assert ahead_module.ahead_children(transformer_plan, group, 13) == children


def test_a_malformed_ahead_children_is_refused_before_the_run(monkeypatch, tmp_path):
    monkeypatch.setenv("BENCHSITE_AHEAD_CHILDREN", "four")
    with pytest.raises(api.PlanError, match="BENCHSITE_AHEAD_CHILDREN='four'"):
        api.plan_run(api.RunOptions(profile="tiny", workloads=["tabular-mlp"], frameworks=["torch"], output=tmp_path))
