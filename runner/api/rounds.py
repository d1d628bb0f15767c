"""A point's rounds: the independent measuring processes it is measured in, and how they become one measurement.

The variance that decides whether a speedup holds lives between processes (and between runs), not between the
samples of one process, so every timed point is measured in `--rounds` processes (3 by default). The groups of one
framework, workload and loop on every device form a set (`paired_sets`), and a set's rounds go round by round over
its devices, CPU then accelerator, so that a drift of the host's speed hits both sides of a speedup alike and a
round's two sides can be paired (site_builder.uncertainty). A group's rounds (Plan.rounds_of) are the run's
--rounds, one for a streaming step (below). Each process gets its share of the time budget and
decides its own figure from its own samples (runner.measure.timing); `merged` appends it to the measurement as a
`Round` and recomputes the measurement's figure over its rounds (runner.results.intervals.summarize_rounds). A point
that fails or is skipped in a round is not measured again in later ones: the rounds that measured it stand, with
a warning. A streaming step is one process: its figure is the distribution of its files' latencies, and a second
stream at the same rate repeats minutes of work for no CPU-or-accelerator answer.
"""

from __future__ import annotations

from runner.api.plan import Group, Plan
from runner.results.energy import figures as energy_figures
from runner.results.intervals import summarize_rounds
from runner.results.schema import Energy, Measurement, Round


def paired_sets(groups: list[Group]) -> list[list[Group]]:
    """The plan's groups, those of one framework, workload and loop together (in the plan's order, so the CPU's
    group first): the groups whose rounds alternate."""
    sets: dict[tuple[str, str, str], list[Group]] = {}
    for group in groups:
        sets.setdefault((group.framework, group.workload.id, group.variant), []).append(group)
    return list(sets.values())


def due(group: Group, done: dict[int, Measurement], round_: int) -> list[int]:
    """The group's positions still to measure in this round (0-based): in the first, those not measured yet; in a
    later one, those whose every earlier round measured them (a point that failed or was skipped stops)."""
    if round_ == 0:
        return [i for i in group.indices if i not in done]
    return [
        i
        for i in group.indices
        if i in done and done[i].status == "ok" and len(done[i].rounds) == round_ and not stopped(done[i])
    ]


STOPPED = "; the rounds before it stand"  # the end of the warning of a round that did not measure (merged)


def stopped(m: Measurement) -> bool:
    """Whether a round of the measurement failed or was skipped, so that no later round measures it (a resumed run's
    either: its journal keeps the warning)."""
    return any(w.endswith(STOPPED) for w in m.warnings)


def round_budget(plan: Plan, group: Group) -> float:
    """One round's share of the time budget."""
    return plan.budget_s / plan.rounds_of(group)


def merged(previous: Measurement | None, new: Measurement, process: int, rounds: int) -> Measurement:
    """The measurement with one more round: `new`, measured in the run's process number `process`, appended to
    `previous` (None in the first round). A round that did not measure keeps the rounds before it, with a warning.
    A point measured in one round of one (a streaming step, --rounds 1) is its process's measurement as it is."""
    if new.status != "ok" or not new.samples_s or new.median_s is None:
        if previous is None:
            return new
        reason = new.error.type if new.error else (new.skip_reason or new.status)
        warning = f"round {len(previous.rounds) + 1}: {new.status} ({reason[:300]}){STOPPED}"
        return previous.model_copy(update={"warnings": [*previous.warnings, warning]})
    if rounds == 1 and previous is None:
        return new
    this = Round(
        process=process,
        samples=len(new.samples_s),
        median_s=new.median_s,
        units_per_sample=new.units_per_sample,
        warmup_s=new.warmup_s,
        stable=new.stable,
        wall_s=new.wall_s,
    )
    label = f"round {len(previous.rounds) + 1 if previous else 1}: "
    warnings = [label + w for w in new.warnings]
    if previous is None:
        return _refigured(new, [this], list(new.samples_s), warnings, new.top_ops)
    kept = previous.model_dump()
    for name in ("peak_host_mib", "peak_device_mib"):
        values = [v for v in (kept[name], getattr(new, name)) if v is not None]
        kept[name] = max(values) if values else None
    kept["load_avg"] = new.load_avg
    kept["energy"] = [e.model_dump() for e in energy_merged(previous.energy, new.energy, new.samples_per_unit)]
    if previous.cpu_util is not None and new.cpu_util is not None:
        kept["cpu_util"] = (previous.cpu_util * len(previous.rounds) + new.cpu_util) / (len(previous.rounds) + 1)
    base = Measurement(**kept)
    return _refigured(
        base,
        [*previous.rounds, this],
        [*previous.samples_s, *new.samples_s],
        [*previous.warnings, *warnings],
        previous.top_ops,
    )


def energy_merged(previous: list[Energy], new: list[Energy], samples_per_unit: int) -> list[Energy]:
    """Each energy source's rounds so far with the new round's added and its figures recomputed over them
    (runner.results.energy); a source that only one side read keeps what it has."""
    out = []
    added = {(e.source, e.of): e for e in new}
    for e in previous:
        more = added.pop((e.source, e.of), None)
        if more is None:
            out.append(e)
            continue
        rounds = [*e.rounds, *more.rounds]
        numbers = energy_figures([r.model_dump() for r in rounds], e.counter_period_s, e.idle_power_w, samples_per_unit)
        out.append(e.model_copy(update={"rounds": rounds, **numbers}))
    return [*out, *added.values()]


def _refigured(
    m: Measurement, rounds: list[Round], samples: list[float], warnings: list[str], top_ops: list
) -> Measurement:
    """`m` with these rounds and samples, its figures recomputed over the rounds."""
    stats = summarize_rounds(samples, [r.samples for r in rounds])
    stable = [r.stable for r in rounds]
    return m.model_copy(
        update={
            "rounds": rounds,
            "samples_s": samples,
            "median_s": stats.median_s,
            "iqr_s": stats.iqr_s,
            "ci95_s": stats.ci95_s,
            "rel_ci_halfwidth": stats.rel_ci_halfwidth,
            "stable": None if None in stable else all(stable),
            "warmup_s": rounds[0].warmup_s,
            "units_per_sample": rounds[0].units_per_sample,
            "wall_s": sum(r.wall_s or 0.0 for r in rounds),
            "samples_per_s": m.samples_per_unit / stats.median_s,
            "achieved_tflops": m.flops_per_unit / stats.median_s / 1e12 if m.flops_per_unit else None,
            "warnings": warnings,
            "top_ops": top_ops,
        }
    )
