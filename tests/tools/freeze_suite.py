"""Freeze the workload hashes of a suite version that is about to be left behind.

    python tests/tools/freeze_suite.py REVISION

checks REVISION out in a temporary git worktree, lists every case of every profile and variant with that code
(its hash, workload, point, unit, examples per unit, parameters and FLOPs) and adds them to
runner/workloads/past_suites.json under that revision's SUITE_VERSION. Run it on the last commit of a suite
version when SUITE_VERSION is bumped, and on every commit that changed a hash within a version whose files were
published: the gate then still checks the figures of those files.
Parameter counts the old code left to the framework (the transformers) are filled in by today's analytic count.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from runner.workloads import known  # noqa: E402
from runner.workloads.suite import transformer_params  # noqa: E402

LIST_CASES = r"""
import json, runner
from runner.workloads.suite import WORKLOADS
rows = []
for w in WORKLOADS:
    for profile in ("tiny", "quick", "standard"):
        for case in w.cases(profile):
            for variant in getattr(w, "variants", ("as-written", "tuned")):
                rows.append({
                    "hash": case.workload_hash(variant), "workload": case.workload, "variant": variant,
                    "point": case.point, "unit": case.unit, "samples_per_unit": case.samples_per_unit,
                    "params": case.params, "flops_per_unit": case.flops_per_unit,
                    "forward_flops": getattr(case, "forward_flops", None), "model": case.config.get("model"),
                })
print(json.dumps({"suite": runner.SUITE_VERSION, "rows": rows}))
"""


def main(revision: str) -> None:
    with tempfile.TemporaryDirectory(prefix="benchsite-freeze-") as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), revision], check=True)
        try:
            out = subprocess.run(
                [sys.executable, "-c", LIST_CASES],
                cwd=tree,
                env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
                check=True,
                capture_output=True,
                text=True,
            ).stdout
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=True)
    listing = json.loads(out)
    table = {}
    for row in listing["rows"]:
        model = row.pop("model")
        digest = row.pop("hash")
        if row["params"] is None and row["workload"] == "transformer" and isinstance(model, dict):
            row["params"] = transformer_params(model)
        table[digest] = known.Known(**row)
    past = json.loads(known.PAST_SUITES.read_text()) if known.PAST_SUITES.exists() else {"suites": {}}
    # A suite version's hashes can change before its files are published (a loop fixed within the version):
    # every revision frozen adds its hashes to the version's table.
    rows = past["suites"].setdefault(str(listing["suite"]), {})
    rows.update(known.dump(table))
    past["suites"][str(listing["suite"])] = dict(sorted(rows.items()))
    past["about"] = (
        "Workload hashes of earlier suite versions, written by tests/tools/freeze_suite.py; "
        "see runner/workloads/known.py."
    )
    known.PAST_SUITES.write_text(json.dumps(past, indent=1, sort_keys=True) + "\n")
    print(f"suite {listing['suite']}: {len(table)} hashes from {revision} -> {known.PAST_SUITES.relative_to(ROOT)}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
