"""Parent side of the measuring child processes: spawn, stream events, enforce time limits, survive
crashes. A failure of any kind becomes data (an ErrorInfo) and the caller goes on."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

from runner.measure import forkserver
from runner.measure.protocol import EXIT_CASE_FAILED, WORKER_MODULE, seed_process
from runner.measure.spares import Spare, end_group
from runner.results import privacy

EventHandler = Callable[[dict[str, Any]], None]
# Starting a child and importing a framework can take a while on a cold disk (CUDA libraries are GBs).
STARTUP_ALLOWANCE_S = 120.0
STDERR_TAIL = 2000


class Interrupted(Exception):
    """The user pressed Ctrl-C; the child was stopped and what finished is kept."""


@dataclass
class ChildFailure:
    type: str  # Crash, Timeout, OutOfMemory, or the exception class the child reported
    message: str
    traceback: str | None = None

    def as_error(self) -> dict[str, Any]:
        return {"type": self.type, "message": self.message[:4000], "traceback": self.traceback}


def _reader(stream: IO[str], sink: queue.Queue[str | None]) -> None:
    for line in stream:
        sink.put(line)
    sink.put(None)


def parse_event(line: str) -> dict[str, Any] | None:
    """The event on a line of the child's protocol, else None. A seed's loop keeps its stdout as its script has it
    (runner.measure.worker._protocol), so a line may be a library's print, or such a print without its newline
    with the event run on after it: the event is the line from its `{"event"` on."""
    at = line.find('{"event"')
    if at < 0:
        return None
    try:
        event = json.loads(line[at:])
    except json.JSONDecodeError:
        return None
    return event if isinstance(event, dict) else None


def _kill(proc: Child) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(proc.pid, signal.SIGKILL)  # a fork killed before it made its own group
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)


def _stderr_tail(handle: IO[bytes]) -> str:
    handle.seek(0, os.SEEK_END)
    size = handle.tell()
    handle.seek(max(0, size - STDERR_TAIL))
    return privacy.scrub(handle.read().decode("utf-8", errors="replace").strip())


def _describe_exit(code: int, stderr: str) -> ChildFailure:
    if code < 0:
        sig = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
        if -code == signal.SIGKILL:
            return ChildFailure(
                "OutOfMemory",
                f"the measuring process was killed ({sig}); on Linux this is almost always the out-of-memory killer",
                stderr or None,
            )
        return ChildFailure("Crash", f"the measuring process died of signal {sig}", stderr or None)
    last = stderr.strip().splitlines()[-1] if stderr.strip() else "no output"
    return ChildFailure("Crash", f"the measuring process exited with code {code}: {last}", stderr or None)


_zygotes: dict[str, tuple[tuple[object, ...], forkserver.Zygote]] = {}
_zygotes_lock = threading.Lock()


def _preload(framework: str) -> list[str]:
    """What a framework's fork server imports: the worker, the framework, and its workload implementations."""
    from runner.frameworks import FRAMEWORKS
    from runner.workloads import all_workloads

    modules = [WORKER_MODULE, FRAMEWORKS[framework]]
    for workload in all_workloads():
        if framework in workload.implementations:
            modules.append(workload.implementations[framework].partition(":")[0])
    return list(dict.fromkeys(modules))


def _zygote_for(framework: str | None) -> forkserver.Zygote | None:
    """The fork server for this framework, started on first use; None where there is none (another OS, switched
    off with BENCHSITE_FORK_SERVER=0, or the framework fails to import: a fresh process then reports why).

    A server serves only the environment and working directory it was started in: they are read at import
    time by some libraries (TF_ENABLE_ONEDNN_OPTS), so a change starts a new server, as a fresh process would
    see it."""
    if framework is None or not forkserver.SUPPORTED or os.environ.get("BENCHSITE_FORK_SERVER", "1") == "0":
        return None
    key = (tuple(sorted(os.environ.items())), os.getcwd(), sys.executable)
    with _zygotes_lock:
        known = _zygotes.get(framework)
        if known is not None and (known[0] != key or not known[1].alive):
            known[1].close()
            known = None
        if known is None:
            known = (key, forkserver.Zygote(_preload(framework)))
            _zygotes[framework] = known
    server = known[1]
    return server if server.wait_ready(STARTUP_ALLOWANCE_S) else None


def close_fork_servers() -> None:
    """Stop every fork server (the end of a run; also at exit). Children already forked run on."""
    with _zygotes_lock:
        servers = [server for _, server in _zygotes.values()]
        _zygotes.clear()
    for server in servers:
        server.close()


atexit.register(close_fork_servers)


Child = subprocess.Popen[str] | forkserver.ForkedChild


def _start(job: dict[str, Any], env: dict[str, str] | None, stderr: IO[bytes], spare: Spare | None = None) -> Child:
    """A fresh measuring process for the job: a fork of its framework's server, else `python -m runner.measure.worker`
    (always for a seed's loop, see `seed_process`), or the spare interpreter given (runner.measure.spares), started
    ahead as `python -m runner.measure.worker` would be."""
    if spare is not None:
        return spare.proc
    server = _zygote_for(job.get("framework")) if env is None and not seed_process(job) else None
    if server is not None:
        try:
            return server.spawn(stderr)
        except OSError:
            pass  # the server went away: a fresh interpreter instead
    return subprocess.Popen(
        [sys.executable, "-m", WORKER_MODULE],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
        start_new_session=True,  # own group: Ctrl-C stays with us
        env=env,
    )


def run_child(
    job: dict[str, Any],
    on_event: EventHandler,
    timeout_s: float,
    env: dict[str, str] | None = None,
    stop: threading.Event | None = None,
    spare: Spare | None = None,
) -> ChildFailure | None:
    """Run one job in a fresh measuring process (see `_start`) and pass its events to on_event.

    The time limit applies per case: it restarts at every `start` event (plus a start-up allowance
    for the first). Returns None when the child finished cleanly, else why it did not. Raises Interrupted
    on Ctrl-C after killing the child; `stop`, once set (from another thread), kills it too. `spare`: a fresh
    interpreter started ahead (runner.measure.spares) that takes the job instead of a newly started one.
    """
    with spare.stderr if spare is not None else tempfile.TemporaryFile() as stderr:
        proc = _start(job, env, stderr, spare)
        assert proc.stdin is not None and proc.stdout is not None
        lines: queue.Queue[str | None] = queue.Queue()
        reader = threading.Thread(target=_reader, args=(proc.stdout, lines), daemon=True)
        reader.start()
        try:
            proc.stdin.write(json.dumps(job))
            proc.stdin.close()
        except BrokenPipeError:
            pass
        deadline = time.monotonic() + timeout_s + STARTUP_ALLOWANCE_S
        reported_error: ChildFailure | None = None
        try:
            while True:
                if stop is not None and stop.is_set():
                    _kill(proc)
                    return ChildFailure("Interrupted", "stopped: the run was interrupted")
                try:
                    line = lines.get(timeout=max(0.05, min(1.0, deadline - time.monotonic())))
                except queue.Empty:
                    if time.monotonic() >= deadline:
                        _kill(proc)
                        return ChildFailure(
                            "Timeout",
                            f"no result within the {timeout_s:.0f} s time limit; the measuring process was stopped",
                        )
                    continue
                if line is None:
                    break
                event = parse_event(line)
                if event is None:
                    continue
                if event.get("event") == "start":
                    deadline = time.monotonic() + timeout_s
                if event.get("event") == "error":
                    err = event["error"]
                    reported_error = ChildFailure(err["type"], err["message"], err.get("traceback"))
                    continue
                on_event(event)
            code = proc.wait()
            end_group(proc.pid)
        except KeyboardInterrupt:
            _kill(proc)
            raise Interrupted() from None
        finally:
            if proc.poll() is None:
                _kill(proc)
            reader.join(timeout=5)  # the pipe is at EOF once the child (and its group) is gone
            if not reader.is_alive():
                proc.stdout.close()
        if reported_error is not None:
            return reported_error
        if code not in (0, EXIT_CASE_FAILED):
            return _describe_exit(code, _stderr_tail(stderr))
        return None


def run_cases(
    job: dict[str, Any],
    indices: list[int],
    timeout_s: float,
    on_event: EventHandler,
    take_spare: Callable[[], Spare | None] | None = None,
) -> dict[int, dict[str, Any]]:
    """Measure every case index, restarting the child after a case fails, crashes or hangs. `take_spare` gives
    the interpreter each child runs in, where they are started ahead (runner.measure.spares).

    Returns index -> {"status": "ok", "measurement": ...} or {"status": "failed", "error": ...}. (A seed's loop is
    handed one case at a time by runner.api.measure_group, as its script runs one configuration per process.)
    """
    results: dict[int, dict[str, Any]] = {}
    remaining = list(indices)
    current: list[int] = []  # the case the child is measuring now

    def handle(event: dict[str, Any]) -> None:
        if event.get("event") == "start":
            current[:] = [event["index"]]
        elif event.get("event") == "result":
            results[event["index"]] = event
            if event["index"] in remaining:
                remaining.remove(event["index"])
        on_event(event)

    while remaining:
        current.clear()
        before = len(results)
        # the cases that failed so far go with the job: a ladder stops above its first failed rung
        failed = list(job.get("failed", [])) + [
            [i, r.get("error", {}).get("type", "failed")] for i, r in results.items() if r.get("status") == "failed"
        ]
        # and the medians measured so far: a sweep's ceiling predicts from them (runner.measure.worker.SweepCeiling)
        measured = {
            **job.get("measured", {}),
            **{str(i): r["measurement"].get("median_s") for i, r in results.items() if r.get("status") == "ok"},
        }
        spare = take_spare() if take_spare is not None else None
        extra = {**({"failed": failed} if failed else {}), **({"measured": measured} if measured else {})}
        failure = run_child({**job, "case_indices": remaining, **extra}, handle, timeout_s, spare=spare)
        if failure is None and remaining and len(results) > before:
            continue  # the child reported a failed case itself and stopped: go on in a fresh one
        if failure is not None and remaining:
            # The case that was running (or, if the child died before starting one, the next) failed.
            index = current[0] if current and current[0] in remaining else remaining[0]
            event = {"event": "result", "index": index, "status": "failed", "error": failure.as_error()}
            results[index] = event
            remaining.remove(index)
            on_event(event)
        elif failure is None and remaining:
            # The child stopped early without saying why (it reports failures itself); do not loop forever.
            for index in list(remaining):
                event = {
                    "event": "result",
                    "index": index,
                    "status": "failed",
                    "error": {"type": "Crash", "message": "the measuring process ended without a result"},
                }
                results[index] = event
                remaining.remove(index)
                on_event(event)
    return results


def run_parallel(
    jobs: list[dict[str, Any]], concurrency: int, timeout_s: float, on_event: EventHandler
) -> list[ChildFailure | None]:
    """Run each job in its own fresh child, `concurrency` at a time, in order; on_event gets every child's events,
    one at a time. Returns each job's failure (None where its child finished cleanly). On Ctrl-C every running
    child is stopped and Interrupted is raised."""
    from concurrent.futures import ThreadPoolExecutor

    stop = threading.Event()
    lock = threading.Lock()

    def handle(event: dict[str, Any]) -> None:
        with lock:
            on_event(event)

    def run(job: dict[str, Any]) -> ChildFailure | None:
        if stop.is_set():
            return ChildFailure("Interrupted", "not started: the run was interrupted")
        return run_child(job, handle, timeout_s, stop=stop)

    pool = ThreadPoolExecutor(max(1, concurrency), thread_name_prefix="benchsite-child")
    futures = [pool.submit(run, job) for job in jobs]
    try:
        return [future.result() for future in futures]
    except KeyboardInterrupt:
        stop.set()
        raise Interrupted() from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def run_simple(job: dict[str, Any], timeout_s: float) -> tuple[dict[str, Any] | None, ChildFailure | None]:
    """Run a describe, selftest or peak job; returns its one payload event or the failure."""
    events: list[dict[str, Any]] = []
    failure = run_child(job, events.append, timeout_s)
    payload = next((e for e in events if e.get("event") in ("describe", "selftest", "peak")), None)
    if payload is None and failure is None:
        failure = ChildFailure("Crash", "the child process returned no answer")
    return payload, failure
