"""Rounds of `fidelity.py` runs read back from the committed records, pooled and printed as a Markdown table, by
runner.fidelity.summarise (the statistic of a result file's `fidelity` block). The records' own `pool.py` scripts
name their runs and call these; not part of the test run.

A finished row's rounds come from fidelity.py's --json at full precision; a row a device call cut off before it
finished, from the rounds fidelity.py printed after its last finished row (to 0.01 ms).
"""

from __future__ import annotations

import functools
import importlib.util
import io
import json
import re
import statistics
import tarfile
from pathlib import Path
from types import ModuleType

from runner.fidelity import summarise

RECORDS = Path(__file__).resolve().parent / "records"
ROUND = re.compile(r"seed \(plain ([\d.]+)\), benchsite ([\d.]+) ms")
HEADER = "\n".join(
    ["| run | row | rounds | script | benchsite | ratio (95% interval) | verdict |", "|---|---|---:|---:|---:|---|---|"]
)

Rounds = list[tuple[float, float]]  # (script, benchsite) in ms, one per round
Table = dict[str, list[tuple[str, Rounds]]]  # a row's name: each run's tag and rounds
# fidelity.py's row keys ('SEED MEASUREMENT') by the name item 1's tables give the row
ROW_NAMES = {
    "000 tabular-mlp": "000 tabular-mlp",
    "001 depth-sweep depth=2": "001 depth 2",
    "001 depth-sweep depth=8": "001 depth 8",
    "001 depth-sweep depth=12": "001 depth 12",
    "002 cifar-lenet": "002 cifar-lenet",
    "003 transformer model=bert-base mode=train batch_size=8": "003 BERT-base step",
    "004 mnist-cnn": "004 mnist-cnn",
}


@functools.cache
def read(path: str) -> str:
    """A file's text, relative to tests/benchmarks/records; `ARCHIVE.tgz:MEMBER` reads a member of a tarball."""
    archive, _, member = path.partition(":")
    if not member:
        return RECORDS.joinpath(path).read_text()
    with tarfile.open(RECORDS / archive) as tar:
        found = tar.extractfile(member)
        assert found is not None, path
        return io.TextIOWrapper(found).read()


def rows(path: str) -> dict[str, Rounds]:
    """Every finished row's rounds in a fidelity.py --json file, keyed 'SEED MEASUREMENT', in the file's order."""
    return {
        f"{r['seed']} {r['measurement']}": [
            (1000 * s, 1000 * h) for s, h in zip(r["transcription_rounds"], r["benchsite_rounds"], strict=True)
        ]
        for r in json.loads(read(path))
    }


def finished(path: str, seed: str, measurement: str) -> Rounds:
    """One row's rounds from a fidelity.py --json file."""
    return rows(path)[f"{seed} {measurement}"]


def cut_off(path: str) -> Rounds:
    """The rounds a fidelity.py output printed after its last finished row (a row the device call cut off)."""
    printed = read(path).splitlines()
    last = max((i for i, line in enumerate(printed) if " ratio " in line), default=-1)
    return [(float(m[1]), float(m[2])) for line in printed[last + 1 :] if (m := ROUND.search(line))]


def show(tag: str, name: str, rounds: Rounds) -> None:
    """One line of a HEADER table: the rounds' geometric means and, from two rounds on, the ratio and its verdict."""
    script = [s for s, _ in rounds]
    harness = [h for _, h in rounds]
    if len(rounds) < 2:
        print(f"| {tag} | {name} | {len(rounds)} | {script[0]:,.3f} | {harness[0]:,.3f} | | |")
        return
    s = summarise(harness, script)
    print(
        f"| {tag} | {name} | {len(rounds)} | {statistics.geometric_mean(script):,.3f} | "
        f"{statistics.geometric_mean(harness):,.3f} | {s.ratio:.3f} ({s.ci95[0]:.3f} .. {s.ci95[1]:.3f}) | "
        f"{s.verdict} |"
    )


def append_run(tag: str, files: dict[str, tuple[Table, str]]) -> dict[str, dict[str, Rounds]]:
    """Appends one run's finished rows to the tables that pool them. `files` maps a device's label to its table and
    the run's fidelity.py --json file; returns the run's rows by device and row name, for show_run."""
    run: dict[str, dict[str, Rounds]] = {}
    for device, (pooled, path) in files.items():
        run[device] = {}
        for key, rounds in rows(path).items():
            pooled[ROW_NAMES[key]].append((tag, rounds))
            run[device][ROW_NAMES[key]] = rounds
    return run


def runs_by_row(runs: dict[str, list[str]]) -> Table:
    """Each run's finished rows (a run: its tag and its fidelity.py --json files), gathered by row, for table()."""
    found: Table = {}
    for tag, paths in runs.items():
        for path in paths:
            for name, rounds in rows(path).items():
                found.setdefault(name, []).append((tag, rounds))
    return found


def show_run(tag: str, code: str, run: dict[str, dict[str, Rounds]]) -> None:
    """A run's rows alone, a HEADER table per device."""
    for device, found in run.items():
        print(f"\n{device}, this folder's run alone (code {code})\n\n{HEADER}")
        for name, rounds in found.items():
            show(tag, name, rounds)


def table(title: str, runs_by_row: dict[str, list[tuple[str, Rounds]]]) -> None:
    """A titled HEADER table: each row's runs one line each, then all of that row's rounds pooled."""
    print(f"\n{title}: every run on today's loops, then all its rounds pooled\n\n{HEADER}")
    for name, runs in runs_by_row.items():
        for where, rounds in runs:
            show(where, name, rounds)
        show("**pooled**", name, [r for _, rounds in runs for r in rounds])


def earlier_pool(folder: str) -> ModuleType:
    """Another records folder's pool.py, loaded as a module: a later pool appends its runs to that pool's tables and
    prints them with its main()."""
    spec = importlib.util.spec_from_file_location(f"pool_{folder}", RECORDS / folder / "pool.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
