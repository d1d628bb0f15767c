"""The compile-ahead pass: a group's compiled points compiled several at a time before their measurements, into
the run's compile cache."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from typing import Any

from runner.api.options import ahead_children_override
from runner.api.plan import Group, Plan, Progress
from runner.measure import executor, protocol
from runner.results.schema import Measurement

# The compile-ahead pass (compile_ahead): at most this many children side by side, each with at least this many CPU
# cores and this much device memory. A child spends most of its time in Dynamo's, AOTAutograd's and Inductor's
# Python (one core), and the tuned sweep's largest first step peaks at 6.3 GiB: on the H100 machine (16 cores) the
# 13 children's seconds summed to 481 s with 8 side by side and 483 s with 4, the pass taking 78 s against 135 s
# (docs/methodology/timing.md, Compiled points). BENCHSITE_AHEAD_CHILDREN=N sets the number instead (docs/cli.md).
AHEAD_MAX_CHILDREN = 8
AHEAD_CORES_PER_CHILD = 2
AHEAD_GIB_PER_CHILD = 8


def ahead_children(plan: Plan, group: Group, pending: int) -> int:
    """How many compile-ahead children the group gets: none where its loop compiles nothing on this device, and
    none where fewer than two fit side by side (one child compiles no sooner than the measuring process)."""
    if not plan.options.compile_ahead or group.skip_reason:
        return 0
    if group.device not in group.workload.compiled_on.get((group.framework, group.variant), ()):
        return 0
    if group.device == "cpu":
        memory = plan.machine.memory_gib
    else:
        vendor = {"cuda": "nvidia", "rocm": "amd", "mps": "apple"}[group.device]
        memory = next((a.memory_gib or 0.0 for a in plan.machine.accelerators if a.vendor == vendor), 0.0)
    cores = os.cpu_count() or 1
    forced = ahead_children_override()
    if forced is None:
        children = min(AHEAD_MAX_CHILDREN, cores // AHEAD_CORES_PER_CHILD, int(memory // AHEAD_GIB_PER_CHILD))
    else:
        children = forced
    children = min(children, pending)
    return children if children >= 2 else 0


def compile_ahead(plan: Plan, group: Group, progress: Progress, done: dict[int, Measurement] | None = None) -> None:
    """Compile the group's points ahead of their measurements, several at a time, into the run's compile cache.

    A compiled point's warm-up is mostly its compilation, and the measuring process compiles its points one after
    another while the device idles and most cores wait: the tuned transformer sweep's 13 points on an H100 spent
    347 s warming up. Here each point's first step runs in a child of its own, `ahead_children` at a time, largest
    first. The measuring process then compiles each point from a fresh Dynamo (runner.frameworks.torch.workloads.
    compile_fresh) and Inductor loads the graphs from the cache; its notes say how many it loaded and how many it
    compiled itself. What is timed does not change: the same kernels, autotuned by the measuring process alone
    (runner.frameworks.torch.compile_ahead_setup), all before the clock. A point that fails here only loses its
    head start."""
    done = done or {}
    pending = [(i, c) for i, c in zip(group.indices, group.cases, strict=True) if i not in done]
    children = ahead_children(plan, group, len(pending))
    if not children:
        return
    pending.sort(key=lambda item: -(item[1].flops_per_unit or 0.0))
    cores = os.cpu_count() or 1
    job = {
        **plan.job(group, "compile"),
        "compile_cache": plan.compile_cache,
        "compile_threads": max(1, cores // children),
    }
    finished: list[dict[str, Any]] = []
    started = time.perf_counter()
    progress.ahead(group, 0, len(pending), children)

    def on_event(event: dict[str, Any]) -> None:
        if event.get("event") == "compiled":
            finished.append(event)
            progress.ahead(group, len(finished), len(pending), children)

    jobs = [{**job, "case_indices": [index]} for index, _ in pending]
    failures = executor.run_parallel(jobs, children, plan.timeout_s, on_event)
    failed = [e for e in finished if e["status"] == "failed"]
    reasons = [f"{e['error']['type']}: {e['error']['message'][:200]}" for e in failed]
    reasons += [f"{f.type}: {f.message[:200]}" for f in failures if f is not None]
    ok = sum(e["status"] == "ok" for e in finished)
    seconds = time.perf_counter() - started
    text = (
        f"Compiled {ok} of {len(pending)} {group.workload.id} {group.variant} {group.framework}/{group.device} points "
        f"ahead in {seconds:.0f} s, {children} at a time"
    )
    protocol.log_phases(
        {
            "workload": group.workload.id,
            "variant": group.variant,
            "framework": group.framework,
            "device": group.device,
            "ahead_pass_s": seconds,
            "children": children,
            "points": len(pending),
        }
    )
    if reasons:
        text += f"; the rest compile in their measurement ({reasons[0]})"
    progress.note(text)


@contextlib.contextmanager
def compile_cache(plan: Plan) -> Iterator[None]:
    """The folder compilers cache their work in during the run (plan.compile_cache, handed to every child): the
    user's TORCHINDUCTOR_CACHE_DIR where set, else a folder of this run's own, removed at its end. A run's own cache
    makes its warm-up and wall times the same on a machine whose cache is cold or warm from other work, and leaves
    nothing behind (Inductor's cache of the transformer sweep holds hundreds of MB)."""
    own = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if own:
        plan.compile_cache = own
        yield
        return
    folder = tempfile.mkdtemp(prefix="benchsite-compile-")
    plan.compile_cache = folder
    try:
        yield
    finally:
        plan.compile_cache = None
        shutil.rmtree(folder, ignore_errors=True)
