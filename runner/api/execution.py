"""Running a plan (execute): the checks, then every group, journaled as each piece ends, into one result file."""

from __future__ import annotations

import contextlib
import itertools
import tempfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from runner import SUITE_VERSION, __version__
from runner.api.ahead import ahead_children, compile_ahead, compile_cache
from runner.api.checks import run_energy, run_equivalence, run_peaks, run_selftests
from runner.api.group import GroupRounds, finish_group, measure_round, next_process
from runner.api.options import PlanError
from runner.api.output import default_output
from runner.api.plan import Plan, Progress, clocked
from runner.api.pools import GroupSpares
from runner.api.resume import open_journal
from runner.api.rounds import paired_sets
from runner.measure import executor, journal
from runner.results.schema import (
    SCHEMA_VERSION,
    DevicePeak,
    EnergyProbe,
    EquivalenceCheck,
    Measurement,
    ResultFile,
    Run,
    Suite,
    SyncSelfTest,
)
from runner.results.storage import save


@dataclass
class _Measured:
    """What the run has measured so far: an interrupted run writes what this holds."""

    selftests: list[SyncSelfTest] = field(default_factory=list)
    equivalence: list[EquivalenceCheck] = field(default_factory=list)
    peaks: list[DevicePeak] = field(default_factory=list)
    energy: list[EnergyProbe] = field(default_factory=list)
    measurements: list[Measurement] = field(default_factory=list)
    interrupted: bool = False


def execute(
    plan: Plan, progress: Progress | None = None, resume: journal.Recovered | None = None
) -> tuple[ResultFile, Path | None]:
    """Run the plan and write the result file; Ctrl-C keeps what finished and still writes it.

    Every finished piece is journaled as it ends (runner.measure.journal), so a run killed outright (kill -9, the
    out-of-memory killer, a power cut) loses nothing that finished: `resume`, that run's journal, skips what
    it holds and the file gets the run's own id and start time. Returns the result and where it was written
    (None if interrupted before anything finished)."""
    progress = progress or Progress()
    if resume is not None and resume.machine_id != plan.machine.id:
        raise PlanError(f"{resume.path} is a run of machine {resume.machine_id}; this machine is {plan.machine.id}")
    run_id = resume.run_id if resume else uuid.uuid4().hex
    started = resume.started_at if resume else datetime.now(timezone.utc)
    log = open_journal(plan, run_id, started, resume, progress)
    if resume is not None:
        progress.note(f"Resuming run {run_id}: {resume.count} measurement(s) already finished are kept.")
    for note in plan.notes:
        progress.note(note)
    measured = _Measured()
    cache = contextlib.ExitStack()
    try:
        cache.enter_context(compile_cache(plan))
        _measure(plan, progress, resume, log, measured)
    except (executor.Interrupted, KeyboardInterrupt):
        measured.interrupted = True
        progress.note("Interrupted: writing the measurements that finished.")
    finally:
        executor.close_fork_servers()
        cache.close()
        if log is not None:
            log.close()
    result = _result_file(plan, run_id, started, measured)
    if measured.interrupted and not measured.measurements:
        return result, None
    path = default_output(plan.options, plan.machine.id, started)
    try:
        save(result, path)
    except OSError as exc:  # the disk filled up or the folder went away during the run: keep the numbers
        fallback = Path(tempfile.gettempdir()) / f"benchsite-{result.run.id}.yaml"
        save(result, fallback)
        progress.note(f"WARNING: could not write {path} ({exc.strerror or exc}); the result is in {fallback}")
        return result, fallback
    if log is not None and not measured.interrupted:
        log.remove()  # the file holds everything now; an interrupted run keeps its journal for --resume
    return result, path


def _measure(
    plan: Plan, progress: Progress, resume: journal.Recovered | None, log: journal.Journal | None, measured: _Measured
) -> None:
    """The self-tests, the peaks, the equivalence check, then every group, into `measured` as each ends and into
    the journal; what a resumed run's journal holds is kept, not measured again."""
    phases = plan.phase_s

    def phase(kind: str, kept: list[Any] | None, run: Callable[[], list[Any]]) -> list[Any]:
        if kept is not None:
            return kept
        items = run()
        if log is not None:
            log.phase(kind, items)
        return items

    with clocked(phases, "sync self-tests"):
        measured.selftests = phase("selftests", resume.selftests if resume else None, lambda: run_selftests(plan))
    for test in measured.selftests:
        if not test.passed:
            progress.note(f"WARNING: {test.framework} sync self-test failed on {test.device}: {test.detail}")
    with clocked(phases, "matrix-product peaks"):
        measured.peaks = phase("peaks", resume.peaks if resume else None, lambda: run_peaks(plan, progress))
    with clocked(phases, "energy sources"):  # probed again on resume: a period and an idle power, not a figure
        measured.energy = run_energy(plan, progress)
    with clocked(phases, "equivalence check"):
        measured.equivalence = phase(
            "equivalence", resume.equivalence if resume else None, lambda: run_equivalence(plan, progress)
        )
    kept = resume.measurements if resume else {}
    processes = itertools.count(next_process(m for done in kept.values() for m in done.values()))
    for groups in paired_sets(plan.groups):
        # a framework, workload and loop on every device: round by round, CPU then accelerator (runner.api.rounds)
        states, records = [], []
        for group in groups:
            key = journal.group_key(group.framework, group.device, group.workload.id, group.variant)
            done = kept.get(key, {})

            def record(index: int, m: Measurement, key: str = key) -> None:
                if log is not None:
                    log.measurement(key, index, m)

            if ahead_children(plan, group, len(group.indices)):
                with clocked(phases, f"compile ahead {group.framework} {group.workload.id}"):
                    compile_ahead(plan, group, progress, done)
            states.append(GroupRounds(plan, group, measured.peaks, done))
            records.append(record)
        finished: set[int] = set()  # the states whose measurements are in `measured` already
        shared = GroupSpares.for_set(plan, groups)  # one pool of spare interpreters for the set's rounds
        try:
            for round_ in range(max(plan.rounds_of(g) for g in groups)):
                for state, record in zip(states, records, strict=True):
                    with clocked(phases, f"measure {state.group.framework} {state.group.workload.id}"):
                        measure_round(state, round_, progress, record, processes, shared)
            for k, (state, record) in enumerate(zip(states, records, strict=True)):
                with clocked(phases, f"measure {state.group.framework} {state.group.workload.id}"):
                    measured.measurements.extend(finish_group(state, progress, record))
                finished.add(k)
        except (executor.Interrupted, KeyboardInterrupt):
            # the rounds that finished are written (an interrupted run's file keeps what it measured), twins or not
            for k, state in enumerate(states):
                if k not in finished:
                    measured.measurements.extend(state.done[i] for i in state.group.indices if i in state.done)
            raise
        finally:
            if shared is not None:
                shared.close()


def _result_file(plan: Plan, run_id: str, started: datetime, measured: _Measured) -> ResultFile:
    """The result file of what the run measured, finished now."""
    finished = datetime.now(timezone.utc)
    return ResultFile(
        schema_version=SCHEMA_VERSION,
        benchsite_version=__version__,
        suite=Suite(version=SUITE_VERSION, profile=plan.options.profile),
        run=Run(
            id=run_id,
            started_at=started,
            finished_at=finished,
            command=plan.options.command,
            time_budget_s=plan.budget_s,
            interrupted=measured.interrupted,
            energy=measured.energy,
        ),
        machine=plan.machine,
        software=plan.software,
        sync_selftests=measured.selftests,
        equivalence=measured.equivalence,
        device_peaks=measured.peaks,
        measurements=measured.measurements,
    )
