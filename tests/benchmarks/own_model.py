"""How long `benchsite run --model` takes for a small model on this machine's CPU, against its target.

    python tests/benchmarks/own_model.py [--runs 2] [--target 60] [-- EXTRA RUN OPTIONS]

Runs `benchsite run --model docs/examples/my_model.py:build --input-shape 3,32,32 --classes 10 -d cpu --profile
quick` (the example of docs/your-model.md) `--runs` times, one after another, each a real run in a fresh process
writing into a temporary folder, and prints per run the wall time (the model's check, the probe, every measurement
and the end-of-run answer), the run's own measuring time, and the ratio to the target (60 s on the 2-core VM).
Options after `--` are passed to every run (for example `--model hf:bert --input-shape tokens:128 --classes 2`
replaces the example). Not part of the test run.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ["--model", "docs/examples/my_model.py:build", "--input-shape", "3,32,32", "--classes", "10"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--target", type=float, default=60.0, help="seconds")
    parser.add_argument("extra", nargs="*", help="options for every run, after --")
    args = parser.parse_args()
    model = args.extra if "--model" in args.extra else [*EXAMPLE, *args.extra]
    rows = []
    for i in range(args.runs):
        with tempfile.TemporaryDirectory() as out:
            command = [sys.executable, "-m", "runner", "run", *model, "-d", "cpu", "--profile", "quick", "-o", out]
            start = time.perf_counter()
            done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
            wall = time.perf_counter() - start
        text = " ".join(done.stdout.split())
        took = re.search(r"Took ([0-9.]+) s", text)
        rows.append((i + 1, done.returncode, wall, float(took.group(1)) if took else float("nan")))
        if done.returncode:
            print(done.stdout[-2000:], done.stderr[-2000:], file=sys.stderr)
    print(f"`benchsite run {' '.join(model)} -d cpu --profile quick`, target {args.target:g} s\n")
    print("| run | exit | wall s | the run's own phases s | wall / target |")
    print("|---:|---:|---:|---:|---:|")
    for run, code, wall, took in rows:
        print(f"| {run} | {code} | {wall:.1f} | {took:.1f} | {wall / args.target:.2f} |")


if __name__ == "__main__":
    main()
