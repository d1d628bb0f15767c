"""Where the spark-* workloads run, and whether Spark can start here; no PyTorch or pyspark at import time, so
the CLI and the planner can use it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

MASTER_ENV = "BENCHSITE_SPARK_MASTER"
DEFAULT_MASTER = "local[*]"


class SparkUnavailable(RuntimeError):
    """Spark cannot start here; the message says what to install."""


def master_kind(master: str) -> str:
    """What kind of cluster a master URL names, without its host: local, standalone, yarn, k8s or other."""
    if master.startswith("local"):
        return master if re.fullmatch(r"local(\[(\*|\d+)(,\d+)?\])?", master) else "local"
    for prefix, kind in (("spark://", "standalone"), ("yarn", "yarn"), ("k8s://", "k8s"), ("mesos://", "mesos")):
        if master.startswith(prefix):
            return kind
    return "other"


def java_version() -> str | None:
    """The Java runtime Spark would start (JAVA_HOME's, else the one on PATH), or None where there is none."""
    home = os.environ.get("JAVA_HOME")
    exe = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if not exe or not os.path.exists(exe):
        return None
    try:
        out = subprocess.run([exe, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r'version "([^"]+)"', out.stderr + out.stdout)
    return found.group(1) if found else "unknown"


def require_spark(master: str) -> None:
    """Fail early and clearly where the embedded Spark cannot start."""
    try:
        import pyspark  # noqa: F401
    except ImportError as exc:
        raise SparkUnavailable(
            "the spark-* workloads need pyspark: pip install 'benchsite[spark]' (and a Java 17+ runtime)"
        ) from exc
    if master.startswith("local"):
        version = java_version()
        if version is None:
            raise SparkUnavailable(
                "the spark-* workloads need a Java runtime (17 or newer) to start Spark: none found on PATH or in "
                "JAVA_HOME (Debian/Ubuntu: apt-get install -y openjdk-17-jre-headless)"
            )
        number = re.match(r"(1\.)?(\d+)", version)  # "17.0.15", or "1.8.0_392" for Java 8
        major = int(number.group(2)) if number else 0
        if major and major < 17:
            raise SparkUnavailable(f"the spark-* workloads need Java 17 or newer; this machine's java is {version}")
