"""Which import starts which thread in a framework's fork server, and which of them outlive a fork?

    python tests/benchmarks/fork_threads.py [--framework torch --framework jax ...]

For each framework, a fresh interpreter imports what its fork server imports (runner.measure.executor._preload),
one module at a time, then the modules those list in PRELOAD, and prints the threads (by the name the kernel shows)
that each step added. Then it forks once, as runner.measure.forkserver.settle_threads() does, and prints the
threads still running after the fork: what Python 3.12 and later counts when it warns that a multi-threaded
process forked, and what the server reports as `threads_left` unless they are in FORK_AWARE_THREADS.
"""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def _threads() -> Counter[str]:
    from runner.measure.forkserver import other_threads

    return Counter(other_threads())


def probe(framework: str) -> dict[str, object]:
    """In this process: import the server's modules step by step and fork once (run in a fresh interpreter)."""
    from runner.measure import forkserver
    from runner.measure.executor import _preload

    steps = []
    before = _threads()
    loaded = []
    for name in _preload(framework):
        loaded.append(importlib.import_module(name))
        now = _threads()
        steps.append({"import": name, "added": dict(now - before)})
        before = now
    lazy = [name for module in loaded for name in getattr(module, "PRELOAD", ())]
    failed = forkserver.preload_lazy(loaded)
    now = _threads()
    steps.append({"import": "PRELOAD: " + ", ".join(lazy), "added": dict(now - before), "failed": failed})
    left = forkserver.settle_threads()
    return {
        "framework": framework,
        "python": sys.version.split()[0],
        "steps": steps,
        "before_fork": dict(now),
        "after_fork": dict(_threads()),
        "threads_left": left,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--framework", action="append", help="torch, jax, tensorflow (default: torch and jax)")
    parser.add_argument("--inside", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inside:
        print(json.dumps(probe(args.inside)))
        return 0
    for framework in args.framework or ["torch", "jax"]:
        proc = subprocess.run(
            [sys.executable, __file__, "--inside", framework], cwd=ROOT, capture_output=True, text=True, check=False
        )
        if proc.returncode != 0 or not proc.stdout.strip():
            print(f"{framework}: failed (rc {proc.returncode})\n{proc.stderr[-2000:]}")
            continue
        found = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"\n{framework} (Python {found['python']})")
        print(f"  {'import':60s} threads it added")
        for step in found["steps"]:
            added = ", ".join(f"{name} x{count}" for name, count in sorted(step["added"].items())) or "-"
            print(f"  {step['import'][:60]:60s} {added}")
            if step.get("failed"):
                print(f"  {'':60s} (failed to import: {', '.join(step['failed'])})")
        print(f"  before the fork: {found['before_fork']}")
        print(f"  after the fork:  {found['after_fork']}")
        print(f"  threads_left (not in FORK_AWARE_THREADS): {found['threads_left']}")
        if proc.stderr.strip():
            print("  stderr: " + proc.stderr.strip()[-600:].replace("\n", "\n          "))
    return 0


if __name__ == "__main__":
    sys.exit(main())
