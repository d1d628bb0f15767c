"""Atomic writes: a crash or kill -9 in the middle of writing never leaves a partial result file."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
import time

import pytest

from runner.results import storage


def test_write_atomic_replaces_whole_file(tmp_path):
    path = tmp_path / "a" / "r.yaml"
    storage.write_atomic(path, "first\n")
    storage.write_atomic(path, "second\n")
    assert path.read_text() == "second\n"
    assert [p.name for p in path.parent.iterdir()] == ["r.yaml"]


def test_write_atomic_gives_the_mode_open_would(tmp_path):
    """A new file gets 0o666 less the umask (not mkstemp's 0o600); a replaced file keeps its own mode."""
    new = tmp_path / "new.yaml"
    umask = os.umask(0o027)
    try:
        storage.write_atomic(new, "x\n")
    finally:
        os.umask(umask)
    assert stat.S_IMODE(new.stat().st_mode) == 0o640
    kept = tmp_path / "kept.yaml"
    kept.write_text("old\n")
    kept.chmod(0o640)
    storage.write_atomic(kept, "new\n")
    assert stat.S_IMODE(kept.stat().st_mode) == 0o640


def test_exception_mid_write_leaves_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "r.yaml"
    storage.write_atomic(path, "old\n")

    def boom(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(OSError, match="No space"):
        storage.write_atomic(path, "new\n" * 1000)
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["r.yaml"]


def test_kill_9_mid_write_leaves_no_result_file(tmp_path):
    """A writer killed after part of the file is on disk: the result path never exists."""
    target = tmp_path / "r.yaml"
    script = textwrap.dedent(f"""
        import os, sys, time
        from pathlib import Path
        from runner.results import storage
        real_fsync = os.fsync
        def slow_fsync(fd):
            print("writing", flush=True)
            time.sleep(60)
        os.fsync = slow_fsync
        storage.write_atomic(Path({str(target)!r}), "measurements:\\n" + "- x\\n" * 100000)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "writing"  # the data is written, not yet renamed
    time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    assert not target.exists()
    # Only a hidden temporary may remain, which no reader picks up.
    leftovers = list(tmp_path.iterdir())
    assert all(p.name.startswith(".") for p in leftovers)
    assert storage.iter_result_paths([tmp_path]) == []


def _real_result_text() -> str:
    from tests.conftest import TESTS

    return sorted((TESTS.parent / "results").rglob("*.yaml"))[0].read_text()


@pytest.mark.parametrize(
    ("edit", "field", "reason"),
    [
        # a second samples_per_s under the first measurement's own: PyYAML alone keeps the last one silently
        (
            lambda t: t.replace("  samples_per_s:", "  samples_per_s: 1.0e+12\n  samples_per_s:", 1),
            "line",
            "duplicate key 'samples_per_s'",
        ),
        (
            lambda t: t.replace("schema_version:", "schema_version: 3\nschema_version:", 1),
            "line 2,",
            "duplicate key 'schema_version' (first given on line 1)",
        ),
        (
            lambda t: t.replace("suite:\n", "suite:\n  <<: {profile: standard}\n", 1),
            "line",
            "merge keys (<<) are not allowed",
        ),
    ],
    ids=["duplicate-nested", "duplicate-top", "merge-key"],
)
def test_duplicate_and_merge_keys_are_refused_with_their_line(edit, field, reason):
    text = _real_result_text()
    result, problems = storage.parse(text, "r.yaml")
    assert result is not None and problems == []  # the unedited file is valid
    result, problems = storage.parse(edit(text), "r.yaml")
    assert result is None and len(problems) == 1
    assert problems[0].field.startswith(field) and reason in problems[0].message, problems[0]
