"""Time the seeds' index and pages over a corpus whose build cache is filled (the frame's intervals and the crossings
are computed, not taken from the memo, as in a cold build).

    python seeds_time.py TREE RESULTS CACHE
"""

import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, sys.argv[1])
from site_builder import pages
from site_builder.cache import BuildCache
from site_builder.load import load_results
from site_builder.site import Site


def main() -> None:
    t = time.perf_counter()
    loaded = load_results(Path(sys.argv[2]), cache=BuildCache(Path(sys.argv[3])))
    site = Site.from_collector(loaded.collector, loaded.rejected)
    print(f"{len(loaded.accepted)} files, site made in {time.perf_counter() - t:.1f} s", flush=True)
    t = time.perf_counter()
    _ = site.crossings
    print(f"crossings {time.perf_counter() - t:.1f} s", flush=True)
    t = time.perf_counter()
    text = pages.seeds_index(site)
    print(f"seeds_index {time.perf_counter() - t:.1f} s, {len(text)} chars", flush=True)
    t = time.perf_counter()
    for seed in pages._seeds():
        pages.seed_page(seed)(site)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"seed pages {time.perf_counter() - t:.1f} s; peak {peak:.2f} GiB", flush=True)


if __name__ == "__main__":
    main()
