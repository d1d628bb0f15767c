"""Load every contributed result file: untrusted input, read safely, validated, bad files reported and left out.

Files stream one at a time through runner.results.storage (size limit, LibYAML's safe loader, the schema, the path
rule) into a collect.Collector each, so memory holds the tidy measurement columns, never ten thousand parsed
files. What each file contributes comes from the build cache (site_builder.cache) when it holds that file's path
and content hash; the other files are read, with many of them spread over the machine's cores (each reading process
sends its files' rows back as one Arrow table), and every file's contribution is merged in file order, whichever
way it came, as it comes: a file's rows are then held only in the merged Arrow tables. Once every file is merged, a
file whose samples replay an earlier file's (runner.gate.validate.Replays: 32 bytes of digests per measurement are
kept for it) is taken back out, as the gate refuses it.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from runner.gate.validate import check_result, replay_digests, replayed_exactly, replayed_scaled
from runner.results.schema import ResultFile
from runner.results.storage import Problem, iter_all, iter_result_paths
from runner.workloads import custom
from site_builder.cache import BuildCache, Entry, file_sha256
from site_builder.collect import Collector

# Below this many files one process is quicker than starting others.
PARALLEL_MIN_FILES = 64
CHUNK_FILES = 32


class StrictBuildError(Exception):
    """--strict: a bad result file fails the build instead of being left out."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


@dataclass
class Fingerprint:
    """What the replay check needs of one accepted file: its measurements' sample digests, compactly (a few
    arrays per file, not a Python value per measurement: 100,000 files hold millions of digests)."""

    path: Path
    indices: np.ndarray  # int32: the measurements with digests
    digests: bytes  # 32 bytes per index: exact, then shape (runner.gate.validate.replay_digests)
    medians: np.ndarray  # float64: their medians

    @classmethod
    def of(
        cls, path: Path, indices: np.ndarray | list[int], digests: bytes, medians: np.ndarray | list[float]
    ) -> Fingerprint:
        return cls(path, np.asarray(indices, dtype=np.int32), bytes(digests), np.asarray(medians, dtype=np.float64))


@dataclass
class Loaded:
    collector: Collector = field(default_factory=Collector)
    accepted: list[Path] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    fingerprints: list[Fingerprint] = field(default_factory=list)
    cache_hits: int = 0  # files whose contribution came from the build cache
    # files of a user's own model (`benchsite run --model`), checked, kept apart from the suite's: their own page
    own: list[tuple[Path, ResultFile]] = field(default_factory=list)

    @property
    def rejected(self) -> list[str]:
        return sorted({p.path for p in self.problems if p.severity == "error"})

    def take(self, paths: list[Path], own_models: bool = False) -> Loaded:
        """Read, check and collect these files. `own_models`: keep a file of a user's own model (the end of its
        run reads its answer so); the site leaves such files out."""
        for path, result, problems in iter_all(paths):
            if result is not None:  # impossible or unsynchronised timings are never published
                problems = problems + check_result(str(path), result, text_rules=False)
                if not own_models:
                    problems += _own_model(path, result)
            self.problems.extend(problems)
            if result is not None and not any(p.severity == "error" for p in problems):
                self.collector.add(path, result)
                self.accepted.append(path)
                indices, digests, medians = [], bytearray(), []
                for i, m in enumerate(result.measurements):
                    pair = replay_digests(m)
                    if pair is not None and m.median_s:
                        indices.append(i)
                        digests += pair[0] + pair[1]
                        medians.append(m.median_s)
                self.fingerprints.append(Fingerprint.of(path, indices, bytes(digests), medians))
        return self

    def take_own(self, paths: list[Path]) -> None:
        """Files of a user's own model: checked as every file is; each one that passes is kept in `own`."""
        for path, result, problems in iter_all(paths):
            if result is not None:
                problems = problems + check_result(str(path), result, text_rules=False)
            self.problems.extend(problems)
            if result is not None and not any(p.severity == "error" for p in problems):
                self.own.append((path, result))

    def refuse_replays(self) -> None:
        """Leave out every file whose samples repeat an earlier file's (in file order), exactly or scaled, as the
        gate refuses it: a replayed run must not count as one more run of a machine. The same verdicts and messages
        as runner.gate.validate.Replays fed every file's digests in file order, found with sorted arrays instead of
        a dictionary entry per measurement (at 100,000 files that was gigabytes). The fingerprints go afterwards."""
        fingerprints, self.fingerprints = self.fingerprints, []
        flagged = _replayed(fingerprints)
        if not flagged:
            return
        self.problems.extend(flagged.values())
        self.accepted = [p for p in self.accepted if p not in flagged]
        self.collector.drop_files({str(path) for path in flagged})

    def add(self, entry: Entry) -> None:
        """Merge one file's contribution (files are added in file order)."""
        self.collector.merge(entry.collector)
        self.problems.extend(entry.problems)
        if entry.fingerprint is not None:
            path = Path(entry.path)
            self.accepted.append(path)
            self.fingerprints.append(Fingerprint.of(path, *entry.fingerprint))


OWN_MARK = b"workload: " + custom.WORKLOAD.encode()  # how a written file of a user's own model names its workload


def _own_model(path: Path, result: ResultFile) -> list[Problem]:
    """A file of a user's own model (`benchsite run --model`) among the suite's is left out of them: the site
    compares the suite (load_results reads such a file apart, for its own page)."""
    if not any(m.workload == custom.WORKLOAD for m in result.measurements):
        return []
    return [
        Problem(
            str(path),
            "measurements",
            "measures your own model (benchsite run --model), not the suite: its measurements are on the Your "
            "models page, never among the suite's",
        )
    ]


def _first_of_each(keys: np.ndarray) -> np.ndarray:
    """For each position, the first position holding the same key (np.unique's sort is stable: the first
    occurrence)."""
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    return first[inverse.reshape(-1)]


def _replayed(fingerprints: list[Fingerprint]) -> dict[Path, Problem]:
    """Each file that replays an earlier file's samples, with the first of its measurements that does, worded as
    Replays.check words it. As Replays does: a measurement is an exact copy where an earlier one (in file order,
    then measurement order) has its exact digest; otherwise a scaled copy where an earlier one that was no exact
    copy has its shape digest."""
    sizes = np.array([len(fp.indices) for fp in fingerprints], dtype=np.int64)
    if not sizes.sum():
        return {}
    pair = np.dtype([("a", "<u8"), ("b", "<u8")])
    digests = np.frombuffer(b"".join(fp.digests for fp in fingerprints), dtype=pair).reshape(-1, 2)
    owner = np.repeat(np.arange(len(fingerprints)), sizes)
    indices = np.concatenate([fp.indices for fp in fingerprints])
    medians = np.concatenate([fp.medians for fp in fingerprints])
    rows = np.arange(len(owner))
    exact_first = _first_of_each(digests[:, 0])
    exact = exact_first != rows
    kept = np.flatnonzero(~exact)  # only a measurement that is no exact copy enters the shape digests
    shape_first = np.full(len(rows), -1)
    shape_first[kept] = kept[_first_of_each(digests[kept, 1])]
    scaled = ~exact & (shape_first != rows)
    flagged: dict[Path, Problem] = {}
    for row in np.flatnonzero(exact | scaled):  # in file order, then measurement order
        fp = fingerprints[owner[row]]
        if fp.path in flagged:
            continue
        path, index = str(fp.path), int(indices[row])
        if exact[row]:
            first = exact_first[row]
            flagged[fp.path] = replayed_exactly(path, index, str(fingerprints[owner[first]].path), int(indices[first]))
        else:
            first = shape_first[row]
            first_path = str(fingerprints[owner[first]].path)
            flagged[fp.path] = replayed_scaled(
                path, index, float(medians[row]), first_path, int(indices[first]), float(medians[first])
            )
    return flagged


def _read_files(paths: list[tuple[Path, str]]) -> list[Entry]:
    """Read each file on its own (one Loaded per file) and return what it contributes, keyed by its hash."""
    entries = []
    for path, sha in paths:
        one = Loaded().take([path])
        fingerprint = one.fingerprints[0] if one.accepted else None
        entries.append(
            Entry(
                str(path),
                sha,
                one.problems,
                one.collector,
                (fingerprint.indices, fingerprint.digests, fingerprint.medians) if fingerprint else None,
            )
        )
    # The files' rows become one Arrow table here, where they were read: what goes back to the build is that table
    # (each file's rows a slice of it), never a Python value per row.
    together = Collector()
    for entry in entries:
        together.merge(entry.collector)
    table, start = together.table(), 0
    for entry in entries:
        rows = entry.collector.rows
        entry.collector.hold(table, start, start + rows)
        start += rows
    return entries


def load_results(
    root: Path, strict: bool = False, workers: int | None = None, cache: BuildCache | None = None
) -> Loaded:
    """Every result file under root, validated and collected; bad files are listed in problems and left out.
    workers: processes to parse with (default: one per CPU; 1 parses in this process). cache: where what each file
    contributes is kept between builds (site_builder.cache); it is taken from there where the file's path and
    content hash match, and the cache is replaced by this build's files."""
    paths = iter_result_paths([root]) if root.exists() else []
    workers = workers or os.cpu_count() or 1
    # A file of a user's own model names the custom workload; it is read apart from the suite's (a file that names
    # it in another way reaches Loaded.take, which leaves it out with the reason). One file's bytes at a time.
    own: list[Path] = []
    suite_paths, hashes = [], []
    for path in paths:
        data = path.read_bytes()
        if OWN_MARK in data:
            own.append(path)
        else:
            suite_paths.append(path)
            hashes.append(file_sha256(data))
    paths = suite_paths
    # Whether the cache holds each file: its entry is made from the cache when the file's turn comes, not before.
    held = [cache is not None and cache.holds(str(p), h) for p, h in zip(paths, hashes, strict=True)]
    missing = [(paths[i], hashes[i]) for i, found in enumerate(held) if not found]

    def read() -> Iterator[Entry]:
        """The missing files' entries, in file order, as they are read."""
        chunks = [missing[i : i + CHUNK_FILES] for i in range(0, len(missing), CHUNK_FILES)]
        if workers > 1 and len(missing) >= PARALLEL_MIN_FILES:
            # spawn, not fork: the builder may run threads (mkdocs serve), and forking those is unsafe.
            context = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
                for part in pool.map(_read_files, chunks):
                    yield from part
        else:  # in this process, the same chunks: one Arrow table per chunk, not per file
            for chunk in chunks:
                yield from _read_files(chunk)

    # Each file's contribution is merged as it comes, in file order; its rows are then let go (the merged rows keep
    # them), so that only the rows read but not yet merged are held as Python values.
    fresh = read()
    loaded = Loaded()
    kept, counts = [], []  # what the cache saves of each file (site_builder.cache.Kept), its row count
    for path, sha, found in zip(paths, hashes, held, strict=True):
        entry = cache.get(str(path), sha) if cache is not None and found else next(fresh)
        assert entry is not None  # held: the cache has it
        loaded.add(entry)
        counts.append(entry.collector.rows)  # a refused file: none
        entry.collector.release_rows()
        if cache is not None:
            kept.append(cache.keep(entry))
    for _ in fresh:  # nothing is left; this ends the reading (and its pool)
        pass
    loaded.cache_hits = len(paths) - len(missing)
    if cache is not None:
        cache.save(kept, loaded.collector.table(), counts)
    loaded.refuse_replays()
    loaded.take_own(own)
    errors = [p for p in loaded.problems if p.severity == "error"]
    if strict and errors:  # a warning (an unknown GPU, an outlier) leaves the file published and the build going
        raise StrictBuildError(errors)
    return loaded
