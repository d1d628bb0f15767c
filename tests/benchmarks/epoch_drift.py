"""Does a fresh process's epoch get slower (or faster) the longer it runs? Seed 001, epoch by epoch, per process.

    python tests/benchmarks/epoch_drift.py [--device cpu --device cuda] [--depth 2] [--processes 12]
                                           [--epochs 1000] [--window 75 --window 205 --window 700] [--json F]

The fidelity twin compares the mean seconds per epoch of two fresh processes that need not time the same number of
epochs: benchsite's measurement stops once its interval is tight (on the H100 host's CPU, seed 001 at depth 2
stopped after 75 epochs), while the script times about a second's worth (205 epochs there, about 700 in
fidelity.py). If a process's epochs drift with its age, the two figures differ by the drift alone.

Here each process is started fresh (`python -c`, as a user's shell starts the script) and times every epoch of
the loop on its own, after the one warm-up epoch both sides run, alternating two arms process by process:

- script:  the transcription's own `run(1, log)` (runner/fidelity/seeds/seed_001.py executed up to its warm-up line,
           as tests/benchmarks/loop_ab.py does);
- harness: benchsite's as-written program (DepthAsWritten.run_unit), built as the measuring process builds it.

Both print their per-epoch line to a line-buffered temporary file. Per arm, the table gives the median over
processes of the mean over each window's first N epochs, and of each tenth of the epochs, so a trend shows as the
windows or deciles move. Not part of the test run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

CHILD = """
import json, sys, tempfile, time
sys.path.insert(0, {root!r})
arm, kind, depth, epochs, profile = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
from tests.benchmarks import loop_ab
if arm == "script":
    ns = loop_ab.script_namespace(kind, depth, 1000)
    run = ns["run"]
    sync = (lambda: ns["torch"].cuda.synchronize()) if kind == "cuda" else (lambda: None)
    log = tempfile.TemporaryFile("w", buffering=1)
    def unit():
        run(1, log)
else:
    program, device, _ = loop_ab.harness_program(kind, depth, profile)
    log = tempfile.TemporaryFile("w", buffering=1)
    program.log = log
    unit, sync = program.run_unit, device.sync
unit()  # the warm-up epoch both sides run
sync()
times = []
clock = time.perf_counter
for _ in range(epochs):
    t0 = clock()
    unit()
    sync()
    times.append(clock() - t0)
print(json.dumps(times))
"""


def one_process(arm: str, kind: str, depth: int, epochs: int, profile: str) -> list[float]:
    argv = [sys.executable, "-c", CHILD.format(root=str(ROOT)), arm, kind, str(depth), str(epochs), profile]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"{arm} process failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", action="append", help="cpu, cuda (default: cpu)")
    parser.add_argument("--depth", type=int, default=2)
    parser.add_argument("--processes", type=int, default=12, help="per arm")
    parser.add_argument("--epochs", type=int, default=1000, help="timed epochs per process")
    parser.add_argument("--window", type=int, action="append", help="first-N-epoch windows (default: 75, 205, 700)")
    parser.add_argument("--profile", default="standard")
    parser.add_argument("--json", type=Path, help="also write every process's epoch times here")
    args = parser.parse_args()
    windows = [w for w in (args.window or [75, 205, 700]) if w <= args.epochs]
    record: dict[str, dict[str, list[list[float]]]] = {}
    for kind in args.device or ["cpu"]:
        per: dict[str, list[list[float]]] = {"script": [], "harness": []}
        record[kind] = per
        for p in range(args.processes):
            for arm in ("script", "harness") if p % 2 == 0 else ("harness", "script"):
                times = one_process(arm, kind, args.depth, args.epochs, args.profile)
                per[arm].append(times)
                means = ", ".join(f"first {w}: {statistics.fmean(times[:w]) * 1e3:.3f}" for w in windows)
                print(f"{kind} process {p + 1} {arm:7s} ms/epoch {means}", flush=True)
            if args.json:
                args.json.write_text(json.dumps(record))
        print(f"\n{kind}, depth {args.depth}: {args.processes} processes an arm, {args.epochs} epochs each")
        heads = [f"first {w}" for w in windows] + [f"tenth {i + 1}" for i in range(10)]
        print("| arm | " + " | ".join(heads) + " |")
        print("|---|" + "---:|" * (len(windows) + 10))
        for arm, runs in per.items():
            cols = [statistics.median(statistics.fmean(t[:w]) for t in runs) * 1e3 for w in windows]
            size = args.epochs // 10
            deciles = [
                statistics.median(statistics.fmean(t[i * size : (i + 1) * size]) for t in runs) * 1e3 for i in range(10)
            ]
            print(f"| {arm} | " + " | ".join(f"{c:.3f}" for c in cols + deciles) + " |")
        ratios = [
            statistics.median(statistics.fmean(t[:w]) for t in per["harness"])
            / statistics.median(statistics.fmean(t[:w]) for t in per["script"])
            for w in windows
        ]
        print("harness / script by window: " + ", ".join(f"{w}: {r:.3f}" for w, r in zip(windows, ratios, strict=True)))


if __name__ == "__main__":
    main()
