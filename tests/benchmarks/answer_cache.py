"""What the end of a run's answer costs (site_builder.answer.answer: the standing and the verdicts, which `benchsite
run` prints at its end and `benchsite compare` prints), reading the published files with the site's build cache and
without it.

    python tests/benchmarks/answer_cache.py [--results results] [--file F] [--trials 3]

Each trial times, in this process and one after another, the answer of `--file` (default: the newest file under
`--results`) against `--results` three ways: the baseline, every file parsed (BENCHSITE_CACHE=off); a cold cache (an
empty cache folder: every file parsed, and the cache written, as on a fresh clone's first run); a warm one (the
folder the cold reading wrote: nothing parsed). It prints each way's median seconds and its ratio to the baseline,
and checks that the three give the same standing. Not part of the test run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, default=ROOT / "results")
    parser.add_argument("--file", type=Path, help="the run whose answer is read (default: the newest under --results)")
    parser.add_argument("--trials", type=int, default=3)
    args = parser.parse_args()

    from runner.results.storage import iter_result_paths, load
    from site_builder.answer import answer
    from site_builder.cache import CACHE_ENV

    paths = iter_result_paths([args.results])
    path = args.file or max(paths, key=lambda p: p.name)
    result, problems = load(path)
    if result is None:
        raise SystemExit(f"{path}: {problems[0] if problems else 'unreadable'}")
    times: dict[str, list[float]] = {"every file parsed (cache off)": [], "cold cache": [], "warm cache": []}
    said: set[tuple[str, ...]] = set()
    for _ in range(args.trials):
        with tempfile.TemporaryDirectory() as folder:
            for way, setting in zip(times, ("off", folder, folder), strict=True):
                os.environ[CACHE_ENV] = setting
                start = time.perf_counter()
                found = answer(result, path, args.results)
                times[way].append(time.perf_counter() - start)
                said.add(tuple(place.sentence() for place in found.standings))
    os.environ.pop(CACHE_ENV, None)
    base = statistics.median(times["every file parsed (cache off)"])
    print(f"the answer of {path.name} against {len(paths)} files in {args.results}, {args.trials} trials")
    print("| reading | median s | every trial s | / baseline |")
    print("|---|---:|---|---:|")
    for way, seconds in times.items():
        median = statistics.median(seconds)
        print(f"| {way} | {median:.2f} | {', '.join(f'{s:.2f}' for s in seconds)} | {median / base:.2f} |")
    if len(said) != 1:
        raise SystemExit(f"the three readings gave {len(said)} different standings")
    print("\nthe same standing each way")


if __name__ == "__main__":
    main()
