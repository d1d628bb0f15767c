"""The protocol between the measuring parent (runner.measure.executor) and its child (runner.measure.worker).

Both sides import this module and nothing of each other:

- the child is `python -m runner.measure.worker` (WORKER_MODULE) or a fork of a framework's fork server
  (runner.measure.forkserver) that runs the same `main()`;
- it reads one JSON job on stdin and writes JSON-line events on stdout (the job kinds and events are listed in
  runner.measure.worker's docstring);
- it exits 0 when every case finished, EXIT_CASE_FAILED after it reported a failed case itself (the parent starts
  a fresh child for the cases that remain), anything else when it crashed;
- `seed_process(job)` says, for parent and child alike, whether the job's points run as their seed's script runs;
- `log_phases` appends where a measurement's time went to the phase log, from either side.
"""

from __future__ import annotations

import json
import os
from typing import Any

WORKER_MODULE = "runner.measure.worker"
# The worker's exit code after it reported a failed case itself: start a fresh child for the rest.
EXIT_CASE_FAILED = 3
# The line a spare interpreter (runner.measure.spares) writes once it has imported ahead and waits for its work.
SPARE_READY = "benchsite-spare-ready"

# Frameworks whose as-written loops are measured as their seed's script runs: one point per freshly started
# interpreter, never a fork of the framework's server, the heap neither collected nor frozen by the harness (see
# `seed_process`). Measured on an H100 machine's 16-core CPU (tests/benchmarks/fork_probe.py): seed 000's
# script took 207 ms per epoch as `python seed_000.py` and 294 to 398 ms in a fork of a process that had imported
# torch. Its DataLoader's pin-memory thread (started wherever CUDA is available, also for a CPU loop) calls
# torch.set_num_threads(1) before the main thread's first parallel operator; in a fresh interpreter that setting
# reaches the main thread, which then trains on one thread, as the seed's own script did; in a fork it does not,
# and 16 OpenMP threads contend with the loader's workers. A plain script's cyclic collector also scans the
# framework's whole heap, which the fork server's frozen heap would hide.
SEED_PROCESS_FRAMEWORKS = frozenset({"torch"})
# The workloads whose as-written loop is a seed's single-process script. Not the engines' workloads (a Spark session
# or a process group is the loop's own machinery, started once for a group's points) nor data-parallel training.
SEED_PROCESS_WORKLOADS = frozenset({"tabular-mlp", "depth-sweep", "cifar-lenet", "mnist-cnn", "transformer"})

# What such a point imports before its timed loop, whatever the point, beyond its framework: PyTorch's optimizers
# import torch._dynamo when first constructed (3.5 s on an H100 host's disk, 0.9 s on the 2-core VM), and
# transformers imports it too. A spare worker (runner.measure.spares) imports these ahead, as it imports the framework:
# the same modules are loaded when the loop starts, only the time of the import moved. tests/test_spares.py builds
# every such workload's points and checks that each of these was imported by then.
SEED_IMPORTS = ("torch._dynamo",)
SEED_IMPORTS_BY_WORKLOAD = {"transformer": ("transformers",)}
# The module of each transformer model family's PyTorch classes. `import transformers` loads none of them: the first
# use of a class does (1.8 to 2.2 s each on the 2-core VM, after transformers itself), so a point imports its own
# family's module, and only that one, while it builds its model. The fork server imports them all once.
TRANSFORMER_MODULES = {
    "bert": "transformers.models.bert.modeling_bert",
    "vit": "transformers.models.vit.modeling_vit",
    "convnext": "transformers.models.convnext.modeling_convnext",
}


def seed_imports(workload: str, config: dict[str, Any] | None = None) -> tuple[str, ...]:
    """The modules a seed-process point of this workload imports before its timed loop in any case; with the
    point's config, those of that point alone too (a transformer point's model family)."""
    point: tuple[str, ...] = ()
    if workload == "transformer" and config is not None:
        point = (TRANSFORMER_MODULES[config["model"]["family"]],)
    return (*SEED_IMPORTS, *SEED_IMPORTS_BY_WORKLOAD.get(workload, ()), *point)


def seed_process(job: dict[str, Any]) -> bool:
    """Whether this job measures as-written points that must run as their seed's script runs (a fresh interpreter
    per point, the interpreter's own garbage collection)."""
    return (
        job.get("kind") == "measure"
        and job.get("variant") == "as-written"
        and job.get("framework") in SEED_PROCESS_FRAMEWORKS
        and job.get("workload") in SEED_PROCESS_WORKLOADS
    )


def log_phases(entry: dict[str, Any]) -> None:
    """Where a run's time went: one JSON line appended to the file BENCHSITE_PHASE_LOG names, for
    tests/benchmarks/suite_time.py (a measurement's build, warm-up, steady state, profiled step and close; a
    compile-ahead pass and each point it compiled); nothing without it."""
    path = os.environ.get("BENCHSITE_PHASE_LOG")
    if not path:
        return
    with open(path, "a") as handle:  # one short write per line: lines from concurrent processes do not interleave
        handle.write(json.dumps(entry) + "\n")
