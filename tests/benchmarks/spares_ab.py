"""What do spare interpreters save? The same `benchsite run` with BENCHSITE_SPARES=0 and with spares, side by side.

    python tests/benchmarks/spares_ab.py [-w depth-sweep] [-d cpu] [-d cuda] [--rounds 3]
                                         [--time-budget 1] [--order off,on] [--out DIR]
    python tests/benchmarks/spares_ab.py -d cpu -d cuda --order on:8,on   # on a 16-core host: 8 at a time against 16
    git archive REF runner | tar -x -C /tmp/base   # then: the runner at REF against today's, spares on in both
    python tests/benchmarks/spares_ab.py -w transformer -d cpu --order base,on --baseline /tmp/base

PyTorch's as-written points each run in a freshly started interpreter, and their fidelity twins start two more per
round (runner.measure.spares). Each arm is one complete `python -m runner run` of the chosen workloads (as-written,
PyTorch, twins on), in a fresh process, writing its own result file and phase log (phases-N-ARM.jsonl, N its place
in the order: each measurement's phases and when it ended, so the gaps between measuring processes show); the arms
run one after the other in the order given. Prints, per arm: the run's wall time, the points measured, the twins and
their rounds, each twin's ratio and verdict, the spares' batches (how many, their interpreters, the seconds waited
for them), the seconds its measuring processes spent building their points (the phase log's build_s: where an
import not made ahead shows), the span of its measuring (from the first batch's start to the last measuring
process's end: the run without its probe, plan and self-tests), and then the wall-time ratio of each arm to the
first. An arm `on:N` runs with spares started N at a time (BENCHSITE_SPARE_BATCH=N) instead of batch_limit's rule
(one per core). An arm `base` runs, spares on, the `runner/` package in the folder --baseline names (an earlier
commit's, by `git archive`): what a change to the spares saves. Both arms' twins must stay as faithful as each
other: spares change when an interpreter imports, not what it runs. Not part of the test run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def run_arm(arm: str, number: int, args: argparse.Namespace, out: Path) -> dict:
    name = f"{number}-{arm.replace(':', '-')}"  # an arm that runs twice keeps both files
    path = out / f"spares-{name}.yaml"
    cmd = [sys.executable, "-m", "runner", "run", "--profile", args.profile, "-f", "torch", "--variant", "as-written"]
    for workload in args.workload:
        cmd += ["-w", workload]
    for device in args.device:
        cmd += ["-d", device]
    cmd += ["--fidelity", "--rounds", str(args.rounds), "--no-equivalence", "-o", str(path)]
    if args.time_budget:
        cmd += ["--time-budget", str(args.time_budget)]
    if args.no_profiler:
        cmd += ["--no-profiler"]
    env = {**os.environ, "BENCHSITE_SPARES": "0" if arm == "off" else "1"}
    env.pop("BENCHSITE_SPARE_BATCH", None)
    if arm.startswith("on:"):
        env["BENCHSITE_SPARE_BATCH"] = arm.split(":", 1)[1]
    phases = out / f"phases-{name}.jsonl"
    phases.unlink(missing_ok=True)
    env["BENCHSITE_PHASE_LOG"] = str(phases)  # each measurement's phases and its end
    cwd = ROOT
    if arm == "base":
        if args.baseline is None or not (args.baseline / "runner" / "__main__.py").is_file():
            raise SystemExit("the base arm needs --baseline DIR, a folder holding an earlier runner/ package")
        cwd = args.baseline  # `python -m runner` and every interpreter it starts import the runner found there
    started = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0 or not path.exists():
        print(done.stdout[-3000:], done.stderr[-3000:], file=sys.stderr)
        raise SystemExit(f"the {arm} arm failed (exit {done.returncode})")
    data = yaml.safe_load(path.read_text())
    measured = [m for m in data["measurements"] if m["status"] == "ok"]
    entries = [json.loads(line) for line in phases.read_text().splitlines()] if phases.exists() else []
    batches = [b for b in entries if "spares" in b]
    twins = [m for m in measured if m.get("fidelity")]
    return {
        "arm": arm,
        "wall_s": wall,
        "points": len(measured),
        "failed": sum(m["status"] == "failed" for m in data["measurements"]),
        "twins": twins,
        "rounds": sum(m["fidelity"]["rounds"] for m in twins),
        "batches": len(batches),
        "spares": sum(b["count"] for b in batches),
        "waited_s": sum(b["ready_s"] for b in batches),
        "largest": max((b["count"] for b in batches), default=0),
        "build_s": sum(e.get("build_s", 0.0) for e in entries),
        # from the start of the first spare batch or measuring process to the end of the last one
        "span_s": max((e["ended_at"] for e in entries), default=0.0)
        - min((e["ended_at"] - e.get("ready_s", e.get("wall_s", 0.0)) for e in entries), default=0.0),
    }


def describe(m: dict) -> str:
    point = ",".join(f"{k}={v}" for k, v in m["point"].items())
    f = m["fidelity"]
    interval = f"({f['ci95'][0]:.3f} .. {f['ci95'][1]:.3f})"
    return f"{m['workload']}[{point}] {m['device']}: {f['ratio']:.3f} {interval} {f['verdict']}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-w", "--workload", action="append", default=None)
    parser.add_argument("-d", "--device", action="append", default=None)
    parser.add_argument("--profile", default="standard")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--time-budget", type=float, default=None)
    parser.add_argument("--no-profiler", action="store_true", help="no profiled step after each measurement")
    parser.add_argument(
        "--order",
        default="off,on",
        help="the arms, in the order they run: off, on, on:N (N spares at once), base (--baseline's runner)",
    )
    parser.add_argument("--out", type=Path, default=Path("/tmp/benchsite-spares-ab"))
    parser.add_argument("--baseline", type=Path, default=None, help="for the base arm: a folder with an older runner/")
    args = parser.parse_args()
    args.workload = args.workload or ["depth-sweep"]
    args.device = args.device or ["cpu"]
    args.out.mkdir(parents=True, exist_ok=True)
    results = [run_arm(arm, number, args, args.out) for number, arm in enumerate(args.order.split(","), start=1)]
    head = f"{'arm':<6} {'wall s':>8} {'points':>7} {'failed':>7} {'twins':>6} {'rounds':>7}"
    print(f"\n{head} {'batches':>8} {'spares':>7} {'largest':>8} {'waited s':>9} {'build s':>8} {'span s':>7}")
    for r in results:
        counts = f"{r['points']:>7} {r['failed']:>7} {len(r['twins']):>6} {r['rounds']:>7}"
        batches = f"{r['batches']:>8} {r['spares']:>7} {r['largest']:>8} {r['waited_s']:>9.1f} {r['build_s']:>8.1f}"
        print(f"{r['arm']:<6} {r['wall_s']:>8.1f} {counts} {batches} {r['span_s']:>7.1f}")
    for r in results:
        print(f"\n{r['arm']} twins (benchsite / script, 95% interval):")
        for m in r["twins"]:
            print("  " + describe(m))
    walls = {r["arm"]: [x["wall_s"] for x in results if x["arm"] == r["arm"]] for r in results}
    base = results[0]["arm"]
    for arm, wall in walls.items():
        if arm != base:
            ratio = statistics.median(wall) / statistics.median(walls[base])
            print(f"\nwall time, {arm} / {base}: {ratio:.3f}")


if __name__ == "__main__":
    main()
