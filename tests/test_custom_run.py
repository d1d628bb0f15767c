"""`benchsite run --model`: a real run of a user's model file on this machine's CPU, the file it writes, what
`benchsite validate`, the site and the pull-request gate make of it, and the errors bad options get."""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import yaml

from runner.gate import pull_request as prcheck
from runner.workloads import custom
from site_builder.load import load_results
from tests.conftest import ROOT
from tests.test_pr_check import ADA, commit, repo  # noqa: F401  (repo: the fixture, a repository with a pr branch)

pytest.importorskip("torch")

MODEL = textwrap.dedent(
    """
    from torch import nn

    def small():
        return nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 32), nn.ReLU(), nn.Linear(32, 10))
    """
)


def benchsite(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != custom.ENV}
    return subprocess.run(
        [sys.executable, "-m", "runner", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> tuple[Path, Path, subprocess.CompletedProcess[str]]:
    """One tiny run of a model file: train and infer at batch 2 and 4, two rounds, on the CPU."""
    folder = tmp_path_factory.mktemp("custom")
    (folder / "net.py").write_text(MODEL)
    done = benchsite(
        "run", "--profile", "tiny", "--model", "net.py:small", "--input-shape", "3,8,8", "--mode", "train,infer",
        "--batch-size", "2,4", "--device", "cpu", "--rounds", "2", "--output", str(folder / "out"),
        cwd=folder,
    )  # fmt: skip
    files = sorted((folder / "out").rglob("*.yaml"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(files) == 1
    return folder, files[0], done


def test_a_model_file_is_measured_in_both_loops_modes_and_batch_sizes(run):
    folder, path, done = run
    result = yaml.safe_load(path.read_text())
    measurements = result["measurements"]
    assert {m["workload"] for m in measurements} == {"custom"}
    assert sorted((m["point"]["mode"], m["point"]["batch_size"], m["variant"]) for m in measurements) == sorted(
        (mode, size, variant) for mode in ("train", "infer") for size in (2, 4) for variant in ("as-written", "tuned")
    )
    assert all(m["status"] == "ok" and m["median_s"] > 0 and m["samples_per_unit"] == m["point"]["batch_size"]
               for m in measurements)  # fmt: skip
    checked = custom.prepare(str(folder / "net.py") + ":small", "3,8,8", 10, modes=("train", "infer"))
    assert {m["point"]["model"] for m in measurements} == {checked.structure}
    assert {m["params"] for m in measurements} == {checked.params}
    for m in measurements:  # FLOPs counted from the model, the achieved rate from them
        assert m["flops_per_unit"] == checked.flops[m["point"]["mode"]] * m["point"]["batch_size"]
        assert m["achieved_tflops"] == pytest.approx(m["flops_per_unit"] / m["median_s"] / 1e12, rel=1e-6)
    assert "--model" not in result["run"]["command"]  # a path names the user: not recorded
    said = " ".join(done.stdout.split())
    assert f"structure {checked.structure}" in said
    # the end of the run: each figure with its interval
    assert "Your model on this machine" in said
    figures = re.findall(r"(train|infer), batch ([24]), (as-written|tuned), torch on [^:]+: \S+ \S?s per step \(", said)
    assert len(figures) == 8, said


def test_validate_accepts_the_file_and_the_site_and_the_pull_request_gate_keep_it_out(run, repo):  # noqa: F811
    folder, path, _ = run
    assert benchsite("validate", str(path), cwd=folder).returncode == 0
    loaded = load_results(path.parent.parent, workers=1)
    assert not loaded.accepted and not loaded.problems  # never among the suite's files, kept apart for its page
    assert [p for p, _ in loaded.own] == [path]
    commit(repo, "my model", ADA, {f"results/{path.parent.name}/{path.name}": path})  # a machine of her own
    problems = [str(p) for p in prcheck.check(repo, "main", "pr", ADA, prcheck.git_owner(repo))]
    assert len(problems) == 1 and "your own model" in problems[0]


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (["--model", "missing.py:small", "--input-shape", "3,8,8"], "--model"),
        (["--model", "net.py:smal", "--input-shape", "3,8,8"], "did you mean small"),
        (["--model", "net.py:small", "--input-shape", "3,16,16"], "--input-shape 3,16,16"),
        (["--model", "net.py:small", "--input-shape", "3,8,8", "--classes", "4"], "--classes 4"),
        (["--model", "net.py:small"], "--input-shape"),
        (["--model", "net.py:small", "--input-shape", "3,8,8", "--mode", "fit"], "--mode"),
        (["--model", "net.py:small", "--input-shape", "3,8,8", "--batch-size", "8,x"], "--batch-size"),
        (["--model", "net.py:small", "--input-shape", "3,8,8", "-w", "depth-sweep"], "--workload"),
    ],
)
def test_bad_options_stop_the_run_before_measuring_with_the_option_named(tmp_path, options, named):
    (tmp_path / "net.py").write_text(MODEL)
    done = benchsite("run", "--profile", "tiny", *options, "--output", str(tmp_path / "out"), cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert named in " ".join((done.stdout + done.stderr).split())
    assert not (tmp_path / "out").exists()  # nothing measured, nothing written


def test_the_suite_does_not_know_the_custom_workload_without_a_model():
    env = {k: v for k, v in os.environ.items() if k != custom.ENV}
    listed = subprocess.run(
        [sys.executable, "-c", "import runner.workloads as w; print([x.id for x in w.all_workloads()])"],
        cwd=ROOT, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "custom" not in listed.stdout


def test_on_a_machine_with_an_accelerator_the_run_ends_with_each_points_verdict(tmp_path):
    """The end of a --model run on a GPU machine (site_builder.answer, as `benchsite run` prints it): the committed
    H200 run's tabular-mlp measurements, renamed into a custom model's points in a temporary file, give one
    CPU-or-GPU verdict per loop with its interval, though the site itself leaves such a file out."""
    from runner.results.storage import load
    from site_builder.answer import answer

    result, _ = load(ROOT / "results" / "412f73aecce46bad" / "20261204T184934Z.yaml")
    assert result is not None
    point = {"model": "0123456789abcdef", "mode": "train"}
    own = [
        m.model_copy(
            update={
                "workload": "custom",
                "point": {**point, "batch_size": m.samples_per_unit},
                "unit": "step",
                "params": None,
                "flops_per_unit": None,
                "achieved_tflops": None,
                "fidelity": None,
            }
        )
        for m in result.measurements
        if m.workload == "tabular-mlp"
    ]
    path = tmp_path / result.machine.id / "own.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump(result.model_copy(update={"measurements": own}).model_dump(mode="json")))
    mine, problems = load(path)
    assert mine is not None and not problems
    found = answer(mine, path, tmp_path / "nothing-published")
    assert not found.refused
    assert sorted(v.variant for v in found.verdicts) == ["as-written", "tuned"]
    assert all(v.workload == "custom" and "mode=train" in v.point and v.accelerator == "NVIDIA H200"
               for v in found.verdicts)  # fmt: skip
    assert all(v.lo is not None and v.lo < v.speedup < v.hi for v in found.verdicts)


GREEDY = textwrap.dedent(
    """
    import torch
    from torch import nn

    class Greedy(nn.Module):
        \"\"\"Runs out of memory above a batch of 2, as a model too big for the device does.\"\"\"
        def __init__(self):
            super().__init__()
            self.head = nn.Linear(12, 3)
        def forward(self, x):
            if x.shape[0] > 2:
                raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 80.00 GiB")
            return self.head(x)

    def build():
        return Greedy()
    """
)


def test_out_of_memory_at_one_batch_size_is_recorded_and_the_sweep_goes_on(tmp_path):
    (tmp_path / "greedy.py").write_text(GREEDY)
    done = benchsite(
        "run", "--profile", "tiny", "--model", "greedy.py:build", "--input-shape", "12", "--classes", "3",
        "--batch-size", "2,4", "--device", "cpu", "--variant", "as-written", "--rounds", "2",
        "--output", str(tmp_path / "out"), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    (path,) = (tmp_path / "out").rglob("*.yaml")
    measurements = yaml.safe_load(path.read_text())["measurements"]
    by_size = {m["point"]["batch_size"]: m for m in measurements}
    assert by_size[2]["status"] == "ok" and by_size[2]["median_s"] > 0
    assert by_size[4]["status"] == "failed" and by_size[4]["error"]["type"] == "OutOfMemory"
    assert benchsite("validate", str(path), cwd=tmp_path).returncode == 0


def test_the_end_of_a_run_says_where_the_verdict_flips_along_the_batch_sizes():
    from site_builder.answer import Verdict, along_batch_sizes

    def verdict(size: int, said: str, variant: str = "as-written") -> Verdict:
        point = f"model=0123456789abcdef, mode=train, batch_size={size}"
        return Verdict("custom", point, variant, "torch", "NVIDIA H200", 1.0, 0.5, 2.0, said, True)

    lines = along_batch_sizes(
        [
            verdict(8, "CPU faster"),
            verdict(128, "accelerator faster"),
            verdict(32, "no clear winner"),
            verdict(8, "accelerator faster", "tuned"),
            verdict(32, "accelerator faster", "tuned"),
        ]
    )
    assert lines == [
        "custom model=0123456789abcdef, mode=train, as-written, torch on the NVIDIA H200: CPU faster at batch size 8; "
        "no clear winner at batch size 32; accelerator faster at batch size 128",
        "custom model=0123456789abcdef, mode=train, tuned, torch on the NVIDIA H200: accelerator faster at every "
        "batch size (8, 32)",
    ]
    assert along_batch_sizes([verdict(8, "CPU faster")]) == []  # one size: nothing to say along it


def test_a_site_built_from_a_folder_with_your_model_gives_it_its_own_page(run, tmp_path):
    """`benchsite site build --results DIR` over the committed files and a --model run: a Your models page with
    the model's measurements, every suite page as without it; the published site has no such page."""
    from tests.conftest import build_site

    _, path, _ = run
    results = tmp_path / "results"
    shutil.copytree(ROOT / "results" / "a23074609b32f305", results / "a23074609b32f305")
    shutil.copy(path, results / "a23074609b32f305" / path.name)
    done = build_site(results, tmp_path / "site", strict=True)
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "site" / "models.html").read_text()
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())
    structure = yaml.safe_load(path.read_text())["measurements"][0]["point"]["model"]
    assert f"Model {structure} on a23074609b32f305" in text
    assert len(re.findall(r"\b(train|infer), batch [24] (as-written|tuned), cpu \d", text)) == 8
    assert re.search(r"Nearest suite workloads, train \(your model: [\d,]+ parameters, [\d.e-]+ GFLOP a sample\): "
                     r"(tabular-mlp|depth-sweep depth=\d+|cifar-lenet) \(", text)  # fmt: skip
    assert "memory, host / device" in text and re.search(r"\d+ MiB / -", text)  # a CPU row: no device memory
    board = (tmp_path / "site" / "leaderboards" / "depth-sweep.html").read_text()
    assert "custom" not in re.sub(r"<[^>]+>", " ", board)  # never among the suite's
    assert (
        'href="models.html"' in (tmp_path / "site" / "index.html").read_text()
        or "Your models" in (tmp_path / "site" / "index.html").read_text()
    )


def _as_own_model(result, keep, tmp_path: Path) -> Path:
    """A temporary file of a user's own model made from a committed run: the measurements `keep` selects, renamed
    into a custom model's points (mode and batch size from the point), with their own run id and workload hashes
    (one per point and loop, shared by the CPU and the accelerator as a real run's are)."""
    import hashlib

    own = []
    for m in result.measurements:
        if not keep(m):
            continue
        point = {"model": "0123456789abcdef", "mode": m.point.get("mode", "train"), "batch_size": m.samples_per_unit}
        digest = hashlib.sha256(f"{point}{m.variant}".encode()).hexdigest()[:16]
        own.append(
            m.model_copy(update={"workload": "custom", "point": point, "unit": "step", "workload_hash": digest,
                                 "fidelity": None})
        )  # fmt: skip
    run = result.run.model_copy(update={"id": "0" * 31 + "1"})
    path = tmp_path / result.machine.id / "own.yaml"
    path.parent.mkdir(parents=True)
    copy = result.model_copy(update={"measurements": own, "run": run})
    path.write_text(yaml.safe_dump(copy.model_dump(mode="json")))
    return path


def test_your_model_is_set_beside_the_nearest_suite_workloads_and_the_advisors_estimate(tmp_path):
    """BERT-base training measured as a user's own model (the committed H200 run's transformer points, renamed) on
    a machine whose accelerator the published results have: its nearest suite workload is BERT-base training, and
    beside each measured speedup stands the advisor's estimate at that batch size, the very figure the advisor's
    page holds at that position (advisor_grid) and the leaderboard row it links (speedup_summary)."""
    from runner.results.storage import load
    from site_builder.advisor import advisor_grid, advisor_summary
    from site_builder.answer import answer, beside_suite, own_model

    result, _ = load(ROOT / "results" / "412f73aecce46bad" / "20261128T052308Z.yaml")
    assert result is not None
    path = _as_own_model(
        result,
        lambda m: m.workload == "transformer" and m.framework == "torch" and m.status == "ok"
        and m.point.get("model") == "bert-base" and m.point.get("mode") == "train" and m.point["batch_size"] in (8, 32),
        tmp_path,
    )  # fmt: skip
    mine, problems = load(path)
    assert mine is not None and not problems
    found = answer(mine, path, ROOT / "results")
    assert not found.refused and not found.suite.empty
    frame, verdicts = own_model(path, mine, found.spread)
    near, beside = beside_suite(frame, verdicts, found.suite, found.suite_speedups)

    yours, points = near["train"]
    assert points[0].name == "transformer model=bert-base, mode=train"
    assert abs(yours.params / points[0].params - 1) < 1e-9 and abs(yours.flops / points[0].flops - 1) < 1e-6
    assert len({n.name for n in points}) == len(points) == 3

    # (that run skipped the tuned loop's CPU side at batch 32: no speedup there)
    assert sorted((b.batch_size, b.measured.variant) for b in beside) == [
        (8, "as-written"),
        (8, "tuned"),
        (32, "as-written"),
    ]
    suite_speedups = found.suite_speedups[found.suite_speedups["workload"] != "custom"]
    grid, families = advisor_grid(suite_speedups)
    summary = advisor_summary(suite_speedups)
    for b in beside:
        e = b.estimate
        assert e.shown and e.family == "bert-base train, by batch size" and e.how == ""  # a measured point
        row = grid[(grid["f"] == families.index(e.family)) & (grid["gpu"] == "NVIDIA H200") & (grid["x"] == e.x)
                   & (grid["fw"] == "torch") & (grid["loop"] == b.measured.variant)]  # fmt: skip
        assert len(row) == 1
        np.testing.assert_array_equal(row[["s", "lo", "hi"]].to_numpy(float)[0], [e.s, e.lo, e.hi])  # NaN: none
        board = summary[(summary["gpu_model"] == "NVIDIA H200") & (summary["variant"] == b.measured.variant)
                        & (summary["point"] == f"model=bert-base, mode=train, batch_size={b.batch_size}")
                        & (summary["framework"] == "torch")]  # fmt: skip
        assert float(board["speedup"].iloc[0]) == e.s
        said = b.sentence()
        assert said.startswith(
            f"train, batch {b.batch_size}, {b.measured.variant}, torch on the NVIDIA H200: measured "
        )
        assert f"measured / advisor {b.measured.speedup / e.s:.2f}x" in said
        assert ("inside its interval" in said) == bool(e.lo <= b.measured.speedup <= e.hi)


def test_the_advisor_gives_no_estimate_outside_its_sweeps_and_says_why():
    """estimate_at with no such sweep, no machine with the accelerator, and a size outside the measured range."""
    from runner.results.storage import iter_result_paths
    from site_builder.advisor import advisor_summary, estimate_at
    from site_builder.load import Loaded
    from site_builder.site import Site

    loaded = Loaded().take(iter_result_paths([ROOT / "results" / "412f73aecce46bad"]))
    summary = advisor_summary(Site.from_collector(loaded.collector, []).speedups)
    key = "transformer model=bert-base, mode=train"
    assert estimate_at(summary, "", "NVIDIA H200", "torch", "tuned", 8).why == "the advisor has no sweep for it"
    missing = estimate_at(summary, key, "NVIDIA B200", "torch", "tuned", 8)
    assert not missing.shown and "no published machine with the NVIDIA B200" in missing.why
    outside = estimate_at(summary, key, "NVIDIA H200", "torch", "as-written", 4096)
    assert outside.why == "measured from 8 to 128 batch only"
    single = estimate_at(summary, key, "NVIDIA H200", "torch", "tuned", 32)
    assert single.why == "measured at batch 8 only"
    between = estimate_at(summary, key, "NVIDIA H200", "torch", "as-written", 16)
    assert between.shown and between.how.startswith("interpolated between")


def _killed_after_one_measurement(folder: Path, results: Path) -> None:
    """A --model run (train and infer, batch 2 and 4, on the CPU) killed outright once its journal holds a
    measurement: what --resume finishes."""
    import signal
    import time

    from runner.measure import journal

    env = {k: v for k, v in os.environ.items() if k != custom.ENV}
    process = subprocess.Popen(
        [sys.executable, "-m", "runner", "run", "--profile", "tiny", "--model", "net.py:small", "--input-shape",
         "3,8,8", "--mode", "train,infer", "--batch-size", "2,4", "--device", "cpu", "--rounds", "2",
         "--time-budget", "0.5", "--results-dir", str(results)],
        cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    journals = journal.journal_dir(results)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and process.poll() is None:
        found = list(journals.glob("*.jsonl"))
        if found and journal.read(found[0]).measurements:
            break
        time.sleep(0.05)
    assert process.poll() is None, "the run ended before the kill"
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def test_an_interrupted_run_of_your_model_resumes_with_the_same_model(tmp_path):
    """The journal keeps the checked model with the run's options: `benchsite run --resume`, with no --model,
    rebuilds it and measures the rest into the same file; a model whose code changed meanwhile is refused."""
    (tmp_path / "net.py").write_text(MODEL)
    results = tmp_path / "results"
    _killed_after_one_measurement(tmp_path, results)
    (tmp_path / "net.py").write_text(
        MODEL.replace("nn.Linear(32, 10)", "nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 10)")
    )
    changed = benchsite("run", "--resume", "--results-dir", str(results), cwd=tmp_path)
    assert changed.returncode == 2 and "its code changed" in changed.stderr, changed.stderr
    (tmp_path / "net.py").write_text(MODEL)
    done = benchsite("run", "--resume", "--results-dir", str(results), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    (path,) = results.rglob("*.yaml")
    measurements = yaml.safe_load(path.read_text())["measurements"]
    assert {m["workload"] for m in measurements} == {"custom"}
    assert sorted((m["point"]["mode"], m["point"]["batch_size"], m["variant"]) for m in measurements) == [
        (mode, size, variant) for mode in ("infer", "train") for size in (2, 4) for variant in ("as-written", "tuned")
    ]
    assert all(m["status"] == "ok" for m in measurements)
    assert "Your model on this machine" in done.stdout


def test_the_your_models_page_sets_a_gpu_machines_verdicts_beside_the_advisor(committed_site):
    """The site built from the committed results and a real --model run of BERT-base on the H100 machine (kept
    with the benchmarks: conftest's committed_site): its page gives each verdict with the advisor's estimate from
    BERT-base's own sweep, the very figure `benchsite compare` prints for the file, and the nearest suite workload."""
    from runner.results.storage import load
    from site_builder.answer import answer, beside_suite, own_model
    from tests.conftest import OWN_MODEL as own

    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", (committed_site / "models.html").read_text())).split())
    assert "Nearest suite workloads, train (your model: 109,483,778 parameters" in text
    assert "transformer model=bert-base, mode=train (109,483,778 parameters" in text

    result, _ = load(own)
    assert result is not None
    found = answer(result, own, ROOT / "results")
    frame, verdicts = own_model(own, result, found.spread)
    _, beside = beside_suite(frame, verdicts, found.suite, found.suite_speedups)
    assert len(beside) == 8
    for b in beside:  # the page's row: point, loop, the measured speedup, then the advisor's (or why none)
        m, e = b.measured, b.estimate
        row = f"{b.mode}, batch {b.batch_size} {m.variant} {m.speedup:.2f}x ({m.lo:.2f}x .. {m.hi:.2f}x)"
        assert row in text, row
        said = f"{e.s:.2f}x ({e.lo:.2f}x .. {e.hi:.2f}x) {e.family}" if e.shown else f"no estimate: {e.why} {e.family}"
        assert f"{row} accelerator faster" in text and said in text, said
