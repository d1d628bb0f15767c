"""Item 1's lent-host tables as ../fidelity_h200_2026-11-29b/pool.py pools them, with this folder's runs added: the
H200 GPU's seed 003 (BERT-base training step, fifteen rounds) and seed 004 (ten rounds), and three rounds of the
H200 host CPU's seed 004 (cut off when the session's device time ran out). From the repository's root:

    python tests/benchmarks/records/fidelity_h200_2026-11-29c/pool.py

This folder's code is 0d502f9: since eeb2c93 (the earlier pool's last runs) only tests, records and docs changed, so
its runner and transcriptions are those the earlier runs measured.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4]))
from tests.benchmarks.fidelity_pool import cut_off, earlier_pool, finished

HERE = "fidelity_h200_2026-11-29c"
BERT = "transformer model=bert-base mode=train batch_size=8"
earlier = earlier_pool("fidelity_h200_2026-11-29b").earlier  # the tables 29b extends

earlier.H200_GPU["003 BERT-base step"].append(
    ("2026-11-29c G", finished(f"{HERE}/machine_g/gpu_003.json", "003", BERT))
)
earlier.H200_GPU["004 mnist-cnn"].append(
    ("2026-11-29c G", finished(f"{HERE}/machine_g/gpu_004.json", "004", "mnist-cnn"))
)
earlier.H200_CPU["004 mnist-cnn"].append(("2026-11-29c G (cut off)", cut_off(f"{HERE}/machine_g/cpu_004.txt")))

if __name__ == "__main__":
    earlier.main()
