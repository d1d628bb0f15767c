"""The seed script's twin (runner.fidelity): run for real, recorded, and recomputed by the gate."""

from __future__ import annotations

import ast
import json
import math
import os
import random
import statistics
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from scipy import stats

from runner import api, fidelity
from runner.gate import validate
from runner.results.schema import Measurement
from site_builder.collect import Collector
from tests.conftest import cpu_torch_plan, make_measurement, make_result, save_under


def _twinned(script_s: list[float], harness_rest: list[float], **block) -> Measurement:
    """An as-written depth-2 point of the tiny suite with a twin computed from these lists, as the run writes it."""
    m = make_measurement(workload="depth-sweep", point={"depth": 2}, variant="as-written")
    twin = fidelity.twin_for("depth-sweep", "as-written", {"depth": 2}, {"n": 200}, "torch", "cpu")
    assert twin is not None
    harness = [fidelity.mean_per_unit(m.samples_s), *harness_rest]
    made = fidelity.block(twin, "cpu", harness, script_s, [10] * len(script_s))
    return Measurement(**{**m.model_dump(), "fidelity": {**made, **block}})


def _problems(tmp_path: Path, m: Measurement) -> list[str]:
    path = save_under(tmp_path, make_result([m]))
    return [f"{p.field}: {p.message}" for p in validate.validate([path], strict=True).errors]


def test_a_run_records_the_twin_and_the_gate_refuses_an_edited_script_sample(tmp_path):
    plan = cpu_torch_plan(tmp_path / "out", ["depth-sweep"], ["as-written"], 0.2, fidelity=True, rounds=2)
    result, path = api.execute(plan)
    assert path is not None
    depth2, depth3 = sorted(result.measurements, key=lambda m: m.point["depth"])
    assert depth3.fidelity is None  # seed 001's twin covers depths 2, 8 and 12
    f = depth2.fidelity
    assert f is not None and f.script == "seed_001.py" and f.rounds == 2
    assert f.args == ["--device", "cpu", "--depth", "2", "--n", "200"]
    # the harness's side is the point's own two rounds, each its mean seconds per unit
    assert len(depth2.rounds) == 2 and [r.process for r in depth2.rounds] == [0, 2]
    first = depth2.rounds[0].samples
    rounds = [statistics.fmean(depth2.samples_s[:first]), statistics.fmean(depth2.samples_s[first:])]
    assert f.harness_s == pytest.approx(rounds, rel=1e-12)
    assert all(u >= 1 for u in f.units)
    assert f.interval == "welch-log"
    assert f.ratio == pytest.approx(statistics.geometric_mean(f.harness_s) / statistics.geometric_mean(f.script_s))
    assert f.ci95[0] <= f.ratio <= f.ci95[1]
    assert validate.validate([path], strict=True).errors == []

    data = yaml.safe_load(path.read_text())
    twin = next(m for m in data["measurements"] if m.get("fidelity"))["fidelity"]
    twin["script_s"][0] *= 0.8  # the script looks faster: the ratio no longer follows from the lists
    twin["harness_s"][1] *= 1.1  # and the harness's round 2 is not the measurement's
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    wheres = [p.field for p in validate.validate([path], strict=True).errors]
    assert any(w.endswith("fidelity.ratio") for w in wheres), wheres
    assert any(w.endswith("fidelity.harness_s") for w in wheres), wheres


@pytest.mark.parametrize(
    ("harness", "script", "verdict"),
    [
        ([1.00, 1.01, 0.99, 1.00, 1.00], [1.00, 1.00, 1.01, 0.99, 1.00], "faithful"),
        ([1.60, 1.62, 1.65, 1.61, 1.63], [1.00, 1.00, 1.01, 0.99, 1.00], "harness-affected"),
        ([0.80, 0.81, 0.79, 0.80, 0.82], [1.00, 1.00, 1.01, 0.99, 1.00], "harness-affected"),
        ([1.00, 1.30], [1.00, 0.80], "inconclusive"),
    ],
)
def test_the_verdict_follows_the_interval(harness, script, verdict):
    s = fidelity.summarise(harness, script)
    assert s.verdict == verdict
    assert s.ci95[0] <= s.ratio <= s.ci95[1]
    assert fidelity.summarise(harness, script) == s  # seeded: anyone recomputes the same interval


def test_welchs_interval_is_scipys_welch_t_interval_on_the_logarithms():
    """The interval is the textbook one: SciPy's own Welch test on the logarithms gives the same bounds."""
    harness, script = [0.233, 0.206, 0.250, 0.241], [0.199, 0.193, 0.219]
    s = fidelity.summarise(harness, script)
    logs = stats.ttest_ind([math.log(x) for x in harness], [math.log(x) for x in script], equal_var=False)
    low, high = logs.confidence_interval(0.95)
    assert s.ci95 == pytest.approx((math.exp(low), math.exp(high)), rel=1e-9)
    assert s.ratio == pytest.approx(statistics.geometric_mean(harness) / statistics.geometric_mean(script), rel=1e-12)
    with pytest.raises(ValueError, match="two rounds"):
        fidelity.summarise([0.2, 0.21], [0.2])


def test_two_rounds_of_noise_are_not_a_harness_effect():
    """Seed 002 on the H100 machine's 16-core CPU (results/0c9b4be27c3326c3/20261126T124057Z.yaml), two rounds: the
    bootstrap of the medians it was written with put the whole interval above 1.05; Welch's, with the spread two
    rounds a side can show, cannot tell."""
    harness, script = [3.11165495299997, 2.8599151149999216], [2.475111929000036, 2.4223643020000054]
    assert fidelity.summarise(harness, script, "bootstrap-median").verdict == "harness-affected"
    s = fidelity.summarise(harness, script)
    assert s.verdict == "inconclusive" and s.ci95[0] < 1 < 1.2 < s.ci95[1]


def test_at_two_and_three_rounds_welch_holds_its_error_rate_where_the_bootstrap_does_not():
    """Both sides drawn alike (no harness effect), with a spread between processes of 20% (these hosts'): the share
    of twins judged harness-affected. The bootstrap of two-round medians says so about a fifth of the time."""
    rng = random.Random(7)
    for rounds in (2, 3):
        wrong = {"bootstrap-median": 0, "welch-log": 0}
        for _ in range(200):
            harness = [math.exp(rng.gauss(0, 0.2)) for _ in range(rounds)]
            script = [math.exp(rng.gauss(0, 0.2)) for _ in range(rounds)]
            for method in wrong:
                wrong[method] += fidelity.summarise(harness, script, method).verdict == "harness-affected"
        assert wrong["welch-log"] <= 10, (rounds, wrong)  # 5% of 200: the two tails' 2.5% each, and some slack
        if rounds == 2:
            assert wrong["bootstrap-median"] >= 25, wrong


def test_a_faithful_twin_passes_the_gate(tmp_path):
    assert _problems(tmp_path, _twinned([0.0110, 0.0111, 0.0109], [0.0110, 0.0111])) == []


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        ({"script_sha256": "0" * 64}, "fidelity.script_sha256"),
        ({"script": "seed_002.py"}, "fidelity.script"),
        ({"args": ["--device", "cpu", "--depth", "3", "--n", "200"]}, "fidelity.args"),
        ({"verdict": "faithful", "ratio": 1.0}, "fidelity.ratio"),
        ({"rounds": 4}, "fidelity.rounds"),
        ({"ci95": [0.5, 2.0]}, "fidelity.ci95[0]"),
    ],
)
def test_the_gate_refuses_an_edited_twin(tmp_path, edit, where):
    m = _twinned([0.0110, 0.0111, 0.0109], [0.0150, 0.0152])
    problems = _problems(tmp_path, Measurement(**{**m.model_dump(), "fidelity": {**m.fidelity.model_dump(), **edit}}))
    assert any(where in p for p in problems), problems


def test_a_file_before_schema_7_is_recomputed_by_its_own_bootstrap(tmp_path):
    """Its twin names no interval: the gate recomputes the bootstrap of the medians it was written with, so it stays
    valid, and an edit to it is still refused."""
    m = _twinned([0.0110, 0.0111, 0.0109], [0.0150, 0.0152])
    f = m.fidelity.model_dump()
    old = fidelity.summarise(f["harness_s"], f["script_s"], "bootstrap-median")
    del f["interval"]
    f.update(ratio=old.ratio, ci95=list(old.ci95), verdict=old.verdict)
    legacy = Measurement(**{**m.model_dump(), "fidelity": f})
    assert legacy.fidelity.interval == "bootstrap-median"
    assert _problems(tmp_path / "a", legacy) == []
    f["ci95"] = [old.ci95[0] * 0.9, old.ci95[1]]
    edited = Measurement(**{**m.model_dump(), "fidelity": f})
    assert any("fidelity.ci95[0]" in p for p in _problems(tmp_path / "b", edited))


def _bootstrap_median_loop(harness_s: list[float], script_s: list[float]) -> tuple[float, tuple[float, float]]:
    """The bootstrap of the files before schema 7 as it was first written (one `random.Random`, draw by draw): what
    every committed file's interval was computed with, so what runner.fidelity's NumPy version must give exactly."""
    ratio = statistics.median(harness_s) / statistics.median(script_s)
    rng = random.Random(fidelity.BOOTSTRAP_SEED)
    n_h, n_s = len(harness_s), len(script_s)
    draws = sorted(
        statistics.median([harness_s[int(rng.random() * n_h)] for _ in range(n_h)])
        / statistics.median([script_s[int(rng.random() * n_s)] for _ in range(n_s)])
        for _ in range(fidelity.BOOTSTRAP)
    )
    return ratio, (draws[int(0.025 * fidelity.BOOTSTRAP)], draws[int(0.975 * fidelity.BOOTSTRAP) - 1])


def test_the_bootstrap_gives_exactly_the_interval_the_older_files_were_written_with():
    """Bit for bit, not approximately: the gate compares a file's interval with its recomputation. Random lists of one
    to twelve harness rounds and two to thirteen script rounds (odd and even counts, a tie in each), and every committed
    file's twin that names none."""
    rng = random.Random(7)
    cases = []
    for _ in range(150):
        sides = [[rng.lognormvariate(-3, 0.4) for _ in range(rng.randint(1, 12))] for _ in range(2)]
        cases.append((sides[0], sides[1] + sides[1][:1]))  # the script's first round twice: a tie
    committed = 0
    for path in sorted((Path(__file__).resolve().parents[1] / "results").rglob("*.yaml")):
        for m in yaml.load(path.read_bytes(), Loader=yaml.CSafeLoader).get("measurements", []):
            twin = m.get("fidelity")
            if twin and twin.get("interval", "bootstrap-median") == "bootstrap-median":
                cases.append((twin["harness_s"], twin["script_s"]))
                committed += 1
    assert committed >= 7  # the H200's and the VM's files of 2026-11-24/25 at least
    for harness, script in cases:
        assert fidelity._bootstrap_median(harness, script) == _bootstrap_median_loop(harness, script)


def test_the_site_judges_an_earlier_files_twin_by_welch_and_keeps_its_measurement():
    """A file before schema 7 whose two-round bootstrap called the harness affected: the site, judging by Welch's
    interval, keeps the measurement in its medians and shows what the file said."""
    m = _twinned([0.0110, 0.0111], [0.0110])
    own = fidelity.mean_per_unit(m.samples_s)
    harness, script = [own, own * 1.08], [own / 1.25, own / 1.20]
    old = fidelity.summarise(harness, script, "bootstrap-median")
    assert old.verdict == "harness-affected"
    f = {**m.fidelity.model_dump(), "harness_s": harness, "script_s": script, "ratio": old.ratio}
    f.update(ci95=list(old.ci95), verdict=old.verdict)
    del f["interval"]
    result = make_result([Measurement(**{**m.model_dump(), "fidelity": f})])
    collector = Collector()
    collector.add(Path("legacy.yaml"), result)
    assert len(collector.frame()) == 1  # in the medians
    ((_, row),) = collector.machines[result.machine.id].fidelity.values()
    assert row["verdict"] == "inconclusive" and row["file_verdict"] == "harness-affected"
    assert row["ratio_lo"] < 1.0 < row["ratio_hi"]


def test_welchs_interval_on_one_round_is_refused(tmp_path):
    m = _twinned([0.0110, 0.0111], [0.0110])
    f = m.fidelity.model_dump()
    f.update(rounds=1, units=f["units"][:1], script_s=f["script_s"][:1], harness_s=f["harness_s"][:1])
    m = Measurement(**{**m.model_dump(), "fidelity": f})
    assert any("fidelity.rounds" in p and "needs 2" in p for p in _problems(tmp_path, m))


def test_the_first_harness_round_is_the_measurement_itself(tmp_path):
    m = _twinned([0.0110, 0.0111], [0.0110])
    f = m.fidelity.model_dump()
    f["harness_s"][0] *= 1.5
    twin = fidelity.twin_for("depth-sweep", "as-written", {"depth": 2}, {"n": 200}, "torch", "cpu")
    again = fidelity.block(twin, "cpu", f["harness_s"], f["script_s"], f["units"])
    f.update({k: again[k] for k in ("ratio", "ci95", "verdict")})  # consistent with the edited list
    problems = _problems(tmp_path, Measurement(**{**m.model_dump(), "fidelity": f}))
    assert any("fidelity.harness_s[0]" in p for p in problems), problems


def test_a_twin_on_a_point_no_script_covers_is_refused(tmp_path):
    m = _twinned([0.0110, 0.0111], [0.0110])
    other = make_measurement(workload="depth-sweep", point={"depth": 3}, variant="as-written")
    problems = _problems(tmp_path, Measurement(**{**other.model_dump(), "fidelity": m.fidelity.model_dump()}))
    assert any("no seed script twins" in p for p in problems), problems


def test_a_script_that_fails_leaves_the_measurement_with_a_warning(tmp_path, monkeypatch):
    monkeypatch.setattr(fidelity, "SCRIPTS", tmp_path)
    (tmp_path / "seed_001.py").write_text("raise SystemExit('the transcription broke')\n")
    plan = cpu_torch_plan(tmp_path / "out", ["depth-sweep"], ["as-written"], 0.1, fidelity=True, rounds=2)
    result, _ = api.execute(plan)
    depth2 = next(m for m in result.measurements if m.point["depth"] == 2)
    assert depth2.status == "ok" and depth2.fidelity is None
    assert any("fidelity twin not recorded" in w and "the transcription broke" in w for w in depth2.warnings)


@pytest.mark.parametrize("script", sorted(fidelity.SCRIPTS.glob("seed_*.py")), ids=lambda p: p.name)
def test_the_shipped_scripts_import_nothing_from_benchsite(script):
    tree = ast.parse(script.read_text())
    imported = {
        (node.module or "") if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert not any(name.split(".")[0] in ("runner", "site_builder", "tests") for name in imported), imported


def test_the_standard_profile_twins_by_default_and_quick_does_not():
    assert api.RunOptions(profile="standard").twins
    assert not api.RunOptions(profile="quick").twins
    assert api.RunOptions(profile="quick", fidelity=True).twins
    assert not api.RunOptions(profile="standard", fidelity=False).twins


def test_only_as_written_pytorch_points_on_a_cpu_or_cuda_have_a_twin():
    config = {"n": 734}
    assert fidelity.twin_for("tabular-mlp", "as-written", {}, config, "torch", "cuda") is not None
    assert fidelity.twin_for("tabular-mlp", "tuned", {}, config, "torch", "cpu") is None
    assert fidelity.twin_for("tabular-mlp", "as-written", {}, config, "jax", "cpu") is None
    assert fidelity.twin_for("tabular-mlp", "as-written", {}, config, "torch", "mps") is None


def test_the_side_that_goes_first_alternates_round_by_round(tmp_path, monkeypatch):
    """Round 1 is the point's own measurement, then its script; round 2 the script first; round 3 the harness first.
    Both sides run for real: the wrappers only note the order."""
    from runner.measure import executor

    order: list[str] = []
    real_script, real_cases = fidelity.run_script, executor.run_cases

    def script(*args, **kwargs):
        order.append("script")
        return real_script(*args, **kwargs)

    def cases(*args, **kwargs):
        order.append("harness")
        return real_cases(*args, **kwargs)

    monkeypatch.setattr(fidelity, "run_script", script)
    monkeypatch.setattr(executor, "run_cases", cases)
    plan = cpu_torch_plan(tmp_path, ["depth-sweep"], ["as-written"], 0.05, fidelity=True, rounds=3)
    (group,) = plan.groups
    depth2 = next(m for m in api.measure_group(plan, group, api.Progress()) if m.point["depth"] == 2)
    assert depth2.fidelity is not None and depth2.fidelity.rounds == 3
    # each round: depth 2's process and its script (which first alternating by round), then depth 3's (untwinned)
    assert order == [
        *("harness", "script", "harness"),
        *("script", "harness", "harness"),
        *("harness", "script", "harness"),
    ]
    assert [r.process for r in depth2.rounds] == [0, 2, 4]
    assert [fidelity.script_first(r) for r in range(4)] == [False, True, False, True]


def test_a_resumed_run_twins_what_the_interrupted_one_measured_but_did_not_twin(tmp_path):
    def plan(twins: bool) -> api.Plan:
        return cpu_torch_plan(tmp_path, ["depth-sweep"], ["as-written"], 0.1, fidelity=twins, rounds=2)

    untwinned = plan(False)
    (group,) = untwinned.groups
    measured = api.measure_group(untwinned, group, api.Progress())
    assert all(m.fidelity is None for m in measured)
    done = dict(zip(group.indices, measured, strict=True))  # what the journal of a run killed mid-twin holds

    resumed = plan(True)
    (group,) = resumed.groups
    journaled: list[int] = []
    again = api.measure_group(resumed, group, api.Progress(), done, lambda index, m: journaled.append(index))
    depth2 = next(m for m in again if m.point["depth"] == 2)
    assert depth2.fidelity is not None and depth2.fidelity.rounds == 2
    assert depth2.samples_s == done[group.indices[0]].samples_s  # the measurement kept, only its twin added
    assert journaled == [group.indices[0]]
    given_up = {i: m.model_copy(update={"warnings": ["fidelity twin not recorded: broke"]}) for i, m in done.items()}
    from runner.api.twins import TwinRounds

    assert not any(TwinRounds(resumed, group).wanted(i, m) for i, m in given_up.items())


def test_a_file_twinned_by_an_earlier_release_of_a_script_stays_valid_and_an_unknown_script_does_not(
    tmp_path, monkeypatch
):
    earlier, unknown = "1" * 64, "2" * 64
    past = tmp_path / "past_scripts.json"
    past.write_text(json.dumps({"seed_001.py": [earlier]}))
    monkeypatch.setattr(fidelity, "PAST_SCRIPTS", past)
    fidelity._past_scripts.cache_clear()
    try:
        m = _twinned([0.0110, 0.0111, 0.0109], [0.0110, 0.0111], script_sha256=earlier)
        assert _problems(tmp_path / "a", m) == []
        m = _twinned([0.0110, 0.0111, 0.0109], [0.0110, 0.0111], script_sha256=unknown)
        assert any("fidelity.script_sha256" in p for p in _problems(tmp_path / "b", m))
    finally:
        fidelity._past_scripts.cache_clear()
    assert fidelity.shipped_sha256("seed_009.py") == set()
    assert fidelity.shipped_sha256("../__init__.py") == set()
    # the shipped list holds earlier versions only, each of a script that ships
    for name, hashes in json.loads(fidelity.PAST_SCRIPTS.read_text()).items():
        assert fidelity.script_sha256(name) is not None and fidelity.script_sha256(name) not in hashes


def test_the_benchmarks_trace_hook_records_each_dataloader_epoch_without_importing_torch_itself(tmp_path):
    """fidelity.py --gc-trace: the hook (tests/benchmarks/gctrace) wraps DataLoader.__iter__ only once PyTorch's module
    is imported, so a process that never imports it is untouched; each pass writes one epoch line, and a pass the loop
    leaves early writes none."""
    hook = Path(__file__).resolve().parent / "benchmarks" / "gctrace"
    trace = tmp_path / "trace.txt"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(hook), str(Path(__file__).resolve().parents[1])])}
    env["BENCHSITE_GC_TRACE"] = str(trace)
    # the hook is in place, waiting on sys.meta_path, and has imported nothing
    untouched = (
        "import sys\n"
        "assert [type(f).__name__ for f in sys.meta_path].count('_EpochFinder') == 1\n"
        "assert 'torch' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", untouched], env=env, check=True)
    loop = (
        "import torch\n"
        "from torch.utils.data import DataLoader, TensorDataset\n"
        "loader = DataLoader(TensorDataset(torch.arange(25.0)), batch_size=10, num_workers=1)\n"
        "for epoch in range(2):\n"
        "    assert sum(len(b) for (b,) in loader) == 25\n"
        "for (b,) in loader:\n"
        "    break\n"
    )
    subprocess.run([sys.executable, "-c", loop], env=env, check=True, timeout=120)
    epochs = [line.split() for line in trace.read_text().splitlines() if line.split()[2] == "epoch"]
    assert len(epochs) == 2
    for _, _, _, began, first, ended, batches in epochs:
        assert float(began) <= float(first) <= float(ended)
        assert batches == "3"
    assert float(epochs[0][5]) <= float(epochs[1][3])
