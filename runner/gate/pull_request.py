"""`benchsite check-pr`: results are append-only, and a machine's folder belongs to whoever contributed it.

Run on a pull request's git history (the base commit and the head commit):

- a result file (`results/**/*.yaml`) that exists in the base may not be modified, deleted, renamed or have
  its type changed: a published run is what it measured, and a new run is a new file;
- a file added to `results/<machine-id>/` whose earlier files were contributed by someone else needs a
  maintainer's approval (the `maintainer-approved` label): otherwise anyone could add runs to another
  person's machine and move its figures.

Who contributed a file: the owner of the commit that first added it on the base branch. In a GitHub workflow
(`--owners github`) that is the author of the pull request that commit came from, asked of GitHub's API with
the workflow's read-only token (a commit pushed without a pull request belongs to the maintainers); elsewhere
(`--owners git`, and the tests) it is the commit's author e-mail, which a pull request can set at will, so
only the GitHub mode is a check against a contributor.

The workflow runs this, and `benchsite validate`, from the base branch's code: a pull request that edits
`runner/` cannot weaken the check of its own files.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from functools import cache
from pathlib import Path, PurePosixPath

import yaml

from runner.results.storage import Problem
from runner.workloads import custom

APPROVAL_LABEL = "maintainer-approved"
MAINTAINERS = "the maintainers (a commit without a pull request)"


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def _is_result(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return len(parts) >= 2 and parts[0] == "results" and PurePosixPath(path).suffix in (".yaml", ".yml")


def changes(repo: Path, base: str, head: str) -> list[tuple[str, list[str]]]:
    """(status letter, paths) of every change between base and head (renames detected), from the merge base."""
    out = _git(repo, "diff", "--name-status", "-z", "--find-renames", f"{base}...{head}")
    fields = out.split("\0")
    rows, i = [], 0
    while i < len(fields) - 1:
        status = fields[i]
        count = 2 if status[:1] in ("R", "C") else 1
        rows.append((status[:1], fields[i + 1 : i + 1 + count]))
        i += 1 + count
    return rows


def git_owner(repo: Path) -> Callable[[str], str]:
    """The owner of a commit: its author e-mail."""
    return lambda sha: _git(repo, "show", "-s", "--format=%ae", sha).strip()


def github_owner(repository: str, token: str | None = None) -> Callable[[str], str]:
    """The owner of a commit: the author of the pull request it was merged from (GitHub's API)."""
    import urllib.request

    @cache
    def owner(sha: str) -> str:
        request = urllib.request.Request(
            f"https://api.github.com/repos/{repository}/commits/{sha}/pulls",
            headers={
                "Accept": "application/vnd.github+json",
                **({"Authorization": f"Bearer {token}"} if token else {}),
            },
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            pulls = json.load(response)
        merged = [p for p in pulls if p.get("merged_at")]
        return str((merged or pulls)[0]["user"]["login"]) if (merged or pulls) else MAINTAINERS

    return owner


def _own_model(text: str) -> bool:
    """Whether a result file's text measures a user's own model (workload custom); unreadable text is not judged
    here (`benchsite validate` reports it)."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return False
    measurements = data.get("measurements") if isinstance(data, dict) else None
    return isinstance(measurements, list) and any(
        isinstance(m, dict) and m.get("workload") == custom.WORKLOAD for m in measurements
    )


def check(
    repo: Path, base: str, head: str, author: str, owner_of: Callable[[str], str], approved: bool = False
) -> list[Problem]:
    """Every append-only and ownership problem of the changes from base to head, by file."""
    problems: list[Problem] = []
    verbs = {"M": "modifies", "D": "deletes", "R": "renames", "T": "changes the type of", "C": "copies over"}
    added: list[str] = []
    for status, paths in changes(repo, base, head):
        if status == "A":
            if _is_result(paths[0]):
                added.append(paths[0])
            continue
        if status in verbs and _is_result(paths[0]) and (status != "C" or _is_result(paths[-1])):
            problems.append(
                Problem(
                    paths[-1] if status in ("R", "C") else paths[0],
                    "",
                    f"{verbs[status]} the published result file {paths[0]}: results are append-only; "
                    "a new run is a new file",
                )
            )
    merge_base = _git(repo, "merge-base", base, head).strip()
    for path in added:
        if _own_model(_git(repo, "show", f"{head}:{path}")):
            problems.append(
                Problem(
                    path,
                    "",
                    "measures your own model (benchsite run --model): results/ holds the suite the leaderboard "
                    "compares; keep the file out of it",
                )
            )
        folder = str(PurePosixPath(path).parent)
        earlier = [p for p in _git(repo, "ls-tree", "-r", "--name-only", merge_base, "--", folder).splitlines() if p]
        owners = set()
        for other in earlier:
            if not _is_result(other):
                continue
            first = _git(repo, "log", "--diff-filter=A", "--format=%H", merge_base, "--", other).split()
            if first:
                owners.add(owner_of(first[-1]))
        strangers = sorted(owners - {author})
        if strangers and not approved:
            problems.append(
                Problem(
                    path,
                    "",
                    f"{folder}/ holds runs contributed by {', '.join(strangers)}, not by {author}: adding to another "
                    f"contributor's machine needs a maintainer's {APPROVAL_LABEL!r} label",
                )
            )
    return problems


def environment_owner() -> Callable[[str], str] | None:
    """The GitHub owner lookup where a workflow provides the repository and token."""
    repository = os.environ.get("GITHUB_REPOSITORY")
    return (
        github_owner(repository, os.environ.get("GITHUB_TOKEN") or os.environ.get("GH_TOKEN")) if repository else None
    )
