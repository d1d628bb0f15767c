"""Where a fresh measuring process's 4-6 s 'build' goes on a lent host: each stage timed in a fresh interpreter.

    PYTHONPATH=. python probe.py DEVICE WORKLOAD [CASE]

Prints one JSON line of seconds per stage, and the cumulative profile of the builder on stderr."""

import cProfile
import io
import json
import pstats
import sys
import time

marks: dict[str, float] = {}
clock = [time.perf_counter()]


def mark(name: str) -> None:
    now = time.perf_counter()
    marks[name] = round(now - clock[0], 3)
    clock[0] = now


import torch  # noqa: E402, F401 (timed: the first stage)

mark("import torch")
from runner.measure import worker  # noqa: E402

mark("import runner.measure.worker")
framework = worker._framework("torch")
mark("framework harness module")
kind, name = sys.argv[1], sys.argv[2]
device = framework.make_device(kind, "CPU")
mark("make_device")
workload = worker.get_workload(name)
cases = workload.cases("standard")
mark("cases")
builder = worker.import_builder(workload.implementations["torch"])
mark("import_builder")
profile = cProfile.Profile()
profile.enable()
program = builder(cases[int(sys.argv[3]) if len(sys.argv) > 3 else 0], "as-written", device)
profile.disable()
mark("builder()")
text = io.StringIO()
pstats.Stats(profile, stream=text).sort_stats("cumulative").print_stats(18)
print("\n".join(line[:160] for line in text.getvalue().splitlines()[6:34]), file=sys.stderr)
print(json.dumps({"device": kind, "workload": name, **marks}))
