"""Read a folder of result files into an empty build cache and time it (the build's first phase alone).

python readonly.py RESULTS WORKERS [TREE]
"""

import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, sys.argv[3] if len(sys.argv) > 3 else str(Path(__file__).resolve().parents[4]))
from site_builder.cache import BuildCache
from site_builder.load import load_results


def main() -> None:
    root, workers = Path(sys.argv[1]), int(sys.argv[2])
    with tempfile.TemporaryDirectory() as folder:
        t = time.perf_counter()
        loaded = load_results(root, workers=workers, cache=BuildCache(Path(folder)))
        s = time.perf_counter() - t
    n = len(loaded.accepted)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    rows = loaded.collector.rows
    print(f"{root} workers={workers} files={n} {s:.1f} s {1000 * s / n:.1f} ms/file rows={rows} peak={peak:.2f} GiB")


if __name__ == "__main__":
    main()
