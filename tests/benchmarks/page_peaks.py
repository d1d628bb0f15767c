"""Which page of the site sets the build's peak memory? Each page rendered alone, its own peak measured.

    python tests/benchmarks/page_peaks.py RESULTS [--cache DIR] [--machine-pages 20] [--open-data] [--exports]
        [--only PAGE ...] [--tree CHECKOUT]

Reads RESULTS as a build does (with the build cache in DIR where given: a cache a cold build filled makes this quick,
and the rows are the same), makes the Site (the frame, its figures and intervals, computed as in a cold build: no
derived-figure memo), then renders every page of the registry in the build's order, the machine pages only up to
--machine-pages of them. Before each page the memory freed so far is given back to the system (release_free_memory:
else a page's allocations can be served from what an earlier one freed, and its own peak hides) and the process's
peak resident size is reset (Linux: `/proc/self/clear_refs`), so each row gives the resident size before the page,
the peak while it rendered and the resident size after it. With
--open-data the open data's files follow (written to a temporary folder, as the build writes them), with --exports
the chart exports. A build's peak is the largest of these peaks (the pages' Markdown and the files are made in this
order there, with MkDocs' own work after them). Not part of the test run.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

GIB = 1024**3


def _status(field: str) -> float:
    """A field of /proc/self/status (VmRSS, VmHWM) in GiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024 / GIB
    raise RuntimeError(f"no {field} in /proc/self/status")


def _reset_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")  # VmHWM back to the resident size now


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", type=Path)
    parser.add_argument("--cache", type=Path, help="a build cache (site_builder.cache) to read the files through")
    parser.add_argument("--machine-pages", type=int, default=20, help="machine pages to render (default 20)")
    parser.add_argument("--open-data", action="store_true", help="then write the open data's files")
    parser.add_argument("--exports", action="store_true", help="then make the chart exports (SVG and PNG)")
    parser.add_argument(
        "--only", nargs="+", metavar="PAGE", help="render only these pages (paths as the registry names them)"
    )
    parser.add_argument("--tree", type=Path, help="the code to measure (another checkout; default this one)")
    args = parser.parse_args()
    if args.tree is not None:
        sys.path.insert(0, str(args.tree.resolve()))

    from site_builder import pages
    from site_builder.cache import BuildCache
    from site_builder.load import load_results
    from site_builder.site import Site
    from site_builder.tables import release_free_memory

    start = time.perf_counter()
    loaded = load_results(args.results, strict=True, cache=BuildCache(args.cache) if args.cache else None)
    print(
        f"{len(loaded.accepted):,} files read in {time.perf_counter() - start:.1f} s ({loaded.cache_hits:,} from the "
        f"cache), code {Path(pages.__file__ or '').parents[1]}",
        flush=True,
    )
    start = time.perf_counter()
    site = Site.from_collector(loaded.collector, loaded.rejected)
    del loaded
    print(
        f"site made in {time.perf_counter() - start:.1f} s; resident {_status('VmRSS'):.2f} GiB, peak so far "
        f"{_status('VmHWM'):.2f} GiB",
        flush=True,
    )

    print("\n| page | s | resident before GiB | peak while made GiB | above before GiB | resident after GiB |")
    print("|---|---:|---:|---:|---:|---:|")
    worst = ("", 0.0)

    def row(name: str, make: object) -> None:
        nonlocal worst
        release_free_memory()  # what earlier work freed is given back: the page's peak is above live memory only
        before = _status("VmRSS")
        _reset_peak()
        t = time.perf_counter()
        make()  # type: ignore[operator]
        took = time.perf_counter() - t
        peak, after = _status("VmHWM"), _status("VmRSS")
        if peak > worst[1]:
            worst = (name, peak)
        print(f"| {name} | {took:.1f} | {before:.2f} | {peak:.2f} | {peak - before:+.2f} | {after:.2f} |", flush=True)

    machine_pages = 0
    for page in pages.registry(site):
        if args.only and page.path not in args.only:
            continue
        if page.path.startswith("machines/") and page.path[len("machines/") : -len(".md")] in site.machines:
            machine_pages += 1
            if machine_pages > args.machine_pages:
                continue
        row(page.path, lambda page=page: page.render(site))
    if args.open_data:
        with tempfile.TemporaryDirectory(prefix="benchsite-peaks-") as folder:
            row("open data and CSV downloads", lambda: pages.csv_files(site, Path(folder)))
    if args.exports:
        import vl_convert

        def exports() -> None:
            for spec in site.exports.values():
                vl_convert.vegalite_to_svg(spec)
                vl_convert.vegalite_to_png(spec, scale=2)

        row("chart exports", exports)
    print(f"\nthe largest peak: {worst[1]:.2f} GiB, in {worst[0]}")


if __name__ == "__main__":
    main()
