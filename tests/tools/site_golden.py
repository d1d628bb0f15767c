"""What the site builder generates from a results folder, one SHA-256 per file: the golden record that tells a
change of the site's output from a change of its code's shape.

    python tests/tools/site_golden.py                 # print the record for results/
    python tests/tools/site_golden.py --write         # rewrite tests/data/site_golden.json from results/
    python tests/tools/site_golden.py --results DIR   # print the record for another folder (JSON)
    python tests/tools/site_golden.py --dump DIR      # and write every compared text under DIR, to diff two builds

It runs the site's own MkDocs hooks (site_builder/mkdocs_hooks.py) on the project's mkdocs.yml, as `mkdocs build`
does, and hashes what they hand MkDocs: each generated page's Markdown with its raw HTML blocks put back, each CSV,
the open data's Parquet file by its rows, and each chart by its Vega-Lite spec. Left out, because they are not the
builder's figures: the hand-written pages (docs/), the theme's rendering of every page (its navigation lists the
hand-written pages), the result format's reference (schema.md, schema.json: they follow runner.results.schema),
Vega's own bundle, and the PNG and SVG exports (vl-convert's drawing of the specs that are compared).

tests/test_site_build.py builds the committed files the record names and compares. Rewrite the record (--write) only
in a change that means to change what the site shows, and say so in its commit.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "data" / "site_golden.json"
# generated files that are not the site builder's figures (see the module docstring)
NOT_COMPARED = ("schema.md", "schema.json", "assets/vega-bundle.js")


def _digest(data: bytes | str) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def _parquet_rows(path: str) -> str:
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    return json.dumps({"schema": str(table.schema.remove_metadata()), "rows": table.to_pylist()}, default=str)


def generated(results: Path, dump: Path | None = None) -> dict[str, str]:
    """path in the site -> SHA-256 of what the site builder generates there from `results` (each text hashed also
    written under `dump`, to diff one build against another)."""
    os.environ.update(BENCHSITE_RESULTS=str(results), BENCHSITE_CACHE="off", BENCHSITE_STRICT="1")
    os.environ.pop("BENCHSITE_SITE_URL", None)
    sys.path.insert(0, str(ROOT))
    from mkdocs.config import load_config
    from mkdocs.structure.files import Files

    from site_builder.pages import RAW

    with tempfile.TemporaryDirectory() as site_dir:
        config = load_config(str(ROOT / "mkdocs.yml"), site_dir=site_dir)
        hooks = config["hooks"]["site_builder/mkdocs_hooks.py"]  # the module as MkDocs loaded it
        config = config.plugins.on_config(config)  # every plugin's, the site's hooks among them, as a build runs
        files = config.plugins.on_files(Files([]), config=config)
        texts: dict[str, bytes | str] = {}
        for file in files:
            path = file.src_uri
            if path in NOT_COMPARED or path.startswith("charts/"):
                continue
            if path.endswith(".md"):
                texts[path] = RAW.restore(file.content_string)
            elif path.endswith(".parquet"):
                texts[path] = _parquet_rows(file.abs_src_path)
            else:
                texts[path] = file.content_bytes
        site: Any = hooks._state["site"]
        for name, spec in site.exports.items():
            texts[f"charts/{name}.vl.json"] = json.dumps(spec, sort_keys=True, indent=1, default=str)
        hooks.on_post_build(config)
    for path, text in texts.items():
        if dump is not None:
            (dump / path).parent.mkdir(parents=True, exist_ok=True)
            (dump / path).write_bytes(text.encode() if isinstance(text, str) else text)
    return {path: _digest(text) for path, text in sorted(texts.items())}


def inputs(results: Path) -> dict[str, str]:
    """Every result file under `results` (its path there) -> its SHA-256."""
    return {p.relative_to(results).as_posix(): _digest(p.read_bytes()) for p in sorted(results.rglob("*.yaml"))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=ROOT / "results", help="the results folder (default results/)")
    parser.add_argument("--dump", type=Path, help="also write every compared text under this folder")
    parser.add_argument("--write", action="store_true", help=f"write the record to {GOLDEN.relative_to(ROOT)}")
    args = parser.parse_args()
    record = {"results": inputs(args.results), "generated": generated(args.results, args.dump)}
    text = json.dumps(record, indent=1, sort_keys=True) + "\n"
    if args.write:
        GOLDEN.write_text(text)
        print(f"{GOLDEN.relative_to(ROOT)}: {len(record['generated'])} generated files from {len(record['results'])}")
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
