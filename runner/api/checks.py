"""What a run checks before it measures: each accelerator's sync self-test, each device's matrix-product peak,
and the equivalence of the other frameworks' models with PyTorch's."""

from __future__ import annotations

import dataclasses

from runner.api.plan import Plan, Progress
from runner.frameworks import REFERENCE
from runner.measure import equivalence, executor
from runner.results.schema import DevicePeak, EnergyProbe, EquivalenceCheck, SyncSelfTest


def run_selftests(plan: Plan) -> list[SyncSelfTest]:
    results = []
    for framework, kinds in plan.devices.items():
        for kind in kinds:
            if kind == "cpu":
                continue
            payload, failure = executor.run_simple(
                {"kind": "selftest", "framework": framework, "device": kind}, plan.timeout_s
            )
            if payload is not None:
                results.append(SyncSelfTest(**payload["result"]))
            else:
                message = failure.message if failure else "no answer"
                results.append(
                    SyncSelfTest(
                        framework=framework,
                        device=kind,
                        passed=False,
                        unsynced_s=0,
                        synced_s=0,
                        detail=f"self-test failed: {message}"[:4000],
                    )
                )
    return results


def run_peaks(plan: Plan, progress: Progress) -> list[DevicePeak]:
    """The matrix-product throughput of every device PyTorch measures: the honest denominator of "% of peak"."""
    peaks: list[DevicePeak] = []
    if not plan.options.peaks:
        return peaks
    for kind in plan.devices.get(REFERENCE, []):
        payload, failure = executor.run_simple({"kind": "peak", "framework": REFERENCE, "device": kind}, plan.timeout_s)
        if payload is None:
            progress.note(f"WARNING: could not measure the matrix-product peak on {kind}: {failure}")
            continue
        peaks += [DevicePeak(**p) for p in payload["peaks"]]
    for peak in peaks:
        progress.note(f"Peak on {peak.device}: {peak.tflops:.2f} TFLOP/s in {peak.dtype} ({peak.n}x{peak.n} products)")
    return peaks


def run_energy(plan: Plan, progress: Progress) -> list[EnergyProbe]:
    """The energy sources of the run's devices (runner.measure.energy.probe): each readable one's update period and
    idle power, measured now, before anything else runs; where one cannot be read, why (and how to allow it)."""
    if not plan.options.energy:
        return []
    from runner.measure import energy

    kinds = sorted({g.device for g in plan.groups} & {"cpu", "cuda"})
    probes = energy.probe(kinds) if kinds else []
    plan.energy = probes
    for p in probes:
        if p.readable and p.of == "device":
            period = f", counter period {p.counter_period_s * 1e3:.1f} ms" if p.counter_period_s else ""
            idle = f"idle {p.idle_power_w:.1f} W" if p.idle_power_w is not None else "idle power unknown"
            progress.note(f"Energy on {p.device}: {p.source} ({', '.join(p.domains)}), {idle}{period}")
        elif not p.readable and p.of == "device":
            progress.note(f"No energy figures on {p.device}: {p.reason}")
    return [EnergyProbe(**dataclasses.asdict(p)) for p in probes]


def run_equivalence(plan: Plan, progress: Progress) -> list[EquivalenceCheck]:
    """The equivalence check for every workload that a framework other than PyTorch is about to measure."""
    measured = [g for g in plan.groups if g.framework != REFERENCE and not g.skip_reason]
    if not plan.options.equivalence or not measured:
        return []
    workloads = list({g.workload.id: g.workload for g in measured}.values())
    frameworks = list(dict.fromkeys(g.framework for g in measured))
    checks = equivalence.check(workloads, frameworks, plan.options.profile, plan.timeout_s, progress.note)
    passed = sum(c.status == "passed" for c in checks)
    progress.note(f"Equivalence with PyTorch: {passed} of {len(checks)} checks passed.")
    for c in checks:
        if c.status != "passed":
            progress.note(f"WARNING: {c.framework} {c.workload} {c.point or ''} {c.status}: {c.detail}")
    return checks
