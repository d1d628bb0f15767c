"""Where a machine stands (runner.contribute.standing, `benchsite compare`): ranks and time ratios with intervals
against the published machines that share measurements with it, from results/ or the site's open data."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from runner.cli import app
from runner.contribute import standing
from site_builder.uncertainty import RunSamples
from tests.conftest import make_measurement, make_result, save_under


def _samples(rng: np.random.Generator, median: float, n: int = 25) -> list[float]:
    return list(np.exp(rng.normal(np.log(median), 0.03, n)))


def _machine(label: str, cpu_s: float, gpu_s: float, seed: int, depths=(4, 5)):
    rng = np.random.default_rng(seed)
    ms = []
    for depth in depths:
        point = {"point": {"depth": depth}, "variant": "as-written"}
        ms.append(make_measurement(device="cpu", samples_s=_samples(rng, cpu_s * depth), **point))
        ms.append(make_measurement(device="cuda", device_name=f"GPU {label}", samples_s=_samples(rng, gpu_s), **point))
    return make_result(ms, label=label)


def test_rank_and_ratio_against_the_fastest_with_an_interval():
    mine = _machine("mine", cpu_s=2.0, gpu_s=1.0, seed=1)
    faster = _machine("fast", cpu_s=1.0, gpu_s=2.0, seed=2)  # a CPU twice as fast, a GPU twice as slow
    slower = _machine("slow", cpu_s=4.0, gpu_s=4.0, seed=3, depths=(4,))  # shares one depth only
    rows = [r for m in (mine, faster, slower) for r in standing.rows_of(m)]
    places = {p.device_class: p for p in standing.standing(mine, rows)}
    cpu, gpu = places["CPU"], places["accelerator"]
    assert (cpu.rank, cpu.of) == (2, 3) and (gpu.rank, gpu.of) == (1, 3)
    best = cpu.fastest
    assert best is not None and best.machine_id == faster.machine.id and best.shared == 2
    assert best.lo < best.ratio < best.hi and best.ratio == pytest.approx(2.0, rel=0.05)
    assert best.lo > 1.8 and best.hi < 2.2
    assert gpu.fastest is None and [v.shared for v in gpu.versus if v.machine_id == slower.machine.id] == [1]
    assert "2nd of 3 CPUs on the as-written loops; 2.0" in cpu.sentence()
    assert "1st of 3 accelerators" in gpu.sentence() and "takes 2.0" in gpu.sentence()


def test_a_rank_whose_interval_includes_1_says_the_two_are_not_clearly_apart():
    """The rank is by the point estimate. Where the named device's interval includes 1 the sentence says the two are
    not clearly apart, behind or ahead; where it excludes 1 it says nothing of the kind."""
    mine = _machine("mine", cpu_s=1.0, gpu_s=1.0, seed=1)
    close = _machine("close", cpu_s=0.99, gpu_s=1.01, seed=2)  # 1% apart, within 3% noise a sample
    far = _machine("far", cpu_s=2.0, gpu_s=2.0, seed=3)
    for other, tie in ((close, True), (far, False)):
        rows = [r for m in (mine, other) for r in standing.rows_of(m)]
        places = {p.device_class: p for p in standing.standing(mine, rows)}
        for place in places.values():
            named = place.versus[0]
            assert named.lo is not None and named.hi is not None
            assert (named.lo <= 1.0 <= named.hi) is tie
            side = "slower" if place.fastest is not None else "ahead"
            said = place.sentence()
            assert (f"not clearly {side}, the interval includes 1." in said) is tie, said
            assert "not clearly" not in said or tie


def test_a_machine_page_calls_the_fastest_only_a_machine_clearly_ahead():
    """The machine page's standing says 'this machine is the fastest' only where the interval excludes 1; where it
    includes 1 the page says the two are not clearly apart, as the end of a run does."""
    from site_builder.render import RAW, render

    ahead = standing.Versus("m2", "EPYC", 0.5, 0.4, 0.6, 20)
    tie = standing.Versus("m3", "Xeon", 0.88, 0.53, 1.45, 34)
    behind = standing.Versus("m4", "H200", 1.3, 0.9, 1.8, 12)
    places = [
        standing.Standing("CPU", "as-written", "Xeon", 1, 3, [ahead]),
        standing.Standing("CPU", "tuned", "Xeon", 1, 3, [tie]),
        standing.Standing("accelerator", "as-written", "H100", 2, 2, [behind]),
    ]
    page = RAW.restore(render("machine-standing.md.j2", standing=places))
    cells = [row.split("</td><td>")[4] for row in page.split("<tr>")[2:]]
    assert cells == [
        "0.50x (0.40 .. 0.60): this machine is the fastest",
        "0.88x (0.53 .. 1.45): not clearly apart, the interval includes 1",
        "1.30x (0.90 .. 1.80): not clearly apart, the interval includes 1",
    ], cells
    assert [p.versus[0].not_clearly_apart for p in places] == [False, True, True]


def test_a_shared_measurement_without_an_interval_is_left_out_rather_than_the_ratio_s_interval():
    """A published file's long CPU epoch of one sample has no interval; a ratio over the measurements two machines
    share rests on those that have one, and says how many it left out, rather than losing its interval to one of
    them. Where none has one, the ratio is over all and has no interval."""
    mine = _machine("mine", cpu_s=2.0, gpu_s=1.0, seed=6)
    faster = _machine("fast", cpu_s=1.0, gpu_s=2.0, seed=7)
    rows = standing.rows_of(faster)
    assert rows[0].device == "cpu"  # depth 4's; depth 5's CPU epoch is then left with one sample, depth 4's with 25
    partly = [replace(r, samples_s=r.samples_s[:1]) if r.device == "cpu" and r != rows[0] else r for r in rows]
    one = [replace(r, samples_s=r.samples_s[:1]) if r.device == "cpu" else r for r in rows]
    cpu = {p.device_class: p for p in standing.standing(mine, partly)}["CPU"]
    best = cpu.fastest
    assert best is not None and (best.shared, best.left_out) == (1, 1) and best.lo is not None
    assert best.ratio == pytest.approx(2.0, rel=0.05)
    assert "(machine " in cpu.sentence() and "1 shared measurement; 1 without an interval left out)" in cpu.sentence()
    cpu = {p.device_class: p for p in standing.standing(mine, one)}["CPU"]
    assert cpu.fastest is not None and (cpu.fastest.shared, cpu.fastest.left_out) == (2, 0)
    assert cpu.fastest.lo is None and "no interval" in cpu.sentence()


def test_a_machine_is_never_compared_with_itself_and_is_compared_by_hash_whatever_the_profile():
    """A quick point is a standard point (the same workload hash): a quick run compares with standard runs; another
    hash (another suite version, point or loop) never compares."""
    mine = _machine("mine", 2.0, 1.0, seed=4)
    assert standing.standing(mine, standing.rows_of(mine)) == []
    other = _machine("other", 1.0, 1.0, seed=5)
    standard = [standing.Row(**{**r.__dict__, "profile": "standard"}) for r in standing.rows_of(other)]
    assert mine.suite.profile != "standard"
    places = standing.standing(mine, standard)
    assert [p.versus[0].shared for p in places] == [2, 2]
    elsewhere = [standing.Row(**{**r.__dict__, "workload_hash": "0" * 16}) for r in standing.rows_of(other)]
    assert standing.standing(mine, elsewhere) == []


def test_compare_reads_a_results_folder_and_the_sites_parquet(tmp_path):
    import pandas as pd

    mine, faster = _machine("mine", 2.0, 1.0, seed=6), _machine("fast", 1.0, 1.0, seed=7)
    results = tmp_path / "results"
    save_under(results, faster)
    mine_path = save_under(tmp_path / "mine", mine)
    cli = CliRunner()
    out = cli.invoke(app, ["compare", str(mine_path), "--against", str(results)])
    assert out.exit_code == 0, out.output
    assert "your CPU (AMD EPYC mine, 2 cores): 2nd of 2 CPUs" in " ".join(out.output.split())
    # the same from open data: a parquet with the site's columns (samples as text)
    rows = standing.rows_of(faster)
    table = pd.DataFrame(
        [
            {**r.__dict__, "samples_s": " ".join(repr(x) for x in r.samples_s), "status": "ok", "unit": "epoch"}
            | {"point": "depth=4"}
            for r in rows
        ]
    )
    ddp = {**table.iloc[0].to_dict(), "workload_hash": "f" * 16, "point": "model=bert-base, world_size=2"}
    table = pd.concat([table, pd.DataFrame([ddp])], ignore_index=True)  # a data-parallel point: never compared
    assert len(standing.rows_from_table(table)) == len(rows)
    parquet = tmp_path / "measurements.parquet"
    table.to_parquet(parquet, index=False)
    from_parquet = standing.standing(mine, standing.published_rows(parquet))
    from_yaml = standing.standing(mine, standing.published_rows(results))
    assert [(p.rank, p.of, round(p.versus[0].ratio, 9)) for p in from_parquet] == [
        (p.rank, p.of, round(p.versus[0].ratio, 9)) for p in from_yaml
    ]
    missing = cli.invoke(app, ["compare", str(tmp_path / "nope.yaml")])
    assert missing.exit_code == 1


def test_the_answer_reads_the_published_files_through_the_site_s_build_cache(tmp_path, monkeypatch):
    """The end of a run and `benchsite compare` read a results folder as the site build does, through the build cache
    beside it: a second reading parses only the files the cache does not hold, and answers the same."""
    from runner.results import storage
    from site_builder.answer import answer
    from site_builder.cache import BuildCache, folder_for
    from site_builder.load import load_results

    monkeypatch.delenv("BENCHSITE_CACHE", raising=False)
    monkeypatch.chdir(tmp_path)
    results = Path("results")  # as `benchsite run` names it by default: relative to where it runs
    save_under(results, _machine("fast", 1.0, 2.0, seed=8))
    mine = _machine("mine", 2.0, 1.0, seed=10)
    mine_path = save_under(results, mine)
    parsed: list[str] = []
    real_load = storage.load

    def counting_load(path):
        parsed.append(path.name)
        return real_load(path)

    monkeypatch.setattr(storage, "load", counting_load)

    def sentences() -> list[str]:
        return [place.sentence() for place in answer(mine, mine_path, results).standings]

    first = sentences()
    assert len(parsed) == 2 and (tmp_path / ".benchsite-cache").is_dir()
    assert "2nd of 2 CPUs" in first[0]
    parsed.clear()
    assert sentences() == first and parsed == []  # both files from the cache
    save_under(results, _machine("slow", 4.0, 4.0, seed=9, depths=(4,)))
    third = sentences()
    assert len(parsed) == 1 and "of 3 CPUs" in third[0]  # the new file alone is read, and the standing counts it
    parsed.clear()  # the site build, which names the folder by its absolute path, finds every file in that cache
    assert load_results(tmp_path / "results", cache=BuildCache(folder_for(tmp_path))).cache_hits == 3
    assert parsed == []
    monkeypatch.setenv("BENCHSITE_CACHE", "off")
    parsed.clear()
    assert sentences() == third and len(parsed) == 3


def test_a_cache_that_cannot_be_written_leaves_the_answer_whole(tmp_path, monkeypatch):
    """Where the build cache beside a results folder cannot be written (a read-only checkout), the answer reads every
    file and gives the same standing."""
    from site_builder import cache
    from site_builder.answer import answer

    monkeypatch.delenv("BENCHSITE_CACHE", raising=False)
    results = tmp_path / "results"
    save_under(results, _machine("fast", 1.0, 2.0, seed=8))
    mine = _machine("mine", 2.0, 1.0, seed=10)
    mine_path = save_under(results, mine)
    expected = [place.sentence() for place in answer(mine, mine_path, results).standings]

    def refuse(*args, **kwargs):
        raise PermissionError("read-only file system")

    monkeypatch.setattr(cache, "replace_tables", refuse)
    monkeypatch.setenv("BENCHSITE_CACHE", str(tmp_path / "elsewhere"))  # an empty cache: it must be written
    assert [place.sentence() for place in answer(mine, mine_path, results).standings] == expected


def test_the_indexed_standing_matches_a_pair_by_pair_comparison():
    """Published compares a device with every group of its class and loop at once (a matrix of medians); the
    rule it implements, written out pair by pair: every other machine's device of the class and loop that
    shares a (workload hash, framework) with it, the geometric mean of the ratios of medians over those shared
    (over those with an interval on both sides where there are any: a measurement of one sample has none), ranked
    fastest first (ties in the index's order). `keep` shortens the list and never the rank."""
    rng = np.random.default_rng(11)
    rows = []
    for m in range(30):
        for device, name in (("cpu", f"CPU {m % 4}"), ("cuda" if m % 3 else "rocm", f"GPU {m % 5}")):
            for variant in ("as-written", "tuned"):
                for digest in rng.choice(8, size=rng.integers(1, 8), replace=False):
                    for framework in ("torch", "jax")[: 1 + m % 2]:
                        n = 7 if rng.random() > 0.15 else 1  # one sample: no interval
                        samples = tuple(np.exp(rng.normal(np.log(1 + m % 7), 0.05, n)))
                        rows.append(
                            standing.Row(
                                f"m{m:02d}",
                                device,
                                name,
                                "w",
                                f"h{digest}",
                                framework,
                                variant,
                                3,
                                "standard",
                                "2026-11-25",
                                samples,
                            )
                        )
    index = standing.Published(rows)
    for m in range(30):
        me = f"m{m:02d}"
        mine = [r for r in rows if r.machine_id == me]
        places = standing.standing_of(me, mine, index)
        short = standing.standing_of(me, mine, index, keep=1)
        assert [(p.rank, p.of, p.versus[:1]) for p in places] == [(p.rank, p.of, p.versus) for p in short]
        for place in places:
            own = {
                (r.workload_hash, r.framework): r
                for r in mine
                if r.variant == place.variant and standing.device_class(r.device) == place.device_class
            }
            expected = []
            for (machine, device, name, variant), theirs in index.groups:
                if machine == me or variant != place.variant:
                    continue
                if standing.device_class(device) != place.device_class:
                    continue
                shared = sorted(set(own) & set(theirs))
                both = [k for k in shared if own[k].has_interval and theirs[k].has_interval]
                used = both or shared
                if used:
                    ratio = np.exp(np.mean([np.log(own[k].median / theirs[k].median) for k in used]))
                    expected.append((machine, name, ratio, len(used), len(shared) - len(used), bool(both)))
            expected.sort(key=lambda e: -e[2])
            assert place.of == len(expected) + 1
            assert place.rank == 1 + sum(e[2] > 1 for e in expected)
            got = [(v.machine_id, v.device_name, v.shared, v.left_out) for v in place.versus]
            assert got == [(e[0], e[1], e[3], e[4]) for e in expected]
            assert [v.ratio for v in place.versus] == pytest.approx([e[2] for e in expected], rel=1e-12)
            # the named device has an interval exactly where its ratio rests on measurements that have one
            assert (place.versus[0].lo is not None) == expected[0][5]
            assert all(v.lo is None for v in place.versus[1:])


def test_the_index_from_a_table_matches_the_index_from_rows():
    """The site indexes its frame without a Row per measurement (Published.from_table over TableRows); every
    standing must be the one the rows give: the newest run of each machine's measurement (the first in table order
    among equal dates, whatever its profile), rows of other statuses, units and data-parallel points left out, a row
    without samples left out, and a machine's own rows as the table orders them."""
    import pandas as pd

    rng = np.random.default_rng(12)
    records = []
    for _ in range(1500):
        m = int(rng.integers(0, 25))
        suite = int(rng.choice([2, 3], p=[0.1, 0.9]))
        samples = None if rng.random() < 0.03 else RunSamples([np.exp(rng.normal(m % 6, 0.05, 5))] * 2)
        records.append(
            {
                "machine_id": f"m{m:02d}",
                "device": ("cpu", "cuda", "rocm")[m % 3] if rng.random() < 0.5 else "cpu",
                "device_name": f"device {m % 4}",
                "workload": "w",
                "workload_hash": f"s{suite}h{rng.integers(0, 6)}",  # the hash holds the suite version
                "framework": ("torch", "jax")[int(rng.integers(0, 2))],
                "variant": ("as-written", "tuned")[int(rng.integers(0, 2))],
                "suite": suite,
                "profile": str(rng.choice(["standard", "quick"], p=[0.85, 0.15])),
                # few distinct dates: many ties, where the first in table order must win
                "started_at": pd.Timestamp("2026-11-20", tz="UTC") + pd.Timedelta(hours=int(rng.integers(0, 4))),
                "status": "ok" if rng.random() < 0.9 else "failed",
                "unit": "latency" if rng.random() < 0.05 else "epoch",
                "world_size": 2.0 if rng.random() < 0.05 else np.nan,
                "samples": samples,
            }
        )
    table = pd.DataFrame(records)
    for column in ("machine_id", "device", "device_name", "workload", "framework", "variant", "profile", "status"):
        table[column] = table[column].astype("category")
    rows = standing.rows_from_table(table)
    assert rows and len(rows) < len(table)
    by_rows = standing.Published(rows)
    by_table = standing.Published.from_table(standing.TableRows(table))

    def plain(row: standing.Row) -> tuple:
        return (*(getattr(row, f) for f in row.__dataclass_fields__ if f != "samples_s"), list(row.samples_s))

    def groups(index: standing.Published) -> list:
        return [(key, {k: plain(r) for k, r in rows.items()}) for key, rows in index.groups]

    assert groups(by_table) == groups(by_rows)
    table_rows = standing.TableRows(table)
    for m in sorted(table["machine_id"].unique()):
        mine = [r for r in rows if r.machine_id == m]
        positions = np.flatnonzero(table["machine_id"].to_numpy() == m)
        assert [plain(r) for r in table_rows.rows(positions)] == [plain(r) for r in mine]
        assert standing.standing_of(m, mine, by_table) == standing.standing_of(m, mine, by_rows)


def test_the_ratio_interval_covers_the_true_ratio_95_percent_of_the_time_and_widens_by_the_between_run_spread():
    """ratio_interval over rounds (3 processes a side, two shared measurements): Student's t with Welch's degrees of
    freedom holds the true ratio in about 95% of seeded draws; a between-run tau^2 widens it; a side of one process
    has no interval."""
    rng = np.random.default_rng(13)

    def side(median: float, n: int = 3) -> standing.Row:
        values = tuple(np.exp(rng.normal(np.log(median), 0.1, n)))
        return standing.Row("m", "cpu", "CPU", "w", "h", "torch", "as-written", 3, "quick", "2026", values, True)

    held, draws = 0, 2000
    for _ in range(draws):
        lo, hi = standing.ratio_interval([side(2.0), side(4.0)], [side(1.0), side(2.0)])
        held += lo < 2.0 < hi
    assert 0.93 < held / draws < 0.97
    mine, theirs = [side(2.0), side(4.0)], [side(1.0), side(2.0)]
    narrow, wide = standing.ratio_interval(mine, theirs), standing.ratio_interval(mine, theirs, tau2=0.01)
    assert wide[0] < narrow[0] < narrow[1] < wide[1]
    assert np.isnan(standing.ratio_interval([side(2.0, n=1)], [side(1.0)])[0])


def test_a_first_quick_run_is_placed_among_the_committed_standard_runs(tmp_path):
    """A real quick run (tabular-mlp, PyTorch, the CPU, two rounds) against the committed results, which hold
    standard runs: its points are standard points, so the run ends with its CPU's rank among the published CPUs and
    how many measurements it rests on. Nothing is written under results/."""
    import re
    import subprocess
    import sys
    from pathlib import Path

    results = Path(__file__).resolve().parents[1] / "results"
    before = sorted(results.rglob("*.yaml"))
    out = tmp_path / "quick.yaml"
    args = ["run", "--profile", "quick", "-w", "tabular-mlp", "-f", "torch", "-d", "cpu", "--rounds", "2"]
    args += ["--time-budget", "0.2", "--no-equivalence", "--no-profiler", "--output", str(out)]
    done = subprocess.run(
        [sys.executable, "-m", "runner", *args, "--results-dir", str(results)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**__import__("os").environ, "COLUMNS": "200"},
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    text = " ".join(done.stdout.split())
    assert "Where this machine stands" in text, text[-2000:]
    ranks = re.findall(r"your CPU \([^)]*\): (\d+)(?:st|nd|rd|th) of (\d+) CPUs on the (as-written|tuned) loops", text)
    assert {loop for _, _, loop in ranks} == {"as-written", "tuned"}
    assert all(1 <= int(rank) <= int(of) and int(of) >= 2 for rank, of, _ in ranks)
    # "(1 shared measurement)" where this CPU is the fastest, else "(the fastest's name, 1 shared measurement)"
    assert re.search(r"[(,;] ?1 shared measurement\)", text)
    assert out.exists() and sorted(results.rglob("*.yaml")) == before


def test_a_table_s_rows_are_the_same_whether_its_text_is_categorical_pandas_text_or_plain_objects():
    """TableRows looks a categorical or pandas-text column's values up by code (each distinct value made text
    once): every row must read as the same column taken value by value as plain objects gives it, missing values
    ("nan", "<NA>") and rounds' pairing (paired only where it is non-empty text) included."""
    import pandas as pd

    rng = np.random.default_rng(5)
    n = 300
    texts = {
        "machine_id": [f"m{i % 7}" for i in range(n)],
        "device": [("cpu", "cuda", None)[i % 3] for i in range(n)],
        "device_name": [("Xeon", "H200", "Xeon")[i % 3] for i in range(n)],
        "workload": ["w"] * n,
        "workload_hash": [None if i % 11 == 0 else f"h{i % 4}" for i in range(n)],
        "framework": [("torch", "jax")[i % 2] for i in range(n)],
        "variant": [("as-written", "tuned", None)[i % 5 % 3] for i in range(n)],
        "profile": [("standard", "quick")[i % 4 // 3] for i in range(n)],
        "pairing": [("", "r1", None, "r2")[i % 4] for i in range(n)],
    }
    base = pd.DataFrame(
        {
            **{name: pd.Series(values, dtype=object) for name, values in texts.items()},
            "suite": 3,
            "started_at": pd.Timestamp("2026-11-20", tz="UTC") + pd.to_timedelta(rng.integers(0, 9, n), unit="h"),
            "status": "ok",
            "unit": "epoch",
            "world_size": np.nan,
            "samples": [np.exp(rng.normal(0, 0.1, 3)) for _ in range(n)],
        }
    )
    categorical = base.astype({name: "category" for name in texts})
    # categories in an order of their own, with one no row uses
    categorical["framework"] = categorical["framework"].cat.set_categories(["unused", "torch", "jax"])
    arrow_text = base.astype({"workload_hash": "str", "machine_id": "str"})

    def read(table: pd.DataFrame) -> list[tuple]:
        rows = standing.TableRows(table)
        return [
            (*(getattr(r, f) for f in r.__dataclass_fields__ if f != "samples_s"), list(r.samples_s))
            for r in rows.rows(range(len(table)))
        ]

    def scalars(table: pd.DataFrame) -> pd.DataFrame:
        """Each column as the scalars its array gives one position at a time, in plain object columns."""
        return table.assign(
            **{name: pd.Series([table[name].array[i] for i in range(n)], dtype=object) for name in texts}
        )

    plain = read(base)
    assert len(plain) == n and {r[1] for r in plain} == {"cpu", "cuda", "None"}
    assert {r[4] for r in plain} >= {"h0", "None"} and {r[-2] for r in plain} == {True, False}
    for table in (categorical, arrow_text):
        assert read(table) == read(scalars(table))
    paired = [p in ("r1", "r2") for p in texts["pairing"]]  # not "", not missing
    assert [r[-2] for r in plain] == [r[-2] for r in read(categorical)] == paired
    assert {r[1] for r in read(categorical)} == {"cpu", "cuda", "nan"}
    assert read(categorical)[3][5] == "jax" and read(arrow_text)[0][4] == "nan"
