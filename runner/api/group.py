"""Measuring a group: its cases in one child process (or a fresh one a point, for a seed's loop), each point a seed
script covers followed by its twin, every measurement told to the journal as it finishes."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from runner.api.plan import Group, Plan, Progress
from runner.api.pools import GroupSpares
from runner.api.twins import untwinned, with_twin
from runner.measure import executor, protocol
from runner.results.schema import DevicePeak, Measurement
from runner.workloads import Case


def measure_group(
    plan: Plan,
    group: Group,
    progress: Progress,
    done: dict[int, Measurement] | None = None,
    on_measured: Callable[[int, Measurement], None] = lambda index, m: None,
    peaks: list[DevicePeak] | None = None,
) -> list[Measurement]:
    """Measure the group's cases in one child process. `done`: cases an interrupted run finished (by index),
    kept and not measured again; `on_measured` is told each new measurement as it finishes (the journal);
    `peaks`, the run's matrix-product peaks, bound how short a unit can be (runner.measure.worker.SweepCeiling)."""
    done = done or {}
    if done:
        for case, index in zip(group.cases, group.indices, strict=True):
            if index in done:
                progress.case_finished(group, case, done[index])
        if all(index in done for index in group.indices) and not untwinned(plan, group, done):
            return [done[i] for i in group.indices]
    if group.skip_reason:
        return _skipped(group, progress, on_measured)
    job = _job(plan, group, peaks, done)
    measurements: dict[int, Measurement] = dict(done)
    by_index = {i: case for i, case in zip(group.indices, group.cases, strict=True) if i not in done}

    def on_event(event: dict[str, Any]) -> None:
        kind = event.get("event")
        index = event.get("index")
        if index not in by_index:
            return
        case = by_index[index]
        if kind == "start":
            progress.case_started(group, case)
        elif kind == "progress":
            progress.case_progress(group, case, event["samples"], event["elapsed"])
        elif kind == "result":
            m = _measurement_of(plan, group, case, event)
            measurements[index] = m
            on_measured(index, m)
            progress.case_finished(group, case, m)

    # A seed's loop runs a process per point anyway: its twin, where it has one, follows each point at once, so that
    # the rounds of both sides are taken close together.
    batches = [[i] for i in by_index] if job["seed_process"] else [list(by_index)]
    due = untwinned(plan, group, done)
    spare_pools = GroupSpares(plan, group, job, [i for b in batches for i in b] + due)

    def twin(index: int) -> None:
        twinned = with_twin(plan, group, job, index, measurements.get(index), progress, spare_pools)
        if twinned is not None:
            measurements[index] = twinned
            on_measured(index, twinned)  # the journal's later line for this point replaces the earlier one

    try:
        # A point an interrupted run measured but did not twin (the kill came during its rounds) gets its twin first.
        for index in due:
            twin(index)
        for batch in batches:
            if batch:
                # spares are on only where each batch is one point (a seed's group)
                take = functools.partial(spare_pools.take_worker, batch[0])
                executor.run_cases(job, batch, plan.timeout_s, on_event, take)
            for index in batch:
                twin(index)
    finally:
        spare_pools.close()
    return [measurements[i] for i in group.indices if i in measurements]


def _skipped(group: Group, progress: Progress, on_measured: Callable[[int, Measurement], None]) -> list[Measurement]:
    """The group's cases, each recorded as skipped with the group's skip reason."""
    out = [_unmeasured(group, case, "-", status="skipped", skip_reason=group.skip_reason) for case in group.cases]
    for case, index, m in zip(group.cases, group.indices, out, strict=True):
        on_measured(index, m)
        progress.case_finished(group, case, m)
    return out


def _job(plan: Plan, group: Group, peaks: list[DevicePeak] | None, done: dict[int, Measurement]) -> dict[str, Any]:
    """What the group's measuring process is told: the group, the run's budget and options, the device's peaks, and
    where an interrupted run left it."""
    job = {
        **plan.job(group, "measure"),
        "budget_s": plan.budget_s,
        "profile_ops": plan.options.profile_ops,
        "peaks": {p.dtype: p.tflops for p in peaks or [] if p.device == group.device},
        "compile_cache": plan.compile_cache,
    }
    job["seed_process"] = protocol.seed_process(job)
    # what an interrupted run recorded as failed: a ladder resumed above a failed rung stays stopped
    failed = [[i, m.error.type if m.error else "failed"] for i, m in done.items() if m.status == "failed"]
    if failed:
        job["failed"] = failed
    return job


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
