"""Every row of item 1's lent hosts measured on today's loops, this folder's runs among them, run by run and pooled
(ms per unit), by runner.fidelity.summarise (the statistic of a result file's `fidelity` block), with
tests/benchmarks/fidelity_pool.py. From the repository's root:

    python tests/benchmarks/records/fidelity_h200_2026-11-29/pool.py

Today's loops: no as-written loop or transcription changed from 0dc8746 (2026-11-26, sixth session) to this
folder's 733d6d6 but seed 002's step order (53af967, 2026-11-28, tenth session). So a row's rounds pool from
0dc8746 on, seed 002's from 53af967 on; the H100's seed 002 rows are all the earlier order (no H100 machine was lent
after the fix), and pool with each other only. Every run is `fidelity.py --profile standard --seconds 2` on a lent
H200 or H100 machine (one GPU, 16-core Intel Xeon host, torch 2.11), nothing else running; a finished row's rounds
come from its --json at full precision, a row cut off before it finished from its printed rounds (to 0.01 ms).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4]))
from tests.benchmarks.fidelity_pool import Rounds, cut_off, finished, table

D2, D8, D12 = ("depth-sweep depth=2", "depth-sweep depth=8", "depth-sweep depth=12")
BERT = "transformer model=bert-base mode=train batch_size=8"
HERE = "fidelity_h200_2026-11-29"

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

# The host's 16-core CPU, the rows this folder measured (seed 004 one round: the machine was given back).
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
    "004 mnist-cnn": [("2026-11-29 C (cut off)", cut_off(f"{HERE}/machine_c/cpu_004.txt"))],
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


def main() -> None:
    tables = (("H200 GPU", H200_GPU), ("H200 host CPU", H200_CPU), ("H100 host CPU", H100_CPU), ("H100 GPU", H100_GPU))
    for title, runs_by_row in tables:
        table(title, runs_by_row)


if __name__ == "__main__":
    main()
