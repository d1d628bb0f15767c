"""Nothing lost when a run dies: its journal (the options it set out with, what it finished), and the plan that
finishes an interrupted run (`benchsite run --resume`)."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from pathlib import Path
from typing import Any

from runner.api.options import PlanError, RunOptions
from runner.api.output import output_folder
from runner.api.plan import Plan, Progress, plan_run
from runner.measure import journal


def options_record(options: RunOptions) -> dict[str, Any]:
    """The options as JSON (the journal keeps them, so that --resume measures what the run set out to)."""
    record = dataclasses.asdict(options)
    for name in ("output", "results_dir"):
        record[name] = str(record[name]) if record[name] is not None else None
    return record


def options_from_record(record: dict[str, Any]) -> RunOptions:
    fields = {f.name for f in dataclasses.fields(RunOptions)}
    values = {k: v for k, v in record.items() if k in fields}
    for name in ("output", "results_dir"):
        if values.get(name) is not None:
            values[name] = Path(values[name])
    return RunOptions(**values)


def journal_folder(options: RunOptions) -> Path:
    """Where a run with these options keeps its journal (what `--resume` reads)."""
    return journal.journal_dir(output_folder(options))


def find_unfinished(options: RunOptions, machine_id: str = "*") -> journal.Recovered | None:
    """The newest unfinished run (of this machine, given its id) whose journal lies beside `options`' results
    folder."""
    for path in journal.unfinished(journal_folder(options), machine_id):
        try:
            return journal.read(path)
        except (OSError, ValueError):
            continue
    return None


def plan_resumed(options: RunOptions, progress: Progress | None = None) -> tuple[Plan, journal.Recovered]:
    """The plan that finishes the newest interrupted run whose journal lies beside `options`' results folder, and
    what that run recorded (for execute's `resume`): planned with the run's own options, probed once; a journal of
    other hardware is looked past. PlanError where there is no run to resume."""
    recovered = find_unfinished(options)
    if recovered is None:
        folder = journal_folder(options)
        raise PlanError(f"no interrupted run to resume (no journal in {folder})")
    plan = plan_run(_with_own_model(options_from_record(recovered.options)), progress)
    if recovered.machine_id != plan.machine.id:
        recovered = find_unfinished(options, plan.machine.id)
        if recovered is None:
            raise PlanError("no interrupted run of this machine to resume")
        plan = plan_run(_with_own_model(options_from_record(recovered.options)), progress)
    return plan, recovered


def _with_own_model(options: RunOptions) -> RunOptions:
    """A --model run's options, its model made this process's custom workload again (custom.resumed): PlanError
    where the model cannot be built again or is no longer the one the run measured."""
    if options.model is not None:
        from runner.workloads import custom, register_custom

        try:
            custom.resumed(options.model)
        except custom.SpecError as exc:
            raise PlanError(str(exc)) from None
        register_custom()
    return options


def open_journal(
    plan: Plan, run_id: str, started: datetime, resume: journal.Recovered | None, progress: Progress
) -> journal.Journal | None:
    """The run's journal (runner.measure.journal): a resumed run's reopened, else a new one beside the results
    folder; None, said, where it cannot be written (the run goes on without one)."""
    try:
        if resume is not None:
            return journal.Journal.reopen(resume)
        return journal.Journal.create(
            journal_folder(plan.options), run_id, started, plan.machine.id, options_record(plan.options)
        )
    except OSError as exc:
        progress.note(f"WARNING: no journal ({exc.strerror or exc}): a run killed outright loses what it measured")
        return None
