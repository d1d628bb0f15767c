"""What does measuring in a child of the fork server do to a CPU loop? Each seed transcription, started several ways.

    python tests/benchmarks/fork_probe.py [--rounds 2] [--seed 000 --seed 002 ...] [--device cpu]
                                          [--mode fresh --mode fork-zygote ...] [--harness]

A seed transcription (runner/fidelity/seeds/) times its own loop and prints seconds per unit. Here it runs, round
by round and alternating, in processes that differ in one thing at a time:

- fresh:         `python seed_NNN.py`, as a user runs it;
- fresh-session: the same in a session of its own (setsid, as benchsite starts a measuring process);
- preload:       a fresh interpreter that first imports everything the fork server imports (the harness's modules,
                 the framework, the lazily imported ones) and freezes the heap, then runs the seed in-process;
- fork-torch:    a process that imports only torch, then forks; the fork runs the seed;
- fork-zygote:   runner.measure.forkserver's server as it is (its imports, preloads and frozen heap), then a fork in a
session                  of its own runs the seed: benchsite's measuring child without benchsite's measurement.

Each process reports, beside the seed's figure, what it is made of: its mappings and resident memory, how long a
bare fork() and exit takes from it (a DataLoader forks its workers from there every epoch), its page faults and
context switches over the run (its children's too), its intra-op threads and CPU affinity. `--harness` adds
benchsite's own as-written measurement of the same points with the fork server on and off.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import json
import os
import resource
import runpy
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = Path(__file__).resolve().parents[2] / "runner" / "fidelity" / "seeds"
MODES = ("fresh", "fresh-session", "preload", "fork-torch", "fork-zygote")
# Seed, its arguments, and units per run (about 4 s on a 16-core CPU).
ROWS = {
    "000": ([], 12),
    "001": (["--depth", "2"], 2000),
    "002": (["--n", "50000"], 3),
    "004": (["--n", "60000"], 1),
}


def _fork_cost(n: int = 5) -> float:
    """Median seconds for fork() + the child's _exit + waitpid, from this process."""
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _shape() -> dict:
    with open("/proc/self/maps") as f:
        maps = sum(1 for _ in f)
    rss = vsz = 0
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) // 1024
            elif line.startswith("VmSize:"):
                vsz = int(line.split()[1]) // 1024
    return {"maps": maps, "rss_mib": rss, "vsz_mib": vsz, "gc_objects": len(gc.get_objects())}


def run_seed_here(argv: list[str]) -> dict:
    """Run a seed script in this process (as __main__), with its stdout captured; report the process too."""
    import torch

    before = _shape()
    fork_s = _fork_cost()
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = io.StringIO()
    sys.argv = argv
    with contextlib.redirect_stdout(out):
        runpy.run_path(argv[0], run_name="__main__")
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    figure = json.loads(out.getvalue().strip().splitlines()[-1])
    return {
        **figure,
        **before,
        "fork_ms": fork_s * 1e3,
        "minflt": r1.ru_minflt - r0.ru_minflt,
        "child_minflt": c1.ru_minflt - c0.ru_minflt,
        "nvcsw": r1.ru_nvcsw - r0.ru_nvcsw,
        "nivcsw": r1.ru_nivcsw - r0.ru_nivcsw,
        "threads": torch.get_num_threads(),
        "affinity": len(os.sched_getaffinity(0)),
    }


def host(mode: str, argv: list[str]) -> None:
    """The process a mode starts: import, maybe fork, run the seed; one JSON line on stdout."""
    sys.path.insert(0, str(ROOT))
    real_stdout = sys.stdout
    if mode == "fork-torch":
        import torch  # noqa: F401
    elif mode in ("preload", "fork-zygote"):
        import importlib

        from runner.measure import executor
        from runner.measure import forkserver as zygote

        zygote.preload_lazy([importlib.import_module(m) for m in executor._preload("torch")])
        gc.collect()
        gc.freeze()
    if mode.startswith("fork"):
        real_stdout.flush()
        pid = os.fork()
        if pid:
            _, status = os.waitpid(pid, 0)
            sys.exit(os.waitstatus_to_exitcode(status))
        if mode == "fork-zygote":
            os.setsid()
    code = 0
    try:
        report = run_seed_here(argv)
        real_stdout.write(json.dumps(report) + "\n")
        real_stdout.flush()
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    if mode.startswith("fork"):
        os._exit(code)
    sys.exit(code)


def launch(mode: str, seed: str, device: str) -> dict:
    args, units = ROWS[seed]
    script = str(SCRIPTS / f"seed_{seed}.py")
    seed_argv = [script, "--device", device, "--epochs", str(units), *args]
    if mode in ("fresh", "fresh-session"):
        # a plain script: the shape report comes from a wrapper that adds nothing but runpy
        argv = [sys.executable, __file__, "host", "plain", "--", *seed_argv]
    else:
        argv = [sys.executable, __file__, "host", mode, "--", *seed_argv]
    proc = subprocess.run(
        argv, capture_output=True, text=True, cwd=SCRIPTS, start_new_session=mode == "fresh-session", check=False
    )
    if proc.returncode:
        raise RuntimeError(f"{mode} seed {seed}: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def harness_rows(seeds: list[str], device: str, rounds: int, seconds: float) -> list[tuple]:
    sys.path.insert(0, str(ROOT))
    from tests.benchmarks.fidelity import points
    from tests.benchmarks.points import PointRunner, mean_per_unit

    runner = PointRunner("standard", ["torch"], [device], seconds)
    rows = [r for r in points("standard", [2]) if r["seed"] in seeds]
    out = []
    for row in rows:
        for fork in ("1", "0"):
            os.environ["BENCHSITE_FORK_SERVER"] = fork
            got = []
            for _ in range(rounds):
                m = runner.measure(row["workload"], "torch", device, row["index"])
                got.append(mean_per_unit(m))
            out.append((row["seed"], f"harness fork_server={fork}", statistics.median(got), got))
            print(f"  {row['seed']} harness fork_server={fork}: {[round(g * 1e3, 2) for g in got]} ms", flush=True)
    os.environ.pop("BENCHSITE_FORK_SERVER", None)
    return out


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "host":
        mode, rest = sys.argv[2], sys.argv[sys.argv.index("--") + 1 :]
        host(mode, rest)
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", action="append", choices=sorted(ROWS))
    parser.add_argument("--mode", action="append", choices=MODES)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--harness", action="store_true")
    parser.add_argument("--seconds", type=float, default=4.0, help="the harness's time budget per measurement")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    seeds, modes = args.seed or ["000", "002"], args.mode or list(MODES)
    print(f"host: {os.uname().release}, {os.cpu_count()} CPUs, affinity {len(os.sched_getaffinity(0))}", flush=True)
    results: dict[tuple[str, str], list[dict]] = {}
    for r in range(args.rounds):
        for seed in seeds:
            for mode in modes if r % 2 == 0 else reversed(modes):
                rep = launch(mode, seed, args.device)
                results.setdefault((seed, mode), []).append(rep)
                print(
                    f"  round {r + 1} seed {seed} {mode:13s} {rep['per_unit_s'] * 1e3:9.2f} ms/unit  fork "
                    f"{rep['fork_ms']:.2f} ms  maps {rep['maps']}  rss {rep['rss_mib']} MiB  minflt {rep['minflt']}"
                    f" (children {rep['child_minflt']})  csw {rep['nvcsw']}/{rep['nivcsw']}  threads "
                    f"{rep['threads']}  affinity {rep['affinity']}",
                    flush=True,
                )
    harness = harness_rows(seeds, args.device, args.rounds, args.seconds) if args.harness else []
    print("\n| seed | process | ms/unit (median) | / fresh | fork() ms | mappings | RSS MiB | faults/unit", end="")
    print(" | children's |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    table = []
    for seed in seeds:
        fresh = statistics.median(r["per_unit_s"] for r in results[(seed, "fresh")]) if "fresh" in modes else None
        units = ROWS[seed][1]
        for mode in modes:
            reps = results[(seed, mode)]
            t = statistics.median(r["per_unit_s"] for r in reps)
            med = {k: statistics.median(r[k] for r in reps) for k in ("fork_ms", "maps", "rss_mib", "minflt")}
            kids = statistics.median(r["child_minflt"] for r in reps)
            ratio = f"{t / fresh:.3f}" if fresh else ""
            print(
                f"| {seed} | {mode} | {t * 1e3:.2f} | {ratio} | {med['fork_ms']:.2f} | {med['maps']:.0f} | "
                f"{med['rss_mib']:.0f} | {med['minflt'] / (units + 1):.0f} | {kids / (units + 1):.0f} |"
            )
            table.append({"seed": seed, "mode": mode, "runs": reps})
        for s, label, t, got in harness:
            if s == seed:
                ratio = f"{t / fresh:.3f}" if fresh else ""
                print(f"| {seed} | {label} | {t * 1e3:.2f} | {ratio} | | | | | |")
                table.append({"seed": seed, "mode": label, "per_unit_s": got})
    if args.json:
        args.json.write_text(json.dumps(table, indent=2))


if __name__ == "__main__":
    main()
