"""Does a change leave the site's pages as they were? Every page rendered by two trees from the same result files.

    python tests/benchmarks/pages_ab.py RESULTS --baseline OLD_TREE [--tree NEW_TREE] [--keep DIR]

OLD_TREE is a checkout of the code to compare with (e.g. `git worktree add /tmp/old HEAD~1`); NEW_TREE defaults to
this repository. Each tree, in a fresh process of its own, reads RESULTS as a build does (no build cache, no derived-
figure memo), makes the Site and renders every page of the registry, machine pages included, with its raw HTML
blocks put back (site_builder.render.RAW: a page's tables live there, not in its Markdown); the pages are written to
DIR/old and DIR/new (a temporary folder unless --keep) and compared byte for byte. Prints the pages compared, those
that differ (the first few by name), and each tree's page-rendering time and peak resident size with their ratio.
Exit status 1 when a page differs. Not part of the test run.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def render(tree: Path, results: Path, out: Path) -> dict[str, float]:
    """In this process: every page of the site `tree` builds from `results`, written under `out`."""
    import resource
    import time

    sys.path.insert(0, str(tree))
    import runner
    from site_builder import pages
    from site_builder.load import load_results
    from site_builder.render import RAW
    from site_builder.site import Site

    for module in (runner, pages):
        if not module.__file__ or not Path(module.__file__).is_relative_to(tree):
            raise SystemExit(f"{module.__name__} came from {module.__file__}, not {tree}")
    loaded = load_results(results, strict=True)
    site = Site.from_collector(loaded.collector, loaded.rejected)
    del loaded
    out.mkdir(parents=True, exist_ok=True)
    start, count = time.perf_counter(), 0
    for page in pages.registry(site):
        (out / page.path.replace("/", "__")).write_text(RAW.restore(page.render(site)), encoding="utf-8")
        count += 1
    return {
        "pages": count,
        "s": time.perf_counter() - start,
        "peak_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2,  # KiB on Linux
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", type=Path, help="a folder of result files (e.g. one site_scale.py --work kept)")
    parser.add_argument("--baseline", type=Path, required=True, help="the tree to compare with")
    parser.add_argument("--tree", type=Path, default=ROOT, help="the tree under test (default: this repository)")
    parser.add_argument("--keep", type=Path, help="write the pages here (old/ and new/) and keep them")
    parser.add_argument("--render", type=Path, help=argparse.SUPPRESS)  # internal: render one tree into this folder
    args = parser.parse_args()
    if args.render is not None:
        print(json.dumps(render(args.tree.resolve(), args.results, args.render)))
        return
    with tempfile.TemporaryDirectory(prefix="benchsite-pages-ab-") as scratch:
        where = args.keep or Path(scratch)
        figures = {}
        for name, tree in (("old", args.baseline), ("new", args.tree)):
            out = where / name
            command = [sys.executable, __file__, str(args.results), "--baseline", str(args.baseline)]
            done = subprocess.run(
                [*command, "--tree", str(tree), "--render", str(out)],
                capture_output=True,
                text=True,
                check=False,
                cwd=tree,
                env={**os.environ, "PYTHONPATH": str(tree), "NO_MKDOCS_2_WARNING": "1"},
            )
            if done.returncode != 0:
                sys.exit(f"{name} tree ({tree}) failed:\n{done.stderr[-4000:]}")
            figures[name] = json.loads(done.stdout.strip().splitlines()[-1])
        names = sorted({p.name for p in (where / "old").iterdir()} | {p.name for p in (where / "new").iterdir()})
        missing = [n for n in names if not ((where / "old" / n).exists() and (where / "new" / n).exists())]
        differ = [
            n
            for n in names
            if n not in missing and not filecmp.cmp(where / "old" / n, where / "new" / n, shallow=False)
        ]
        old, new = figures["old"], figures["new"]
        print("| tree | pages | rendering s | peak GiB |")
        print("|---|---:|---:|---:|")
        print(f"| old ({args.baseline}) | {old['pages']} | {old['s']:.1f} | {old['peak_gib']:.3f} |")
        print(f"| new ({args.tree}) | {new['pages']} | {new['s']:.1f} | {new['peak_gib']:.3f} |")
        print(f"| new / old | | {new['s'] / old['s']:.3f} | {new['peak_gib'] / old['peak_gib']:.3f} |")
        print(
            f"\n{len(names)} pages: {len(names) - len(differ) - len(missing)} identical, {len(differ)} differ, "
            f"{len(missing)} in one tree only"
        )
        for n in (differ + missing)[:20]:
            print(f"  differs: {n}" if n in differ else f"  in one tree only: {n}")
        sys.exit(1 if differ or missing else 0)


if __name__ == "__main__":
    main()
