"""Build the hostile corpus: malicious and broken result files, each with the problem it must be refused for.

    python tests/corpus/build.py      # rewrites tests/corpus/files/ and tests/corpus/expected.json

Every file starts from a real result file (the H100 run in results/) and breaks one thing. expected.json
maps each file to the field and the words its error must name; tests/test_gate.py checks both, and that the
good files still validate and publish next to them. Files too big to commit (over the size limit) are made
by the test itself.
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
BASE = ROOT / "results" / "0c9b4be27c3326c3" / "20261122T071848Z.yaml"
# A schema-3 run with device peaks and equivalence checks, for the rows that forge those.
BASE3 = ROOT / "results" / "0c9b4be27c3326c3" / "20261123T030151Z.yaml"
SCRIPT = "<script>window.__pwned=1</script>"
# Short text fields a contributor controls; each gets markup in one file.
TEXT_FIELDS = [
    ("machine", "cpu", "model"),
    ("machine", "cpu", "vendor"),
    ("machine", "os", "release"),
    ("machine", "os", "distro"),
    ("machine", "accelerators", 0, "model"),
    ("machine", "accelerators", 0, "driver"),
    ("software", "python"),
    ("software", "frameworks", 0, "version"),
    ("run", "command"),
    ("measurements", 0, "device_name"),
]


def _set(data: Any, path: tuple[Any, ...], value: Any) -> None:
    for key in path[:-1]:
        data = data[key]
    data[path[-1]] = value


def _field(path: tuple[Any, ...]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def cases(base: dict[str, Any], base3: dict[str, Any]) -> dict[str, tuple[Any, str, str]]:
    """name -> (content: dict or raw text/bytes, expected field fragment, expected message fragment)."""
    out: dict[str, tuple[Any, str, str]] = {}

    def mutate(name: str, path: tuple[Any, ...], value: Any, field: str, message: str) -> None:
        data = copy.deepcopy(base)
        _set(data, path, value)
        out[name] = (data, field, message)

    for path in TEXT_FIELDS:
        mutate(
            f"script-in-{_field(path).replace('.', '-').replace('[', '-').replace(']', '')}",
            path,
            SCRIPT,
            _field(path),
            "not allowed",
        )
    mutate("bidi-override", ("machine", "cpu", "model"), "Intel\u202e Xeon", "machine.cpu.model", "control")
    # names that look like another device's: a Cyrillic En for the H, invisible characters inside
    cyrillic_h = "NVIDIA \u041d100 80GB HBM3"
    mutate("cyrillic-h-in-gpu-model", ("machine", "accelerators", 0, "model"), cyrillic_h, "model", "mixes the")
    mutate("zero-width-space-in-cpu-model", ("machine", "cpu", "model"), "Intel\u200bXeon", "cpu.model", "invisible")
    rtl_mark = "NVIDIA H100\u200f 80GB HBM3"
    mutate("rtl-mark-in-device-name", ("measurements", 0, "device_name"), rtl_mark, "device_name", "invisible")
    # when and by what: no run from the future or from before the first release, no benchsite that does not exist
    mutate("started-in-2099", ("run", "started_at"), "2099-01-01T00:00:00+00:00", "run.started_at", "in the future")
    mutate("started-in-2020", ("run", "started_at"), "2020-01-01T00:00:00+00:00", "run.started_at", "first release")
    mutate("benchsite-version-99", ("benchsite_version",), "99.0.0", "benchsite_version", "newer than this gate")
    mutate("control-character", ("machine", "cpu", "model"), "Intel\x07Xeon", "machine.cpu.model", "control")
    mutate("overlong-text", ("machine", "cpu", "model"), "X" * 300, "machine.cpu.model", "at most 200")
    mutate("nan-time", ("measurements", 0, "median_s"), float("nan"), "measurements[0].median_s", "got nan")
    mutate("infinite-time", ("measurements", 0, "samples_s", 0), float("inf"), "measurements[0].samples_s[0]", "finite")
    mutate("negative-time", ("measurements", 0, "samples_s", 0), -0.5, "measurements[0].samples_s[0]", "greater than 0")
    mutate("zero-time", ("measurements", 0, "median_s"), 0.0, "measurements[0].median_s", "greater than 0")
    mutate("unknown-key", ("measurements", 0, "turbo_boost"), True, "measurements[0].turbo_boost", "not permitted")
    mutate("wrong-type", ("machine", "memory_gib"), "lots", "machine.memory_gib", "valid number")
    mutate("wrong-schema-version", ("schema_version",), 99, "schema_version", "upgrade")
    mutate("bad-machine-id", ("machine", "id"), "../../etc/passwd", "machine.id", "pattern")

    data = copy.deepcopy(base)
    data["sync_selftests"] = []
    out["unsynchronised-gpu"] = (data, "sync_selftests", "no passed sync self-test")
    data = copy.deepcopy(base)
    for test in data["sync_selftests"]:
        test["passed"] = False
    out["failed-self-test"] = (data, "sync_selftests", "no passed sync self-test")

    data = copy.deepcopy(base)
    gpu = next(i for i, m in enumerate(data["measurements"]) if m["device"] == "cuda" and m["status"] == "ok")
    m = data["measurements"][gpu]
    for key in ("median_s", "iqr_s"):
        m[key] /= 1e4
    m["samples_s"] = [s / 1e4 for s in m["samples_s"]]
    m["ci95_s"] = [s / 1e4 for s in m["ci95_s"]]
    m["achieved_tflops"] *= 1e4
    m["samples_per_s"] *= 1e4
    out["impossible-throughput"] = (data, f"measurements[{gpu}].median_s", "physically impossible")

    data = copy.deepcopy(base)
    data["measurements"][gpu]["median_s"] = max(data["measurements"][gpu]["samples_s"]) * 2
    out["median-outside-samples"] = (data, f"measurements[{gpu}].median_s", "outside its own samples")
    data = copy.deepcopy(base)
    data["measurements"][gpu]["achieved_tflops"] *= 3
    out["inconsistent-flops"] = (data, f"measurements[{gpu}].achieved_tflops", "is not flops_per_unit / median_s")

    # Figures derived from others are recomputed; figures of the workload are the suite's (issue 12's table)
    where = f"measurements[{gpu}]"
    mutate("samples-per-s-1e12", ("measurements", gpu, "samples_per_s"), 1e12, f"{where}.samples_per_s", "is not")
    mutate("params-1e12", ("measurements", gpu, "params"), 10**12, f"{where}.params", "is not the suite's")
    mutate("flops-doubled", ("measurements", gpu, "flops_per_unit"), m["flops_per_unit"] * 2, "flops_per_unit", "suite")
    mutate("iqr-shrunk", ("measurements", gpu, "iqr_s"), 1e-9, f"{where}.iqr_s", "interquartile range")
    mutate("ci-narrowed", ("measurements", gpu, "ci95_s"), [m["median_s"], m["median_s"]], "ci95_s", "95% interval")
    mutate("unknown-workload-hash", ("measurements", gpu, "workload_hash"), "f" * 16, "workload_hash", "not a workload")
    mutate("workload-renamed", ("measurements", gpu, "workload"), "transformer", f"{where}.workload", "workload hash")
    mutate("batch-inflated", ("measurements", gpu, "samples_per_unit"), 10**6, "samples_per_unit", "workload hash")
    mutate("warmup-1e308", ("measurements", gpu, "warmup_s"), 1e308, f"{where}.warmup_s", "longer than the whole run")
    mutate("suite-99", ("suite", "version"), 99, "suite.version", "unknown to this gate")
    # the hardware changed but the id kept: the id is the hash of the hardware, so it no longer matches
    a100 = "NVIDIA A100-SXM4-80GB"
    mutate("gpu-changed-id-kept", ("machine", "accelerators", 0, "model"), a100, "machine.id", "not the hash")
    data = copy.deepcopy(base3)
    data["device_peaks"][0]["tflops"] *= 10
    out["device-peak-forged"] = (data, "device_peaks[0].tflops", "2 n^3 / median_s")
    data = copy.deepcopy(base3)
    check = next(c for c in data["equivalence"] if c["status"] == "passed")
    check["grad_rtol"] = 1.0
    check["grad_rel_diff"] = 0.5
    out["equivalence-forged"] = (data, "equivalence[", "status is 'passed' but")

    # replays: consistent alone, refused beside the committed run they copy ("with" in expected.json)
    for name, scale, message in (("replay-same-run", 1.0, "the same samples"), ("replay-scaled-0.7", 0.7, "by 0.7")):
        out[name] = (replayed(base, scale), ".samples_s", message)

    layers = "".join(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]\n" for i in range(1, 10))
    out["alias-bomb"] = (
        'l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n' + layers,
        "line",
        "anchors and aliases",
    )
    text = yaml.safe_dump(base, sort_keys=False)
    out["truncated"] = (text[: len(text) // 2].rsplit("\n", 3)[0] + "\n  - {workload: [", "", "not valid YAML")
    out["python-object-tag"] = ("schema_version: !!python/object/apply:os.system ['true']\n", "", "not valid YAML")
    out["duplicate-key"] = (text.replace("\nmachine:\n", "\nschema_version: 3\nmachine:\n", 1), "line", "duplicate key")
    out["top-level-list"] = ("- 1\n- 2\n", "", "mapping at the top level")
    out["binary-garbage"] = (random.Random(4).randbytes(2048), "", "not")
    out["empty"] = ("", "", "mapping at the top level")
    return out


def replayed(base: dict[str, Any], scale: float) -> dict[str, Any]:
    """The base run under a new run id, a day later, every time and rate scaled by `scale`."""
    from datetime import datetime, timedelta

    data = copy.deepcopy(base)
    data["run"]["id"] = "f" * 32
    for key in ("started_at", "finished_at"):
        data["run"][key] = (datetime.fromisoformat(str(data["run"][key])) + timedelta(days=1)).isoformat()
    for m in data["measurements"]:
        if m["status"] != "ok":
            continue
        for key in ("median_s", "iqr_s", "warmup_s"):
            m[key] *= scale
        m["samples_s"] = [s * scale for s in m["samples_s"]]
        m["ci95_s"] = [s * scale for s in m["ci95_s"]] if m.get("ci95_s") else None
        for key in ("samples_per_s", "achieved_tflops"):
            if m.get(key):
                m[key] /= scale
    return data


def main() -> None:
    base = yaml.safe_load(BASE.read_text())
    base3 = yaml.safe_load(BASE3.read_text())
    files = HERE / "files"
    files.mkdir(exist_ok=True)
    for old in files.iterdir():
        old.unlink()
    expected = {}
    for name, (content, field, message) in sorted(cases(base, base3).items()):
        path = files / f"{name}.yaml"
        if isinstance(content, dict):
            path.write_text(yaml.safe_dump(content, sort_keys=False, allow_unicode=True, width=120))
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
        expected[path.name] = {"field": field, "message": message}
        if name.startswith("replay-"):
            expected[path.name]["with"] = str(BASE.relative_to(ROOT))
    (HERE / "expected.json").write_text(json.dumps(expected, indent=2) + "\n")
    print(f"{len(expected)} files in {files}")


if __name__ == "__main__":
    main()
