"""How often does a twin's interval call noise a harness effect? Both methods side by side, by simulation.

    python tests/benchmarks/twin_interval.py [--draws 1000] [--spread 0.05 0.1 0.2] [--rounds 2 3 5]

Each simulated twin draws its rounds for both sides from one log-normal distribution (a spread between processes
of `--spread`, as the 16-core GPU hosts show: 10 to 20%, up to 80% from fastest to slowest round), with benchsite's side
scaled by the true ratio: 1.0 (no harness effect: any harness-affected verdict is wrong) or 1.2 (a harness effect
of 20%: harness-affected is right). It prints the share of twins each method (runner.fidelity.summarise:
bootstrap-median, the files before schema 7; welch-log, the current one) calls harness-affected and faithful. A
95% interval should call a true ratio of 1.0 harness-affected in about 2.5% of twins (the upper tail), never much
more. Not part of the test run; seeded, so it prints the same table each time.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from runner import fidelity

METHODS = ("bootstrap-median", "welch-log")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--draws", type=int, default=1000, help="simulated twins per row")
    parser.add_argument("--spread", type=float, nargs="+", default=[0.05, 0.1, 0.2])
    parser.add_argument("--rounds", type=int, nargs="+", default=[2, 3, 5])
    args = parser.parse_args()
    print(f"| spread | rounds | true ratio | {' | '.join(f'{m}: affected, faithful' for m in METHODS)} |")
    print("|---:|---:|---:|" + "---:|" * len(METHODS))
    for spread in args.spread:
        for rounds in args.rounds:
            for true in (1.0, 1.2):
                rng = random.Random(f"{spread} {rounds} {true}")
                counts = {m: [0, 0] for m in METHODS}
                for _ in range(args.draws):
                    harness = [true * math.exp(rng.gauss(0, spread)) for _ in range(rounds)]
                    script = [math.exp(rng.gauss(0, spread)) for _ in range(rounds)]
                    for m in METHODS:
                        verdict = fidelity.summarise(harness, script, m).verdict  # type: ignore[arg-type]
                        counts[m][0] += verdict == "harness-affected"
                        counts[m][1] += verdict == "faithful"
                cells = " | ".join(f"{a / args.draws:.1%}, {f / args.draws:.1%}" for a, f in counts.values())
                print(f"| {spread:g} | {rounds} | {true:g} | {cells} |", flush=True)


if __name__ == "__main__":
    main()
