"""The site's answers: intervals on speedups, like-with-like slicing, the seeds' verdicts, the advisor's
interpolation, open data, and templates that escape by default."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from runner.results.schema import Suite
from site_builder import advisor, opendata, seeds
from site_builder.analyses.speedups import TOO_FEW, speedup_summary
from site_builder.collect import Collector
from site_builder.site import Site
from site_builder.uncertainty import median_over, median_replicates_many, ratio_intervals, ratio_of_medians
from tests.conftest import make_measurement, make_result

SITE_BUILDER = Path(__file__).parent.parent / "site_builder"


def lognormal(rng: np.random.Generator, median: float, n: int, sigma: float = 0.1) -> list[float]:
    return list(np.exp(rng.normal(np.log(median), sigma, n)))


def measurement(device: str, samples: list[float], **overrides):
    median = float(np.median(samples))
    return make_measurement(
        device=device,
        samples_s=samples,
        median_s=median,
        **overrides,
    )


def site_of(*results) -> Site:
    collector = Collector()
    for i, result in enumerate(results):
        collector.add(Path(f"r{i}"), result)
    return Site.from_collector(collector, [])


def test_vectorised_intervals_equal_the_one_at_a_time_bootstrap():
    rng = np.random.default_rng(7)
    nums = [rng.random(n) + 1 for n in (5, 5, 9, 1, 40)]
    dens = [rng.random(n) + 0.5 for n in (6, 6, 9, 3, 1)]
    lo, hi = ratio_intervals(nums, dens)
    for a, b, low, high in zip(nums, dens, lo, hi, strict=True):
        single = ratio_of_medians(a, b)
        assert single.lo == pytest.approx(low) and single.hi == pytest.approx(high)
    assert median_replicates_many([[1.0, 2.0, 3.0]]).shape == (1, 1000)


def test_the_median_over_machines_covers_the_true_median_about_95_percent_of_the_time():
    """Seven machines whose true speedups scatter around 2.0 (the population median), each measured with
    noise: the two-level interval of their median covers 2.0 in most trials."""
    rng = np.random.default_rng(11)
    trials, covered = 200, 0
    for _ in range(trials):
        truths = np.exp(rng.normal(np.log(2.0), 0.15, 7))
        estimates, replicates = [], []
        for truth in truths:
            cpu, gpu = lognormal(rng, truth, 15), lognormal(rng, 1.0, 15)
            estimates.append(float(np.median(cpu) / np.median(gpu)))
            replicates.append(
                np.asarray(median_replicates_many([cpu])[0]) / np.asarray(median_replicates_many([gpu], side=1)[0])
            )
        covered += median_over(estimates, replicates).spans(2.0)
    assert 0.85 <= covered / trials <= 1.0, covered / trials


def test_every_speedup_row_has_its_interval_and_a_verdict_that_needs_it():
    rng = np.random.default_rng(3)
    clear = [measurement("cpu", lognormal(rng, 2.0, 30)), measurement("cuda", lognormal(rng, 1.0, 30))]
    site = site_of(make_result(clear))
    (row,) = site.speedups.to_dict("records")
    assert row["speedup_lo"] < row["speedup"] < row["speedup_hi"] and row["verdict"] == "accelerator faster"
    noisy = [
        measurement("cpu", lognormal(rng, 1.02, 6, 0.3)),
        measurement("cuda", lognormal(rng, 1.0, 6, 0.3)),
    ]
    (row,) = site_of(make_result(noisy)).speedups.to_dict("records")
    assert row["speedup_lo"] < 1 < row["speedup_hi"] and row["verdict"] == "no clear winner"


def test_other_profiles_and_suites_are_kept_apart():
    rng = np.random.default_rng(5)
    standard = make_result([measurement("cpu", lognormal(rng, 2.0, 10)), measurement("cuda", lognormal(rng, 1.0, 10))])
    standard = standard.model_copy(update={"suite": Suite(version=2, profile="standard")})
    quick = make_result(
        [measurement("cpu", lognormal(rng, 9.0, 10)), measurement("cuda", lognormal(rng, 1.0, 10))],
        label="b",
    ).model_copy(update={"suite": Suite(version=2, profile="quick")})
    older = make_result(
        [measurement("cpu", lognormal(rng, 9.0, 10)), measurement("cuda", lognormal(rng, 1.0, 10))],
        label="c",
    ).model_copy(update={"suite": Suite(version=1, profile="standard")})
    site = site_of(standard, quick, older)
    assert (site.suite, site.profile) == (2, "standard")
    assert set(site.frame["machine_id"]) == {standard.machine.id}
    assert set(site.apart["machine_id"]) == {quick.machine.id, older.machine.id}
    summary = speedup_summary(site.speedups)
    assert summary["speedup"].iloc[0] == pytest.approx(2.0, rel=0.1)  # the 9x runs are not in the median
    # Before anyone ran standard, the fullest profile there is leads.
    only_quick = site_of(quick)
    assert only_quick.profile == "quick" and not only_quick.frame.empty


def _seed_claim(**overrides):
    claim = {
        "kind": "speedup", "workload": "depth-sweep", "framework": "torch", "expect": "accelerator", "point": {},
        "published": 3.0,
    }  # fmt: skip
    return {**claim, **overrides}


def test_a_seed_claim_is_reproduced_only_where_the_interval_says_so():
    rng = np.random.default_rng(8)
    written = {"variant": "as-written"}
    faster = make_result(
        [
            measurement("cpu", lognormal(rng, 3.0, 20), **written),
            measurement("cuda", lognormal(rng, 1.0, 20), **written),
        ]
    )
    slower = make_result(
        [
            measurement("cpu", lognormal(rng, 0.5, 20), **written),
            measurement("cuda", lognormal(rng, 1.0, 20), **written),
        ],
        label="b",
    )
    site = site_of(faster, slower)
    verdicts = {m["machine_id"]: m["verdict"] for m in seeds.speedup_reproductions(site, _seed_claim())}
    assert verdicts == {faster.machine.id: seeds.REPRODUCED, slower.machine.id: seeds.DIFFERS}
    tie = {m["machine_id"]: m["verdict"] for m in seeds.speedup_reproductions(site, _seed_claim(expect="tie"))}
    assert tie == {faster.machine.id: seeds.DIFFERS, slower.machine.id: seeds.REPRODUCED}
    assert seeds.speedup_reproductions(site, _seed_claim(framework="jax")) == []
    # the size apart from the direction: the published 3x inside the faster machine's interval, 30x far above it
    sizes = {
        m["machine_id"]: m["points"][0]["magnitude"]
        for m in seeds.speedup_reproductions(site, _seed_claim(published=30.0))
    }
    assert sizes[faster.machine.id] == "10.0x smaller than published"
    (same,) = [m for m in seeds.speedup_reproductions(site, _seed_claim()) if m["machine_id"] == faster.machine.id]
    assert same["points"][0]["magnitude"] == seeds.SAME_SIZE and same["verdict"] == seeds.REPRODUCED


def test_a_tie_is_judged_inside_its_margin():
    rng = np.random.default_rng(9)
    written = {"variant": "as-written"}

    def machine(cpu: float, gpu: float, sigma: float, label: str):
        return make_result(
            [
                measurement("cpu", lognormal(rng, cpu, 30, sigma), **written),
                measurement("cuda", lognormal(rng, gpu, 30, sigma), **written),
            ],
            label=label,
        )

    even, gpu_wins, wide = machine(1.0, 1.0, 0.02, "a"), machine(3.0, 1.0, 0.02, "b"), machine(1.15, 1.0, 0.4, "c")
    site = site_of(even, gpu_wins, wide)
    claim = _seed_claim(expect="tie", margin=1.2)
    verdicts = {m["machine_id"]: m["verdict"] for m in seeds.speedup_reproductions(site, claim)}
    assert verdicts == {
        even.machine.id: seeds.REPRODUCED,
        gpu_wins.machine.id: seeds.DIFFERS,
        wide.machine.id: seeds.UNDECIDED,
    }
    # thirty samples a side: undecided because its interval is too wide, which the verdict must not blame on one sample
    assert "one sample" not in verdicts[wide.machine.id]
    assert seeds.tie_verdict(0.9, 1.1, 1.2) is True
    assert seeds.tie_verdict(1.3, 1.5, 1.2) is False and seeds.tie_verdict(0.5, 0.8, 1.2) is False
    assert seeds.tie_verdict(1.1, 1.3, 1.2) is None and seeds.tie_verdict(None, 1.1, 1.2) is None


def test_a_break_even_made_on_a_grid_is_judged_at_its_grid_point():
    """Seed 001 measured whole depths: a machine reproduces "the GPU starts to win at 10 layers" when it crosses at
    depth 10 (the CPU clearly faster up to 9, not from 10 on, the GPU clearly winning by the end), whatever its
    interpolated break-even."""
    rng = np.random.default_rng(10)

    def sweep(speedups: dict[int, float], label: str):
        ms = []
        for depth, speedup in speedups.items():
            point = {"workload": "depth-sweep", "point": {"depth": depth}, "variant": "as-written"}
            ms.append(measurement("cpu", lognormal(rng, speedup, 30, 0.03), **point))
            ms.append(measurement("cuda", lognormal(rng, 1.0, 30, 0.03), **point))
        return make_result(ms, label=label)

    at_ten = sweep({8: 0.4, 9: 0.6, 10: 1.0, 11: 2.0, 12: 5.0}, "a")  # a tie at 10, then wins: crosses at 10
    at_eleven = sweep({8: 0.4, 9: 0.5, 10: 0.7, 11: 2.0, 12: 5.0}, "b")  # the CPU still clearly faster at 10
    never = sweep({8: 0.4, 9: 0.5, 10: 0.7, 11: 0.8, 12: 0.9}, "c")
    site = site_of(at_ten, at_eleven, never)
    claim = {
        "id": "depth-break-even",
        "kind": "break-even",
        "workload": "depth-sweep",
        "framework": "torch",
        "published": 700000,
        "resolution": {"grid": "depth", "first_win": 10},
    }
    rows = {m["machine_id"]: m for m in seeds.break_even_reproductions(site, claim)}
    assert rows[at_ten.machine.id]["first_win"] == 10 and rows[at_ten.machine.id]["verdict"] == seeds.REPRODUCED
    assert rows[at_eleven.machine.id]["first_win"] == 11 and rows[at_eleven.machine.id]["verdict"] == seeds.DIFFERS
    assert rows[at_ten.machine.id]["break_even"] is not None  # the interpolated figure stays beside it
    assert rows[never.machine.id]["first_win"] is None and rows[never.machine.id]["verdict"] == seeds.DIFFERS
    chart_rows = seeds.claim_rows(claim, list(rows.values()))
    assert chart_rows["source"].tolist()[0] == "published" and chart_rows["value"].iloc[0] == 700000
    assert (chart_rows["source"] == "reproduction").sum() == sum(r["break_even"] is not None for r in rows.values())


def test_the_curated_seed_figures_quote_the_seeds():
    """Every published figure is transcribed with a quote, and each quoted fragment is in the seed's text."""
    shared = Path(__file__).parent.parent.parent / "shared" / "seeds"
    loaded = seeds.load_seeds()
    assert [s.seed for s in loaded] == ["000", "001", "002", "003", "004"]
    for seed in loaded:
        assert seed.claims
        for claim in seed.claims:
            assert claim["published"] > 0 and claim["quote"]
            if shared.exists():
                text = " ".join((shared / seed.source).read_text().split())
                for fragment in claim["quote"].split(" ... "):
                    assert " ".join(fragment.split()) in text, (seed.seed, fragment)
        for figure in seed.figures:
            assert (
                figure["published_s"] > 0
                and figure["per"] in ("epoch", "run")
                and figure["device"] in ("cpu", "accelerator")
            )
            if shared.exists():
                text = " ".join((shared / seed.source).read_text().split())
                assert " ".join(figure["quote"].split()) in text, (seed.seed, figure["quote"])
    assert {s.seed for s in loaded if s.figures} == {"002", "004"}


def test_a_seeds_other_figures_stand_beside_each_machines_median():
    rng = np.random.default_rng(13)
    point = {"workload": "mnist-cnn", "variant": "as-written"}
    result = make_result(
        [measurement("cpu", lognormal(rng, 40.0, 5), **point), measurement("cuda", lognormal(rng, 8.0, 5), **point)]
    )
    site = site_of(result)
    (seed,) = [s for s in seeds.load_seeds() if s.seed == "004"]
    views = {(f["framework"], f["device"]): f for f in seeds.seed_view(site, seed)["figures"]}
    (cpu,) = views[("torch", "cpu")]["machines"]
    (gpu,) = views[("torch", "accelerator")]["machines"]
    assert 35 < cpu["median_s"] < 45 and 7 < gpu["median_s"] < 9 and cpu["lo"] < cpu["median_s"] < cpu["hi"]
    assert views[("tensorflow", "cpu")]["machines"] == []


def test_the_advisor_interpolates_inside_the_measured_range_and_never_outside():
    rows = []
    for depth, (cpu, gpu) in {2: (1.0, 4.0), 4: (4.0, 4.0), 6: (16.0, 4.0)}.items():
        for device, t in (("cpu", cpu), ("cuda", gpu)):
            rows.append(
                measurement(
                    device,
                    [t * 0.99, t, t * 1.01],
                    point={"depth": depth},
                    params=10**depth,
                    workload_hash=f"{depth:016x}",
                )
            )
    site = site_of(make_result(rows))
    grid, families = advisor.advisor_grid(site.speedups)
    assert families == ["MLP, by parameter count (seed 001's depth sweep)"]
    grid = grid[(grid["fw"] == "torch") & (grid["loop"] == "tuned")]
    at = grid.set_index("g")
    # 10^3 parameters: halfway in log between the measured 10^2 (0.25x) and 10^4 (1x): 0.5x
    assert at.loc[12, "s"] == pytest.approx(0.5, rel=1e-3)
    assert at.loc[24, "s"] == pytest.approx(4.0, rel=1e-3)
    assert advisor.answer(at.loc[12].to_dict() | {"g": 12}).startswith(at.loc[12, "gpu"] + ": 0.50x its machine's CPU")
    assert at.loc[12, "href"] == "leaderboards/depth-sweep.html#" + advisor.row_anchor(at.loc[12, "near"], "tuned")
    # Outside the measured range (10^2 .. 10^6) there is no row: the range row says why.
    assert 28 not in at.index and 4 not in at.index
    assert (
        advisor.answer(at.loc[-1].to_dict() | {"g": -1})
        == f"{at.loc[-1, 'gpu']}: no estimate, measured from 100 to 1,000,000 parameters only."
    )
    assert at.loc[18, "near"] == "depth=4" and at.loc[18, "n"] == 1
    # A loop no machine timed on both sides: one row that says so, not an empty answer.
    (nothing,) = advisor.advisor_grid(site.speedups)[0].query("loop == 'as-written'").to_dict("records")
    assert nothing["g"] == -2 and advisor.answer(nothing) == f"No estimate: {advisor.NOTHING_MEASURED}."


def test_open_data_parquet_has_the_csv_rows(tmp_path, monkeypatch):
    rng = np.random.default_rng(9)
    result = make_result([measurement("cpu", lognormal(rng, 2.0, 5)), measurement("cuda", lognormal(rng, 1.0, 5))])
    files = opendata.write_data_files(site_of(result), tmp_path / "data")
    csv = pd.read_csv(files["data/measurements.csv"])
    parquet = pd.read_parquet(files["data/measurements.parquet"])
    assert list(csv.columns) == list(parquet.columns) == list(opendata.MEASUREMENT_COLUMNS)
    assert len(csv) == len(parquet) == 4  # each measurement's machine row and its one run's row
    assert list(csv["level"]) == ["machine", "machine", "run", "run"]
    # the same rows and values: the Parquet file written out as CSV is the CSV file, byte for byte
    assert parquet.to_csv(index=False) == files["data/measurements.csv"].read_text()
    speedup = pd.read_csv(files["data/speedups.csv"])
    assert {"speedup", "speedup_lo", "speedup_hi", "verdict"} <= set(speedup.columns) and len(speedup) == 2
    assert list(speedup["level"]) == ["machine", "run"]
    # written block by block (a row at a time here), the files hold the same rows, in the same order
    monkeypatch.setattr(opendata, "BLOCK_ROWS", 1)
    blocks = opendata.write_data_files(site_of(result), tmp_path / "blocks")
    for name in ("data/measurements.csv", "data/speedups.csv"):
        assert blocks[name].read_text() == files[name].read_text()
    pd.testing.assert_frame_equal(pd.read_parquet(blocks["data/measurements.parquet"]), parquet)
    # the blocks' Arrow files, kept only until the Parquet file is written, are gone
    assert sorted(p.name for p in (tmp_path / "blocks").iterdir()) == sorted(p.name for p in blocks.values())


def test_no_html_or_markdown_is_assembled_in_python():
    """Pages come from templates: the site builder's Python builds data, not markup."""
    for path in SITE_BUILDER.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                for tag in ("<table", "<td", "<tr", "<a href", "<div", "<p>", "<strong>"):
                    assert tag not in node.value, (path.name, node.value[:80])


def test_each_measurement_shows_its_share_of_the_devices_peak():
    """From the run's own measured matrix-product peak where there is one, else the spec-sheet ceiling."""
    from runner.results.schema import DevicePeak

    rng = np.random.default_rng(4)
    row = measurement("cpu", lognormal(rng, 0.5, 9), achieved_tflops=None)
    row = row.model_copy(update={"achieved_tflops": row.flops_per_unit / row.median_s / 1e12})
    peak = DevicePeak(
        framework="torch", device="cpu", device_name="cpu", dtype="fp32", n=1024, median_s=1.0, tflops=0.5
    )
    result = make_result([row]).model_copy(update={"device_peaks": [peak]})
    measured = site_of(result).machine_rows(result.machine.id).iloc[0]
    assert measured["peak_source"] == "measured"
    assert measured["peak_share"] == pytest.approx(row.achieved_tflops / 0.5)
    assert measured["peak_share_lo"] < measured["peak_share"] < measured["peak_share_hi"]
    spec = site_of(make_result([row])).machine_rows(result.machine.id).iloc[0]
    assert spec["peak_source"] == "spec sheet" and 0 < spec["peak_share"] < 1


def test_one_sample_on_each_side_gives_no_interval_and_no_verdict():
    written = {"variant": "as-written"}
    single = make_result([measurement("cpu", [4.0], **written), measurement("cuda", [1.0], **written)])
    (row,) = site_of(single).speedups.to_dict("records")
    assert row["speedup"] == pytest.approx(4.0) and np.isnan(row["speedup_lo"]) and row["verdict"] == TOO_FEW
    (machine,) = seeds.speedup_reproductions(site_of(single), _seed_claim())
    assert machine["verdict"] == seeds.UNDECIDED


def test_compare_offers_only_machines_that_share_a_measurement():
    """A machine whose measurements no other machine ran (one that ran only the data-parallel workload, say)
    would open the compare page on an empty table: it is not offered."""
    shared = [make_measurement(workload="depth-sweep", point={"depth": 2})]
    alone = [make_measurement(workload="depth-sweep", point={"depth": 3})]
    site = site_of(make_result(shared, "a"), make_result(shared, "b"), make_result(alone, "c"))
    data = advisor.compare_data(site)
    rows, machines = data.rows, data.machines
    ids = {s.machine.cpu.model: m for m, s in site.machines.items()}
    assert set(machines["machine_id"]) == set(rows["m"]) == {ids["AMD EPYC a"], ids["AMD EPYC b"]}


def test_speedups_compare_one_device_with_one_device_only():
    """A data-parallel point (NCCL over GPUs against gloo over CPU processes) is not the CPU-or-GPU question: it is
    on the Scale page, never in a speedup, a median on the home page or a verdict."""
    rng = np.random.default_rng(11)
    point = {"workload": "transformer-ddp", "point": {"model": "bert-base", "batch_size": 64, "world_size": 2}}
    single = {"variant": "as-written"}
    result = make_result(
        [
            measurement("cpu", lognormal(rng, 10.0, 20), variant="tuned", **point),
            measurement("cuda", lognormal(rng, 0.1, 20), variant="tuned", **point),
            measurement("cpu", lognormal(rng, 3.0, 20), **single),
            measurement("cuda", lognormal(rng, 1.0, 20), **single),
        ]
    )
    site = site_of(result)
    assert set(site.frame["workload"]) == {"transformer-ddp", "depth-sweep"}
    assert list(site.speedups["workload"]) == ["depth-sweep"]


def test_each_machine_page_says_where_the_machine_stands():
    rng = np.random.default_rng(12)
    written = {"variant": "as-written"}
    quick = make_result([measurement("cpu", lognormal(rng, 1.0, 20), **written)], label="quick")
    slow = make_result([measurement("cpu", lognormal(rng, 3.0, 20), **written)], label="slow")
    site = site_of(quick, slow)
    (place,) = site.standing(slow.machine.id)
    assert (place.rank, place.of, place.device_class) == (2, 2, "CPU")
    assert place.versus[0].machine_id == quick.machine.id and 2.7 < place.versus[0].ratio < 3.3
    (first,) = site.standing(quick.machine.id)
    assert first.rank == 1 and first.fastest is None


def test_a_machines_rows_are_the_same_whichever_window_they_are_made_in(monkeypatch):
    """Machine pages' rows are made for a window of machines at a time (Site.machine_rows): each machine's rows,
    asked in page order or against it, in windows of one, two or all machines, are the same frame (values, types,
    index), a machine without a GPU or without any compared row included."""
    from site_builder import site as site_module

    rng = np.random.default_rng(5)
    written = {"variant": "as-written"}
    results = []
    for i in range(5):
        rows = [measurement("cpu", lognormal(rng, 0.5 + i, 5), **written)]
        if i != 3:  # machine 3 has no GPU: no speedup to merge
            rows.append(measurement("cuda", lognormal(rng, 0.1, 5), **written))
        results.append(make_result(rows, label=str(i)))
    results.append(make_result([measurement("cpu", lognormal(rng, 1.0, 5), **written)], label="old", suite=2))
    ids = sorted({r.machine.id for r in results})

    def rows_by_machine(window: int, order: list[str]) -> dict[str, pd.DataFrame]:
        monkeypatch.setattr(site_module, "ROWS_WINDOW", window)
        site = site_of(*results)
        return {m: site.machine_rows(m) for m in order}

    alone = rows_by_machine(1, ids)
    assert sum(len(rows) for rows in alone.values()) == len(site_of(*results).frame) == 9
    assert alone[results[-1].machine.id].empty  # only an older suite's file: nothing compared
    assert alone[results[3].machine.id]["speedup"].isna().all()
    assert alone[results[0].machine.id]["speedup"].notna().sum() == 1
    for window, order in ((2, ids), (2, ids[::-1]), (64, ids), (64, ids[::-1])):
        together = rows_by_machine(window, order)
        for m in ids:
            pd.testing.assert_frame_equal(together[m], alone[m])


def test_a_seeds_status_counts_only_the_verdicts_that_decide():
    """An undecided machine (its interval decides nothing) neither agrees nor disagrees with the others."""

    def status(*verdicts: str) -> str:
        return seeds.overall([{"machines": [{"verdict": v} for v in verdicts]}])

    assert status(seeds.REPRODUCED, seeds.UNDECIDED) == seeds.REPRODUCED
    assert status(seeds.DIFFERS, seeds.UNDECIDED) == seeds.DIFFERS
    assert status(seeds.UNDECIDED, seeds.UNDECIDED) == seeds.UNDECIDED
    assert status(seeds.REPRODUCED, seeds.DIFFERS, seeds.UNDECIDED) == seeds.MIXED
    assert status() == seeds.NOT_YET
    # a claim no machine measured: the seed is only partly checked, whatever the measured claims say
    measured, unmeasured = {"machines": [{"verdict": seeds.REPRODUCED}]}, {"machines": []}
    assert seeds.overall([measured, unmeasured]) == f"{seeds.PARTLY}: {seeds.REPRODUCED} so far"


def test_the_home_page_lists_a_bounded_number_of_kinds_of_machine_and_counts_the_rest(monkeypatch):
    """At most GLANCE_LINES lines a workload and loop; the rest are counted and linked, so the home page stays short
    however many CPUs contribute."""
    from site_builder import pages

    def machine(label: str) -> object:
        return make_result([measurement("cpu", [2.0, 2.1, 2.2]), measurement("cuda", [1.0, 1.05, 1.1])], label=label)

    site = site_of(machine("a"), machine("b"))  # two kinds of machine: two CPU models
    monkeypatch.setattr(pages, "GLANCE_LINES", 1)
    home = pages.RAW.restore(pages.home(site))  # the page with its raw HTML blocks put back
    assert home.count('<tr class="benchsite-glance-') == 1 and "1 more line (kinds of machine" in home
    monkeypatch.setattr(pages, "GLANCE_LINES", 24)
    assert pages.RAW.restore(pages.home(site)).count('<tr class="benchsite-glance-') == 2
