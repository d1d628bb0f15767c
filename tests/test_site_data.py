"""Site data layer: loading untrusted files (bad ones left out and named), tidy frame, speedups, crossovers."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from runner.fingerprint import machine_id as fingerprint_id
from runner.results import storage
from runner.results.labels import cpu_label
from runner.workloads import known
from site_builder import combine, machines
from site_builder.analyses.crossovers import batch_crossovers, crossover_summary, crossovers, sweep_by_device
from site_builder.analyses.scaling import scaling, scaling_spread
from site_builder.analyses.slices import in_slice, primary_slice, split
from site_builder.analyses.speedups import (
    framework_comparison,
    frameworks_by_device,
    glance,
    loop_by_accelerator,
    loop_effect,
    speedup_summary,
    speedups,
)
from site_builder.collect import Collector, measurements_frame
from site_builder.columns import CATEGORIES
from site_builder.load import StrictBuildError, load_results
from tests.conftest import make_measurement, make_result, retime, same_cpu_model, save_under

REPO_RESULTS = Path(__file__).parent.parent / "results"


def sweep(device: str, times: dict[int, float]) -> list:
    """The depth sweep's points on one device, the suite's own (hash, parameters, FLOPs)."""
    return [make_measurement(device=device, point={"depth": d}, median_s=t) for d, t in times.items()]


def test_bad_files_are_reported_and_left_out(tmp_path):
    tmp_path = tmp_path / "results"
    good = make_result()
    good_path = save_under(tmp_path, good)
    (tmp_path / good.machine.id / "broken.yaml").write_text("schema_version: 1\nmachine: [")
    storage.save(good, tmp_path / "ffffffffffffffff" / "misplaced.yaml")
    loaded = load_results(tmp_path)
    assert loaded.accepted == [good_path]
    assert [Path(p).name for p in loaded.rejected] == ["broken.yaml", "misplaced.yaml"]
    with pytest.raises(StrictBuildError, match=r"broken\.yaml"):
        load_results(tmp_path, strict=True)


def _runs(*medians: float) -> list:
    """One machine's runs of one measurement, a day apart, in the order given."""
    runs = []
    for day, median in enumerate(medians):
        result = make_result([make_measurement(median_s=median)])
        run = result.run.model_copy(
            update={"id": f"{day + 1:032x}", "started_at": result.run.started_at + timedelta(days=day)}
        )
        runs.append((Path(str(day)), result.model_copy(update={"run": run})))
    return runs


def test_every_run_of_a_machine_counts_not_only_the_newest():
    """A newest file (a replay, an edited copy) cannot set a machine's figure alone: the median over its runs."""
    frame = measurements_frame(list(reversed(_runs(2.0, 2.2, 1.0))))
    assert len(frame) == 1
    row = frame.iloc[0]
    assert (row["median_s"], row["runs"], row["runs_lo_s"], row["runs_hi_s"]) == (2.0, 3, 1.0, 2.2)
    assert row["ci_lo_s"] <= 1.0 * 0.99 and row["ci_hi_s"] >= 2.2 * 1.01  # every run's interval is inside
    assert len(row["samples"]) == 9  # every run's samples, for the bootstraps
    assert row["samples_per_s"] == pytest.approx(make_measurement().samples_per_unit / 2.0)  # at the combined median
    assert row["run_id"] == f"{3:032x}"  # the other columns are the newest run's
    single = measurements_frame(_runs(2.0)).iloc[0]
    assert (single["median_s"], single["runs"]) == (2.0, 1)


def test_combined_runs_keep_the_newest_timed_row_and_the_start_time_order():
    """Rows come out by start time; at one start time a measurement of one run comes before a combined one. A
    combined measurement whose newest run failed is the newest timed run's row, with both timed runs' median."""
    (p0, r0), (p1, r1), (p2, r2) = _runs(2.0, 4.0, 1.0)
    failed = make_measurement(status="failed", median_s=None, samples_s=[], error={"type": "Crash", "message": "x"})
    r2 = r2.model_copy(update={"measurements": [failed]})
    other = make_result([make_measurement(median_s=5.0)], label="other")
    other = other.model_copy(update={"run": other.run.model_copy(update={"started_at": r1.run.started_at})})
    frame = measurements_frame([(p0, r0), (p1, r1), (p2, r2), (Path("other"), other)])
    assert frame["median_s"].tolist() == [5.0, 3.0]  # the one-run row first at their shared start time
    combined = frame.iloc[1]
    assert (combined["runs"], combined["runs_lo_s"], combined["runs_hi_s"]) == (2, 2.0, 4.0)
    assert combined["run_id"] == f"{2:032x}" and combined["status"] == "ok"  # the newest timed run's row
    assert list(combined["samples"].sizes) == [3, 3]


def test_a_speedup_over_several_runs_sits_inside_its_own_interval():
    """Three CPU runs, one with many more samples than the others: the speedup is the ratio of the median of run
    medians, and its interval (runs, then samples, resampled) is around that figure, not the pooled samples'."""
    many = [1.0 * (1 + 0.001 * i) for i in range(60)]
    runs = []
    for day, samples in enumerate([many, [2.0, 2.02, 2.04], [2.1, 2.12, 2.14]]):
        cpu = make_measurement(median_s=float(np.median(samples)), samples_s=samples)
        gpu = make_measurement(device="cuda", device_name="NVIDIA H100", median_s=0.5, samples_s=[0.49, 0.5, 0.51])
        result = make_result([cpu, gpu])
        run = result.run.model_copy(
            update={"id": f"{day + 1:032x}", "started_at": result.run.started_at + timedelta(days=day)}
        )
        runs.append((Path(str(day)), result.model_copy(update={"run": run})))
    table = speedups(measurements_frame(runs))
    (row,) = table.to_dict("records")
    assert row["speedup"] == pytest.approx(2.02 / 0.5)
    assert row["speedup_lo"] <= row["speedup"] <= row["speedup_hi"]
    # the answer at a glance counts the machine once, with the same figure and interval
    (line,) = glance(table).to_dict("records")
    assert line["machines"] == 1 and line["points"] == 1
    assert (line["speedup"], line["speedup_lo"], line["speedup_hi"]) == (
        row["speedup"],
        row["speedup_lo"],
        row["speedup_hi"],
    )


def test_speedup_compares_only_the_same_machine_framework_and_hash():
    cpu = sweep("cpu", {2: 1.0, 3: 2.0})
    gpu = sweep("cuda", {2: 4.0, 3: 1.0})
    other_hash = [make_measurement(device="cuda", workload_hash="ffffffffffffffff", median_s=0.001)]
    frame = measurements_frame([(Path("r"), make_result(cpu + gpu + other_hash))])
    table = speedups(frame).sort_values("depth")
    assert table["speedup"].tolist() == pytest.approx([0.25, 2.0])


def test_a_cpu_is_named_by_its_model_and_cores_without_trademark_signs():
    cpu = make_result().machine.cpu
    xeon = cpu.model_copy(update={"model": "Intel(R) Xeon(R) Processor", "logical_cpus": 16, "physical_cores": 16})
    assert cpu_label(xeon) == "Intel Xeon Processor, 16 cores"
    smt = xeon.model_copy(update={"model": "AMD Ryzen 9 5900HX with Radeon Graphics", "physical_cores": 8})
    assert cpu_label(smt) == "AMD Ryzen 9 5900HX with Radeon Graphics, 8 cores (16 threads)"
    assert cpu_label(cpu.model_copy(update={"logical_cpus": 1})) == "AMD EPYC, 1 core"  # no core count: threads


def _machine_with(cores: int, measurements: list) -> tuple[Path, object]:
    """A run of the 2-core AMD EPYC of make_result, or of the same model with more cores (another machine)."""
    result = make_result(measurements)
    cpu = result.machine.cpu.model_copy(update={"logical_cpus": cores, "physical_cores": cores})
    machine = result.machine.model_copy(update={"cpu": cpu, "id": fingerprint_id(cpu, result.machine.accelerators)})
    return Path(f"{cores}"), result.model_copy(update={"machine": machine})


def test_the_answer_at_a_glance_never_pools_frameworks_or_cpus_and_says_where_a_sweep_flips():
    """Two frameworks on one machine and the same CPU model with 2 and with 16 cores: a line each, each line's
    figure its own; along the depth sweep, where each side clearly wins."""
    runs = []
    for cores, cpu_s in ((2, 1.0), (16, 0.25)):
        measurements = []
        for framework, gpu_s in (("torch", {2: 4.0, 3: 2.0, 4: 0.5}), ("jax", {2: 0.1, 3: 0.1, 4: 0.1})):
            for device, times in (("cpu", dict.fromkeys(gpu_s, cpu_s)), ("cuda", gpu_s)):
                side = {"device": device, "device_name": "AMD EPYC" if device == "cpu" else "NVIDIA H100"}
                measurements += [
                    make_measurement(**side, framework=framework, point={"depth": d}, median_s=s)
                    for d, s in times.items()
                ]
        runs.append(_machine_with(cores, measurements))
    lines = glance(speedups(measurements_frame(runs)))
    assert sorted(zip(lines["cpu_model"], lines["framework"], strict=True)) == [
        ("AMD EPYC, 16 cores", "jax"), ("AMD EPYC, 16 cores", "torch"),
        ("AMD EPYC, 2 cores", "jax"), ("AMD EPYC, 2 cores", "torch"),
    ]  # fmt: skip
    by = {(r["cpu_model"], r["framework"]): r for r in lines.to_dict("records")}
    torch2 = by[("AMD EPYC, 2 cores", "torch")]
    assert torch2["answer"] == "CPU faster at depths 2, 3; accelerator faster at depth 4"
    assert torch2["side"] == "mixed" and torch2["at"] == "depth 4"
    assert torch2["speedup"] == pytest.approx(2.0) and torch2["low"][0] == pytest.approx(0.25)
    assert by[("AMD EPYC, 2 cores", "jax")]["answer"] == "accelerator faster at every depth (2 to 4)"
    assert by[("AMD EPYC, 16 cores", "jax")]["speedup"] == pytest.approx(2.5)  # its own CPU's, not the median


def test_crossover_is_interpolated_in_log_space():
    cpu = sweep("cpu", {2: 1.0, 3: 1.0, 4: 1.0})
    gpu = sweep("cuda", {2: 2.0, 3: 2.0, 4: 0.5})  # speedup 0.5 at depth 3, 2.0 at depth 4: halfway in log
    frame = measurements_frame([(Path("r"), make_result(cpu + gpu))])
    (row,) = crossovers(speedups(frame)).to_dict("records")
    assert row["verdict"] == "crossover"
    p3, p4 = (m.params for m in cpu[1:])
    assert row["break_even_params"] == pytest.approx((p3 * p4) ** 0.5)


def test_the_committed_h200_run_shows_the_seed_001_crossover():
    frame = load_results(REPO_RESULTS, strict=True).collector.frame()
    table = crossovers(speedups(frame))
    h200 = table[(table["gpu_model"] == "NVIDIA H200") & (table["variant"] == "as-written")]
    if h200.empty:
        pytest.skip("no H200 result committed")
    at = h200["break_even_params"].iloc[0]
    assert 300_000 < at < 3_000_000  # the seed found ~700k parameters


def test_empty_results_give_an_empty_frame(tmp_path):
    assert load_results(tmp_path).collector.frame().empty
    assert load_results(tmp_path / "missing").collector.frame().empty


def test_charts_are_valid_vega_lite_with_tooltips_and_legend_selection():
    from site_builder import charts

    cpu = sweep("cpu", {2: 1.0, 3: 1.0, 4: 1.0})
    gpu = sweep("cuda", {2: 2.0, 3: 2.0, 4: 0.5})
    written = as_written(cpu + gpu)
    frame = measurements_frame([(Path("r"), make_result(cpu + gpu + written))])
    table = speedups(frame)
    summary = speedup_summary(table)
    effect = loop_effect(table)
    by_model = loop_by_accelerator(effect)
    built = [
        charts.speedup_overview(summary),
        charts.vendor_chart(summary),
        charts.crossover_chart(sweep_by_device(frame)),
        charts.loop_chart(by_model),
        charts.gain_chart(by_model),
    ]
    assert len(effect) == 3
    for chart in built:
        text = str(chart.to_dict())  # to_dict validates against the Vega-Lite schema
        assert "tooltip" in text and "legend" in text
    heatmap = charts.machine_heatmap(table, ["a23074609b32f305"]).to_dict()
    assert "tooltip" in str(heatmap)
    # a faceted chart's layers carry no data of their own: each panel draws only its rows (layers with data drew
    # every framework's rows in every panel of the crossover chart, one sawtooth line)
    for faceted in (heatmap, charts.crossover_chart(sweep_by_device(frame)).to_dict()):
        assert "data" in faceted and all("data" not in layer for layer in faceted["spec"]["layer"])


def test_charts_keep_points_in_numeric_order_and_format_their_legends():
    """Depth 2 before depth 10 on the frameworks and heatmap charts (a layered chart re-sorts labels it is not
    given in order), and a heatmap legend of short numbers, not '196.444794715'."""
    from site_builder import charts

    depths = {2: 1.0, 10: 1.0, 11: 1.0}
    cpu = sweep("cpu", depths) + [
        make_measurement(framework="jax", point={"depth": d}, median_s=2.0 * t) for d, t in depths.items()
    ]
    gpu = sweep("cuda", {2: 2.0, 10: 0.5, 11: 0.4})
    frame = measurements_frame([(Path("r"), make_result(cpu + gpu))])
    table = speedups(frame)
    heatmap = charts.machine_heatmap(table, list(table["machine_id"].unique())).to_dict()
    assert heatmap["spec"]["layer"][0]["encoding"]["x"]["sort"] == [
        "depth-sweep d=2",
        "depth-sweep d=10",
        "depth-sweep d=11",
    ]
    assert heatmap["spec"]["layer"][0]["encoding"]["color"]["legend"]["format"] == ".3~g"
    # the vendor chart: a colour per accelerator model, a row per model and framework (JAX's and PyTorch's apart)
    vendor = charts.vendor_chart(speedup_summary(table)).to_dict()
    encoding = vendor["layer"][1]["encoding"]
    assert (encoding["color"]["field"], encoding["yOffset"]["field"]) == ("accelerator", "series")
    assert {row["series"].split(", ")[-1] for row in vendor["datasets"][vendor["data"]["name"]]} == {"PyTorch"}
    spec = charts.framework_chart(frameworks_by_device(framework_comparison(frame))).to_dict()
    assert spec["layer"][0]["encoding"]["y"]["sort"] == ["depth-sweep d=2", "depth-sweep d=10", "depth-sweep d=11"]


def test_short_point_labels():
    from site_builder.charts import short_point

    assert short_point("depth-sweep", "depth=8") == "depth-sweep d=8"
    assert short_point("transformer", "model=bert-base, mode=train, batch_size=32") == "bert-base train bs32"
    assert short_point("cifar-lenet", "") == "cifar-lenet"


def as_written(rows: list) -> list:
    """The as-written loop of the same points: its own workload_hash, as the runner gives it."""
    return [m.model_copy(update={"variant": "as-written", "workload_hash": m.workload_hash[::-1]}) for m in rows]


def transformer(device: str, times: dict[int, float], variant: str = "tuned") -> list:
    return [
        make_measurement(
            workload="transformer",
            device=device,
            variant=variant,
            point={"model": "bert-base", "mode": "train", "batch_size": b},
            workload_hash=f"{b:016x}",
            params=1000,
            median_s=t,
            unit="step",
        )
        for b, t in times.items()
    ]


def test_batch_crossover_is_found_on_the_batch_axis():
    cpu = transformer("cpu", {8: 1.0, 32: 4.0})
    gpu = transformer("cuda", {8: 2.0, 32: 2.0})  # 0.5x at 8, 2x at 32: crosses at 16
    (row,) = batch_crossovers(speedups(measurements_frame([(Path("r"), make_result(cpu + gpu))]))).to_dict("records")
    assert row["verdict"] == "crossover" and row["break_even_batch"] == pytest.approx(16)


def test_loop_effect_finds_where_the_loop_flips_the_verdict():
    cpu = sweep("cpu", {2: 1.0}) + as_written(sweep("cpu", {2: 2.0}))
    gpu = sweep("cuda", {2: 0.5}) + as_written(sweep("cuda", {2: 4.0}))
    table = speedups(measurements_frame([(Path("r"), make_result(cpu + gpu))]))
    (row,) = loop_effect(table).to_dict("records")
    assert row["as_written"] == pytest.approx(0.5) and row["tuned"] == pytest.approx(2.0) and row["flips"]
    assert row["gpu_gain"] == pytest.approx(8.0) and row["cpu_gain"] == pytest.approx(2.0)


def test_frameworks_are_compared_on_equal_workload_hash_only():
    torch_rows = sweep("cpu", {2: 1.0, 3: 1.0})
    jax_rows = [retime(m, 0.5, framework="jax") for m in torch_rows]
    stray = make_measurement(framework="jax", workload_hash="ffffffffffffffff", median_s=9.0)
    table = framework_comparison(measurements_frame([(Path("r"), make_result(torch_rows + jax_rows + [stray]))]))
    assert sorted(table["ratio"]) == pytest.approx([0.5, 0.5])


def test_collector_keeps_the_newest_fingerprint_and_every_run():
    old = make_result([make_measurement()])
    new = make_result([make_measurement(median_s=1.0)])
    new = new.model_copy(
        update={
            "run": new.run.model_copy(update={"id": "1" * 32, "started_at": old.run.started_at + timedelta(days=1)}),
            "machine": new.machine.model_copy(update={"memory_gib": 64.0}),
        }
    )
    collector = Collector()
    collector.add(Path("new"), new)
    collector.add(Path("old"), old)
    (summary,) = collector.machines.values()
    assert summary.machine.memory_gib == 64.0 and len(summary.runs) == 2
    assert collector.frame()["median_s"].tolist() == [pytest.approx((1.0 + 0.011) / 2)]  # the median of both runs


def test_chart_data_is_bounded_by_device_models_not_machines():

    results = []
    for i in range(60):
        cpu = sweep("cpu", {2: 1.0, 3: 2.0})
        gpu = sweep("cuda", {2: 4.0, 3: 1.0})
        results.append((Path(str(i)), same_cpu_model(make_result(cpu + gpu), i + 1)))  # 60 machines, one CPU model
    frame = measurements_frame(results)
    assert frame["machine_id"].nunique() == 60
    sweep_rows = sweep_by_device(frame)
    assert len(sweep_rows) == 4 and set(sweep_rows["machines"]) == {60}  # 2 devices x 2 depths
    crossings = crossovers(speedups(frame))
    (summary,) = crossover_summary(crossings).to_dict("records")
    assert summary["machines"] == 60 and summary["crossing"] == 60


def test_parallel_loading_gives_what_one_process_gives(tmp_path):
    """Above PARALLEL_MIN_FILES the files are parsed in worker processes and merged in file order."""
    from site_builder.load import PARALLEL_MIN_FILES

    results = tmp_path / "results"
    for i in range(PARALLEL_MIN_FILES + 6):
        # several runs per machine, spread over the chunks
        base = make_result(sweep("cpu", {2: 1.0, 3: 2.0}) + sweep("cuda", {2: 4.0, 3: 1.0}), label=f"#{i % 20}")
        result = base.model_copy(
            update={
                "run": base.run.model_copy(
                    update={
                        "id": f"{i:032x}",
                        "started_at": base.run.started_at - timedelta(minutes=i + 1),
                        "finished_at": base.run.started_at - timedelta(minutes=i),
                    }
                ),
                "measurements": [retime(m, m.median_s * (1 + i)) for m in base.measurements],
            }
        )
        save_under(results, result)
    (results / "ffffffffffffffff").mkdir()
    (results / "ffffffffffffffff" / "broken.yaml").write_text("machine: [")
    one = load_results(results, workers=1)
    many = load_results(results, workers=2)
    assert many.accepted == one.accepted and many.rejected == one.rejected
    assert many.collector.frame().equals(one.collector.frame())
    assert many.collector.machines.keys() == one.collector.machines.keys()
    for machine_id, summary in one.collector.machines.items():
        other = many.collector.machines[machine_id]
        assert other.started_at == summary.started_at and sorted(other.runs) == sorted(summary.runs)
    assert len(one.collector.machines) == 20 and one.collector.files == PARALLEL_MIN_FILES + 6


def test_scale_page_efficiency_from_the_committed_ddp_run():
    """The Scale page's efficiency is t(1) / t(N) of the same machine, loop, model and run, inside its interval;
    every run is its own line and the spread between runs is tabled. The page compares what the site compares:
    a loop fixed within the suite (the eager tuned DDP step, compiled since) is apart, not divided by its
    successor."""
    collector = load_results(REPO_RESULTS, strict=True).collector
    suite, profile = primary_slice(collector.frame())
    ddp = in_slice(collector.runs_of("transformer-ddp"), suite, profile)
    table = scaling(ddp)
    if table.empty:
        pytest.skip("no transformer-ddp result committed")
    # the tuned step fixed within the suite (eager, compiled since) is drawn as its own loop, never divided by it
    earlier = set(ddp.loc[ddp["earlier_loop"], "workload_hash"])
    assert earlier <= set(known.superseded(suite))
    for _, row in table.iterrows():
        same = ddp[
            (ddp["machine_id"] == row["machine_id"])
            & (ddp["variant"] == row["variant"])
            & (ddp["earlier_loop"] == ("(earlier loop" in row["loop"]))
            & (ddp["device"] == row["device"])
            & (ddp["run_id"] == row["run_id"])
        ]
        one = same[same["world_size"] == 1]["median_s"].iloc[0]
        n = same[same["world_size"] == row["world_size"]]["median_s"].iloc[0]
        assert row["efficiency"] == pytest.approx(one / n, rel=1e-12)
        sides = [len(same[same["world_size"] == w]["samples"].iloc[0]) for w in (1, row["world_size"])]
        if sum(sides) > 2:  # a ratio of medians with some noise known
            assert row["efficiency_lo"] <= row["efficiency"] <= row["efficiency_hi"]
        else:  # one sample each side (a CPU step longer than the budget): no interval, shown as too few samples
            assert np.isnan(row["efficiency_lo"]) and np.isnan(row["efficiency_hi"])
        if not np.isnan(row["samples_per_s_lo"]):
            assert row["samples_per_s_lo"] <= row["samples_per_s"] <= row["samples_per_s_hi"]
    gpus = table[(table["world_size"] > 1) & (table["device"] != "cpu")]
    assert set(gpus.loc[gpus["world_size"] == 2, "interconnect"]) == {"GPU0-GPU1 NV18"}
    # at 4 GPUs every pair rank 0 talks to is named
    assert set(gpus.loc[gpus["world_size"] == 4, "interconnect"]) <= {"GPU0-GPU1 NV18, GPU0-GPU2 NV18, GPU0-GPU3 NV18"}
    # both loops drawn, each earlier tuned step named by how it ran (eager, then compiled, within suite 3)
    assert {"as-written", "tuned (earlier loop: eager)", "tuned (earlier loop: compiled)"} <= set(table["loop"])
    # the H200 machine's compiled 2-GPU runs stay apart, and their spread is tabled
    spread = scaling_spread(table)
    compiled = spread["loop"] == "tuned (earlier loop: compiled)"
    two = spread[compiled & (spread["world_size"] == 2) & spread["device_name"].str.contains("H200")]
    assert len(two) == 1 and two["runs"].iloc[0] >= 2
    assert two["efficiency_min"].iloc[0] < two["efficiency_max"].iloc[0]
    # one line per machine, device, loop, model and run: a machine's gloo CPU processes never join its NCCL GPUs'
    from site_builder import charts

    spec = charts.scaling_chart(table, "efficiency").to_dict()
    values = next(iter(spec["datasets"].values()))
    per_series: dict[str, set[tuple[str, str]]] = {}
    for v in values:
        per_series.setdefault(v["series"], set()).add((v["device_name"], v["run"]))
    assert per_series and all(len(d) == 1 for d in per_series.values())
    assert len(per_series) == table.groupby(["machine_id", "device", "loop", "model", "run_id"]).ngroups


def test_interconnect_field_is_read_and_older_files_keep_their_note():
    """Schema 4 records a data-parallel run's interconnect as a field; files before it had it only in a note."""
    point = {"model": "bert-tiny", "batch_size": 2, "world_size": 2}
    new = make_measurement(workload="transformer-ddp", point=point, variant="tuned", interconnect="GPU0-GPU1 NV12")
    old = make_measurement(
        workload="transformer-ddp",
        point=point,
        variant="as-written",
        notes=["world size 2: 2 processes (one per GPU) over nccl 2.27.5, DDP; interconnect GPU0-GPU1 NV18"],
    )
    frame = measurements_frame([(Path("a.yaml"), make_result([new, old]))])
    assert dict(zip(frame["variant"], frame["interconnect"], strict=True)) == {
        "tuned": "GPU0-GPU1 NV12",
        "as-written": "GPU0-GPU1 NV18",
    }


def test_runs_as_and_spark_master_are_read_from_their_fields_and_older_files_from_their_notes():
    """Schema 8 records how a tuned data-parallel step ran (`runs_as`) and a Spark measurement's kind of master
    (`spark_master`) as fields: the site reads them even where the notes say otherwise or nothing, and never parses a
    new file's notes; a file before schema 8 (before 4, for the interconnect) still gives what its notes say."""
    ddp = {"workload": "transformer-ddp", "point": {"model": "bert-tiny", "batch_size": 2, "world_size": 2}}
    one = {**ddp, "point": {**ddp["point"], "world_size": 1}}  # another measurement: never combined with the first
    spark = {"workload": "spark-inference", "point": {"model": "vit-tiny", "batch_size": 16, "partitions": 2}}
    eager = ["world size 2: 2 processes over gloo, DDP", "fp32, batch resident, fused AdamW; eager"]
    linked = ["world size 2: 2 processes (one per GPU) over nccl 2.27.5, DDP; interconnect GPU0-GPU1 NV18"]
    local = ["spark 4.0.1; master local[2]; executors 1; cores per executor 2; partitions 2"]

    def read(version: int, *measurements) -> list[tuple[str, str, str]]:
        result = make_result(list(measurements)).model_copy(update={"schema_version": version})
        frame = measurements_frame([(Path("a.yaml"), result)])
        return list(zip(*(frame[c].astype(str) for c in ("runs_as", "spark_master", "interconnect")), strict=True))

    fields = [
        make_measurement(**ddp, variant="tuned", runs_as="cuda-graph", notes=eager),  # the notes say otherwise
        make_measurement(**one, variant="tuned", runs_as="compiled"),  # no notes at all
        make_measurement(**spark, variant="as-written", spark_master="yarn", notes=local),
    ]
    assert read(8, *fields) == [("CUDA graph", "", ""), ("compiled", "", ""), ("", "yarn", "")]
    notes_only = [
        make_measurement(**ddp, variant="tuned", notes=eager),
        make_measurement(**spark, variant="as-written", notes=local),
        make_measurement(**ddp, variant="as-written", notes=linked),
    ]
    assert read(7, *notes_only) == [("eager", "", ""), ("", "local[2]", ""), ("", "", "")]
    assert read(3, *notes_only) == [("eager", "", ""), ("", "local[2]", ""), ("", "", "GPU0-GPU1 NV18")]
    assert read(8, *notes_only) == [("", "", "")] * 3  # a new file's notes are for people: its fields say it


def test_a_loop_fixed_within_the_suite_is_shown_apart_not_beside_the_fixed_one():
    """Suite 3's as-written transformer step zeroed its gradients in place until it was fixed to PyTorch's
    default: files that timed the earlier loop stay valid, but the site does not compare them with the fixed
    loop's, and says why."""
    from runner import SUITE_VERSION
    from runner.workloads import known

    point = {"model": "bert-base", "mode": "train", "batch_size": 8}
    earlier = [
        digest
        for digest in known.superseded(SUITE_VERSION)
        if (
            known.table(SUITE_VERSION)[digest].workload,
            known.table(SUITE_VERSION)[digest].variant,
            known.table(SUITE_VERSION)[digest].point,
        )
        == ("transformer", "as-written", point)
    ]
    assert len(earlier) == 1, earlier
    fixed = make_measurement(workload="transformer", point=point, variant="as-written", median_s=1.0)
    assert fixed.workload_hash not in known.superseded(SUITE_VERSION)
    before = fixed.model_copy(update={"workload_hash": earlier[0]})
    gpu = [m.model_copy(update={"device": "cuda", "device_name": "H100"}) for m in (fixed, before)]
    frame = measurements_frame([(Path("a.yaml"), make_result([fixed, before, *gpu]))])
    compared, apart = split(frame)
    assert set(compared["workload_hash"]) == {fixed.workload_hash}
    assert set(apart["workload_hash"]) == {earlier[0]} and apart["earlier_loop"].all()
    assert not compared["earlier_loop"].any()
    assert len(speedups(compared)) == 1  # the fixed loop's CPU and GPU, not a mix of the two loops


def test_top_operators_keep_the_newest_run_per_measurement_through_merge_and_cache():
    """A machine summary keeps each measurement's top operators as JSON text (site_builder.machines.pack_top_ops):
    the newest run's, slowest first, whichever order the files are merged in, and the same after the build cache's
    round trip."""
    import sys

    from runner.results.schema import TopOp

    def op(name: str, self_s: float) -> TopOp:
        return TopOp(name=name, self_s=self_s, total_s=2 * self_s, calls=3)

    old = make_result([make_measurement(top_ops=[op("aten::old", 5e-3)])])
    new = make_result([make_measurement(top_ops=[op("aten::add", 1e-3), op("aten::mm", 2e-3)])])
    new = new.model_copy(
        update={
            "run": new.run.model_copy(update={"id": "1" * 32, "started_at": old.run.started_at + timedelta(days=1)})
        }
    )
    parts = []
    for path, result in (("new", new), ("old", old)):  # merged newest first: the older file must not win
        part = Collector()
        part.add(Path(path), result)
        parts.append(part)
    merged = Collector()
    for part in parts:
        merged.merge(part)
    (summary,) = merged.machines.values()
    (row,) = machines.top_ops_rows(summary)
    assert [name for name, _, _ in row["ops"]] == ["aten::mm", "aten::add"]
    assert row["ops"][0] == ["aten::mm", 2e-3, 3] and row["device"] == "cpu"
    ((key, (_, text)),) = summary.top_ops.items()
    assert isinstance(text, str) and all(part is sys.intern(part) for part in key)
    back = machines.unpack_summary(machines.pack_summary(summary))
    assert back == summary and machines.top_ops_rows(back) == [row] and list(back.top_ops) == [key]


def test_the_frame_is_every_runs_rows_combined_whichever_way_they_are_converted():
    """Collector.frame finds which rows combine from a few columns (combine.PLAN_COLUMNS) and converts only the
    rows kept, taken in Arrow; that is what combine_runs gives from every run's rows converted whole: the same values,
    types, categories, index and samples (each run's sizes too). Over the committed results, and over one machine's
    runs whose only gaps (a missing `stable` flag and parameter count) lie in the older run, combined away: the rows
    kept have none, and the columns keep the types the gaps give them."""
    older, newer = make_measurement(stable=None, params=None), make_measurement(stable=True, params=1234)
    gaps = Collector()
    committed = load_results(REPO_RESULTS).collector
    for day, m in enumerate((older, newer, retime(newer, 0.02))):
        result = make_result([m], label="gaps")
        run = result.run.model_copy(update={"id": f"{day + 7:032x}", "started_at": result.run.started_at})
        for collector in (gaps, committed):  # one start time: they stay in the order added
            collector.add(Path(f"gaps-{day}"), result.model_copy(update={"run": run}))
    for collector in (gaps, committed):
        made = collector.frame()
        whole = combine.combine_runs(collector._raw(None, categories=True))
        for name in CATEGORIES:
            whole[name] = whole[name].cat.remove_unused_categories()
        whole = whole.reset_index(drop=True)
        assert len(made) < len(collector._raw(None))  # runs were combined
        pd.testing.assert_frame_equal(made.drop(columns="samples"), whole.drop(columns="samples"), check_exact=True)
        for a, b in zip(made["samples"], whole["samples"], strict=True):
            assert type(a) is type(b) and np.array_equal(a, b) and getattr(a, "sizes", ()) == getattr(b, "sizes", ())
    assert made["stable"].dtype == object and made["params"].dtype == "float64"
    kept = gaps.frame()
    assert len(kept) == 1 and kept["stable"].tolist() == [True] and kept["params"].tolist() == [1234.0]
    assert (kept["stable"].dtype, kept["params"].dtype) == (object, "float64")  # as the gap in the older run makes


def test_a_small_share_of_peak_keeps_its_digits():
    from site_builder.render import bounds, share

    assert share(0.00012) == "0.012%" and share(0.5) == "50.0%" and share(0.0) == "0.0%" and share(None) == "-"
    assert bounds(0.0001, 0.0003, "share") == "0.01% .. 0.03%"
