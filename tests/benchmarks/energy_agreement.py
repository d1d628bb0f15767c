"""Does NVML's energy counter agree with the board's power integrated over the same blocks? And what does an epoch
of the seeds cost in joules on this GPU?

    python tests/benchmarks/energy_agreement.py [--workload tabular-mlp --workload mnist-cnn] [--blocks 8]
                                                [--block-seconds 3] [--variant as-written] [--record FILE]

For each workload (PyTorch, the standard profile's first point, on the first CUDA device) one process builds the
program as a measuring process does and runs a warm-up unit. Then, `--blocks` times: synchronise, read the
counter (runner.measure.energy.NvmlCounter), run enough units for `--block-seconds`, synchronise, read it again.
Over the same blocks, runner.measure.energy.NvmlPowerSampler (the source benchsite uses on boards without the
counter) integrates the board's power, and a recorder thread logs the raw readings every 5 ms: the counter (mJ),
nvmlDeviceGetPowerUsage (mW; a one-second average on Ampere and later boards) and the instantaneous power field
(mW), from which the script integrates each power reading offline.

It prints, per workload, joules per unit by the counter (median of the blocks, Student's t interval over them) and,
per power reading, the blocks' median and range of integrated / counter (target: within 5%). Blocks of one process:
an interval about this process, not about the machine. `--record FILE` writes the raw log (the idle seconds before the
first workload, then the first two blocks of each) as gzipped JSON for the tests of the NVML path. Not part of the
test run.
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

TARGET = 0.05
RECORD_EVERY_S = 0.005


class Recorder:
    """Logs (t, counter mJ, power usage mW, instant power mW or None) every RECORD_EVERY_S."""

    def __init__(self, nvml, handle) -> None:
        from runner.measure.energy import NVML_FI_DEV_POWER_INSTANT

        self.nvml, self.handle, self.field = nvml, handle, NVML_FI_DEV_POWER_INSTANT
        self.rows: list[tuple[float, int, int, int | None]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def sample(self) -> None:
        t = time.perf_counter()
        mj = int(self.nvml.nvmlDeviceGetTotalEnergyConsumption(self.handle))
        mw = int(self.nvml.nvmlDeviceGetPowerUsage(self.handle))
        try:
            value = self.nvml.nvmlDeviceGetFieldValues(self.handle, [self.field])[0]
            instant = int(value.value.uiVal) if value.nvmlReturn == 0 else None
        except Exception:
            instant = None
        self.rows.append((t, mj, mw, instant))

    def _run(self) -> None:
        while not self._stop.wait(RECORD_EVERY_S):
            self.sample()

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def integrate(rows: list[tuple], column: int, t0: float, t1: float) -> float | None:
    """Joules of a power column (mW) over [t0, t1]: trapezoids over the samples inside, each end interpolated."""
    points = [(r[0], r[column] / 1e3) for r in rows if r[column] is not None]
    if len(points) < 2 or points[0][0] > t0 or points[-1][0] < t1:
        return None

    def at(t: float) -> float:
        for (ta, wa), (tb, wb) in itertools.pairwise(points):
            if ta <= t <= tb:
                return wa + (wb - wa) * (t - ta) / (tb - ta) if tb > ta else wa
        return points[-1][1]

    inside = [(t0, at(t0))] + [p for p in points if t0 < p[0] < t1] + [(t1, at(t1))]
    return sum((tb - ta) * (wa + wb) / 2 for (ta, wa), (tb, wb) in itertools.pairwise(inside))


def measure_workload(workload: str, variant: str, device_kind: str, blocks: int, block_s: float, nvml, handle) -> dict:
    import importlib

    from runner.frameworks import FRAMEWORKS
    from runner.measure.energy import NvmlCounter, NvmlPowerSampler
    from runner.measure.worker import engine_options, import_builder
    from runner.workloads import get

    spec = get(workload)  # the program exactly as a measuring process builds it
    device = importlib.import_module(FRAMEWORKS["torch"]).make_device(device_kind)
    program = import_builder(spec.implementations["torch"])(spec.cases("standard")[0], variant, device)
    options = engine_options(program, device)
    sync = options["sync"]
    program.run_unit()  # warm-up
    sync()
    start = time.perf_counter()
    program.run_unit()
    sync()
    units = max(1, round(block_s / max(time.perf_counter() - start, 1e-6)))
    counter = NvmlCounter(nvml, handle, 0)
    sampler = NvmlPowerSampler(nvml, handle, 0)
    out = []
    try:
        for b in range(blocks):
            sync()
            t0, c0, s0 = time.perf_counter(), counter.read(), sampler.read()
            for _ in range(units):
                program.run_unit()
            sync()
            t1, c1, s1 = time.perf_counter(), counter.read(), sampler.read()
            out.append({"t0": t0, "t1": t1, "units": units, "counter_j": c1 - c0, "sampler_j": s1 - s0})
            print(f"{workload} block {b + 1}: {units} units, {t1 - t0:.2f} s, counter {c1 - c0:.1f} J, "
                  f"sampler {s1 - s0:.1f} J", file=sys.stderr, flush=True)  # fmt: skip
    finally:
        sampler.close()
    return {"workload": workload, "variant": variant, "blocks": out, "sampler_instant": sampler.instant}


def report(result: dict, device: str) -> None:
    from runner.results.intervals import process_interval

    blocks = result["blocks"]
    per_unit = [b["counter_j"] / b["units"] for b in blocks]
    ci = process_interval(per_unit) if len(per_unit) > 1 else None
    ci_text = f" ({ci[0]:.4g} .. {ci[1]:.4g})" if ci else ""
    window = statistics.median(b["t1"] - b["t0"] for b in blocks)
    power = statistics.median(b["counter_j"] / (b["t1"] - b["t0"]) for b in blocks)
    print(f"\n{result['workload']} ({result['variant']}, PyTorch, {device}): {len(blocks)} blocks of "
          f"{blocks[0]['units']} units, {window:.2f} s each, {power:.0f} W")  # fmt: skip
    print(f"joules per unit by the counter: {statistics.median(per_unit):.4g}{ci_text}")
    sampler_name = "benchsite's sampler (" + ("instant power" if result["sampler_instant"] else "power usage") + ")"
    print("\n| power integrated | blocks | integrated / counter, median | range | within 5% |\n|---|---:|---:|---|---|")
    for key, name in (("sampler_j", sampler_name), ("instant_j", "instant power, 5 ms log"),
                      ("usage_j", "nvmlDeviceGetPowerUsage, 5 ms log")):  # fmt: skip
        ratios = [b[key] / b["counter_j"] for b in blocks if b.get(key) is not None and b["counter_j"] > 0]
        if not ratios:
            print(f"| {name} | 0 | | | not readable |")
            continue
        median = statistics.median(ratios)
        within = all(abs(r - 1) <= TARGET for r in ratios)
        print(f"| {name} | {len(ratios)} | {median:.4f} | {min(ratios):.4f} .. {max(ratios):.4f} | "
              f"{'yes' if within else 'no'} |")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workload", action="append", help="default: tabular-mlp and mnist-cnn (seeds 000, 004)")
    parser.add_argument("--variant", default="as-written")
    parser.add_argument("--device", default="cuda", help="the device the loops run on (NVML reads GPU 0)")
    parser.add_argument("--blocks", type=int, default=8)
    parser.add_argument("--block-seconds", type=float, default=3.0)
    parser.add_argument("--record", type=Path, help="write the raw NVML log here (gzipped JSON)")
    parser.add_argument("--json", type=Path, help="also write every block here")
    args = parser.parse_args()

    import pynvml

    from runner.measure.energy import counter_period, visible_gpu_index

    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(visible_gpu_index())
    name = pynvml.nvmlDeviceGetName(handle)
    recorder = Recorder(pynvml, handle)
    recorder.start()
    time.sleep(1.5)  # idle, for the recorded log's idle segment
    period = counter_period(lambda: pynvml.nvmlDeviceGetTotalEnergyConsumption(handle) / 1e3)
    print(f"{name}: counter update period {period} s", file=sys.stderr)
    results = []
    marks = [(recorder.rows[0][0], time.perf_counter())]  # the idle segment
    try:
        for workload in args.workload or ["tabular-mlp", "mnist-cnn"]:
            point = (workload, args.variant, args.device, args.blocks, args.block_seconds)
            result = measure_workload(*point, pynvml, handle)
            results.append(result)
            marks.append((result["blocks"][0]["t0"], result["blocks"][min(1, len(result["blocks"]) - 1)]["t1"]))
    finally:
        time.sleep(0.05)  # a reading after the last block's end
        recorder.stop()
    for result in results:
        for block in result["blocks"]:
            block["usage_j"] = integrate(recorder.rows, 2, block["t0"], block["t1"])
            block["instant_j"] = integrate(recorder.rows, 3, block["t0"], block["t1"])
        report(result, args.device)
    print(f"\n{name}; counter update period {period} s; target: every block within {TARGET:.0%}")
    if args.json:
        args.json.write_text(json.dumps({"gpu": name, "period_s": period, "results": results}, indent=1))
    if args.record:
        rows = [r for r in recorder.rows if any(a <= r[0] <= b for a, b in marks)]
        t_first = rows[0][0]
        log = {
            "gpu": name,
            "columns": ["t_s", "energy_mj", "power_usage_mw", "power_instant_mw"],
            "segments": [
                {
                    "from_s": a - t_first,
                    "to_s": b - t_first,
                    "what": "idle" if i == 0 else f"{results[i - 1]['workload']}, two blocks",
                }
                for i, (a, b) in enumerate(marks)
            ],
            "rows": [[round(r[0] - t_first, 6), r[1], r[2], r[3]] for r in rows],
        }
        with gzip.open(args.record, "wt") as f:
            json.dump(log, f, separators=(",", ":"))
        print(f"recorded {len(rows)} readings to {args.record}")


if __name__ == "__main__":
    main()
