"""A measurement's energy figures from its rounds, by one rule that the run and the gate share.

A round reports the joules its steady state used, the units it ran and the window's wall time (runner.measure.energy
reads the counters at the window's bounds, after the device synchronised). A round is attributable where its window
spans at least MIN_PERIODS of the counter's update period (or MIN_SAMPLED_WINDOW_S of sampled power): a counter that
advances in steps is off by up to a step at each end, so a shorter window's figure would be mostly that error. The
figures: joules per unit, the median over attributable rounds, with Student's t on their logarithms (as a time's
rounds); per sample; above idle (the idle power times the window taken off); and the average power over every
round. Where no round is attributable there is no figure, and the note says why.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

from runner.results.intervals import process_interval

MIN_PERIODS = 10  # a window of at least this many counter updates: each end off by one step is at most 10% of it
MIN_SAMPLED_WINDOW_S = 0.5  # sampled power (every 10 ms): at least 50 samples


def attributable(window_s: float, period_s: float | None) -> bool:
    if period_s is None:
        return window_s >= MIN_SAMPLED_WINDOW_S
    return window_s >= MIN_PERIODS * period_s


def min_window(sources: Sequence[Any], profile: str | None = None) -> float:
    """How long a round's steady state must last for every one of `sources` (Probe.as_job dicts) to attribute it:
    MIN_PERIODS of the slowest counter's update period, MIN_SAMPLED_WINDOW_S for sampled power; 0 without sources.
    The timing engine runs that long at least (runner.measure.timing.measure's min_window_s): a round of a short
    budget on NVML's 0.1 s counter would otherwise always be too short to attribute. Not in the quick profile, a
    first look whose rounds keep their budget: its GPU rounds are mostly too short, the standard profile's are not."""
    if profile == "quick":
        return 0.0
    return max(
        (
            MIN_PERIODS * _get(s, "counter_period_s") if _get(s, "counter_period_s") else MIN_SAMPLED_WINDOW_S
            for s in sources
        ),
        default=0.0,
    )


def figures(
    rounds: list[dict[str, Any]], period_s: float | None, idle_w: float | None, samples_per_unit: int
) -> dict[str, Any]:
    """The Energy block's figures from its rounds (each with joules, units, window_s)."""
    windows = sum(r["window_s"] for r in rounds)
    out: dict[str, Any] = {
        "joules_per_unit": None,
        "ci95_joules_per_unit": None,
        "joules_per_sample": None,
        "above_idle_joules_per_unit": None,
        "avg_power_w": sum(r["joules"] for r in rounds) / windows if windows > 0 else None,
        "note": None,
    }
    kept = _kept(rounds, period_s)
    if not kept:
        longest = max((r["window_s"] for r in rounds), default=0.0)
        needs = f"{MIN_PERIODS} x its {period_s:.3g} s update period" if period_s else f"{MIN_SAMPLED_WINDOW_S} s"
        out["note"] = (
            f"too short to attribute: the longest round's steady window is {longest:.3g} s, the counter needs "
            f"{needs} (a longer --time-budget gives one)"
        )
        return out
    per_unit = _per_unit(kept)
    out["joules_per_unit"] = statistics.median(per_unit)
    out["ci95_joules_per_unit"] = process_interval(per_unit) if all(v > 0 for v in per_unit) else None
    out["joules_per_sample"] = out["joules_per_unit"] / samples_per_unit
    if idle_w is not None:
        above = [max(0.0, r["joules"] - idle_w * r["window_s"]) / r["units"] for r in kept]
        out["above_idle_joules_per_unit"] = statistics.median(above)
    return out


def _kept(rounds: Sequence[Any], period_s: float | None) -> list[Any]:
    """The rounds long enough for the counter to attribute."""
    return [r for r in rounds if attributable(_get(r, "window_s"), period_s)]


def _per_unit(rounds: Sequence[Any]) -> list[float]:
    return [_get(r, "joules") / _get(r, "units") for r in rounds]


def device_figure(energies: Sequence[Any]) -> Any | None:
    """A measurement's own energy figure: its block of `of: device` that has joules per unit, or None."""
    return next((e for e in energies if _get(e, "of") == "device" and _get(e, "joules_per_unit") is not None), None)


def log_se2(block: Any) -> float:
    """The squared standard error of a block's log joules per unit, var(log x) / n over the rounds it is figured
    from: what its interval is built on (process_interval), not read back from that t-interval. NaN under two
    rounds or where a round used no energy."""
    per_unit = _per_unit(_kept(_get(block, "rounds"), _get(block, "counter_period_s")))
    if len(per_unit) < 2 or any(not v > 0 for v in per_unit):
        return math.nan
    return statistics.variance([math.log(v) for v in per_unit]) / len(per_unit)


ENERGY_ABOVE = "accelerator uses less energy"  # the verdicts on CPU joules over an accelerator's (above 1: it wins)
ENERGY_BELOW = "CPU uses less energy"
NO_CPU_SIDE = "the CPU side has no energy reading (no readable RAPL on this machine)"
NO_ACCELERATOR_SIDE = "the accelerator side has no energy reading"
NO_HOST_SIDE = "the accelerator side did not read the host CPU, the CPU side did: not comparable"


def side_rounds(energies: Sequence[Any]) -> tuple[list[float], str]:
    """What one side of a CPU-or-accelerator comparison used per unit, round by round: its device's own source plus,
    for an accelerator, the host CPU read over the same windows (the host works too while the accelerator trains),
    NaN in a round some summed source cannot attribute (`attributable`); and what was summed ("" where nothing was
    read). One value a round, in the rounds' order, so that a run's CPU and accelerator rounds, timed in
    alternation, pair."""
    own = next((e for e in energies if _get(e, "of") == "device"), None)
    if own is None:
        return [], ""
    host = next((e for e in energies if _get(e, "of") == "host"), None)
    parts = [own] if host is None else [own, host]
    values = []
    for rounds in zip(*(_get(p, "rounds") for p in parts), strict=False):
        kept = all(
            attributable(_get(r, "window_s"), _get(p, "counter_period_s")) for r, p in zip(rounds, parts, strict=True)
        )
        values.append(sum(_get(r, "joules") for r in rounds) / _get(rounds[0], "units") if kept else math.nan)
    if all(math.isnan(v) for v in values):
        values = []
    scope = _get(own, "source") + (f" + host {_get(host, 'source')}" if host is not None else "")
    return values, scope


def _get(item: Any, name: str) -> Any:
    return item[name] if isinstance(item, dict) else getattr(item, name)
