"""Does `benchsite run`'s as-written loop time what the seed's own code times? Fidelity, seed by seed.

    python tests/benchmarks/fidelity.py [--profile standard] [--device cpu --device cuda] [--rounds 3]
                                        [--seconds 5] [--seed 000 --seed 001 ...] [--depth 2 --depth 12]
                                        [--launch plain --launch nogc ...] [--gc-trace]

For each seed, runner/fidelity/seeds/seed_NNN.py is a plain standalone script that transcribes the seed's
own loop (its model, DataLoader settings, optimiser, host syncs and prints) and imports nothing from
`runner`. In the same invocation, on the same machine, rounds alternate: benchsite's as-written measurement
of that workload point through runner.api (its child process, timing engine and synchronisation; the machine
is probed once), then the transcription in a fresh process (mean seconds per unit over as many units as the
harness's budget held, after one warm-up unit, as the harness records warm-up apart). Both sides give the
same statistic, the mean seconds per unit (a seed times N units as one block); the harness's median, the
figure the site reports, is printed beside it. The ratio, its 95% interval and the verdict are those a result
file's `fidelity` block gives (runner.fidelity.summarise: since benchsite 0.8, the ratio of the geometric means over
rounds with Welch's interval on the logarithms; result files before it give the ratio of medians and a bootstrap).
Target: 0.95 .. 1.05 on every row. benchsite's side runs without the run's own twin (fidelity=False). Seed 002 is
transcribed into PyTorch (Julia is not part of the suite) and seed 003 prints no loop, so its row compares
with the plain Hugging Face fine-tuning step. Not part of the test run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = Path(__file__).resolve().parents[2] / "runner" / "fidelity" / "seeds"
sys.path.insert(0, str(ROOT))

LOW, HIGH = 0.95, 1.05


def points(profile: str, depths: list[int]) -> list[dict]:
    """(seed, workload, case index, the transcription's arguments) for each point a run's twin covers
    (runner.fidelity.twin_for), seed 001 at the given depths."""
    from runner import fidelity
    from runner.workloads import get

    rows = []
    for workload in ("tabular-mlp", "depth-sweep", "cifar-lenet", "transformer", "mnist-cnn"):
        for index, case in enumerate(get(workload).cases(profile)):
            if workload == "depth-sweep" and case.point["depth"] not in depths:
                continue
            twin = fidelity.twin_for(workload, "as-written", case.point, case.config, "torch", "cpu")
            if workload == "depth-sweep" and twin is None:
                twin = fidelity.Twin("001", ("--depth", str(case.point["depth"]), "--n", str(case.config["n"])))
            if twin is not None:
                rows.append(
                    {
                        "seed": twin.seed,
                        "workload": workload,
                        "index": index,
                        "args": list(twin.args),
                        "flag": twin.unit_flag,
                    }
                )
    return rows


# How the transcription's process is started. "plain": a child of this script, as a user's shell would start
# the seed. "session": in a session of its own, as benchsite starts each measuring process (the Linux
# scheduler's autogroups give every session its own share of the CPUs). "omp1": plain, with OMP_NUM_THREADS=1
# (no OpenMP threads spinning beside the DataLoader's workers). "nogc": the seed run with Python's cyclic
# garbage collector off from the start (what benchsite's gc.freeze() would save the seed's own process).
LAUNCHES = ("plain", "session", "omp1", "nogc")

# --gc-trace: every process started from here gets tests/benchmarks/gctrace/ on PYTHONPATH, whose
# sitecustomize times each garbage collection into one file (GC_TRACE); the seed's processes are told apart
# from benchsite's by their pids.
GC_HOOK = Path(__file__).resolve().parent / "gctrace"
GC_TRACE: Path | None = None
SEED_PIDS: set[int] = set()


def transcription(row: dict, device: str, units: int, drop_env: list[str], launch: str = "plain") -> float:
    """The seed's transcription in a fresh process: mean seconds per unit. `drop_env` names variables the
    transcription does not get (it imports only its framework); `launch` is one of LAUNCHES."""
    script = str(SCRIPTS / f"seed_{row['seed']}.py")
    argv = [sys.executable, script, "--device", device, row["flag"], str(units), *row["args"]]
    if launch == "nogc":
        run = "import gc, runpy, sys; gc.disable(); del sys.argv[0]; runpy.run_path(sys.argv[0], None, '__main__')"
        argv = [sys.executable, "-c", run, *argv[1:]]
    with tempfile.TemporaryFile() as log:  # the seeds' prints go to stderr, kept in a file as the harness does
        env = {k: v for k, v in os.environ.items() if k not in drop_env}
        if launch == "omp1":
            env["OMP_NUM_THREADS"] = "1"
        if GC_TRACE is not None:
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(GC_HOOK), env.get("PYTHONPATH")]))
        with subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            cwd=SCRIPTS,
            env=env,
            start_new_session=launch == "session",
        ) as proc:
            SEED_PIDS.add(proc.pid)
            stdout, _ = proc.communicate()
        if proc.returncode:
            log.seek(0)
            raise RuntimeError(f"seed_{row['seed']}.py failed: {log.read().decode()[-2000:]}")
    return float(json.loads(stdout.strip().splitlines()[-1])["per_unit_s"])


def gc_report(path: Path) -> None:
    """Where the collector's time went, per process that ran a loop: the seed's script, and benchsite's
    measuring child (a child of the fork server or of this script), with the DataLoader workers each forked
    (one set per epoch) summed beside it. Where the loop iterates a DataLoader, the hook also recorded each
    epoch's bounds: a second table places each collection in the timed epochs (every pass but the first, the
    warm-up, on both sides) or outside them, and lists the timed epochs, * where the loop's own process ran a
    full collection during one."""
    events: dict[int, list[tuple[int, float, float]]] = {}  # pid: (generation, ended at, microseconds)
    epochs: dict[int, list[tuple[float, float, float, int]]] = {}  # pid: (began, first batch, ended, batches)
    parent: dict[int, int] = {}
    for line in path.read_text().splitlines():
        pid, ppid, kind, *rest = line.split()
        parent[int(pid)] = int(ppid)
        if kind == "fork":  # a fork's own line: the collector's counters it inherited
            continue
        if kind == "epoch":
            began, first, ended, batches = rest
            epochs.setdefault(int(pid), []).append((float(began), float(first), float(ended), int(batches)))
            continue
        ended_at, micros, *_ = rest
        events.setdefault(int(pid), []).append((int(kind), float(ended_at), float(micros)))
    children: dict[int, list[int]] = {}
    for pid, ppid in parent.items():
        children.setdefault(ppid, []).append(pid)
    me = os.getpid()
    loops = []  # (side, pid)
    for pid in children.get(me, []):
        if pid in SEED_PIDS:
            loops.append(("seed", pid))
        elif any(children.get(k) for k in children.get(pid, [])):  # the fork server: its children measure
            loops.extend(("benchsite", k) for k in children[pid] if children.get(k))
        elif children.get(pid):  # a measuring child started directly, its workers under it
            loops.append(("benchsite", pid))
    print("\ngarbage collections per loop process (ms; workers: every DataLoader worker it forked, summed)")
    print("| side | pid | workers | gen0 n / ms | gen1 n / ms | gen2 n / ms | workers' collections, per generation |")
    print("|---|---:|---:|---|---|---|---|")
    for side, pid in loops:
        own = events.get(pid, [])
        per_gen = []
        for gen in (0, 1, 2):
            times = [m for g, _, m in own if g == gen]
            per_gen.append(f"{len(times)} / {sum(times) / 1e3:.1f}")
        workers = children.get(pid, [])
        theirs = [(g, m) for w in workers for g, _, m in events.get(w, [])]
        split = ", ".join(
            f"gen{gen} {len(ms)} / {sum(ms) / 1e3:.1f}"
            for gen in (0, 1, 2)
            if (ms := [m for g, m in theirs if g == gen])
        )
        print(f"| {side} | {pid} | {len(workers)} | {' | '.join(per_gen)} | {split or 'none'} |")
    timed_loops = [(side, pid) for side, pid in loops if len(epochs.get(pid, [])) > 1]
    if not timed_loops:
        return
    print("\nthe timed epochs (every DataLoader pass after the first), and the collections during them (ms)")
    print(
        "| side | pid | timed epochs | mean epoch | median epoch | first batch, median | full collections in them, "
        "n / ms | young, ms | workers', ms | full collections outside them | epochs (* with a full collection) |"
    )
    print("|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---|")
    traced: list[TracedLoop] = []
    for side, pid in timed_loops:
        timed = epochs[pid][1:]
        own = [(g, _epoch_of(timed, t, m), m) for g, t, m in events.get(pid, [])]
        full_in = [(i, m) for g, i, m in own if g == 2 and i is not None]
        young_ms = sum(m for g, i, m in own if g < 2 and i is not None) / 1e3
        full_out = sum(1 for g, i, _ in own if g == 2 and i is None)
        workers_ms = (
            sum(m for w in children.get(pid, []) for _, t, m in events.get(w, []) if _epoch_of(timed, t, m) is not None)
            / 1e3
        )
        lengths = [(e - b) * 1e3 for b, _, e, _ in timed]
        first_batch = statistics.median((f - b) * 1e3 for b, f, _, _ in timed)  # iter() to the first batch: the forks
        marked = {i for i, _ in full_in}
        listed = ", ".join(f"{ms:.0f}{'*' if i in marked else ''}" for i, ms in enumerate(lengths))
        print(
            f"| {side} | {pid} | {len(timed)} | {statistics.mean(lengths):.1f} | {statistics.median(lengths):.1f} | "
            f"{first_batch:.1f} | {len(full_in)} / {sum(m for _, m in full_in) / 1e3:.1f} | {young_ms:.1f} | "
            f"{workers_ms:.1f} | {full_out} | {listed} |"
        )
        traced.append(TracedLoop(side, lengths, first_batch, len(full_in), young_ms, workers_ms))
    epoch_summary(traced)


@dataclass(frozen=True)
class TracedLoop:
    """One loop process's timed epochs, as gc_report's second table lists them (ms)."""

    side: str
    epochs_ms: list[float]
    first_batch_ms: float  # the median over its timed epochs
    full_collections: int  # the loop's own process, during its timed epochs
    young_ms: float
    workers_ms: float


def epoch_summary(loops: list[TracedLoop]) -> None:
    """Each side's timed epochs pooled over its processes: is one side's tail of slow epochs heavier, and does the
    collector or the workers' start account for it?"""
    print("\neach side's timed epochs pooled over its processes (ms)")
    print(
        "| side | processes | timed epochs | mean | median | 90th percentile | slowest | mean / median "
        "| first batch, mean of the processes' medians | full collections in them | young, ms a process "
        "| workers', ms a process |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for side in sorted({loop.side for loop in loops}, reverse=True):
        mine = [loop for loop in loops if loop.side == side]
        epochs = [ms for loop in mine for ms in loop.epochs_ms]
        p90 = statistics.quantiles(epochs, n=10, method="inclusive")[-1] if len(epochs) > 1 else epochs[0]
        print(
            f"| {side} | {len(mine)} | {len(epochs)} | {statistics.mean(epochs):.1f} | {statistics.median(epochs):.1f} "
            f"| {p90:.1f} | {max(epochs):.0f} | {statistics.mean(epochs) / statistics.median(epochs):.3f} "
            f"| {statistics.mean(loop.first_batch_ms for loop in mine):.1f} "
            f"| {sum(loop.full_collections for loop in mine)} | {statistics.mean(loop.young_ms for loop in mine):.2f} "
            f"| {statistics.mean(loop.workers_ms for loop in mine):.2f} |"
        )


def _epoch_of(timed: list[tuple[float, float, float, int]], ended_at: float, micros: float) -> int | None:
    """The timed epoch a collection ran in (by its midpoint), or None."""
    mid = ended_at - micros / 2e6
    return next((i for i, (began, _, ended, _) in enumerate(timed) if began <= mid <= ended), None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", default="standard")
    parser.add_argument("--device", action="append", help="default: cpu, and cuda where PyTorch sees one")
    parser.add_argument("--seed", action="append", help="000 .. 004 (default: all)")
    parser.add_argument("--depth", action="append", type=int, help="seed 001 depths (default: 2, 8, 12)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0, help="timed seconds per run, each side")
    parser.add_argument(
        "--min-units",
        type=int,
        default=3,
        help="the fewest units a script run times (default 3); 1 where a unit outlasts --seconds, as the run's "
        "own twin does (seed 004's 36 s CPU epoch)",
    )
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument(
        "--drop-env",
        action="append",
        default=[],
        help="an environment variable the transcription does not get, e.g. PYTHONPATH where it only carries "
        "the harness's own packages",
    )
    parser.add_argument(
        "--launch",
        action="append",
        choices=LAUNCHES,
        help="how the transcription's process starts, one row each (default: plain); see LAUNCHES",
    )
    parser.add_argument(
        "--gc-trace",
        action="store_true",
        help="time every garbage collection in both sides' processes and their DataLoader workers, and every "
        "DataLoader epoch's bounds, and print where the collector's time went and which of it fell in the timed "
        "epochs (adds a hook to every Python process started from here)",
    )
    args = parser.parse_args()
    if args.rounds < 2:  # runner.fidelity.MIN_ROUNDS (imported later: nothing before the gc-trace hook)
        parser.error("--rounds: Welch's interval needs two at least")
    launches = args.launch or ["plain"]
    if args.gc_trace:  # before anything starts a process: the fork server must inherit the hook too
        global GC_TRACE
        named = os.environ.get("BENCHSITE_GC_TRACE")
        GC_TRACE = Path(named) if named else Path(tempfile.mkdtemp(prefix="benchsite-gc-")) / "trace.txt"
        os.environ["BENCHSITE_GC_TRACE"] = str(GC_TRACE)
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(GC_HOOK), os.environ.get("PYTHONPATH")]))

    import torch

    from runner import fidelity
    from tests.benchmarks.points import PointRunner, mean_per_unit

    devices = args.device or (["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"])
    rows = [r for r in points(args.profile, args.depth or [2, 8, 12]) if not args.seed or r["seed"] in args.seed]
    table = []
    for device in devices:
        runner = PointRunner(args.profile, ["torch"], [device], args.seconds)
        for row in rows:
            bench, bench_medians = [], []
            trans: dict[str, list[float]] = {launch: [] for launch in launches}
            label = row["workload"]
            units = 0
            for round_ in range(args.rounds):
                # Which side goes first alternates (benchsite first in rounds 1, 3, 5 ...; the script in 2, 4 ...),
                # as the run's twin does: a drift of the host's speed, or anything one process leaves the next,
                # then falls on both sides alike instead of always on the same one.
                script_first = fidelity.script_first(round_)  # never round 1, which sets `units`
                if script_first:
                    for launch in launches:
                        trans[launch].append(transcription(row, device, units, args.drop_env, launch))
                m = runner.measure(row["workload"], "torch", device, row["index"])
                label = f"{m.workload} {' '.join(f'{k}={v}' for k, v in m.point.items())}".strip()
                bench.append(mean_per_unit(m))
                bench_medians.append(m.median_s)
                if not units:  # the script times as many units as the harness's first round held, every round
                    units = max(args.min_units, round(args.seconds / m.median_s))
                if not script_first:
                    for launch in launches:
                        trans[launch].append(transcription(row, device, units, args.drop_env, launch))
                # each round as it ends: a command cut short by a time limit still shows what it measured
                seeds = ", ".join(f"{launch} {trans[launch][-1] * 1e3:.2f}" for launch in launches)
                order = "seed first" if script_first else "benchsite first"
                print(f"  round {len(bench)} ({order}): seed ({seeds}), benchsite {bench[-1] * 1e3:.2f} ms", flush=True)
            b = statistics.geometric_mean(bench)
            for launch in launches:
                t = statistics.geometric_mean(trans[launch])
                # the ratio, interval and verdict a result file's fidelity block would carry
                summary = fidelity.summarise(bench, trans[launch])
                entry = {
                    "seed": row["seed"],
                    "measurement": label if launch == "plain" else f"{label} [{launch}]",
                    "device": device,
                    "launch": launch,
                    "transcription_s": t,
                    "benchsite_s": b,
                    "benchsite_median_s": statistics.median(bench_medians),
                    "ratio": summary.ratio,
                    "interval": fidelity.INTERVAL,
                    "ci95": list(summary.ci95),
                    "verdict": summary.verdict,
                    "benchsite_rounds": bench,
                    "transcription_rounds": trans[launch],
                }
                table.append(entry)
                print(
                    f"{row['seed']} {entry['measurement']:40s} {device:5s} seed {t * 1e3:10.3f} ms  benchsite "
                    f"{b * 1e3:10.3f} ms (median {entry['benchsite_median_s'] * 1e3:.3f})  ratio {summary.ratio:6.3f} "
                    f"({summary.ci95[0]:.3f} .. {summary.ci95[1]:.3f}, {summary.verdict})  "
                    f"rounds {[round(x * 1e3, 2) for x in trans[launch]]} vs {[round(x * 1e3, 2) for x in bench]}",
                    flush=True,
                )
            if args.json:  # after every row: a run cut short keeps what it measured
                args.json.write_text(json.dumps(table, indent=2))
    print()
    print(
        "| seed | measurement | device | transcription (ms/unit) | benchsite as-written (ms/unit) "
        f"| benchsite median | ratio | 95% interval | verdict | within {LOW}..{HIGH} |"
    )
    print("|---|---|---|---:|---:|---:|---:|---|---|---|")
    for r in table:
        ok = "yes" if LOW <= r["ratio"] <= HIGH else "no"
        print(
            f"| {r['seed']} | {r['measurement']} | {r['device']} | {r['transcription_s'] * 1e3:.3f} | "
            f"{r['benchsite_s'] * 1e3:.3f} | {r['benchsite_median_s'] * 1e3:.3f} | {r['ratio']:.3f} | "
            f"{r['ci95'][0]:.3f} .. {r['ci95'][1]:.3f} | {r['verdict']} | {ok} |"
        )
    outside = [r for r in table if not LOW <= r["ratio"] <= HIGH]
    print(f"\n{len(table) - len(outside)} of {len(table)} rows within {LOW} .. {HIGH}")
    if GC_TRACE is not None and GC_TRACE.exists():
        gc_report(GC_TRACE)


if __name__ == "__main__":
    main()
