"""Full-page screenshots of a built site in Debian's Chromium, to look at (not part of the test run).

    python tests/tools/screenshots.py SITE_DIR OUT_DIR [--width 1400 --width 390] [--page index --page compare ...]
        [--compare A_ID B_ID]

SITE_DIR is a built site (`mkdocs build -d SITE_DIR`); each page is opened from disk, its charts drawn, and saved as
OUT_DIR/<page>-<width>.png. `--compare A B` picks the two machines on the compare page first. The browser is
$BENCHSITE_CHROMIUM or /usr/bin/chromium; none is downloaded.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from playwright.sync_api import sync_playwright

CHROMIUM = os.environ.get("BENCHSITE_CHROMIUM", "/usr/bin/chromium")
PAGES = ["index", "compare", "seeds/002", "crossover", "leaderboards/depth-sweep", "scale"]


def wait_for_charts(page) -> None:
    page.wait_for_load_state("load")
    page.wait_for_function(
        "() => [...document.querySelectorAll('div.benchsite-chart')].every(el => el.querySelector('svg'))",
        timeout=60_000,
    )


def pick(page, a: str, b: str) -> None:
    selects = page.locator("#chart-compare .vega-bind select")
    selects.nth(0).select_option(a)
    selects.nth(1).select_option(b)
    page.wait_for_timeout(500)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("site", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--width", type=int, action="append")
    parser.add_argument("--page", action="append")
    parser.add_argument("--compare", nargs=2, metavar=("A", "B"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        for width in args.width or [1400, 390]:
            page = browser.new_page(viewport={"width": width, "height": 900})
            for name in args.page or PAGES:
                page.goto((args.site.resolve() / f"{name}.html").as_uri())
                wait_for_charts(page)
                if name == "compare" and args.compare:
                    pick(page, *args.compare)
                path = args.out / f"{name.replace('/', '-')}-{width}.png"
                page.screenshot(path=str(path), full_page=True)
                print(path)
            page.close()
        browser.close()


if __name__ == "__main__":
    main()
