"""The fidelity twin of a point a seed script covers (runner.fidelity): rounds that alternate the harness's
measurement and the seed's own script, each in a fresh interpreter, into the measurement's `fidelity` block."""

from __future__ import annotations

import functools
import time
from typing import Any

from runner import fidelity
from runner.api.plan import Group, Plan, Progress
from runner.api.pools import GroupSpares
from runner.measure import executor, protocol
from runner.results import privacy
from runner.results.schema import Measurement


def untwinned(plan: Plan, group: Group, done: dict[int, Measurement]) -> list[int]:
    """Points an interrupted run measured whose twin is due but was not recorded (nor given up on)."""
    if not plan.options.twins:
        return []
    return [
        index
        for index, m in done.items()
        if m.status == "ok"
        and m.fidelity is None
        and not any(w.startswith("fidelity twin not recorded") for w in m.warnings)
        and index in group.indices
        and fidelity.twin_for(
            group.workload.id,
            group.variant,
            m.point,
            group.case(index).config,
            group.framework,
            group.device,
        )
        is not None
    ]


def with_twin(
    plan: Plan,
    group: Group,
    job: dict[str, Any],
    index: int,
    m: Measurement | None,
    progress: Progress,
    pools: GroupSpares | None = None,
) -> Measurement | None:
    """The measurement with its `fidelity` block (runner.fidelity), where the run asks for twins and a seed script
    covers the point; None otherwise. Rounds alternate: the harness (round 1 is `m` itself, later rounds measure the
    point again in a fresh measuring process with a budget of fidelity.SIDE_S) and the script in a fresh
    interpreter, timing about SIDE_S of units (at least one). A point with long units takes fewer rounds
    (fidelity.rounds_for). A script or re-measurement that fails ends the twin with a warning on the measurement;
    the measurement itself stands."""
    if m is None or m.status != "ok" or not m.samples_s or not plan.options.twins:
        return None
    case = group.case(index)
    twin = group.twin(index)
    if twin is None:
        return None
    harness = [fidelity.mean_per_unit(m.samples_s)]
    side_s = min(plan.budget_s, fidelity.SIDE_S)
    units = fidelity.units_for(harness[0], side_s)
    rounds = fidelity.rounds_for(plan.options.fidelity_rounds, (m.warmup_s or harness[0]) + units * harness[0])
    again_job = {**job, "budget_s": side_s}
    script: list[float] = []
    label = " ".join([group.workload.id, *(f"{k}={v}" for k, v in case.point.items()), "on", group.device])
    try:
        for round_ in range(rounds):
            progress.note(f"Fidelity twin {twin.script} for {label}: round {round_ + 1} of {rounds}")
            script_first = fidelity.script_first(round_)
            if script_first:
                script.append(_twin_script(twin, group.device, units, plan.timeout_s, pools, round_))
            if round_:
                began = time.perf_counter()
                again = executor.run_cases(
                    again_job,
                    [index],
                    plan.timeout_s,
                    lambda event: None,
                    functools.partial(pools.take_worker, index) if pools else None,
                )
                _log_twin_side(twin, "harness", round_, began)
                event = again.get(index, {})
                if event.get("status") != "ok":
                    raise fidelity.ScriptFailed(
                        f"the harness's round {round_ + 1} did not measure: {event.get('error')}"
                    )
                harness.append(fidelity.mean_per_unit(event["measurement"]["samples_s"]))
            if not script_first:
                script.append(_twin_script(twin, group.device, units, plan.timeout_s, pools, round_))
    except fidelity.ScriptFailed as exc:
        warning = f"fidelity twin not recorded: {privacy.scrub(str(exc))}"[:4000]
        return m.model_copy(update={"warnings": [*m.warnings, warning]})
    block = fidelity.block(twin, group.device, harness, script, [units] * len(script))
    twinned = Measurement(**{**m.model_dump(), "fidelity": block})
    progress.note(
        f"Fidelity {twin.script} for {label}: benchsite / script {block['ratio']:.3f} "
        f"({block['ci95'][0]:.3f} .. {block['ci95'][1]:.3f}), {block['verdict']}"
    )
    return twinned


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
