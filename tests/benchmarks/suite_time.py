"""How long does `benchsite run` take, and where does the time go? Wall time per phase of one run.

    python tests/benchmarks/suite_time.py [--profile quick] [--framework torch ...] [--device cpu ...]
                                          [--baseline REF] [--target 150]

Runs the suite through runner.api exactly as `benchsite run` does (child processes, self-tests, the peak
measurement, the equivalence check, every measurement) into a temporary folder, then prints the wall time
of each phase, the measuring summed per framework and per workload, and which measurements stopped at the
time budget before converging. With --baseline REF the same command is run first from a git worktree of REF
(an older commit: `benchsite run` through `python -m runner`) and the totals are printed side by side.
Targets: quick <= 150 s on a 2-core CPU with every extra installed (PyTorch, TensorFlow, JAX, Spark) and <= 180 s
on a machine with one GPU (PyTorch and JAX); standard <= 40 minutes on the 2-core CPU and <= 20 minutes on the
GPU machine. Not part of the test run.
"""

from __future__ import annotations

import argparse
import gzip
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


PARTS = ("build_s", "warmup_s", "steady_s", "profile_s", "close_s")


def print_parts(log: Path) -> None:
    """Each measurement's wall time split into its parts (the worker's BENCHSITE_PHASE_LOG lines), summed per
    workload, framework, device and variant, largest first; then each compile-ahead pass and the points it
    compiled (seconds and peak device memory per child)."""
    import json

    rows: dict[tuple[str, ...], list[float]] = {}
    passes, compiled, twins, batches, servers = [], [], [], [], []
    # the lines that are not a measurement, by the key that marks them
    others = {"twin": twins, "spares": batches, "ahead_pass_s": passes, "ahead": compiled, "fork_server": servers}
    text = gzip.decompress(log.read_bytes()).decode() if log.suffix == ".gz" else log.read_text()
    for line in text.splitlines():
        entry = json.loads(line)
        marked = next((kind for kind in others if kind in entry), None)
        if marked is not None:
            others[marked].append(entry)
            continue
        key = (entry["workload"], entry["framework"], entry["device"], entry["variant"])
        row = rows.setdefault(key, [0.0] * (len(PARTS) + 2))
        row[0] += 1
        row[1] += entry["wall_s"]
        for i, part in enumerate(PARTS):
            row[2 + i] += entry.get(part) or 0.0
    print(
        "\n| workload | framework | device | variant | n | wall (s) | build | warm-up | steady | profiled step "
        "| close |"
    )
    print("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for key, row in sorted(rows.items(), key=lambda item: -item[1][1]):
        print(f"| {' | '.join(key)} | {row[0]:.0f} | " + " | ".join(f"{v:.1f}" for v in row[1:]) + " |")
    totals = [sum(row[i] for row in rows.values()) for i in range(len(PARTS) + 2)]
    print(f"| **all** | | | | {totals[0]:.0f} | " + " | ".join(f"{v:.1f}" for v in totals[1:]) + " |")
    for entry in passes:
        print(
            f"\ncompile-ahead pass, {entry['workload']} {entry['framework']} {entry['device']} {entry['variant']}: "
            f"{entry['points']} points, {entry['children']} at a time, {entry['ahead_pass_s']:.1f} s"
        )
    if compiled:
        print("\n| point compiled ahead | status | child's seconds | peak device MiB |\n|---|---|---:|---:|")
        for entry in sorted(compiled, key=lambda e: -e["wall_s"]):
            point = ", ".join(f"{k}={v}" for k, v in entry["point"].items())
            peak = entry.get("peak_device_mib")
            print(f"| {point} | {entry['ahead']} | {entry['wall_s']:.1f} | {'' if peak is None else f'{peak:.0f}'} |")
        print(f"| **all** | | {sum(e['wall_s'] for e in compiled):.1f} | |")
    print_twins(twins, batches)
    print_gaps(text)
    for entry in servers:  # runner.measure.forkserver.settle_threads
        left = ", ".join(entry["threads_left"]) or "none"
        print(f"\nfork server of {entry['fork_server'][1]}: threads at its forks not known to be fork-safe: {left}")


def print_gaps(text: str) -> None:
    """The run's time between one logged piece's end and the next measuring process's start, charged to that
    process, by framework, device, loop and whether it is a fresh interpreter (a seed's loop) or a fork: the
    previous process's exit, the next one's hand-over, and whatever the parent did in between. Only where a new
    process starts (the points a forked process measures one after another are one process); a piece the log gives
    no end time (a compile-ahead pass) leaves the next gap uncounted."""
    import json
    import statistics

    gaps: dict[tuple[str, ...], list[float]] = {}
    previous, pid = None, None
    for line in text.splitlines():
        entry = json.loads(line)
        if "ended_at" not in entry:
            if "fork_server" not in entry:  # a piece with no end time (a compile-ahead pass): the next gap is unknown
                previous = None
            continue
        began = entry["ended_at"] - (entry.get("wall_s") or entry.get("ready_s") or 0.0)
        if previous is not None and "steady_s" in entry and entry.get("pid") != pid:
            kind = "fresh" if entry.get("seed_process") else "fork"
            key = (entry["framework"], entry["device"], entry["variant"], kind)
            gaps.setdefault(key, []).append(began - previous)
        previous, pid = entry["ended_at"], entry.get("pid")
    if not gaps:
        return
    print("\n| before a new measuring process of | n | between processes (s) | median (s) |\n|---|---:|---:|---:|")
    for key, values in sorted(gaps.items(), key=lambda item: -sum(item[1])):
        print(f"| {' '.join(key)} | {len(values)} | {sum(values):.1f} | {statistics.median(values):.3f} |")
    every = [v for values in gaps.values() for v in values]
    print(f"| **all** | {len(every)} | {sum(every):.1f} | {statistics.median(every):.3f} |")


def print_twins(twins: list[dict], batches: list[dict]) -> None:
    """Where the fidelity twins' time went (runner.api.twins._log_twin_side): per twin and side, the rounds after the
    run's own measurement, their wall time, the script's wait for its spare interpreter and the seconds its own
    timer covered; the rest of a script's wall time is its start, data, model and warm-up unit. Then the spare
    batches: how many interpreters were started and how long the run waited for them."""
    if twins:
        print(
            "\n| twin | side | runs | wall (s) | spare wait | timed by the script | rest |\n"
            "|---|---|---:|---:|---:|---:|---:|"
        )
        sums: dict[tuple[str, str], list[float]] = {}
        for entry in twins:
            key = (" ".join([entry["twin"], *entry.get("args", [])]), entry["side"])
            row = sums.setdefault(key, [0.0] * 4)
            row[0] += 1
            row[1] += entry["wall_s"]
            row[2] += entry.get("spare_s", 0.0)
            row[3] += entry.get("timed_s", 0.0)
        for (name, side), (n, wall, spare, timed) in sums.items():
            rest = wall - spare - timed if side == "script" else 0.0
            timed_text = f"{timed:.1f}" if side == "script" else ""
            rest_text = f"{rest:.1f}" if side == "script" else ""
            print(f"| {name} | {side} | {n:.0f} | {wall:.1f} | {spare:.1f} | {timed_text} | {rest_text} |")
        print(f"| **all** | | {len(twins)} | {sum(e['wall_s'] for e in twins):.1f} | | | |")
    if batches:
        kinds: dict[str, list[float]] = {}
        for entry in batches:
            row = kinds.setdefault(entry["spares"], [0.0, 0.0, 0.0])
            row[0] += 1
            row[1] += entry["count"]
            row[2] += entry["ready_s"]
        for kind, (n, count, ready) in kinds.items():
            print(f"\nspare batches of {kind}: {n:.0f}, {count:.0f} interpreters, {ready:.1f} s waited for")


def run_here(args: argparse.Namespace) -> tuple[float, dict[str, float], list[str], int]:
    import os

    from runner import api

    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "parts.jsonl"
        os.environ["BENCHSITE_PHASE_LOG"] = str(log)  # the measuring children inherit it
        options = api.RunOptions(
            profile=args.profile,
            frameworks=args.framework,
            devices=args.device,
            workloads=args.workload,
            time_budget_s=args.time_budget,
            output=Path(tmp),
        )
        start = time.perf_counter()
        plan = api.plan_run(options)
        result, _ = api.execute(plan)
        total = time.perf_counter() - start
        if log.exists():
            print_parts(log)
    unstable = [
        f"{m.workload} {' '.join(f'{k}={v}' for k, v in m.point.items())} {m.variant} {m.framework}/{m.device} "
        f"(+-{m.rel_ci_halfwidth or 0:.1%})"
        for m in result.measurements
        if m.status == "ok" and not m.stable
    ]
    return total, plan.phase_s, unstable, sum(m.status == "ok" for m in result.measurements)


def run_baseline(ref: str, args: argparse.Namespace) -> float:
    """Total wall time of the same command from a worktree of an older commit."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), ref], cwd=ROOT, check=True)
        try:
            argv = [sys.executable, "-m", "runner", "run", "--profile", args.profile, "-o", str(Path(tmp) / "r.yaml")]
            for name in ("framework", "device", "workload"):
                for value in getattr(args, name) or []:
                    argv += [f"--{name}", value]
            if args.time_budget:
                argv += ["--time-budget", str(args.time_budget)]
            start = time.perf_counter()
            subprocess.run(argv, cwd=tree, check=True, stdout=subprocess.DEVNULL)
            return time.perf_counter() - start
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", default="quick")
    parser.add_argument("--framework", action="append")
    parser.add_argument("--device", action="append")
    parser.add_argument("--workload", action="append")
    parser.add_argument("--time-budget", type=float)
    parser.add_argument("--baseline", help="a git ref to time the same command at, side by side")
    parser.add_argument("--target", type=float, default=150.0, help="seconds (default 150: quick on a 2-core CPU)")
    parser.add_argument(
        "--parts",
        type=Path,
        help="only print the parts table of a log written by `BENCHSITE_PHASE_LOG=FILE benchsite run ...` (or gzipped)",
    )
    args = parser.parse_args()
    if args.parts:
        print_parts(args.parts)
        return

    baseline = run_baseline(args.baseline, args) if args.baseline else None
    total, phases, unstable, ok = run_here(args)

    by_framework: dict[str, float] = {}
    by_workload: dict[str, float] = {}
    print("| phase | wall (s) | share |")
    print("|---|---:|---:|")
    for name, seconds in phases.items():
        if name.startswith("measure "):
            _, framework, workload = name.split()
            by_framework[framework] = by_framework.get(framework, 0.0) + seconds
            by_workload[workload] = by_workload.get(workload, 0.0) + seconds
        else:
            print(f"| {name} | {seconds:.1f} | {seconds / total:.0%} |")
    for framework, seconds in by_framework.items():
        print(f"| measure, {framework} | {seconds:.1f} | {seconds / total:.0%} |")
    print(f"| **total** | **{total:.1f}** | |")
    print("\n| workload (all frameworks) | wall (s) |")
    print("|---|---:|")
    for workload, seconds in by_workload.items():
        print(f"| {workload} | {seconds:.1f} |")
    print(f"\n{len(unstable)} of {ok} measurements stopped at the budget unconverged:")
    for line in unstable:
        print(f"  {line}")
    if baseline is not None:
        print(f"\n| run | wall (s) |\n|---|---:|\n| {args.baseline} | {baseline:.1f} |\n| this tree | {total:.1f} |")
        print(f"ratio this / baseline: {total / baseline:.2f}")
    print(
        f"\ntotal {total:.0f} s against the target {args.target:.0f} s: {'met' if total <= args.target else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
