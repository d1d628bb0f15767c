"""Where does a fidelity twin's gap come from? One as-written point, taken apart a layer at a time.

    python tests/benchmarks/point_probe.py [--seed 000] [--device cpu] [--rounds 5] [--seconds 2]
                                           [--arm script --arm program ...] [--json FILE]

The twin (runner.fidelity) sets a seed's transcription (runner/fidelity/seeds/) against benchsite's whole
measurement of the same point. Between the two sit several layers; each arm here adds one, in a freshly started
interpreter of its own, round by round, the arms' order rotated every round:

- script:       the transcription, as `python seed_NNN.py` runs it (through runpy, so that the process can report
                on itself afterwards: the seed's own code and timing are untouched);
- program:      benchsite's as-written program for the point, built as the measuring process builds it (the
                worker's imports, the framework's device, the workload's builder), one warm-up unit, then the
                script's unit count timed as one block by the host's clock with a sync at the end, as the script
                times its units;
- program-init: the same, after one call on the main thread that starts PyTorch's intra-op thread pool at its
                default size before anything is built (what any parallel operator or `torch.get_num_threads()`
                in the measuring process before the loop does);
- program-copied: the same, its resident batches (seed 002's list of batches) first copied into memory PyTorch
                allocated: the transcription makes its data with `torch.rand`, 64-byte aligned; the program's comes
                from NumPy's generator, 16 bytes off, and on the CPU each batch is a view of it. On an H100
                machine's 16-core host the copy changed nothing;
- engine:       the program under benchsite's timing engine (runner.measure.timing.measure, with the options a
                measurement uses), the mean seconds per unit of its samples;
- engine-session: the same, started in a session of its own, as benchsite starts every measuring process;
- engine-stdio: the same, after the measuring process's set-up of its standard streams (stdout kept for the protocol,
                everything else sent to stderr, a file; the job read from stdin, a pipe); `engine-stdin` has only
                the job read from a pipe, `engine-stderr` only the streams sent to the file, `engine-stderr-pipe` the
                streams sent to stderr as there, but stderr a pipe (as in `engine-session`) rather than a file;
- worker:       the measuring process itself (runner.measure.worker's main(), in a session of its own, its stderr a
                file as the executor gives it) with the job `benchsite run` sends it, started here rather than by the
                executor: what the measuring process adds, apart from the parent that reads its events;
- worker-quiet: the same, without the monitor around the timing and without the engine's per-sample callback (the
                progress lines);
- worker-redirect: the same with the stream set-up every measuring process had until 2026-11-26 (stdout kept
                for the protocol on a copy, everything else sent to stderr), which a seed's loop no longer has;
- point:        the whole measurement, as `benchsite run` makes it (tests/benchmarks/points.py: the measuring
                process, its spare interpreter, the protocol, the monitor);
- point-nospare: the same with BENCHSITE_SPARES=0: the measuring process is started when the point is due.

Every arm reports what its process was made of at the end: its OS threads, PyTorch's intra-op threads as the main
thread sees them, context switches and CPU time (its DataLoader workers' included); the point arms, what their
measurement recorded (intra-op threads, CPU seconds per wall second, samples and units per sample). Prints each round,
then per arm the median ms per unit and its ratio to the --base arm's (the script's by default), with the bootstrap
interval the twin uses.

    python tests/benchmarks/point_probe.py --pool a.json b.json ... [--base engine-session]

pools the rounds of several runs (their --json files): per arm, the geometric mean of its per-round ratio to the base
arm measured in the same round, a 95% bootstrap interval over those rounds, and in how many rounds it was slower.
Pairing within a round takes out what drifts between rounds (the host's own pace moved by 20% over an hour).
Not part of the test run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SCRIPTS = ROOT / "runner" / "fidelity" / "seeds"
ARMS = (
    "script",
    "program",
    "program-init",
    "program-copied",
    "engine",
    "engine-session",
    "engine-stdio",
    "engine-stdin",
    "engine-stderr",
    "engine-stderr-pipe",
    "worker",
    "worker-quiet",
    "worker-redirect",
    "point",
    "point-nospare",
)
# Runs the measuring process's own main() on the job given on stdin, then reports on the process on stderr. `redirect`:
# with the stream set-up every measuring process had before 2026-11-26, and every job but a seed's loop still has
# (the protocol on a copy of stdout, stdout sent to stderr; runner.measure.worker._protocol).
WORKER_WRAP = (
    "import os, sys\n"
    "from runner.measure import worker\n"
    "if 'quiet' in sys.argv[1:]:\n"
    "    from tests.benchmarks.point_probe import quieten\n"
    "    quieten(worker)\n"
    "if 'redirect' in sys.argv[1:]:\n"
    "    protocol = os.fdopen(os.dup(1), 'w', buffering=1)\n"
    "    os.dup2(2, 1)\n"
    "    sys.stdout = sys.stderr\n"
    "    worker._protocol = lambda job: protocol\n"
    "code = worker.main([])\n"
    "from tests.benchmarks.point_probe import report\n"
    "print(report(), file=sys.__stderr__, flush=True)\n"
    "sys.exit(code)\n"
)
# Runs a transcription as `python script.py` would, then reports on the process in one more JSON line.
SCRIPT_WRAP = (
    "import runpy, sys\n"
    "del sys.argv[0]\n"
    "runpy.run_path(sys.argv[0], None, '__main__')\n"
    "from tests.benchmarks.point_probe import report\n"
    "print(report(), flush=True)\n"
)


def report() -> str:
    """What this process is made of, now: one JSON line."""
    import torch

    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return json.dumps(
        {
            "os_threads": len(os.listdir("/proc/self/task")),
            "torch_threads": torch.get_num_threads(),
            "cpu_s": round(own.ru_utime + own.ru_stime, 3),
            "children_cpu_s": round(kids.ru_utime + kids.ru_stime, 3),
            "ctx_switches": own.ru_nvcsw + own.ru_nivcsw,
            "involuntary": own.ru_nivcsw,
            "max_rss_mib": round(own.ru_maxrss / 1024, 1),
        }
    )


def quieten(worker: object) -> None:
    """The measuring process without its monitor and progress lines (the `worker-quiet` arm)."""
    from runner.measure.monitor import Usage

    real = worker.measure  # type: ignore[attr-defined]

    def measure(*args: object, on_sample: object = None, **kwargs: object) -> object:
        return real(*args, **kwargs)

    class NoMonitor:
        usage = Usage(None, None, None)

        def __enter__(self) -> NoMonitor:
            return self

        def __exit__(self, *exc: object) -> None:
            pass

    worker.measure = measure  # type: ignore[attr-defined]
    worker.Monitor = NoMonitor  # type: ignore[attr-defined]


def child(arm: str, workload_id: str, index: int, device_kind: str, profile: str, units: int, budget: float) -> None:
    """One harness arm in this (fresh) process: prints {"per_unit_s": ...} and then the report line."""
    out = sys.stdout
    # as runner.measure.worker.main() sets up its streams before it reads the job
    if arm in ("engine-stdio", "engine-stderr", "engine-stderr-pipe"):
        out = os.fdopen(os.dup(1), "w", buffering=1)
        os.dup2(2, 1)
        sys.stdout = sys.stderr
    if arm in ("engine-stdio", "engine-stdin"):
        sys.stdin.read()
    if arm == "program-init":
        import torch

        torch.get_num_threads()  # the main thread's pool starts here, at its default size
    from runner.measure import worker
    from runner.workloads import get

    workload = get(workload_id)
    case = workload.cases(profile)[index]
    framework = worker._framework("torch")
    device = framework.make_device(device_kind, "CPU")
    program = worker.import_builder(workload.implementations["torch"])(case, "as-written", device)
    if arm == "program-copied":  # resident batches copied into memory PyTorch allocated (64-byte aligned)
        program.batches = [tuple(t.clone() for t in batch) for batch in program.batches]
    if arm.startswith("engine"):
        from runner import fidelity
        from runner.measure.timing import measure

        timing = measure(program.run_unit, budget_s=budget, **worker.engine_options(program, device))
        per_unit = fidelity.mean_per_unit(timing.samples_s)
    else:
        program.run_unit()  # the warm-up unit, as the script's
        device.sync()
        start = time.perf_counter()
        for _ in range(units):
            program.run_unit()
        device.sync()
        per_unit = (time.perf_counter() - start) / units
    # where the first resident batch starts against a 64-byte boundary (None for a program without resident batches)
    batches = getattr(program, "batches", None)
    offset = batches[0][0].data_ptr() % 64 if isinstance(batches, list) and batches else None
    program.close()
    print(json.dumps({"per_unit_s": per_unit, "units": units, "data_offset": offset}), file=out, flush=True)
    print(report(), file=out, flush=True)


def _spawn(argv: list[str], cwd: Path, session: bool, stdin: str | None, file: bool) -> tuple[str, str, int]:
    """Run one arm's process, this checkout on its path; its stdout, stderr and exit code. As the executor starts a
    measuring process: `stdin`, given on a pipe; `file`, stderr a file rather than a pipe."""
    import tempfile

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    with tempfile.TemporaryFile() if file else contextlib.nullcontext() as err:
        proc = subprocess.run(
            argv,
            input=stdin,
            stdout=subprocess.PIPE,
            stderr=err if file else subprocess.PIPE,
            text=True,
            cwd=cwd,
            env=env,
            start_new_session=session,
        )
        if err is not None:
            err.seek(0)
            return proc.stdout, err.read().decode(errors="replace"), proc.returncode
    return proc.stdout, proc.stderr, proc.returncode


def _run(
    argv: list[str], cwd: Path, session: bool = False, stdin: bool = False, file: bool = False
) -> tuple[float, dict]:
    """A harness or script arm: its seconds per unit and its report, the last two JSON lines of its stdout."""
    stdout, stderr, code = _spawn(argv, cwd, session, "{}" if stdin else None, file)
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    if code or len(lines) < 2:
        raise RuntimeError(f"{' '.join(argv[:4])} failed ({code}): {stderr[-2000:]}")
    timed = json.loads(lines[-2])
    extra = {"data_offset": timed["data_offset"]} if "data_offset" in timed else {}
    return float(timed["per_unit_s"]), {**json.loads(lines[-1]), **extra}


def _run_worker(row: dict, device: str, profile: str, seconds: float, flags: list[str]) -> tuple[float, dict]:
    """The `worker` arms: the measuring process on the job `benchsite run` sends it; its report comes on stderr."""
    from runner import fidelity
    from runner.measure import protocol

    job = {
        "kind": "measure",
        "framework": "torch",
        "device": device,
        "cpu_name": "CPU",
        "workload": row["workload"],
        "variant": "as-written",
        "profile": profile,
        "budget_s": seconds,
        "profile_ops": False,
        "peaks": {},
        "case_indices": [row["index"]],
    }
    job["seed_process"] = protocol.seed_process(job)
    argv = [sys.executable, "-c", WORKER_WRAP, *flags]
    stdout, err, code = _spawn(argv, ROOT, session=True, stdin=json.dumps(job), file=True)
    events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    results = [e for e in events if e.get("event") == "result" and e.get("status") == "ok"]
    facts = [line for line in err.splitlines() if line.startswith("{")]
    if code or not results or not facts:
        raise RuntimeError(f"the worker failed ({code}): {err[-2000:]}")
    m = results[0]["measurement"]
    extra = {"cpu_util": m.get("cpu_util"), "samples": len(m["samples_s"])}
    return fidelity.mean_per_unit(m["samples_s"]), {**json.loads(facts[-1]), **extra}


def run_arm(arm: str, row: dict, device: str, profile: str, units: int, seconds: float, points: object) -> tuple:
    if arm.startswith("point"):
        from tests.benchmarks.points import mean_per_unit

        before = os.environ.get("BENCHSITE_SPARES")
        os.environ["BENCHSITE_SPARES"] = "0" if arm == "point-nospare" else "1"
        try:
            m = points.measure(row["workload"], "torch", device, row["index"])  # type: ignore[attr-defined]
        finally:
            os.environ.pop("BENCHSITE_SPARES")
            if before is not None:
                os.environ["BENCHSITE_SPARES"] = before
        facts = {"torch_threads": m.threads, "cpu_util": m.cpu_util, "samples": len(m.samples_s)}
        return mean_per_unit(m), {**facts, "units_per_sample": m.units_per_sample}
    if arm.startswith("worker"):
        return _run_worker(row, device, profile, seconds, arm.split("-")[1:])
    if arm == "script":
        script = str(SCRIPTS / f"seed_{row['seed']}.py")
        argv = [sys.executable, "-c", SCRIPT_WRAP, script, "--device", device, row["flag"], str(units), *row["args"]]
        return _run(argv, SCRIPTS)
    argv = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        arm,
        "--workload",
        row["workload"],
        "--index",
        str(row["index"]),
        "--device",
        device,
        "--profile",
        profile,
        "--units",
        str(units),
        "--seconds",
        str(seconds),
    ]
    return _run(
        argv,
        ROOT,
        session=arm.startswith("engine-"),
        stdin=arm in ("engine-stdio", "engine-stdin"),
        file=arm in ("engine-stdio", "engine-stderr"),
    )


def pool(files: list[Path], base: str) -> None:
    """Paired per-round ratios against `base`, pooled over the runs given (see the module's docstring)."""
    import math
    import random

    logs: dict[str, list[float]] = {}
    for file in files:
        rounds: dict[tuple, dict[str, float]] = {}
        for entry in json.loads(file.read_text()):
            key = (entry["seed"], entry["device"], entry["round"])
            rounds.setdefault(key, {})[entry["arm"]] = entry["per_unit_s"]
        for arms in rounds.values():
            for arm, value in arms.items():
                if arm != base and base in arms:
                    logs.setdefault(arm, []).append(math.log(value / arms[base]))
    rng = random.Random(0)
    print(f"| arm | rounds | against {base} (geometric mean) | 95% interval | slower in |")
    print("|---|---:|---:|---|---:|")
    for arm in [a for a in ARMS if a in logs]:
        got = logs[arm]
        boots = sorted(statistics.fmean(rng.choices(got, k=len(got))) for _ in range(4000))
        low, high = math.exp(boots[99]), math.exp(boots[3899])
        slower = sum(v > 0 for v in got)
        print(f"| {arm} | {len(got)} | {math.exp(statistics.fmean(got)):.3f} | {low:.3f} .. {high:.3f} | {slower} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", default="standard")
    parser.add_argument("--device", action="append", help="default: cpu")
    parser.add_argument("--seed", action="append", help="000 .. 004 (default: 000)")
    parser.add_argument("--depth", action="append", type=int, help="seed 001 depths (default: 2)")
    parser.add_argument("--arm", action="append", choices=ARMS, help="default: all")
    parser.add_argument("--base", choices=ARMS, default="script", help="the arm the others are set against")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.0, help="the engine's budget; the script's units fill it")
    parser.add_argument("--units", type=int, help="units the script and the programs time (default: fill --seconds)")
    parser.add_argument("--json", type=Path, help="also write every round here, as it ends")
    parser.add_argument("--pool", type=Path, nargs="+", help="pool the rounds of these --json files instead")
    parser.add_argument("--child", choices=ARMS)
    parser.add_argument("--workload")
    parser.add_argument("--index", type=int)
    args = parser.parse_args()
    if args.pool:
        pool(args.pool, args.base)
        return
    if args.child:
        child(args.child, args.workload, args.index, args.device[0], args.profile, args.units, args.seconds)
        return

    from runner import fidelity
    from tests.benchmarks.fidelity import points
    from tests.benchmarks.points import PointRunner

    arms = args.arm or list(ARMS)
    rows = [r for r in points(args.profile, args.depth or [2]) if r["seed"] in (args.seed or ["000"])]
    log: list[dict] = []
    for device in args.device or ["cpu"]:
        whole = any(arm.startswith("point") for arm in arms)
        runner = PointRunner(args.profile, ["torch"], [device], args.seconds) if whole else None
        for row in rows:
            units = args.units
            if not units:  # as fidelity.py: the units one harness measurement's median puts in --seconds
                probe = PointRunner(args.profile, ["torch"], [device], args.seconds) if runner is None else runner
                m = probe.measure(row["workload"], "torch", device, row["index"])
                units = max(3, round(args.seconds / m.median_s))
            got: dict[str, list[float]] = {arm: [] for arm in arms}
            for round_ in range(args.rounds):
                order = arms[round_ % len(arms) :] + arms[: round_ % len(arms)]
                for arm in order:
                    per_unit, facts = run_arm(arm, row, device, args.profile, units, args.seconds, runner)
                    got[arm].append(per_unit)
                    entry = {"seed": row["seed"], "device": device, "round": round_ + 1, "arm": arm}
                    log.append({**entry, "units": units, "per_unit_s": per_unit, **facts})
                    print(f"  {json.dumps(log[-1])}", flush=True)
                    if args.json:
                        args.json.write_text(json.dumps(log, indent=1))
            print(f"\nseed {row['seed']} {row['workload']} on {device}, {units} units a run, {args.rounds} rounds")
            print(f"| arm | ms per unit (median) | against {args.base} | 95% interval |")
            print("|---|---:|---:|---|")
            base = got.get(args.base)
            for arm in arms:
                ms = statistics.median(got[arm]) * 1e3
                if base and arm != args.base:
                    s = fidelity.summarise(got[arm], base)
                    print(f"| {arm} | {ms:.3f} | {s.ratio:.3f} | {s.ci95[0]:.3f} .. {s.ci95[1]:.3f} |")
                else:
                    print(f"| {arm} | {ms:.3f} | | |")
            print(flush=True)


if __name__ == "__main__":
    main()
