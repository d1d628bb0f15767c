"""Does the site build scale? The full `mkdocs build` against merely parsing the same result files.

    python tests/benchmarks/site_scale.py [--sizes 1000 10000] [--runs-per-machine 2] [--max-samples 8]

Generates N schema-valid result files in a temporary directory (never under results/): each is one of the committed
real files with a new machine id, a CPU and an accelerator from a pool of real models, every time scaled by a per-
machine factor with noise of its own per sample (statistics recomputed, as the gate does), a machine id that is the
hash of its hardware (the socket count tells machines apart), and a new run id and date; `--runs-per-machine` files
share a machine (so N / runs machines get a page each). Raw sample lists are cut to `--max-samples` (a quick-
profile run keeps about that many), which keeps the generated gigabytes and the run time bounded; parse and build
read the same files, so the ratio is fair.

Then, each in a fresh process:
- gate: `benchsite validate` over every generated file (a file it refuses would fail the strict build);
- parse: every file through `runner.results.storage.parse` (size limit, LibYAML safe load, schema): the least any
  build must do; the YAML load alone is timed too;
- cold build filling an empty cache;
- cold build: `mkdocs build --strict` of the real site from those files (every page, CSV, chart and export) with
  no build cache (BENCHSITE_CACHE=off); with --one-cold the build that filled the cache stands for it;
- the incremental build: one more file added, the cache from the first build (site_builder.cache).
  The build parses with one process per CPU (site_builder.load); the parse baseline is one process, so on a
  machine with more cores the ratio flatters the build more. All are wall times.
Reports wall time, peak RSS (from wait4), the largest page, cold/parse and added/cold. Targets (issue 31): cold
build <= 3x parse at 10,000 files, one file added <= 25% of a cold build, peak memory < 2 GiB. Not part of the test
run.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
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
from runner.results.intervals import summarize  # noqa: E402
from runner.results.schema import Accelerator, Cpu  # noqa: E402
from site_builder.mkdocs_hooks import PHASES_ENV  # noqa: E402

TARGET_RATIO = 3.0
TARGET_MEMORY_GIB = 2.0
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


def generate(out: Path, count: int, runs_per_machine: int, max_samples: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    bases = templates()
    start = FIRST_RELEASE  # the gate refuses runs before it (and from the future: files are 5 s apart)
    for i in range(count):
        machine_no = i // runs_per_machine
        pick = random.Random(machine_no)
        data = copy.deepcopy(bases[machine_no % len(bases)])
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
            # every sample its own noise: generated files must not be replays of each other (the gate refuses them)
            m["samples_s"] = [s * scale * rng.uniform(0.99, 1.01) for s in m.get("samples_s", [])[:max_samples]]
            if m.get("warmup_s") is not None:
                m["warmup_s"] *= scale
            if m.get("wall_s") is not None:
                m["wall_s"] *= scale * 1.02  # room for the samples' own noise (up to 1% each)
            twin = m.get("fidelity")
            if twin and m["samples_s"]:  # the twin's lists scale too; round 1 is the measurement's own mean
                later = [h * scale for h in twin["harness_s"][1:]]
                twin["harness_s"] = [fidelity.mean_per_unit(m["samples_s"]), *later]
                twin["script_s"] = [s * scale * rng.uniform(0.98, 1.02) for s in twin["script_s"]]
                figures = fidelity.summarise(
                    twin["harness_s"], twin["script_s"], twin.get("interval", "bootstrap-median")
                )
                twin.update(ratio=figures.ratio, ci95=list(figures.ci95), verdict=figures.verdict)
            if m.get("status") == "ok" and m["samples_s"]:  # the statistics and rates the gate recomputes
                stats = summarize(m["samples_s"])
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
        path = out / machine["id"] / f"{when:%Y%m%dT%H%M%SZ}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.dump(data, Dumper=yaml.CSafeDumper, sort_keys=False, width=120))


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


def print_phases(size: int, fill_log: Path, inc_log: Path) -> None:
    """Where the two builds' time and memory went, phase by phase (site_builder.mkdocs_hooks logs them)."""
    fill, added = ([json.loads(line) for line in log.read_text().splitlines()] for log in (fill_log, inc_log))
    print(
        f"{size}: phases, cold build filling the cache | one file added (wall s; resident GiB at the phase's end, "
        "of it Arrow's pool, and the process's peak so far: where it grows, the phase set a new peak)"
    )
    print(
        "| phase | cold s | cold GiB | Arrow | peak | added s | added GiB | Arrow | peak |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    )
    for a, b in zip(fill, added, strict=True):
        cells = [
            f"{e['s']:.1f} | {e['rss_gib']:.2f} | {e.get('arrow_gib', 0.0):.2f} | {e.get('peak_gib') or 0.0:.2f}"
            for e in (a, b)
        ]
        print(f"| {a['phase']} | {' | '.join(cells)} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--runs-per-machine", type=int, default=2)
    parser.add_argument("--max-samples", type=int, default=8)
    parser.add_argument("--keep", action="store_true", help="keep the generated files and site")
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
    args = parser.parse_args()

    rows = []
    for size in args.sizes:
        work = Path(tempfile.mkdtemp(prefix=f"benchsite-scale-{size}-"))
        results, site, cache = work / "results", work / "site", work / "cache"
        t0 = time.perf_counter()
        generate(results, size + 1, args.runs_per_machine, args.max_samples)
        gen_s = time.perf_counter() - t0
        # the last file is held back: the incremental build adds it to the others
        extra = sorted(results.rglob("*.yaml"), key=lambda p: p.name)[-1]
        held = work / "held.yaml"
        shutil.move(extra, held)
        megabytes = sum(p.stat().st_size for p in results.rglob("*.yaml")) / 1e6
        print(f"{size} files ({megabytes:,.0f} MB) generated in {gen_s:.0f} s", flush=True)
        # the gate itself over every generated file (`benchsite validate`: each file's rules and the folder's
        # history); a file it refuses would be left out of the build, or fail it under --strict
        if not args.no_gate:
            gate_s, _, _ = run_measured([sys.executable, "-m", "runner", "validate", str(results)])
            print(f"{size}: every file passes the gate ({gate_s:.0f} s)", flush=True)
        _, _, out = run_measured([sys.executable, "-c", PARSE, str(results)])
        yaml_s, parse_s, bad = out.split()
        if int(bad):
            sys.exit(f"{bad} generated files failed validation")
        env = {**os.environ, "BENCHSITE_RESULTS": str(results), "BENCHSITE_STRICT": "1", "NO_MKDOCS_2_WARNING": "1"}
        build = [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)]
        print(f"{size}: yaml {float(yaml_s):.1f} s, parse {float(parse_s):.1f} s", flush=True)
        fill_log, inc_log = work / "phases-fill.jsonl", work / "phases-added.jsonl"
        fill_env = {**env, "BENCHSITE_CACHE": str(cache), PHASES_ENV: str(fill_log)}
        fill_s, fill_gib, _ = run_measured(build, env=fill_env)
        if args.one_cold:
            cold_s, cold_gib = fill_s, fill_gib
        else:
            shutil.rmtree(site, ignore_errors=True)
            cold_s, cold_gib, _ = run_measured(build, env={**env, "BENCHSITE_CACHE": "off"})
        print(f"{size}: cold build {cold_s:.1f} s", flush=True)
        shutil.move(held, extra)
        inc_s, inc_gib, _ = run_measured(build, env={**env, "BENCHSITE_CACHE": str(cache), PHASES_ENV: str(inc_log)})
        print(f"{size}: cold build filling the cache {fill_s:.1f} s, one file added {inc_s:.1f} s", flush=True)
        print_phases(size, fill_log, inc_log)
        pages = sum(1 for _ in site.rglob("*.html"))
        biggest = max(site.rglob("*.html"), key=lambda p: p.stat().st_size)
        largest = biggest.stat().st_size / 1e6
        print(f"{size}: largest page {biggest.relative_to(site)}, {largest:.2f} MB", flush=True)
        rows.append(
            (
                size,
                megabytes,
                float(yaml_s),
                float(parse_s),
                cold_s,
                fill_s,
                inc_s,
                max(cold_gib, fill_gib),
                inc_gib,
                pages,
                largest,
            )
        )
        if not args.keep:
            shutil.rmtree(work)
        else:
            print(f"kept {work}")

    print()
    print(
        "| files | MB | pages | largest page MB | YAML load s | parse s | cold build s | cold/parse | cold, filling "
        "the cache s | one file added s | added/cold | cold GiB | added GiB |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for size, mb, yaml_s, parse_s, cold_s, fill_s, inc_s, cold_gib, inc_gib, pages, largest in rows:
        print(
            f"| {size:,} | {mb:,.0f} | {pages:,} | {largest:.2f} | {yaml_s:.1f} | {parse_s:.1f} | {cold_s:.1f} | "
            f"{cold_s / parse_s:.2f} | {fill_s:.1f} | {inc_s:.1f} | {inc_s / cold_s:.2f} | {cold_gib:.2f} | "
            f"{inc_gib:.2f} |"
        )
    last = rows[-1]
    print(
        f"targets at {last[0]:,} files: cold build <= {TARGET_RATIO} x parse "
        f"({'met' if last[4] / last[3] <= TARGET_RATIO else 'MISSED'}, {last[4] / last[3]:.2f}); one file added <= "
        f"{TARGET_INCREMENTAL} x cold ({'met' if last[6] / last[4] <= TARGET_INCREMENTAL else 'MISSED'}, "
        f"{last[6] / last[4]:.2f}); peak memory < {TARGET_MEMORY_GIB} GiB "
        f"({'met' if max(last[7], last[8]) < TARGET_MEMORY_GIB else 'MISSED'}, {max(last[7], last[8]):.2f} GiB)"
    )


if __name__ == "__main__":
    main()
