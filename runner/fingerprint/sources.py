"""Where probes read from. Tests point these at canned files and canned command outputs."""

from __future__ import annotations

import platform
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

CommandRunner = Callable[[list[str]], "str | None"]

# A probe command that takes longer than this is treated as missing (a hung nvidia-smi must not hang us).
COMMAND_TIMEOUT_S = 15


def run_command(argv: list[str]) -> str | None:
    """Run a probe command; None when the tool is missing, fails or hangs."""
    if shutil.which(argv[0]) is None:
        return None
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


@dataclass(frozen=True)
class Sources:
    """The machine as the probes see it: a filesystem root, a command runner and the platform."""

    root: Path = Path("/")
    run: CommandRunner = field(default=run_command)
    system: str = field(default_factory=platform.system)
    arch: str = field(default_factory=platform.machine)
    release: str = field(default_factory=platform.release)

    def read(self, path: str) -> str | None:
        try:
            return (self.root / path.lstrip("/")).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    def exists(self, path: str) -> bool:
        return (self.root / path.lstrip("/")).exists()

    def glob(self, path: str, pattern: str) -> list[Path]:
        base = self.root / path.lstrip("/")
        try:
            return sorted(base.glob(pattern))
        except OSError:
            return []
