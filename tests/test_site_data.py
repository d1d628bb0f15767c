"""Site data layer: loading untrusted files (bad ones left out and named), tidy frame, speedups, crossovers."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from runner import storage
from site_builder.aggregate import crossovers, measurements_frame, speedups
from site_builder.load import StrictBuildError, load_results
from tests.conftest import make_measurement, make_result

REPO_RESULTS = Path(__file__).parent.parent / "results"


def sweep(device: str, times: dict[int, float], workload_hash: str = "{:016x}") -> list:
    return [
        make_measurement(
            device=device,
            point={"depth": d},
            workload_hash=workload_hash.format(d),
            params=10**d,
            median_s=t,
            ci95_s=(t * 0.99, t * 1.01),
        )
        for d, t in times.items()
    ]


def test_bad_files_are_reported_and_left_out(tmp_path):
    tmp_path = tmp_path / "results"
    good = make_result()
    storage.save(good, tmp_path / good.machine.id / "good.yaml")
    (tmp_path / good.machine.id / "broken.yaml").write_text("schema_version: 1\nmachine: [")
    storage.save(good, tmp_path / "ffffffffffffffff" / "misplaced.yaml")
    loaded = load_results(tmp_path)
    assert [p.name for p, _ in loaded.results] == ["good.yaml"]
    assert [Path(p).name for p in loaded.rejected] == ["broken.yaml", "misplaced.yaml"]
    with pytest.raises(StrictBuildError, match=r"broken\.yaml"):
        load_results(tmp_path, strict=True)


def test_frame_keeps_the_newest_run_of_a_measurement():
    old = make_result([make_measurement(median_s=2.0, ci95_s=(1.9, 2.1))])
    new = make_result([make_measurement(median_s=1.0, ci95_s=(0.9, 1.1))])
    new = new.model_copy(
        update={
            "run": new.run.model_copy(update={"id": "1" * 32, "started_at": old.run.started_at + timedelta(days=1)})
        }
    )
    frame = measurements_frame([(Path("b"), new), (Path("a"), old)])
    assert len(frame) == 1 and frame["median_s"].iloc[0] == 1.0


def test_speedup_compares_only_the_same_machine_framework_and_hash():
    cpu = sweep("cpu", {2: 1.0, 3: 2.0})
    gpu = sweep("cuda", {2: 4.0, 3: 1.0})
    other_hash = [
        make_measurement(device="cuda", workload_hash="ffffffffffffffff", median_s=0.001, ci95_s=(0.001, 0.001))
    ]
    frame = measurements_frame([(Path("r"), make_result(cpu + gpu + other_hash))])
    table = speedups(frame).sort_values("depth")
    assert table["speedup"].tolist() == pytest.approx([0.25, 2.0])


def test_crossover_is_interpolated_in_log_space():
    cpu = sweep("cpu", {2: 1.0, 3: 1.0, 4: 1.0})
    gpu = sweep("cuda", {2: 2.0, 3: 2.0, 4: 0.5})  # ratio 0.5 at 1e3, 2.0 at 1e4: crosses at 10**3.5
    frame = measurements_frame([(Path("r"), make_result(cpu + gpu))])
    (row,) = crossovers(frame).to_dict("records")
    assert row["verdict"] == "crossover"
    assert row["break_even_params"] == pytest.approx(10**3.5)


def test_the_committed_h200_run_shows_the_seed_001_crossover():
    loaded = load_results(REPO_RESULTS, strict=True)
    frame = measurements_frame(loaded.results)
    table = crossovers(frame)
    h200 = table[(table["gpu_model"] == "NVIDIA H200") & (table["variant"] == "as-written")]
    if h200.empty:
        pytest.skip("no H200 result committed")
    at = h200["break_even_params"].iloc[0]
    assert 300_000 < at < 3_000_000  # the seed found ~700k parameters


def test_empty_results_give_an_empty_frame(tmp_path):
    assert measurements_frame(load_results(tmp_path).results).empty


def test_charts_are_valid_vega_lite_with_tooltips_and_legend_selection():
    from site_builder.charts import crossover_chart, speedup_chart

    cpu = sweep("cpu", {2: 1.0, 3: 1.0, 4: 1.0})
    gpu = sweep("cuda", {2: 2.0, 3: 2.0, 4: 0.5})
    frame = measurements_frame([(Path("r"), make_result(cpu + gpu))])
    for chart in (speedup_chart(speedups(frame)), crossover_chart(frame)):
        spec = chart.to_dict()  # validates against the Vega-Lite schema
        text = str(spec)
        assert "tooltip" in text and "legend" in text
