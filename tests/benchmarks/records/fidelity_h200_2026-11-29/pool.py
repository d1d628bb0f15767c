"""This folder's rows, and every row of item 1's lent hosts measured on today's loops, pooled (ms per unit), by
runner.fidelity.summarise (the statistic of a result file's `fidelity` block). From the repository's root:

    python tests/benchmarks/records/fidelity_h200_2026-11-29/pool.py

Today's loops: no as-written loop or transcription changed from 0dc8746 (2026-11-26, sixth session) to this
folder's 733d6d6 but seed 002's step order (53af967, 2026-11-28, tenth session). So a row's rounds pool from
0dc8746 on, seed 002's from 53af967 on; the H100's seed 002 rows are all the earlier order (no H100 machine was lent
after the fix), and pool with each other only. Every run is `fidelity.py --profile standard --seconds 2` on a lent
H200 or H100 machine (one GPU, 16-core Intel Xeon host, torch 2.11), nothing else running; a finished row's rounds
come from its --json at full precision, a row cut off before it finished from its printed rounds (to 0.01 ms).
"""

from __future__ import annotations

import io
import json
import re
import statistics
import tarfile
from pathlib import Path

from runner.fidelity import summarise

RECORDS = Path(__file__).resolve().parent.parent
ROUND = re.compile(r"seed \(plain ([\d.]+)\), benchsite ([\d.]+) ms")

Rounds = list[tuple[float, float]]  # (script, benchsite) in ms, one per round


def read(path: str) -> str:
    """A records file's text; `ARCHIVE.tgz:MEMBER` reads a member of a tarball."""
    archive, _, member = path.partition(":")
    if not member:
        return RECORDS.joinpath(path).read_text()
    with tarfile.open(RECORDS / archive) as tar:
        found = tar.extractfile(member)
        assert found is not None, path
        return io.TextIOWrapper(found).read()


def finished(path: str, seed: str, measurement: str) -> Rounds:
    """One row's rounds from a fidelity.py --json file."""
    (row,) = [r for r in json.loads(read(path)) if r["seed"] == seed and r["measurement"] == measurement]
    return [(1000 * s, 1000 * h) for s, h in zip(row["transcription_rounds"], row["benchsite_rounds"], strict=True)]


def cut_off(path: str) -> Rounds:
    """The rounds a fidelity.py output printed after its last finished row (a row the device call cut off)."""
    printed = read(path).splitlines()
    last = max((i for i, line in enumerate(printed) if " ratio " in line), default=-1)
    return [(float(m[1]), float(m[2])) for line in printed[last + 1 :] if (m := ROUND.search(line))]


D2, D8, D12 = ("depth-sweep depth=2", "depth-sweep depth=8", "depth-sweep depth=12")
BERT = "transformer model=bert-base mode=train batch_size=8"
HERE = "fidelity_h200_2026-11-29"

# This session's runs: machine C the GPU's rows (and seed 004's CPU, one round before the machine was given back),
# machine D the host CPU's seeds 003 and 002.
THIS_SESSION: list[tuple[str, str, Rounds]] = [
    ("C gpu", "001 depth 8", finished(f"{HERE}/machine_c/gpu_rest.json", "001", D8)),
    ("C gpu", "001 depth 12", finished(f"{HERE}/machine_c/gpu_rest.json", "001", D12)),
    ("C gpu", "002 cifar-lenet", finished(f"{HERE}/machine_c/gpu_rest.json", "002", "cifar-lenet")),
    ("C gpu", "003 BERT-base step", finished(f"{HERE}/machine_c/gpu_rest.json", "003", BERT)),
    ("C gpu", "004 mnist-cnn", finished(f"{HERE}/machine_c/gpu_004.json", "004", "mnist-cnn")),
    ("C cpu", "004 mnist-cnn (cut off)", cut_off(f"{HERE}/machine_c/cpu_004.txt")),
    ("D cpu", "003 BERT-base step", finished(f"{HERE}/machine_d/cpu_003.json", "003", BERT)),
    ("D cpu", "002 cifar-lenet", finished(f"{HERE}/machine_d/cpu_002.json", "002", "cifar-lenet")),
]

# Every run on today's loops, by row: (where, rounds).
H200_GPU: dict[str, list[tuple[str, Rounds]]] = {
    "000 tabular-mlp": [
        ("2026-11-26h gpu2", finished("fidelity_h200_2026-11-26h/gpu2.json", "000", "tabular-mlp")),
        ("2026-11-27e gpu000", finished("fidelity_2026-11-27e/h200/gpu000.json", "000", "tabular-mlp")),
        ("2026-11-28f B", finished("fidelity_h200_2026-11-28f/machine_b/gpu_a.json", "000", "tabular-mlp")),
    ],
    "001 depth 2": [
        ("2026-11-26h gpu2", finished("fidelity_h200_2026-11-26h/gpu2.json", "001", D2)),
        ("2026-11-27e gpu_d2", finished("fidelity_2026-11-27e/h200/gpu_d2.json", "001", D2)),
        ("2026-11-27e gpu_d2b", finished("fidelity_2026-11-27e/h200/gpu_d2b.json", "001", D2)),
        ("2026-11-28f B", finished("fidelity_h200_2026-11-28f/machine_b/gpu_a.json", "001", D2)),
    ],
    "001 depth 8": [
        ("2026-11-26h gpu2", finished("fidelity_h200_2026-11-26h/gpu2.json", "001", D8)),
        ("2026-11-27e gpu_d8", finished("fidelity_2026-11-27e/h200/gpu_d8.json", "001", D8)),
        ("2026-11-28f B (cut off)", cut_off("fidelity_h200_2026-11-28f/machine_b/gpu_a.txt")),
        ("2026-11-29 C", finished(f"{HERE}/machine_c/gpu_rest.json", "001", D8)),
    ],
    "001 depth 12": [
        ("2026-11-26g gpu", finished("fidelity_h200_2026-11-26g/gpu.json", "001", D12)),
        ("2026-11-29 C", finished(f"{HERE}/machine_c/gpu_rest.json", "001", D12)),
    ],
    "002 cifar-lenet": [
        (
            "2026-11-28d gpu002",
            finished("fidelity_2026-11-28d/h200_fidelity002_call.tgz:go/h200_gpu002.json", "002", "cifar-lenet"),
        ),
        ("2026-11-29 C", finished(f"{HERE}/machine_c/gpu_rest.json", "002", "cifar-lenet")),
    ],
    "003 BERT-base step": [
        ("2026-11-26g gpu", finished("fidelity_h200_2026-11-26g/gpu.json", "003", BERT)),
        ("2026-11-29 C", finished(f"{HERE}/machine_c/gpu_rest.json", "003", BERT)),
    ],
    "004 mnist-cnn": [
        ("2026-11-26h gpu004", finished("fidelity_h200_2026-11-26h/gpu004.json", "004", "mnist-cnn")),
        ("2026-11-27e gpu004", finished("fidelity_2026-11-27e/h200/gpu004.json", "004", "mnist-cnn")),
        ("2026-11-29 C", finished(f"{HERE}/machine_c/gpu_004.json", "004", "mnist-cnn")),
    ],
}

# The host's 16-core CPU, the rows this session measured again.
H200_CPU: dict[str, list[tuple[str, Rounds]]] = {
    "002 cifar-lenet": [
        ("2026-11-28d run 1 (cut off)", cut_off("fidelity_2026-11-28d/h200_fidelity002_call.tgz:go/run_cpu.txt")),
        (
            "2026-11-28d run 2",
            finished("fidelity_2026-11-28d/h200_cpu002_run2.tgz:go/h200_cpu002.json", "002", "cifar-lenet"),
        ),
        ("2026-11-28d run 3", finished("fidelity_2026-11-28d/h200_cpu002_run3.json", "002", "cifar-lenet")),
        ("2026-11-28f A (cut off)", cut_off("fidelity_h200_2026-11-28f/machine_a/cpu_a.txt")),
        ("2026-11-28f B", finished("fidelity_h200_2026-11-28f/machine_b/cpu_a.json", "002", "cifar-lenet")),
        ("2026-11-29 D", finished(f"{HERE}/machine_d/cpu_002.json", "002", "cifar-lenet")),
    ],
    "003 BERT-base step": [
        ("2026-11-28f B", finished("fidelity_h200_2026-11-28f/machine_b/cpu_a.json", "003", BERT)),
        ("2026-11-29 D", finished(f"{HERE}/machine_d/cpu_003.json", "003", BERT)),
    ],
}


# The H100 machines' host CPU and GPU (item 1's H100 columns).
H100_CPU: dict[str, list[tuple[str, Rounds]]] = {
    "000 tabular-mlp": [
        ("2026-11-26g cpu", finished("fidelity_h100_2026-11-26g/cpu.json", "000", "tabular-mlp")),
        ("2026-11-27e cpu000", finished("fidelity_2026-11-27e/h100/cpu000.json", "000", "tabular-mlp")),
        ("2026-11-27f cpu000", finished("fidelity_2026-11-27f/h100/cpu000.json", "000", "tabular-mlp")),
    ],
    "001 depth 2": [
        ("2026-11-26g cpu", finished("fidelity_h100_2026-11-26g/cpu.json", "001", D2)),
        ("2026-11-27e cpu_d2", finished("fidelity_2026-11-27e/h100/cpu_d2.json", "001", D2)),
        ("2026-11-27f cpu_d2 (cut off)", cut_off("fidelity_2026-11-27f/h100/run_cpu_d2.txt")),
    ],
    "001 depth 8": [("2026-11-26g cpu", finished("fidelity_h100_2026-11-26g/cpu.json", "001", D8))],
    "001 depth 12": [("2026-11-26g cpu", finished("fidelity_h100_2026-11-26g/cpu.json", "001", D12))],
    "002 cifar-lenet, earlier order": [
        ("2026-11-26g cpu", finished("fidelity_h100_2026-11-26g/cpu.json", "002", "cifar-lenet")),
        ("2026-11-27e cpu002", finished("fidelity_2026-11-27e/h100/cpu002.json", "002", "cifar-lenet")),
    ],
    "003 BERT-base step": [
        ("2026-11-26g cpu", finished("fidelity_h100_2026-11-26g/cpu.json", "003", BERT)),
        ("2026-11-27e cpu003", finished("fidelity_2026-11-27e/h100/cpu003.json", "003", BERT)),
    ],
    "004 mnist-cnn": [
        ("2026-11-26g cpu004 (cut off)", cut_off("fidelity_h100_2026-11-26g/cpu004.txt")),
        ("2026-11-27b cpu004 (cut off)", cut_off("fidelity_h100_2026-11-27b/cpu004.txt")),
        ("2026-11-27c cpu004", finished("fidelity_h100_2026-11-27c/cpu004.json", "004", "mnist-cnn")),
    ],
}

H100_GPU: dict[str, list[tuple[str, Rounds]]] = {
    "000 tabular-mlp": [("2026-11-26f", finished("fidelity_h100_2026-11-26f/rows.json", "000", "tabular-mlp"))],
    "001 depth 2": [("2026-11-26f", finished("fidelity_h100_2026-11-26f/rows.json", "001", D2))],
    "001 depth 8": [("2026-11-26f", finished("fidelity_h100_2026-11-26f/rows.json", "001", D8))],
    "001 depth 12": [
        ("2026-11-27 first", finished("fidelity_h100_2026-11-27/gpu3_first.json", "001", D12)),
        ("2026-11-27 second", finished("fidelity_h100_2026-11-27/gpu3_second.json", "001", D12)),
        ("2026-11-27c gpu12", finished("fidelity_h100_2026-11-27c/gpu12.json", "001", D12)),
    ],
    "002 cifar-lenet, earlier order": [
        ("2026-11-27 first", finished("fidelity_h100_2026-11-27/gpu3_first.json", "002", "cifar-lenet")),
        ("2026-11-27 second", finished("fidelity_h100_2026-11-27/gpu3_second.json", "002", "cifar-lenet")),
        ("2026-11-27c gpu12 (cut off)", cut_off("fidelity_h100_2026-11-27c/gpu12.txt")),
        ("2026-11-27e gpu002", finished("fidelity_2026-11-27e/h100/gpu002.json", "002", "cifar-lenet")),
    ],
    "003 BERT-base step": [
        ("2026-11-27 first", finished("fidelity_h100_2026-11-27/gpu3_first.json", "003", BERT)),
        ("2026-11-27 second", finished("fidelity_h100_2026-11-27/gpu3_second.json", "003", BERT)),
    ],
    "004 mnist-cnn": [("2026-11-27 gpu004", finished("fidelity_h100_2026-11-27/gpu004.json", "004", "mnist-cnn"))],
}


def show(tag: str, name: str, rounds: Rounds) -> None:
    script = [s for s, _ in rounds]
    harness = [h for _, h in rounds]
    if len(rounds) < 2:
        print(f"| {tag} | {name} | {len(rounds)} | {script[0]:,.3f} | {harness[0]:,.3f} | | |")
        return
    s = summarise(harness, script)
    print(
        f"| {tag} | {name} | {len(rounds)} | {statistics.geometric_mean(script):,.3f} | "
        f"{statistics.geometric_mean(harness):,.3f} | {s.ratio:.3f} ({s.ci95[0]:.3f} .. {s.ci95[1]:.3f}) | "
        f"{s.verdict} |"
    )


def main() -> None:
    header = "| run | row | rounds | script | benchsite | ratio (95% interval) | verdict |\n"
    header += "|---|---|---:|---:|---:|---|---|"
    print("This session's runs\n\n" + header)
    for tag, name, rounds in THIS_SESSION:
        show(tag, name, rounds)
    tables = (("H200 GPU", H200_GPU), ("H200 host CPU", H200_CPU), ("H100 host CPU", H100_CPU), ("H100 GPU", H100_GPU))
    for title, table in tables:
        print(f"\n{title}: every run on today's loops, then all its rounds pooled\n\n" + header)
        for name, runs in table.items():
            for where, rounds in runs:
                show(where, name, rounds)
            show("**pooled**", name, [r for _, rounds in runs for r in rounds])


if __name__ == "__main__":
    main()
