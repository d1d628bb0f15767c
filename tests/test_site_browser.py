"""The built site in a real browser: Debian's Chromium driven by Playwright (never a downloaded browser), over
a server on 127.0.0.1 and over file://.

Every page loads without a console error and without a request leaving the machine, every chart draws its
marks, search finds a machine by its GPU name, instant navigation redraws charts, and the hostile strings of a
contributed file never run. The site is built from the committed real results plus one hostile file.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from runner import storage
from tests.conftest import build_site, hostile_result

ROOT = Path(__file__).parent.parent
CHROMIUM = os.environ.get("BENCHSITE_CHROMIUM", "/usr/bin/chromium")
SCREENSHOTS = ROOT / "build" / "screenshots"
MARKS = ", ".join(f".benchsite-chart svg g.mark-{kind} path" for kind in ("symbol", "rect", "line"))
H200_MACHINE = "412f73aecce46bad"

playwright_api = pytest.importorskip("playwright.sync_api", reason="the site extra installs playwright")


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[Path, str]]:
    """The site, built for and served on 127.0.0.1 (site_url names the server, as `mkdocs serve` does, so
    that instant navigation recognises the site's own links)."""
    results = tmp_path_factory.mktemp("browser") / "results"
    out = results.parent / "site"
    out.mkdir()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(out)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}"
    shutil.copytree(ROOT / "results", results)
    hostile = hostile_result()
    storage.save(hostile, results / hostile.machine.id / "hostile.yaml")
    done = build_site(results, out, site_url=url + "/")
    assert done.returncode == 0, done.stderr
    yield out, url
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def site(served) -> Path:
    return served[0]


@pytest.fixture(scope="module")
def server(served) -> str:
    return served[1]


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)")
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield browser
        browser.close()


class Watch:
    """Everything a page did that it should not: console errors, page errors, requests to other hosts."""

    def __init__(self, page, allowed_host: str | None):
        self.errors: list[str] = []
        self.foreign: list[str] = []
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))

        def route(r):
            url = urlparse(r.request.url)
            local = url.scheme in ("file", "data", "blob", "about") or (
                allowed_host is not None and url.netloc == allowed_host
            )
            if local:
                r.continue_()
            else:
                self.foreign.append(r.request.url)
                r.abort()

        page.route("**/*", route)


@contextlib.contextmanager
def watched_page(browser, server: str, mode: str = "http", **context_options) -> Iterator[Any]:
    """A fresh page; when the test is done, it must have logged no console error and asked nothing of
    any host but the test server (over file://, of none)."""
    context = browser.new_context(**context_options)
    page = context.new_page()
    watch = Watch(page, urlparse(server).netloc if mode == "http" else None)
    yield page
    context.close()
    assert watch.errors == [], watch.errors
    assert watch.foreign == [], watch.foreign


def base_urls(site: Path, server: str) -> dict[str, str]:
    return {"http": server, "file": site.as_uri()}


def wait_for_charts(page) -> int:
    """Wait until every chart placeholder on the page has drawn SVG marks; returns how many there are."""
    if page.locator("div.benchsite-chart").count():
        page.wait_for_function(
            """() => [...document.querySelectorAll('div.benchsite-chart')].every(el =>
                   el.querySelector('svg g.mark-symbol path, svg g.mark-rect path, svg g.mark-line path'))""",
            timeout=45_000,
        )
    return page.locator("div.benchsite-chart").count()


@pytest.mark.parametrize("mode", ["http", "file"])
def test_every_page_loads_clean_and_draws_its_charts(site, server, browser, mode):
    base = base_urls(site, server)[mode]
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html"))
    if mode == "file":
        pages.remove("404.html")  # a server's error page: root-absolute links, meaningless from disk
    assert "index.html" in pages and f"machines/{H200_MACHINE}.html" in pages
    drawn = 0
    with watched_page(browser, server, mode) as page:
        for path in pages:
            page.goto(f"{base}/{path}")
            page.wait_for_load_state("load")
            drawn += wait_for_charts(page)
            assert page.evaluate("window.__pwned") is None, path
    assert drawn >= 7  # committed suite-2 results have no CPU transformer numbers yet: no batch-size speedup chart


@pytest.mark.parametrize("mode", ["http", "file"])
def test_search_finds_a_machine_by_its_gpu_name(site, server, browser, mode):
    with watched_page(browser, server, mode) as page:
        page.goto(f"{base_urls(site, server)[mode]}/index.html")
        search = page.locator("input.md-search__input")
        if search.is_hidden():  # narrow layouts hide the field behind a button
            page.locator("label.md-header__button[for=__search]").first.click()
        query(page, "H200", f".md-search-result__item a[href*='machines/{H200_MACHINE}']")
        # Hostile text is indexed too (as text): a word from it finds the hostile machine's page, the result
        # snippets show it, and nothing in it runs.
        hostile = hostile_result().machine.id
        query(page, "cell", f".md-search-result__item a[href*='machines/{hostile}']")
        page.wait_for_timeout(300)
        assert page.evaluate("window.__pwned") is None


def query(page, text: str, hit: str, attempts: int = 6) -> None:
    """Type a query as a person does (key by key: mkdocs-material reacts to key events) and wait for a
    result. The index loads in a worker after the page, so a query typed before it is ready is typed again."""
    search = page.locator("input.md-search__input")
    for _ in range(attempts):
        search.click()
        search.press("Control+a")
        search.press("Backspace")
        search.press_sequentially(text, delay=20)
        try:
            page.locator(hit).first.wait_for(timeout=5_000)
            return
        except playwright_api.TimeoutError:
            continue
    raise AssertionError(f"search for {text!r} found no {hit} in {attempts} tries")


def test_instant_navigation_redraws_charts(site, server, browser):
    with watched_page(browser, server) as page:
        instant_navigation(page, server)


def instant_navigation(page, server: str) -> None:
    page.goto(f"{server}/index.html")
    wait_for_charts(page)
    page.wait_for_load_state("networkidle")  # the sitemap that instant navigation checks links against
    page.evaluate("window.__sameDocument = true")
    page.locator("nav.md-nav--primary a.md-nav__link[href$='crossover.html']").first.click()
    page.wait_for_url("**/crossover.html")
    page.locator("article h1", has_text="Crossover").wait_for()  # the new content is in place
    charts = wait_for_charts(page)
    assert charts >= 1
    assert page.evaluate("window.__sameDocument") is True  # swapped in place: no full page load
    page.go_back()
    page.wait_for_url("**/index.html")
    page.locator("article h2", has_text="The answer at a glance").wait_for()
    assert wait_for_charts(page) >= 1


def test_hostile_strings_show_as_text_and_never_run(site, server, browser):
    with watched_page(browser, server) as page:
        hostile_pages(page, server)


def hostile_pages(page, server: str) -> None:
    page.goto(f"{server}/machines/{hostile_result().machine.id}.html")
    text = page.locator("article").inner_text()
    assert "<script>window.__pwned=1</script>" in text
    assert "<img src=x onerror=window.__pwned=1>" in text
    assert page.locator("article a[href^='javascript']").count() == 0
    # Tooltips show strings from files too: hover the marks of every chart page.
    for path in ("index.html", "speedups.html", "crossover.html", "loops.html", "frameworks.html"):
        page.goto(f"{server}/{path}")
        wait_for_charts(page)
        marks = page.locator(MARKS)
        for i in range(min(marks.count(), 40)):
            marks.nth(i).hover(force=True)
        assert page.locator("#vg-tooltip-element").count() == 1, path  # the hovers did show tooltips
        assert page.evaluate("window.__pwned") is None, path


def test_tables_sort_by_a_click_on_their_heading(site, server, browser):
    page = browser.new_page()
    page.goto(f"{server}/leaderboards/depth-sweep.html")
    table = page.locator("article table").first
    column = [h.strip() for h in table.locator("thead th").all_inner_texts()].index("median")
    table.locator("thead th").nth(column).click()

    def seconds(cell: str) -> float:
        value, unit = cell.split()
        return float(value) * {"s": 1, "ms": 1e-3, "µs": 1e-6}[unit]

    cells = table.locator(f"tbody tr td:nth-child({column + 1})").all_inner_texts()
    values = [seconds(c) for c in cells if c.strip() != "-"]
    assert values == sorted(values) and len(values) > 10
    table.locator("thead th").nth(column).click()
    cells = table.locator(f"tbody tr td:nth-child({column + 1})").all_inner_texts()
    values = [seconds(c) for c in cells if c.strip() != "-"]
    assert values == sorted(values, reverse=True)
    page.close()


def test_home_page_screenshot(site, browser):
    """A full-page screenshot of the home page over file://, kept in build/screenshots/ to look at."""
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    page.goto((site / "index.html").as_uri())
    assert wait_for_charts(page) >= 1
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / "home.png"
    page.screenshot(path=str(path), full_page=True)
    page.close()
    assert path.stat().st_size > 50_000
