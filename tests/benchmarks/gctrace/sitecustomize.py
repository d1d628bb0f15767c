"""Times every collection of Python's cyclic garbage collector, for fidelity.py --gc-trace.

Python imports `sitecustomize` at start-up from the first folder on its path that has one, so a process started
with this folder on PYTHONPATH and BENCHSITE_GC_TRACE naming a file installs the hook before any other code
runs; processes forked from it (benchsite's fork server and its measuring children, DataLoader workers) inherit
it. Each collection appends one line to that file: pid, parent pid, generation, when it ended
(time.perf_counter), how long it took (microseconds) and how many objects it freed. The file is opened once in
append mode, so forked processes write whole lines to the same file without locks."""

import gc
import os
import threading
import time

_PATH = os.environ.get("BENCHSITE_GC_TRACE")

if _PATH:
    _fd = os.open(_PATH, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    _started: dict[int, float] = {}

    def _trace(phase: str, info: dict) -> None:
        if phase == "start":
            _started[threading.get_ident()] = time.perf_counter()
            return
        began = _started.pop(threading.get_ident(), None)
        if began is None:
            return
        now = time.perf_counter()
        took = (now - began) * 1e6
        line = f"{os.getpid()} {os.getppid()} {info['generation']} {now:.6f} {took:.1f} {info['collected']}\n"
        os.write(_fd, line.encode())

    gc.callbacks.append(_trace)

    def _forked() -> None:
        counts = " ".join(map(str, gc.get_count()))
        os.write(_fd, f"{os.getpid()} {os.getppid()} fork {time.perf_counter():.6f} {counts}\n".encode())

    os.register_at_fork(after_in_child=_forked)
