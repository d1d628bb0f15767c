"""The validation gate against the hostile corpus (tests/corpus): every malicious or broken file is refused with
its file, field and a clear message, the good files still validate and publish next to them, and fuzzed input
never raises anything but a reported problem."""

from __future__ import annotations

import copy
import json
import shutil
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from runner.cli import app
from runner.gate.validate import GRAD_RTOL_MAX, check_result, validate
from runner.results import storage
from tests.conftest import ROOT, build_site, make_measurement, make_result, retime, save_under
from tests.corpus.build import replayed

CORPUS = Path(__file__).parent / "corpus"
EXPECTED = json.loads((CORPUS / "expected.json").read_text())
BASE = ROOT / "results" / "0c9b4be27c3326c3" / "20261122T071848Z.yaml"


def test_the_corpus_is_what_its_builder_makes():
    assert sorted(p.name for p in (CORPUS / "files").iterdir()) == sorted(EXPECTED)
    assert len(EXPECTED) >= 30


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_hostile_file_is_refused_with_its_field_and_reason(name):
    expected = EXPECTED[name]
    beside = [ROOT / expected["with"]] if "with" in expected else []  # a replay is refused beside what it copies
    report = validate([*beside, CORPUS / "files" / name])
    assert report.files == 1 + len(beside) and report.bad_files == 1, report.problems
    assert all(p.path.endswith(name) for p in report.problems)
    assert any(
        expected["field"] in p.field and expected["message"].lower() in p.message.lower() for p in report.errors
    ), [str(p) for p in report.errors]


def test_oversized_file_is_refused_before_parsing(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_text("a: " + "x" * storage.MAX_FILE_BYTES)
    start = time.perf_counter()
    report = validate([big])
    assert "byte limit" in report.errors[0].message and time.perf_counter() - start < 1


def test_alias_bomb_is_refused_without_expanding_it():
    start = time.perf_counter()
    report = validate([CORPUS / "files" / "alias-bomb.yaml"])  # 9**10 strings if composed
    assert report.errors and time.perf_counter() - start < 0.5


def test_path_rule_and_duplicate_run_ids(tmp_path):
    results = tmp_path / "results"
    good = results / "0c9b4be27c3326c3"
    good.mkdir(parents=True)
    shutil.copy(BASE, good / BASE.name)
    shutil.copy(BASE, good / "b.yaml")  # the same run twice, under a name that is not its start time
    (results / "ffffffffffffffff").mkdir()
    shutil.copy(BASE, results / "ffffffffffffffff" / BASE.name)
    problems = validate([results]).errors
    assert not [p for p in problems if p.path == str(good / BASE.name)]
    assert any(p.path.endswith("b.yaml") and p.field == "run.id" and BASE.name in p.message for p in problems)
    assert any(
        p.path.endswith("b.yaml") and p.field == "run.started_at" and f"named {BASE.name!r}" in p.message
        for p in problems
    )
    assert any("ffffffffffffffff" in p.path and p.field == "machine.id" for p in problems)


def test_every_problem_of_a_file_is_reported_at_once(tmp_path):
    data = yaml.safe_load(BASE.read_text())
    data["machine"]["cpu"]["model"] = "<b>x</b>"
    data["sync_selftests"] = []
    data["measurements"][0]["median_s"] = 1e9
    path = tmp_path / "many.yaml"
    path.write_text(yaml.safe_dump(data))
    fields = {p.field for p in validate([path]).errors}
    assert {"machine.cpu.model", "sync_selftests", "measurements[0].median_s"} <= fields


def _cohort(tmp_path, slow: float) -> tuple[Path, str]:
    """Four machines with the same CPU model; the fourth `slow` times slower. Returns the folder and its id."""
    results = tmp_path / "results"
    base = make_measurement(device="cpu")
    for i, median in enumerate([0.011, 0.012, 0.010, 0.011 * slow]):
        result = make_result([retime(base, median)], label=f"#{i + 1}")
        result = result.model_copy(update={"run": result.run.model_copy(update={"id": f"{i + 1:032x}"})})
        save_under(results, result)
    return results, result.machine.id


def test_a_measurement_far_from_its_cohort_is_a_warning_and_strict_makes_it_an_error(tmp_path):
    results, slowest = _cohort(tmp_path, slow=20)
    report = validate([results])
    assert not report.errors
    [warning] = report.problems
    assert warning.severity == "warning" and "20x away" in warning.message and slowest in warning.path
    assert validate([results], strict=True).errors
    assert not validate([_cohort(tmp_path / "near", slow=3)[0]]).problems


def test_cli_reports_the_corpus_as_json_and_fails(tmp_path):
    result = CliRunner().invoke(app, ["validate", "--json", str(CORPUS / "files")])
    assert result.exit_code == 1
    out = json.loads(result.output)
    assert out["files"] == len(EXPECTED) and out["valid"] == 0 and out["errors"] >= len(EXPECTED)
    assert {Path(p["path"]).name for p in out["problems"]} == set(EXPECTED)


def test_good_files_still_publish_next_to_the_corpus(tmp_path):
    """A pull request mixing good files and every hostile one: the good ones validate and reach the site, the
    bad ones are named in the build log and left out, and no hostile markup reaches a page. The good files: the
    corpus's base run and the newest committed run of every machine (a site of every committed file is
    conftest's committed_site)."""
    results = tmp_path / "results"
    good = {BASE, *(sorted(machine.glob("*.yaml"))[-1] for machine in (ROOT / "results").iterdir())}
    for path in good:
        (results / path.parent.name).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, results / path.parent.name / path.name)
    target = results / BASE.parent.name
    for name in EXPECTED:
        shutil.copy(CORPUS / "files" / name, target / f"zz-{name}")
    report = validate([results])
    bad = {Path(p).name for p in {p.path for p in report.errors}}
    # duplicates of the base run are refused too: every corpus file reuses its run id
    assert bad == {f"zz-{name}" for name in EXPECTED}
    assert report.files - report.bad_files == len(good)
    done = build_site(results, tmp_path / "site")
    assert done.returncode == 0, done.stderr
    for name in EXPECTED:
        # markup in names is refused by the gate; the site, as defence in depth, publishes such a file escaped
        if not name.startswith("script-in-"):
            assert f"zz-{name}" in done.stderr
    home = (tmp_path / "site" / "index.html").read_text()
    assert all(machine.name in home for machine in (ROOT / "results").iterdir())
    for page in (tmp_path / "site").rglob("*.html"):
        assert "window.__pwned" not in page.read_text(), page


# --- fuzzing: nothing but a reported problem ever comes out --------------------------------------------------------

JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
BASE_DATA = yaml.safe_load(BASE.read_text()) if BASE.exists() else {}


def _paths(data, prefix=()):
    yield prefix
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(data, list):
        for i, value in enumerate(data[:3]):
            yield from _paths(value, (*prefix, i))


PATHS = [p for p in _paths(BASE_DATA) if p]


def gate(text: str | bytes) -> list:
    """Parse and check one file like `benchsite validate`: returns its problems, must never raise."""
    result, problems = storage.parse(text, "fuzz.yaml")
    assert (result is None) == bool(problems)
    return problems if result is None else check_result("fuzz.yaml", result)


def apply_edits(edits: list[tuple[tuple, object]]) -> str:
    """The base result file with each (path, value) edit applied where the path exists, as YAML."""
    data = copy.deepcopy(BASE_DATA)
    for path, value in edits:
        target = data
        try:
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue
    return yaml.safe_dump(data, allow_unicode=True)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2000) | st.text(max_size=2000))
def test_fuzz_raw_input(raw):
    gate(raw)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(PATHS), JSONISH), min_size=1, max_size=4))
def test_fuzz_structured_mutations(edits):
    gate(apply_edits(edits))


def test_fuzz_corpus_files_mutated_bytewise():
    """Every corpus file with bytes flipped: still only reported problems."""
    import random

    rng = random.Random(5)
    for path in sorted((CORPUS / "files").iterdir()):
        raw = bytearray(path.read_bytes())
        for _ in range(5):
            copy_ = bytearray(raw)
            for _ in range(max(1, len(copy_) // 200)):
                if copy_:
                    copy_[rng.randrange(len(copy_))] = rng.randrange(256)
            gate(bytes(copy_))


def _with_names(cpu: str | None = None, gpu: str | None = None) -> dict:
    data = yaml.safe_load(BASE.read_text())
    if cpu is not None:
        data["machine"]["cpu"]["model"] = cpu
    if gpu is not None:
        data["machine"]["accelerators"][0]["model"] = gpu
    try:  # other hardware, its own id (names the schema refuses keep the old one: the test is about the refusal)
        from runner.fingerprint import machine_id
        from runner.results.schema import Accelerator, Cpu

        cpu_model = Cpu.model_validate(data["machine"]["cpu"])
        accelerators = [Accelerator.model_validate(a) for a in data["machine"]["accelerators"]]
        data["machine"]["id"] = machine_id(cpu_model, accelerators)
    except ValueError:
        pass
    return data


@pytest.mark.parametrize(
    ("cpu", "stored"),
    [
        ("\uff29\uff4e\uff54\uff45\uff4c Xeon", "Intel Xeon"),  # full-width letters are stored as plain ones (NFKC)
        ("\u042d\u043b\u044c\u0431\u0440\u0443\u0441-8\u0421", None),  # one script, not Latin: a real Elbrus name
        ("\u9f99\u82af 3A6000 (Loongson)", None),  # Han beside Latin cannot pass for another name
    ],
    ids=["full-width", "cyrillic-only", "han-and-latin"],
)
def test_plain_names_in_any_one_script_are_accepted_and_normalised(cpu, stored):
    result, problems = storage.parse(yaml.safe_dump(_with_names(cpu=cpu), allow_unicode=True), "r.yaml")
    assert problems == [] and result is not None
    assert result.machine.cpu.model == (stored or cpu)


def test_a_gpu_the_peak_table_does_not_know_is_a_warning_that_names_it(tmp_path):
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump(_with_names(gpu="Acme Tensor Engine 9000"), allow_unicode=True))
    report = validate([path])
    unknown = [p for p in report.problems if "not in the peak table" in p.message]
    assert [(p.field, p.severity) for p in unknown] == [("machine.accelerators[0].model", "warning")]
    assert "Acme Tensor Engine 9000" in unknown[0].message
    assert [p for p in validate([path], strict=True).errors if "peak table" in p.message]
    # the site still publishes it, even in a strict build: a warning is not a bad file
    from site_builder.load import load_results

    assert load_results(tmp_path, strict=True).accepted == [path]


@pytest.mark.parametrize(("scale", "message"), [(1.0, "the same"), (0.7, "scaled by 0.7")])
def test_a_replayed_run_is_refused_beside_the_one_it_copies(tmp_path, scale, message):
    """The same measurements under a new run id, or all of them scaled to look faster: each file alone is
    consistent, but its samples are another file's."""
    replay = replayed(yaml.safe_load(BASE.read_text()), scale)
    path = tmp_path / "replay.yaml"
    path.write_text(yaml.safe_dump(replay, sort_keys=False))
    assert not validate([path]).errors  # alone, nothing gives it away
    report = validate([BASE, path])
    refused = [p for p in report.errors if p.path == str(path) and p.field.endswith(".samples_s")]
    ok = sum(1 for m in replay["measurements"] if m["status"] == "ok" and len(m["samples_s"]) >= 3)
    assert len(refused) == ok and all(message in p.message and BASE.name in p.message for p in refused)
    assert not [p for p in report.errors if p.path == str(BASE)]
    # and the site leaves it out too: a replay must not count as one more run of the machine
    from site_builder.load import load_results

    results = tmp_path / "results" / "0c9b4be27c3326c3"
    results.mkdir(parents=True)
    shutil.copy(BASE, results / BASE.name)
    shutil.copy(path, results / "20261123T071848Z.yaml")
    loaded = load_results(tmp_path / "results", workers=1)
    assert loaded.accepted == [results / BASE.name]
    assert loaded.rejected == [str(results / "20261123T071848Z.yaml")]
    assert set(loaded.collector.frame()["run_id"]) == {yaml.safe_load(BASE.read_text())["run"]["id"]}


def test_a_run_much_faster_than_the_machines_earlier_runs_is_a_warning(tmp_path):
    results = tmp_path / "results"
    base = make_measurement()
    for hour, median in enumerate([0.011, 0.0105, 0.0115, 0.008]):  # the last 1.38x faster than the others' median
        result = make_result([retime(base, median)])
        run = result.run.model_copy(
            update={"id": f"{hour + 1:032x}", "started_at": result.run.started_at + timedelta(hours=hour)}
        )
        run = run.model_copy(update={"finished_at": run.started_at + timedelta(minutes=5)})
        save_under(results, result.model_copy(update={"run": run}))
    report = validate([results])
    assert not report.errors
    [warning] = [p for p in report.problems if "faster" in p.message]
    assert warning.severity == "warning" and "1.38x faster" in warning.message and "3 earlier run" in warning.message
    assert warning.path.endswith("20261122T050000Z.yaml") and warning.field == "measurements[0].median_s"
    assert [p for p in validate([results], strict=True).errors if "faster" in p.message]


BASE3 = ROOT / "results" / "0c9b4be27c3326c3" / "20261123T030151Z.yaml"
# What the site shows of a measurement (site_builder.collect's frame): an accepted file must not move any of it.
SHOWN = ["median_s", "ci_lo_s", "ci_hi_s", "samples_per_s", "params", "achieved_tflops", "peak_tflops", "status"]


def _numbers(data, prefix=()):
    """Every number in `data` (not booleans), by its path."""
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _numbers(value, (*prefix, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from _numbers(value, (*prefix, i))
    elif isinstance(data, int | float) and not isinstance(data, bool):
        yield prefix, data


def test_field_by_field_mutations_are_refused_or_move_no_figure_the_site_shows():
    """Each number of a real run (one GPU measurement whole, a device peak, an equivalence check, the run's
    and machine's numbers) scaled by 0.7 and by 1000, one at a time: the gate refuses the file, or the site's
    figures from it are exactly those of the real file."""
    from site_builder.collect import Collector

    data = yaml.safe_load(BASE3.read_text())
    gpu = next(i for i, m in enumerate(data["measurements"]) if m["device"] == "cuda" and m["status"] == "ok")

    def shown(result):
        collector = Collector()
        collector.add(Path("x"), result)
        (summary,) = collector.machines.values()
        frame = collector.frame()[SHOWN]
        # an equivalence verdict is shown as such; its gradient difference cannot be recomputed without the
        # gradients, so a 'passed' one is only held to the check's tolerance (runner.gate.validate), checked below
        verdicts = {key: status for key, (_, status, _) in summary.equivalence.items()}
        grads = [grad for _, status, grad in summary.equivalence.values() if status == "passed"]
        assert all(grad is None or grad <= GRAD_RTOL_MAX for grad in grads)
        return frame.astype(object).where(frame.notna(), None).to_dict("records"), verdicts

    original = storage.parse(yaml.safe_dump(data), "base.yaml")[0]
    expected = shown(original)
    targets = [("measurements", gpu), ("device_peaks", 0), ("equivalence", 0), ("run",), ("machine",)]
    paths = [p for t in targets for p, _ in _numbers(data[t[0]] if len(t) == 1 else data[t[0]][t[1]], t)]
    accepted: set[str] = set()
    for path in paths:
        for factor in (0.7, 1000.0):
            mutant = copy.deepcopy(data)
            target = mutant
            for key in path[:-1]:
                target = target[key]
            value = target[path[-1]]
            changed = value * factor if isinstance(value, float) else (value + 1 if factor < 1 else value * 1000)
            if changed == value:
                continue  # zero scaled is zero: no edit
            target[path[-1]] = changed
            text = yaml.safe_dump(mutant)
            if [p for p in gate(text) if p.severity == "error"]:
                continue
            accepted.add(".".join(str(k) for k in path if not isinstance(k, int)))
            result = storage.parse(text, "mutant.yaml")[0]
            assert shown(result) == expected, (path, factor)
    # what an edit may still change unrefused: figures the site does not show or derive from
    assert accepted <= {
        "measurements.warmup_s",
        "measurements.peak_host_mib",
        "measurements.peak_device_mib",
        "measurements.cpu_util",
        "measurements.load_avg",
        "measurements.threads",
        "measurements.wall_s",
        "measurements.units_per_sample",
        "measurements.top_ops.self_s",
        "measurements.top_ops.total_s",
        "measurements.top_ops.calls",
        "equivalence.loss_rtol",
        "equivalence.grad_rtol",
        "equivalence.grad_rel_diff",
        "equivalence.output_shape",
        "run.time_budget_s",
        "machine.memory_gib",
        "machine.cpu.max_mhz",
        "machine.accelerators.memory_gib",
    }, sorted(accepted)


def test_a_run_time_without_an_offset_is_read_as_utc_not_a_crash():
    """A hostile file mixing a time with an offset and one without must get an answer, not a TypeError."""
    data = yaml.safe_load(BASE.read_text())
    started = datetime.fromisoformat(str(data["run"]["started_at"]))
    data["run"]["finished_at"] = (started + timedelta(hours=1)).replace(tzinfo=None).isoformat()
    assert not [p for p in gate(yaml.safe_dump(data)) if p.severity == "error"]
    data["run"]["finished_at"] = (started - timedelta(hours=1)).replace(tzinfo=None).isoformat()
    problems = [p for p in gate(yaml.safe_dump(data)) if p.severity == "error"]
    assert any(p.field == "run.finished_at" and "finished before it started" in p.message for p in problems)


def test_the_median_of_the_others_matches_the_naive_one():
    """The cohort check's median of every other machine, in O(log n) from one sorted list (ties, odd and even
    counts), equals the median of a list without that machine."""
    import random
    import statistics

    from runner.gate.validate import median_without

    rng = random.Random(7)
    for n in range(2, 40):
        values = [round(rng.lognormvariate(0, 1), 1) for _ in range(n)]  # rounded: ties happen
        ordered = sorted(values)
        for i, value in enumerate(values):
            assert median_without(ordered, value) == statistics.median(values[:i] + values[i + 1 :])
    with pytest.raises(ValueError):
        median_without([1.0, 2.0], 3.0)


def test_the_sites_replay_check_finds_what_the_gates_finds_file_by_file():
    """site_builder.load checks every file's digests at once with sorted arrays; it must refuse the same files with
    the same first problem as runner.gate.validate.Replays fed them in file order. Digests drawn from a few values
    make exact copies, scaled copies, copies within one file, and exact copies whose shape digest is new (which
    Replays never records) all common."""
    import random

    import numpy as np

    from runner.gate.validate import Replays
    from site_builder.load import Fingerprint, _replayed

    rng = random.Random(20261127)
    for _ in range(50):
        fingerprints, reference = [], {}
        replays = Replays()
        for f in range(rng.randint(1, 12)):
            path = Path(f"results/m/{f:02d}.yaml")
            count = rng.randint(0, 5)
            indices = sorted(rng.sample(range(10), count))
            pairs = [(bytes([rng.randint(0, 6)]) * 16, bytes([rng.randint(0, 6)]) * 16) for _ in indices]
            medians = [rng.choice([0.5, 1.0, 2.0]) for _ in indices]
            fingerprints.append(Fingerprint.of(path, indices, b"".join(a + b for a, b in pairs), medians))
            for index, pair, median in zip(indices, pairs, medians, strict=True):
                problem = replays.check(str(path), index, pair, median)
                if problem is not None and path not in reference:
                    reference[path] = problem
        found = _replayed(fingerprints)
        assert list(found) == list(reference)
        assert [(p.field, p.message) for p in found.values()] == [(p.field, p.message) for p in reference.values()]
        assert all(isinstance(fp.indices, np.ndarray) for fp in fingerprints)
