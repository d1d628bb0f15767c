"""Prints, from the phase logs in this folder's tarballs, each arm's device groups (the transformer sweep as written,
with seed 003's twin): the measuring processes, the seconds they spent building their points, the spares' batches
and the seconds waited for them, and the group's span (its first batch's start to its last process's end). Where an
arm was cut off, the points both arms of the pair measured are compared too.

    python tests/benchmarks/records/spare_imports_2026-11-29/summary.py
"""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CALLS = {"go_call1.tgz": ["phases-1-base", "phases-2-on"], "go_call2.tgz": ["phases-1-on", "phases-2-base"]}


def entries(archive: str, name: str) -> list[dict]:
    with tarfile.open(HERE / "h200" / archive) as tar:
        found = tar.extractfile(f"go/ab/{name}.jsonl")
        assert found is not None
        return [json.loads(line) for line in found.read().decode().splitlines()]


def groups(log: list[dict]) -> dict[str, list[dict]]:
    """The log split by device group: a batch goes with the next measurement's device, a twin's line with the last
    one's (a twin follows its point)."""
    following: list[str | None] = []
    device = None
    for e in reversed(log):
        device = e.get("device", device)
        following.append(device)
    following.reverse()
    out: dict[str, list[dict]] = {}
    last = None
    for e, upcoming in zip(log, following, strict=True):
        last = e.get("device", last)
        target = upcoming if "spares" in e else last or upcoming
        assert target is not None, e
        out.setdefault(target, []).append(e)
    return out


def start(e: dict) -> float:
    return e["ended_at"] - e.get("ready_s", e.get("wall_s", 0.0))


def key(e: dict) -> str:
    p = e["point"]
    return f"{p['model']} {p['mode']} {p['batch_size']}"


def main() -> None:
    print("| call | arm | device | measuring processes | build (s) | batches | waited (s) | span (s) |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    spans: dict[tuple[str, str, str], list[dict]] = {}
    for archive, names in CALLS.items():
        for name in names:
            for device, lines in groups(entries(archive, name)).items():
                measured = [e for e in lines if "build_s" in e]
                batches = [e for e in lines if "spares" in e]
                span = max(e["ended_at"] for e in lines) - min(start(e) for e in lines)
                spans[(archive, name, device)] = lines
                print(
                    f"| {archive[3:8]} | {name.split('-', 2)[2]} | {device} | {len(measured)} | "
                    f"{sum(e['build_s'] for e in measured):.1f} | {len(batches)} | "
                    f"{sum(e['ready_s'] for e in batches):.1f} | {span:.1f} |"
                )
    base = spans[("go_call1.tgz", "phases-1-base", "cpu")]
    on = spans[("go_call1.tgz", "phases-2-on", "cpu")]
    last = [e for e in on if "build_s" in e][-1]
    done = [key(e) for e in on if "build_s" in e]
    # the base arm's line for the on arm's last point: same point, same count of earlier measurements of it
    upto = [e for e in base if "build_s" in e][len(done) - 1]
    assert key(upto) == key(last), (key(upto), key(last))
    t_base = upto["ended_at"] - min(start(e) for e in base)
    t_on = last["ended_at"] - min(start(e) for e in on)
    print(
        f"\ncall1, CPU group, up to the on arm's last measurement ({len(done)} processes, through {key(last)}): "
        f"base {t_base:.1f} s, on {t_on:.1f} s, on / base {t_on / t_base:.3f}"
    )


if __name__ == "__main__":
    main()
