"""Measuring a group: its cases in one child process a round (or a fresh one a point and round, for a seed's loop),
each point a seed script covers with its twin's script run beside each of its rounds, every measurement told to the
journal as each round ends (runner.api.rounds)."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from runner import fidelity
from runner.api.plan import Group, Plan, Progress
from runner.api.pools import GroupSpares
from runner.api.rounds import due, merged, round_budget
from runner.api.twins import TwinRounds
from runner.measure import executor, protocol
from runner.results.schema import DevicePeak, Measurement
from runner.workloads import Case


@dataclass
class GroupRounds:
    """A group's measurements as its rounds add to them (by position in the workload's list), and its twins."""

    plan: Plan
    group: Group
    peaks: list[DevicePeak] | None = None
    done: dict[int, Measurement] = field(default_factory=dict)
    twins: TwinRounds | None = None

    def __post_init__(self) -> None:
        self.done = dict(self.done)
        self.twins = TwinRounds(self.plan, self.group)


def measure_group(
    plan: Plan,
    group: Group,
    progress: Progress,
    done: dict[int, Measurement] | None = None,
    on_measured: Callable[[int, Measurement], None] = lambda index, m: None,
    peaks: list[DevicePeak] | None = None,
) -> list[Measurement]:
    """Measure the group's cases in all their rounds, one after another (a run alternates the rounds of a point's
    devices instead: runner.api.execution). `done`: what an interrupted run finished (by index), kept and not
    measured again; `on_measured` is told each measurement as each round ends (the journal); `peaks`, the run's
    matrix-product peaks, bound how short a unit can be (runner.measure.worker.SweepCeiling)."""
    state = GroupRounds(plan, group, peaks, done or {})
    processes = itertools.count(next_process(state.done.values()))
    for round_ in range(plan.rounds_of(group)):
        measure_round(state, round_, progress, on_measured, processes)
    return finish_group(state, progress, on_measured)


def next_process(done: Iterable[Measurement]) -> int:
    """The number the run's next measuring process takes: after every round an interrupted run recorded."""
    return 1 + max((r.process for m in done for r in m.rounds), default=-1)


def measure_round(
    state: GroupRounds,
    round_: int,
    progress: Progress,
    on_measured: Callable[[int, Measurement], None],
    processes: Iterator[int],
    shared: GroupSpares | None = None,
) -> None:
    """One round of the group: each point still due (runner.api.rounds.due) in a process of its own (a seed's loop)
    or all of them in one, its twin's script beside it (which side first alternating by round), each point's
    measurement with this round added told to `on_measured`. `shared`: spare interpreters that serve every round
    of the group's paired set (GroupSpares.for_set); without it the round starts its own."""
    plan, group = state.plan, state.group
    assert state.twins is not None
    if group.skip_reason:
        if round_ == 0:
            for index, m in _skipped(group, state.done).items():
                state.done[index] = m
                on_measured(index, m)
        return
    indices = due(group, state.done, round_)
    if not indices:
        return
    rounds = plan.rounds_of(group)
    if rounds > 1:
        progress.note(
            f"Round {round_ + 1} of {rounds}: {group.workload.id} {group.variant} {group.framework}/{group.device}"
        )
    job = _job(plan, group, state.peaks, state.done, round_)
    by_index = {i: group.case(i) for i in indices}
    process = [0]

    def on_event(event: dict[str, Any]) -> None:
        kind, index = event.get("event"), event.get("index")
        if index not in by_index:
            return
        case = by_index[index]
        if kind == "start":
            progress.case_started(group, case)
        elif kind == "progress":
            progress.case_progress(group, case, event["samples"], event["elapsed"])
        elif kind == "result":
            m = merged(state.done.get(index), _measurement_of(plan, group, case, event), process[0], rounds)
            state.done[index] = m
            on_measured(index, m)

    # A seed's loop runs a process per point: its twin's script runs beside it, so both sides are taken together.
    batches = [[i] for i in indices] if job["seed_process"] else [indices]
    if shared is not None:
        shared.expect(group, indices)
    pools = shared if shared is not None else GroupSpares(plan, group, job, indices)
    script_first = fidelity.script_first(round_)
    try:
        for batch in batches:
            if script_first:
                for index in batch:
                    state.twins.run(index, state.done.get(index), round_, pools, progress)
            process[0] = next(processes)
            # a sweep's ceiling in a process of one point predicts from the points measured before it
            job["measured"] = _medians(state.done)
            # spares are on only where each batch is one point (a seed's group)
            take = functools.partial(pools.take_worker, batch[0])
            executor.run_cases(job, batch, plan.timeout_s, on_event, take)
            if not script_first:
                for index in batch:
                    state.twins.run(index, state.done.get(index), round_, pools, progress)
    finally:
        if pools is not shared:
            pools.close()


def finish_group(
    state: GroupRounds, progress: Progress, on_measured: Callable[[int, Measurement], None]
) -> list[Measurement]:
    """The group's measurements once its rounds are done, twins attached, each told to the front end (and, where its
    twin changed it, to the journal again: a later line for a point replaces the earlier one)."""
    plan, group = state.plan, state.group
    assert state.twins is not None
    twinned = [i for i in group.indices if state.twins.wanted(i, state.done.get(i)) or i in state.twins.failed]
    pools = GroupSpares(plan, group, _job(plan, group, state.peaks, state.done, 0), twinned) if twinned else None
    try:
        for index in twinned:
            m = state.twins.finish(index, state.done[index], pools, progress)
            if m is not state.done[index]:
                state.done[index] = m
                on_measured(index, m)
    finally:
        if pools is not None:
            pools.close()
    out = [state.done[i] for i in group.indices if i in state.done]
    for index in group.indices:
        if index in state.done:
            progress.case_finished(group, group.case(index), state.done[index])
    return out


def _skipped(group: Group, done: dict[int, Measurement]) -> dict[int, Measurement]:
    """The group's cases not recorded yet, each recorded as skipped with the group's skip reason."""
    return {
        index: _unmeasured(group, case, "-", status="skipped", skip_reason=group.skip_reason)
        for case, index in zip(group.cases, group.indices, strict=True)
        if index not in done
    }


def _job(
    plan: Plan, group: Group, peaks: list[DevicePeak] | None, done: dict[int, Measurement], round_: int
) -> dict[str, Any]:
    """What the group's measuring process is told: the group, the round's share of the run's budget (and the whole
    budget, which bounds a sweep's units), the run's options, the device's peaks, and where an interrupted run left
    it. Only the first round profiles a step's top operators."""
    job = {
        **plan.job(group, "measure"),
        "budget_s": round_budget(plan, group),
        "point_budget_s": plan.budget_s,
        "profile_ops": plan.options.profile_ops and round_ == 0,
        # the first round decides which points of a sweep are measured (SweepCeiling); later rounds measure those
        "sweep_ceiling": round_ == 0,
        "peaks": {p.dtype: p.tflops for p in peaks or [] if p.device == group.device},
        "compile_cache": plan.compile_cache,
        # the energy sources its measurements read: the device's own, and an accelerator's host CPU
        "energy": [p.as_job() for p in plan.energy if p.device == group.device and p.readable],
    }
    job["seed_process"] = protocol.seed_process(job)
    # what an interrupted run recorded as failed: a ladder resumed above a failed rung stays stopped
    failed = [[i, m.error.type if m.error else "failed"] for i, m in done.items() if m.status == "failed"]
    if failed:
        job["failed"] = failed
    return job


def _medians(done: dict[int, Measurement]) -> dict[str, float]:
    """The median of each point measured so far (by position, as JSON keys), from which a sweep's ceiling
    (runner.measure.worker.SweepCeiling) predicts the next point's unit in a process that did not measure them."""
    return {str(i): m.median_s for i, m in sorted(done.items()) if m.status == "ok" and m.median_s}


def _measurement_of(plan: Plan, group: Group, case: Case, event: dict[str, Any]) -> Measurement:
    """The measurement a child's "result" event reports: its own, or one recorded as skipped or failed."""
    error = event.get("error")
    if event["status"] == "ok":
        try:
            m = Measurement(**event["measurement"])
        except ValidationError as exc:  # a workload produced numbers the format rejects
            error = {"type": "InvalidMeasurement", "message": str(exc)[:4000]}
    if event["status"] == "skipped":
        reason = str(event.get("skip_reason") or "skipped by the workload")[:4000]
        m = _unmeasured(group, case, device_name(plan, group.device), status="skipped", skip_reason=reason)
    elif error is not None:
        m = _unmeasured(group, case, device_name(plan, group.device), status="failed", error=error)
    return m


def _unmeasured(group: Group, case: Case, device_name: str, **outcome: Any) -> Measurement:
    """A measurement that has no timings: skipped (with skip_reason) or failed (with error)."""
    return Measurement(
        workload=case.workload,
        workload_hash=case.workload_hash(group.variant),
        point=case.point,
        variant=group.variant,
        framework=group.framework,
        device=group.device,
        device_name=device_name,
        unit=case.unit,
        samples_per_unit=case.samples_per_unit,
        params=case.params,
        flops_per_unit=case.flops_per_unit,
        **outcome,
    )


def device_name(plan: Plan, kind: str) -> str:
    if kind == "cpu":
        return plan.machine.cpu.model
    vendor = {"cuda": "nvidia", "rocm": "amd", "mps": "apple"}[kind]
    return next((a.model for a in plan.machine.accelerators if a.vendor == vendor), kind)
