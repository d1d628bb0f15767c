"""Load every contributed result file: untrusted input, read safely, validated, bad files reported and left out.

Files stream one at a time through runner.storage (size limit, LibYAML's safe loader, the schema, the path
rule) into an aggregate.Collector, so memory holds the tidy measurement columns, never ten thousand parsed
files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from runner.storage import Problem, iter_all
from site_builder.aggregate import Collector


class StrictBuildError(Exception):
    """--strict: a bad result file fails the build instead of being left out."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


@dataclass
class Loaded:
    collector: Collector = field(default_factory=Collector)
    accepted: list[Path] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def rejected(self) -> list[str]:
        return sorted({p.path for p in self.problems if p.severity == "error"})


def load_results(root: Path, strict: bool = False) -> Loaded:
    """Every result file under root, validated and collected; bad files are listed in problems and left out."""
    loaded = Loaded()
    for path, result, problems in iter_all([root]) if root.exists() else ():
        loaded.problems.extend(problems)
        if result is not None and not any(p.severity == "error" for p in problems):
            loaded.collector.add(path, result)
            loaded.accepted.append(path)
    if strict and loaded.problems:
        raise StrictBuildError(loaded.problems)
    return loaded
