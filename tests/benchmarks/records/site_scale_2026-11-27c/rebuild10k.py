"""Cold build filling a fresh cache, then one file added, with TREE's site builder, on the kept 10,000-file corpus.

    python rebuild10k.py TREE KEPT_WORK_FOLDER OUT

KEPT_WORK_FOLDER is what `site_scale.py --keep` left (its results/ hold every file, the held-back one included):
the same file as site_scale holds back (the last by name) is moved out, a cold build fills a fresh cache, the file
goes back, and the build runs again with the cache. The code as run, reformatted only.
"""

import os
import shutil
import sys
from pathlib import Path

tree, work, out = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
sys.path.insert(0, str(tree))
from site_builder.mkdocs_hooks import PHASES_ENV  # noqa: E402
from tests.benchmarks.site_scale import print_phases, run_measured  # noqa: E402

results = work / "results"
extra = sorted(results.rglob("*.yaml"), key=lambda p: p.name)[-1]
held = out / "held.yaml"
out.mkdir(parents=True, exist_ok=True)
shutil.move(extra, held)
print("files", sum(1 for _ in results.rglob("*.yaml")), "held back", extra, flush=True)
site, cache = out / "site", out / "cache"
env = {
    **os.environ,
    "PYTHONPATH": str(tree),
    "BENCHSITE_RESULTS": str(results),
    "BENCHSITE_STRICT": "1",
    "NO_MKDOCS_2_WARNING": "1",
}
build = [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f", str(tree / "mkdocs.yml"), "-d", str(site)]
fill_log, inc_log = out / "phases-fill.jsonl", out / "phases-added.jsonl"
fill_env = {**env, "BENCHSITE_CACHE": str(cache), PHASES_ENV: str(fill_log)}
fill_s, fill_gib, _ = run_measured(build, env=fill_env, cwd=tree)
print(f"cold build filling the cache {fill_s:.1f} s, peak {fill_gib:.2f} GiB", flush=True)
shutil.move(held, extra)
inc_env = {**env, "BENCHSITE_CACHE": str(cache), PHASES_ENV: str(inc_log)}
inc_s, inc_gib, _ = run_measured(build, env=inc_env, cwd=tree)
print(f"one file added {inc_s:.1f} s, peak {inc_gib:.2f} GiB; added/cold {inc_s / fill_s:.3f}", flush=True)
print_phases(10000, fill_log, inc_log)
