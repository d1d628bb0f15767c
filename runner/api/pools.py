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
    batch at a time, sized by what the pool will still serve: one round of the group, or every round of a paired
    set (for_set). Off with BENCHSITE_SPARES=0, and for every other group (those fork their framework's server)."""

    def __init__(
        self,
        plan: Plan,
        group: Group,
        job: dict[str, Any],
        indices: list[int],
        uses: int = 1,
        twins: list[fidelity.Twin] | None = None,
    ):
        """`uses`: how many times the pool serves these points' measuring processes (a paired set's rounds on each
        of its devices); `twins`: the twins' scripts it serves, one per element (by default each twinned point's
        once a use)."""
        self.on = bool(job["seed_process"]) and os.environ.get(SPARES_ENV, "1") != "0"
        if twins is None:
            twins = [t for t in (group.twin(i) for i in indices) if t is not None] * uses if plan.options.twins else []
        # What each point imports before its loop in any case (a transformer point: its model family's module too).
        # A pool serves `uses` rounds of the points: a process per point, a script per twinned point, each time.
        self.imports = {i: protocol.seed_imports(group.workload.id, group.case(i).config) for i in indices}
        expected = Counter(self.imports[i] for i in indices)
        self.workers = {
            imports: spares.Pool(spares.worker_argv(group.framework, imports), expected=count * uses)
            for imports, count in expected.items()
        }
        self.uses = uses  # the uses left, this one included (expect)
        twin = twins[0] if twins else None  # a group's points are one seed's
        scripts = spares.script_argv(*(twin.imports if twin else fidelity.SCRIPT_IMPORTS))
        self.scripts = spares.Pool(scripts, expected=len(twins))
        # every kind starts beside the others (the scripts' first, as a twin follows its point): one wait, not several
        pools = [self.scripts, *self.workers.values()]
        for pool in pools:
            pool.partners = [other for other in pools if other is not pool]

    @classmethod
    def for_set(cls, plan: Plan, groups: list[Group]) -> GroupSpares | None:
        """One pool for every round of a paired set (runner.api.rounds.paired_sets: one framework, workload and loop
        on each device, their rounds alternating), where its points each run in a fresh interpreter: a spare is
        the same interpreter whichever device and round takes it, so a batch starts as many as the set's rounds
        and devices will take, up to the batch limit, instead of one batch a device and round (a batch of one took
        8 s on the H100 machine's host, one of eleven 11 s). None where the set's points are measured otherwise,
        or its groups differ in their points or what the points import."""
        first = groups[0]
        if not protocol.seed_process(plan.job(first, "measure")) or first.skip_reason:
            return None
        indices = list(first.indices)
        twins: list[fidelity.Twin] = []
        for group in groups:
            if group.skip_reason or list(group.indices) != indices:
                return None
            if any(group.case(i).config != first.case(i).config for i in indices):
                return None
            if plan.options.twins:
                twins += [t for t in (group.twin(i) for i in indices) if t is not None] * plan.rounds_of(group)
        if len({t.imports for t in twins}) > 1:
            return None
        uses = sum(plan.rounds_of(group) for group in groups)
        return cls(plan, first, {"seed_process": True}, indices, uses=uses, twins=twins)

    def expect(self, group: Group, indices: list[int]) -> None:
        """A shared pool (for_set) at the start of a use: what it will still serve is at most this use's points
        (those still due: a point that failed, was skipped or was measured before a resume is not) in each use
        left, so a later batch does not start interpreters for points that no longer come."""
        counts = Counter(self.imports[i] for i in indices)
        for imports, pool in self.workers.items():
            pool.expected = counts.get(imports, 0) * self.uses
        twinned = sum(1 for i in indices if group.twin(i) is not None)
        self.scripts.expected = min(self.scripts.expected, twinned * self.uses)  # 0 stays 0: no twins
        self.uses = max(1, self.uses - 1)

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
