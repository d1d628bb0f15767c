import sys, os, gc, tracemalloc
from pathlib import Path
if __name__ == "__main__":
    tree, results = sys.argv[1:3]
    sys.path.insert(0, tree)
    from site_builder.load import load_results
    from site_builder.site import Site
    loaded = load_results(Path(results))
    site = Site.from_collector(loaded.collector, loaded.rejected)
    del loaded; gc.collect()
    tracemalloc.start(8)
    s1 = tracemalloc.take_snapshot()
    if hasattr(site, "standing_rows"):
        site.standing_rows; site._published; site._standing_by_machine
    else:
        site._table_rows; site._published
    gc.collect()
    s2 = tracemalloc.take_snapshot()
    stats = s2.compare_to(s1, "traceback")
    print(tree, "total", sum(s.size_diff for s in stats) / 2**20, "MiB")
    for s in stats[:6]:
        print(f"{s.size_diff/2**20:.2f} MiB", s.count_diff)
        for line in s.traceback.format()[-8:]:
            print("   ", line)
