"""Nothing personal leaves the machine: error messages are scrubbed, commands drop paths."""

from __future__ import annotations

import os
import socket

from runner.api import command_line
from runner.results import privacy


def test_scrub_replaces_home_and_host():
    home = os.path.expanduser("~")
    host = socket.gethostname()
    text = privacy.scrub(f"File {home}/projects/x.py, line 3, on {host}")
    if home not in ("", "/"):
        assert home not in text and "~/projects/x.py" in text
    if len(host) >= 3:
        assert host not in text and "<host>" in text


def test_command_line_leaves_paths_out():
    line = command_line(
        {
            "profile": "quick",
            "output": "/home/alice/r.yaml",
            "results_dir": "/home/alice",
            "workload": ["depth-*"],
            "no_profiler": True,
            "device": None,
        }
    )
    assert line == "benchsite run --profile quick --workload 'depth-*' --no-profiler"
    assert "alice" not in line
