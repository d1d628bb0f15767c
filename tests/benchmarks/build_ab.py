"""Two versions of the site builder on the same result files, cold builds interleaved: where does the time go?

    python tests/benchmarks/build_ab.py RESULTS BASELINE_TREE CHANGED_TREE [--rounds 2]

RESULTS is a folder of result files (`site_scale.py --keep` leaves one); each TREE is a checkout of this project
(`git worktree add /tmp/base <commit>`). Each round builds the site with each tree, in a fresh process (`mkdocs
build --strict` with no build cache, BENCHSITE_CACHE=off), the order swapped every round, so that a host that
speeds up or slows down during the run weighs on both alike. Both builds write their pages; the script checks that
the two sites are byte-identical (a speed-up that changes a page is not a speed-up) and prints each phase's median
wall time (the build's phase log, site_builder.mkdocs_hooks) for both trees side by side, with their ratio, then the
memory: the resident size at each phase's end and the build's peak (wait4's ru_maxrss of the build process, the
largest of it and its reading processes), medians over rounds, with their ratio. Not part of the test run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from tests.benchmarks.site_scale import run_measured  # noqa: E402  (wall time and peak memory of one process)
from tests.test_build_cache import _differences  # noqa: E402  (the cache test's byte-for-byte comparison)


def build(tree: Path, results: Path, site: Path, phases: Path) -> tuple[float, float]:
    env = {
        **os.environ,
        "PYTHONPATH": str(tree),
        "BENCHSITE_RESULTS": str(results),
        "BENCHSITE_STRICT": "1",
        "BENCHSITE_CACHE": "off",
        "BENCHSITE_BUILD_PHASES": str(phases),
        "NO_MKDOCS_2_WARNING": "1",
    }
    config = str(tree / "mkdocs.yml")
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f", config, "-d", str(site)]
    wall, peak_gib, _ = run_measured(command, env=env, cwd=tree)
    return wall, peak_gib


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", type=Path)
    parser.add_argument("baseline", type=Path)
    parser.add_argument("changed", type=Path)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    trees = {"baseline": args.baseline.resolve(), "changed": args.changed.resolve()}
    walls: dict[str, list[float]] = {name: [] for name in trees}
    peaks: dict[str, list[float]] = {name: [] for name in trees}
    phases: dict[str, dict[str, list[float]]] = {name: {} for name in trees}
    resident: dict[str, dict[str, list[float]]] = {name: {} for name in trees}
    with tempfile.TemporaryDirectory(prefix="benchsite-build-ab-") as work:
        for round_ in range(args.rounds):
            order = list(trees) if round_ % 2 == 0 else list(reversed(trees))
            for name in order:
                log = Path(work) / f"{name}-{round_}.jsonl"
                wall, peak = build(trees[name], args.results.resolve(), Path(work) / name, log)
                walls[name].append(wall)
                peaks[name].append(peak)
                for line in log.read_text().splitlines():
                    entry = json.loads(line)
                    phases[name].setdefault(entry["phase"], []).append(entry["s"])
                    resident[name].setdefault(entry["phase"], []).append(entry["rss_gib"] or float("nan"))
                print(f"round {round_ + 1}: {name} {wall:.1f} s, peak {peak:.2f} GiB", flush=True)
        changed_pages = _differences(Path(work) / "baseline", Path(work) / "changed")
    print()
    print("| phase | baseline s | changed s | changed / baseline |")
    print("|---|---:|---:|---:|")
    for phase, times in phases["baseline"].items():
        base, new = statistics.median(times), statistics.median(phases["changed"].get(phase, [float("nan")]))
        ratio = f"{new / base:.2f}" if base else "-"
        print(f"| {phase} | {base:.1f} | {new:.1f} | {ratio} |")
    base, new = statistics.median(walls["baseline"]), statistics.median(walls["changed"])
    print(f"| whole build (wall) | {base:.1f} | {new:.1f} | {new / base:.2f} |")
    print()
    print("| resident at the phase's end | baseline GiB | changed GiB | changed / baseline |")
    print("|---|---:|---:|---:|")
    for phase, sizes in resident["baseline"].items():
        base, new = statistics.median(sizes), statistics.median(resident["changed"].get(phase, [float("nan")]))
        print(f"| {phase} | {base:.2f} | {new:.2f} | {new / base:.2f} |")
    base, new = statistics.median(peaks["baseline"]), statistics.median(peaks["changed"])
    print(f"| peak of the build (ru_maxrss) | {base:.2f} | {new:.2f} | {new / base:.2f} |")
    print()
    if changed_pages:
        print(f"the two sites differ in {len(changed_pages)} files, e.g. {changed_pages[:5]}")
        sys.exit(1)
    print("the two sites are byte-identical")


if __name__ == "__main__":
    main()
