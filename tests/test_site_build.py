"""The site builds with `mkdocs build --strict` from a results folder, leaves bad files out, and shows hostile
strings from result files as text."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from runner import storage
from runner.schema import Accelerator
from tests.conftest import make_measurement, make_result

ROOT = Path(__file__).parent.parent
HOSTILE = [
    "<script>alert('xss')</script>",
    "<img src=x onerror=alert(1)>",
    "[click](javascript:alert(1))",
    "=HYPERLINK(1)",
]


def build(results: Path, out: Path, strict: bool = False) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BENCHSITE_RESULTS": str(results), "BENCHSITE_STRICT": "1" if strict else "0"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )


def test_hostile_strings_show_as_text_and_bad_files_are_left_out(tmp_path):
    results = tmp_path / "results"
    measurements = [
        make_measurement(device="cpu", device_name=HOSTILE[0]),
        make_measurement(device="cuda", device_name=HOSTILE[1], median_s=0.001, ci95_s=(0.001, 0.001)),
    ]
    result = make_result(measurements)
    machine = result.machine.model_copy(
        update={
            "cpu": result.machine.cpu.model_copy(update={"model": HOSTILE[3]}),
            "accelerators": [Accelerator(vendor="nvidia", model=HOSTILE[0], source="nvml")],
        }
    )
    result = result.model_copy(update={"machine": machine})
    storage.save(result, results / result.machine.id / "good.yaml")
    (results / result.machine.id / "bad.yaml").write_text("schema_version: 1\nrun: {id: 1}\n")

    done = build(results, tmp_path / "site")
    assert done.returncode == 0, done.stderr
    assert "bad.yaml" in done.stderr  # reported by path
    site = tmp_path / "site"
    pages = [
        site / "index.html",
        site / "machines" / result.machine.id / "index.html",
        site / "leaderboards" / "depth-sweep" / "index.html",
        site / "crossover" / "index.html",
    ]
    for page in pages:
        html = page.read_text()
        # Chart specs travel as data in an attribute: quotes and angle brackets must be escaped there, and
        # Vega draws the values as text. Everywhere else the strings must not appear raw at all.
        specs = re.findall(r'data-spec="([^"]*)"', html)
        assert all("<" not in spec and ">" not in spec for spec in specs)
        assert all("/tmp/" not in spec for spec in specs)  # no local paths leak into chart data
        html = re.sub(r'data-spec="[^"]*"', "", html)
        for hostile in HOSTILE:
            assert hostile not in html, (page, hostile)
        assert "javascript:alert" not in html and "<script>alert" not in html
    home = pages[0].read_text()
    assert "1 contributed file(s) failed validation" in home
    assert (site / "assets" / "vega-bundle.js").stat().st_size > 100_000  # served locally
    csv = (site / "leaderboards" / "depth-sweep.csv").read_text()
    assert "'=HYPERLINK(1)" in csv  # the text is kept, as text
    assert "\n=" not in csv and ",=" not in csv  # and no cell starts a spreadsheet formula

    strict = build(results, tmp_path / "strict", strict=True)
    assert strict.returncode != 0 and "bad.yaml" in strict.stderr
