"""The spare interpreters of a group whose points each run in a fresh one (runner.measure.spares): started ahead,
so that a point's measuring process and its twin's script do not wait for an interpreter to start."""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

from runner import fidelity
from runner.api.plan import Group, Plan
from runner.measure import protocol, spares

# BENCHSITE_SPARES=0: start each fresh measuring process and twin script when it is needed (runner.measure.spares).
SPARES_ENV = "BENCHSITE_SPARES"


class GroupSpares:
    """The group's spare interpreters (runner.measure.spares), where its points each run in a fresh one: the
    measuring processes (one per point and round) and the twins' scripts (one per point and round). Started a
    batch at a time, sized by what the group's round needs. Off with BENCHSITE_SPARES=0, and for every other group
    (those fork their framework's server)."""

    def __init__(self, plan: Plan, group: Group, job: dict[str, Any], indices: list[int]):
        self.on = bool(job["seed_process"]) and os.environ.get(SPARES_ENV, "1") != "0"
        twinned = [i for i in indices if plan.options.twins and group.twin(i) is not None]
        # What each point imports before its loop in any case (a transformer point: its model family's module too).
        # A pool serves one round of the group: a process per point, a script per twinned point.
        self.imports = {i: protocol.seed_imports(group.workload.id, group.case(i).config) for i in indices}
        expected = Counter(self.imports[i] for i in indices)
        self.workers = {
            imports: spares.Pool(spares.worker_argv(group.framework, imports), expected=count)
            for imports, count in expected.items()
        }
        twin = group.twin(twinned[0]) if twinned else None  # a group's points are one seed's
        scripts = spares.script_argv(*(twin.imports if twin else fidelity.SCRIPT_IMPORTS))
        self.scripts = spares.Pool(scripts, expected=len(twinned))
        # every kind starts beside the others (the scripts' first, as a twin follows its point): one wait, not several
        pools = [self.scripts, *self.workers.values()]
        for pool in pools:
            pool.partners = [other for other in pools if other is not pool]

    def worker_pool(self, index: int) -> spares.Pool:
        """The pool of measuring processes that imported ahead what this point imports."""
        return self.workers[self.imports[index]]

    def take_worker(self, index: int) -> spares.Spare | None:
        return self.worker_pool(index).take() if self.on else None

    def take_script(self) -> spares.Spare | None:
        return self.scripts.take() if self.on else None

    def close(self) -> None:
        for pool in self.workers.values():
            pool.close()
        self.scripts.close()
