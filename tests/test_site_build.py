"""The site builds with `mkdocs build --strict` from a results folder, leaves bad files out, generates every
page, exports every chart, loads nothing from other hosts, and shows hostile strings from result files as
text."""

from __future__ import annotations

import csv
import hashlib
import html
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runner.results.schema import EquivalenceCheck
from site_builder.opendata import inert_cell as _inert_cell
from tests.conftest import (
    HOSTILE,
    build_site,
    hostile_result,
    make_measurement,
    make_result,
    retime,
    same_cpu_model,
    save_under,
    suite_fields,
)

ROOT = Path(__file__).parent.parent


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory):
    results = tmp_path_factory.mktemp("hostile") / "results"
    result = hostile_result()
    save_under(results, result)
    (results / result.machine.id / "bad.yaml").write_text("schema_version: 1\nrun: {id: 1}\n")
    out = results.parent / "site"
    done = build_site(results, out)
    assert done.returncode == 0, done.stderr
    return results, out, done


def visible(html: str) -> str:
    """The page without its chart specs (data in an escaped attribute, drawn by Vega as text)."""
    return re.sub(r'data-spec="[^"]*"', "", html)


def test_hostile_strings_show_as_text_everywhere(hostile_site):
    _, site, _ = hostile_site
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 15
    for page in pages:
        text = page.read_text()
        specs = re.findall(r'data-spec="([^"]*)"', text)
        assert all("<" not in spec and ">" not in spec for spec in specs)
        assert all("/tmp/" not in spec for spec in specs)  # no local paths leak into chart data
        text = visible(text)
        for hostile in HOSTILE[:4]:
            assert hostile not in text, (page, hostile)
        assert "javascript:" not in text  # not even as a link target
        assert "<b>x</b>" not in text  # raw HTML from a file never becomes markup
    machine = visible((site / "machines" / f"{hostile_result().machine.id}.html").read_text())
    # The text is there, shown as text: the character references decode to the original strings.
    assert all(hostile in html.unescape(machine) for hostile in HOSTILE)
    index = json.loads((site / "search" / "search_index.json").read_text())
    assert all("<script>" not in doc["text"] and "<img" not in doc["text"] for doc in index["docs"])
    # a machine is indexed once, by one short entry: its hardware, escaped (the page's sections are not indexed)
    machine_id = hostile_result().machine.id
    entries = [doc for doc in index["docs"] if doc["location"].startswith(f"machines/{machine_id}")]
    assert [doc["location"] for doc in entries] == [f"machines/{machine_id}.html"]
    text = entries[0]["text"]
    assert "cell" in text and "<b>x</b>" not in text and "<b>x</b>" in html.unescape(text)
    script = (site / "search" / "search_index.js").read_text()
    assert script.startswith("var __index = ") and json.loads(script.removeprefix("var __index = ")) == index


def test_bad_files_are_reported_and_left_out_and_strict_fails(hostile_site, tmp_path):
    results, site, done = hostile_site
    assert "bad.yaml" in done.stderr  # reported by path
    assert "1 contributed file(s) failed validation" in (site / "index.html").read_text()
    strict = build_site(results, tmp_path / "strict", strict=True)
    assert strict.returncode != 0 and "bad.yaml" in strict.stderr


def test_csv_cells_never_start_a_formula(hostile_site):
    _, site, _ = hostile_site
    for path in (site / "leaderboards").glob("*.csv"):
        rows = list(csv.reader(path.read_text().splitlines()))
        cells = [cell for row in rows[1:] for cell in row]
        assert cells and all(cell[:1] not in ("=", "+", "@", "-") for cell in cells), path
        assert any("window.__pwned" in cell for cell in cells)  # hostile text is kept, as text
    assert _inert_cell("=HYPERLINK(1)") == "'=HYPERLINK(1)" and _inert_cell("@x") == "'@x" and _inert_cell(1.5) == 1.5


def test_a_table_is_made_inert_as_each_of_its_cells_would_be():
    """opendata.inert matches a column at once; the table it gives is the one inert_cell gives cell by cell, for
    text in objects and in Arrow, text mixed with other values, columns without text, and none that need a prefix."""
    import pandas as pd
    import pyarrow as pa

    from site_builder.opendata import inert

    cells = ["=1+1", "+x", "-2", "@a", "\tt", "\rr", "ok", "", "a=b", None]
    table = pd.DataFrame(
        {
            "text": cells,
            "arrow": pd.array(cells, dtype="string[pyarrow]"),
            "python": pd.array(cells, dtype="string[python]"),
            "objects": pd.Series(cells, dtype=object),
            "large": pd.Series(cells, dtype=pd.ArrowDtype(pa.large_string())),
            "mixed": pd.Series(["=x", 1.5, None, "-y", 3, "z", "@", float("nan"), "ok", "+"], dtype=object),
            "numbers": pd.array([1, None, 3, 4, 5, 6, 7, 8, 9, 10], dtype=object),
            "plain": ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"],
            "floats": [float(i) for i in range(10)],
        }
    )
    texts = [name for name in table.columns if name != "floats"]
    expected = pd.DataFrame({name: table[name].map(_inert_cell) for name in texts})
    expected["floats"] = table["floats"]
    got = inert(table)
    pd.testing.assert_frame_equal(got, expected)  # the values and each column's type
    assert got["arrow"].tolist()[:4] == ["'=1+1", "'+x", "'-2", "'@a"] and got["text"][6] == "ok"


def test_every_page_and_export_is_generated(hostile_site):
    _, site, _ = hostile_site
    for page in [
        "index",
        "speedups",
        "crossover",
        "loops",
        "frameworks",
        "machines",
        "suite",
        "schema",
        "faq",
        "contributing",
        "leaderboards/depth-sweep",
        "leaderboards/transformer",
        f"machines/{hostile_result().machine.id}",
    ]:
        assert (site / f"{page}.html").is_file(), page
    exports = {p.name for p in (site / "charts").iterdir()}
    drawn = set()
    for page in site.rglob("*.html"):
        drawn |= set(re.findall(r'id="chart-([a-z0-9-]+)"', page.read_text()))
    assert drawn and all(f"{name}.png" in exports and f"{name}.svg" in exports for name in drawn)
    assert (site / "charts" / "speedups-overview.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (site / "charts" / "speedups-overview.svg").read_text().lstrip().startswith("<svg")
    schema = json.loads((site / "schema.json").read_text())
    assert schema["title"] == "benchsite result file"
    assert (site / "assets" / "vega-bundle.js").stat().st_size > 100_000  # served locally


def test_nothing_is_loaded_from_another_host(hostile_site):
    _, site, _ = hostile_site
    for page in site.rglob("*.html"):
        html = re.sub(r'<link rel="canonical"[^>]*>', "", visible(page.read_text()))  # a name, never fetched
        for tag, _, url in re.findall(r"<(script|link|img|iframe)\b[^>]*?\b(src|href)=\"([^\"]+)\"", html):
            assert not re.match(r"(https?:)?//", url), (page, tag, url)
        assert "unpkg.com" not in html and "fonts.googleapis" not in html


def test_generated_reference_pages_follow_the_code(hostile_site):
    from runner.results.schema import ResultFile
    from runner.workloads.suite import WORKLOADS

    _, site, _ = hostile_site
    suite = html.unescape((site / "suite.html").read_text())
    for workload in WORKLOADS:  # the built-in suite (tests register plug-in workloads of their own)
        assert workload.id in suite
        case = workload.cases("standard")[0]
        assert case.workload_hash(workload.variants[0]) in suite
    schema = html.unescape((site / "schema.html").read_text())
    for name in ResultFile.model_fields:
        assert name in schema


def test_frameworks_page_exists_only_with_a_second_framework(tmp_path):
    results = tmp_path / "results"
    result = make_result([make_measurement(device="cpu"), make_measurement(device="cuda", median_s=0.001)])
    save_under(results, result)
    done = build_site(results, tmp_path / "site")
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "site" / "frameworks.html").exists()
    assert "frameworks.html" not in (tmp_path / "site" / "index.html").read_text()


def test_benchsite_site_build_builds_the_committed_results_strict(committed_site):
    """`benchsite site build --strict` of the committed results (and a --model run beside them: conftest's
    committed_site) writes plain .html pages, every machine on the home page."""
    site = committed_site
    assert (site / "crossover.html").exists()  # the offline plugin writes plain .html pages
    home = (site / "index.html").read_text()
    for machine in (ROOT / "results").iterdir():
        assert machine.name in home
    # a time says what it is per: an epoch of the depth sweep, a step of a transformer
    boards = site / "leaderboards"
    assert re.search(r"<td[^>]*>[0-9.]+ [mµ]?s per epoch</td>", (boards / "depth-sweep.html").read_text())
    assert re.search(r"<td[^>]*>[0-9.]+ [mµ]?s per step</td>", (boards / "transformer.html").read_text())
    # TensorFlow and JAX results are compared with PyTorch's, every comparison equivalence-checked
    frameworks = (site / "frameworks.html").read_text()
    assert "<td>TensorFlow</td>" in frameworks and "<td>JAX</td>" in frameworks
    assert "<td>passed</td>" in frameworks and "<td>unchecked</td>" not in frameworks and "failed on" not in frameworks
    # by default the site names no domain (the project owns none): no address in any page, sitemap or schema
    named = [p for p in site.rglob("*") if p.is_file() and p.suffix in {".html", ".xml", ".json", ".js"}]
    assert not [p for p in named if "benchsite.dev" in p.read_text(errors="replace")]
    assert "<loc>" not in (site / "sitemap.xml").read_text() and 'rel="canonical"' not in home


def test_the_committed_results_build_the_recorded_site(tmp_path):
    """The committed result files that tests/data/site_golden.json names build, page by page and file by file, the
    site that record holds (tests/tools/site_golden.py says what is compared): a change to the shape of the code
    changes nothing the site shows. A change meant to change the site rewrites the record (`--write`)."""
    golden = json.loads((ROOT / "tests" / "data" / "site_golden.json").read_text())
    results = tmp_path / "results"
    for name, digest in golden["results"].items():
        source = ROOT / "results" / name
        assert source.is_file(), f"results/{name}: named by the record, no longer committed"
        assert hashlib.sha256(source.read_bytes()).hexdigest() == digest, f"results/{name}: changed since the record"
        (results / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, results / name)
    tool = ROOT / "tests" / "tools" / "site_golden.py"
    done = subprocess.run(
        [sys.executable, str(tool), "--results", str(results)], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr[-4000:]
    built = json.loads(done.stdout)["generated"]
    recorded = golden["generated"]
    assert sorted(built) == sorted(recorded), "generated files differ"
    changed = [path for path in recorded if built[path] != recorded[path]]
    assert not changed, f"the site's output changed in {changed} (diff two builds with site_golden.py --dump DIR)"


def _check(framework: str, status: str, **extra) -> EquivalenceCheck:
    return EquivalenceCheck(
        framework=framework,
        workload="depth-sweep",
        point={"depth": 4},
        status=status,
        params=suite_fields()["params"],
        reference_params=suite_fields()["params"],
        loss_rtol=1e-5,
        grad_rtol=1e-4,
        grad_rel_diff=extra.pop("grad_rel_diff", 3e-7),
        **extra,
    )


def test_frameworks_page_shows_the_equivalence_check(tmp_path):
    """Passed, failed and unchecked comparisons are told apart, on the frameworks page and machine pages."""
    results = tmp_path / "results"
    ids = {}
    for label, framework, checks in [
        ("a", "jax", [_check("jax", "passed")]),
        ("b", "tensorflow", [_check("tensorflow", "failed", grad_rel_diff=0.3)]),
        ("c", "tensorflow", []),  # run with --no-equivalence
    ]:
        torch_row = make_measurement(device="cpu")  # each machine its own samples (the same ones are a replay)
        other = retime(torch_row, 0.005, framework=framework)
        result = make_result([torch_row, other], label=label).model_copy(update={"equivalence": checks})
        result = same_cpu_model(result, 1 + "abc".index(label))  # one CPU model: a row per framework
        ids[label] = save_under(results, result).parent.name
    done = build_site(results, tmp_path / "site", strict=True)
    assert done.returncode == 0, done.stderr
    page = html.unescape(re.sub(r"<[^>]+>", " ", (tmp_path / "site" / "frameworks.html").read_text()))
    page = re.sub(r"\s+", " ", page)
    # the ratio with its 95% interval, then the equivalence verdict
    assert re.search(r"JAX 1 5 ms 11 ms 0\.45x \(0\.\d\dx \.\. 0\.\d\dx\) passed", page), page
    # machine c has no check: not counted
    assert re.search(r"TensorFlow 2 5 ms 11 ms 0\.45x \([^)]*\) failed on 1 of 1", page), page
    assert "Equivalence with PyTorch" in page and "3.0e-01" in page
    machine = html.unescape((tmp_path / "site" / "machines" / f"{ids['a']}.html").read_text())
    assert "Equivalence with PyTorch: JAX 1 of 1 points passed" in machine
    assert "Equivalence with PyTorch" not in (tmp_path / "site" / "machines" / f"{ids['c']}.html").read_text()


def test_the_machines_index_is_paginated(tmp_path, monkeypatch):
    results = tmp_path / "results"
    for label in ("one", "two", "three"):
        save_under(results, make_result([make_measurement(device="cpu")], label=label))
    monkeypatch.setenv("BENCHSITE_MACHINES_PER_PAGE", "2")
    done = build_site(results, tmp_path / "site")
    assert done.returncode == 0, done.stderr
    first = (tmp_path / "site" / "machines.html").read_text()
    second = (tmp_path / "site" / "machines" / "page-2.html").read_text()
    assert not (tmp_path / "site" / "machines" / "page-3.html").exists()
    listed = [re.findall(r'href="(?:\.\./)?machines/([0-9a-f]{16})\.html"', page) for page in (first, second)]
    assert [len(ids) for ids in listed] == [2, 1]
    assert len(set(listed[0]) | set(listed[1])) == 3  # every machine once, across the pages
    # each page links to the other, and its machines, from where it is
    assert 'href="machines/page-2.html"' in first and 'href="../machines.html"' in second
    for machine_id in listed[1]:
        assert (tmp_path / "site" / "machines" / f"{machine_id}.html").exists()
    assert "machines 3 to 3 of 3" in visible(second)


def test_a_seed_page_lists_the_newest_machines_counts_them_all_and_its_csv_has_every_one(tmp_path, monkeypatch):
    """At 10,000 files seed 003's page listed every machine's reproduction (1.88 MB): each claim and figure now lists
    and draws the BENCHSITE_SEED_MACHINES newest machines, its verdict counts count every machine, and the seed's
    CSV lists them all."""
    from datetime import timedelta

    results, ids = tmp_path / "results", []
    for day, label in enumerate(("one", "two", "three", "four")):
        written = {"workload": "cifar-lenet", "variant": "as-written"}
        ms = [
            make_measurement(device="cpu", median_s=2.0, **written),
            make_measurement(device="cuda", device_name="NVIDIA H100", median_s=2.0 if day == 0 else 0.2, **written),
        ]
        result = make_result(ms, label=label)
        started = result.run.started_at + timedelta(days=day)  # one machine a day: the newest are the last two
        run = result.run.model_copy(update={"started_at": started, "finished_at": started + timedelta(minutes=5)})
        ids.append(save_under(results, result.model_copy(update={"run": run})).parent.name)
    monkeypatch.setenv("BENCHSITE_SEED_MACHINES", "2")
    done = build_site(results, tmp_path / "site", strict=True)
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "site" / "seeds" / "002.html").read_text()
    linked = set(re.findall(r'href="\.\./machines/([0-9a-f]{16})\.html"', page))
    assert linked == set(ids[2:]), (linked, ids)  # the two newest, in the claim's table and the figures' table
    text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", visible(page))))
    assert "4 machines have measured this comparison, each counted below" in text
    assert re.search(r"reproduced on 3 machines, differs on 1\b", text), text  # counted over all four
    charted = {
        row["label"]
        for match in re.finditer(r'id="chart-seed-lenet-speedup" data-spec="([^"]*)"', page)
        for rows in json.loads(html.unescape(match.group(1)))["datasets"].values()
        for row in rows
        if row["source"] == "reproduction"
    }
    assert charted == set(ids[2:])
    with (tmp_path / "site" / "seeds" / "002.csv").open(newline="") as handle:
        table = list(csv.DictReader(handle))
    assert sorted(r["machine_id"] for r in table if r["unit"] == "speedup") == sorted(ids)
    assert {r["machine_id"] for r in table if r["unit"].startswith("s per")} == set(ids)  # the figures' medians
    assert 'href="002.csv"' in page or 'href="./002.csv"' in page


def test_the_scale_page_lists_only_the_newest_machines_and_summarises_them_all(tmp_path, monkeypatch):
    """At 100,000 files a table of every machine's Spark points would be megabytes: each section lists and draws
    the BENCHSITE_SCALE_MACHINES newest machines, and the summary above it counts every machine."""
    from datetime import timedelta

    results, ids = tmp_path / "results", []
    point = {"model": "vit-tiny", "batch_size": 16, "partitions": 2}
    for day, label in enumerate(("one", "two", "three", "four")):
        m = make_measurement(workload="spark-inference", variant="as-written", point=point, median_s=0.3 + day / 100)
        result = same_cpu_model(make_result([m], label=label), day + 1)  # four machines of one CPU model
        started = result.run.started_at + timedelta(days=day)  # one machine a day: the newest are the last two
        run = result.run.model_copy(update={"started_at": started, "finished_at": started + timedelta(minutes=5)})
        result = result.model_copy(update={"run": run})
        ids.append(save_under(results, result).parent.name)
    monkeypatch.setenv("BENCHSITE_SCALE_MACHINES", "2")
    done = build_site(results, tmp_path / "site", strict=True)
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "site" / "scale.html").read_text()
    linked = set(re.findall(r'href="machines/([0-9a-f]{16})\.html"', page))
    assert linked == set(ids[2:]), (linked, ids)  # the two newest, never the older two
    text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", visible(page))))
    assert "the 2 most recently contributed of the 4 machines" in text
    # the summary counts all four machines, with the median's interval and the range over machines
    assert re.search(r"AMD EPYC, 2 cores - vit-tiny 16 2 4 [\d,]+ [\d,]+ \.\. [\d,]+ [\d,]+ \.\. [\d,]+", text), text
    charted = {
        row["machine_id"]
        for match in re.finditer(r'id="chart-scale-spark" data-spec="([^"]*)"', page)
        for rows in json.loads(html.unescape(match.group(1)))["datasets"].values()
        for row in rows
    }
    assert charted == set(ids[2:])


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_escaping_maps_each_special_character_to_its_reference_and_keeps_the_rest(raw):
    """site_builder.escape.text (one str.translate) gives, character by character, what its table says: HTML's and
    Markdown's special characters as numeric references, line breaks and tabs as spaces, every other character as
    itself; so no special character is left for the Markdown parser or the browser."""
    from site_builder.escape import text

    out = text(raw)
    expected = "".join(f"&#{ord(c)};" if c in "&<>\"'\\`*_{}[]()#+!|~=:" else " " if c in "\n\r\t" else c for c in raw)
    assert out == expected
    assert not set(out) & set("<>\"'`*_[]()|\n")
