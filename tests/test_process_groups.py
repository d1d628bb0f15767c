"""Nothing a measuring process or a seed's script starts runs on after it ends (runner.measure.spares.end_group):
a library's helper processes (PyTorch Inductor's pool of compiling processes, DataLoader workers) must not share
the CPU with the next measurement. Each test starts a real process that leaves a grandchild behind."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from runner import fidelity
from runner.measure import executor, spares

# Started in the background by the process under test, in its process group, outliving it: what Inductor's pool
# does when its process ends before the pool has finished starting.
# Only the process under test starts one: the helper, a Python process too, would run this sitecustomize again
# (and truncate the file) were it not marked; the pid is written whole, by a rename.
LEAVE_BEHIND = """
import os, subprocess, sys
if not os.environ.get("BENCHSITE_TEST_HELPER"):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             env={{**os.environ, "BENCHSITE_TEST_HELPER": "1"}})
    with open({pid_file!r} + ".part", "w") as f:
        f.write(str(child.pid))
    os.replace({pid_file!r} + ".part", {pid_file!r})
"""


def _running(pid: int) -> bool:
    """Whether the process is alive (a zombie waiting for a reaper counts as ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def _gone_soon(pid: int, within_s: float = 5.0) -> bool:
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        if not _running(pid):
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def cleanup():
    pids: list[int] = []
    yield pids
    for pid in pids:
        if _running(pid):
            os.kill(pid, 9)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process groups as Linux has them")
def test_a_measuring_process_leaves_nothing_running_after_it(tmp_path, cleanup):
    """A fresh measuring process whose interpreter starts a helper that outlives it (through sitecustomize, so the
    harness's own code is what runs): once run_child returns, the helper is gone."""
    site = tmp_path / "site"
    site.mkdir()
    pid_file = tmp_path / "helper.pid"
    (site / "sitecustomize.py").write_text(LEAVE_BEHIND.format(pid_file=str(pid_file)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.getcwd(), os.environ.get("PYTHONPATH", "")])}
    events: list[dict] = []
    failure = executor.run_child({"kind": "describe", "framework": "torch"}, events.append, 120, env=env)
    assert failure is None and events[0]["event"] == "describe"
    helper = int(pid_file.read_text())
    cleanup.append(helper)
    assert _gone_soon(helper), "the measuring process's helper still runs after run_child returned"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process groups as Linux has them")
@pytest.mark.parametrize("in_spare", [True, False])
def test_a_seed_script_leaves_nothing_running_after_it(tmp_path, cleanup, monkeypatch, in_spare):
    """A twin's script, in a spare interpreter and in a freshly started one, that starts a helper and ends."""
    pid_file = tmp_path / "helper.pid"
    script = tmp_path / "seed.py"
    script.write_text(
        LEAVE_BEHIND.format(pid_file=str(pid_file)) + 'import json\nprint(json.dumps({"per_unit_s": 0.5}))\n'
    )
    twin = fidelity.Twin("001", ())
    monkeypatch.setattr(fidelity.Twin, "path", property(lambda self: script))
    spare = spares.Pool(spares.script_argv(), limit=1).take() if in_spare else None
    assert fidelity.run_script(twin, "cpu", 1, 120, spare) == 0.5
    helper = int(pid_file.read_text())
    cleanup.append(helper)
    assert _gone_soon(helper), "the script's helper still runs after run_script returned"


def test_a_process_group_that_is_gone_is_no_error():
    spares.end_group(2**22 + 12345)  # no such group: nothing to stop, nothing raised
