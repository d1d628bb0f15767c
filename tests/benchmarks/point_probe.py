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
- engine:       the program under benchsite's timing engine (runner.measure.timing.measure, with the options a
                measurement uses), the mean seconds per unit of its samples;
- engine-session: the same, started in a session of its own, as benchsite starts every measuring process;
- point:        the whole measurement, as `benchsite run` makes it (tests/benchmarks/points.py: the measuring
                process, its spare interpreter, the protocol, the monitor);
- point-nospare: the same with BENCHSITE_SPARES=0: the measuring process is started when the point is due.

Every arm but `point` reports what its process was made of at the end: its OS threads, PyTorch's intra-op threads
as the main thread sees them, context switches and CPU time (its DataLoader workers' included). Prints each round,
then per arm the median ms per unit and its ratio to the script's, with the bootstrap interval the twin uses.
Not part of the test run.
"""

from __future__ import annotations

import argparse
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
ARMS = ("script", "program", "program-init", "engine", "engine-session", "point", "point-nospare")
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


def child(arm: str, workload_id: str, index: int, device_kind: str, profile: str, units: int, budget: float) -> None:
    """One harness arm in this (fresh) process: prints {"per_unit_s": ...} and then the report line."""
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
    program.close()
    print(json.dumps({"per_unit_s": per_unit, "units": units}), flush=True)
    print(report(), flush=True)


def _run(argv: list[str], cwd: Path, session: bool = False) -> tuple[float, dict]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, env=env, start_new_session=session)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode or len(lines) < 2:
        raise RuntimeError(f"{' '.join(argv[:4])} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return float(json.loads(lines[-2])["per_unit_s"]), json.loads(lines[-1])


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
        return mean_per_unit(m), {}
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
    return _run(argv, ROOT, session=arm == "engine-session")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", default="standard")
    parser.add_argument("--device", action="append", help="default: cpu")
    parser.add_argument("--seed", action="append", help="000 .. 004 (default: 000)")
    parser.add_argument("--depth", action="append", type=int, help="seed 001 depths (default: 2)")
    parser.add_argument("--arm", action="append", choices=ARMS, help="default: all")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.0, help="the engine's budget; the script's units fill it")
    parser.add_argument("--units", type=int, help="units the script and the programs time (default: fill --seconds)")
    parser.add_argument("--json", type=Path, help="also write every round here, as it ends")
    parser.add_argument("--child", choices=ARMS)
    parser.add_argument("--workload")
    parser.add_argument("--index", type=int)
    args = parser.parse_args()
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
            print("| arm | ms per unit (median) | against the script | 95% interval |")
            print("|---|---:|---:|---|")
            base = got.get("script")
            for arm in arms:
                ms = statistics.median(got[arm]) * 1e3
                if base and arm != "script":
                    s = fidelity.summarise(got[arm], base)
                    print(f"| {arm} | {ms:.3f} | {s.ratio:.3f} | {s.ci95[0]:.3f} .. {s.ci95[1]:.3f} |")
                else:
                    print(f"| {arm} | {ms:.3f} | | |")
            print(flush=True)


if __name__ == "__main__":
    main()
