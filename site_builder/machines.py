"""Machine summaries: what a machine's page shows besides its measurements (the newest fingerprint, every run, the
newest top operators, equivalence checks and seed-script twins), and `Machines`, every machine's summary kept packed.

site_builder.collect fills them as it reads result files; the build cache keeps them packed (pack_summary).
"""

from __future__ import annotations

import json
import sys
import zlib
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from runner.results.schema import Machine, Software, SyncSelfTest


@dataclass
class MachineSummary:
    """What a machine page shows besides the measurements: the newest fingerprint and every run."""

    machine: Machine
    software: Software
    sync_selftests: list[SyncSelfTest]
    started_at: datetime
    # date, profile, command, measurements, file
    runs: list[tuple[datetime, str, str, int, str]] = field(default_factory=list)
    # (workload_hash, framework, device) -> (started_at, row as JSON text, see pack_top_ops): the newest run's top
    # operators per measurement
    top_ops: dict[tuple[str, str, str], tuple[datetime, str]] = field(default_factory=dict)
    # (framework, workload, point) -> (started_at, status, gradient difference): the newest equivalence check
    equivalence: dict[tuple[str, str, str], tuple[datetime, str, float | None]] = field(default_factory=dict)
    # (workload_hash, framework, device) -> (started_at, row): each run's seed-script twin (runner.fidelity), the
    # newest per measurement; a harness-affected measurement is not in the frame, so in no median or verdict
    fidelity: dict[tuple[str, str, str], tuple[datetime, dict[str, Any]]] = field(default_factory=dict)


def pack_top_ops(row: dict[str, Any]) -> str:
    """One measurement's top operators as the machine summary keeps them: one compact JSON text, not a dict of
    Python values. Every machine's are held at once and only that machine's page reads them back: a generated
    file's took 10.3 KiB as text against 23.7 as values (docs/methodology/cost.md, "The site build at scale")."""
    return json.dumps(row, separators=(",", ":"))


def top_ops_rows(summary: MachineSummary) -> list[dict[str, Any]]:
    """A machine's top operator rows, unpacked (each op a [name, self seconds, calls] list)."""
    return [json.loads(text) for _, text in summary.top_ops.values()]


def measurement_key(workload_hash: str, framework: str, device: str) -> tuple[str, str, str]:
    """A summary's key, its texts interned: every machine's keys share the same few workload hashes."""
    return (sys.intern(workload_hash), sys.intern(framework), sys.intern(device))


def summary_json(s: MachineSummary) -> dict[str, Any]:
    """A machine summary as plain JSON values (summary_from reads them back into an equal summary)."""
    return {
        "machine": s.machine.model_dump(mode="json"),
        "software": s.software.model_dump(mode="json"),
        "sync_selftests": [t.model_dump(mode="json") for t in s.sync_selftests],
        "started_at": s.started_at.isoformat(),
        "runs": [[when.isoformat(), *rest] for when, *rest in s.runs],
        "top_ops": [[list(key), when.isoformat(), text] for key, (when, text) in s.top_ops.items()],
        "equivalence": [[list(key), when.isoformat(), *rest] for key, (when, *rest) in s.equivalence.items()],
        "fidelity": [[list(key), when.isoformat(), row] for key, (when, row) in s.fidelity.items()],
    }


def summary_from(d: dict[str, Any]) -> MachineSummary:
    when = datetime.fromisoformat
    summary = MachineSummary(
        Machine.model_validate(d["machine"]),
        Software.model_validate(d["software"]),
        [SyncSelfTest.model_validate(t) for t in d["sync_selftests"]],
        when(d["started_at"]),
    )
    summary.runs = [(when(at), profile, command, count, source) for at, profile, command, count, source in d["runs"]]
    summary.top_ops = {measurement_key(*key): (when(at), text) for key, at, text in d["top_ops"]}
    summary.equivalence = {tuple(key): (when(at), status, diff) for key, at, status, diff in d["equivalence"]}
    summary.fidelity = {tuple(key): (when(at), row) for key, at, row in d["fidelity"]}
    return summary


def pack_summary(summary: MachineSummary) -> bytes:
    """A summary as Machines keeps it: its JSON (summary_json), compressed."""
    return zlib.compress(json.dumps(summary_json(summary), separators=(",", ":")).encode(), 1)


def unpack_summary(packed: bytes) -> MachineSummary:
    return summary_from(json.loads(zlib.decompress(packed)))


class Machines(MutableMapping[str, MachineSummary]):
    """Every machine's summary, by machine id, each kept packed (pack_summary) and unpacked when asked for.

    A summary holds a fingerprint's validated models and a run's top operators, seed-script twins and equivalence
    checks: 27 KiB of Python values per generated file, 3.8 KiB a machine of two files packed
    (docs/methodology/cost.md, "The site build at scale"). Every machine's is held from the first file read to the last
    page, and a page wants one machine's at a time. A summary asked for is a fresh copy: a change to it is kept only
    once it is stored again (`machines[id] = summary`). `started_at` gives a machine's newest run without unpacking
    it (the machines index sorts by it)."""

    def __init__(self) -> None:
        self._packed: dict[str, bytes] = {}
        self._started: dict[str, datetime] = {}

    def __getitem__(self, machine_id: str) -> MachineSummary:
        return unpack_summary(self._packed[machine_id])

    def __setitem__(self, machine_id: str, summary: MachineSummary) -> None:
        self._packed[machine_id] = pack_summary(summary)
        self._started[machine_id] = summary.started_at

    def __delitem__(self, machine_id: str) -> None:
        del self._packed[machine_id]
        del self._started[machine_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._packed)

    def __len__(self) -> int:
        return len(self._packed)

    def __contains__(self, machine_id: object) -> bool:
        return machine_id in self._packed

    def started_at(self, machine_id: str) -> datetime:
        """The machine's newest run's start (its summary's `started_at`)."""
        return self._started[machine_id]

    def packed(self, machine_id: str) -> bytes:
        """The machine's summary as stored (pack_summary's bytes): what the build cache keeps."""
        return self._packed[machine_id]

    def put_packed(self, machine_id: str, packed: bytes, started_at: datetime) -> None:
        """Store a summary packed elsewhere (the build cache's) whose `started_at` is given."""
        self._packed[machine_id] = packed
        self._started[machine_id] = started_at
