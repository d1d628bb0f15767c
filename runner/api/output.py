"""Where the result file goes: --output (a file or a folder), else the results folder, under the machine's id."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from runner.api.options import RunOptions
from runner.results.storage import file_name


def output_is_folder(output: Path) -> bool:
    """--output names a folder when it is one, or when it does not end in .yaml or .yml."""
    return output.is_dir() or output.suffix.lower() not in (".yaml", ".yml")


def output_folder(options: RunOptions) -> Path:
    """The folder the result file goes into (or under, for <machine-id>/): checked before measuring."""
    if options.output is None:
        return options.results_dir
    return options.output if output_is_folder(options.output) else options.output.parent


def default_output(options: RunOptions, machine_id: str, started: datetime) -> Path:
    """--output FILE as given; otherwise <folder>/<machine-id>/<UTC time>.yaml, the folder being --output's or
    results/."""
    output = options.output
    if output is not None and not output_is_folder(output):
        return output
    return output_folder(options) / machine_id / file_name(started)
