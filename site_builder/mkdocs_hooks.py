"""MkDocs hooks: generate the leaderboard pages from results/ at build time (nothing generated is committed).

`mkdocs build`, `mkdocs serve` and `benchsite site build` all go through here. BENCHSITE_RESULTS points at
another results folder; BENCHSITE_STRICT=1 fails the build on a bad result file instead of leaving it out;
BENCHSITE_CACHE names the build cache's folder (site_builder.cache; default .benchsite-cache/ beside mkdocs.yml),
`off` reads every file with no cache and computes every derived figure.

on_config loads the results (the navigation depends on them: a Frameworks page exists only once a second
framework has results, one leaderboard per measured workload); on_files renders the pages, the CSV
downloads, the PNG and SVG export of every chart, the JSON Schema and the site's own copy of Vega. While a
build runs, the intervals, exports and machine pages it computed before come from site_builder.memo (inside the
build cache), saved again on_post_build, which also adds each machine's one entry to the search index (machine
pages themselves are left out of the theme's indexing).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

from site_builder.tables import release_free_memory

log = logging.getLogger("mkdocs.plugins.benchsite")
# A file to append one JSON line per phase of the build to (its wall seconds, the resident memory at its end and the
# process's peak so far):
# tests/benchmarks/site_scale.py sets it to show where a build's time and memory go.
PHASES_ENV = "BENCHSITE_BUILD_PHASES"

# The hand-written pages, in navigation order, around the generated ones.
GUIDE = [
    {"Contribute": "contributing.md"},
    {"FAQ": "faq.md"},
    {
        "Reference": [
            {
                "Methodology": [
                    {"Overview": "methodology/index.md"},
                    {"Workloads and loops": "methodology/suite.md"},
                    {"How a point is timed": "methodology/timing.md"},
                    {"Uncertainty": "methodology/uncertainty.md"},
                    {"Fidelity": "methodology/fidelity.md"},
                    {"Energy": "methodology/energy.md"},
                    {"What a run costs": "methodology/cost.md"},
                ]
            },
            {"The suite": "suite.md"},
            {"Running benchsite": "running.md"},
            {"Your own model": "your-model.md"},
            {"Command line": "cli.md"},
            {"Result format": "results-format.md"},
            {"Result schema": "schema.md"},
        ]
    },
    {"About": "about.md"},
]

_state: dict[str, Any] = {}
# Pages rendered between two returns of freed memory to the system (release_free_memory) while the pages are made,
# and a page that takes longer than this many seconds returns what it freed at once.
RELEASE_EVERY_PAGES = 256
RELEASE_AFTER_S = 1.0


def _navigation(pages: list[Any]) -> list[Any]:
    nav: list[Any] = []
    sections: dict[str, list[Any]] = {}
    for page in pages:
        if not page.in_nav or page.section == "Reference":
            continue
        if page.section:
            if page.section not in sections:
                sections[page.section] = []
                nav.append({page.section: sections[page.section]})
            sections[page.section].append({page.title: page.path})
        else:
            nav.append({page.title: page.path})
    return nav + GUIDE


def on_config(config: Any) -> Any:
    from site_builder import uncertainty
    from site_builder.cache import CACHE_ENV, BuildCache, folder_for
    from site_builder.load import load_results
    from site_builder.memo import Memo
    from site_builder.pages import MACHINE_PAGES, RAW, registry
    from site_builder.site import Site

    _phase(None)
    root = Path(config["config_file_path"]).parent
    results = Path(os.environ.get("BENCHSITE_RESULTS", root / "results"))
    cache = None if os.environ.get(CACHE_ENV) == "off" else BuildCache(folder_for(root))
    memo = None if cache is None else Memo(cache.root)
    uncertainty.MEMO = memo
    loaded = load_results(results, strict=os.environ.get("BENCHSITE_STRICT") == "1", cache=cache)
    del cache  # what it read is merged into the collector, which holds it from here
    _phase("read the result files")
    if memo is not None:
        log.info("benchsite: %d result files from the build cache", loaded.cache_hits)
    for problem in loaded.problems:
        log.info("benchsite: left out %s", problem)
    RAW.clear()  # `mkdocs serve` rebuilds in the same process
    MACHINE_PAGES.update(kept=0, rendered=0)
    site = Site.from_collector(loaded.collector, loaded.rejected, release=True)
    site.memo, site.own = memo, loaded.own
    pages = registry(site)
    _state.update(site=site, pages=pages, memo=memo)
    config["nav"] = _navigation(pages)
    _phase("frame, figures and intervals")
    return config


def _phase(name: str | None) -> None:
    """End a phase of the build (None starts the clock), its freed memory given back (`release_free_memory`): one
    line in the file PHASES_ENV names, nothing without."""
    if name is not None:
        release_free_memory()
    now = time.perf_counter()
    since = _state.get("clock", now)
    _state["clock"] = now
    path = os.environ.get(PHASES_ENV)
    if name is None or not path:
        return
    try:
        with open("/proc/self/statm") as statm:
            rss_gib: float | None = int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1024**3
    except OSError:  # not Linux
        rss_gib = None
    import pyarrow as pa

    arrow_gib = pa.total_allocated_bytes() / 1024**3  # of the resident memory, what Arrow's pool holds
    try:
        import resource  # not on Windows

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
        peak_gib: float | None = round(peak / (1024**3 if sys.platform == "darwin" else 1024**2), 4)  # so far
    except ImportError:
        peak_gib = None
    entry = {
        "phase": name,
        "s": round(now - since, 3),
        "rss_gib": rss_gib,
        "arrow_gib": round(arrow_gib, 4),
        "peak_gib": peak_gib,
    }
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(entry) + "\n")


def on_files(files: Files, config: Any) -> Files:
    import vl_convert

    from site_builder.memo import TEXT_KINDS, spec_key
    from site_builder.pages import MACHINE_PAGES, csv_files
    from site_builder.reference import schema_json

    site, pages = _state["site"], _state["pages"]
    for i, page in enumerate(pages, 1):
        started = time.perf_counter()
        files.append(File.generated(config, page.path, content=page.render(site)))
        # what rendering the pages so far freed, before the next ones need more: after every page that took long
        # (the summaries over every machine; in a 100,000-file build the resident size fell by 3.27 GB when the
        # 256th page gave back what the pages before had freed), and every RELEASE_EVERY_PAGES pages
        if i % RELEASE_EVERY_PAGES == 0 or time.perf_counter() - started > RELEASE_AFTER_S:
            release_free_memory()
    _phase("pages' Markdown")
    if _state["memo"] is not None:
        log.info("benchsite: machine pages' own part: %(kept)d from the memo, %(rendered)d rendered", MACHINE_PAGES)
    # the open data is written to files (too large to hold at 100,000 results); mkdocs copies them in
    written = _state["written"] = tempfile.TemporaryDirectory(prefix="benchsite-data-")
    for path, csv in csv_files(site, Path(written.name)).items():
        if isinstance(csv, Path):
            files.append(File.generated(config, path, abs_src_path=str(csv)))
        else:
            files.append(File.generated(config, path, content=csv))
    _phase("open data and CSV downloads")
    memo = _state["memo"]

    makers: dict[str, Callable[[Any], str | bytes]] = {
        "svg": vl_convert.vegalite_to_svg,
        "png": lambda spec: vl_convert.vegalite_to_png(spec, scale=2),
        # vl-convert's type stub marks the optional snippet as required; the default bundle sets window.vegaEmbed.
        "bundle": lambda _: vl_convert.javascript_bundle(),  # type: ignore[call-arg]
    }

    def kept(kind: str, spec: Any) -> Any:
        """An export: the one an earlier build made of this very spec (site_builder.memo), else made now."""
        if memo is None:
            return makers[kind](spec)
        key = spec_key(kind, spec)
        found = memo.blob(kind, key)
        if found is not None:
            return found.decode() if kind in TEXT_KINDS else found
        value = makers[kind](spec)
        memo.put_blob(kind, key, value.encode() if isinstance(value, str) else value)
        return value

    for name, spec in site.exports.items():
        files.append(File.generated(config, f"charts/{name}.svg", content=kept("svg", spec)))
        files.append(File.generated(config, f"charts/{name}.png", content=kept("png", spec)))
    files.append(File.generated(config, "schema.json", content=schema_json()))
    bundle = kept("bundle", None)
    files.append(File.generated(config, "assets/vega-bundle.js", content=bundle))
    _phase("chart exports")
    return files


@event_priority(-50)  # after the search plugin writes its index (0), before the offline plugin inlines it (-100)
def on_post_build(config: Any) -> None:
    from site_builder import uncertainty
    from site_builder.pages import machine_search_entry

    _phase("MkDocs: every page rendered and written")
    memo = _state.get("memo")
    uncertainty.MEMO = None
    _drop_written()
    if memo is not None:
        log.info("benchsite: derived figures %d kept, %d computed", memo.hits, memo.misses)
        try:
            memo.save()
        except OSError as exc:  # the site is built; only the next build's head start is lost
            log.warning("benchsite: derived figures not kept for the next build (%s)", exc)
    _phase("derived figures saved")
    index = Path(config["site_dir"]) / "search" / "search_index.json"
    if index.exists():  # machine pages are left out of the theme's indexing: one short entry each instead
        site = _state["site"]
        data = json.loads(index.read_text(encoding="utf-8"))
        data["docs"] += [machine_search_entry(mid, s) for mid, s in sorted(site.machines.items())]
        index.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
    _phase("search index")


def _drop_written() -> None:
    """Remove the open-data files written for this build (copied into the site by now)."""
    written = _state.pop("written", None)
    if written is not None:
        written.cleanup()


def on_build_error(error: Exception) -> None:
    from site_builder import uncertainty

    uncertainty.MEMO = None  # nothing saved from a failed build
    _drop_written()


# A page's raw HTML blocks (site_builder.render.RAW) wait on disk until MkDocs builds that page, and its HTML is let go
# once the page is written. MkDocs renders every page's Markdown before it builds the first, and kept each page's HTML
# to the end of the build (50 MB at 2,000 result files, most of it machine pages' tables). With the blocks on disk,
# every phase from the pages' Markdown on ends about 0.2 GiB lower at 10,000 files (tests/benchmarks/site_scale.py,
# figures in tests/benchmarks/RESULTS.md).


@event_priority(100)  # before the search plugin indexes the page (0) and the theme renders it
def on_page_context(context: Any, page: Any, config: Any, nav: Any) -> Any:
    from site_builder.pages import RAW

    page.content = RAW.restore(page.content or "")
    return context


def on_post_page(output: str, page: Any, config: Any) -> str:
    page.content = None  # written (the anchors MkDocs checks at the end are kept apart from it)
    return output
