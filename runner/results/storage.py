"""Reading and writing result files: the only module that touches the YAML on disk.

Writes are atomic (a temporary file in the same directory, fsync, rename), so a crash or a kill in the
middle of a write never leaves a partial result file. Reads treat the file as untrusted: a size limit,
YAML's safe loader, then the schema.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from runner.results.schema import READABLE_VERSIONS, SCHEMA_VERSION, ResultFile

# A full standard run with raw samples is ~100-300 KiB; anything far larger is not a result file.
MAX_FILE_BYTES = 4 * 1024 * 1024

_SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_SafeDumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _StrictLoader(_SafeLoader):  # type: ignore[misc,valid-type]
    """YAML's safe loader, refusing what a strict reader refuses: a key given twice in one mapping (YAML says
    keys are unique; PyYAML keeps the last one silently, so a file could show a reviewer one value and the
    site another) and merge keys (`<<`), which copy fields in from elsewhere."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            first: dict[tuple[str, str], yaml.Node] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    raise yaml.constructor.ConstructorError(
                        None, None, "merge keys (<<) are not allowed in result files", key_node.start_mark
                    )
                if isinstance(key_node, yaml.ScalarNode):
                    key = (key_node.tag, key_node.value)
                    if key in first:
                        line = first[key].start_mark.line + 1
                        raise yaml.constructor.ConstructorError(
                            None,
                            None,
                            f"duplicate key {key_node.value!r} (first given on line {line})",
                            key_node.start_mark,
                        )
                    first[key] = key_node
        return super().construct_mapping(node, deep=deep)


@dataclass(frozen=True)
class Problem:
    """One thing wrong with one file: where, and what."""

    path: str
    field: str
    message: str
    severity: str = "error"

    def __str__(self) -> str:
        where = f"{self.path}: {self.field}" if self.field else self.path
        return f"{where}: {self.message}"


def dumps(result: ResultFile) -> str:
    data = result.model_dump(mode="json", exclude_none=True)
    return yaml.dump(data, Dumper=_SafeDumper, sort_keys=False, allow_unicode=True, width=120)


def write_atomic(path: Path, text: str) -> None:
    """Write text to path so that readers see the old file, or the whole new one, never a part. The file gets the
    mode a plain `open(path, "w")` gives: a new one 0o666 less the umask (the kernel applies it; mkstemp's 0o600
    would leave a result file unreadable to the contributor's other accounts and to a web server), a replaced one
    its own."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{secrets.token_hex(8)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with contextlib.suppress(FileNotFoundError):
            os.fchmod(fd, stat.S_IMODE(path.stat().st_mode))
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)  # make the rename itself durable


def fsync_dir(folder: Path) -> None:
    """Make the entries of a folder (a rename, a new file) durable, where the platform allows it."""
    with contextlib.suppress(OSError):
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def save(result: ResultFile, path: Path) -> Path:
    write_atomic(path, dumps(result))
    return path


def _field_path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


# An anchor (&name) or alias (*name) token can only start where a node starts: after a space, '[', '{', ',',
# ':' or '-', or at a line's start. Files without such a token (benchsite never writes one, and most files
# hold no '&' or '*' at all) skip the event scan.
_ANCHOR_PATTERN = r"(?:^|[\s\[{,:-])[&*][^\s]"
_MAYBE_ANCHOR = re.compile(_ANCHOR_PATTERN, re.MULTILINE)
_MAYBE_ANCHOR_BYTES = re.compile(_ANCHOR_PATTERN.encode(), re.MULTILINE)


def _anchors(text: str | bytes, path: str) -> list[Problem]:
    """Anchors and aliases are rejected before anything is built: an alias bomb (a billion laughs) expands
    exponentially when composed, and benchsite never writes either. Scanning parser events costs no
    expansion."""
    if isinstance(text, bytes):
        maybe = (b"&" in text or b"*" in text) and _MAYBE_ANCHOR_BYTES.search(text) is not None
    else:
        maybe = ("&" in text or "*" in text) and _MAYBE_ANCHOR.search(text) is not None
    if not maybe:
        return []
    try:
        for event in yaml.parse(text, Loader=_SafeLoader):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                mark = event.start_mark
                return [
                    Problem(
                        path,
                        f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "",
                        "YAML anchors and aliases are not allowed in result files",
                    )
                ]
    except yaml.YAMLError:
        return []  # the full parse below reports it with its position
    return []


def parse(text: str | bytes, path: str = "<string>") -> tuple[ResultFile | None, list[Problem]]:
    """Parse and validate one file's content. Returns the result or every problem found."""
    if len(text) > MAX_FILE_BYTES:
        return None, [Problem(path, "", f"file is {len(text)} bytes, over the {MAX_FILE_BYTES} byte limit")]
    try:
        anchors = _anchors(text, path)
    except (UnicodeDecodeError, ValueError) as exc:
        return None, [Problem(path, "", f"not readable text: {exc}")]
    if anchors:
        return None, anchors
    try:
        data: Any = yaml.load(text, Loader=_StrictLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        return None, [Problem(path, where, f"not valid YAML: {getattr(exc, 'problem', None) or exc}")]
    except (UnicodeDecodeError, ValueError) as exc:
        return None, [Problem(path, "", f"not readable text: {exc}")]
    if not isinstance(data, dict):
        return None, [Problem(path, "", f"expected a mapping at the top level, got {type(data).__name__}")]
    version = data.get("schema_version")
    if version not in READABLE_VERSIONS or isinstance(version, bool):
        hint = (
            "written by a newer benchsite: upgrade with `pip install -U benchsite`"
            if isinstance(version, int) and version > SCHEMA_VERSION
            else f"this benchsite reads schema_version {', '.join(map(str, READABLE_VERSIONS))}"
        )
        return None, [Problem(path, "schema_version", f"unsupported value {version!r}: {hint}")]
    try:
        return ResultFile.model_validate(data), []
    except ValidationError as exc:
        problems = [
            Problem(path, _field_path(err["loc"]), f"{err['msg']} (got {_short(err.get('input'))})")
            for err in exc.errors()
        ]
        return None, problems


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def load(path: Path) -> tuple[ResultFile | None, list[Problem]]:
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            return None, [Problem(str(path), "", f"file is {size} bytes, over the {MAX_FILE_BYTES} byte limit")]
        raw = path.read_bytes()
    except OSError as exc:
        return None, [Problem(str(path), "", f"cannot read: {exc.strerror or exc}")]
    return parse(raw, str(path))


def iter_result_paths(paths: list[Path]) -> list[Path]:
    """Expand directories into the result files below them (sorted, hidden temporaries skipped)."""
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            out.extend(
                p for p in sorted(path.rglob("*.y*ml")) if p.suffix in {".yaml", ".yml"} and not p.name.startswith(".")
            )
        else:
            out.append(path)
    return out


def iter_all(paths: list[Path]) -> Iterator[tuple[Path, ResultFile | None, list[Problem]]]:
    """Every result file under paths, one at a time: its result (None if unreadable) and all its problems,
    the path rule included. The one loop behind `benchsite validate` and the site builder; a generator, so
    that ten thousand files never sit in memory at once."""
    for path in iter_result_paths(paths):
        result, problems = load(path)
        if result is not None:
            problems = problems + check_location(path, result)
        yield path, result, problems


def validate_paths(paths: list[Path]) -> tuple[int, list[Problem]]:
    """Validate every file; returns the number of files checked and all problems found."""
    checked, found = 0, []
    for _, _, problems in iter_all(paths):
        checked += 1
        found.extend(problems)
    return checked, found


def file_name(result: ResultFile | datetime) -> str:
    """<UTC start time>.yaml: the name of a run's file in its machine's folder (given the run, or its start)."""
    started = result if isinstance(result, datetime) else result.run.started_at
    started = started.astimezone(timezone.utc) if started.tzinfo else started
    return f"{started:%Y%m%dT%H%M%SZ}.yaml"


def check_location(path: Path, result: ResultFile) -> list[Problem]:
    """A file under a results/<machine-id>/ folder must carry that machine id, and be named after the time its
    run started (so the folder lists runs in order, and a file cannot pass for another run)."""
    if path.parent.parent.name != "results":
        return []
    parent = path.parent.name
    problems = []
    if parent != result.machine.id:
        problems.append(
            Problem(str(path), "machine.id", f"file is in results/{parent}/ but its machine.id is {result.machine.id}")
        )
    if path.name != file_name(result):
        problems.append(
            Problem(
                str(path),
                "run.started_at",
                f"{result.run.started_at.isoformat()} does not match the file name {path.name!r} "
                f"(a run that started then is named {file_name(result)!r})",
            )
        )
    return problems
