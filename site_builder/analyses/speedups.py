"""Speedups: each accelerator's time against the same machine's CPU (same framework, workload_hash and profile),
with its bootstrap interval and verdict, and what is summarised from them: across machines (summarise, by point,
by workload), as-written against tuned (the loop's effect), and each framework's time against PyTorch's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from runner.results import energy as energy_rules
from runner.results import intervals
from site_builder import uncertainty
from site_builder.analyses import between
from site_builder.analyses.frames import CHART_MODELS, UNSTABLE, ok_rows, ratio_intervals, top_models
from site_builder.machines import MachineSummary
from site_builder.uncertainty import Interval

TOO_FEW = intervals.NO_INTERVAL  # a figure without an interval: no verdict either


def interval_columns(name: str, interval: Interval | None) -> dict[str, float]:
    """{name, name_lo, name_hi} from an interval: NaN for an open side, and all NaN without an interval."""

    def value(x: float | None) -> float:
        return np.nan if x is None else x

    if interval is None:
        return {name: np.nan, f"{name}_lo": np.nan, f"{name}_hi": np.nan}
    return {name: interval.estimate, f"{name}_lo": value(interval.lo), f"{name}_hi": value(interval.hi)}


def verdicts(table: pd.DataFrame, estimate: str = "speedup") -> list[str]:
    """Which side wins each row, only where its interval clears 1x (runner.results.intervals.verdict); a row
    without an interval gets none (TOO_FEW)."""
    return [
        TOO_FEW if pd.isna(lo) and pd.isna(hi) else intervals.verdict(lo, hi)
        for lo, hi in zip(table[f"{estimate}_lo"], table[f"{estimate}_hi"], strict=True)
    ]


def speedups(frame: pd.DataFrame, spread: between.Between | None = None) -> pd.DataFrame:
    """Accelerator rows joined with the same machine's CPU row (same framework, workload_hash and profile):
    speedup = CPU time / accelerator time, with its bootstrap interval and verdict; a speedup both of whose sides
    are one run has its interval widened by the speedups' between-run tau^2 (`spread`, by loop). One device
    against one device only: a data-parallel point (several processes: NCCL on GPUs against gloo on the CPU)
    answers another question and lives on the Scale page."""
    ok = ok_rows(frame)
    ok = ok[ok["unit"] != "latency"]  # a streaming latency is not a training or inference time
    ok = ok[ok["world_size"].isna()]
    join = ["machine_id", "workload_hash", "framework", "profile"]
    cpu = ok[ok["device"] == "cpu"][
        [*join, "median_s", "device_name", "samples", "runs", "runs_lo_s", "runs_hi_s", "stable"]
        + [c for c in ("energy_rounds", "energy_scope") if c in ok.columns]
    ]
    accel = ok[ok["device"] != "cpu"]
    joined = accel.merge(cpu.rename(columns={"device_name": "cpu_device_name"}), on=join, suffixes=("", "_cpu"))
    joined["speedup"] = joined["median_s_cpu"] / joined["median_s"]
    eras = [between.era_of(c, a) for c, a in zip(joined["samples_cpu"], joined["samples"], strict=True)]
    tau2 = None if spread is None else spread.tau2_column(between.SPEEDUP, joined["device"], joined["variant"], eras)
    joined = ratio_intervals(joined, "samples_cpu", "samples", "speedup", tau2)
    joined["verdict"] = verdicts(joined)
    # unstable where either side is (frames.states): the speedup rests on both
    either = joined["stable"].astype(object).eq(False) | joined["stable_cpu"].astype(object).eq(False)
    joined["state"] = np.where(either, UNSTABLE, "ok")
    energy_tau2 = None if spread is None else spread.energy_ratio_tau2_column(joined["device"], joined["variant"])
    joined = joined.assign(**energy_ratios(joined, energy_tau2))
    return joined.reset_index(drop=True)


ENERGY_COLUMNS = ["energy_ratio", "energy_ratio_lo", "energy_ratio_hi", "energy_verdict", "energy_note"]


def energy_ratio(
    cpu: Any, accelerator: Any, cpu_scope: str, accelerator_scope: str, tau2: float = 0.0
) -> dict[str, Any]:
    """The CPU-or-accelerator answer in energy for one comparison: the CPU side's joules a unit over the
    accelerator side's (above 1: the accelerator uses less), each side's median over its rounds
    (runner.results.energy.side_rounds), with Student's t on the log ratios of the rounds, paired round by round
    where the run alternated them (uncertainty.rounds_interval), widened by `tau2`, the spread between runs of the
    two sides' energy (uncertainty.single_run_interval: both sides are one run's), and its verdict; where a side
    was not measured, no figure and a note that says which. The one rule every page and file takes the energy
    answer from."""
    none = dict.fromkeys(ENERGY_COLUMNS[:3], np.nan) | {"energy_verdict": "", "energy_note": ""}
    cpu_all = np.asarray(cpu if cpu is not None else [], dtype=float)
    accel_all = np.asarray(accelerator if accelerator is not None else [], dtype=float)
    paired = (
        isinstance(cpu, uncertainty.Rounds)
        and isinstance(accelerator, uncertainty.Rounds)
        and bool(cpu.pairing)
        and cpu.pairing == accelerator.pairing
        and cpu_all.size == accel_all.size
    )
    if paired:  # a round either side cannot attribute leaves the pair out
        both = ~np.isnan(cpu_all) & ~np.isnan(accel_all)
        cpu_values, accel_values = cpu_all[both], accel_all[both]
    else:
        cpu_values, accel_values = cpu_all[~np.isnan(cpu_all)], accel_all[~np.isnan(accel_all)]
    if not accel_values.size and not cpu_values.size:
        return none  # neither side read a counter: nothing to say beside the speedup
    if not cpu_values.size:
        return none | {"energy_note": energy_rules.NO_CPU_SIDE}
    if not accel_values.size:
        return none | {"energy_note": energy_rules.NO_ACCELERATOR_SIDE}
    if "host" not in accelerator_scope and cpu_scope:
        return none | {"energy_note": energy_rules.NO_HOST_SIDE}
    if np.any(cpu_values <= 0) or np.any(accel_values <= 0):
        return none | {"energy_note": "a round used no measurable energy: no ratio"}
    ratio = float(np.median(cpu_values) / np.median(accel_values))
    lo = hi = np.nan
    if cpu_values.size >= 2 and accel_values.size >= 2:
        pairings = ("energy", "energy") if paired else ("cpu", "accelerator")  # unpaired: Welch's
        sides = uncertainty.Rounds(cpu_values, pairings[0]), uncertainty.Rounds(accel_values, pairings[1])
        lo, hi = uncertainty.rounds_interval(*sides)
        lo, hi = (float(x[0]) for x in uncertainty.single_run_interval([ratio], [lo], [hi], tau2))
    if np.isnan(lo) or np.isnan(hi) or intervals.interval_or_none(lo, hi) is None:
        return none | {"energy_ratio": ratio, "energy_note": TOO_FEW}
    verdict = intervals.verdict(lo, hi, energy_rules.ENERGY_ABOVE, energy_rules.ENERGY_BELOW)
    return {"energy_ratio": ratio, "energy_ratio_lo": lo, "energy_ratio_hi": hi, "energy_verdict": verdict,
            "energy_note": ""}  # fmt: skip


def energy_ratios(joined: pd.DataFrame, tau2: np.ndarray | None = None) -> dict[str, list[Any]]:
    """energy_ratio for every row of the speedups' join (its CPU side's columns suffixed _cpu), each widened by its
    row's `tau2` (none: 0)."""
    if "energy_rounds" not in joined.columns:  # a frame made without the energy columns
        return {name: [np.nan if name.startswith("energy_ratio") else ""] * len(joined) for name in ENERGY_COLUMNS}
    tau2s = np.zeros(len(joined)) if tau2 is None else np.asarray(tau2, dtype=float)
    rows = [
        energy_ratio(c, a, str(cs), str(acs), float(t))
        for c, a, cs, acs, t in zip(
            joined["energy_rounds_cpu"],
            joined["energy_rounds"],
            joined["energy_scope_cpu"],
            joined["energy_scope"],
            tau2s,
            strict=True,
        )
    ]
    return {name: [r[name] for r in rows] for name in ENERGY_COLUMNS}


def summarise(table: pd.DataFrame, keys: list[str], estimate: str, **extra: tuple[str, Any]) -> pd.DataFrame:
    """Per group of `keys`: the median of `estimate` over its rows (machines) with the two-level bootstrap
    interval (uncertainty.median_over; each row's own uncertainty from its {estimate}_lo/_hi interval), as
    {estimate}, {estimate}_lo, {estimate}_hi, and machines; extra columns are (column, aggregation) pairs."""
    columns = [*keys, estimate, f"{estimate}_lo", f"{estimate}_hi", "machines", *extra]
    rows = []
    if not table.empty:
        # Only the columns read here: grouping sorts a copy of the table it is given, every column of it. (The
        # speedups page's peak at 100,000 files, 1.7 GiB above its start, was median_over's arrays, not this copy.)
        read = [*keys, estimate, f"{estimate}_lo", f"{estimate}_hi", "machine_id", *(c for c, _ in extra.values())]
        table = table[list(dict.fromkeys(read))]
        for values, group in table.groupby(keys, sort=True, dropna=False, observed=True):
            values = values if isinstance(values, tuple) else (values,)
            interval = uncertainty.median_of_intervals(
                group[estimate].to_numpy(float),
                group[f"{estimate}_lo"].to_numpy(float),
                group[f"{estimate}_hi"].to_numpy(float),
            )
            if (
                interval.lo is not None
                and interval.hi is not None
                and intervals.interval_or_none(interval.lo, interval.hi) is None
            ):
                interval = Interval(interval.estimate, None, None)
            row = dict(zip(keys, values, strict=True))
            row.update(
                {
                    **interval_columns(estimate, interval),
                    "machines": group["machine_id"].nunique(),
                }
            )
            row.update({name: _aggregate(group[column], how) for name, (column, how) in extra.items()})
            rows.append(row)
    return pd.DataFrame(rows, columns=columns)


def _aggregate(values: pd.Series, how: Any) -> Any:
    if how == "first":
        return values.iloc[0] if len(values) else None
    return values.agg(how)


def speedup_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Across machines: per workload point, variant, framework and accelerator model, the median speedup with
    its interval (summarise: of one machine, that machine's own) and verdict, the range over machines, and the
    point's size."""
    keys = ["workload", "point", "variant", "framework", "gpu_vendor", "gpu_model"]
    summary = summarise(
        table,
        keys,
        "speedup",
        lo=("speedup", "min"),
        hi=("speedup", "max"),
        params=("params", "first"),
        batch_size=("batch_size", "first"),
        depth=("depth", "first"),
    )
    return summary.assign(verdict=verdicts(summary) if len(summary) else [])


LOOP_COLUMNS = [
    "machine_id",
    "gpu_model",
    "workload",
    "point",
    "framework",
    "device",
    "as_written",
    "as_written_lo",
    "as_written_hi",
    "tuned",
    "tuned_lo",
    "tuned_hi",
    "flips",
    "gpu_gain",
    "gpu_gain_lo",
    "gpu_gain_hi",
    "cpu_gain",
    "cpu_gain_lo",
    "cpu_gain_hi",
]


def loop_effect(table: pd.DataFrame) -> pd.DataFrame:
    """As-written against tuned, per machine, workload point, framework and accelerator: each variant's
    speedup over the CPU with its interval, and whether the verdict flips with the loop (both verdicts clear
    of 1x and on opposite sides)."""
    if table.empty:
        return pd.DataFrame(columns=LOOP_COLUMNS)
    keys = ["machine_id", "gpu_model", "workload", "point", "framework", "device"]
    cols = [
        *keys,
        "speedup",
        "speedup_lo",
        "speedup_hi",
        "verdict",
        "median_s",
        "median_s_cpu",
        "samples",
        "samples_cpu",
    ]
    written = table[table["variant"] == "as-written"][cols]
    tuned = table[table["variant"] == "tuned"][cols]
    both = written.merge(tuned, on=keys, suffixes=("_written", "_tuned"))
    both = both.rename(
        columns={
            "speedup_written": "as_written",
            "speedup_lo_written": "as_written_lo",
            "speedup_hi_written": "as_written_hi",
            "speedup_tuned": "tuned",
            "speedup_lo_tuned": "tuned_lo",
            "speedup_hi_tuned": "tuned_hi",
        }
    )
    clear = ("accelerator faster", "CPU faster")
    both["flips"] = (
        both["verdict_written"].isin(clear)
        & both["verdict_tuned"].isin(clear)
        & (both["verdict_written"] != both["verdict_tuned"])
    )
    both["gpu_gain"] = both["median_s_written"] / both["median_s_tuned"]
    both["cpu_gain"] = both["median_s_cpu_written"] / both["median_s_cpu_tuned"]
    both = ratio_intervals(both, "samples_written", "samples_tuned", "gpu_gain")
    both = ratio_intervals(both, "samples_cpu_written", "samples_cpu_tuned", "cpu_gain")
    return both[LOOP_COLUMNS].reset_index(drop=True)


def framework_comparison(frame: pd.DataFrame, baseline: str = "torch") -> pd.DataFrame:
    """Each framework's time over the baseline framework's on the same machine and device for the same
    workload_hash (the hash leaves the framework out, so it names the same model, data and loop): >1 means
    the baseline is faster. With the ratio's interval."""
    ok = ok_rows(frame)
    keys = ["machine_id", "device", "workload_hash", "profile"]
    base = ok[ok["framework"] == baseline][[*keys, "median_s", "samples"]]
    other = ok[ok["framework"] != baseline]
    both = other.merge(base, on=keys, suffixes=("", "_base"))
    both["ratio"] = both["median_s"] / both["median_s_base"]
    return ratio_intervals(both, "samples", "samples_base", "ratio").reset_index(drop=True)


def loop_by_accelerator(effect: pd.DataFrame) -> pd.DataFrame:
    """Per accelerator model, workload point and framework: median speedups with each loop (with intervals)
    and the median gains."""
    columns = ["gpu_model", "workload", "point", "framework"]
    if effect.empty:
        return pd.DataFrame(
            columns=[*columns, "machines", "flips"]
            + [f"{f}{s}" for f in ("as_written", "tuned", "gpu_gain", "cpu_gain") for s in ("", "_lo", "_hi")]
        )
    rows = top_models(effect, "gpu_model")
    parts = [
        summarise(rows, columns, "as_written"),
        summarise(rows, columns, "tuned"),
        summarise(rows, columns, "gpu_gain"),
        summarise(rows, columns, "cpu_gain"),
    ]
    out = parts[0]
    for part in parts[1:]:
        out = out.merge(part.drop(columns="machines"), on=columns)
    clear = {"accelerator faster", "CPU faster"}
    a = verdicts(out, "as_written")
    t = verdicts(out, "tuned")
    out["flips"] = [x in clear and y in clear and x != y for x, y in zip(a, t, strict=True)]
    return out


def equivalence_summary(machines: Mapping[str, MachineSummary]) -> pd.DataFrame:
    """Per framework, workload and point: on how many machines the equivalence check passed, failed or could
    not run, and the largest gradient difference seen."""
    rows = [
        {"framework": f, "workload": w, "point": p, "machine_id": mid, "status": status, "grad": grad}
        for mid, summary in machines.items()
        for (f, w, p), (_, status, grad) in summary.equivalence.items()
    ]
    columns = ["framework", "workload", "point", "machines", "passed", "failed", "error", "worst_grad_rel_diff"]
    if not rows:
        return pd.DataFrame(columns=columns)
    table = pd.DataFrame(rows)
    return (
        table.groupby(["framework", "workload", "point"])
        .agg(
            machines=("machine_id", "nunique"),
            passed=("status", lambda s: int((s == "passed").sum())),
            failed=("status", lambda s: int((s == "failed").sum())),
            error=("status", lambda s: int((s == "error").sum())),
            worst_grad_rel_diff=("grad", "max"),
        )
        .reset_index()[columns]
    )


def frameworks_by_device(table: pd.DataFrame) -> pd.DataFrame:
    """Per device model, workload point, loop and framework: the median time over the baseline's, with its
    interval."""
    rows = top_models(table, "device_name", 2 * CHART_MODELS)
    keys = ["device", "device_name", "workload", "point", "params", "variant", "framework"]
    return summarise(
        rows,
        keys,
        "ratio",
        median_s=("median_s", "median"),
        median_s_base=("median_s_base", "median"),
    )


# The field a workload's points sweep, and its name in a sentence: each line of the answer at a glance runs along it.
SWEEPS = {"depth-sweep": ("depth", "depth", "depths"), "transformer": ("batch_size", "batch size", "batch sizes")}
LINE_KEYS = ["workload", "variant", "gpu_model", "cpu_model", "framework"]
# which side a line's answer gives the win to (a line along a sweep whose verdicts differ is "mixed")
SIDES = {"accelerator faster": "accelerator", "CPU faster": "cpu"}


def _runs(values: list[Any], verdicts: list[str]) -> list[tuple[str, list[Any]]]:
    """Consecutive sweep values that share a verdict, in the sweep's order."""
    runs: list[tuple[str, list[Any]]] = []
    for value, verdict in zip(values, verdicts, strict=True):
        if runs and runs[-1][0] == verdict:
            runs[-1][1].append(value)
        else:
            runs.append((verdict, [value]))
    return runs


def _span(values: list[Any]) -> str:
    shown = [f"{v:g}" if isinstance(v, float) else str(v) for v in values]
    return shown[0] if len(shown) == 1 else ", ".join(shown) if len(shown) == 2 else f"{shown[0]} to {shown[-1]}"


def along(values: list[Any], verdicts: list[str], one: str, many: str) -> str:
    """Where each side clearly wins along a sweep, in words: "accelerator faster at every depth (2 to 12)", or
    "CPU faster at depths 2 to 9; no clear winner at depth 10; accelerator faster at depths 11, 12" (`one`, `many`:
    the sweep's value named once and more than once)."""
    runs = _runs(values, verdicts)
    if len(runs) == 1:
        return f"{runs[0][0]} at every {one} ({_span(values)})"
    return "; ".join(
        f"{'no interval' if v == TOO_FEW else v} at {many if len(s) > 1 else one} {_span(s)}" for v, s in runs
    )


def glance(table: pd.DataFrame) -> pd.DataFrame:
    """The answer at a glance: one line per workload, loop, accelerator model, CPU (model and cores) and framework,
    never a median across frameworks or CPUs. Per workload point, the median over the line's machines with its
    interval (summarise: of one machine, that machine's own figure and interval, as its leaderboard row). A line of
    one point says its verdict and speedup; a line along a sweep (the depth sweep's depths; a transformer model and
    mode's batch sizes) says where each side clearly wins along it, with the speedup and interval of its largest
    point and its lowest speedup."""
    columns = [
        *LINE_KEYS, "part", "answer", "side", "speedup", "speedup_lo", "speedup_hi", "unstable", "at", "low", "points",
        "machines", "machine_ids",
    ]  # fmt: skip
    if table.empty:
        return pd.DataFrame(columns=columns)
    workload = table["workload"].astype(str)
    sweep = pd.Series(np.nan, index=table.index)
    for name, (field, _, _) in SWEEPS.items():
        sweep = sweep.mask(workload == name, pd.to_numeric(table[field], errors="coerce"))
    models = table["model"].astype("object")
    part = (models.astype(str) + " " + table["mode"].astype("object").astype(str)).where(
        (workload == "transformer") & models.notna(), ""
    )
    table = table.assign(part=part, sweep=sweep)
    keys = [*LINE_KEYS, "part", "sweep", "point"]
    unstable = table["state"] == UNSTABLE if "state" in table else pd.Series(False, index=table.index)
    points = summarise(
        table.assign(_unstable=unstable),
        keys,
        "speedup",
        ids=("machine_id", lambda ids: sorted(set(ids))),
        unstable=("_unstable", "any"),
    )
    points = points.assign(verdict=verdicts(points))
    rows = []
    for values, line in points.groupby([*LINE_KEYS, "part"], sort=True, observed=True):
        line = line.sort_values("sweep") if line["sweep"].notna().all() else line.sort_values("point")
        row = dict(zip([*LINE_KEYS, "part"], values, strict=True))
        last = line.iloc[-1]
        ids = sorted({i for group in line["ids"] for i in group})
        row.update(
            speedup=last["speedup"], speedup_lo=last["speedup_lo"], speedup_hi=last["speedup_hi"],
            unstable=bool(last["unstable"]), points=len(line), machines=len(ids), machine_ids=ids, at=None, low=None,
        )  # fmt: skip
        if len(line) == 1:
            row["answer"], row["side"] = str(last["verdict"]), SIDES.get(str(last["verdict"]), "unclear")
        else:
            _, one, many = SWEEPS.get(str(row["workload"]), ("point", "point", "points"))
            sweep = [v if pd.notna(v) else p for v, p in zip(line["sweep"], line["point"], strict=True)]
            sweep = [int(v) if isinstance(v, float) and v.is_integer() else v for v in sweep]
            runs = _runs(sweep, list(line["verdict"]))
            row["side"] = SIDES.get(runs[0][0], "unclear") if len(runs) == 1 else "mixed"
            row["answer"] = along(sweep, list(line["verdict"]), one, many)
            low = int(line["speedup"].to_numpy().argmin())  # the line's lowest speedup, beside its largest point's
            row.update(at=f"{one} {sweep[-1]}", low=(float(line["speedup"].iloc[low]), f"{one} {sweep[low]}"))
        rows.append(row)
    return pd.DataFrame(rows, columns=columns)
