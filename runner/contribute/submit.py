"""`benchsite submit`: from new result files in a clone of your fork to a pull request, in one command.

1. Find the result files to submit: the ones given, or every new (untracked) file under results/.
2. Refuse them if `benchsite validate` finds an error in them (checked against every file in results/, so a
   duplicate run id counts too).
3. Create a branch `results/<machine-id>-<time>` from the upstream's base branch (or your fork's, or HEAD),
   add the files, and commit with a message that names the machine.
4. Push the branch to your fork (`origin`), then open the pull request with GitHub's `gh` when it is
   installed, or print the URL and the steps.

Git runs as a subprocess with an argument list (never a shell); file names come from git itself.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timezone
from pathlib import Path

from runner.gate.validate import validate
from runner.results import storage
from runner.results.schema import ResultFile


class SubmitError(Exception):
    """Something the person must fix; the message says what."""


@dataclass
class Submission:
    branch: str
    files: list[Path]
    title: str
    body: str
    pushed: bool = False
    pr_url: str | None = None
    steps: list[str] = field(default_factory=list)


def git(repo: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if check and done.returncode != 0:
        raise SubmitError(f"git {' '.join(args)} failed: {(done.stderr or done.stdout).strip()}")
    return done.stdout


def repo_root(start: Path) -> Path:
    if shutil.which("git") is None:
        raise SubmitError("git is not installed")
    done = subprocess.run(["git", "-C", str(start), "rev-parse", "--show-toplevel"], capture_output=True, text=True)
    if done.returncode != 0:
        raise SubmitError(f"{start} is not inside a git clone: clone your fork of benchsite first")
    return Path(done.stdout.strip())


def new_result_files(repo: Path) -> list[Path]:
    """Untracked and newly added result files under results/, as git reports them (NUL-separated)."""
    out = git(repo, "status", "--porcelain", "-z", "--untracked-files=all", "--", "results/")
    files = []
    for entry in filter(None, out.split("\0")):
        status, name = entry[:2], entry[3:]
        if status in ("??", "A ") and name.endswith((".yaml", ".yml")):
            files.append(repo / name)
    return sorted(files)


def _remotes(repo: Path) -> set[str]:
    return set(git(repo, "remote").split())


def _base_ref(repo: Path, upstream: str, remote: str, base: str) -> str:
    for name in (upstream, remote):
        if name in _remotes(repo):
            fetched = subprocess.run(["git", "-C", str(repo), "fetch", "--quiet", name, base], capture_output=True)
            if fetched.returncode == 0:
                return f"{name}/{base}"
    return "HEAD"


def describe(result: ResultFile) -> str:
    gpus = ", ".join(f"{a.count}x {a.model}" for a in result.machine.accelerators)
    return result.machine.cpu.model + (f" + {gpus}" if gpus else "")


def _github_slug(url: str) -> str | None:
    match = re.search(r"github\.com[:/]([^/]+)/([^/]+?)(?:\.git)?/?$", url)
    return f"{match.group(1)}/{match.group(2)}" if match else None


def prepare(repo: Path, files: list[Path] | None) -> tuple[list[Path], list[ResultFile]]:
    """The files to submit, validated; raises SubmitError listing every problem."""
    files = [f.resolve() for f in files] if files else new_result_files(repo)
    if not files:
        raise SubmitError("no new result files under results/: run `benchsite run` first, or name the files")
    results_dir = repo / "results"
    for f in files:
        if not f.exists():
            raise SubmitError(f"{f} does not exist")
        if results_dir.resolve() not in f.parents:
            raise SubmitError(f"{f} is not under {results_dir}: result files live in results/<machine-id>/")
    report = validate([results_dir])
    mine = {str(f) for f in files}
    problems = [p for p in report.errors if str(Path(p.path).resolve()) in mine]
    if problems:
        raise SubmitError(
            "refusing to submit: `benchsite validate` found errors\n" + "\n".join(f"  {p}" for p in problems)
        )
    loaded = []
    for f in files:
        result, _ = storage.load(f)
        assert result is not None  # validated above
        loaded.append(result)
    return files, loaded


def submit(
    start: Path,
    files: list[Path] | None = None,
    remote: str = "origin",
    upstream: str = "upstream",
    base: str = "main",
    branch: str | None = None,
    push: bool = True,
    use_gh: bool = True,
    note: Callable[[str], None] = lambda text: None,
) -> Submission:
    repo = repo_root(start)
    files, results = prepare(repo, files)
    machines = sorted({r.machine.id for r in results})
    newest = max(r.run.started_at for r in results).astimezone(timezone.utc)
    branch = branch or f"results/{machines[0]}-{newest:%Y%m%dT%H%M%SZ}"
    names = "; ".join(sorted({describe(r) for r in results}))
    title = f"results: {names}"[:120]
    lines = [
        f"Adds {len(files)} result file(s) from `benchsite submit`.",
        "",
        *[
            f"- `{f.relative_to(repo)}`: {describe(r)}, machine `{r.machine.id}`, profile {r.suite.profile}, "
            f"{len(r.measurements)} measurements, frameworks "
            f"{', '.join(fw.name for fw in r.software.frameworks if fw.available) or '-'}; `{r.run.command}`"
            for f, r in zip(files, results, strict=True)
        ],
        "",
        "`benchsite validate` passed on these files.",
    ]
    body = "\n".join(lines)
    if branch in git(repo, "branch", "--list", branch):
        raise SubmitError(f"branch {branch} already exists: pass --branch NAME")
    start_ref = _base_ref(repo, upstream, remote, base)
    note(f"Creating branch {branch} from {start_ref}")
    git(repo, "switch", "--quiet", "-c", branch, start_ref)
    git(repo, "add", "--", *[str(f) for f in files])
    committed = subprocess.run(
        ["git", "-C", str(repo), "commit", "--quiet", "-m", title, "-m", body, "--", *[str(f) for f in files]],
        capture_output=True,
        text=True,
    )
    if committed.returncode != 0:
        message = (committed.stderr or committed.stdout).strip()
        hint = " (set `git config user.name` and `git config user.email`)" if "identity" in message.lower() else ""
        raise SubmitError(f"git commit failed: {message}{hint}")
    sub = Submission(branch, files, title, body)
    if not push:
        sub.steps = [f"git push -u {remote} {branch}", "then open a pull request from that branch"]
        return sub
    if remote not in _remotes(repo):
        raise SubmitError(f"no git remote named {remote!r}: add your fork with `git remote add {remote} URL`")
    note(f"Pushing {branch} to {remote}")
    git(repo, "push", "--quiet", "-u", remote, branch)
    sub.pushed = True
    upstream_url = git(repo, "remote", "get-url", upstream, check=False).strip() if upstream in _remotes(repo) else ""
    fork_url = git(repo, "remote", "get-url", remote).strip()
    target, fork = _github_slug(upstream_url or fork_url), _github_slug(fork_url)
    if use_gh and shutil.which("gh") and target and fork:
        head = f"{fork.split('/')[0]}:{branch}"
        created = subprocess.run(
            ["gh", "pr", "create", "--repo", target, "--base", base, "--head", head, "--title", title, "--body", body],
            capture_output=True,
            text=True,
        )
        if created.returncode == 0:
            sub.pr_url = created.stdout.strip().splitlines()[-1]
            return sub
        note(f"gh could not open the pull request: {created.stderr.strip()}")
    if target and fork:
        sub.steps = [f"https://github.com/{target}/compare/{base}...{fork.split('/')[0]}:{branch}?expand=1"]
    else:
        sub.steps = [
            f"open a pull request from branch {branch} of {fork_url} into {base} of {upstream_url or 'the upstream'}",
        ]
    return sub
