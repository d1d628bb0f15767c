"""Load every contributed result file: untrusted input, read safely, validated, bad files reported and left out."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from runner.schema import ResultFile
from runner.storage import Problem, load_all


class StrictBuildError(Exception):
    """--strict: a bad result file fails the build instead of being left out."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


@dataclass
class Loaded:
    results: list[tuple[Path, ResultFile]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def rejected(self) -> list[str]:
        return sorted({p.path for p in self.problems if p.severity == "error"})


def load_results(root: Path, strict: bool = False) -> Loaded:
    """Every result file under root, validated; bad files are listed in problems and left out."""
    loaded = Loaded()
    for path, result, problems in load_all([root]):
        loaded.problems.extend(problems)
        if result is not None and not any(p.severity == "error" for p in problems):
            loaded.results.append((path, result))
    if strict and loaded.problems:
        raise StrictBuildError(loaded.problems)
    return loaded
