"""The between-run component: how far one machine's runs of one figure spread beyond what each run's own interval says,
estimated from every machine that ran a figure more than once.

A run's interval describes that run: its rounds' spread (schema 9 and later), or for an older file the noise inside
its one process (a measurement's order-statistic interval of its median, a speedup's bootstrap of the two sides'
samples). Two runs of one machine differ by more (the committed results: 10%
for measurements, 22% for speedups at the median, while one run's interval is 4 to 9% wide), so a figure that rests
on one run gets the between-run variance added to its own (uncertainty.single_run_interval).

The estimate is a random-effects model on the log figures. A group is one figure of one machine and benchsite version
(machine, benchsite version, profile, workload hash, framework, device: runs the site combines, site_builder.combine,
of one harness; a speedup is paired within one run file, so its group is its accelerator side's), kept where at least
2 of its runs have a within-run interval. With y_gj the log figure of run j of group g, k_g its runs and s_gj its
within-run standard error of the log figure (for a run of rounds, that of its rounds: uncertainty.rounds_se2; for an
older run, ln(hi_gj / lo_gj) / (2 * 1.96), what its own 95% interval gives), tau^2 is the Paule-Mandel estimate: the
tau^2 >= 0 at which the runs' weighted spread about their group's weighted mean is what chance alone gives,

    Q(tau^2) = sum_g sum_j w_gj (y_gj - ybar_g)^2 = sum_g (k_g - 1),    w_gj = 1 / (s_gj^2 + tau^2),
    ybar_g = sum_j w_gj y_gj / sum_j w_gj,

and tau^2 = 0 where Q(0) <= sum_g (k_g - 1) already.

Each run is weighed by its own noise, so a few runs with wide intervals do not hide that runs with narrow ones
disagree (the plain method of moments, max(0, V - W) with V the pooled variance of a group's runs and W the mean
s^2, set tau to 0 where one wide run's s^2 outweighed the rest; both are kept as Component.pooled and .within).

It is estimated for each figure (measurement: log median_s; speedup: log speedup; energy: log joules per unit on the
measured device), device class (cpu, accelerator; a speedup's is the accelerator) and loop (as-written, tuned). A
class and loop with no group takes the figure's estimate over all its groups (so a CPU's energy, where no machine
read its CPU's counter in several runs, takes the accelerators'). Where no speedup group is left at all
(leave-one-machine-out on few machines), a speedup's tau^2 is the sum of its two sides' measurement tau^2 (the CPU's
and the accelerator's of its loop: runs of the two sides taken as independent); 0 where neither figure has a group.
An energy ratio (CPU joules over the accelerator's, one run's rounds on each side) takes the sum of its two sides'
energy tau^2 (analyses.speedups.energy_ratio). Runs without a within-run interval (one
sample) add no group member: their standard error is unknown. The rows are put in one order (group, run) before
the sums: the same files give the same tau.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from site_builder import uncertainty

MEASUREMENT = "measurement"
SPEEDUP = "speedup"
ENERGY = "energy"  # a measurement's joules per unit on its device (schema 11 on)
# A figure's group: runs of one figure of one machine with one benchsite version (the site combines them:
# site_builder.combine; across versions a harness change would count as noise)
GROUP = ["machine_id", "benchsite_version", "profile", "workload_hash", "framework", "device"]
# A run's figure table (measurement_runs, speedup_runs) has at least these columns
FIGURE = [*GROUP, "run_id", "variant", "value", "lo", "hi"]
ALL = "all"


@dataclass(frozen=True)
class Component:
    """tau^2 of one figure, class and loop, with what it was estimated from."""

    tau2: float
    groups: int  # groups of at least 2 runs with a within-run interval
    runs: int  # their runs
    machines: int  # the machines they are of
    pooled: float  # V
    within: float  # W

    @property
    def tau(self) -> float:
        """The between-run standard deviation of the log figure (about the relative spread of one run)."""
        return float(np.sqrt(self.tau2))


NONE = Component(0.0, 0, 0, 0, float("nan"), float("nan"))


@dataclass(frozen=True)
class Between:
    """tau^2 by (figure, device class, loop), over every run, and by (figure, device class, loop, era) over the runs
    of one era (ROUNDS: runs that measure in rounds, whose own interval already holds the spread between processes;
    SAMPLES: older runs, one process a point); (figure, "all", "all"[, era]) holds the figure's estimate over every
    group (of that era)."""

    components: dict[tuple[str, ...], Component] = field(default_factory=dict)
    machines: int = 0  # machines with a group of several runs, of either figure

    def component(self, figure: str, device_class: str, variant: str, era: str = ALL) -> Component:
        """The era's own estimate where it has groups, else the one over every run."""
        if era != ALL:
            for key in ((figure, device_class, variant, era), (figure, ALL, ALL, era)):
                found = self.components.get(key)
                if found is not None and found.groups:
                    return found
        found = self.components.get((figure, device_class, variant))
        if found is None or not found.groups:
            found = self.components.get((figure, ALL, ALL), NONE)
        if figure == SPEEDUP and not found.groups:
            cpu, accelerator = (self.component(MEASUREMENT, c, variant, era) for c in ("cpu", "accelerator"))
            if cpu.groups or accelerator.groups:
                return Component(cpu.tau2 + accelerator.tau2, 0, 0, 0, float("nan"), float("nan"))
        return found

    def tau2(self, figure: str, device: str, variant: str, era: str = ALL) -> float:
        return self.component(figure, device_class(device), str(variant), era).tau2

    def tau2_of_time(self, device: str, variant: str, rounds: bool) -> float:
        """tau^2 of one run's measured time (a standing's side: runner.contribute.standing.Tau2), of its era."""
        return self.tau2(MEASUREMENT, device, variant, ROUNDS if rounds else SAMPLES)

    def energy_ratio_tau2_column(self, devices: pd.Series, variants: pd.Series) -> np.ndarray:
        """tau^2 of a CPU-over-accelerator energy ratio for each row (its accelerator device and loop): the sum of
        its two sides' energy tau^2, each side one run's rounds. The sides' joules both follow the host's speed, so
        the sum is an upper bound until machines with both sides read in several runs let it be estimated."""
        cpu = self.tau2_column(ENERGY, pd.Series("cpu", index=devices.index), variants)
        return cpu + self.tau2_column(ENERGY, devices, variants)

    def tau2_column(
        self, figure: str, devices: pd.Series, variants: pd.Series, eras: Sequence[str] | None = None
    ) -> np.ndarray:
        """tau^2 for each row of a table, by its device, loop and era (era_of its samples; every run's where
        none is given)."""
        eras = list(eras) if eras is not None else [ALL] * len(devices)
        return np.array(
            [self.tau2(figure, str(d), str(v), e) for d, v, e in zip(devices, variants, eras, strict=True)],
            dtype=float,
        )


ROUNDS, SAMPLES = "rounds", "samples"  # the eras


def era_of(*sides: object) -> str:
    """A figure's era: ROUNDS where each side is one run's rounds (uncertainty.Rounds), else SAMPLES."""
    return ROUNDS if all(isinstance(s, uncertainty.Rounds) for s in sides) else SAMPLES


def device_class(device: str) -> str:
    return "cpu" if device == "cpu" else "accelerator"


def estimate(runs: pd.DataFrame) -> Component:
    """tau^2 from a figure table's runs (FIGURE columns), over every group of it (see the module's formula)."""
    has = runs["lo"].notna() & runs["hi"].notna() & (runs["lo"] > 0) & (runs["lo"] < runs["hi"]) & (runs["value"] > 0)
    rows = runs[has]
    if rows.empty:
        return NONE
    from_interval = (np.log(rows["hi"].to_numpy(float) / rows["lo"].to_numpy(float)) / (2 * uncertainty.Z95)) ** 2
    known = rows["se2"].to_numpy(float) if "se2" in rows else np.full(len(rows), np.nan)
    rows = rows.assign(y=np.log(rows["value"].to_numpy(float)), s2=np.where(np.isnan(known), from_interval, known))
    grouped = rows.groupby(GROUP, sort=True, observed=True, dropna=False)
    size = grouped["y"].transform("size")
    rows = rows[size.to_numpy() >= 2]
    if rows.empty:
        return NONE
    rows = rows.sort_values([*GROUP, "run_id", "y"], kind="stable")  # one order, whatever the files' order
    grouped = rows.groupby(GROUP, sort=True, observed=True, dropna=False)
    deviation = rows["y"] - grouped["y"].transform("mean")
    groups = grouped.ngroups
    pooled = float(np.sum(deviation.to_numpy() ** 2) / (len(rows) - groups))
    within = float(np.mean(rows["s2"].to_numpy()))
    tau2 = paule_mandel(rows["y"].to_numpy(float), rows["s2"].to_numpy(float), grouped.ngroup().to_numpy())
    return Component(tau2, groups, len(rows), rows["machine_id"].nunique(), pooled, within)


def paule_mandel(y: np.ndarray, s2: np.ndarray, group: np.ndarray) -> float:
    """The tau^2 >= 0 at which Q(tau^2), the runs' spread about their group's mean weighted by 1 / (s^2 + tau^2),
    equals its degrees of freedom (runs less groups); 0 where it is below them already. Q falls as tau^2 grows, so
    bisection finds it; to a relative 1e-9, from the same rows the same value."""
    group = np.unique(group, return_inverse=True)[1]
    freedom = len(y) - (int(group.max()) + 1)
    s2 = np.fmax(s2, 1e-12)  # a run whose rounds agree exactly: finite weight

    def q(tau2: float) -> float:
        w = 1.0 / (s2 + tau2)
        mean = np.bincount(group, w * y) / np.bincount(group, w)
        return float(np.sum(w * (y - mean[group]) ** 2))

    if freedom <= 0 or q(0.0) <= freedom:
        return 0.0
    low, high = 0.0, max(float(np.var(y)), 1e-6)
    while q(high) > freedom:
        high *= 2.0
    while high - low > 1e-9 * high:
        middle = (low + high) / 2.0
        low, high = (middle, high) if q(middle) > freedom else (low, middle)
    return (low + high) / 2.0


def estimate_all(measurements: pd.DataFrame, speedups: pd.DataFrame, energy: pd.DataFrame | None = None) -> Between:
    """tau^2 for every figure, device class and loop (measurement_runs, speedup_runs and energy_runs' tables; the
    energy table made from `measurements` where none is given)."""
    components: dict[tuple[str, ...], Component] = {}
    machines: set[str] = set()
    if energy is None:
        energy = energy_runs(measurements)
    for figure, table in ((MEASUREMENT, measurements), (SPEEDUP, speedups), (ENERGY, energy)):
        if table.empty:
            continue
        eras = table["era"] if "era" in table else pd.Series(SAMPLES, index=table.index)
        table = table[[*FIGURE, *(["se2"] if "se2" in table else [])]]
        table = _as_text(table, [*GROUP, "run_id", "variant"])
        table = table.assign(_class=[device_class(d) for d in table["device"]], _era=eras.to_numpy())
        components[(figure, ALL, ALL)] = estimate(table)
        for (cls, variant), part in table.groupby(["_class", "variant"], sort=True, observed=True):
            components[(figure, str(cls), str(variant))] = estimate(part)
        for era, of_era in table.groupby("_era", sort=True, observed=True):
            components[(figure, ALL, ALL, str(era))] = estimate(of_era)
            for (cls, variant), part in of_era.groupby(["_class", "variant"], sort=True, observed=True):
                components[(figure, str(cls), str(variant), str(era))] = estimate(part)
        machines |= _repeated_machines(table)
    return Between(components, len(machines))


def _as_text(table: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """These columns as text, so that groups and their order are the values' own: a categorical column of text
    keeps its codes with its categories in the text's order (what sorting and grouping it as text find), any other
    column becomes text. Every row as a string of its own cost about 0.2 GiB at 10,000 files, the build's peak."""
    out = {}
    for name in names:
        column = table[name]
        categories = column.cat.categories if isinstance(column.dtype, pd.CategoricalDtype) else None
        if categories is not None and pd.api.types.infer_dtype(categories, skipna=False) == "string":
            out[name] = column.cat.reorder_categories(sorted(categories))
        else:
            out[name] = column.astype(str)
    return table.assign(**out)


def _repeated_machines(table: pd.DataFrame) -> set[str]:
    has = table["lo"].notna() & table["hi"].notna()
    counts = table[has].groupby(GROUP, observed=True, dropna=False)["run_id"].transform("nunique")
    return set(table[has][counts.to_numpy() >= 2]["machine_id"].astype(str))


def measurement_runs(every_run: pd.DataFrame) -> pd.DataFrame:
    """Each run's measurements with a time (status ok, a median): its figure (value, median_s) and within-run
    interval (lo, hi: the file's, as the site reads it)."""
    ok = every_run[(every_run["status"] == "ok") & every_run["median_s"].notna()]
    se2 = [uncertainty.rounds_se2(s) for s in ok["samples"]]
    era = [era_of(s) for s in ok["samples"]]
    return ok.assign(
        value=ok["median_s"], lo=ok["ci_lo_s"], hi=ok["ci_hi_s"], se2=np.asarray(se2, dtype=float), era=era
    )


def energy_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """Each run's energy a unit on its measured device (measurement_runs' rows with joules): value joules_per_unit,
    lo, hi its within-run interval across the run's rounds, se2 its rounds' own squared standard error of the log
    (runner.results.energy.log_se2). Empty where no row read a counter."""
    if runs.empty or "joules_per_unit" not in runs.columns:
        return pd.DataFrame(columns=[*FIGURE, "se2", "era"])
    has = runs[runs["joules_per_unit"].to_numpy(float) > 0]
    return has.assign(
        value=has["joules_per_unit"], lo=has["joules_lo"], hi=has["joules_hi"], se2=has["joules_se2"], era=ROUNDS
    )


def speedup_runs(every_run: pd.DataFrame) -> pd.DataFrame:
    """Each run's speedups, paired as the site pairs a machine's (site_builder.analyses.speedups): one run file's
    CPU and accelerator rows of one workload hash, framework and profile, both with a time, no streaming latency,
    no data-parallel point. value = CPU median / accelerator median; lo, hi the within-run interval
    (uncertainty.ratio_interval_columns of the two runs' samples)."""
    ok = measurement_runs(every_run)
    ok = ok[(ok["unit"] != "latency") & ok["world_size"].isna()]
    ok = ok.astype({c: "object" for c in ok.columns if isinstance(ok[c].dtype, pd.CategoricalDtype)})
    join = ["run_id", "machine_id", "workload_hash", "framework", "profile"]
    cpu = ok[ok["device"] == "cpu"][[*join, "median_s", "samples", "stable"]]
    accel = ok[ok["device"] != "cpu"].drop(columns=["value", "lo", "hi", "se2", "era"])
    joined = accel.merge(cpu, on=join, suffixes=("", "_cpu"))
    if joined.empty:
        return joined.assign(value=pd.Series(dtype=float), lo=pd.Series(dtype=float), hi=pd.Series(dtype=float))
    lo, hi = uncertainty.ratio_interval_columns(list(joined["samples_cpu"]), list(joined["samples"]))
    pairs = list(zip(joined["samples_cpu"], joined["samples"], strict=True))
    se2 = [uncertainty.rounds_se2(c, a) for c, a in pairs]
    return joined.assign(
        value=joined["median_s_cpu"] / joined["median_s"],
        lo=lo,
        hi=hi,
        se2=np.asarray(se2, dtype=float),
        era=[era_of(c, a) for c, a in pairs],
    ).reset_index(drop=True)


def shown(runs: pd.DataFrame, figure: str, spread: Between) -> pd.DataFrame:
    """A run's figure table with the interval the site shows for one run's figure (lo, hi: the within-run
    interval widened by tau^2, uncertainty.single_run_interval), the within-run one kept as lo_within, hi_within."""
    if runs.empty:
        return runs.assign(lo_within=runs["lo"], hi_within=runs["hi"])
    tau2 = spread.tau2_column(figure, runs["device"], runs["variant"], runs.get("era"))
    lo, hi = uncertainty.single_run_interval(runs["value"], runs["lo"], runs["hi"], tau2)
    return runs.assign(lo_within=runs["lo"], hi_within=runs["hi"], lo=lo, hi=hi)


def widen_single_runs(frame: pd.DataFrame, spread: Between) -> pd.DataFrame:
    """The frame's measurements with their intervals as the site shows them: a row of one run (runs == 1) widened by
    the measurement's tau^2 (uncertainty.single_run_interval), and its energy a unit where that rests on one run
    (joules_runs == 1: widen_energy); a row combining several runs as combine made it."""
    if frame.empty:
        return frame
    single = frame["runs"].to_numpy() == 1
    eras = [era_of(s) for s in frame["samples"]]
    tau2 = np.where(single, spread.tau2_column(MEASUREMENT, frame["device"], frame["variant"], eras), 0.0)
    lo, hi = uncertainty.single_run_interval(frame["median_s"], frame["ci_lo_s"], frame["ci_hi_s"], tau2)
    return widen_energy(frame.assign(ci_lo_s=lo, ci_hi_s=hi), spread)


def widen_energy(frame: pd.DataFrame, spread: Between) -> pd.DataFrame:
    """A table's joules a unit with the interval the site shows for it: a figure of one run (every row of a per-run
    table; a machine's row where joules_runs is 1) has its own interval across its rounds widened by the energy's
    tau^2 (uncertainty.single_run_interval), where another run of the machine would land; a figure combined over
    several runs (site_builder.combine.energy_of_runs) keeps the interval across them."""
    if frame.empty or "joules_per_unit" not in frame.columns:
        return frame
    joules = frame["joules_per_unit"].to_numpy(float)
    has = ~np.isnan(joules)
    if "joules_runs" in frame.columns:
        has &= frame["joules_runs"].to_numpy() == 1
    if not has.any():
        return frame
    tau2 = np.zeros(len(frame))
    tau2[has] = spread.tau2_column(ENERGY, frame["device"][has], frame["variant"][has])
    lo, hi = uncertainty.single_run_interval(joules, frame["joules_lo"], frame["joules_hi"], tau2)
    return frame.assign(joules_lo=lo, joules_hi=hi)


def note(spread: Between) -> str:
    """What a page says of a single run's interval."""
    if not spread.machines:
        return (
            "A figure from one run of a machine has its within-run 95% interval alone: no machine has several runs "
            "to estimate the spread between runs from."
        )
    machines = f"{spread.machines} machine{'s' if spread.machines != 1 else ''}"
    return (
        "A figure from one run of a machine: its 95% interval is where another run of that machine would land, "
        f"from the run's own spread and the spread between runs of one machine, estimated from {machines} with "
        "several runs."
    )
