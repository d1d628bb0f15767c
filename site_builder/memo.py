"""Figures a build derives, kept between builds, keyed by a hash of their inputs: bootstrap intervals and chart
exports.

site_builder.cache keeps what each result file contributes. What the build then computes from many files changes
only where its inputs change, and these cost most of a build from the file cache:
- a speedup's (or any ratio of medians') 95% bootstrap interval, keyed by both sides' values (and their runs),
  the resamples, the seed and the confidence (site_builder.uncertainty.interval_key);
- a sweep's break-even and its bootstrap replicates, keyed by the sweep's points and both sides' samples at each
  (site_builder.uncertainty.break_even_replicates);
- a chart's PNG and SVG export and the site's copy of Vega, keyed by the chart's whole Vega-Lite spec (its data
  inline) and the export's kind;
- the part of a machine's page that only that machine's data decides (everything but where it stands, which
  changes whenever another machine is added), keyed by that data written column by column (inputs_key, Columns)
  and by a hash of the rendering code (render_code_key), kept as its Markdown and its raw HTML blocks
  (site_builder.render.RawBlocks.detach).
A value found under its key is exactly what computing it gives (float64 and bytes round-trip unchanged), so a build
that finds them writes the same pages as one that computes them (tests/test_build_cache.py).

Never served stale or corrupt, as the file cache:
- the table lives under a key of the code that computes the values (site_builder/uncertainty.py's source, the
  vl-convert version) and this module's FORMAT: other code finds nothing and computes again;
- its manifest holds the table's SHA-256; a table that differs from it or cannot be read is dropped whole (a
  warning in the build log says so);
- it is written to a temporary folder and renamed into place (site_builder.tables, as the file cache).
A build saves only the values it used, so the table holds one build's worth and does not grow with history.

Memory: a build holds neither the kept blobs nor all of its own. The kept table is opened, not read: its keys and
intervals are read up front, a blob with its row group (a part of the last save, about SAVE_PART_BYTES) when a page
asks for it. The blobs a build computes are spilled to Arrow files beside the cache once they pass SAVE_PART_BYTES,
read back through a memory map if asked for again, and copied a part at a time into the saved table.

Where: `derived/` inside the build cache's folder (BENCHSITE_CACHE, default `.benchsite-cache/`).
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import io
import json
import logging
import pickle
import shutil
import struct
import tempfile
import weakref
from collections.abc import Iterator, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from site_builder.tables import UNREADABLE, Parts, open_files
from site_builder.tables import replace as replace_tables

log = logging.getLogger("mkdocs.plugins.benchsite")

FORMAT = 2  # 2: the manifest of site_builder.tables
FOLDER = "derived"  # beside the file cache's code-key folders (site_builder.cache leaves it alone)
TABLE = "derived.parquet"
_ROOT = Path(__file__).resolve().parents[1]
INTERVAL = "interval"
MACHINE_PAGE = "machine-page"
TEXT_KINDS = ("svg", "bundle")  # blobs kept as UTF-8 text; a PNG is bytes
SCHEMA = pa.schema(
    [("kind", pa.string()), ("key", pa.binary()), ("lo", pa.float64()), ("hi", pa.float64()), ("blob", pa.binary())]
)
# Blob bytes a part of a save holds (Memo.save): a few megabytes beside the pages, not a second copy of them all.
SAVE_PART_BYTES = 16 << 20
# Rows Parquet encodes at a time while saving (site_builder.tables.replace): a blob is up to about a hundred kilobytes
# (a machine page; a chart's PNG is more), so a page of a few of them, not one of a whole part's 16 MiB, encoded and
# compressed at once.
SAVE_BATCH_ROWS = 4
T = TypeVar("T")


def code_key() -> str:
    """A hash of the code that computes the kept values: the interval arithmetic, the exporter, FORMAT."""
    digest = hashlib.sha256(f"format {FORMAT}\nvl-convert {metadata.version('vl-convert-python')}\n".encode())
    digest.update((_ROOT / "site_builder" / "uncertainty.py").read_bytes())
    return digest.hexdigest()[:20]


class Memo:
    """One build's view of the kept values: `intervals`/`blob` look up (and mark as used), `put_*` add what the
    build computed, `save` writes what this build used.

    What earlier builds kept stays on disk (`_Kept`): only an index of the keys is held as Python values, a blob is
    read out with its row group when a build asks for it, and `save` takes the used rows a row group at a time (a
    machine page's Markdown is tens of kilobytes, and there is one per machine). What this build computes is held
    until it passes SAVE_PART_BYTES, then spilled (`_Spill`)."""

    def __init__(self, cache_root: Path):
        self.root = cache_root / FOLDER
        self.folder = self.root / code_key()
        self.dropped: str | None = None
        self.hits = 0
        self.misses = 0
        self._kept: _Kept | None = None  # what earlier builds kept (kind, key, lo, hi, blob)
        self._kept_intervals: dict[bytes, int] = {}  # key -> row of _kept
        self._kept_blobs: dict[tuple[str, bytes], int] = {}
        self._kept_lo = self._kept_hi = np.empty(0)
        self._used_rows: set[int] = set()  # rows of _kept this build used
        self._new_intervals: dict[bytes, tuple[float, float]] = {}  # computed by this build
        self._new_blobs: dict[tuple[str, bytes], bytes] = {}  # computed by this build, not spilled yet
        self._new_bytes = 0
        self._spill = _Spill(self.root)
        self._open()

    def _open(self) -> None:
        try:
            files = open_files(self.folder, [TABLE])
            if files is None:
                return
            handle = files[TABLE]
            if handle.schema_arrow.names != ["kind", "key", "lo", "hi", "blob"]:
                raise ValueError("the table is not the one its manifest describes")
            table = handle.read(columns=["kind", "key", "lo", "hi"])
        except UNREADABLE as exc:
            self.dropped = f"derived-figure cache in {self.folder} not used ({exc}): every figure is computed again"
            log.warning("benchsite: %s", self.dropped)
            return
        kinds, keys = table.column("kind").to_pylist(), table.column("key").to_pylist()
        for row, (kind, key) in enumerate(zip(kinds, keys, strict=True)):
            if kind == INTERVAL:
                self._kept_intervals[key] = row
            else:
                self._kept_blobs[(kind, key)] = row
        self._kept = _Kept(handle)
        self._kept_lo = table.column("lo").to_numpy(zero_copy_only=False)
        self._kept_hi = table.column("hi").to_numpy(zero_copy_only=False)

    # --- intervals (site_builder.uncertainty.IntervalMemo) ---

    def _interval(self, key: bytes) -> tuple[float, float] | None:
        row = self._kept_intervals.get(key)
        if row is not None:
            self._used_rows.add(row)
            return float(self._kept_lo[row]), float(self._kept_hi[row])
        return self._new_intervals.get(key)

    def get_intervals(self, keys: Sequence[bytes]) -> list[tuple[float, float] | None]:
        found = [self._interval(key) for key in keys]
        hits = sum(value is not None for value in found)
        self.hits += hits
        self.misses += len(keys) - hits
        return found

    def put_intervals(self, keys: Sequence[bytes], lo: np.ndarray, hi: np.ndarray) -> None:
        for key, a, b in zip(keys, lo.tolist(), hi.tolist(), strict=True):
            self._new_intervals[key] = (a, b)

    # --- blobs: chart exports, the Vega bundle, machine pages ---

    def blob(self, kind: str, key: bytes) -> bytes | None:
        row = self._kept_blobs.get((kind, key))
        if row is not None and self._kept is not None:
            self._used_rows.add(row)
            value: bytes | None = self._kept.blob(row)
        else:
            value = self._new_blobs.get((kind, key))
            if value is None:
                value = self._spill.blob((kind, key))
        if value is None:
            self.misses += 1
            return None
        self.hits += 1
        return value

    def put_blob(self, kind: str, key: bytes, value: bytes) -> None:
        self._new_blobs[(kind, key)] = value
        self._new_bytes += len(value)
        if self._new_bytes >= SAVE_PART_BYTES:
            self._spill.write(self._new_blobs)
            self._new_blobs, self._new_bytes = {}, 0

    def save(self) -> None:
        """Write the values this build used, atomically; other code keys' tables go. Written a part at a time
        (site_builder.tables.Parts), each part about SAVE_PART_BYTES of blobs: a cold build's machine pages are all
        new, and copying them into one table to write it would hold them twice. The blobs this build computed are
        let go as they are written: the memo is spent once saved."""
        replace_tables(
            self.folder, {TABLE: Parts(SCHEMA, self._parts())}, dictionary=["kind"], batch_rows=SAVE_BATCH_ROWS
        )
        self._new_blobs = {}
        self._new_intervals = {}
        self._spill.close()

    def _parts(self) -> Iterator[pa.Table]:
        if self._kept is not None and self._used_rows:
            yield from self._kept.take(sorted(self._used_rows))
        if self._new_intervals:
            keys = list(self._new_intervals)
            values = np.array([self._new_intervals[key] for key in keys], dtype=np.float64).reshape(-1, 2)
            yield _table([INTERVAL] * len(keys), keys, values[:, 0], values[:, 1], [None] * len(keys))
        yield from self._spill.parts()
        names = list(self._new_blobs)
        for named in _by_bytes(names, [len(self._new_blobs[name]) for name in names]):
            blobs: list[bytes | None] = [self._new_blobs.pop(name) for name in named]
            none = [None] * len(named)
            yield _table([kind for kind, _ in named], [key for _, key in named], none, none, blobs)


class _Kept:
    """The table earlier builds kept, open on disk (already checked against its manifest). Each row group is a part
    of the save that wrote it, so a blob is read with its group's blobs, and the last group read is held: a build
    asks for the pages in about the order the last build saved them."""

    def __init__(self, handle: pq.ParquetFile):
        self.handle = handle
        self.starts = [0]  # the first row of each row group, and the row count last
        for group in range(handle.metadata.num_row_groups):
            self.starts.append(self.starts[-1] + handle.metadata.row_group(group).num_rows)
        self._group = -1
        self._blobs: pa.ChunkedArray | None = None

    def _locate(self, row: int) -> tuple[int, int]:
        group = bisect.bisect_right(self.starts, row) - 1
        return group, row - self.starts[group]

    def blob(self, row: int) -> bytes | None:
        group, offset = self._locate(row)
        if group != self._group or self._blobs is None:
            self._blobs = self.handle.read_row_group(group, columns=["blob"]).column(0)
            self._group = group
        value: bytes | None = self._blobs[offset].as_py()
        return value

    def take(self, rows: list[int]) -> Iterator[pa.Table]:
        """The given rows (sorted), a row group at a time, in parts of about SAVE_PART_BYTES."""
        self._blobs, self._group = None, -1
        by_group: dict[int, list[int]] = {}
        for row in rows:
            group, offset = self._locate(row)
            by_group.setdefault(group, []).append(offset)
        for group, offsets in by_group.items():
            table = self.handle.read_row_group(group)
            sizes = pc.binary_length(table.column("blob")).fill_null(0).to_numpy()
            for taken in _by_bytes(offsets, sizes[offsets].tolist()):
                yield table.take(pa.array(taken, type=pa.int64())).cast(SCHEMA)
            del table


class _Spill:
    """Blobs a build computed, written out a part at a time (Arrow files, uncompressed, in a folder of their own
    beside the cache's tables) so that they are not all held until the save. One read back is served from a memory
    map of its part; the save copies the parts into the table. The folder goes when the memo is saved, or when it is
    dropped unsaved (a build that failed)."""

    def __init__(self, root: Path):
        self.root = root
        self.folder: Path | None = None
        self.files: list[Path] = []
        self.index: dict[tuple[str, bytes], tuple[int, int]] = {}  # (kind, key) -> (part, row)
        self._part = -1
        self._table: pa.Table | None = None
        self._cleanup: weakref.finalize | None = None

    def write(self, blobs: dict[tuple[str, bytes], bytes]) -> None:
        if self.folder is None:
            self.root.mkdir(parents=True, exist_ok=True)
            self.folder = Path(tempfile.mkdtemp(prefix=".spill-", dir=self.root))
            self._cleanup = weakref.finalize(self, shutil.rmtree, self.folder, True)
        names = list(blobs)
        none = [None] * len(names)
        table = _table([kind for kind, _ in names], [key for _, key in names], none, none, list(blobs.values()))
        path = self.folder / f"{len(self.files)}.arrow"
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, SCHEMA) as writer:
            writer.write_table(table)
        for row, name in enumerate(names):
            self.index[name] = (len(self.files), row)
        self.files.append(path)

    def _read(self, part: int) -> pa.Table:
        if part != self._part or self._table is None:
            self._table = pa.ipc.open_file(pa.memory_map(str(self.files[part]))).read_all()
            self._part = part
        return self._table

    def blob(self, name: tuple[str, bytes]) -> bytes | None:
        where = self.index.get(name)
        if where is None:
            return None
        value: bytes | None = self._read(where[0]).column("blob")[where[1]].as_py()
        return value

    def parts(self) -> Iterator[pa.Table]:
        for part in range(len(self.files)):
            yield self._read(part)
            self._table, self._part = None, -1

    def close(self) -> None:
        self._table, self._part = None, -1
        self.files, self.index = [], {}
        if self._cleanup is not None:
            self._cleanup()
        self.folder = self._cleanup = None


def _table(kinds: list[str], keys: list[bytes], lo: Any, hi: Any, blobs: list[bytes | None]) -> pa.Table:
    arrays = [
        pa.array(kinds, type=pa.string()),
        pa.array(keys, type=pa.binary()),
        pa.array(lo, type=pa.float64()),
        pa.array(hi, type=pa.float64()),
        pa.array(blobs, type=pa.binary()),
    ]
    return pa.Table.from_arrays(arrays, schema=SCHEMA)


def _by_bytes(items: list[T], sizes: list[int]) -> Iterator[list[T]]:
    """`items` in consecutive groups of about SAVE_PART_BYTES (by `sizes`), each at least one item."""
    group: list[T] = []
    total = 0
    for item, size in zip(items, sizes, strict=True):
        if group and total + size > SAVE_PART_BYTES:
            yield group
            group, total = [], 0
        group.append(item)
        total += size
    if group:
        yield group


@functools.cache
def render_code_key() -> bytes:
    """A hash of everything that renders a page: the site builder's code and templates and the runner's code it
    formats with (a page kept by other code is never served)."""
    digest = hashlib.blake2b(f"format {FORMAT}".encode(), digest_size=16)
    for folder in ("site_builder", "runner"):
        for path in sorted((_ROOT / folder).rglob("*")):
            if path.is_file() and path.suffix in (".py", ".j2", ".json"):
                digest.update(path.relative_to(_ROOT).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.digest()


def inputs_key(kind: str, *inputs: object) -> bytes:
    """The key of something rendered from `inputs` (data frames or runs of their rows, summaries, views) by this
    code. Inputs written differently only miss; nothing that differs can share a key.

    So that the same values give the same key whether a build read them from the files or from the build cache, and
    whichever frame a machine's rows were cut from, a data frame (or `Rows` of one) is written as its columns' names,
    types and values (`Rows.write`: not pandas' blocks, which depend on how the frame was put together; a categorical
    column as its values, not its categories, which depend on the whole site). Anything else is pickled with protocol
    4 (protocol 5 writes a writable NumPy array's data apart from a read-only one's) and without pickle's memo (which
    writes a value seen before as a reference to it only where it is the same object). Each input is written with its
    length, so no two lists of inputs write the same bytes. Until 2026-11-26 a frame was pickled whole with protocol
    5: a machine page kept by a build that read the files was never found by the next, which read the cache, so one
    file added re-rendered every machine page."""
    import pandas as pd

    digest = hashlib.blake2b(render_code_key(), digest_size=16, person=kind.encode()[:16])
    for value in inputs:
        if isinstance(value, pd.DataFrame):
            value = Rows(Columns(value), slice(None))
        if isinstance(value, Rows):
            digest.update(b"R")
            value.write(digest)
            continue
        buffer = io.BytesIO()
        pickler = pickle.Pickler(buffer, protocol=4)
        pickler.fast = True  # no memo: equal values pickle alike whether or not they are one object (no cycles)
        pickler.dump(value)
        digest.update(b"P" + _length(buffer.getbuffer().nbytes))
        digest.update(buffer.getbuffer())
    return digest.digest()


def _length(count: int) -> bytes:
    return count.to_bytes(8, "little")


class Columns:
    """A data frame's column names and types, and each column taken out once as an array (a time with a time zone as
    its int64 ticks), from which `Rows` write any run of its rows. A machine page's key was a frame made and pickled
    per machine: 9.6 s of the 15.4 s that 1,000 machine pages took at 2,000 files on the 2-core VM (2026-11-27), most
    of it pandas' column access, one column at a time, and pickling each row's samples array. Made once for a
    window of machines (site_builder.site), the columns are taken out once for all of them."""

    def __init__(self, frame: Any):
        import pandas as pd

        header = [(str(name), str(dtype)) for name, dtype in frame.dtypes.items()]
        encoded = json.dumps(header).encode()
        self.header = _length(len(encoded)) + encoded
        # No rows: the names alone. An empty slice's types are the whole frame's, which depend on the whole site (a
        # site with no break-even at all makes every column of its empty frame `object`), and no row renders them.
        names = json.dumps([name for name, _ in header]).encode()
        self.empty_header = _length(len(names)) + names
        self.rows = len(frame)
        self.arrays: list[np.ndarray | _Coded] = []
        for _, column in frame.items():
            if isinstance(column.dtype, pd.DatetimeTZDtype):  # to_numpy gives an object array of Timestamps
                self.arrays.append(np.asarray(column.array.asi8))
            else:
                array = column.to_numpy()
                self.arrays.append((_Coded.of(array) if array.dtype == object else None) or array)


class _Coded:
    """A column of text or flags (and missing values) as each distinct value's `_value_bytes` and each row's code:
    a run of its rows writes the bytes that writing its values one by one writes, picked out at once (a machine's
    rows are mostly text: `_value_bytes` a value was 27 s of a 420 s profiled build at 10,000 files)."""

    __slots__ = ("codes", "encoded")

    def __init__(self, codes: np.ndarray, encoded: np.ndarray):
        self.codes, self.encoded = codes, encoded

    @classmethod
    def of(cls, array: np.ndarray) -> _Coded | None:
        """The column coded, or None where it holds anything but text or flags and missing values, or missing values
        of more than one kind (None, NaN and pd.NA write different bytes)."""
        import pandas as pd

        if pd.api.types.infer_dtype(array, skipna=True) not in ("string", "boolean", "empty"):
            return None
        # text or flags alone: equal values are equal strings, or flags (1 and True would be one value)
        codes, uniques = pd.factorize(array, use_na_sentinel=True)
        encoded = [_value_bytes(value) for value in uniques]
        missing = codes < 0
        if missing.any():
            kinds = {_value_bytes(value) for value in array[missing]}
            if len(kinds) != 1:
                return None
            encoded.append(kinds.pop())
            codes = np.where(missing, len(uniques), codes)
        table = np.empty(len(encoded), dtype=object)
        table[:] = encoded
        return cls(codes, table)

    def __getitem__(self, at: slice | np.ndarray) -> bytes:
        return b"".join(self.encoded[self.codes[at]].tolist())


class Rows:
    """A run of a frame's rows, as `inputs_key` writes them: the frame's `Columns` and the rows' positions in it (a
    slice or an array of positions, in the order wanted)."""

    __slots__ = ("at", "columns")

    def __init__(self, columns: Columns, at: slice | np.ndarray):
        self.columns, self.at = columns, at

    def write(self, digest: Any) -> None:
        """The rows into `digest`: the header (names and types; names alone where there are no rows), the row count,
        then column by column, a column of numbers, flags or times as its bytes and any other as each value's
        `_value_bytes`."""
        columns, at = self.columns, self.at
        count = len(range(columns.rows)[at]) if isinstance(at, slice) else len(at)
        digest.update((columns.header if count else columns.empty_header) + _length(count))
        for array in columns.arrays:
            part = array[at]
            if isinstance(part, bytes):  # a _Coded column
                data = part
            elif part.dtype == object:
                data = b"".join(map(_value_bytes, part))
            else:
                data = np.ascontiguousarray(part).tobytes()
            digest.update(_length(len(data)))
            digest.update(data)


def _value_bytes(value: object) -> bytes:
    """One value of an object column, tagged by its kind and, where its size varies, with its length: no two
    sequences of values write the same bytes. A samples array writes its type (uncertainty.RunSamples, Rounds or a
    plain array), its runs' sizes, its rounds' pairing, its type and shape, then its data; anything unforeseen is
    pickled."""
    if isinstance(value, str):
        data = value.encode("utf-8", "surrogatepass")
        return b"s" + _length(len(data)) + data
    if value is None:
        return b"n"
    if isinstance(value, bool | np.bool_):
        return b"T" if value else b"F"
    if isinstance(value, float | np.floating):
        return b"d" + struct.pack("<d", value) if value == value else b"N"  # every NaN alike
    if isinstance(value, int | np.integer):
        text = str(int(value)).encode()
        return b"i" + _length(len(text)) + text
    if isinstance(value, np.ndarray) and value.dtype != object:  # an array of objects' bytes are their addresses
        head = json.dumps(
            [
                type(value).__name__,
                list(getattr(value, "sizes", ())),
                getattr(value, "pairing", ""),
                str(value.dtype),
                list(value.shape),
            ]
        ).encode()
        data = np.ascontiguousarray(value).tobytes()
        return b"a" + _length(len(head)) + head + _length(len(data)) + data
    data = pickle.dumps(value, protocol=4)
    return b"p" + _length(len(data)) + data


def spec_key(kind: str, spec: object) -> bytes:
    """The key of a chart's export: its kind and its whole spec, data included."""
    return hashlib.sha256(kind.encode() + b"\0" + json.dumps(spec, sort_keys=True).encode()).digest()
