"""The build caches (site_builder.cache, site_builder.memo): a build from them writes the same site as a cold build,
byte for byte, after files were added, removed and changed; a corrupt or stale cache is detected and rebuilt, never
served."""

from __future__ import annotations

import filecmp
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from site_builder import collect, load, uncertainty
from site_builder import memo as memo_module
from site_builder.cache import BuildCache
from site_builder.load import load_results
from site_builder.memo import Memo

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"


def _corpus(into: Path, count: int) -> list[Path]:
    """`count` committed result files, from as many machines as there are, copied under `into`."""
    by_machine = sorted((sorted(d.glob("*.yaml")) for d in RESULTS.iterdir() if d.is_dir()), key=len, reverse=True)
    picked: list[Path] = []
    while len(picked) < count and any(by_machine):
        for files in by_machine:
            if files and len(picked) < count:
                picked.append(files.pop())
    copies = []
    for path in picked:
        target = into / path.parent.name / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target)
        copies.append(target)
    return copies


def _same(a, b) -> None:
    pd.testing.assert_frame_equal(a.collector.frame(), b.collector.frame(), check_exact=True)
    assert sorted(a.collector.machines) == sorted(b.collector.machines)
    for machine_id, summary in a.collector.machines.items():
        assert summary == b.collector.machines[machine_id]
    assert [str(p) for p in a.problems] == [str(p) for p in b.problems]
    assert a.accepted == b.accepted


def test_what_the_cache_gives_back_is_what_reading_the_files_gives(tmp_path):
    results = tmp_path / "results"
    _corpus(results, 8)  # several machines with more than one file: their runs are merged
    cold = load_results(results, workers=1)
    assert max(len(s.runs) for s in cold.collector.machines.values()) >= 2
    first = load_results(results, workers=1, cache=BuildCache(tmp_path / "cache"))
    assert first.cache_hits == 0
    warm = load_results(results, workers=1, cache=BuildCache(tmp_path / "cache"))
    assert warm.cache_hits == 8
    _same(cold, first)
    _same(cold, warm)  # what was cached is each file's own contribution, not what merging made of it


def test_rows_kept_in_arrow_parts_give_the_frame_one_part_gives(tmp_path, monkeypatch):
    """The collector's rows are Arrow tables: flushed in batches (types inferred per batch, then joined under the
    wider one), kept as slices of the cache's table, and a file taken back out takes exactly its own rows."""
    results = tmp_path / "results"
    _corpus(results, 8)
    whole = load_results(results, workers=1)
    monkeypatch.setattr(collect, "FLUSH_ROWS", 7)  # many parts, some with a column wholly null
    monkeypatch.setattr(load, "CHUNK_FILES", 1)  # each file read (and converted) on its own
    parts = load_results(results, workers=1)
    assert len(parts.collector._parts) > 3
    _same(whole, parts)
    monkeypatch.undo()
    load_results(results, workers=1, cache=BuildCache(tmp_path / "cache"))
    cached = load_results(results, workers=1, cache=BuildCache(tmp_path / "cache"))
    _same(whole, cached)
    # consecutive cached files' rows stay one slice of the cache's table (no table per file at 100,000 files)
    table = whole.collector.table()
    joined = collect.Collector()
    for start, stop, path in ((0, 5, "a"), (5, 9, "b"), (12, 20, "c")):
        one = collect.Collector()
        one.restore(table, start, stop, path)
        joined.merge(one)
    assert [(p.start, p.stop) for p in joined._parts] == [(0, 9), (12, 20)]
    assert joined.table().equals(pa.concat_tables([table.slice(0, 9), table.slice(12, 8)]))
    # a file taken out: the frame is the one the other files give
    gone = str(whole.accepted[3])
    for loaded in (whole, cached):
        loaded.collector.drop_files({gone})
    (results / Path(gone).relative_to(results)).unlink()
    without = load_results(results, workers=1)
    for loaded in (whole, cached):
        pd.testing.assert_frame_equal(loaded.collector.frame(), without.collector.frame(), check_exact=True)
        assert loaded.collector.rows == without.collector.rows == len(without.collector.table())


def test_a_changed_or_corrupt_cache_is_rebuilt_never_served(tmp_path):
    results = tmp_path / "results"
    files = _corpus(results, 3)
    load_results(results, workers=1, cache=BuildCache(tmp_path / "cache"))
    # stale: a file changed after it was cached is read again
    files[0].write_text(files[0].read_text().replace("command: benchsite run", "command: benchsite  run", 1))
    stale = load_results(results, workers=1, cache=BuildCache(tmp_path / "cache"))
    assert stale.cache_hits == 2
    _same(load_results(results, workers=1), stale)
    # corrupt: one byte of the rows table changed on disk
    cache = BuildCache(tmp_path / "cache")
    table = cache.folder / "rows.parquet"
    data = bytearray(table.read_bytes())
    data[len(data) // 2] ^= 0xFF
    table.write_bytes(bytes(data))
    reopened = BuildCache(tmp_path / "cache")
    assert reopened.dropped is not None and "checksum" in reopened.dropped
    rebuilt = load_results(results, workers=1, cache=reopened)
    assert rebuilt.cache_hits == 0
    _same(load_results(results, workers=1), rebuilt)
    assert BuildCache(tmp_path / "cache").dropped is None  # written afresh
    # an unreadable manifest: the same
    (BuildCache(tmp_path / "cache").folder / "manifest.json").write_text("{not json")
    assert BuildCache(tmp_path / "cache").dropped is not None


def _build(results: Path, site: Path, cache: str, phases: Path | None = None) -> str:
    """Build the site; returns the build's log (MkDocs' INFO lines, where the hooks say what the caches gave).
    `phases`: where the build logs its phases (BENCHSITE_BUILD_PHASES)."""
    env = {
        **os.environ,
        "BENCHSITE_RESULTS": str(results),
        "BENCHSITE_STRICT": "1",
        "BENCHSITE_CACHE": cache,
        "NO_MKDOCS_2_WARNING": "1",
        **({"BENCHSITE_BUILD_PHASES": str(phases)} if phases else {}),
    }
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site)],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout + done.stderr


def _differences(a: Path, b: Path) -> list[str]:
    names_a = {p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file()}
    names_b = {p.relative_to(b).as_posix() for p in b.rglob("*") if p.is_file()}
    out = sorted(names_a ^ names_b)
    for name in sorted(names_a & names_b):
        if not filecmp.cmp(a / name, b / name, shallow=False):
            out.append(name)
    return out


@pytest.mark.slow
def test_a_build_from_the_cache_is_byte_identical_to_a_cold_build(tmp_path):
    results, cache = tmp_path / "results", tmp_path / "cache"
    files = _corpus(results, 5)
    _build(results, tmp_path / "first", str(cache))  # fills the cache
    # one file removed, one changed, one added back under another machine's folder name: then build both ways
    removed, changed = files[0], files[1]
    spare = tmp_path / "spare.yaml"
    shutil.move(removed, spare)
    changed.write_text(changed.read_text().replace("command: benchsite run", "command: benchsite  run", 1))
    added = _corpus(tmp_path / "more", 6)[-1]
    target = results / added.parent.name / added.name
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists():
        shutil.copy(added, target)
    log = _build(results, tmp_path / "incremental", str(cache), phases=tmp_path / "phases.jsonl")
    _build(results, tmp_path / "cold", "off")
    assert _differences(tmp_path / "cold", tmp_path / "incremental") == []
    # the phase log (tests/benchmarks/site_scale.py reads it): every phase once, in order, each with its time, the
    # memory at its end and the peak so far, which never falls and is never below the memory at the phase's end
    phases = [json.loads(line) for line in (tmp_path / "phases.jsonl").read_text().splitlines()]
    assert [p["phase"] for p in phases] == [
        "read the result files",
        "frame, figures and intervals",
        "pages' Markdown",
        "open data and CSV downloads",
        "chart exports",
        "MkDocs: every page rendered and written",
        "derived figures saved",
        "search index",
    ]
    peaks = [p["peak_gib"] for p in phases]
    assert peaks == sorted(peaks) and all(p["s"] >= 0 and 0 < p["rss_gib"] <= p["peak_gib"] + 1e-3 for p in phases)
    # the incremental build took files, intervals and exports from the caches, and computed the rest
    kept = re.search(r"derived figures (\d+) kept, (\d+) computed", log)
    assert kept is not None and int(kept.group(1)) > 0 and int(kept.group(2)) > 0, log[-2000:]
    assert re.search(r"[1-9]\d* result files from the build cache", log)
    # a machine none of whose files changed has its page's own part from the memo, although the build that kept it
    # read its rows from the files and this one from the cache (the memo's keys: site_builder.memo.inputs_key)
    untouched = {f.parent.name for f in files} - {removed.parent.name, changed.parent.name, target.parent.name}
    pages = re.search(r"machine pages' own part: (\d+) from the memo, (\d+) rendered", log)
    assert untouched and pages is not None and int(pages.group(1)) == len(untouched), log[-2000:]


def _samples(rng: np.random.Generator, count: int) -> list[np.ndarray]:
    return [rng.lognormal(0, 0.1, size=int(rng.integers(1, 12))) for _ in range(count)]


def test_intervals_kept_between_builds_are_the_ones_computing_gives(tmp_path, monkeypatch):
    rng = np.random.default_rng(3)
    nums = [*_samples(rng, 40), uncertainty.RunSamples([[1.0, 1.1, 1.2], [1.3, 1.25]])]
    dens = [*_samples(rng, 40), np.array([0.5, 0.55])]
    plain = uncertainty.ratio_intervals(nums, dens)
    memo = Memo(tmp_path)
    monkeypatch.setattr(uncertainty, "MEMO", memo)
    half = uncertainty.ratio_intervals(nums[::2], dens[::2])  # half the rows computed, then kept
    both = uncertainty.ratio_intervals(nums, dens)  # those from the memo, the rest computed
    assert (memo.hits, memo.misses) == (21, 21 + 20)
    np.testing.assert_array_equal(half[0], plain[0][::2])
    np.testing.assert_array_equal(both[0], plain[0])
    np.testing.assert_array_equal(both[1], plain[1])
    memo.save()
    again = Memo(tmp_path)
    monkeypatch.setattr(uncertainty, "MEMO", again)
    np.testing.assert_array_equal(uncertainty.ratio_intervals(nums, dens)[1], plain[1])
    assert (again.hits, again.misses) == (41, 0)
    # a median over machines known by their intervals: the same from the memo, open sides included
    est, lo, hi = np.array([1.5, 2.0, 2.5]), np.array([1.2, 1.8, 2.1]), np.array([1.9, 2.3, 2.8])
    # (a member with no interval at all has none to keep: median_of_intervals answers it without the memo)
    open_sided = (np.array([1.5, 2.0]), np.array([np.nan, 1.8]), np.array([1.9, np.nan]))
    for columns in ((est, lo, hi), open_sided):
        monkeypatch.setattr(uncertainty, "MEMO", None)
        computed = uncertainty.median_of_intervals(*columns)
        monkeypatch.setattr(uncertainty, "MEMO", again)
        first, kept = uncertainty.median_of_intervals(*columns), uncertainty.median_of_intervals(*columns)
        assert repr(first) == repr(kept) == repr(computed)
    assert (again.hits, again.misses) == (41 + 2, 2)
    # computed block by block, each row's interval is the one computing it alone gives
    monkeypatch.setattr(uncertainty, "MEMO", None)
    monkeypatch.setattr(uncertainty, "_ROW_BLOCK", 3)
    blocks = uncertainty.ratio_intervals(nums, dens)
    np.testing.assert_array_equal(blocks[0], plain[0])
    np.testing.assert_array_equal(blocks[1], plain[1])
    alone = uncertainty.ratio_intervals(nums[7:8], dens[7:8])
    assert (alone[0][0], alone[1][0]) == (plain[0][7], plain[1][7])
    # the key is what the interval is computed from: the runs of a side count, not only its values
    joined = uncertainty.RunSamples([[1.0, 1.1, 1.2, 1.3, 1.25]])
    assert uncertainty.interval_key(nums[-1], dens[-1], 1000, 1, 0.95) != uncertainty.interval_key(
        joined, dens[-1], 1000, 1, 0.95
    )


def test_break_even_replicates_kept_between_builds_are_the_ones_computing_gives(tmp_path, monkeypatch):
    rng = np.random.default_rng(6)
    xs = [1e3, 1e4, 1e5, 1e6]
    # a sweep whose speedup crosses 1 between its second and third points, one that never does, and one with an
    # open side among its replicates (noisy samples near the crossing)
    crossing = ([rng.lognormal(np.log(s), 0.05, 8) for s in (0.5, 0.8, 1.3, 2.0)], [np.ones(8)] * 4)
    never = ([rng.lognormal(np.log(s), 0.05, 8) for s in (0.3, 0.4, 0.5, 0.6)], [np.ones(8)] * 4)
    noisy = ([rng.lognormal(np.log(s), 0.4, 3) for s in (0.9, 1.0, 1.05, 1.1)], [np.ones(3)] * 4)
    sweeps = (crossing, never, noisy)
    monkeypatch.setattr(uncertainty, "MEMO", None)
    plain = [uncertainty.break_even_replicates(xs, *sweep) for sweep in sweeps]
    assert plain[0] is not None and plain[1] is None and plain[2] is not None
    assert not np.isfinite(plain[2][1]).all()  # open sides (±inf) survive the round trip too
    memo = Memo(tmp_path)
    monkeypatch.setattr(uncertainty, "MEMO", memo)
    first = [uncertainty.break_even_replicates(xs, *sweep) for sweep in sweeps]
    memo.save()
    again = Memo(tmp_path)
    monkeypatch.setattr(uncertainty, "MEMO", again)
    kept = [uncertainty.break_even_replicates(xs, *sweep) for sweep in sweeps]
    assert (again.hits, again.misses) == (3, 0)
    for got in (first, kept):
        assert got[1] is None
        for computed, value in ((plain[0], got[0]), (plain[2], got[2])):
            assert value is not None and computed is not None and value[0] == computed[0]
            np.testing.assert_array_equal(value[1], computed[1])
    # another sweep (one sample changed) is not served the kept value
    changed = ([crossing[0][0] * 1.01, *crossing[0][1:]], crossing[1])
    assert uncertainty.break_even_replicates(xs, *changed) is not None and again.misses == 1


def test_a_corrupt_or_stale_derived_figure_is_computed_again_never_served(tmp_path, monkeypatch):
    rng = np.random.default_rng(4)
    nums, dens = _samples(rng, 10), _samples(rng, 10)
    plain = uncertainty.ratio_intervals(nums, dens)
    memo = Memo(tmp_path)
    monkeypatch.setattr(uncertainty, "MEMO", memo)
    uncertainty.ratio_intervals(nums, dens)
    memo.put_blob("svg", b"k", b"<svg/>")
    assert memo.blob("svg", b"k") == b"<svg/>"
    memo.save()
    # corrupt: a byte of the table flipped on disk; the table is dropped whole and every figure computed again
    table = memo.folder / "derived.parquet"
    data = bytearray(table.read_bytes())
    data[len(data) // 2] ^= 0xFF
    table.write_bytes(bytes(data))
    corrupt = Memo(tmp_path)
    assert corrupt.dropped is not None and "checksum" in corrupt.dropped
    monkeypatch.setattr(uncertainty, "MEMO", corrupt)
    np.testing.assert_array_equal(uncertainty.ratio_intervals(nums, dens)[0], plain[0])
    assert (corrupt.hits, corrupt.misses) == (0, 10) and corrupt.blob("svg", b"k") is None
    # stale: values kept by other code (another code key) are never read
    corrupt.save()
    monkeypatch.setattr(memo_module, "code_key", lambda: "other-code")
    stale = Memo(tmp_path)
    assert (
        stale.dropped is None
        and stale.get_intervals([uncertainty.interval_key(nums[0], dens[0], 1000, 1, 0.95)])[0] is None
    )
    assert stale.hits == 0 and stale.misses == 1


def test_the_memo_saved_a_part_at_a_time_keeps_every_value_it_used(tmp_path, monkeypatch):
    """Blobs of a few hundred bytes against parts of 1 KB: many parts, kept rows and new ones, two saves in a row."""
    monkeypatch.setattr(memo_module, "SAVE_PART_BYTES", 1024)
    rng = np.random.default_rng(5)
    blobs = {("machine-page", bytes([i])): rng.bytes(int(rng.integers(100, 600))) for i in range(40)}
    memo = Memo(tmp_path)
    for (kind, key), value in blobs.items():
        memo.put_blob(kind, key, value)
    # past a part's bytes, what the build computed went to spill files: still found, byte for byte
    spilled = memo._spill.folder
    assert spilled is not None and len(list(spilled.iterdir())) > 10
    assert [memo.blob(kind, key) for kind, key in reversed(blobs)] == list(reversed(blobs.values()))
    memo.put_intervals([b"a", b"b"], np.array([0.5, 0.25]), np.array([1.5, 2.25]))
    memo.save()
    assert not spilled.exists()  # the spill goes with the save
    parts = pq.ParquetFile(memo.folder / memo_module.TABLE).metadata.num_row_groups
    assert parts > 10  # one row group a part: the blobs were not copied into one table to be written
    again = Memo(tmp_path)
    used = list(blobs)[::3]
    # the kept blobs are read a row group at a time when asked for (in any order), never the whole column up front
    assert again._kept is not None and again._kept._blobs is None
    assert [again.blob(kind, key) for kind, key in reversed(used)] == [blobs[k] for k in reversed(used)]
    assert [again.blob(kind, key) for kind, key in used] == [blobs[k] for k in used]
    assert again.get_intervals([b"b"]) == [(0.25, 2.25)]
    again.put_blob("svg", b"new", b"<svg/>")
    again.save()  # what this build used (kept rows, in parts) and what it added; the rest goes
    third = Memo(tmp_path)
    assert [third.blob(kind, key) for kind, key in used] == [blobs[k] for k in used]
    assert third.blob("svg", b"new") == b"<svg/>" and third.get_intervals([b"b", b"a"]) == [(0.25, 2.25), None]
    assert third.blob(*list(blobs)[1]) is None


def test_a_build_that_fails_before_its_save_leaves_no_spill_behind(tmp_path, monkeypatch):
    import gc

    monkeypatch.setattr(memo_module, "SAVE_PART_BYTES", 64)
    memo = Memo(tmp_path)
    memo.put_blob("svg", b"a", b"x" * 100)
    spilled = memo._spill.folder
    assert spilled is not None and spilled.exists()
    del memo
    gc.collect()
    assert not spilled.exists() and Memo(tmp_path).blob("svg", b"a") is None


def test_a_kept_page_gets_its_raw_blocks_back_under_this_builds_numbers():
    from site_builder.render import RawBlocks

    raw = RawBlocks()
    raw.stash("<p>someone else's</p>")
    first = raw.next
    page = f"# A\n\n{raw.stash('<table>1</table>')}text\n\n{raw.stash('<div>2</div>')}"
    detached, blocks = raw.detach(page, first)
    assert blocks == ["<table>1</table>", "<div>2</div>"] and "<!--benchsite-raw-0-->" in detached
    later = RawBlocks()  # another build: other numbers
    for _ in range(5):
        later.stash("<p>x</p>")
    again = later.attach(detached, blocks)
    assert later.restore(again) == raw.restore(page) == "# A\n\n<table>1</table>\ntext\n\n<div>2</div>\n"


def _key_frame(samples: list[np.ndarray] | None = None) -> pd.DataFrame:
    """Four rows with a column of each kind a machine page's inputs hold."""
    return pd.DataFrame(
        {
            "machine_id": pd.Series(["m1", "m1", "m2", "m3"], dtype="str"),
            "workload": pd.Categorical(["a", "b", "a", "c"]),
            "median_s": [1.5, float("nan"), 2.0, 0.25],
            "runs": [1, 2, 1, 3],
            "ok": [True, False, True, True],
            "verdict": pd.Series(["faster", None, float("nan"), "slower"], dtype=object),
            "started_at": pd.to_datetime(["2026-11-01", "2026-11-02", "2026-11-03", "2026-11-04"], utc=True),
            "samples": pd.Series(
                samples
                or [
                    np.array([1.0, 2.0]),
                    uncertainty.RunSamples([[1.0], [2.0, 3.0]]),
                    np.array([3.0]),
                    np.array([], dtype=float),
                ],
                dtype=object,
            ),
        }
    )


def test_a_frames_key_is_its_names_types_and_values_however_the_frame_was_made():
    """memo.inputs_key writes a frame, or Rows of one, column by column (memo.Columns): the same rows give the same key
    however the frame was put together (its blocks, read-only sample arrays, categories, the larger frame a machine's
    rows were cut from, by a slice or by positions), and any one difference in a name, a type, a value, a run's size,
    the rows' order or how the inputs split them gives another."""
    frame = _key_frame()
    key = memo_module.inputs_key("k", frame)
    read_only = [np.array(s) if type(s) is np.ndarray else s for s in frame["samples"]]
    for array in read_only:
        array.flags.writeable = False
    alike = {
        "a copy": frame.copy(),
        "another block layout": pd.concat([frame[[c]] for c in frame.columns], axis=1),
        "read-only samples": frame.assign(samples=pd.Series(read_only, dtype=object)),
        "other categories": frame.assign(workload=pd.Categorical(frame["workload"], categories=["c", "b", "a", "z"])),
    }
    for name, other in alike.items():
        assert memo_module.inputs_key("k", other) == key, name
    larger = pd.concat([_key_frame().iloc[[3, 0]], frame, _key_frame().iloc[[1]]], ignore_index=True)
    columns = memo_module.Columns(larger)
    assert memo_module.inputs_key("k", memo_module.Rows(columns, slice(2, 6))) == key
    assert memo_module.inputs_key("k", memo_module.Rows(columns, np.array([2, 3, 4, 5]))) == key
    assert memo_module.inputs_key("k", memo_module.Rows(columns, np.array([3, 2, 4, 5]))) != key
    assert memo_module.inputs_key("k", memo_module.Rows(columns, slice(2, 5))) != key

    def changed(column: str, row: int, value: object) -> pd.DataFrame:
        values = frame[column].to_numpy(copy=True).astype(object)
        values[row] = value
        return frame.assign(**{column: pd.Series(values, dtype=frame[column].dtype)})

    runs = list(frame["samples"])
    runs[1] = uncertainty.RunSamples([[1.0, 2.0], [3.0]])  # the same samples, the runs split elsewhere
    plain = list(frame["samples"])
    plain[1] = np.asarray(plain[1]).copy()  # the same samples as one run
    different = {
        "a time a bit further": changed("median_s", 0, 1.5000000001),
        "a text": changed("machine_id", 2, "m4"),
        "None for NaN": changed("verdict", 2, None),
        "a sample": _key_frame([np.array([1.0, 2.5]), *runs[1:]]),
        "runs split elsewhere": frame.assign(samples=pd.Series(runs, dtype=object)),
        "runs forgotten": frame.assign(samples=pd.Series(plain, dtype=object)),
        "an empty samples list for a gap": changed("samples", 3, None),
        "a start a microsecond later": frame.assign(started_at=frame["started_at"] + pd.Timedelta(microseconds=1)),
        "a whole number as a float": frame.assign(runs=frame["runs"].astype(float)),
        "the same texts, not a categorical": frame.assign(workload=frame["workload"].astype(object)),
        "a flag": changed("ok", 1, True),
        "a column renamed": frame.rename(columns={"runs": "run"}),
        "two rows swapped": frame.iloc[[1, 0, 2, 3]],
        "a row fewer": frame.iloc[:3],
        "a category's value": frame.assign(workload=pd.Categorical(["a", "b", "b", "c"])),
    }
    for name, other in different.items():
        assert memo_module.inputs_key("k", other) != key, name
    # where the inputs split the rows, and what else they are, counts too
    assert memo_module.inputs_key("k", frame.iloc[:1], frame.iloc[1:]) != memo_module.inputs_key(
        "k", frame.iloc[:2], frame.iloc[2:]
    )
    assert memo_module.inputs_key("k", frame, None) != memo_module.inputs_key("k", None, frame)
    # no rows: the names count, the types do not (an empty slice's types are the whole site's frame's: a site without
    # any break-even makes every column of that frame `object`, and then every machine page missed the memo)
    empty = memo_module.inputs_key("k", frame.iloc[:0])
    assert memo_module.inputs_key("k", frame.iloc[:0].astype(object)) == empty
    assert memo_module.inputs_key("k", memo_module.Rows(columns, slice(0, 0))) == empty
    assert memo_module.inputs_key("k", frame.iloc[:0].rename(columns={"runs": "run"})) != empty
    assert memo_module.inputs_key("k", frame.iloc[:1].astype(object)) != memo_module.inputs_key("k", frame.iloc[:1])
    # an array of objects is written as its values (pickled), never as its bytes, which are the objects' addresses
    boxed = [np.array(["".join(["a", "b"]), float("1.5")], dtype=object) for _ in range(2)]  # equal, not the same
    assert len({memo_module._value_bytes(b) for b in boxed}) == 1
    assert memo_module.inputs_key("k", frame) != memo_module.inputs_key("other kind", frame)


def test_a_column_of_text_or_flags_writes_the_bytes_its_values_write_one_by_one():
    """memo.Columns codes a column of text or flags (each distinct value's bytes written once, picked out by code):
    a run of its rows must write exactly what writing each value writes (memo._value_bytes), with None, NaN and
    pd.NA kept apart, and a column that mixes them, or holds other values, written value by value."""
    columns = {
        "text": pd.Series(["b", "a", "b", "=c", "a", "b"], dtype=object),
        "text and NaN": pd.Series(["b", float("nan"), "a", "b", float("nan"), "c"], dtype=object),
        "text and None": pd.Series(["b", None, "a", "b", None, "c"], dtype=object),
        "text, None and NaN": pd.Series(["b", None, "a", float("nan"), None, "c"], dtype=object),
        "text and pd.NA": pd.Series(["b", pd.NA, "a", "b", "a", "c"], dtype=object),
        "pandas text": pd.Series(["b", None, "a", "b", "a", "c"], dtype="str"),
        "categorical": pd.Categorical(["z", "a", None, "z", "a", "a"], categories=["z", "a", "q"]),
        "flags and None": pd.Series([True, None, False, True, True, None], dtype=object),
        "flags": pd.Series([True, False, False, True, True, False], dtype=object),
        "flags and ones": pd.Series([True, 1, False, 0, True, 1], dtype=object),
        "text and numbers": pd.Series(["1", 1, 1.0, "a", None, "b"], dtype=object),
        "all missing": pd.Series([None] * 6, dtype=object),
        "no rows' values": pd.Series([float("nan")] * 6, dtype=object),
    }
    frame = pd.DataFrame(columns)
    coded = memo_module.Columns(frame)
    assert sum(isinstance(a, memo_module._Coded) for a in coded.arrays) >= 8  # the coded path is the one tested
    for at in (slice(None), slice(1, 5), slice(3, 3), np.array([5, 0, 3, 3, 1]), np.array([], dtype=np.intp)):
        for (name, column), array in zip(frame.items(), coded.arrays, strict=True):
            values = column.to_numpy()[at]
            one_by_one = b"".join(map(memo_module._value_bytes, values))
            assert (array[at] if isinstance(array, memo_module._Coded) else one_by_one) == one_by_one, (name, at)
    # so the key tells every one of these columns apart from every other, where their values differ
    keys = {memo_module.inputs_key("k", frame[[name]].set_axis(["c"], axis=1)) for name in columns}
    assert len(keys) == len(columns)


def test_a_site_that_lets_the_collector_s_rows_go_is_the_site_that_keeps_them(tmp_path):
    """The build lets the collector's rows go once its last frame is made (Site.from_collector(release=True), from
    the build cache's tables): every table the site holds is the one a site made without letting go holds, and the
    collector then holds no rows (its files and machines stay)."""
    from site_builder.site import Site

    load_results(RESULTS, workers=1, cache=BuildCache(tmp_path / "cache"))  # fills the cache the others read
    kept = load_results(RESULTS, workers=1, cache=BuildCache(tmp_path / "cache"))
    let_go = load_results(RESULTS, workers=1, cache=BuildCache(tmp_path / "cache"))
    assert let_go.cache_hits == len(list(RESULTS.rglob("*.yaml")))
    one, other = Site.from_collector(kept.collector, []), Site.from_collector(let_go.collector, [], release=True)
    for name in ("frame", "apart", "speedups", "run_measurements", "run_speedups", "scale_runs"):
        pd.testing.assert_frame_equal(getattr(one, name), getattr(other, name), obj=name)
    assert one.spread == other.spread and sorted(one.machines) == sorted(other.machines)
    assert len(let_go.collector.table()) == 0 and len(kept.collector.table()) > 0
    assert let_go.collector.files == kept.collector.files
