"""Long fuzzing run of the loader and the validation gate: nothing but a reported problem may come out.

    python tests/benchmarks/fuzz.py [--examples 10000] [--seed 0]

Three generators, each for --examples examples: arbitrary bytes and text (hypothesis), structured edits of a
real result file (hypothesis: up to four fields replaced by arbitrary JSON-like values), and byte flips of the
hostile corpus files. Prints a table: examples run, inputs refused, inputs accepted, failures (exceptions
other than a reported problem) and time. CI runs 150 examples of the first two and a few flips per file
(tests/test_gate.py); this is the long run. Not part of the test run.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from hypothesis import HealthCheck, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.test_gate import CORPUS, JSONISH, PATHS, apply_edits, gate  # noqa: E402


class Tally:
    def __init__(self) -> None:
        self.runs = self.refused = self.accepted = 0
        self.failures: list[str] = []

    def feed(self, text: str | bytes) -> None:
        self.runs += 1
        try:
            problems = gate(text)
            if any(p.severity == "error" for p in problems):
                self.refused += 1
            else:
                self.accepted += 1
        except Exception:
            self.failures.append(traceback.format_exc(limit=3))


def run_raw(n: int, tally: Tally, rng_seed: int) -> None:
    @seed(rng_seed)
    @settings(max_examples=n, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.binary(max_size=4000) | st.text(max_size=4000))
    def case(raw: str | bytes) -> None:
        tally.feed(raw)

    case()


def run_structured(n: int, tally: Tally, rng_seed: int) -> None:
    @seed(rng_seed)
    @settings(max_examples=n, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(st.tuples(st.sampled_from(PATHS), JSONISH), min_size=1, max_size=4))
    def case(edits: list) -> None:
        tally.feed(apply_edits(edits))

    case()


def run_flips(n: int, tally: Tally, rng_seed: int) -> None:
    rng = random.Random(rng_seed)
    files = [p.read_bytes() for p in sorted((CORPUS / "files").iterdir())]
    for i in range(n):
        raw = bytearray(files[i % len(files)])
        for _ in range(rng.randint(1, 8)):
            if raw:
                raw[rng.randrange(len(raw))] = rng.randrange(256)
        tally.feed(bytes(raw))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=10_000, help="examples per generator")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print("| generator | examples | refused | accepted | failures | seconds |")
    print("|---|---:|---:|---:|---:|---:|")
    total_failures = 0
    for name, run in (("raw bytes/text", run_raw), ("structured edits", run_structured), ("corpus flips", run_flips)):
        tally = Tally()
        start = time.perf_counter()
        run(args.examples, tally, args.seed)
        seconds = time.perf_counter() - start
        total_failures += len(tally.failures)
        print(f"| {name} | {tally.runs} | {tally.refused} | {tally.accepted} | {len(tally.failures)} | {seconds:.1f} |")
        for failure in tally.failures[:3]:
            print(failure, file=sys.stderr)
    sys.exit(1 if total_failures else 0)


if __name__ == "__main__":
    main()
