"""The build cache: each result file's parsed and validated rows, kept between builds, keyed by the file's content.

A build reads every file under results/ to hash it (SHA-256 of its bytes), and parses, validates and collects only
the files the cache does not hold under that path and hash; everything else comes from the cache. A file removed
from results/ is simply not asked for; a changed file has another hash and is read again.

What a file contributes is what site_builder.load collects from it alone (`Loaded` of one file): the gate's
problems, the measurement rows, the machine summary of that run and the sample digests of the replay check. The
rows are kept columnar (Apache Arrow, one Parquet table for every file, a column naming each row's file), the
machine summary as the build holds it (packed: machines.Machines) and the rest as one JSON document per file beside
them. Files are then merged in file order exactly as a cold build merges them, so a build from the cache writes the
same pages byte for byte (tests/test_build_cache.py).

Never served stale or corrupt:
- the cache lives under a key of the code that decides what a file contributes (the result format, the gate, the
  workload registry, the fidelity rules, the peak tables and the collector, hashed from their source) and the
  format of the cache itself: other code finds no entries and rebuilds;
- its manifest holds the SHA-256 of each table; a table whose bytes differ from it, or that cannot be read, is
  dropped whole and every file is read again (a warning in the build log says so);
- it is written to a temporary folder and renamed into place, so a build killed while writing leaves the old
  cache or none.

Where: BENCHSITE_CACHE names the folder, else `.benchsite-cache/` beside mkdocs.yml (never committed). The
publishing workflow restores and saves it between runs. Its `derived/` folder keeps what the build computes from
many files (site_builder.memo).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np
import pyarrow as pa

from runner.results.storage import Problem
from site_builder import memo
from site_builder.collect import Collector
from site_builder.columns import COLUMNS
from site_builder.tables import UNREADABLE
from site_builder.tables import read as read_tables
from site_builder.tables import replace as replace_tables

log = logging.getLogger("mkdocs.plugins.benchsite")

CACHE_ENV = "BENCHSITE_CACHE"
DEFAULT_FOLDER = ".benchsite-cache"
FORMAT = 3  # 2: the manifest of site_builder.tables; 3: machine summaries packed (machines.Machines)
ROWS, FILES = "rows.parquet", "files.parquet"
# The code whose change changes what a file contributes: the cache is kept per hash of its source.
_ROOT = Path(__file__).resolve().parents[1]
KEYED_SOURCES = (
    "runner/__init__.py",
    "runner/results",
    "runner/gate",
    "runner/workloads",
    "runner/fidelity/__init__.py",
    "runner/fidelity/past_scripts.json",
    "runner/fingerprint/peaks.py",
    "site_builder/collect.py",
    "site_builder/columns.py",
    "site_builder/machines.py",
    "site_builder/load.py",
    "site_builder/cache.py",
)


def code_key() -> str:
    """A hash of every source file in KEYED_SOURCES and of the cache's FORMAT."""
    digest = hashlib.sha256(f"format {FORMAT}\n".encode())
    for name in KEYED_SOURCES:
        path = _ROOT / name
        files = sorted(p for p in path.rglob("*") if p.suffix in (".py", ".json")) if path.is_dir() else [path]
        for file in files:
            digest.update(file.relative_to(_ROOT).as_posix().encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()[:20]


def folder_for(site_root: Path) -> Path:
    return Path(os.environ.get(CACHE_ENV) or site_root / DEFAULT_FOLDER)


def file_sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class Entry:
    """One file's contribution, as site_builder.load collects it from that file alone."""

    path: str
    sha256: str
    problems: list[Problem]
    collector: Collector
    # the replay check's digests (load.Fingerprint's indices, digests, medians); None: the file was not accepted
    fingerprint: tuple[np.ndarray | list[int], bytes, np.ndarray | list[float]] | None


# --- one file's problems and count as JSON; its machine summary packed (machines.Machines) ---------------------


@dataclass
class Kept:
    """What the cache saves of one file, made when the file is merged (`BuildCache.keep`): its problems and count as
    JSON text, its machine summary packed, its replay fingerprint as arrays; the file's collector is let go."""

    path: str
    sha256: str
    meta: str
    machine_ids: list[str]
    machine_started: list[str]
    machine_summaries: list[bytes]
    fingerprint: tuple[np.ndarray, bytes, np.ndarray] | None


def _meta_json(entry: Entry) -> str:
    return json.dumps(
        {
            "problems": [[p.path, p.field, p.message, p.severity] for p in entry.problems],
            "files": entry.collector.files,
        },
        separators=(",", ":"),
    )


# --- the tables --------------------------------------------------------------------------------------------------


def _rows_table(rows: pa.Table, counts: list[int]) -> pa.Table:
    """Every file's rows in file order (a build's merged rows, before any file is taken back out), each marked with
    its file's index."""
    owner = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    return rows.select(COLUMNS).append_column("_file", pa.array(owner, type=pa.int64()))


def _files_table(kept: list[Kept]) -> pa.Table:
    fingerprints = [k.fingerprint for k in kept]
    return pa.table(
        {
            "path": [k.path for k in kept],
            "sha256": [k.sha256 for k in kept],
            "meta": [k.meta for k in kept],
            "machine_ids": pa.array([k.machine_ids for k in kept], type=pa.list_(pa.string())),
            "machine_started": pa.array([k.machine_started for k in kept], type=pa.list_(pa.string())),
            "machine_summaries": pa.array([k.machine_summaries for k in kept], type=pa.list_(pa.binary())),
            "accepted": [f is not None for f in fingerprints],
            "fp_indices": pa.array([f[0] if f else [] for f in fingerprints], type=pa.list_(pa.int64())),
            "fp_digests": pa.array([f[1] if f else b"" for f in fingerprints], type=pa.binary()),
            "fp_medians": pa.array([f[2] if f else [] for f in fingerprints], type=pa.list_(pa.float64())),
        }
    )


class BuildCache:
    """The cache folder of one code key: `get` what it holds for a (path, hash), `save` a build's entries."""

    def __init__(self, folder: Path):
        self.root = folder
        self.folder = folder / code_key()
        self._held: dict[tuple[str, str], int] = {}
        self._files: pa.Table | None = None
        self._rows: pa.Table | None = None  # COLUMNS only: each file's rows are a slice of it
        self._starts: np.ndarray | None = None
        self.dropped: str | None = None  # why what was there could not be used, if it could not
        self._open()

    def _open(self) -> None:
        try:
            tables = read_tables(self.folder, [ROWS, FILES])
            if tables is None:
                return
            files, rows = tables[FILES], tables[ROWS]
            if rows.column_names != [*COLUMNS, "_file"]:
                raise ValueError("the rows table is not the one its manifest describes")
        except UNREADABLE as exc:
            self.dropped = f"build cache in {self.folder} not used ({exc}): every result file is read again"
            log.warning("benchsite: %s", self.dropped)
            return
        self._files, self._rows = files, rows.select(COLUMNS)
        owners = rows.column("_file").to_numpy()
        if len(owners) and np.any(np.diff(owners) < 0):
            self.dropped = f"build cache in {self.folder} not used (its rows are out of order)"
            self._files = self._rows = None
            return
        self._starts = np.searchsorted(owners, np.arange(len(files) + 1))
        paths, hashes = files.column("path").to_pylist(), files.column("sha256").to_pylist()
        self._held = {(path, sha): i for i, (path, sha) in enumerate(zip(paths, hashes, strict=True))}

    def __len__(self) -> int:
        return len(self._held)

    def get(self, path: str, sha256: str) -> Entry | None:
        index = self._held.get((path, sha256))
        if index is None or self._files is None or self._rows is None or self._starts is None:
            return None
        files = self._files.slice(index, 1).to_pylist()[0]
        meta = json.loads(files["meta"])
        collector = Collector()
        collector.files = meta["files"]
        for machine_id, started, packed in zip(
            files["machine_ids"], files["machine_started"], files["machine_summaries"], strict=True
        ):
            collector.machines.put_packed(machine_id, packed, datetime.fromisoformat(started))
        collector.restore(self._rows, int(self._starts[index]), int(self._starts[index + 1]), path)
        fingerprint = (files["fp_indices"], files["fp_digests"], files["fp_medians"]) if files["accepted"] else None
        problems = [Problem(*p) for p in meta["problems"]]
        return Entry(path, sha256, problems, collector, fingerprint)

    def holds(self, path: str, sha256: str) -> bool:
        """Whether `get` finds this file (its path with this content)."""
        return (path, sha256) in self._held

    @staticmethod
    def keep(entry: Entry) -> Kept:
        """What `save` needs of one file's entry, compactly, so that the entry itself can go once merged."""
        machines = entry.collector.machines
        fingerprint = entry.fingerprint
        return Kept(
            entry.path,
            entry.sha256,
            _meta_json(entry),
            list(machines),
            [machines.started_at(m).isoformat() for m in machines],
            [machines.packed(m) for m in machines],
            None
            if fingerprint is None
            else (
                np.asarray(fingerprint[0], dtype=np.int64),
                bytes(fingerprint[1]),
                np.asarray(fingerprint[2], dtype=np.float64),
            ),
        )

    def save(self, kept: list[Kept], rows: pa.Table, counts: list[int]) -> None:
        """Replace the cache with these files (a build's every file, in file order, each as `keep` made it),
        atomically, with `rows`, their rows in the same order (`counts` rows each); other code keys' caches go."""
        if len(counts) != len(kept) or sum(counts) != len(rows):
            raise ValueError(f"{len(rows)} rows in {len(counts)} counts do not belong to {len(kept)} files")
        tables = {ROWS: _rows_table(rows, counts), FILES: _files_table(kept)}
        replace_tables(self.folder, tables, keep={memo.FOLDER})
