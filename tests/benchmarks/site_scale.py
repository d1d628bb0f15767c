"""Does the site build scale? The full `mkdocs build` against merely parsing the same result files.

    python tests/benchmarks/site_scale.py [--sizes 1000 10000] [--runs-per-machine 2] [--max-samples 8]
    python tests/benchmarks/site_scale.py --sizes 100000 --work /var/tmp/scale --one-cold --no-gate --no-parse \
        --no-incremental          # then, in a later session:  ... --work /var/tmp/scale --incremental-only

Generates N schema-valid result files in a temporary directory (never under results/): each is one of the committed
real files with a new machine id, a CPU and an accelerator from a pool of real models, every time scaled by a per-
machine factor with noise of its own per sample (statistics recomputed, as the gate does), a machine id that is the
hash of its hardware (the socket count tells machines apart), and a new run id and date; `--runs-per-machine` files
share a machine (so N / runs machines get a page each). Raw sample lists are cut to `--max-samples` (a quick-
profile run keeps about that many; a measurement in rounds keeps each round's share of them, one sample at least),
which keeps the generated gigabytes and the run time bounded; parse and build read the same files, so the ratio is
fair. Energy blocks scale with the time at the machine's own power (an NVIDIA counter's are dropped where the
accelerator is relabelled to another vendor). Each file is decided by its number alone (its own random stream), so the
files are made in one process per CPU (`--workers`), and a generation cut short, or a folder kept with `--work`,
goes on where it stopped.

Then, each in a fresh process:
- gate: `benchsite validate` over every generated file (a file it refuses would fail the strict build);
- parse: every file through `runner.results.storage.parse` (size limit, LibYAML safe load, schema): the least any
  build must do; the YAML load alone is timed too (`--no-parse` skips both);
- cold build filling an empty cache;
- cold build: `mkdocs build --strict` of the real site from those files (every page, CSV, chart and export) with
  no build cache (BENCHSITE_CACHE=off); with --one-cold the build that filled the cache stands for it;
- the incremental build: one more file added, the cache from the first build (site_builder.cache). At 100,000 files
  the cold build and this one do not fit in one session of the 2-core VM: `--no-incremental` stops after the cold
  build, and `--incremental-only` runs this one later on the folder `--work` kept.
  The build parses with one process per CPU (site_builder.load); the parse baseline is one process, so on a
  machine with more cores the ratio flatters the build more. All are wall times.
Reports wall time, peak RSS (from wait4), the largest page, cold/parse and added/cold. Targets: cold
build <= 3x parse at 10,000 files, one file added <= 25% of a cold build, peak memory < 2 GiB at 10,000 files and
< 8 GiB at 100,000. Not part of the test run.
"""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing
import os
import pickle
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from datetime import timedelta
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from runner import fidelity  # noqa: E402
from runner.fingerprint import machine_id  # noqa: E402
from runner.fingerprint.peaks import cpu_peak_tflops, gpu_peak_tflops  # noqa: E402
from runner.gate.validate import FIRST_RELEASE  # noqa: E402
from runner.results.energy import figures as energy_figures  # noqa: E402
from runner.results.intervals import split_rounds, summarize, summarize_rounds  # noqa: E402
from runner.results.schema import Accelerator, Cpu  # noqa: E402
from site_builder.mkdocs_hooks import PHASES_ENV  # noqa: E402

TARGET_RATIO = 3.0
TARGET_MEMORY_GIB = 2.0  # at 10,000 files
TARGET_MEMORY_100K_GIB = 8.0  # at 100,000
TARGET_INCREMENTAL = 0.25
CPUS = [
    ("AMD EPYC 9654 96-Core Processor", "AuthenticAMD"),
    ("AMD Ryzen 9 7950X 16-Core Processor", "AuthenticAMD"),
    ("Intel(R) Core(TM) i9-13900K", "GenuineIntel"),
    ("Intel(R) Xeon(R) Platinum 8480+", "GenuineIntel"),
    ("Apple M2 Pro", "Apple"),
    ("AMD Ryzen 7 5800H with Radeon Graphics", "AuthenticAMD"),
]
GPUS = [
    ("nvidia", "NVIDIA H100 80GB HBM3"),
    ("nvidia", "NVIDIA GeForce RTX 4090"),
    ("nvidia", "Tesla T4"),
    ("nvidia", "NVIDIA A100-SXM4-40GB"),
    ("amd", "AMD Radeon RX 7900 XTX"),
    ("apple", "Apple M2 Pro"),
]

PARSE = """
import sys, time, yaml
from pathlib import Path
from runner.results import storage
paths = sorted(Path(sys.argv[1]).rglob("*.yaml"))
start = time.perf_counter()
for path in paths:
    yaml.load(path.read_bytes(), Loader=yaml.CSafeLoader)
load = time.perf_counter() - start
start = time.perf_counter()
bad = 0
for path in paths:
    result, problems = storage.parse(path.read_bytes(), str(path))
    bad += result is None
print(load, time.perf_counter() - start, bad)
"""


def templates() -> list[dict[str, Any]]:
    files = sorted((ROOT / "results").rglob("*.yaml"))
    if not files:
        sys.exit("no committed result files under results/ to use as templates")
    return [yaml.load(f.read_bytes(), Loader=yaml.CSafeLoader) for f in files]


GENERATOR = 2  # 2: every file its own random stream (f"{seed}/{i}"), so files can be made in any order, in parallel
_BASES: list[bytes] = []  # each template pickled: unpickling makes a fresh copy several times sooner than deepcopy


def generate(out: Path, count: int, runs_per_machine: int, max_samples: int, seed: int = 0, workers: int = 1) -> None:
    """`count` files under `out`, in `workers` processes. Each file is decided by its number alone (its own random
    stream), and one already there is not written again: a generation cut short goes on where it stopped, and a kept
    folder (--work) is reused. A file is written to a temporary name and renamed, so none is ever half written."""
    numbers = list(range(count))
    chunks = [(out, numbers[i : i + 500], runs_per_machine, max_samples, seed) for i in range(0, count, 500)]
    if workers <= 1:
        for chunk in chunks:
            _generate_chunk(*chunk)
        return
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        for _ in pool.map(_generate_chunk, *zip(*chunks, strict=True)):
            pass


def _generate_chunk(out: Path, numbers: list[int], runs_per_machine: int, max_samples: int, seed: int) -> None:
    if not _BASES:
        _BASES.extend(pickle.dumps(base, protocol=pickle.HIGHEST_PROTOCOL) for base in templates())
    for i in numbers:
        _generate_one(out, i, runs_per_machine, max_samples, seed)


def _generate_one(out: Path, i: int, runs_per_machine: int, max_samples: int, seed: int) -> None:
    bases = _BASES
    start = FIRST_RELEASE  # the gate refuses runs before it (and from the future: files are 5 s apart)
    rng = random.Random(f"{seed}/{i}")
    machine_no = i // runs_per_machine
    pick = random.Random(machine_no)
    data = pickle.loads(bases[machine_no % len(bases)])
    machine = data["machine"]
    cpu_model, vendor = pick.choice(CPUS)
    # a machine's own hardware (the id is its hash): the socket count tells the generated machines apart
    machine["cpu"].update(model=cpu_model, vendor=vendor, sockets=machine_no + 1)
    factor = pick.uniform(0.3, 3.0)
    if machine.get("accelerators"):
        gpu_vendor, gpu_model = pick.choice(GPUS)
        machine["accelerators"][0].update(vendor=gpu_vendor, model=gpu_model)
    machine["id"] = machine_id(Cpu(**machine["cpu"]), [Accelerator(**a) for a in machine.get("accelerators", [])])
    when = start + timedelta(seconds=i * 5)
    path = out / machine["id"] / f"{when:%Y%m%dT%H%M%SZ}.yaml"
    if path.exists():  # written by a generation cut short, or kept (--work)
        return
    # A streaming step's figures, wall time and bound all follow from its latencies; scaled they would contradict
    # each other, and copied unscaled they would be replays of each other: generated files carry none.
    data["measurements"] = [m for m in data["measurements"] if not m.get("stream")]
    for m in data["measurements"]:
        scale = factor * rng.uniform(0.95, 1.05)
        if m.get("device") != "cpu" and machine.get("accelerators"):
            m["device_name"] = machine["accelerators"][0]["model"]
        elif m.get("device") == "cpu":
            m["device_name"] = cpu_model
        # A relabelled device must stay below its peak, or the site (rightly) leaves the file out.
        precision = m.get("precision", "fp32")
        if m.get("device") == "cpu":
            peak: float | None = cpu_peak_tflops(Cpu(**machine["cpu"]), precision)
        else:
            peak = gpu_peak_tflops(m["device_name"], precision)
        if peak and m.get("achieved_tflops") and m["achieved_tflops"] / scale > 0.5 * peak:
            scale = m["achieved_tflops"] / (0.5 * peak)
        rounds = m.get("rounds") or []
        sizes = _scale_rounds(m, rounds, scale, max_samples, rng) if rounds else []
        if not rounds:
            # every sample its own noise: generated files must not be replays of each other (the gate refuses them)
            m["samples_s"] = [s * scale * rng.uniform(0.99, 1.01) for s in m.get("samples_s", [])[:max_samples]]
            if m.get("warmup_s") is not None:
                m["warmup_s"] *= scale
            if m.get("wall_s") is not None:
                m["wall_s"] *= scale * 1.02  # room for the samples' own noise (up to 1% each)
        twin = m.get("fidelity")
        if twin and m["samples_s"]:  # the twin's lists scale too; its harness side is the measurement's rounds
            if sizes:
                twin["harness_s"] = fidelity.harness_rounds(m["samples_s"], sizes)
            else:  # before rounds: round 1 is the measurement's own mean
                later = [h * scale for h in twin["harness_s"][1:]]
                twin["harness_s"] = [fidelity.mean_per_unit(m["samples_s"]), *later]
            twin["script_s"] = [s * scale * rng.uniform(0.98, 1.02) for s in twin["script_s"]]
            figures = fidelity.summarise(twin["harness_s"], twin["script_s"], twin.get("interval", "bootstrap-median"))
            twin.update(ratio=figures.ratio, ci95=list(figures.ci95), verdict=figures.verdict)
        nvidia = any(a.get("vendor") == "nvidia" for a in machine.get("accelerators", []))
        m["energy"] = [_scaled_energy(e, scale, m["samples_per_unit"]) for e in m.get("energy") or []
                       if nvidia or not e["source"].startswith("nvml")]  # fmt: skip
        if m.get("status") == "ok" and m["samples_s"]:  # the statistics and rates the gate recomputes
            schema = data["schema_version"]
            stats = summarize_rounds(m["samples_s"], sizes, schema) if sizes else summarize(m["samples_s"])
            m.update(median_s=stats.median_s, iqr_s=stats.iqr_s, rel_ci_halfwidth=stats.rel_ci_halfwidth)
            m["ci95_s"] = list(stats.ci95_s) if stats.ci95_s else None
            m["samples_per_s"] = m["samples_per_unit"] / stats.median_s
            if m.get("flops_per_unit"):
                m["achieved_tflops"] = m["flops_per_unit"] / stats.median_s / 1e12
    # the run lasts longer than its measurements' scaled wall times together (the gate checks each against it)
    wall = sum(m.get("wall_s") or 0.0 for m in data["measurements"]) * 1.5 + 60.0
    data["run"].update(
        id=f"{rng.getrandbits(128):032x}",
        started_at=when.isoformat(),
        finished_at=(when + timedelta(seconds=wall)).isoformat(),
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".part")
    partial.write_text(yaml.dump(data, Dumper=yaml.CSafeDumper, sort_keys=False, width=120))
    partial.replace(path)


def _scale_rounds(m: dict[str, Any], rounds: list[dict[str, Any]], scale: float, max_samples: int,
                  rng: random.Random) -> list[int]:  # fmt: skip
    """A measurement in rounds (schema 9 on): each round keeps its share of `max_samples` (one sample at least), its
    samples, warm-up and wall time scaled, its median recomputed; the measurement takes its warm-up and wall time from
    its rounds, as the runner does. Returns the rounds' new sizes."""
    keep = max(1, max_samples // len(rounds))
    runs = split_rounds(list(m["samples_s"]), [r["samples"] for r in rounds])
    samples: list[float] = []
    for r, run in zip(rounds, runs, strict=True):
        mine = [s * scale * rng.uniform(0.99, 1.01) for s in run[:keep]]
        r.update(samples=len(mine), median_s=statistics.median(mine))
        if r.get("warmup_s") is not None:
            r["warmup_s"] *= scale
        if r.get("wall_s") is not None:
            r["wall_s"] *= scale * 1.02  # room for the samples' own noise (up to 1% each)
        samples += mine
    m["samples_s"] = samples
    if m.get("warmup_s") is not None:
        m["warmup_s"] = rounds[0].get("warmup_s")
    walls = [r.get("wall_s") for r in rounds]
    if m.get("wall_s") is not None and None not in walls:
        m["wall_s"] = sum(walls)
    return [r["samples"] for r in rounds]


def _scaled_energy(e: dict[str, Any], scale: float, samples_per_unit: int) -> dict[str, Any]:
    """An energy block whose rounds' windows scale with the time and whose power stays the machine's (so it stays
    under the board's limit); its figures recomputed from the rounds, as the gate does."""
    for r in e["rounds"]:
        r.update(joules=r["joules"] * scale, window_s=r["window_s"] * scale)
    e.update(energy_figures(e["rounds"], e.get("counter_period_s"), e.get("idle_power_w"), samples_per_unit))
    return e


def run_measured(command: list[str], env: dict[str, str] | None = None, cwd: Path = ROOT) -> tuple[float, float, str]:
    """Wall seconds, peak RSS in GiB (wait4: the largest of the process and its waited-for children) and stdout of a
    fresh process; a failing one ends the benchmark with its stderr."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Both streams are read at once, each by a thread: a build writes more to stderr than a pipe holds, and reading
    # stdout to its end first would wait for it forever. wait4 then reaps the process with its own peak RSS.
    chunks: dict[str, str] = {}

    def drain(name: str, stream: Any) -> None:
        chunks[name] = stream.read()

    readers = [threading.Thread(target=drain, args=(n, s)) for n, s in (("out", proc.stdout), ("err", proc.stderr))]
    for reader in readers:
        reader.start()
    _, status, usage = os.wait4(proc.pid, 0)
    for reader in readers:
        reader.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    stdout, stderr = chunks["out"], chunks["err"]
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({proc.returncode}):\n{stderr[-3000:]}")
    return wall, usage.ru_maxrss / 1024**2, stdout


def print_phases(size: int, *logs: Path) -> None:
    """Where each build's time and memory went, phase by phase (site_builder.mkdocs_hooks logs them): the cold build
    filling the cache, then the one with a file added, as far as each got."""
    names = {"phases-fill.jsonl": "cold build filling the cache", "phases-added.jsonl": "one file added"}
    runs = [[json.loads(line) for line in log.read_text().splitlines()] for log in logs]
    print(
        f"{size}: phases, {' | '.join(names.get(log.name, log.name) for log in logs)} (wall s; resident GiB at the "
        "phase's end, of it Arrow's pool, and the process's peak so far: where it grows, the phase set a new peak)"
    )
    print("| phase |" + " s | GiB | Arrow | peak |" * len(runs) + "\n|---|" + "---:|---:|---:|---:|" * len(runs))
    for entries in itertools.zip_longest(*runs):
        cells = [
            " — | — | — | — "
            if e is None
            else f"{e['s']:.1f} | {e['rss_gib']:.2f} | {e.get('arrow_gib', 0.0):.2f} | {e.get('peak_gib') or 0.0:.2f}"
            for e in entries
        ]
        phase = next(e["phase"] for e in entries if e is not None)
        print(f"| {phase} | {' | '.join(cells)} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--runs-per-machine", type=int, default=2)
    parser.add_argument("--max-samples", type=int, default=8)
    parser.add_argument("--keep", action="store_true", help="keep the generated files and site")
    parser.add_argument(
        "--work",
        type=Path,
        help="generate into WORK/<size>/ and keep it (files, cache, site, phase logs); a later run with the same "
        "folder reuses its files (generating only what is missing) and, with --incremental-only, its cache",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help="processes that generate the files (default: one per CPU; the files are the same whatever the number)",
    )
    parser.add_argument(
        "--one-cold",
        action="store_true",
        help="one cold build, the one that fills the cache, stands for both (it costs a few percent more than one "
        "without a cache); at 10,000 files this saves about 20 minutes on a 2-core machine",
    )
    parser.add_argument(
        "--no-gate",
        action="store_true",
        help="do not run `benchsite validate` over the generated files first (about 18 minutes at 10,000 files on a "
        "2-core machine). The files are the same for the same sizes and committed results, and the strict build "
        "still fails on any file that breaks a rule of the gate's per-file checks",
    )
    parser.add_argument(
        "--no-parse",
        action="store_true",
        help="do not time the parse baseline (about 15 minutes at 10,000 files, 2.5 hours at 100,000 on a 2-core "
        "machine); cold / parse is then not printed",
    )
    parser.add_argument(
        "--generate-only",
        action="store_true",
        help="with --work: generate the files there and stop (100,000 files: about 27 minutes with two workers on a "
        "2-core machine)",
    )
    parser.add_argument(
        "--no-incremental", action="store_true", help="stop after the cold build (the cache it filled is kept)"
    )
    parser.add_argument(
        "--incremental-only",
        action="store_true",
        help="with --work: only add the held-back file and build with the cache an earlier --no-incremental run "
        "filled there (a build of 100,000 files and its incremental build do not fit in one session)",
    )
    args = parser.parse_args()
    if args.incremental_only and not args.work:
        parser.error("--incremental-only needs --work (the folder whose cache an earlier run filled)")
    if args.generate_only and not args.work:
        parser.error("--generate-only needs --work (the folder to keep the files in)")

    rows = []
    for size in args.sizes:
        rows.append(measure(size, args))
    if args.generate_only:
        return
    print()
    print(
        "| files | MB | pages | largest page MB | YAML load s | parse s | cold build s | cold/parse | cold, filling "
        "the cache s | one file added s | added/cold | cold GiB | added GiB |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")

    def cell(value: float | None, spec: str) -> str:
        return "—" if value is None else format(value, spec)

    for r in rows:
        cold, parse, added = r["cold_s"], r["parse_s"], r["added_s"]
        print(
            f"| {r['size']:,} | {cell(r['mb'], ',.0f')} | {cell(r['pages'], ',')} | {cell(r['largest'], '.2f')} | "
            f"{cell(r['yaml_s'], '.1f')} | {cell(parse, '.1f')} | {cell(cold, '.1f')} | "
            f"{cell(cold / parse if cold and parse else None, '.2f')} | {cell(r['fill_s'], '.1f')} | "
            f"{cell(added, '.1f')} | {cell(added / cold if added and cold else None, '.2f')} | "
            f"{cell(r['cold_gib'], '.2f')} | {cell(r['added_gib'], '.2f')} |"
        )
    last = rows[-1]
    verdicts = []
    if last["cold_s"] and last["parse_s"]:
        ratio = last["cold_s"] / last["parse_s"]
        verdicts.append(
            f"cold build <= {TARGET_RATIO} x parse ({'met' if ratio <= TARGET_RATIO else 'MISSED'}, {ratio:.2f})"
        )
    if last["cold_s"] and last["added_s"]:
        ratio = last["added_s"] / last["cold_s"]
        verdicts.append(
            f"one file added <= {TARGET_INCREMENTAL} x cold ({'met' if ratio <= TARGET_INCREMENTAL else 'MISSED'}, "
            f"{ratio:.2f})"
        )
    peaks = [g for g in (last["cold_gib"], last["added_gib"]) if g is not None]
    if peaks:
        peak = max(peaks)
        target = TARGET_MEMORY_GIB if last["size"] <= 10_000 else TARGET_MEMORY_100K_GIB
        verdicts.append(f"peak memory < {target} GiB ({'met' if peak < target else 'MISSED'}, {peak:.2f} GiB)")
    print(f"targets at {last['size']:,} files: " + "; ".join(verdicts))


def measure(size: int, args: argparse.Namespace) -> dict[str, Any]:
    """One size: generate (or reuse), gate, parse, the cold build filling a cache, one file added."""
    row: dict[str, Any] = dict.fromkeys(
        ("mb", "pages", "largest", "yaml_s", "parse_s", "cold_s", "fill_s", "added_s", "cold_gib", "added_gib")
    )
    row["size"] = size
    if args.work:
        work = args.work / str(size)
        work.mkdir(parents=True, exist_ok=True)
    else:
        work = Path(tempfile.mkdtemp(prefix=f"benchsite-scale-{size}-"))
    results, site, cache = work / "results", work / "site", work / "cache"
    held, held_from = work / "held.yaml", work / "held-from.txt"
    fill_log, inc_log = work / "phases-fill.jsonl", work / "phases-added.jsonl"
    measured = work / "cold.json"
    env = {**os.environ, "BENCHSITE_RESULTS": str(results), "BENCHSITE_STRICT": "1", "NO_MKDOCS_2_WARNING": "1"}
    build = [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)]
    if not args.incremental_only:
        if held.exists():  # a kept folder: its held-back file goes back before the files are checked
            shutil.move(held, held_from.read_text())
        done = work / "generated.json"
        wanted = {
            "files": size + 1,
            "generator": GENERATOR,
            "runs_per_machine": args.runs_per_machine,
            "max_samples": args.max_samples,
        }
        t0 = time.perf_counter()
        if not done.exists() or json.loads(done.read_text()) != wanted:
            done.unlink(missing_ok=True)
            generate(results, size + 1, args.runs_per_machine, args.max_samples, workers=args.workers)
            done.write_text(json.dumps(wanted))
        gen_s = time.perf_counter() - t0
        # the last file is held back: the incremental build adds it to the others
        extra = sorted(results.rglob("*.yaml"), key=lambda p: p.name)[-1]
        held_from.write_text(str(extra))
        shutil.move(extra, held)
        row["mb"] = sum(p.stat().st_size for p in results.rglob("*.yaml")) / 1e6
        print(f"{size} files ({row['mb']:,.0f} MB) generated or found in {gen_s:.0f} s, in {work}", flush=True)
        if args.generate_only:
            return row
        # the gate itself over every generated file (`benchsite validate`: each file's rules and the folder's
        # history); a file it refuses would be left out of the build, or fail it under --strict
        if not args.no_gate:
            gate_s, _, _ = run_measured([sys.executable, "-m", "runner", "validate", str(results)])
            print(f"{size}: every file passes the gate ({gate_s:.0f} s)", flush=True)
        if not args.no_parse:
            _, _, out = run_measured([sys.executable, "-c", PARSE, str(results)])
            yaml_s, parse_s, bad = out.split()
            if int(bad):
                sys.exit(f"{bad} generated files failed validation")
            row["yaml_s"], row["parse_s"] = float(yaml_s), float(parse_s)
            print(f"{size}: yaml {row['yaml_s']:.1f} s, parse {row['parse_s']:.1f} s", flush=True)
        shutil.rmtree(cache, ignore_errors=True)
        fill_log.unlink(missing_ok=True)
        fill_env = {**env, "BENCHSITE_CACHE": str(cache), PHASES_ENV: str(fill_log)}
        row["fill_s"], fill_gib, _ = run_measured(build, env=fill_env)
        if args.one_cold:
            row["cold_s"], row["cold_gib"] = row["fill_s"], fill_gib
        else:
            shutil.rmtree(site, ignore_errors=True)
            row["cold_s"], cold_gib, _ = run_measured(build, env={**env, "BENCHSITE_CACHE": "off"})
            row["cold_gib"] = max(cold_gib, fill_gib)
        print(
            f"{size}: cold build {row['cold_s']:.1f} s, filling the cache {row['fill_s']:.1f} s, peak "
            f"{row['cold_gib']:.2f} GiB",
            flush=True,
        )
        print_phases(size, fill_log)
        measured.write_text(json.dumps(row))  # for a later --incremental-only
    elif measured.exists():  # what the earlier run measured in this folder: the cold build stands beside this one
        row.update(json.loads(measured.read_text()))
    if not args.no_incremental:
        if not held.exists() or not cache.exists():
            sys.exit(f"{work} holds no held-back file and cache: run a cold build there first (--no-incremental)")
        shutil.move(held, held_from.read_text())
        inc_log.unlink(missing_ok=True)
        inc_env = {**env, "BENCHSITE_CACHE": str(cache), PHASES_ENV: str(inc_log)}
        row["added_s"], row["added_gib"], _ = run_measured(build, env=inc_env)
        print(f"{size}: one file added {row['added_s']:.1f} s, peak {row['added_gib']:.2f} GiB", flush=True)
        print_phases(size, *([fill_log, inc_log] if fill_log.exists() else [inc_log]))
    if site.exists():
        pages = list(site.rglob("*.html"))
        biggest = max(pages, key=lambda p: p.stat().st_size)
        row["pages"], row["largest"] = len(pages), biggest.stat().st_size / 1e6
        print(f"{size}: largest page {biggest.relative_to(site)}, {row['largest']:.2f} MB", flush=True)
    if args.keep or args.work:
        print(f"kept {work}")
    else:
        shutil.rmtree(work)
    return row


if __name__ == "__main__":
    main()
