"""What the machine did during a measurement: peak host memory, CPU utilisation, load average.

No sampling thread (it would steal a core from the measurement on small machines): CPU time comes from
os.times() deltas, which include waited-for children such as DataLoader workers; peak RSS from the
kernel's high-water mark, which Linux lets a process reset through /proc/self/clear_refs.
"""

from __future__ import annotations

import os
import resource
import sys
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Usage:
    peak_host_mib: float | None
    cpu_util: float | None
    load_avg: float | None


def _reset_peak_rss() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")  # 5 = reset the peak RSS (VmHWM) to the current RSS
        return True
    except OSError:
        return False


def _peak_rss_mib(reset_worked: bool) -> float | None:
    if reset_worked:
        try:
            with open("/proc/self/status") as handle:
                for line in handle:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) / 1024.0
        except OSError:
            pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # ru_maxrss is KiB on Linux and bytes on macOS; here it is the process lifetime's peak.
    return peak / (1024.0 * 1024.0) if sys.platform == "darwin" else peak / 1024.0


class Monitor:
    def __enter__(self) -> Monitor:
        self._reset = _reset_peak_rss()
        self._times = os.times()
        self._wall = time.perf_counter()
        self.usage = Usage(None, None, None)
        return self

    def __exit__(self, *exc: object) -> None:
        wall = time.perf_counter() - self._wall
        now = os.times()
        cpu = sum(
            getattr(now, f) - getattr(self._times, f) for f in ("user", "system", "children_user", "children_system")
        )
        try:
            load: float | None = os.getloadavg()[0]
        except OSError:
            load = None
        self.usage = Usage(
            peak_host_mib=_peak_rss_mib(self._reset),
            cpu_util=round(cpu / wall, 3) if wall > 0 else None,
            load_avg=load,
        )
