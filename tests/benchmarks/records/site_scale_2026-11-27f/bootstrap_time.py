"""The older files' bootstrap (runner.fidelity._bootstrap_median) against the loop it replaced, on one twin of three
rounds a side: milliseconds per twin, the median of five batches of 50, and whether both give the same interval.

    python tests/benchmarks/records/site_scale_2026-11-27f/bootstrap_time.py
"""

import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(ROOT))

from runner import fidelity  # noqa: E402
from tests.test_fidelity import _bootstrap_median_loop  # noqa: E402  (the loop as first written)

rng = random.Random(3)
harness = [rng.lognormvariate(-3, 0.3) for _ in range(3)]
script = [rng.lognormvariate(-3, 0.3) for _ in range(3)]
assert fidelity._bootstrap_median(harness, script) == _bootstrap_median_loop(harness, script)
times = {}
for name, bootstrap in (("loop (ce54470)", _bootstrap_median_loop), ("NumPy (e8171e4)", fidelity._bootstrap_median)):
    batches = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(50):
            bootstrap(harness, script)
        batches.append((time.perf_counter() - start) / 50 * 1000)
    times[name] = statistics.median(batches)
    print(f"{name}: {times[name]:.3f} ms a twin (batches {', '.join(f'{b:.3f}' for b in batches)})")
print(f"NumPy / loop: {times['NumPy (e8171e4)'] / times['loop (ce54470)']:.3f}; the same interval")
