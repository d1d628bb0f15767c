"""Figures a build derives, kept between builds, keyed by a hash of their inputs: bootstrap intervals and chart
exports.

site_builder.cache keeps what each result file contributes. What the build then computes from many files changes
only where its inputs change, and two kinds of it cost most of a build from the file cache:
- a speedup's (or any ratio of medians') 95% bootstrap interval, keyed by both sides' raw samples (and their runs),
  the resamples, the seed and the confidence (site_builder.uncertainty.interval_key);
- a chart's PNG and SVG export and the site's copy of Vega, keyed by the chart's whole Vega-Lite spec (its data
  inline) and the export's kind;
- the part of a machine's page that only that machine's data decides (everything but where it stands, which
  changes whenever another machine is added), keyed by that data pickled and by a hash of the rendering code
  (render_code_key), kept as its Markdown and its raw HTML blocks (site_builder.render.RawBlocks.detach).
A value found under its key is exactly what computing it gives (float64 and bytes round-trip unchanged), so a build
that finds them writes the same pages as one that computes them (tests/test_build_cache.py).

Never served stale or corrupt, as the file cache:
- the table lives under a key of the code that computes the values (site_builder/uncertainty.py's source, the
  vl-convert version) and this module's FORMAT: other code finds nothing and computes again;
- its manifest holds the table's SHA-256; a table that differs from it or cannot be read is dropped whole (a
  warning in the build log says so);
- it is written to a temporary folder and renamed into place (site_builder.tables, as the file cache).
A build saves only the values it used, so the table holds one build's worth and does not grow with history.

Where: `derived/` inside the build cache's folder (BENCHSITE_CACHE, default `.benchsite-cache/`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import pickle
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

import numpy as np
import pyarrow as pa

from site_builder.tables import UNREADABLE
from site_builder.tables import read as read_tables
from site_builder.tables import replace as replace_tables

log = logging.getLogger("mkdocs.plugins.benchsite")

FORMAT = 2  # 2: the manifest of site_builder.tables
FOLDER = "derived"  # beside the file cache's code-key folders (site_builder.cache leaves it alone)
TABLE = "derived.parquet"
_ROOT = Path(__file__).resolve().parents[1]
INTERVAL = "interval"
MACHINE_PAGE = "machine-page"
TEXT_KINDS = ("svg", "bundle")  # blobs kept as UTF-8 text; a PNG is bytes


def code_key() -> str:
    """A hash of the code that computes the kept values: the interval arithmetic, the exporter, FORMAT."""
    digest = hashlib.sha256(f"format {FORMAT}\nvl-convert {metadata.version('vl-convert-python')}\n".encode())
    digest.update((_ROOT / "site_builder" / "uncertainty.py").read_bytes())
    return digest.hexdigest()[:20]


class Memo:
    """One build's view of the kept values: `intervals`/`blob` look up (and mark as used), `put_*` add what the
    build computed, `save` writes what this build used."""

    def __init__(self, cache_root: Path):
        self.root = cache_root / FOLDER
        self.folder = self.root / code_key()
        self.dropped: str | None = None
        self.hits = 0
        self.misses = 0
        self._intervals: dict[bytes, tuple[float, float]] = {}
        self._blobs: dict[tuple[str, bytes], bytes] = {}
        self._used_intervals: dict[bytes, tuple[float, float]] = {}
        self._used_blobs: dict[tuple[str, bytes], bytes] = {}
        self._open()

    def _open(self) -> None:
        try:
            tables = read_tables(self.folder, [TABLE])
            if tables is None:
                return
            table = tables[TABLE]
            if table.column_names != ["kind", "key", "lo", "hi", "blob"]:
                raise ValueError("the table is not the one its manifest describes")
        except UNREADABLE as exc:
            self.dropped = f"derived-figure cache in {self.folder} not used ({exc}): every figure is computed again"
            log.warning("benchsite: %s", self.dropped)
            return
        kinds, keys = table.column("kind").to_pylist(), table.column("key").to_pylist()
        lo, hi, blobs = table.column("lo").to_pylist(), table.column("hi").to_pylist(), table.column("blob").to_pylist()
        for kind, key, a, b, blob in zip(kinds, keys, lo, hi, blobs, strict=True):
            if kind == INTERVAL:
                self._intervals[key] = (a, b)
            else:
                self._blobs[(kind, key)] = blob

    # --- intervals (site_builder.uncertainty.IntervalMemo) ---

    def get_intervals(self, keys: Sequence[bytes]) -> list[tuple[float, float] | None]:
        found = [self._intervals.get(key) for key in keys]
        for key, value in zip(keys, found, strict=True):
            if value is not None:
                self._used_intervals[key] = value
        hits = sum(value is not None for value in found)
        self.hits += hits
        self.misses += len(keys) - hits
        return found

    def put_intervals(self, keys: Sequence[bytes], lo: np.ndarray, hi: np.ndarray) -> None:
        for key, a, b in zip(keys, lo.tolist(), hi.tolist(), strict=True):
            self._intervals[key] = self._used_intervals[key] = (a, b)

    # --- blobs: chart exports and the Vega bundle ---

    def blob(self, kind: str, key: bytes) -> bytes | None:
        value = self._blobs.get((kind, key))
        if value is None:
            self.misses += 1
            return None
        self.hits += 1
        self._used_blobs[(kind, key)] = value
        return value

    def put_blob(self, kind: str, key: bytes, value: bytes) -> None:
        self._blobs[(kind, key)] = self._used_blobs[(kind, key)] = value

    def save(self) -> None:
        """Write the values this build used, atomically; other code keys' tables go."""
        intervals = list(self._used_intervals.items())
        blobs = list(self._used_blobs.items())
        table = pa.table(
            {
                "kind": pa.array([INTERVAL] * len(intervals) + [kind for (kind, _), _ in blobs], type=pa.string()),
                "key": pa.array([k for k, _ in intervals] + [key for (_, key), _ in blobs], type=pa.binary()),
                "lo": pa.array([v[0] for _, v in intervals] + [None] * len(blobs), type=pa.float64()),
                "hi": pa.array([v[1] for _, v in intervals] + [None] * len(blobs), type=pa.float64()),
                "blob": pa.array([None] * len(intervals) + [v for _, v in blobs], type=pa.binary()),
            }
        )
        replace_tables(self.folder, {TABLE: table})


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
    """The key of something rendered from `inputs` (pickled whole: data frames, summaries, views) by this code.
    Inputs that pickle differently only miss; nothing that differs can share a key."""
    digest = hashlib.blake2b(render_code_key(), digest_size=16, person=kind.encode()[:16])
    digest.update(pickle.dumps(inputs, protocol=5))
    return digest.digest()


def spec_key(kind: str, spec: object) -> bytes:
    """The key of a chart's export: its kind and its whole spec, data included."""
    return hashlib.sha256(kind.encode() + b"\0" + json.dumps(spec, sort_keys=True).encode()).digest()
