"""The seeds, re-run: each published experiment's claim beside every machine's reproduction of it.

The published figures are curated data (docs/seeds.yaml, transcribed once from the seed texts with the quote
they come from); the reproductions come from the compared results only: the same workload, the as-written
loop, the same framework. A claim is judged at the resolution it was made (docs/seeds.yaml states it):

- a speedup claim is reproduced where the machine's 95% interval falls on the claimed side of 1x;
- a tie ("no faster on the GPU") carries a margin: reproduced where the interval lies inside 1/margin .. margin,
  differs where it lies wholly outside, undecided where it straddles an edge;
- a break-even measured on a grid (seed 001 timed whole depths only) is reproduced where the machine crosses at
  the seed's grid point: the first point at which the CPU is no longer clearly faster and from which on it
  never is again, the accelerator clearly winning by the sweep's end (`first_wins`);
  the interpolated break-even and its interval stay beside it. A break-even claim without a grid is reproduced
  where the machine's break-even interval contains the published point.

Hardware the seeds used that no contributed machine has is listed as an open invitation.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from site_builder.analyses.speedups import TOO_FEW
from site_builder.site import Site
from site_builder.uncertainty import Interval

SEEDS_FILE = Path(__file__).resolve().parents[1] / "docs" / "seeds.yaml"
REPRODUCED, DIFFERS, MIXED, NOT_YET = "reproduced", "differs", "mixed", "not measured yet"
PARTLY = "partly checked"  # some claim not measured yet: never "reproduced" as a whole
UNDECIDED = "undecided"  # no interval decides it: too wide for a tie's margin, or one sample on each side
EXPECTED_VERDICTS = {
    "accelerator": {"accelerator faster"},
    "cpu": {"CPU faster"},
    "tie": {"CPU faster", "no clear winner"},
}


@dataclass(frozen=True)
class Seed:
    seed: str
    source: str
    title: str
    setting: str
    claims: list[dict[str, Any]]
    invitations: list[dict[str, Any]]
    figures: list[dict[str, Any]]


def load_seeds(path: Path = SEEDS_FILE) -> list[Seed]:
    with path.open(encoding="utf-8") as handle:
        entries = yaml.safe_load(handle)
    seeds = []
    for entry in entries:
        claims = [{"point": {}, "expect": None, "margin": None, "resolution": None, **c} for c in entry.pop("claims")]
        invitations = [{"command": None, "note": None, **i} for i in entry.pop("invitations")]
        figures = entry.pop("figures", [])
        seeds.append(Seed(**entry, claims=claims, invitations=invitations, figures=figures))
    return seeds


def _matches(row: pd.Series, point: dict[str, Any]) -> bool:
    return all(str(row.get(key)) == str(value) for key, value in point.items())


def speedup_reproductions(site: Site, claim: dict[str, Any]) -> list[dict[str, Any]]:
    """Per machine: the as-written speedups for the claim's workload (and point), each with its interval and
    verdict, and the machine's verdict on the claim."""
    table = site.speedups
    if table.empty:
        return []
    rows = table[
        (table["workload"] == claim["workload"])
        & (table["variant"] == "as-written")
        & (table["framework"] == claim["framework"])
    ]
    point = claim.get("point") or {}
    if point:
        rows = rows[rows.apply(lambda r: _matches(r, point), axis=1)] if not rows.empty else rows
    expected = EXPECTED_VERDICTS[claim["expect"]]
    margin = claim.get("margin")
    published = float(claim["published"])
    out = []
    for machine_id, group in rows.groupby("machine_id", sort=True):
        group = group.sort_values(["params", "batch_size"], na_position="first")
        if margin:
            bounds = zip(group["speedup_lo"], group["speedup_hi"], strict=True)
            judged = [tie_verdict(lo, hi, float(margin)) for lo, hi in bounds]
            decided = [v for v in judged if v is not None]
            agree = decided
        else:
            decided = [v for v in group["verdict"] if v != TOO_FEW]
            agree = [v in expected for v in decided]
        verdict = UNDECIDED
        if decided:
            verdict = REPRODUCED if all(agree) else DIFFERS if not any(agree) else MIXED
        out.append(
            {
                "machine_id": machine_id,
                "gpu_model": group["gpu_model"].iloc[0],
                "cpu_model": group["cpu_model"].iloc[0],
                "points": [
                    {
                        "point": r.point,
                        "speedup": r.speedup,
                        "lo": None if pd.isna(r.speedup_lo) else r.speedup_lo,
                        "hi": None if pd.isna(r.speedup_hi) else r.speedup_hi,
                        "verdict": r.verdict,
                        "magnitude": None if margin else magnitude(r.speedup, r.speedup_lo, r.speedup_hi, published),
                    }
                    # the five columns alone: a row tuple of the whole (wide) table cost most of the page
                    for r in group[["point", "speedup", "speedup_lo", "speedup_hi", "verdict"]].itertuples()
                ],
                "verdict": verdict,
            }
        )
    return out


SAME_SIZE = "the published figure lies inside the interval"


def magnitude(speedup: float, lo: Any, hi: Any, published: float) -> str:
    """A speedup's size against the claim's published one, apart from its direction: the published figure inside the
    machine's 95% interval, or how many times smaller or larger the machine's figure is where the interval excludes
    it; without an interval, only the ratio. The seed measured other hardware, so a size that differs tells how the
    machines differ, not that the claim is wrong."""
    ratio = published / speedup
    times = f"{ratio:.1f}x smaller than published" if ratio >= 1 else f"{1 / ratio:.1f}x larger than published"
    if lo is None or hi is None or pd.isna(lo) or pd.isna(hi):
        return f"{times} ({TOO_FEW})"
    if lo <= published <= hi:
        return SAME_SIZE
    return times


def tie_verdict(lo: Any, hi: Any, margin: float) -> bool | None:
    """A tie claim at one point: True where the speedup's interval lies inside 1/margin .. margin, False where it
    lies wholly outside, None where it straddles an edge or there is no interval."""
    if lo is None or hi is None or pd.isna(lo) or pd.isna(hi):
        return None
    if 1 / margin <= lo and hi <= margin:
        return True
    if lo > margin or hi < 1 / margin:
        return False
    return None


def first_wins(site: Site, claim: dict[str, Any]) -> dict[tuple[str, str], Any]:
    """Per (machine, device): its crossing on the claim's grid (e.g. depth): the first measured grid value at which
    the CPU is no longer clearly faster and from which on it never is again, in a sweep whose last point the
    accelerator clearly wins. None where the accelerator never clearly wins by the sweep's end; a pair with no row
    on the grid is absent. (At the seed's resolution, one run per point, a tie at a grid point followed by wins is
    where the accelerator "starts to beat" the CPU.) The claim's rows are split by machine once: looking each
    machine up in the whole table made the seeds' pages quadratic in the machines (at 100,000 files the seeds index
    had not ended after 13 minutes)."""
    grid = claim["resolution"]["grid"]
    table = site.speedups
    rows = table[
        (table["workload"] == claim["workload"])
        & (table["variant"] == "as-written")
        & (table["framework"] == claim["framework"])
    ]
    if rows.empty or grid not in rows:
        return {}
    wins: dict[tuple[str, str], Any] = {}
    for (machine_id, device), group in rows.groupby(["machine_id", "device"], sort=False, observed=True):
        wins[(str(machine_id), str(device))] = _first_win(group, grid)
    return wins


def _first_win(rows: pd.DataFrame, grid: str) -> Any:
    """One machine's and device's first win (first_wins) from its rows, in the table's order."""
    ordered = rows.sort_values(grid)
    values, verdicts = ordered[grid].tolist(), ordered["verdict"].tolist()
    if verdicts[-1] != "accelerator faster":
        return None
    found = None
    for value, verdict in zip(reversed(values), reversed(verdicts), strict=True):
        if verdict == "CPU faster":
            break
        found = value
    return None if found is None or pd.isna(found) else int(found)


def break_even_reproductions(site: Site, claim: dict[str, Any]) -> list[dict[str, Any]]:
    """Per machine: the as-written depth-sweep break-even with its interval and, for a claim made on a grid, the
    grid point where it crosses (first_wins); the verdict at the claim's resolution."""
    crossings = site.crossings
    rows = crossings[(crossings["variant"] == "as-written") & (crossings["framework"] == claim["framework"])]
    resolution = claim.get("resolution")
    wins = first_wins(site, claim) if resolution else {}
    out = []
    for r in rows.sort_values("machine_id").itertuples():
        interval = None
        if r.verdict == "crossover":
            interval = Interval(
                r.break_even_params,
                None if pd.isna(r.break_even_params_lo) else r.break_even_params_lo,
                None if pd.isna(r.break_even_params_hi) else r.break_even_params_hi,
            )
        won_at = wins.get((r.machine_id, r.device))
        if resolution:
            verdict = REPRODUCED if won_at == resolution["first_win"] else DIFFERS
        elif interval is not None:
            verdict = REPRODUCED if interval.spans(float(claim["published"])) else DIFFERS
        else:
            verdict = DIFFERS  # always faster on one side: no break-even inside the sweep
        out.append(
            {
                "machine_id": r.machine_id,
                "gpu_model": r.gpu_model,
                "sweep": r.verdict,
                "break_even": interval.estimate if interval else None,
                "lo": interval.lo if interval else None,
                "hi": interval.hi if interval else None,
                "low": r.low,
                "high": r.high,
                "first_win": won_at,
                "verdict": verdict,
            }
        )
    return out


def invitation_status(site: Site, invitation: dict[str, Any]) -> dict[str, Any]:
    """Whether any contributed machine (any profile or suite) has the invited hardware or framework."""
    hardware = site.hardware
    measured = False
    if "gpu" in invitation and any(invitation["gpu"].lower() in m.lower() for m in hardware.accelerator_models):
        measured = True
    if "cpu" in invitation and any(invitation["cpu"].lower() in m.lower() for m in hardware.cpu_models):
        measured = True
    if "framework" in invitation:
        measured = invitation["framework"] in site.frameworks  # the frame's distinct values, not a copy of its rows
    return {**invitation, "measured": measured}


def figure_view(site: Site, figure: dict[str, Any]) -> dict[str, Any]:
    """A published time with every machine's median of the same workload (as-written), framework and device class
    beside it, each with its 95% interval, fastest first."""
    frame = site.frame
    machines: list[dict[str, Any]] = []
    if not frame.empty:
        on_cpu = frame["device"] == "cpu"
        rows = frame[
            (frame["workload"] == figure["workload"])
            & (frame["variant"] == "as-written")
            & (frame["framework"] == figure["framework"])
            & (frame["status"] == "ok")
            & (on_cpu if figure["device"] == "cpu" else ~on_cpu)
        ]
        for r in rows.sort_values("median_s").itertuples():
            machines.append(
                {
                    "machine_id": r.machine_id,
                    "device_name": r.device_name,
                    "median_s": r.median_s,
                    "lo": None if pd.isna(r.ci_lo_s) else r.ci_lo_s,
                    "hi": None if pd.isna(r.ci_hi_s) else r.ci_hi_s,
                    "unit": r.unit,
                }
            )
    return {**figure, "machines": machines}


# Machines a seed page lists (and draws) per claim and per published figure: the newest contributions. At 10,000
# files the page that listed every machine reached 1.88 MB (seed 003), so at 100,000 it would pass 2 MB. The
# verdict counts above each table count every machine, and the seed's CSV (seed_csv) lists them all.
# BENCHSITE_SEED_MACHINES overrides it (tests).
SEED_MACHINES = 25


def seed_machines() -> int:
    return max(1, int(os.environ.get("BENCHSITE_SEED_MACHINES", SEED_MACHINES)))


def _newest(site: Site, machines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The seed_machines() newest of these machines' rows (a figure's rows are one per measurement, so a machine may
    give several), in the order given."""
    order = {m: i for i, m in enumerate(site.newest_machines)}
    keep = set(sorted({m["machine_id"] for m in machines}, key=lambda m: order.get(m, len(order)))[: seed_machines()])
    return [m for m in machines if m["machine_id"] in keep]


def seed_view(site: Site, seed: Seed) -> dict[str, Any]:
    """What a seed page shows: each claim with every machine's verdict counted and the newest machines listed, its
    invitations, and its published figures beside the newest machines' medians. Computed once per build (the page
    and its CSV both read it)."""
    if seed.seed not in site.seed_views:
        site.seed_views[seed.seed] = _seed_view(site, seed)
    return site.seed_views[seed.seed]


def _seed_view(site: Site, seed: Seed) -> dict[str, Any]:
    claims = []
    for claim in seed.claims:
        if claim["kind"] == "break-even":
            machines = break_even_reproductions(site, claim)
        else:
            machines = speedup_reproductions(site, claim)
        verdicts = [m["verdict"] for m in machines]
        claims.append(
            {
                **claim,
                "machines": machines,
                "shown": _newest(site, machines),
                "summary": {v: verdicts.count(v) for v in (REPRODUCED, DIFFERS, MIXED, UNDECIDED)}
                if machines
                else None,
                "same_size": sum(p.get("magnitude") == SAME_SIZE for m in machines for p in m.get("points", [])),
                "sized": sum(p.get("magnitude") is not None for m in machines for p in m.get("points", [])),
            }
        )
    figures = []
    for figure in seed.figures:
        view = figure_view(site, figure)
        view["shown"] = _newest(site, view["machines"])
        view["machine_count"] = len({m["machine_id"] for m in view["machines"]})
        figures.append(view)
    return {
        "seed": seed,
        "claims": claims,
        "status": overall(claims),
        "invitations": [invitation_status(site, i) for i in seed.invitations],
        "figures": figures,
        "shown_at_most": seed_machines(),
    }


SEED_CSV_COLUMNS = [
    "section",
    "machine_id",
    "cpu_model",
    "accelerator",
    "point",
    "value",
    "value_lo",
    "value_hi",
    "unit",
    "verdict",
    "magnitude",
    "machine_verdict",
]


def seed_csv(view: dict[str, Any]) -> pd.DataFrame:
    """Every machine's reproduction of each claim (a speedup per point, or a break-even in parameters) and every
    machine's median beside each published figure: what the seed page's tables list for the newest machines."""
    rows: list[dict[str, Any]] = []
    for claim in view["claims"]:
        for m in claim["machines"]:
            if claim["kind"] == "break-even":
                rows.append(
                    {
                        "section": claim["text"],
                        "machine_id": m["machine_id"],
                        "accelerator": m["gpu_model"],
                        "value": m["break_even"],
                        "value_lo": m["lo"],
                        "value_hi": m["hi"],
                        "unit": "parameters",
                        "machine_verdict": m["verdict"],
                    }
                )
                continue
            for p in m["points"]:
                rows.append(
                    {
                        "section": claim["text"],
                        "machine_id": m["machine_id"],
                        "cpu_model": m["cpu_model"],
                        "accelerator": m["gpu_model"],
                        "point": p["point"],
                        "value": p["speedup"],
                        "value_lo": p["lo"],
                        "value_hi": p["hi"],
                        "unit": "speedup",
                        "verdict": p["verdict"],
                        "magnitude": p["magnitude"],
                        "machine_verdict": m["verdict"],
                    }
                )
    for figure in view["figures"]:
        for m in figure["machines"]:
            rows.append(
                {
                    "section": figure["what"],
                    "machine_id": m["machine_id"],
                    "accelerator": m["device_name"],
                    "value": m["median_s"],
                    "value_lo": m["lo"],
                    "value_hi": m["hi"],
                    "unit": f"s per {m['unit']}",
                }
            )
    return pd.DataFrame(rows, columns=SEED_CSV_COLUMNS)


def claim_rows(claim: dict[str, Any], machines: list[dict[str, Any]]) -> pd.DataFrame:
    """The claim chart's rows (charts.claim_chart): the published figure, then each machine's reproduction."""
    rows = [{"label": "published", "source": "published", "value": float(claim["published"])}]
    for m in machines:
        if claim["kind"] == "break-even":
            if m["break_even"] is not None:
                rows.append(
                    {
                        "label": m["machine_id"],
                        "source": "reproduction",
                        "value": m["break_even"],
                        "value_lo": m["lo"],
                        "value_hi": m["hi"],
                    }
                )
            continue
        for p in m["points"]:
            label = m["machine_id"] + (f" {p['point']}" if p["point"] else "")
            value = {"value": p["speedup"], "value_lo": p["lo"], "value_hi": p["hi"]}
            rows.append({"label": label, "source": "reproduction", **value})
    return pd.DataFrame(rows, columns=["label", "source", "value", "value_lo", "value_hi"])


def overall(claims: list[dict[str, Any]]) -> str:
    """A seed's status over its claims' directions and machines: what the decided verdicts say (an undecided one,
    whose interval decides nothing, neither agrees nor disagrees with them), undecided where none is decided; a seed
    with a claim no machine has measured is only partly checked. The index and the seed's page both show this."""
    found = [m["verdict"] for c in claims for m in c["machines"]]
    if not found:
        return NOT_YET
    verdicts = [v for v in found if v != UNDECIDED]
    if not verdicts:
        status = UNDECIDED
    elif all(v == REPRODUCED for v in verdicts):
        status = REPRODUCED
    elif all(v == DIFFERS for v in verdicts):
        status = DIFFERS
    else:
        status = MIXED
    if any(not c["machines"] for c in claims):
        return f"{PARTLY}: {status} so far"
    return status
