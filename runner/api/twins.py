"""The fidelity twin of a point a seed script covers (runner.fidelity): the seed's own script, run in a fresh
interpreter once a round beside the point's own rounds (runner.api.rounds), into the measurement's `fidelity` block.
The harness's side is the point's rounds themselves: the twin adds the script's processes only."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from runner import fidelity
from runner.api.plan import Group, Plan, Progress
from runner.api.pools import GroupSpares
from runner.measure import protocol
from runner.results import privacy
from runner.results.schema import Measurement


def harness_rounds(m: Measurement) -> list[float]:
    """The harness's side of the point's twin: its rounds (runner.fidelity.harness_rounds)."""
    return fidelity.harness_rounds(list(m.samples_s), [r.samples for r in m.rounds])


@dataclass
class TwinRounds:
    """A group's twin scripts over its rounds: per point, the script's seconds per unit so far and the units each
    run timed, or why the twin was given up."""

    plan: Plan
    group: Group
    script_s: dict[int, list[float]] = field(default_factory=dict)
    units: dict[int, int] = field(default_factory=dict)
    failed: dict[int, str] = field(default_factory=dict)

    def wanted(self, index: int, m: Measurement | None) -> bool:
        return (
            self.plan.options.twins
            and self.plan.rounds_of(self.group) >= fidelity.MIN_ROUNDS
            and m is not None
            and m.status == "ok"
            and bool(m.samples_s)
            and m.fidelity is None
            and not any(w.startswith("fidelity twin not recorded") for w in m.warnings)
            and index not in self.failed
            and self.group.twin(index) is not None
        )

    def run(
        self, index: int, m: Measurement | None, round_: int, pools: GroupSpares | None, progress: Progress
    ) -> None:
        """One script run for the point (its units fixed by its first round: about one round's budget of them, at
        most fidelity.SIDE_S)."""
        if not self.wanted(index, m):
            return
        assert m is not None
        twin = self.group.twin(index)
        assert twin is not None
        if index not in self.units:
            side_s = min(self.plan.budget_s / self.plan.rounds_of(self.group), fidelity.SIDE_S)
            self.units[index] = fidelity.units_for(harness_rounds(m)[0], side_s)
        progress.note(f"Fidelity twin {twin.script} for {_label(self.group, index)}: round {round_ + 1}")
        try:
            per_unit = _twin_script(twin, self.group.device, self.units[index], self.plan.timeout_s, pools, round_)
        except fidelity.ScriptFailed as exc:
            self.failed[index] = f"fidelity twin not recorded: {privacy.scrub(str(exc))}"[:4000]
            return
        self.script_s.setdefault(index, []).append(per_unit)

    def finish(self, index: int, m: Measurement, pools: GroupSpares | None, progress: Progress) -> Measurement:
        """The measurement with its `fidelity` block, once its rounds are done: scripts an interrupted run did not
        get to run now, one for each round without one; a twin that failed leaves a warning instead."""
        if not self.wanted(index, m) and index not in self.failed:
            return m
        harness = harness_rounds(m)
        if len(harness) < fidelity.MIN_ROUNDS:  # a later round failed: the point stands, its twin cannot
            self.failed.setdefault(
                index, f"fidelity twin not recorded: only {len(harness)} round(s) measured, a twin needs two"
            )
        while index not in self.failed and len(self.script_s.get(index, [])) < len(harness):
            self.run(index, m, len(self.script_s.get(index, [])), pools, progress)
        if index in self.failed:
            return m.model_copy(update={"warnings": [*m.warnings, self.failed[index]]})
        twin = self.group.twin(index)
        assert twin is not None
        script = self.script_s[index][: len(harness)]
        block = fidelity.block(twin, self.group.device, harness, script, [self.units[index]] * len(script))
        progress.note(
            f"Fidelity {twin.script} for {_label(self.group, index)}: benchsite / script {block['ratio']:.3f} "
            f"({block['ci95'][0]:.3f} .. {block['ci95'][1]:.3f}), {block['verdict']}"
        )
        return Measurement(**{**m.model_dump(), "fidelity": block})


def _label(group: Group, index: int) -> str:
    case = group.case(index)
    return " ".join([group.workload.id, *(f"{k}={v}" for k, v in case.point.items()), "on", group.device])


def _twin_script(
    twin: fidelity.Twin, device: str, units: int, timeout_s: float, pools: GroupSpares | None, round_: int = 0
) -> float:
    """One run of a twin's script, in a spare interpreter where the run started them ahead."""
    began = time.perf_counter()
    spare = pools.take_script() if pools is not None else None
    ran = time.perf_counter()
    per_unit = fidelity.run_script(twin, device, units, timeout_s, spare)
    _log_twin_side(twin, "script", round_, began, spare_s=ran - began, timed_s=per_unit * units)
    return per_unit


def _log_twin_side(twin: fidelity.Twin, side: str, round_: int, began: float, **more: float) -> None:
    """A twin round's side in the phase log (runner.measure.protocol.log_phases): its wall time, and for the script
    the wait for its spare interpreter and the seconds its own timer covered (the rest is its start, data, model
    and warm-up unit)."""
    protocol.log_phases(
        {
            "twin": twin.script,
            "args": list(twin.args),
            "side": side,
            "round": round_ + 1,
            "wall_s": time.perf_counter() - began,
            **more,
            "ended_at": time.time(),
        }
    )
