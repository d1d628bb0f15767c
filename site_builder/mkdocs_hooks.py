"""MkDocs hooks: generate the leaderboard pages from results/ at build time (nothing generated is committed).

`mkdocs build`, `mkdocs serve` and `benchsite site build` all go through here. BENCHSITE_RESULTS points at
another results folder; BENCHSITE_STRICT=1 fails the build on a bad result file instead of leaving it out.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

log = logging.getLogger("mkdocs.plugins.benchsite")


def on_files(files: Files, config: Any) -> Files:
    from site_builder import aggregate
    from site_builder.load import load_results
    from site_builder.pages import Data, csv_files, registry

    root = Path(config["config_file_path"]).parent
    results = Path(os.environ.get("BENCHSITE_RESULTS", root / "results"))
    loaded = load_results(results, strict=os.environ.get("BENCHSITE_STRICT") == "1")
    for problem in loaded.problems:
        log.info("benchsite: left out %s", problem)
    frame = aggregate.measurements_frame(loaded.results)
    data = Data(frame=frame, speedups=aggregate.speedups(frame) if not frame.empty else frame, rejected=loaded.rejected)
    for page in registry(data):
        files.append(File.generated(config, page.path, content=page.render(data)))
    for path, csv in csv_files(data).items():
        files.append(File.generated(config, path, content=csv))
    import vl_convert

    # vl-convert's type stub marks the optional snippet as required; the default bundle sets window.vegaEmbed.
    bundle = vl_convert.javascript_bundle()  # type: ignore[call-arg]
    files.append(File.generated(config, "assets/vega-bundle.js", content=bundle))
    return files
