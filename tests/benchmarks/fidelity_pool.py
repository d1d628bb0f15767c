"""Every round of the fidelity.py runs given, pooled per host, device and row: the fidelity tables of RESULTS.md.

    python tests/benchmarks/fidelity_pool.py tests/benchmarks/data/fidelity/*.csv [--by-run]

Each input is a CSV file of rounds, one line per round of one row of one fidelity.py run:

    host,device,run,measured_at,commit,seed,measurement,round,script_ms,benchsite_ms,rounds_from

`script_ms` and `benchsite_ms` are that round's mean milliseconds per unit for the transcription and for benchsite's
as-written measurement; `rounds_from` is `json` (fidelity.py's --json, full precision) or `printed` (the rounds a run
cut off before its row finished printed, to 0.01 ms). Rounds are pooled where host, device, seed and measurement are
the same, whatever the run: a table's line pools every round of that row in the files given, by
runner.fidelity.summarise (the statistic of a result file's `fidelity` block: the ratio of the geometric means over
rounds, benchsite over script, Welch's 95% interval on the logarithms, and the verdict). `--by-run` prints each run's
rounds alone above the pooled line. Only pool runs of the same loops: a row whose loop changed is another
measurement (seed 002's step order before 53af967 is `cifar-lenet (earlier step order)`).

A run is added by turning its fidelity.py output into lines of such a file:

    python tests/benchmarks/fidelity.py ... --json out.json > out.txt
    python tests/benchmarks/fidelity_pool.py --from-json out.json --host "1x H200 + 16-core Xeon host" \\
        --run h200-gpu-19 --measured-at 2026-12-05 --commit abc1234 >> tests/benchmarks/data/fidelity/h200_gpu.csv

and a row the run did not finish with `--from-output out.txt --device cuda --seed 004 --measurement mnist-cnn` in
place of `--from-json out.json` (the rounds printed after the last finished row). Not part of the test run.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from runner.fidelity import summarise

COLUMNS = [
    "host",
    "device",
    "run",
    "measured_at",
    "commit",
    "seed",
    "measurement",
    "round",
    "script_ms",
    "benchsite_ms",
    "rounds_from",
]
# a round as fidelity.py prints it: "  round 3 (benchsite first): seed (plain 274.56), benchsite 251.21 ms"
ROUND = re.compile(r"seed \(plain ([\d.]+)\), benchsite ([\d.]+) ms")
DEVICES = {"cpu": "CPU", "cuda": "GPU"}
HEADER = (
    "| point | runs | rounds | script (ms) | benchsite (ms) | ratio (95% interval) | verdict |\n"
    "|---|---:|---:|---:|---:|---|---|"
)
BY_RUN = (
    "| point | run | commit | rounds | script (ms) | benchsite (ms) | ratio (95% interval) | verdict |\n"
    "|---|---|---|---:|---:|---:|---|---|"
)

Key = tuple[str, str, str, str]  # host, device, seed, measurement


def point(seed: str, measurement: str) -> str:
    """A row's name in the tables: '001 depth 2', '003 BERT-base step', else 'SEED MEASUREMENT'."""
    if m := re.fullmatch(r"depth-sweep depth=(\d+)", measurement):
        return f"{seed} depth {m[1]}"
    if measurement == "transformer model=bert-base mode=train batch_size=8":
        return f"{seed} BERT-base step"
    return f"{seed} {measurement.replace(' (earlier step order)', ', earlier step order')}"


def order(key: Key) -> tuple:
    """Tables by host and device, rows by seed, then depth as a number."""
    host, device, seed, measurement = key
    depth = re.search(r"depth=(\d+)", measurement)
    return (host, device, seed, int(depth[1]) if depth else 0, measurement)


def read(paths: list[Path]) -> dict[Key, dict[str, list[dict]]]:
    """Every round in the files, by host, device, seed and measurement, then by run (in the files' order)."""
    rows: dict[Key, dict[str, list[dict]]] = {}
    for path in paths:
        with path.open(newline="") as f:
            lines = csv.DictReader(f)
            if lines.fieldnames != COLUMNS:
                sys.exit(f"{path}: expected the columns {','.join(COLUMNS)}")
            for line in lines:
                key = (line["host"], line["device"], line["seed"], line["measurement"])
                rows.setdefault(key, {}).setdefault(line["run"], []).append(line)
    return rows


def cells(rounds: list[dict]) -> str:
    """rounds | script | benchsite | ratio (interval) | verdict, from the rounds' milliseconds."""
    script = [float(r["script_ms"]) for r in rounds]
    harness = [float(r["benchsite_ms"]) for r in rounds]
    means = f"{statistics.geometric_mean(script):,.3f} | {statistics.geometric_mean(harness):,.3f}"
    if len(rounds) < 2:  # Welch's interval needs two rounds a side
        return f"{len(rounds)} | {means} | | |"
    s = summarise(harness, script)
    return f"{len(rounds)} | {means} | {s.ratio:.3f} ({s.ci95[0]:.3f} .. {s.ci95[1]:.3f}) | {s.verdict} |"


def tables(rows: dict[Key, dict[str, list[dict]]], by_run: bool) -> None:
    """One Markdown table per host and device: each row's rounds pooled over its runs."""
    shown = None
    for key in sorted(rows, key=order):
        host, device, seed, measurement = key
        if (host, device) != shown:
            shown = (host, device)
            print(f"\n{host}, {DEVICES.get(device, device)}\n\n{BY_RUN if by_run else HEADER}")
        runs = rows[key]
        pooled = [r for rounds in runs.values() for r in rounds]
        name = point(seed, measurement)
        if by_run:
            for run, rounds in runs.items():
                printed = " (printed rounds)" if rounds[0]["rounds_from"] == "printed" else ""
                print(f"| {name} | {run}{printed} | {rounds[0]['commit']} | {cells(rounds)}")
            print(f"| {name} | **pooled** | | {cells(pooled)}")
        else:
            print(f"| {name} | {len(runs)} | {cells(pooled)}")


def convert(args: argparse.Namespace) -> None:
    """A fidelity.py run's rounds as lines of a rounds file (no header line: append them to one)."""
    out = csv.writer(sys.stdout, lineterminator="\n")
    meta = [args.run, args.measured_at, args.commit]
    if args.from_json:
        for row in json.loads(Path(args.from_json).read_text()):
            pairs = zip(row["transcription_rounds"], row["benchsite_rounds"], strict=True)
            for i, (s, b) in enumerate(pairs, 1):
                out.writerow(
                    [args.host, row["device"], *meta, row["seed"], row["measurement"], i, 1000 * s, 1000 * b, "json"]
                )
        return
    if not (args.device and args.seed and args.measurement):
        sys.exit("--from-output needs --device, --seed and --measurement")
    printed = Path(args.from_output).read_text().splitlines()
    last = max((i for i, line in enumerate(printed) if " ratio " in line), default=-1)
    found = [m for line in printed[last + 1 :] if (m := ROUND.search(line))]
    for i, m in enumerate(found, 1):
        row = [args.host, args.device, *meta, args.seed, args.measurement, i, float(m[1]), float(m[2]), "printed"]
        out.writerow(row)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", type=Path, help="rounds files (CSV) to pool")
    parser.add_argument("--by-run", action="store_true", help="each run's rounds alone above each pooled line")
    add = parser.add_argument_group("adding a run (prints lines of a rounds file)")
    add.add_argument("--from-json", metavar="FILE", help="a fidelity.py --json file: every row it finished")
    add.add_argument("--from-output", metavar="FILE", help="fidelity.py's output: the rounds of a row cut off")
    add.add_argument("--host", help='the host class, e.g. "2-core AMD EPYC VM"')
    add.add_argument("--run", help="the run's name, unique in its file")
    add.add_argument("--measured-at", help="the run's date (YYYY-MM-DD)")
    add.add_argument("--commit", help="the commit the run measured")
    add.add_argument("--device", help="--from-output: the row's device (cpu, cuda)")
    add.add_argument("--seed", help="--from-output: the row's seed (000 .. 004)")
    add.add_argument("--measurement", help="--from-output: the row's measurement, as fidelity.py names it")
    args = parser.parse_args()
    if args.from_json or args.from_output:
        if not (args.host and args.run and args.measured_at and args.commit):
            parser.error("adding a run needs --host, --run, --measured-at and --commit")
        convert(args)
        return
    if not args.files:
        parser.error("give the rounds files to pool (tests/benchmarks/data/fidelity/*.csv)")
    tables(read(args.files), args.by_run)


if __name__ == "__main__":
    main()
