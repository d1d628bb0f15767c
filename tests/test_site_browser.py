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
import json
import os
import re
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from runner.results.storage import iter_all
from site_builder import advisor
from tests.conftest import build_site, hostile_result, save_under, twinned_result

ROOT = Path(__file__).parent.parent
CHROMIUM = os.environ.get("BENCHSITE_CHROMIUM", "/usr/bin/chromium")
SCREENSHOTS = ROOT / "build" / "screenshots"
MARKS = ", ".join(f".benchsite-chart svg g.mark-{kind} path" for kind in ("symbol", "rect", "line"))
H200_MACHINE = "412f73aecce46bad"
H100_MACHINE = "0c9b4be27c3326c3"

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
    # in the suite the committed files are in: a file of a newer suite would become the site's whole front page
    committed = max(r.suite.version for _, r, _ in iter_all([results]) if r is not None)
    hostile = hostile_result(suite=committed)
    save_under(results, hostile)
    save_under(results, twinned_result())
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


def test_the_machine_page_marks_a_harness_affected_measurement(site, server, browser):
    """A generated machine whose twins found its tabular-mlp as-written measurement 1.6x the seed's script (kept out
    of every table of measurements) and its depth-2 point faithful."""
    with watched_page(browser, server) as page:
        page.goto(f"{server}/machines/{twinned_result().machine.id}.html")
        table = page.locator("article .benchsite-table.fidelity")
        assert table.count() == 1
        affected = table.locator("tr.harness-affected")
        assert affected.count() == 1
        assert "tabular-mlp" in affected.inner_text() and affected.locator("strong").inner_text() == "harness-affected"
        assert "kept out of every median and verdict" in affected.inner_text()
        faithful = table.locator("tbody tr:not(.harness-affected)")
        assert faithful.count() == 1 and "depth=2" in faithful.inner_text() and "faithful" in faithful.inner_text()
        measured = page.locator("article .benchsite-table:not(.fidelity)").all_inner_texts()
        assert any("depth-sweep" in t for t in measured) and not any("tabular-mlp" in t for t in measured)


def test_tables_sort_by_a_click_on_their_heading(site, server, browser):
    page = browser.new_page()
    page.goto(f"{server}/leaderboards/depth-sweep.html")
    table = page.locator("article table").first
    column = [h.strip() for h in table.locator("thead th").all_inner_texts()].index("median")
    table.locator("thead th").nth(column).click()

    def seconds(cell: str) -> float:
        value, unit = cell.split()[:2]  # "2.39 ms per epoch"
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


INTERVAL_MARKS = "svg g.mark-rule line, svg g.mark-rule path, svg g.mark-area path"


def test_every_chart_draws_its_interval_marks(site, browser):
    """Every chart on every page carries its uncertainty: error bars (rules) or bands (areas); the machine
    heatmap, which colours cells, marks the ones whose interval spans 1x with '?'."""
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    checked = 0
    for path in sorted(site.rglob("*.html")):
        page.goto(path.as_uri())
        if not wait_for_charts(page):
            continue
        for chart in page.locator("div.benchsite-chart").all():
            chart_id = chart.get_attribute("id")
            if chart_id == "chart-speedups-by-machine":
                assert chart.locator("svg g.mark-text text").count() > 0, path
            else:
                assert chart.locator(INTERVAL_MARKS).count() > 0, (path, chart_id)
            checked += 1
    page.close()
    assert checked >= 10


def _texts(page, selector: str = "#chart-advisor svg g.mark-text.role-mark text") -> list[str]:
    return page.locator(selector).evaluate_all("ts => ts.map(t => t.textContent)")


def _bound(page, name: str):
    """The bound control whose name is exactly `name` (a model's option text may contain the word too)."""
    return page.locator(".vega-bind").filter(
        has=page.locator(".vega-bind-name", has_text=re.compile(rf"^\s*{name}\s*$"))
    )


def _pick(page, label: str, option: str) -> None:
    """Choose a size in a bound list by the words it shows ("100,000,000 parameters", "batch 32")."""
    _bound(page, label).locator("select").select_option(label=option)


def _answers(page) -> list[str]:
    return page.locator("#advisor-answers p.benchsite-answer").all_inner_texts()


def _answers_change(page, before: list[str]) -> list[str]:
    page.wait_for_function(
        "b => JSON.stringify([...document.querySelectorAll('#advisor-answers p.benchsite-answer')]"
        ".map(p => p.innerText)) !== b",
        arg=json.dumps(before),
    )
    return _answers(page)


def test_the_advisors_sentence_changes_with_its_controls(site, server, browser):
    """The advisor answers in the page's text: one sentence per accelerator with its interval, the machines behind
    it and a link to the nearest measured point's leaderboard row; the same sentence as site_builder.advisor.answer
    writes from the grid the page carries; and it changes with the size picker."""
    with watched_page(browser, server, "file", viewport={"width": 1300, "height": 900}) as page:
        page.goto((site / "advisor.html").as_uri())
        wait_for_charts(page)
        page.wait_for_selector("#advisor-answers p.benchsite-answer")
        first = _answers(page)
        assert first and all(
            "95% interval" in t or "one process or too few samples: no interval" in t or "no estimate" in t.lower()
            for t in first
        ), first
        in_chart = _texts(page, "#chart-advisor svg g.mark-text text")
        assert not any("interval" in t or "estimate" in t for t in in_chart), in_chart  # no answer hidden in it
        # the sentence the page wrote is the one the builder writes for the same grid row
        spec = json.loads(page.locator("#chart-advisor").get_attribute("data-spec"))
        grid = next(iter(spec["datasets"].values()))
        chosen = [r for r in grid if r["f"] == 0 and r["fw"] == "torch" and r["loop"] == "as-written"]
        at = {r["gpu"]: r for r in chosen if r["g"] == 5 * advisor.PARAM_STEPS}
        expected = sorted(advisor.answer(r) for r in at.values())
        assert expected and [t for t in first if t.split(":")[0] in at] == expected, (first, expected)
        # each sentence with an estimate links a leaderboard row that exists
        link = page.locator("#advisor-answers a").first
        href = link.get_attribute("href")
        board, anchor = href.split("#")
        assert board.startswith("leaderboards/") and anchor.startswith("p-")
        assert f'id="{anchor}"' in (site / board).read_text()
        sizes = _bound(page, "Size").locator("option").all_inner_texts()
        assert "100,000 parameters" in sizes and "batch 32" in _bound(page, "Batch").locator("option").all_inner_texts()
        _pick(page, "Size", "100,000,000 parameters")  # beyond every measured sweep
        below = _answers_change(page, first)
        assert all("no estimate, measured from" in t for t in below), below
        _pick(page, "Size", "562,000 parameters")
        page.locator(".vega-bind", has_text="Loop").locator("select").select_option("tuned")
        tuned = _answers_change(page, below)
        assert tuned != first and any("faster" in t or "no clear winner" in t for t in tuned), tuned
        # A transformer by batch size: the batch picker moves the answer. The advisor offers a model only where
        # the compared suite has its CPU and GPU sides on one machine, as the committed H100 runs of suite 3 do.
        family = page.locator(".vega-bind", has_text="Model").locator("select")
        options = family.locator("option").all_inner_texts()
        bert = [o for o in options if "bert-base train" in o]
        assert bert, options
        family.select_option(bert[0])
        page.locator(".vega-bind", has_text="Loop").locator("select").select_option("as-written")
        _pick(page, "Batch", "batch 32")
        at_32 = _answers_change(page, tuned)
        assert at_32 and all(
            "95% interval" in t or "one process or too few samples: no interval" in t or "no estimate" in t.lower()
            for t in at_32
        ), at_32
        _pick(page, "Batch", "batch 128")
        assert _answers_change(page, at_32) != at_32


def _compare_from_machine_page(page, site: Path, machine: str) -> None:
    """Follow a machine page's compare link and wait until the compare page has that machine as A."""
    page.goto((site / f"machines/{machine}.html").as_uri())
    page.locator("a", has_text="Compare this machine").click()
    page.wait_for_url("**/compare.html#*")
    wait_for_charts(page)
    page.wait_for_function(f"() => document.querySelector('#chart-compare .vega-bind select').value === '{machine}'")


def test_the_compare_pickers_change_the_table(site, server, browser):
    compare = "#chart-compare svg g.mark-text.role-mark text"
    with watched_page(browser, server, "file", viewport={"width": 1300, "height": 900}) as page:
        page.goto((site / "compare.html").as_uri())
        wait_for_charts(page)
        pickers = page.locator("#chart-compare .vega-bind select")
        assert pickers.count() == 2
        ids = pickers.first.locator("option").evaluate_all("os => os.map(o => o.value)")
        assert H200_MACHINE in ids and len(ids) >= 3
        default_b = pickers.nth(1).input_value()
        before = _texts(page, compare)
        pickers.nth(1).select_option(pickers.first.input_value())  # B = A: every ratio is exactly 1
        page.wait_for_timeout(300)
        same = _texts(page, compare)
        assert same != before
        ratios = [t for t in same if re.search(r": \d+\.\d{3}x", t)]
        assert ratios and all(": 1.000x" in t for t in ratios), same
        # A machine page's link opens the page with that machine as A.
        _compare_from_machine_page(page, site, H200_MACHINE)
        # never a machine against itself: the page's default B, opened as A from its own page, gets another B, and
        # its ratios are not the self-comparison's 1.000x everywhere (one of them may round to it: two machines'
        # CPUs of one class can time a point alike)
        _compare_from_machine_page(page, site, default_b)
        assert pickers.nth(1).input_value() not in ("", default_b)
        ratios = [t for t in _texts(page, compare) if re.search(r": \d+\.\d{3}x", t)]
        assert len(ratios) >= 3 and len([t for t in ratios if ": 1.000x" in t]) < len(ratios) / 2, ratios


@pytest.mark.parametrize("width", [1400, 390])
def test_compare_h200_against_h100_sums_up_first_and_clips_no_row(site, server, browser, width):
    """The natural pair: a summary per device class and loop (geometric mean with its interval, how many
    measurements each wins) above the rows; the rows grouped by workload, each with its unit; no text runs past
    the page at a desk's width or a phone's."""
    texts = "#chart-compare svg g.mark-text.role-mark text"
    with watched_page(browser, server, "file", viewport={"width": width, "height": 900}) as page:
        page.goto((site / "compare.html").as_uri())
        wait_for_charts(page)
        pickers = page.locator("#chart-compare .vega-bind select")
        lines = (  # a text of several lines: each line (tspan) apart
            "ts => ts.flatMap(t => t.querySelector('tspan') ? [...t.querySelectorAll('tspan')].map(s => s.textContent)"
            " : [t.textContent])"
        )
        summary_of = r"accelerator, tuned: (\d+\.\d{3})x"

        def pick(a: str, b: str) -> list[str]:
            pickers.nth(0).select_option(a)
            pickers.nth(1).select_option(b)
            page.wait_for_function(
                "([sel, a, b]) => [...document.querySelectorAll(sel)].some(t => t.textContent.startsWith("
                "'A: ' + a)) && [...document.querySelectorAll(sel)].some(t => t.textContent.includes('B: ' + b))",
                arg=["#chart-compare svg g.mark-text.role-mark text", a, b],
            )
            return page.locator(texts).evaluate_all(lines)

        swapped = pick(H100_MACHINE, H200_MACHINE)
        shown = pick(H200_MACHINE, H100_MACHINE)
        # the summary is stored once per pair (A < B): the other order shows its reciprocal
        there = float(next(m.group(1) for t in swapped if (m := re.match(summary_of, t))))
        here = float(next(m.group(1) for t in shown if (m := re.match(summary_of, t))))
        assert abs(here * there - 1) < 0.002, (here, there)
        summary = [t for t in shown if re.match(r"(CPU|accelerator), (as-written|tuned): ", t)]
        assert {t.split(":")[0] for t in summary} >= {"CPU, as-written", "accelerator, tuned"}, shown
        assert all(re.search(r"\d\.\d{3}x \(\d\.\d{3} \.\. \d\.\d{3}\)", t) for t in summary), summary
        assert [t for t in shown if re.match(r"\d+ measurements: A faster in \d+, B in \d+, neither in \d+$", t)]
        headers = page.locator("#chart-compare svg g.role-title-text text").all_text_contents()
        assert {"cifar-lenet", "depth-sweep", "tabular-mlp"} <= set(headers), headers
        assert [
            t for t in shown if re.search(r"· A [0-9.e+-]+ s, B [0-9.e+-]+ s per epoch$", t)
        ]  # both times, their unit
        first_row = min(i for i, t in enumerate(shown) if re.search(r": \d+\.\d{3}x", t) and " · " in t)
        assert max(i for i, t in enumerate(shown) if t in summary) < first_row  # the summary comes first
        right = page.evaluate(
            "sel => Math.max(...[...document.querySelectorAll(sel)].map(e => e.getBoundingClientRect().right))",
            texts,
        )
        assert right <= width, f"a compare text ends at {right:.0f} px on a {width} px page"


PHONE_PAGES = [
    "index",
    "advisor",
    "compare",
    "seeds",
    "seeds/001",
    "speedups",
    "crossover",
    "loops",
    "frameworks",
    "leaderboards/depth-sweep",
    f"machines/{H200_MACHINE}",
    "other-runs",
    "data",
    "suite",
]


def test_phone_width_has_no_horizontal_page_scroll(site, browser):
    """At 390 px, wide tables and charts scroll inside their own boxes; the page itself never does."""
    page = browser.new_page(viewport={"width": 390, "height": 844})
    for name in PHONE_PAGES:
        page.goto((site / f"{name}.html").as_uri())
        wait_for_charts(page)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, (name, width)
    page.close()


@pytest.mark.parametrize("width", [1400, 390])
def test_the_answer_pages_charts_fit_their_boxes(site, browser, width):
    """Home, compare, the crossover page and a seed page: every chart fits its box at a desk's width and a phone's
    (no panel hidden past the box's edge, to be scrolled to); at a desk's width the seed's claim table too."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    for name in ("index", "compare", "crossover", "seeds/002"):
        page.goto((site / f"{name}.html").as_uri())
        wait_for_charts(page)
        over = page.evaluate(
            "() => [...document.querySelectorAll('div.benchsite-chart')].map(el => [el.id,"
            " el.querySelector('svg').getBoundingClientRect().width - el.clientWidth])"
            ".filter(([, extra]) => extra > 1)"
        )
        assert not over, (name, width, over)
        if width == 1400 and name == "seeds/002":
            tables = page.evaluate(
                "() => [...document.querySelectorAll('article table')]"
                ".map(t => t.scrollWidth - t.parentElement.clientWidth)"
            )
            assert max(tables) <= 1, tables
    page.close()


def test_a_leaderboard_row_is_a_card_with_its_median_first_on_a_phone(site, browser):
    """At 390 px each leaderboard row is a card: its median first and inside the screen, its point, loop, framework
    and device after it; at a desk's width the same table keeps its columns."""
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto((site / "leaderboards/depth-sweep.html").as_uri())
    rows = page.locator(".benchsite-cards tbody tr")
    assert rows.count() > 10
    for i in (0, rows.count() - 1):
        row = rows.nth(i)
        median = row.locator('td[data-label="median"]').bounding_box()
        assert median and median["x"] + median["width"] <= 390
        framework = row.locator('td[data-label="framework"]').bounding_box()
        assert median["y"] < framework["y"]  # the figure comes first
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.close()
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto((site / "leaderboards/depth-sweep.html").as_uri())
    assert page.locator(".benchsite-cards thead th").first.is_visible()
    page.close()


def test_home_gives_each_lines_answer_and_speedup_without_sideways_scrolling(site, browser):
    """The answer at a glance: on a desk a table row per workload, loop, accelerator, framework and CPU; at 390 px
    each line is a card whose answer and speedup lie inside the screen, first in the card, the CPU with its cores."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto((site / "index.html").as_uri())
    rows = page.locator(".benchsite-glance-table tbody tr")
    assert rows.count() >= 8
    frameworks = page.locator('.benchsite-glance-table td[data-label="framework"]').all_inner_texts()
    assert frameworks and all(f.strip() in {"PyTorch", "JAX", "TensorFlow"} for f in frameworks)
    cpus = page.locator('.benchsite-glance-table td[data-label="CPU"]').all_inner_texts()
    assert all(re.search(r", \d+ cores?\b", c) for c in cpus), cpus
    page.close()
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto((site / "index.html").as_uri())
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    cards = page.locator(".benchsite-glance-table tbody tr")
    for i in range(cards.count()):
        card = cards.nth(i)
        answer = card.locator('td[data-label="answer"]').bounding_box()
        speedup = card.locator('td[data-label="speedup"]').bounding_box()
        assert answer and speedup
        for cell in (answer, speedup):
            assert cell["x"] >= 0 and cell["x"] + cell["width"] <= 390, (i, cell)
        assert answer["y"] < speedup["y"]
        others = card.locator('td:not([data-label="answer"]):not([data-label="speedup"])')
        assert all(others.nth(k).bounding_box()["y"] > speedup["y"] for k in range(others.count())), i
    page.close()


def test_no_chart_label_is_cut_short(site, browser):
    """Vega shortens a label longer than its limit with an ellipsis: no chart on the answer pages does."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    for name in [*PHONE_PAGES, "seeds/003", "seeds/002", "scale"]:
        page.goto((site / f"{name}.html").as_uri())
        wait_for_charts(page)
        texts = page.eval_on_selector_all(".benchsite-chart svg text", "ts => ts.map(t => t.textContent)")
        cut = [t for t in texts if t.rstrip().endswith("…")]
        assert not cut, (name, cut[:5])
    page.close()


def test_a_seed_page_judges_direction_and_size_apart_and_agrees_with_the_index(site, browser):
    """Seed 002 claims 99.4x: each machine's row gives the claim's direction and, apart, the size against the
    published figure; the status its page states is the one the seeds index lists."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto((site / "seeds" / "002.html").as_uri())
    headers = page.locator(".benchsite-table th").all_inner_texts()
    assert any(h.startswith("direction") for h in headers) and any(h.startswith("size against") for h in headers)
    sizes = page.locator(".benchsite-table td").all_inner_texts()
    assert any("than published" in c or "inside the interval" in c for c in sizes)
    status = re.search(r"Status: ([^.]+)\.", page.locator("article").inner_text())
    assert status
    page.goto((site / "seeds.html").as_uri())
    row = page.locator("tr", has=page.locator('a[href$="002.html"]'))
    assert row.locator("td").last.inner_text().strip() == status.group(1)
    page.close()


@pytest.mark.parametrize("width", [1400, 390])
def test_screenshots_of_the_answer_pages(site, browser, width):
    """Full-page screenshots of the pages issue 29 changed (home, advisor, compare, a seed page, scale, a machine
    page), kept in build/screenshots/ to look at."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for name in ("index", "advisor", "compare", "seeds/001", "scale", "machines/0c9b4be27c3326c3"):
        page.goto((site / f"{name}.html").as_uri())
        wait_for_charts(page)
        path = SCREENSHOTS / f"{name.replace('/', '-')}-{width}.png"
        page.screenshot(path=str(path), full_page=True)
        assert path.stat().st_size > 20_000
    page.close()


def test_the_scale_page_shows_efficiency_unclipped_and_each_run_in_its_own_colour(site, browser):
    """At a desk's width the summary's efficiency and its interval are in view (not past the table's scroll edge),
    and no two lines of the efficiency chart share a colour."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto((site / "scale.html").as_uri())
    wait_for_charts(page)
    table = page.locator("table", has=page.locator("th", has_text="median efficiency")).first
    box = table.evaluate(
        "t => { const w = t.closest('.md-typeset__scrollwrap') || t.parentElement;"
        " return [w.getBoundingClientRect().right, t.getBoundingClientRect().right]; }"
    )
    for name in ("median efficiency", "95% interval"):
        cell = table.locator("th", has_text=name).first.bounding_box()
        assert cell["x"] + cell["width"] <= box[0] + 1, (name, cell, box)
    legend = page.locator("#chart-scale-efficiency svg g.role-legend-symbol path")
    colours = legend.evaluate_all("ps => ps.map(p => p.getAttribute('stroke') || p.getAttribute('fill'))")[:20]
    assert len(colours) >= 12 and len(set(colours)) == len(colours), colours  # 20 colours: the first 20 lines
    page.close()


def test_scale_series_keep_cpu_and_gpu_and_every_run_apart(site, browser):
    """The Scale page's efficiency chart: a machine's CPU processes (gloo) and its GPUs (NCCL) are separate lines,
    both loops are drawn, and each of the 2 x H200 machine's tuned runs is its own line."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto((site / "scale.html").as_uri())
    assert wait_for_charts(page) >= 1
    chart = page.locator("#chart-scale-efficiency")
    labels = [t.strip() for t in chart.locator("svg g.role-legend-label text").all_text_contents()]
    assert labels, "the efficiency chart has no legend"
    cpu = [label for label in labels if "Xeon" in label]
    gpu = [label for label in labels if "H100" in label or "H200" in label]
    assert cpu and gpu and not set(cpu) & set(gpu)
    assert not any(label.endswith("…") for label in labels), labels  # the run is never cut off
    assert any("as-written" in label for label in labels) and any("tuned" in label for label in labels)
    h200_tuned = {label for label in labels if "H200" in label and "tuned" in label}
    assert len(h200_tuned) >= 5, labels  # the 2 x H200 machine's eager run and four compiled runs: a line each
    page.close()


def test_the_advisor_answers_in_money_at_the_readers_prices(site, server, browser):
    """Below the speed answer, one sentence per accelerator in money: at the example prices, then at prices the
    reader types into the two fields, each the sentence site_builder.advisor.money_answer writes for the same grid
    row; a cheap enough accelerator machine turns the verdict."""
    with watched_page(browser, server, "file", viewport={"width": 1300, "height": 900}) as page:
        page.goto((site / "advisor.html").as_uri())
        wait_for_charts(page)
        page.wait_for_selector("#advisor-answers p.benchsite-money")
        spec = json.loads(page.locator("#chart-advisor").get_attribute("data-spec"))
        grid = next(iter(spec["datasets"].values()))
        at = {r["gpu"]: r for r in grid if r["f"] == 0 and r["fw"] == "torch" and r["loop"] == "as-written"
              and r["g"] == 5 * advisor.PARAM_STEPS}  # fmt: skip

        def shown() -> list[str]:
            return page.locator("#advisor-answers p.benchsite-money").all_inner_texts()

        def expected(cpu: float, gpu: float) -> list[str]:
            return sorted(t for t in (advisor.money_answer(r, cpu, gpu) for r in at.values()) if t)

        first = shown()
        assert first and first == expected(advisor.CPU_USD_H, advisor.GPU_USD_H), (first, at)
        assert all("1,000 epochs cost $" in t for t in first)
        _bound(page, "CPU machine, \\$ an hour").locator("input").fill("2")
        _bound(page, "accelerator's machine, \\$ an hour").locator("input").fill("0.25")
        page.wait_for_function(
            "b => JSON.stringify([...document.querySelectorAll('#advisor-answers p.benchsite-money')]"
            ".map(p => p.innerText)) !== b",
            arg=json.dumps(first),
        )
        cheap = shown()
        assert cheap == expected(2.0, 0.25), cheap
        assert any(advisor.MONEY_CHEAPER_GPU in t for t in cheap) or any("no clear winner" in t for t in cheap)
