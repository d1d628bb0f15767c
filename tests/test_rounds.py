"""Rounds: a point measured in independent processes, its figure and interval over the rounds' medians, and a
speedup's interval from the rounds, paired where the CPU's and the accelerator's rounds alternated."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest
from scipy.stats import t as student_t

from runner.api.rounds import merged
from runner.gate import validate
from runner.results import intervals
from runner.results.schema import SCHEMA_VERSION, Measurement
from site_builder import uncertainty
from site_builder.collect import measurements_frame
from tests.conftest import ROOT, make_measurement, make_result, save_under

CPU_ROUNDS = [[0.101, 0.100, 0.104], [0.112, 0.110, 0.115], [0.097, 0.098, 0.099]]
GPU_ROUNDS = [[0.0101, 0.0100, 0.0102], [0.0108, 0.0111, 0.0109], [0.0099, 0.0098, 0.0100]]


def _rounded(device: str, rounds: list[list[float]], first_process: int = 0) -> Measurement:
    """A measurement of depth 4 built round by round as a run builds it (runner.api.rounds.merged), each round's
    process numbered as a run's alternating processes are (CPU 0, 2, 4; the accelerator 1, 3, 5)."""
    m = None
    for k, samples in enumerate(rounds):
        one = make_measurement(
            device=device,
            device_name="NVIDIA H200" if device == "cuda" else "AMD EPYC",
            samples_s=samples,
            wall_s=sum(samples) + 1.0,
        )
        m = merged(m, one, first_process + 2 * k, len(rounds))
    assert m is not None
    return m


def _file(tmp_path, measurements):
    result = make_result(measurements).model_copy(update={"schema_version": SCHEMA_VERSION})
    return save_under(tmp_path, result), result


def _frame(tmp_path, measurements):
    path, result = _file(tmp_path, measurements)
    frame = measurements_frame([(path, result)])
    return {d: frame.loc[frame["device"] == d].iloc[0] for d in frame["device"]}


def test_a_measurement_of_rounds_is_its_rounds_medians_and_the_gate_recomputes_them(tmp_path):
    cpu = _rounded("cpu", CPU_ROUNDS)
    medians = [statistics.median(r) for r in CPU_ROUNDS]
    assert [r.process for r in cpu.rounds] == [0, 2, 4] and [r.samples for r in cpu.rounds] == [3, 3, 3]
    assert cpu.median_s == pytest.approx(statistics.median(medians))
    assert cpu.ci95_s == pytest.approx(intervals.process_interval(medians))
    assert intervals.measurement_values(cpu, SCHEMA_VERSION) == pytest.approx(medians)
    path, _ = _file(tmp_path, [cpu])
    assert not validate.validate([path], strict=True).errors

    edited = cpu.model_copy(update={"rounds": [cpu.rounds[0].model_copy(update={"median_s": 0.05}), *cpu.rounds[1:]]})
    path, _ = _file(tmp_path / "edited", [edited])
    fields = [p.field for p in validate.validate([path], strict=True).errors]
    assert any(f.endswith("rounds[0].median_s") for f in fields), fields

    # what the measurement takes from its rounds: a file that calls it stable where its rounds were not is refused
    assert cpu.stable is False and not any(r.stable for r in cpu.rounds)
    path, _ = _file(tmp_path / "stable", [cpu.model_copy(update={"stable": True})])
    assert any(p.field.endswith(".stable") for p in validate.validate([path], strict=True).errors)
    path, _ = _file(tmp_path / "wall", [cpu.model_copy(update={"wall_s": cpu.wall_s / 2})])
    assert any(p.field.endswith(".wall_s") for p in validate.validate([path], strict=True).errors)

    shuffled = cpu.model_copy(update={"rounds": [cpu.rounds[1], cpu.rounds[0], cpu.rounds[2]]})
    path, _ = _file(tmp_path / "shuffled", [shuffled])
    problems = [p.message for p in validate.validate([path], strict=True).errors]
    assert any("not distinct and in order" in p for p in problems), problems


def test_a_speedup_of_alternated_rounds_is_student_t_on_the_paired_log_ratios(tmp_path):
    rows = _frame(tmp_path, [_rounded("cpu", CPU_ROUNDS), _rounded("cuda", GPU_ROUNDS, 1)])
    cpu, gpu = rows["cpu"]["samples"], rows["cuda"]["samples"]
    assert isinstance(cpu, uncertainty.Rounds) and cpu.pairing == gpu.pairing and len(cpu) == 3
    found = uncertainty.ratio_interval(cpu, gpu)

    c = np.log([statistics.median(r) for r in CPU_ROUNDS])
    g = np.log([statistics.median(r) for r in GPU_ROUNDS])
    centre = math.log(statistics.median(np.exp(c)) / statistics.median(np.exp(g)))
    assert intervals.t_quantile(2) == pytest.approx(student_t.ppf(0.975, 2), rel=1e-4)  # the table's 4.303
    half = intervals.t_quantile(2) * np.std(c - g, ddof=1) / math.sqrt(3)
    assert found.estimate == pytest.approx(math.exp(centre))
    assert (found.lo, found.hi) == pytest.approx((math.exp(centre - half), math.exp(centre + half)))
    # the host's drift (round 2 slower on both sides) cancels in the pairs: narrower than the two sides apart
    apart = uncertainty.ratio_interval(cpu, uncertainty.Rounds(np.asarray(gpu), "another run"))
    assert apart.lo is not None and apart.hi is not None
    assert found.hi / found.lo < apart.hi / apart.lo


def test_a_side_of_one_process_has_no_interval_and_neither_has_its_speedup(tmp_path):
    one = make_measurement(device="cuda", device_name="NVIDIA H200", samples_s=[0.0101, 0.0100, 0.0102, 0.0103] * 4)
    rows = _frame(tmp_path, [_rounded("cpu", CPU_ROUNDS), one])  # --rounds 1: no rounds, one process
    assert list(rows["cuda"]["samples"]) == [pytest.approx(statistics.median(one.samples_s))]
    assert math.isnan(rows["cuda"]["ci_lo_s"]) and math.isnan(rows["cuda"]["ci_hi_s"])
    found = uncertainty.ratio_interval(rows["cpu"]["samples"], rows["cuda"]["samples"])
    assert found.lo is None and found.hi is None
    assert uncertainty.verdict(found) == intervals.NO_CLEAR_WINNER


def test_rounds_that_show_no_spread_give_no_interval():
    same = uncertainty.Rounds([0.1, 0.1, 0.1], "run/torch/tuned")
    other = uncertainty.Rounds([0.01, 0.01, 0.01], "run/torch/tuned")
    found = uncertainty.ratio_interval(same, other)
    assert found.estimate == pytest.approx(10.0) and found.lo is None and found.hi is None


def test_three_runs_of_a_machine_are_the_median_of_their_runs_with_the_interval_across_them(tmp_path):
    from datetime import timedelta

    files = []
    for k, scale in enumerate([1.0, 1.3, 0.9]):
        cpu = _rounded("cpu", [[x * scale for x in r] for r in CPU_ROUNDS])
        result = make_result([cpu]).model_copy(update={"schema_version": SCHEMA_VERSION})
        run = result.run.model_copy(
            update={"id": f"{k:032x}", "started_at": result.run.started_at + timedelta(hours=k)}
        )
        result = result.model_copy(update={"run": run})
        files.append((save_under(tmp_path, result), result))
    figures = [statistics.median(statistics.median(r) for r in CPU_ROUNDS) * s for s in (1.0, 1.3, 0.9)]
    for count in (2, 3):
        [row] = measurements_frame(files[:count]).itertuples()
        assert row.runs == count and row.median_s == pytest.approx(statistics.median(figures[:count]))
        if count == 3:  # across the runs: the interval of their figures, not the span of their own intervals
            assert (row.ci_lo_s, row.ci_hi_s) == pytest.approx(intervals.process_interval(figures))
        else:
            medians = [statistics.median(r) for r in CPU_ROUNDS]
            spans = [intervals.process_interval([x * s for x in medians]) for s in (1.0, 1.3)]
            assert (
                row.ci_lo_s <= min(lo for lo, _ in spans) + 1e-12 and row.ci_hi_s >= max(hi for _, hi in spans) - 1e-12
            )


def test_the_committed_runs_on_an_accelerator_alternated_their_cpu_and_accelerator_rounds():
    """Every committed file of schema 9 or later from a machine with an accelerator passes the gate's alternation
    check (the CPU's round r before the accelerator's round r, before the CPU's round r + 1), and has points to
    check: the rule holds of real runs, not only of the files the tests build."""
    from runner.results.storage import iter_all

    checked = 0
    for path, result, _ in iter_all([ROOT / "results"]):
        if result is None or result.schema_version < 9 or not result.machine.accelerators:
            continue
        assert validate._alternation_problems(str(path), result) == [], path.name
        checked += sum(m.device != "cpu" and len(m.rounds) >= 2 for m in result.measurements)
    assert checked >= 20


def test_the_interval_of_three_rounds_holds_the_median_about_95_percent_of_the_time():
    """Simulated processes (log-normal, 10% spread): the interval of three rounds' medians holds the true median
    about 95% of the time. The rule schema 9 wrote (a t-interval clipped to the fastest round) held it 85%."""
    rng = np.random.default_rng(7)
    draws = np.exp(rng.normal(0.0, 0.1, size=(4000, 3)))
    new = [intervals.process_interval(list(row)) for row in draws]
    old = [intervals.median_ci(sorted(row)) for row in draws]
    held = np.mean([lo <= 1.0 <= hi for lo, hi in new])
    held_before = np.mean([lo <= 1.0 <= hi for lo, hi in old])
    assert 0.92 <= held <= 0.98, held
    assert held_before < 0.88, held_before


def test_the_gate_recomputes_each_schema_by_its_own_rule_and_refuses_rounds_that_did_not_alternate(tmp_path):
    cpu, gpu = _rounded("cpu", CPU_ROUNDS), _rounded("cuda", GPU_ROUNDS, 1)
    path, _ = _file(tmp_path / "ten", [cpu, gpu])
    assert not validate.validate([path], strict=True).errors
    # the same measurements in a schema-9 file: its interval was the clipped t-interval, so the new one is refused
    nine = make_result([cpu]).model_copy(update={"schema_version": 9})
    path = save_under(tmp_path / "nine", nine)
    assert any(p.field.endswith("ci95_s[0]") for p in validate.validate([path], strict=True).errors)
    legacy = intervals.summarize_rounds(list(cpu.samples_s), [r.samples for r in cpu.rounds], 9)
    fixed = cpu.model_copy(update={"ci95_s": legacy.ci95_s, "rel_ci_halfwidth": legacy.rel_ci_halfwidth})
    path = save_under(tmp_path / "nine-own-rule", make_result([fixed]).model_copy(update={"schema_version": 9}))
    assert not validate.validate([path], strict=True).errors
    # the accelerator's rounds all after the CPU's: the file claims a pairing it did not time
    late = _rounded("cuda", GPU_ROUNDS, 10)
    path, _ = _file(tmp_path / "apart", [cpu, late])
    problems = [p.message for p in validate.validate([path], strict=True).errors]
    assert any("did not alternate" in p for p in problems), problems


def test_a_twinned_point_whose_second_round_fails_keeps_its_first_round_and_the_run_goes_on(tmp_path, monkeypatch):
    """The measuring process of depth 2's second round reports a crash (its result replaced on the way back): the
    point keeps round 1 with a warning, is not measured in round 3, and its twin is given up rather than stopping the
    run (a twin needs two rounds a side)."""
    from runner import api
    from runner.measure import executor
    from tests.conftest import cpu_torch_plan

    real, calls = executor.run_cases, []

    def run_cases(job, batch, timeout_s, on_event, take=None):
        calls.append(list(batch))

        def crash_in_round_2(event):
            second = sum(depth2_index in b for b in calls) == 2
            if event.get("event") == "result" and event["index"] == depth2_index and second:
                event = {
                    "event": "result",
                    "index": event["index"],
                    "status": "failed",
                    "error": {"type": "Crash", "message": "killed by signal 9", "traceback": ""},
                }
            on_event(event)

        return real(job, batch, timeout_s, crash_in_round_2, take)

    monkeypatch.setattr(executor, "run_cases", run_cases)
    plan = cpu_torch_plan(tmp_path, ["depth-sweep"], ["as-written"], 0.05, fidelity=True, rounds=3)
    (group,) = plan.groups
    depth2_index = next(i for i in group.indices if group.case(i).point["depth"] == 2)
    measured = api.measure_group(plan, group, api.Progress())
    depth2 = next(m for m in measured if m.point["depth"] == 2)
    assert depth2.status == "ok" and len(depth2.rounds) == 1 and depth2.fidelity is None
    assert any(w.startswith("round 2: failed (Crash)") for w in depth2.warnings), depth2.warnings
    assert any(w.startswith("fidelity twin not recorded: only 1 round") for w in depth2.warnings), depth2.warnings
    assert sum(depth2_index in batch for batch in calls) == 2  # rounds 1 and 2, never round 3
