"""`benchsite submit` end to end with real git: a bare "upstream", a bare "fork" and a clone of the fork, as a
contributor has them. The command runs as a user runs it, in a subprocess inside the clone."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

GOOD = ROOT / "results" / "0c9b4be27c3326c3" / "20261122T071848Z.yaml"
BAD = ROOT / "tests" / "corpus" / "files" / "impossible-throughput.yaml"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def clone(tmp_path):
    """upstream.git with one commit, fork.git cloned from it, and work/: a clone of the fork with upstream added."""
    seed = tmp_path / "seed"
    (seed / "results").mkdir(parents=True)
    (seed / "results" / "README.md").write_text("results live here\n")
    git(seed, "init", "--quiet", "--initial-branch=main")
    git(seed, "-c", "user.name=Maintainer", "-c", "user.email=m@example.org", "add", ".")
    git(seed, "-c", "user.name=Maintainer", "-c", "user.email=m@example.org", "commit", "--quiet", "-m", "init")
    git(tmp_path, "clone", "--quiet", "--bare", str(seed), "upstream.git")
    git(tmp_path, "clone", "--quiet", "--bare", str(tmp_path / "upstream.git"), "fork.git")
    git(tmp_path, "clone", "--quiet", str(tmp_path / "fork.git"), "work")
    work = tmp_path / "work"
    git(work, "remote", "add", "upstream", str(tmp_path / "upstream.git"))
    git(work, "config", "user.name", "Contributor")
    git(work, "config", "user.email", "c@example.org")
    return work


def run_submit(work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if not (Path(p) / "gh").exists())
    return subprocess.run(
        [sys.executable, "-m", "runner", "submit", *args], cwd=work, capture_output=True, text=True, env=env
    )


def test_submit_pushes_a_branch_with_the_new_file_to_the_fork(clone):
    target = clone / "results" / "0c9b4be27c3326c3" / GOOD.name
    target.parent.mkdir(parents=True)
    shutil.copy(GOOD, target)
    done = run_submit(clone)
    assert done.returncode == 0, done.stdout + done.stderr
    branch = "results/0c9b4be27c3326c3-20261122T071848Z"
    fork = clone.parent / "fork.git"
    assert branch in git(fork, "branch", "--list", branch)
    files = git(fork, "show", "--name-only", "--format=", branch).split()
    assert files == [f"results/0c9b4be27c3326c3/{GOOD.name}"]
    message = git(fork, "log", "-1", "--format=%B", branch)
    assert message.startswith("results: Intel(R) Xeon(R) Processor + 1x NVIDIA H100 80GB HBM3")
    assert "0c9b4be27c3326c3" in message and "`benchsite validate` passed" in message
    assert git(fork, "show", f"{branch}:results/0c9b4be27c3326c3/{GOOD.name}") == GOOD.read_text()
    # branched from upstream's main, and upstream itself untouched
    upstream = clone.parent / "upstream.git"
    assert git(fork, "rev-parse", f"{branch}~1") == git(upstream, "rev-parse", "main")
    assert git(upstream, "branch", "--list").split() == ["*", "main"]
    # no gh here and no GitHub remote: it says what to do next
    assert "Pushed. Open the pull request" in done.stdout and branch in done.stdout


def test_submit_refuses_a_file_that_fails_validation(clone):
    target = clone / "results" / "0c9b4be27c3326c3" / "bad.yaml"
    target.parent.mkdir(parents=True)
    shutil.copy(BAD, target)
    head = git(clone, "rev-parse", "HEAD")
    done = run_submit(clone)
    assert done.returncode == 1
    assert "refusing to submit" in done.stderr and "physically" in done.stderr and "bad.yaml" in done.stderr
    assert git(clone, "rev-parse", "HEAD") == head and git(clone, "branch", "--list").split() == ["*", "main"]
    assert git(clone.parent / "fork.git", "branch", "--list").split() == ["*", "main"]


def test_submit_with_nothing_new_says_what_to_do(clone):
    done = run_submit(clone)
    assert done.returncode == 1 and "run `benchsite run` first" in done.stderr


def test_submit_outside_a_clone_is_a_clear_error(tmp_path):
    done = run_submit(tmp_path)
    assert done.returncode == 1 and "not inside a git clone" in done.stderr


def test_from_benchsite_run_to_benchsite_submit_in_the_documented_steps(clone):
    """docs/contributing.md's steps in a fresh clone: run (a tiny part of the suite), validate, submit."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    run = [sys.executable, "-m", "runner", "run", "--profile", "tiny", "-w", "tabular-mlp", "-f", "torch"]
    run += ["-d", "cpu", "--time-budget", "0.05"]
    done = subprocess.run(run, cwd=clone, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    [written] = list((clone / "results").rglob("*.yaml"))
    validated = subprocess.run(
        [sys.executable, "-m", "runner", "validate", "results/"], cwd=clone, capture_output=True, text=True
    )
    assert validated.returncode == 0, validated.stdout + validated.stderr
    done = run_submit(clone)
    assert done.returncode == 0, done.stdout + done.stderr
    machine = written.parent.name
    branch = f"results/{machine}-{written.stem}"
    pushed = git(clone.parent / "fork.git", "show", "--name-only", "--format=", branch).split()
    assert pushed == [f"results/{machine}/{written.name}"]
