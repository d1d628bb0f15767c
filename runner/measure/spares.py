"""Interpreters started ahead of need, several at once, while nothing is being measured.

A seed's loop is measured in a freshly started interpreter, as its script runs (runner.measure.protocol.seed_process),
and its fidelity twin runs the script itself in another (runner.fidelity.run_script). On the GPU hosts each start
costs 4 to 6 s, most of it importing PyTorch and its CUDA libraries; a standard run with twins started about 160 of
them one after another. A spare is such an interpreter started early: it imports the framework (what the process
would import first anyway), says so on its stdout, and then waits, blocked on its stdin, for the work it was started
for:

- `worker`: `python -m runner.measure.worker --spare FRAMEWORK` imports the framework's harness module and then
  reads its job, as any measuring process does;
- `script`: `python -c SCRIPT_PRELUDE MODULE` imports the module, then reads one line (the script's command line
  and working folder) and runs the script as `__main__`, as `python script.py` does.

Nothing runs during the wait and no device is touched before the work arrives, so what is measured runs in the
state a fresh interpreter gives it (the same imports, no thread pool or CUDA context started, the collector
untouched); only the time of the imports moved.

Spares are started in batches, and a batch is waited for before anything else runs: their imports overlap one
another and never a measurement (an import beside a CPU measurement would take one of its cores). A batch is at
most one spare per CPU core: an import waits on the disk and the loader more than it computes, so on a
16-core host a batch of 16 was ready in about 12 s, as one of 8 was, and one alone took 8 s. A point's twin wants both
kinds, so a batch tops up the other kind too (`Pool.partners`), within the same limit. Spares left over are killed.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from runner.measure.protocol import SPARE_READY as READY
from runner.measure.protocol import WORKER_MODULE, log_phases

# Spares started at once, where set (a positive integer): overrides batch_limit's rule, for measuring the rule.
BATCH_ENV = "BENCHSITE_SPARE_BATCH"
# How long a batch may take to import (a cold disk: CUDA's libraries are gigabytes).
READY_TIMEOUT_S = 180.0
# The script prelude: argv[1:] are the modules to import ahead; stdin's first line is [argv, cwd] of the script.
SCRIPT_PRELUDE = (
    "import importlib, json, os, runpy, sys\n"
    "for name in sys.argv[1:]:\n"
    "    importlib.import_module(name)\n"
    f"print({READY!r}, flush=True)\n"
    "line = sys.stdin.readline()\n"
    "if not line:\n"
    "    sys.exit(0)\n"
    "argv, cwd = json.loads(line)\n"
    "sys.argv = argv\n"
    "sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))\n"
    "os.chdir(cwd)\n"
    "runpy.run_path(argv[0], run_name='__main__')\n"
)


def end_group(pid: int) -> None:
    """Stop whatever an ended process left running in its process group (every measuring process and every spare
    starts its own session): a library's helper processes must not run on beside the next measurement. PyTorch's
    Inductor, for one, starts a pool of kernel-compiling processes (one per core) whenever a loop is compiled, and a
    process that loaded every kernel from the compile cache can end while that pool is still importing PyTorch.
    Linux gives no new process the pid of an ended group leader while its group has members, so this reaches only
    the ended process's own."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


@dataclass
class Spare:
    """A started interpreter, waiting for its work on stdin; `stderr` is the file its stderr goes to."""

    proc: subprocess.Popen[str]
    stderr: IO[bytes]
    ready: bool = False

    def close(self) -> None:
        """Kill it (and its process group) if still running, and close its files."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=10)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        self.stderr.close()


def _start(argv: Sequence[str]) -> Spare:
    stderr = tempfile.TemporaryFile()  # noqa: SIM115 (the spare's: closed by Spare.close or by run_child)
    proc = subprocess.Popen(
        list(argv),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
        start_new_session=True,  # own group, as every measuring process: Ctrl-C stays with the parent
    )
    return Spare(proc, stderr)


def worker_argv(framework: str, imports: Sequence[str] = ()) -> list[str]:
    """A spare measuring process: it imports the framework's harness module, then `imports` (modules the points it
    may measure import before their timed loop in any case: runner.measure.protocol.seed_imports)."""
    return [sys.executable, "-m", WORKER_MODULE, "--spare", framework, *imports]


def script_argv(*modules: str) -> list[str]:
    """A spare for a seed's script: it imports `modules` (what the script imports before its timed loop in any case:
    runner.fidelity.Twin.imports)."""
    return [sys.executable, "-c", SCRIPT_PRELUDE, *modules]


def batch_limit(cpus: int | None = None, memory_bytes: int | None = None) -> int:
    """Spares started at once: one per CPU core and per 2 GiB of memory (an idle spare that imported PyTorch
    holds a few hundred MB), at least one. BENCHSITE_SPARE_BATCH, where set, says how many instead."""
    setting = os.environ.get(BATCH_ENV, "").strip()
    if setting:
        if not setting.isdigit() or int(setting) < 1:
            raise ValueError(f"{BATCH_ENV} must be a positive whole number of interpreters, not {setting!r}")
        return int(setting)
    if cpus is None:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    if memory_bytes is None:
        try:
            memory_bytes = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            memory_bytes = 0
    by_memory = memory_bytes // 2**31 if memory_bytes else cpus
    return max(1, min(cpus, by_memory))


def wait_ready(spares: Sequence[Spare], timeout_s: float = READY_TIMEOUT_S) -> None:
    """Block until every spare has said it is ready (or ended: its user then sees why it failed)."""
    deadline = time.monotonic() + timeout_s
    waiting = {s.proc.stdout.fileno(): s for s in spares if not s.ready and s.proc.stdout is not None}
    while waiting and time.monotonic() < deadline:
        readable, _, _ = select.select(list(waiting), [], [], max(0.0, deadline - time.monotonic()))
        for fd in readable:
            spare = waiting.pop(fd)
            assert spare.proc.stdout is not None
            line = spare.proc.stdout.readline()
            spare.ready = True  # a spare that died says nothing more: it fails where it is used, with its stderr
            if line and READY not in line:
                raise RuntimeError(f"a spare interpreter said {line.strip()[:200]!r} before it was ready")


@dataclass
class Pool:
    """Spares of one kind (`argv`), started `limit` at a time when one is wanted and none is left. A pool's
    `partners` (the other kinds the same points will want: a twin's scripts beside its measuring processes) are
    topped up in the same batch, within the same limit, to what they still expect, so that their imports overlap
    too."""

    argv: list[str]
    limit: int = field(default_factory=batch_limit)
    started: Callable[[int], None] = lambda count: None  # told the size of each batch started for this pool
    expected: int = 1  # how many the caller will still take (an upper bound), counted down by take()
    partners: list[Pool] = field(default_factory=list)
    _ready: list[Spare] = field(default_factory=list)

    def take(self) -> Spare:
        """A ready spare. With none left, a batch is started and waited for: min(expected, limit) of this pool's (as
        many as the caller will still take from it, this one included), then, within the limit, as many as each
        partner still expects beyond those it has ready (so that its last few do not need a batch of their own)."""
        wanted = max(1, self.expected)
        self.expected = max(0, self.expected - 1)
        if not self._ready:
            self._start_batch(max(1, min(wanted, self.limit)))
        return self._ready.pop(0)

    def _start_batch(self, count: int) -> None:
        began = time.perf_counter()
        room = self.limit - count
        plan: list[tuple[Pool, int]] = [(self, count)]
        for partner in self.partners:
            extra = min(max(0, partner.expected - len(partner._ready)), room)
            if extra > 0:
                plan.append((partner, extra))
                room -= extra
        batches: list[tuple[Pool, list[Spare]]] = []
        try:
            for pool, n in plan:
                batches.append((pool, []))
                for _ in range(n):
                    batches[-1][1].append(_start(pool.argv))
            wait_ready([spare for _, started in batches for spare in started])
        except BaseException:
            for _, started in batches:
                for spare in started:
                    spare.close()
            raise
        for pool, started in batches:
            pool.started(len(started))
            pool._ready.extend(started)
        log_phases(
            {
                "spares": "+".join(pool.kind for pool, _ in batches),
                "count": sum(len(started) for _, started in batches),
                "ready_s": time.perf_counter() - began,
                "ended_at": time.time(),
            }
        )

    @property
    def kind(self) -> str:
        return "worker" if "--spare" in self.argv else "script"

    def close(self) -> None:
        """Kill the spares nobody took."""
        while self._ready:
            self._ready.pop().close()


def run_script(spare: Spare, argv: Sequence[str], cwd: Path, timeout_s: float) -> tuple[int, str]:
    """Hand a script spare its command line and wait for it: (exit code, stdout after the ready line). Raises
    subprocess.TimeoutExpired (after killing it) if it outlasts `timeout_s`."""
    assert spare.proc.stdin is not None
    try:
        spare.proc.stdin.write(json.dumps([list(argv), str(cwd)]) + "\n")
        spare.proc.stdin.flush()
    except BrokenPipeError:
        pass  # it died while waiting: its exit code and stderr say why
    try:
        out, _ = spare.proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        spare.close()
        raise
    end_group(spare.proc.pid)
    return spare.proc.returncode, out
