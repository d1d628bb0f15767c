"""The architecture, checked from the source: the import graph of runner/ and site_builder/, built with `ast` from
every import statement (at module level, inside functions and under TYPE_CHECKING alike: a lazy import still ties
two modules together), has no cycle, and the layers import only downward:

- runner.results (the result file's format) imports nothing else of benchsite but the package's version;
- the gate (runner.gate) runs in CI without any framework: it imports no measuring code, framework or engine;
- the site builder imports no measuring code, framework or engine: it reads result files, it never measures;
- the site's analyses (site_builder.analyses) compute on frames: they import no reading, storage or page code.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("runner", "site_builder")
# Standalone scripts that import nothing from benchsite (tests/test_fidelity.py checks that); not modules of it.
NOT_MODULES = ("runner/fidelity/seeds/",)
MEASURING = ("runner.measure", "runner.frameworks", "runner.engines")


def modules(root: Path) -> dict[str, Path]:
    """Every module of the packages under root, by dotted name (a package by its own name)."""
    found = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if rel.startswith(NOT_MODULES):
                continue
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom, known: dict[str, Path]) -> set[str]:
    """The known modules an import statement loads: the longest known prefix of each name it imports (for
    `from X import y`, X.y where y is a module, else X)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            package = module.split(".") if is_package else module.split(".")[:-1]
            package = package[: len(package) - (node.level - 1)]
            base = ".".join([*package, base] if base else package)
        names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
    targets = set()
    for name in names:
        while name and name not in known:
            name = name.rpartition(".")[0]
        if name and name != module:
            targets.add(name)
    return targets


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """module -> the modules of runner/ and site_builder/ it imports anywhere in its source."""
    known = modules(root)
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                graph[name] |= _targets(name, path.name == "__init__.py", node, known)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles: every strongly connected component of more than one module (Tarjan's algorithm,
    iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def test_no_module_imports_itself_back():
    found = cycles(import_graph())
    assert not found, (
        "import cycles (break each with a module of the shared types that imports nothing above it):\n"
        + ("\n".join(" <-> ".join(c) for c in found))
    )


def wrong_imports(layer: tuple[str, ...], allowed: Callable[[str], bool]) -> list[str]:
    """Every import of a module under `layer` whose target `allowed` refuses, as 'module imports target'."""
    graph = import_graph()
    return sorted(
        f"{module} imports {target}"
        for module, targets in graph.items()
        if under(module, layer)
        for target in targets
        if not allowed(target)
    )


def test_the_site_builder_imports_no_measuring_code_and_no_framework():
    wrong = wrong_imports(("site_builder",), lambda target: not under(target, MEASURING))
    assert not wrong, wrong


def test_the_gate_imports_no_measuring_code_and_no_framework():
    wrong = wrong_imports(("runner.gate",), lambda target: not under(target, MEASURING))
    assert not wrong, wrong


def test_the_result_format_imports_nothing_above_it():
    wrong = wrong_imports(("runner.results",), lambda target: target == "runner" or under(target, ("runner.results",)))
    assert not wrong, wrong


# What an analysis may use besides other analyses: the intervals, the machine summaries' type, the result format's
# own figures (runner.results) and the suite's registry (runner.workloads).
ANALYSES_USE = (
    "site_builder.analyses",
    "site_builder.uncertainty",
    "site_builder.machines",
    "runner.results",
    "runner.workloads",
)


def test_the_analyses_compute_on_frames_and_read_nothing():
    wrong = wrong_imports(("site_builder.analyses",), lambda target: target in PACKAGES or under(target, ANALYSES_USE))
    assert not wrong, wrong


@pytest.mark.parametrize("lazy", [False, True])
def test_a_cycle_put_back_is_found(tmp_path, lazy):
    """The graph and the cycle search on a copy of the problem this test exists for: the executor imported the fork
    server, which imported the worker, which imported the executor (there from inside a function)."""
    package = tmp_path / "runner" / "measure"
    package.mkdir(parents=True)
    (tmp_path / "runner" / "__init__.py").write_text("")
    (tmp_path / "site_builder").mkdir()
    (package / "__init__.py").write_text("")
    (package / "executor.py").write_text("from runner.measure import forkserver\n")
    (package / "forkserver.py").write_text("def child():\n    from runner.measure import worker\n")
    back = "def main():\n    from runner.measure.executor import EXIT\n" if lazy else "from . import executor\n"
    (package / "worker.py").write_text(back)
    (package / "protocol.py").write_text("EXIT = 3\n")
    assert cycles(import_graph(tmp_path)) == [
        ["runner.measure.executor", "runner.measure.forkserver", "runner.measure.worker"]
    ]
    (package / "worker.py").write_text("from runner.measure.protocol import EXIT\n")
    assert cycles(import_graph(tmp_path)) == []
