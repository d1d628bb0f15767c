"""The streaming figures (runner.results.streaming) and the gate's checks of a spark-streaming measurement: percentiles,
their distribution-free intervals, the latency's growth, when a rate counts as sustained, and that every
figure a contributor could edit is recomputed from the raw record."""

from __future__ import annotations

import random

import numpy as np
import pytest
from conftest import make_measurement, make_result

from runner.gate.validate import check_result
from runner.results import streaming
from runner.results.schema import StreamRecord
from runner.workloads import get


def test_quantile_matches_numpy_linear():
    rng = random.Random(3)
    values = [rng.lognormvariate(0, 1) for _ in range(137)]
    for q in (0.0, 0.5, 0.95, 0.99, 1.0):
        assert streaming.quantile(values, q) == pytest.approx(float(np.quantile(values, q)), rel=1e-12)


def test_quantile_interval_covers_and_opens_where_too_few_values():
    values = list(range(1, 61))  # 60 latencies
    lo, hi = streaming.quantile_ci(values, 0.5)
    assert lo is not None and hi is not None and lo < 30.5 < hi
    lo, hi = streaming.quantile_ci(values, 0.99)
    assert hi is None  # P(all 60 below the p99) = 0.99**60 = 0.55: no value bounds it from above at 95%
    assert lo is not None and lo >= 55
    # enough values: both sides bounded, and the true p99 of a uniform sample lies inside in nearly every draw
    rng = np.random.default_rng(0)
    inside = 0
    for _ in range(200):
        lo, hi = streaming.quantile_ci(rng.uniform(size=800).tolist(), 0.99)
        assert lo is not None and hi is not None
        inside += lo <= 0.99 <= hi
    assert inside >= 180


def test_growth_is_the_slope_of_latency_over_the_stream():
    produced = [i * 0.2 for i in range(50)]
    assert streaming.growth(produced, [1.0 + 0.5 * t for t in produced]) == pytest.approx(0.5)
    # a saw-tooth around a flat line (micro-batches) does not grow
    flat = [0.8 + 0.4 * ((i % 5) / 5) for i in range(50)]
    assert abs(streaming.growth(produced, flat)) < 0.02


def test_a_step_is_sustained_only_when_latency_stays_flat_the_producer_keeps_time_and_all_is_committed():
    produced = [i * 0.2 for i in range(50)]
    flat = [0.5 + 0.01 * (i % 3) for i in range(50)]
    assert streaming.figures(produced, flat, 0.2, 4).bounded
    rising = [0.5 + 0.3 * t for t in produced]  # 30% over capacity
    assert not streaming.figures(produced, rising, 0.2, 4).bounded
    late = [*produced[:-1], produced[-1] + 0.5]  # the producer fell more than one interval behind
    assert not streaming.figures(late, flat, 0.2, 4).bounded
    assert not streaming.figures(produced, flat, 0.2, 4, uncommitted=1).bounded
    found = streaming.figures(produced, flat, 0.2, 4)
    assert found.achieved_rows_per_s == pytest.approx(4 * 50 / (produced[-1] + flat[-1]))


def stream_measurement(rate: int = 40, latencies: list[float] | None = None, **record_overrides):
    """A spark-streaming measurement of the tiny profile's point at `rate`, its figures computed as the
    measuring child computes them."""
    case = next(c for c in get("spark-streaming").cases("tiny") if c.point["rate"] == rate)
    interval = case.config["interval_s"]
    files = 15
    produced = [round(i * interval + 0.001 * (i % 2), 6) for i in range(files)]
    latencies = latencies or [0.6 + 0.05 * (i % 4) for i in range(files)]
    found = streaming.figures(produced, latencies, interval, case.samples_per_unit)
    record = {
        "offered_rows_per_s": float(rate),
        "interval_s": interval,
        "files": files,
        "produced_s": produced,
        "micro_batches": 7,
        "p95_s": found.p95_s,
        "p99_s": found.p99_s,
        "growth": found.growth,
        "producer_lag_s": found.producer_lag_s,
        "bounded": found.bounded,
        **record_overrides,
    }
    m = make_measurement(
        workload="spark-streaming",
        point={"model": "vit-tiny", "rate": rate},
        variant="as-written",
        samples_s=latencies,
        stream=StreamRecord(**record),
        wall_s=20.0,
    )
    return m.model_copy(update={"samples_per_s": found.achieved_rows_per_s, "achieved_tflops": None})


def errors(m) -> list[str]:
    return [f"{p.field}: {p.message}" for p in check_result("f.yaml", make_result([m])) if p.severity == "error"]


def test_an_honest_streaming_measurement_passes_the_gate():
    assert errors(stream_measurement()) == []


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        ({"p99_s": 0.1}, "stream.p99_s"),
        ({"p95_s": 0.2}, "stream.p95_s"),
        ({"growth": 0.0}, "stream.growth"),
        ({"producer_lag_s": 0.0}, "stream.producer_lag_s"),
        ({"offered_rows_per_s": 80.0}, "stream.offered_rows_per_s"),
        ({"interval_s": 0.1}, "stream.interval_s"),
        ({"files": 14}, "stream.files"),
    ],
)
def test_an_edited_stream_figure_is_refused(edit, field):
    problems = errors(stream_measurement(**edit))
    assert any(p.startswith(f"measurements[0].{field}") for p in problems), problems


def test_a_rising_latency_called_sustained_is_refused():
    rising = [0.5 + 0.4 * i * 0.2 for i in range(15)]
    honest = stream_measurement(latencies=rising)
    assert not honest.stream.bounded and errors(honest) == []
    forged = honest.model_copy(update={"stream": honest.stream.model_copy(update={"bounded": True})})
    assert any("stream.bounded" in p and "contradicts" in p for p in errors(forged))


def test_a_forged_throughput_is_refused():
    m = stream_measurement()
    forged = m.model_copy(update={"samples_per_s": m.samples_per_s * 3})
    assert any(p.startswith("measurements[0].samples_per_s") for p in errors(forged))


def test_a_latency_measurement_needs_its_record():
    m = stream_measurement().model_copy(update={"stream": None})
    assert any("without its stream record" in p for p in errors(m))
