"""Times every collection of Python's cyclic garbage collector, and every DataLoader epoch, for fidelity.py
--gc-trace.

Python imports `sitecustomize` at start-up from the first folder on its path that has one, so a process started
with this folder on PYTHONPATH and BENCHSITE_GC_TRACE naming a file installs the hook before any other code
runs; processes forked from it (benchsite's fork server and its measuring children, DataLoader workers) inherit
it. Each collection appends one line to that file: pid, parent pid, generation, when it ended
(time.perf_counter), how long it took (microseconds) and how many objects it freed. The file is opened once in
append mode, so forked processes write whole lines to the same file without locks.

Each pass over a PyTorch DataLoader (an epoch of the seeds' loops) appends one line too, when it ends: pid, parent
pid, `epoch`, when `iter(loader)` was called, when its first batch arrived and when it was exhausted (all
time.perf_counter, one clock for every process on the host), and its batches; so each collection can be placed in
an epoch, warm-up or timed. The DataLoader is wrapped once its module is imported (`_EpochFinder`), so this hook
imports nothing itself: each process imports PyTorch when it would have. What the wrapper adds to an epoch (a
generator frame per batch, three clock reads, one short write) falls on both sides of a fidelity row
alike."""

import gc
import importlib.abc
import os
import sys
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

    def _epochs(batches, began: float):
        first = None
        n = 0
        for batch in batches:
            if first is None:
                first = time.perf_counter()
            n += 1
            yield batch
        end = time.perf_counter()
        first = end if first is None else first
        os.write(_fd, f"{os.getpid()} {os.getppid()} epoch {began:.6f} {first:.6f} {end:.6f} {n}\n".encode())

    def _wrap(module) -> None:
        loader = module.DataLoader
        plain_iter = loader.__iter__

        def __iter__(self):
            began = time.perf_counter()
            return _epochs(plain_iter(self), began)

        loader.__iter__ = __iter__

    class _EpochFinder(importlib.abc.MetaPathFinder):
        """Finds nothing itself: when torch.utils.data.dataloader is imported, it lets the other finders find it and
        wraps its DataLoader once the module has run, then leaves sys.meta_path."""

        NAME = "torch.utils.data.dataloader"

        def find_spec(self, name, path, target=None):
            if name != self.NAME:
                return None
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(name, path, target)
                if spec is not None and spec.loader is not None:
                    break
            else:
                return None
            sys.meta_path.remove(self)
            run = spec.loader.exec_module

            def exec_module(module):
                run(module)
                _wrap(module)

            spec.loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, _EpochFinder())
