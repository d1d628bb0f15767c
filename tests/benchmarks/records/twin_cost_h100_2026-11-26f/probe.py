"""Where a fresh measuring process's 4-6 s 'build' goes on a lent host: each stage timed in a fresh interpreter."""
import json, sys, time
t = time.perf_counter(); marks = {}
def mark(name):
    global t
    now = time.perf_counter(); marks[name] = round(now - t, 3); t = now
import torch; mark("import torch")
from runner.measure import worker; mark("import runner.measure.worker")
fw = worker._framework("torch"); mark("framework harness module")
dev_kind = sys.argv[1]; wl = sys.argv[2]
device = fw.make_device(dev_kind, "CPU"); mark("make_device")
from runner.measure.worker import get_workload
w = get_workload(wl); cases = w.cases("standard"); mark("cases")
builder = worker.import_builder(w.implementations["torch"]); mark("import_builder")
import cProfile, pstats, io
prof = cProfile.Profile(); prof.enable()
program = builder(cases[int(sys.argv[3]) if len(sys.argv) > 3 else 0], "as-written", device)
prof.disable(); mark("builder()")
buf = io.StringIO(); pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(18)
print("\n".join(l[:160] for l in buf.getvalue().splitlines()[6:34]), file=sys.stderr)
print(json.dumps({"device": dev_kind, "workload": wl, **marks}))
