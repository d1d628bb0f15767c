"""Parquet tables kept in a folder between builds: checksummed, and replaced whole and atomically.

The build cache's two stores (site_builder.cache, each result file's contribution; site_builder.memo, the figures a
build derives) keep their tables this way. A folder holds the tables and a manifest of each one's SHA-256 and row
count. `read` gives them back only when every table matches its manifest; `replace` writes a fresh folder beside the
old one and renames it into place, so a build killed while writing leaves the old folder or none, and removes every
other folder beside it (tables of other code, leftovers of killed builds) except those named in `keep`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

MANIFEST = "manifest.json"
# What reading a folder can raise when its contents are not what was written: the caller drops it and rebuilds.
UNREADABLE = (OSError, ValueError, KeyError, TypeError, pa.ArrowException)
# Rows a row group holds: the writer encodes and compresses one group at a time.
ROW_GROUP_ROWS = 65_536


@dataclass
class Parts:
    """A table given to `replace` a part at a time: each part (a table of `schema`) is written and let go before the
    next is made, so the whole table never exists in memory at once."""

    schema: pa.Schema
    parts: Iterable[pa.Table]


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read(folder: Path, names: list[str]) -> dict[str, pa.Table] | None:
    """The named tables of `folder`, or None when it holds none yet. Raises ValueError where a table's bytes or
    row count differ from its manifest, or one of UNREADABLE where the folder cannot be read."""
    files = open_files(folder, names)
    if files is None:
        return None
    return {name: handle.read() for name, handle in files.items()}


def open_files(folder: Path, names: list[str]) -> dict[str, pq.ParquetFile] | None:
    """The named tables of `folder` opened, not read: a caller reads the columns or row groups it needs when it
    needs them. Checked as `read` checks them (the bytes against the manifest's checksum, the rows against its
    count) before anything is read."""
    manifest = folder / MANIFEST
    if not manifest.exists():
        return None
    expected = json.loads(manifest.read_text())
    files = {}
    for name in names:
        if sha256_of(folder / name) != expected["sha256"][name]:
            raise ValueError(f"{name} does not match its checksum")
        files[name] = pq.ParquetFile(folder / name)
        if files[name].metadata.num_rows != expected["rows"][name]:
            raise ValueError(f"{name} does not have the rows its manifest counts")
    return files


def replace(
    folder: Path,
    tables: dict[str, pa.Table | Parts],
    keep: Container[str] = (),
    dictionary: Sequence[str] | None = None,
    batch_rows: int | None = None,
) -> None:
    """Write `tables` (each whole, or in `Parts`) with their manifest as `folder`, atomically; the other folders
    beside it go, but `keep`. `dictionary`: the only columns Parquet may dictionary-encode (default: any); a column
    of distinct blobs gains nothing from it, and trying costs a hash table of every value while the file is
    written. `batch_rows`: the rows Parquet encodes at a time (its `write_batch_size`, 1,024 by default); a data page
    ends only between batches, so rows of tens of kilobytes want a few at a time, or one batch makes a page of
    megabytes, held twice (encoded and compressed) while it is written."""
    root = folder.parent
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".writing-", dir=root))
    try:
        rows = {}
        for name, table in tables.items():
            given = table if isinstance(table, Parts) else Parts(table.schema, [table])
            names = given.schema.names
            options: dict[str, Any] = (
                {} if dictionary is None else {"use_dictionary": [c for c in dictionary if c in names]}
            )
            if batch_rows is not None:
                options["write_batch_size"] = batch_rows
            rows[name] = 0
            with pq.ParquetWriter(staging / name, given.schema, **options) as writer:
                for part in given.parts:
                    writer.write_table(part, row_group_size=ROW_GROUP_ROWS)
                    rows[name] += len(part)
                    del part  # the part's memory goes before the next is made
                    release_free_memory()  # and back to the system: the writer's pages and the read ones
        manifest = {"sha256": {name: sha256_of(staging / name) for name in tables}, "rows": rows}
        (staging / MANIFEST).write_text(json.dumps(manifest))
        old = root / f".old-{os.getpid()}"
        if folder.exists():
            folder.rename(old)
        staging.rename(folder)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    for other in root.iterdir():
        if other != folder and other.name not in keep and other.is_dir():
            shutil.rmtree(other, ignore_errors=True)


def release_free_memory() -> None:
    """Give the memory freed so far back to the system. Arrow's pool (mimalloc) keeps the pages of buffers it freed
    for reuse, and so does the C library's heap: reading and writing the build cache's Parquet tables, the frame's
    conversions and the charts free hundreds of megabytes at 10,000 files that the next phase does not reuse, and
    the build's peak sat on top of them (2,000 files: 0.44 GiB resident after filling the cache, 0.31 GiB after this).
    A few milliseconds (6 ms the first time after loading 2,000 files, under 1 ms after); done at the end of every
    phase of the build (site_builder.mkdocs_hooks), every few hundred pages while the pages are made, and after
    each part `replace` writes."""
    pa.default_memory_pool().release_unused()
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


def _libc() -> Any:
    """glibc, for malloc_trim; None elsewhere (macOS, musl)."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim.argtypes = [ctypes.c_size_t]
        return libc
    except (OSError, AttributeError):
        return None


_LIBC = _libc()
