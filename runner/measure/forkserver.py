"""A fork server per framework: the framework is imported once per run, every measuring process is a fresh fork.

Each measuring child used to start as `python -m runner.measure.worker` and import its framework (TensorFlow 6.6 s,
PyTorch
1.9 s on a 2-core VM): in a quick run with three frameworks, 26 measuring children spent about 80 of the 349 s of
measuring starting up. A zygote (`python -m runner.measure.forkserver FRAMEWORK MODULE...`) imports the framework and
the
harness's modules for it, runs nothing, and then forks one child per job. A fork has the imports and nothing else:
no device initialised (the zygote never touches a device, so CUDA is first initialised in the child, as in a fresh
process), no model built, no memory allocated by an earlier job. So every job still gets a process of its own, and
a crash, hang or out-of-memory kill still takes only that job.

The protocol, on a Unix socket pair (the zygote's stdin): the parent sends one byte with three file descriptors
(the child's stdin, stdout and stderr); the zygote forks, the child starts its own session, takes the three as
0, 1 and 2 and runs `runner.measure.worker.main()`. The zygote answers `pid N`, and `exit N CODE` when it has reaped
that child (CODE as `subprocess` gives it: negative for a signal). The zygote exits when the socket closes.

Linux only: macOS's system frameworks are not safe to use after fork() and Windows has none.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import select
import signal
import socket
import sys
import threading
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from runner.measure.protocol import log_phases

SUPPORTED = sys.platform.startswith("linux") and hasattr(socket, "send_fds")
REAP_EVERY_S = 0.05  # how often the server looks for ended children while it has any
UNKNOWN_EXIT = 0  # the code reported for a child whose server died first (the caller sees it gave no result)
# Threads that libraries start on import and that are safe across fork(), by the name the kernel shows: jemalloc's
# background purger (pyarrow's allocator, loaded with TensorFlow through pandas; on the GPU hosts measured also with
# the PyTorch server's lazily imported modules, tests/benchmarks/fork_threads.py) runs on in the parent, but
# jemalloc's own pthread_atfork handlers take its locks for the fork and reset its state in the child, which starts
# a purger of its own when it needs one.
FORK_AWARE_THREADS = frozenset({"jemalloc_bg_thd"})
# What Python (3.12 and later) warns when a process with more than one thread forks.
FORK_WARNING = r"This process \(pid=\d+\) is multi-threaded, use of fork\(\) may lead to deadlocks"


def _child(fds: list[int], server: socket.socket) -> None:
    """In the fork: become a fresh measuring process and never return."""
    code = 1
    try:
        server.close()
        os.setsid()  # its own process group: the parent stops it (and its DataLoader workers) with killpg
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a fresh interpreter
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        sys.stdin = os.fdopen(0, "r")
        sys.stdout = os.fdopen(1, "w", buffering=1)
        sys.stderr = os.fdopen(2, "w", buffering=1)
        from runner.measure import worker

        code = worker.main()
    except BaseException:  # the child must never fall back into the server's loop
        import traceback

        with contextlib.suppress(Exception):
            traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code if isinstance(code, int) else 1)


def serve(modules: list[str]) -> None:
    try:
        loaded = [importlib.import_module(name) for name in modules]
    except BaseException:
        # a framework that fails to import: no server, and quietly (no traceback on the user's terminal for a
        # framework that is not installed); the fresh process that measures instead reports why
        os._exit(3)
    preload_lazy(loaded)
    # Every fork inherits this heap: frozen, its objects are never scanned by a child's collector, nor their pages
    # copied on write by one (runner.measure.worker freezes again before each build).
    gc.collect()
    gc.freeze()
    left = settle_threads()
    quiet = not left
    server = socket.socket(fileno=0)
    server.sendall(f"ready {json.dumps(left)}\n".encode())
    children: set[int] = set()
    while True:
        readable, _, _ = select.select([server], [], [], REAP_EVERY_S if children else None)
        while children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            children.discard(pid)
            server.sendall(f"exit {pid} {os.waitstatus_to_exitcode(status)}\n".encode())
        if not readable:
            continue
        message, fds, _, _ = socket.recv_fds(server, 1, 3)
        if not message:
            return  # the parent is gone or done: the children it started run on to their end
        pid = _fork(quiet)
        if pid == 0:
            _child(fds, server)
        for fd in fds:
            os.close(fd)
        children.add(pid)
        server.sendall(f"pid {pid}\n".encode())


def other_threads() -> list[str]:
    """The kernel's names of this process's threads other than the calling one (Linux)."""
    me = threading.get_native_id()
    names = []
    for tid in os.listdir("/proc/self/task"):
        if int(tid) != me:
            with contextlib.suppress(OSError):  # a thread that ended meanwhile
                names.append(Path(f"/proc/self/task/{tid}/comm").read_text().strip())
    return names


def settle_threads() -> list[str]:
    """Fork once and reap the child before the first job; returns the threads still running beside the server's
    own that are not known to be safe across a fork (none: it forks as a single-threaded process would).

    Libraries start threads on import. NumPy's and SciPy's OpenBLAS each start a pool of one thread per core but one
    (two threads in all on a 2-core host) and stop it in their own pthread_atfork handler, before the fork itself:
    every job's fork always found them stopped, and each child starts its own pool when it needs one. The server
    runs no BLAS, so after this fork they stay stopped. What runs on after a fork is what Python (3.12 and later)
    counts, after the fork, when it warns that a multi-threaded process forked: jemalloc's purger, with TensorFlow,
    did so. Where every thread left is in FORK_AWARE_THREADS the server forks without that warning, which would
    otherwise open every such `benchsite run`; any other thread keeps it, and the parent logs the threads left
    (BENCHSITE_PHASE_LOG)."""
    if not other_threads():
        return []
    pid = _fork(quiet=True)
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return [name for name in other_threads() if name not in FORK_AWARE_THREADS]


def _fork(quiet: bool) -> int:
    """os.fork(), without the multi-threaded warning if quiet (settle_threads() found only fork-aware threads, or is
    forking to find them). The child leaves the `with` block too, so it keeps the warnings filters the server
    started with."""
    if not quiet:
        return os.fork()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=FORK_WARNING, category=DeprecationWarning)
        return os.fork()


def preload_lazy(modules: Sequence[object]) -> list[str]:
    """Import what the given modules list in `PRELOAD`: modules their measurements import lazily (PyTorch's
    optimisers import torch._dynamo on first use, 1.2 s on a 2-core VM; a Hugging Face model class 1.7 s), which
    every forked child would otherwise import again. Best effort: one that fails to import (an optional library
    not installed) is left to the child, which reports it where it matters. None of them may touch a device or
    start a thread (tests/test_isolation.py checks). Returns the names that failed."""
    failed = []
    for module in modules:
        for name in getattr(module, "PRELOAD", ()):
            try:
                importlib.import_module(name)
            except Exception:
                failed.append(name)
    return failed


class Zygote:
    """The parent's handle on one fork server."""

    def __init__(self, modules: list[str]) -> None:
        import subprocess

        self._sock, theirs = socket.socketpair()
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "runner.measure.forkserver", *modules],
            stdin=theirs.fileno(),
            stdout=subprocess.DEVNULL,
            start_new_session=True,  # Ctrl-C is for the parent to handle
        )
        self.pid = self._proc.pid
        theirs.close()
        self._lock = threading.Lock()  # one fork request at a time
        self._cond = threading.Condition()
        self._pids: list[int] = []
        self._exits: dict[int, int] = {}
        self._ready = False
        self.alive = True
        self.modules = modules
        threading.Thread(target=self._read, daemon=True, name="zygote-reader").start()

    def _read(self) -> None:
        with self._sock.makefile("rb") as stream:
            for line in stream:
                kind, _, text = line.decode().strip().partition(" ")
                rest = text.split()
                if kind == "ready":  # with the threads settle_threads() left
                    log_phases({"fork_server": self.modules, "threads_left": json.loads(text) if text else []})
                with self._cond:
                    if kind == "ready":
                        self._ready = True
                    elif kind == "pid":
                        self._pids.append(int(rest[0]))
                    elif kind == "exit":
                        self._exits[int(rest[0])] = int(rest[1])
                    self._cond.notify_all()
        with self._cond:
            self.alive = False
            self._cond.notify_all()

    def wait_ready(self, timeout_s: float) -> bool:
        with self._cond:
            self._cond.wait_for(lambda: self._ready or not self.alive, timeout=timeout_s)
            return self._ready and self.alive

    def spawn(self, stderr: IO[bytes]) -> ForkedChild:
        """A fresh fork with pipes for stdin and stdout and `stderr` as its stderr. Raises OSError if the
        server is gone."""
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        try:
            with self._lock:
                socket.send_fds(self._sock, [b"f"], [stdin_r, stdout_w, stderr.fileno()])
                with self._cond:
                    if not self._cond.wait_for(lambda: self._pids or not self.alive, timeout=60):
                        raise OSError("the fork server did not answer")
                    if not self._pids:
                        raise OSError("the fork server is gone")
                    pid = self._pids.pop(0)
        except BaseException:
            for fd in (stdin_w, stdout_r):
                os.close(fd)
            raise
        finally:
            os.close(stdin_r)
            os.close(stdout_w)
        return ForkedChild(
            self, pid, os.fdopen(stdin_w, "w"), os.fdopen(stdout_r, "r", encoding="utf-8", errors="replace")
        )

    def exit_code(self, pid: int, timeout_s: float | None) -> int | None:
        """The child's exit code once the zygote has reaped it; None if it is still running after timeout_s."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        with self._cond:
            self._cond.wait_for(lambda: pid in self._exits or not self.alive, timeout=timeout_s)
            if pid in self._exits:
                return self._exits.pop(pid)
        # The server died before reaping it: wait for the process to go; its exit code is lost with the server.
        while not _gone(pid):
            if deadline is not None and time.monotonic() >= deadline:
                return None
            time.sleep(0.05)
        return UNKNOWN_EXIT

    def close(self) -> None:
        self.alive = False
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        self._sock.close()
        try:
            self._proc.wait(timeout=10)
        except Exception:  # a server that does not stop is killed
            self._proc.kill()
            self._proc.wait()


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


class ForkedChild:
    """What `runner.measure.executor` needs of a `subprocess.Popen`, for a child forked by a zygote."""

    def __init__(self, zygote: Zygote, pid: int, stdin: IO[str], stdout: IO[str]) -> None:
        self._zygote = zygote
        self.pid = pid
        self.stdin = stdin
        self.stdout = stdout
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self._zygote.exit_code(self.pid, 0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        import subprocess

        if self.returncode is None:
            self.returncode = self._zygote.exit_code(self.pid, timeout)
        if self.returncode is None:
            raise subprocess.TimeoutExpired(f"pid {self.pid}", timeout or 0)
        return self.returncode


if __name__ == "__main__":
    serve(sys.argv[1:])
