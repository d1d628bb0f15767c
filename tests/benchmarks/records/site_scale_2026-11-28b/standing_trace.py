"""What making every machine page's standing allocates and keeps (tracemalloc): python standing_trace.py TREE RESULTS"""

import gc
import sys
import tracemalloc
from pathlib import Path

if __name__ == "__main__":
    tree, results = sys.argv[1:3]
    sys.path.insert(0, tree)
    from site_builder.load import load_results
    from site_builder.site import Site

    loaded = load_results(Path(results))
    site = Site.from_collector(loaded.collector, loaded.rejected)
    del loaded
    gc.collect()
    tracemalloc.start(8)
    before = tracemalloc.take_snapshot()
    names = ("standing_rows", "_published", "_standing_by_machine")
    for name in names if hasattr(site, "standing_rows") else ("_table_rows", "_published"):
        getattr(site, name)
    gc.collect()
    stats = tracemalloc.take_snapshot().compare_to(before, "traceback")
    print(tree, "total", sum(s.size_diff for s in stats) / 2**20, "MiB")
