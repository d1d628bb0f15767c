"""Site.from_collector alone after the files are read: resident size before, its peak (VmHWM reset), after.

    python fc_peak.py RESULTS CACHE_FOLDER TREE

The throwaway script as run (frame_peak.log), reformatted to the repository's lint; what it does is unchanged."""

import sys
import time
from pathlib import Path

sys.path.insert(0, sys.argv[3] if len(sys.argv) > 3 else "/work/main")
from site_builder.cache import BuildCache
from site_builder.load import load_results
from site_builder.site import Site
from site_builder.tables import release_free_memory


def status(key):
    with open("/proc/self/status") as lines:
        for line in lines:
            if line.startswith(key):
                return int(line.split()[1]) / 2**20


if __name__ == "__main__":
    loaded = load_results(Path(sys.argv[1]), strict=True, cache=BuildCache(Path(sys.argv[2])))
    loaded.collector.table()
    release_free_memory()
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")
    print(f"read: rss {status('VmRSS:'):.3f}", flush=True)
    t = time.perf_counter()
    site = Site.from_collector(loaded.collector, loaded.rejected)
    dt = time.perf_counter() - t
    peak = status("VmHWM:")
    release_free_memory()
    print(f"from_collector {dt:.1f} s: peak {peak:.3f}, rss after {status('VmRSS:'):.3f}", flush=True)
