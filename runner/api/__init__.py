"""The callable API behind `benchsite run`: plan, check, measure, assemble, save.

The CLI is a thin layer over `plan_run` and `execute` (and `plan_resumed` for --resume); tests and other tools
call them directly. The measuring itself is runner.measure's; what a run writes is runner.results'.

Its modules, one concern each, each importing only modules above it here:

- options: what a run is asked to do (RunOptions, PlanError), `benchsite run`'s options declared once (RunArgs),
  the command line a result file records, and the settings read from the environment
- output: where the result file goes
- plan: the plan (plan_run): the options checked, the frameworks and the machine probed, the groups of cases;
  Progress, a front end's callbacks
- checks: before measuring, the sync self-tests, the matrix-product peaks and the equivalence check
- ahead: the compile-ahead pass and the run's compile cache
- pools: the spare interpreters of a group whose points each run in a fresh one
- twins: the fidelity twin rounds of a point a seed script covers
- group: measuring one group of cases (measure_group)
- resume: the journal's record of a run, and the plan that finishes an interrupted one (plan_resumed)
- execution: running the plan into one result file (execute)

The names below load with their module on first use: the CLI imports runner.api.options for every command (it
declares `benchsite run`'s options), and the rest (the fingerprint, the frameworks, the result format) waits for
`benchsite run`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from runner.api.ahead import compile_ahead as compile_ahead
    from runner.api.execution import execute as execute
    from runner.api.group import measure_group as measure_group
    from runner.api.options import PlanError as PlanError
    from runner.api.options import RunArgs as RunArgs
    from runner.api.options import RunOptions as RunOptions
    from runner.api.options import command_line as command_line
    from runner.api.plan import Group as Group
    from runner.api.plan import Plan as Plan
    from runner.api.plan import Progress as Progress
    from runner.api.plan import describe_frameworks as describe_frameworks
    from runner.api.plan import plan_run as plan_run
    from runner.api.plan import software_info as software_info
    from runner.api.resume import find_unfinished as find_unfinished
    from runner.api.resume import journal_folder as journal_folder
    from runner.api.resume import plan_resumed as plan_resumed
else:
    # each public name, by the module that defines it (the imports above, for type checkers)
    _HOMES = {
        "compile_ahead": "ahead",
        "execute": "execution",
        "measure_group": "group",
        **dict.fromkeys(("PlanError", "RunArgs", "RunOptions", "command_line"), "options"),
        **dict.fromkeys(("Group", "Plan", "Progress", "describe_frameworks", "plan_run", "software_info"), "plan"),
        **dict.fromkeys(("find_unfinished", "journal_folder", "plan_resumed"), "resume"),
    }

    def __getattr__(name: str) -> Any:
        if name not in _HOMES:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
        globals()[name] = value  # loaded once: later look-ups find it here
        return value
