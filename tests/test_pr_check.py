"""Append-only results in pull requests (`benchsite check-pr`), on real git repositories.

Each test builds a repository whose main branch holds result files contributed by Ada, then a pull request
branch made of real commits, and runs the check (in git mode: a commit's owner is its author e-mail)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from runner.cli import app
from runner.gate import pull_request as prcheck
from tests.conftest import ROOT

ADA, BOB, MAINTAINER = "ada@example.org", "bob@example.org", "maint@example.org"
REAL = sorted((ROOT / "results" / "0c9b4be27c3326c3").glob("*.yaml"))
MACHINE = "results/0c9b4be27c3326c3"


def git(repo: Path, *args: str, author: str = MAINTAINER) -> str:
    env = {
        "GIT_AUTHOR_NAME": author.split("@")[0],
        "GIT_AUTHOR_EMAIL": author,
        "GIT_COMMITTER_NAME": "ci",
        "GIT_COMMITTER_EMAIL": "ci@example.org",
        "HOME": str(repo),
        "PATH": "/usr/bin:/bin:/usr/local/bin",
    }
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env).stdout


def commit(repo: Path, message: str, author: str, files: dict[str, Path | None]) -> str:
    """Add (a path to copy), or delete (None), files, and commit them as `author`."""
    for name, source in files.items():
        target = repo / name
        if source is None:
            git(repo, "rm", "-q", name)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, target)
        git(repo, "add", name)
    git(repo, "commit", "-q", "-m", message, author=author)
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def repo(tmp_path) -> Path:
    """main: a README by a maintainer, then Ada's two runs of her machine."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("benchsite\n")
    git(repo, "add", "README.md")
    git(repo, "commit", "-q", "-m", "start")
    commit(repo, "Ada's H100", ADA, {f"{MACHINE}/{REAL[0].name}": REAL[0], f"{MACHINE}/{REAL[1].name}": REAL[1]})
    git(repo, "checkout", "-q", "-b", "pr")
    return repo


def check(repo: Path, author: str, approved: bool = False) -> list[str]:
    problems = prcheck.check(repo, "main", "pr", author, prcheck.git_owner(repo), approved)
    return [str(p) for p in problems]


def test_the_owner_adding_a_run_to_her_machine_passes(repo):
    commit(repo, "another run", ADA, {f"{MACHINE}/{REAL[2].name}": REAL[2]})
    assert check(repo, ADA) == []


def test_a_new_machine_folder_is_anyones(repo):
    commit(repo, "Bob's machine", BOB, {f"results/a23074609b32f305/{REAL[2].name}": REAL[2]})
    assert check(repo, BOB) == []


def test_adding_to_another_contributors_machine_needs_a_maintainer_label(repo):
    commit(repo, "Bob adds to Ada's machine", BOB, {f"{MACHINE}/{REAL[2].name}": REAL[2]})
    [problem] = check(repo, BOB)
    assert problem.startswith(f"{MACHINE}/{REAL[2].name}") and ADA in problem and "maintainer-approved" in problem
    assert check(repo, BOB, approved=True) == []


@pytest.mark.parametrize(
    ("edit", "verb"),
    [
        (lambda repo: {f"{MACHINE}/{REAL[0].name}": REAL[3]}, "modifies"),  # new content, same name
        (lambda repo: {f"{MACHINE}/{REAL[0].name}": None}, "deletes"),
    ],
)
def test_a_published_result_file_is_never_changed_even_by_its_owner_or_with_approval(repo, edit, verb):
    commit(repo, "edit", ADA, edit(repo))
    [problem] = check(repo, ADA, approved=True)
    assert f"{verb} the published result file {MACHINE}/{REAL[0].name}" in problem and "append-only" in problem


def test_a_rename_is_refused(repo):
    git(repo, "mv", f"{MACHINE}/{REAL[0].name}", f"{MACHINE}/20261124T000000Z.yaml")
    git(repo, "commit", "-q", "-m", "rename", author=ADA)
    [problem] = check(repo, ADA)
    assert "renames the published result file" in problem


def test_other_files_are_not_this_checks_business(repo):
    (repo / "README.md").write_text("edited\n")
    git(repo, "commit", "-q", "-am", "docs", author=BOB)
    assert check(repo, BOB) == []


def test_the_command_names_each_file_and_fails(repo, monkeypatch):
    commit(repo, "Bob adds to Ada's machine", BOB, {f"{MACHINE}/{REAL[2].name}": REAL[2]})
    commit(repo, "and edits hers", BOB, {f"{MACHINE}/{REAL[1].name}": REAL[3]})
    runner = CliRunner()
    args = ["check-pr", "main", "pr", "--author", BOB, "--owners", "git", "--repo", str(repo)]
    done = runner.invoke(app, args)
    assert done.exit_code == 1
    assert f"{MACHINE}/{REAL[2].name}" in done.output and "modifies the published" in done.output
    done = runner.invoke(app, ["check-pr", "main", "nope", "--author", BOB, "--owners", "git", "--repo", str(repo)])
    assert done.exit_code == 2
    monkeypatch.delenv("GITHUB_REPOSITORY", raising=False)
    done = runner.invoke(app, ["check-pr", "main", "pr", "--author", BOB, "--repo", str(repo)])
    assert done.exit_code == 2 and "GITHUB_REPOSITORY" in done.output
