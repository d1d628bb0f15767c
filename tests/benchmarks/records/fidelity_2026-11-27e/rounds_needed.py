"""The fewest rounds a side for a faithful verdict at a row's spread (the last column of the fidelity tables).

    python rounds_needed.py ROWS.json ...

For each row of fidelity.py's --json: the pooled standard deviation of both sides' logarithms, and the fewest rounds
n a side for which Welch's 95% interval (Student's t at 2(n - 1) degrees of freedom) would lie inside 0.95 .. 1.05
if the true ratio were exactly 1 and both sides spread as this row's rounds did.
"""

import json
import math
import statistics
import sys

from scipy.stats import t


def needed(harness: list[float], script: list[float]) -> tuple[int, float]:
    logs_h = [math.log(x) for x in harness]
    logs_s = [math.log(x) for x in script]
    pooled = (statistics.variance(logs_h) * (len(logs_h) - 1) + statistics.variance(logs_s) * (len(logs_s) - 1)) / (
        len(logs_h) + len(logs_s) - 2
    )
    sd = math.sqrt(pooled)
    n = 2
    while t.ppf(0.975, 2 * (n - 1)) * sd * math.sqrt(2 / n) > math.log(1.05):
        n += 1
    return n, sd


if __name__ == "__main__":
    for path in sys.argv[1:]:
        with open(path) as f:
            for row in json.load(f):
                n, sd = needed(row["benchsite_rounds"], row["transcription_rounds"])
                rounds = len(row["benchsite_rounds"])
                print(f"{path} {row['measurement']} {row['device']}: {rounds} rounds, sd {sd:.3f}, {n} needed")
