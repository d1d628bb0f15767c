"""The run journal: every finished measurement on disk at once, so that no kill loses it.

The result file is written once, at the end of a run (atomically, runner.results.storage). Until then the run appends
each finished piece (the sync self-tests, the device peaks, the equivalence checks, every measurement) to a
journal, one JSON line each, flushed and fsync'd before the run goes on. A `kill -9`, the out-of-memory killer
or a power cut loses at most the measurement that was running; `benchsite run --resume` reads the journal,
measures only what it lacks and writes the one result file, with the run's own id and start time.

Journals live in `.benchsite-journal/` beside the results folder (never inside it: `benchsite validate`, the
site and `benchsite submit` never see one), named after the machine and the run id. A line cut short by the
kill is ignored; so is anything after it. The journal is removed once the result file is written.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from runner.results.schema import DevicePeak, EquivalenceCheck, Measurement, SyncSelfTest
from runner.results.storage import fsync_dir

JOURNAL_DIR = ".benchsite-journal"
FORMAT = 1


def journal_dir(output_folder: Path) -> Path:
    """`.benchsite-journal/` beside the folder the result goes into."""
    return output_folder.resolve().parent / JOURNAL_DIR


def group_key(framework: str, device: str, workload: str, variant: str) -> str:
    return f"{framework}/{device}/{workload}/{variant}"


@dataclass
class Recovered:
    """What an interrupted run had finished."""

    path: Path
    run_id: str
    started_at: datetime
    machine_id: str
    options: dict[str, Any]
    selftests: list[SyncSelfTest] | None = None
    peaks: list[DevicePeak] | None = None
    equivalence: list[EquivalenceCheck] | None = None
    # group_key -> case index -> measurement
    measurements: dict[str, dict[int, Measurement]] = field(default_factory=dict)

    @property
    def count(self) -> int:
        return sum(len(done) for done in self.measurements.values())


class Journal:
    """An append-only, fsync'd log of one run."""

    def __init__(self, path: Path, handle: Any):
        self.path = path
        self._handle = handle

    @classmethod
    def create(
        cls, folder: Path, run_id: str, started_at: datetime, machine_id: str, options: dict[str, Any]
    ) -> Journal:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{machine_id}-{run_id}.jsonl"
        journal = cls(path, open(path, "a", encoding="utf-8"))  # noqa: SIM115 (closed by close())
        if path.stat().st_size == 0:
            journal._append(
                {
                    "kind": "run",
                    "format": FORMAT,
                    "run_id": run_id,
                    "started_at": started_at.isoformat(),
                    "machine_id": machine_id,
                    "options": options,
                }
            )
            fsync_dir(folder)
        return journal

    @classmethod
    def reopen(cls, recovered: Recovered) -> Journal:
        _truncate_to_whole_lines(recovered.path)
        return cls(recovered.path, open(recovered.path, "a", encoding="utf-8"))

    def _append(self, record: dict[str, Any]) -> None:
        self._handle.write(json.dumps(record, separators=(",", ":")) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def phase(self, kind: str, items: list[Any]) -> None:
        """A whole phase's results: 'selftests', 'peaks' or 'equivalence'."""
        self._append({"kind": kind, "items": [item.model_dump(mode="json") for item in items]})

    def measurement(self, key: str, index: int, measurement: Measurement) -> None:
        self._append({"kind": "measurement", "group": key, "index": index, "data": measurement.model_dump(mode="json")})

    def close(self) -> None:
        self._handle.close()

    def remove(self) -> None:
        self.close()
        with contextlib.suppress(OSError):
            self.path.unlink()


def _truncate_to_whole_lines(path: Path) -> None:
    """Drop a last line cut short by a kill, so that the next record starts on a line of its own."""
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    if end != len(data):
        with open(path, "r+b") as handle:
            handle.truncate(end)


def _records(path: Path) -> Iterator[dict[str, Any]]:
    with open(path, "rb") as handle:
        for raw in handle:
            if not raw.endswith(b"\n"):
                return  # the line the kill cut short
            try:
                record = json.loads(raw)
            except ValueError:
                return
            if not isinstance(record, dict):
                return
            yield record


def read(path: Path) -> Recovered:
    """Everything the journal at `path` holds. Raises ValueError if it is not a benchsite journal."""
    records = _records(path)
    head = next(records, None)
    if not head or head.get("kind") != "run" or head.get("format") != FORMAT:
        raise ValueError(f"{path} is not a benchsite run journal")
    recovered = Recovered(
        path,
        head["run_id"],
        datetime.fromisoformat(head["started_at"]),
        head["machine_id"],
        head["options"],
    )
    for record in records:
        kind = record.get("kind")
        try:
            if kind == "selftests":
                recovered.selftests = [SyncSelfTest(**item) for item in record["items"]]
            elif kind == "peaks":
                recovered.peaks = [DevicePeak(**item) for item in record["items"]]
            elif kind == "equivalence":
                recovered.equivalence = [EquivalenceCheck(**item) for item in record["items"]]
            elif kind == "measurement":
                done = recovered.measurements.setdefault(record["group"], {})
                done[int(record["index"])] = Measurement(**record["data"])
        except (KeyError, TypeError, ValueError):
            break  # a record this benchsite cannot read: stop here, measure the rest again
    return recovered


def unfinished(folder: Path, machine_id: str) -> list[Path]:
    """This machine's journals, newest first."""
    if not folder.is_dir():
        return []
    paths = folder.glob(f"{machine_id}-*.jsonl")
    return sorted(paths, key=lambda p: p.stat().st_mtime, reverse=True)
