"""Every workload hash the suite has ever had, and what a result file must say about it.

A measurement names its workload hash; the gate looks the hash up here and requires the file's workload,
variant, point, unit, examples per unit, parameter count and FLOPs per unit to be the suite's own, so a
contributor cannot state a bigger model or more work than was run. The current suite's table is computed from
runner.workloads.suite; earlier suites' tables (and hashes the current version had
before a loop was fixed within it) are frozen in past_suites.json, written by
`python tests/tools/freeze_suite.py <git revision>` from the code of the last commit of that suite version
(do it when SUITE_VERSION is bumped, for the version left behind). Its `retired` lists, per version, the hashes of
points a profile stopped measuring without any loop changing (written by hand where a profile drops points).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from runner import SUITE_VERSION
from runner.workloads.base import Workload

PAST_SUITES = Path(__file__).with_name("past_suites.json")


@dataclass(frozen=True)
class Known:
    """What one workload hash is: the figures a measurement with that hash must carry."""

    workload: str
    variant: str
    point: dict[str, Any]
    unit: str
    samples_per_unit: int
    params: int | None
    flops_per_unit: float | None
    forward_flops: float | None = None


def entries(workloads: Iterable[Workload], profiles: Iterable[str] = ("tiny", "quick", "standard")) -> dict[str, Known]:
    """hash -> Known for every case of every profile and variant of `workloads`."""
    table: dict[str, Known] = {}
    profiles = tuple(profiles)
    for workload in workloads:
        for profile in profiles:
            for case in workload.cases(profile):
                for variant in workload.variants:
                    table[case.workload_hash(variant)] = Known(
                        case.workload,
                        variant,
                        dict(case.point),
                        case.unit,
                        case.samples_per_unit,
                        case.params,
                        case.flops_per_unit,
                        case.forward_flops,
                    )
    return table


@functools.cache
def table(suite_version: int) -> dict[str, Known] | None:
    """The hashes of one suite version, or None for a version this benchsite does not know."""
    past = json.loads(PAST_SUITES.read_text(encoding="utf-8"))
    rows = past.get("suites", {}).get(str(suite_version))
    frozen = {digest: Known(**row) for digest, row in (rows or {}).items()}
    if suite_version == SUITE_VERSION:
        from runner.workloads.suite import WORKLOADS

        return {**frozen, **entries(WORKLOADS)}
    return frozen if rows is not None else None


@functools.cache
def superseded(suite_version: int) -> frozenset[str]:
    """Hashes an earlier revision of the current suite version had and today's code no longer has: a loop fixed
    within the version (frozen by tests/tools/freeze_suite.py). Their files stay valid (the gate still checks
    their figures), but they timed another loop, so the site shows them apart. A hash past_suites.json lists as
    `retired` (a point no profile measures any more, its loop unchanged) is not superseded. Empty for other
    versions, whose results are apart anyway."""
    if suite_version != SUITE_VERSION:
        return frozenset()
    from runner.workloads.suite import WORKLOADS

    past = json.loads(PAST_SUITES.read_text(encoding="utf-8"))
    frozen = past.get("suites", {}).get(str(suite_version)) or {}
    retired = past.get("retired", {}).get(str(suite_version)) or {}
    return frozenset(frozen) - frozenset(entries(WORKLOADS)) - frozenset(retired)


def point_key(point: dict[str, Any]) -> str:
    return repr(sorted(point.items()))


@functools.cache
def by_point(suite_version: int) -> dict[tuple[str, str], Known]:
    """The suite's entries by (workload, point): what an equivalence check (which names no hash) is held to."""
    return {(k.workload, point_key(k.point)): k for k in (table(suite_version) or {}).values()}


def dump(table: dict[str, Known]) -> dict[str, dict[str, Any]]:
    return {digest: asdict(known) for digest, known in sorted(table.items())}
