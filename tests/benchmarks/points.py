"""benchsite's own measurement of single workload points, for the benchmarks that set it beside something else.

One plan per benchmark (the machine is probed once), then each call runs one point's group exactly as
`benchsite run` does: runner.api.measure_group, its child process, timing engine, synchronisation, monitor and
progress events. Re-planning every round would re-probe the machine each time (seconds of child processes).
"""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

from runner import api, fidelity
from runner.results.schema import Measurement


class PointRunner:
    def __init__(self, profile: str, frameworks: list[str], devices: list[str] | None, seconds: float):
        options = api.RunOptions(
            profile=profile,
            frameworks=frameworks,
            devices=devices,
            variants=["as-written"],
            equivalence=False,
            profile_ops=False,
            peaks=False,
            fidelity=False,  # the benchmark sets the seed's script beside the point itself: no in-run twin rounds
            rounds=1,  # one measuring process per call, the whole budget: a benchmark's round is one run's round
            time_budget_s=seconds,
            output=Path(tempfile.gettempdir()),
        )
        self.plan = api.plan_run(options)

    def measure(self, workload: str, framework: str, device: str, index: int) -> Measurement:
        """The as-written measurement of one point; raises if it did not end with numbers."""
        group = next(
            g
            for g in self.plan.groups
            if (g.workload.id, g.framework, g.device) == (workload, framework, device) and not g.skip_reason
        )
        one = dataclasses.replace(group)
        one.only([index])
        (m,) = api.measure_group(self.plan, one, api.Progress())
        if m.status != "ok" or not m.samples_s:
            raise RuntimeError(f"{workload}[{index}] {framework}/{device} {m.status}: {m.error}")
        return m


def mean_per_unit(m: Measurement) -> float:
    """Seconds per unit over every timed unit: the statistic a seed's own timing of N units gives, to set beside it
    (runner.fidelity.mean_per_unit, which the run's twin uses); the site reports the median."""
    return fidelity.mean_per_unit(m.samples_s)
