"""The measuring child process: `python -m runner.measure.worker` reads one JSON job on stdin.

It speaks JSON lines on the stdout it was started with. Anything a library prints is redirected to stderr so it
cannot corrupt the protocol, except in a seed's loop, which runs with its streams as its script has them (`_protocol`).
Jobs:

- describe:  the framework's version, build and devices
- selftest:  the sync self-test on one device
- measure:   a list of cases of one workload, variant and device; one `result` line per case
- equivalence: output, loss and gradients of (workload, case) items on the CPU, saved as .npz files for
  runner.measure.equivalence to compare (the reference framework makes the weights and batch the others load)
- compile:   compile cases ahead of their measurement into the run's compile cache; nothing is timed
  (runner.api.compile_ahead)

A job's `compile_cache`, where given, is the folder compilers cache their work in (TORCHINDUCTOR_CACHE_DIR; JAX's
persistent compilation cache under it), so that a point's later rounds load what its first round compiled.

After a failed case the child exits (a CUDA error can poison the whole process); the parent starts a
fresh child for the cases that remain.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import IO, Any, NoReturn

from runner.measure import energy
from runner.measure.monitor import Monitor
from runner.measure.protocol import EXIT_CASE_FAILED, SPARE_READY, log_phases
from runner.measure.timing import ACCEL_MIN_SAMPLE_S, MIN_SAMPLE_S, measure
from runner.results import privacy
from runner.results.energy import figures as energy_figures
from runner.results.energy import min_window as energy_min_window
from runner.results.intervals import summarize
from runner.workloads import get as get_workload
from runner.workloads.base import PointSkipped, Sweep

PROGRESS_EVERY_S = 0.5
OOM_MARKERS = ("out of memory", "OutOfMemoryError", "CUBLAS_STATUS_ALLOC_FAILED", "can't allocate memory")


def _emit(out: IO[str], event: dict[str, Any]) -> None:
    out.write(json.dumps(event) + "\n")
    out.flush()


def error_info(exc: BaseException) -> dict[str, Any]:
    text = f"{type(exc).__name__}: {exc}"
    kind = "OutOfMemory" if isinstance(exc, MemoryError) or any(m in text for m in OOM_MARKERS) else type(exc).__name__
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return {
        "type": kind,
        "message": privacy.scrub(str(exc) or type(exc).__name__)[:4000],
        "traceback": privacy.scrub(tb[-3000:]),
    }


def _framework(name: str) -> Any:
    from runner.frameworks import FRAMEWORKS

    return importlib.import_module(FRAMEWORKS[name])


def import_builder(path: str) -> Any:
    """The builder a workload names as 'module:function' for a framework."""
    module, _, func = path.partition(":")
    return getattr(importlib.import_module(module), func)


def engine_options(program: Any, device: Any) -> dict[str, Any]:
    """How the timing engine times this program on this device: its sync, device timer, sample length and
    warm-up. One place, shared with the overhead benchmark, so what is benchmarked is what is measured."""
    own_sync = getattr(program, "sync", None)  # TF and JAX wait on what the program computed
    timer = None if own_sync is not None else getattr(device, "timer", None)
    return {
        "sync": own_sync or device.sync,
        "timer": timer,
        "warmup_units": getattr(program, "warmup_units", 1),
        "warmup": getattr(program, "warmup", None),
        "min_sample_s": MIN_SAMPLE_S if device.kind == "cpu" or timer is not None else ACCEL_MIN_SAMPLE_S,
    }


def measure_case(job: dict[str, Any], case: Any, device: Any, out: IO[str], index: int) -> dict[str, Any]:
    """Build and time one case; returns the measurement as a dict of the schema's fields."""
    workload = get_workload(job["workload"])
    variant = job["variant"]
    base: dict[str, Any] = {
        "workload": case.workload,
        "workload_hash": case.workload_hash(variant),
        "point": case.point,
        "variant": variant,
        "framework": job["framework"],
        "device": device.kind,
        "device_name": device.name,
        "unit": case.unit,
        "samples_per_unit": case.samples_per_unit,
        "params": case.params,
        "flops_per_unit": case.flops_per_unit,
    }
    started = time.perf_counter()
    phases: dict[str, float] = {}
    # A seed's loop (runner.measure.protocol.seed_process) runs in a fresh interpreter that imported little beyond the
    # framework (runner.measure.worker adds under 1% to torch's tracked objects): its collector is left alone, so that
    # it scans what the seed script's collector scans, when the script's would. Elsewhere the fork server's objects
    # and the harness's would make every full collection slower than the framework's heap alone: freeze what
    # exists before the build, so collections during the measurement, and the one that frees the program after
    # it, scan only what the program built and the loop allocates. Never unfrozen: a full collection of the whole
    # heap costs 0.1 to 0.2 s a measurement (tests/benchmarks/suite_time.py, "close").
    as_script = bool(job.get("seed_process"))
    if not as_script:
        gc.collect()
        gc.freeze()
    builder = import_builder(workload.implementations[job["framework"]])
    program = builder(case, variant, device)
    phases["build_s"] = time.perf_counter() - started
    try:
        built = getattr(program, "params", None)
        if base["params"] is None:
            base["params"] = built
        elif built is not None and built != base["params"]:
            # The gate refuses any count but the suite's: a model that differs is a bug here, not a result.
            raise RuntimeError(
                f"the {job['framework']} model has {built:,} parameters, the suite says {base['params']:,}"
            )
        base["precision"] = program.precision
        device.reset_peak_memory()
        last_progress = [0.0]

        def progress(samples: int, elapsed: float) -> None:
            # A line to the parent at most every PROGRESS_EVERY_S: enough for a progress bar, no cost per sample.
            if elapsed - last_progress[0] >= PROGRESS_EVERY_S:
                last_progress[0] = elapsed
                _emit(out, {"event": "progress", "index": index, "samples": samples, "elapsed": elapsed})

        if not as_script:
            gc.collect()  # the build's garbage (everything older is frozen)
        if hasattr(program, "stream"):  # a streaming point: latencies, not units timed by the engine
            with Monitor() as monitor:
                record = program.stream(on_file=progress)
            base.update(_stream_fields(record))
        else:
            with Monitor() as monitor, energy.opened(job.get("energy") or []) as meters:
                timing = measure(
                    program.run_unit,
                    budget_s=job["budget_s"],
                    target_rel_ci=job.get("target_rel_ci", 0.02),
                    on_sample=progress,
                    meters=[meter for _, meter in meters],
                    min_window_s=energy_min_window([probe for probe, _ in meters], job.get("profile")),
                    **engine_options(program, device),
                )
            phases.update(warmup_s=timing.warmup_s, steady_s=timing.steady_wall_s)
            mark = time.perf_counter()
            base.update(_timed_fields(timing, program, job, case, base["flops_per_unit"]))
            base["energy"] = [
                energy_block(probe, joules, timing, case.samples_per_unit)
                for (probe, _), joules in zip(meters, timing.energy_j, strict=True)
            ]
            phases["profile_s"] = time.perf_counter() - mark
        base.update(
            peak_host_mib=monitor.usage.peak_host_mib,
            peak_device_mib=device.peak_memory_mib(),
            cpu_util=monitor.usage.cpu_util,
            load_avg=monitor.usage.load_avg,
            threads=_framework(job["framework"]).threads(),
            notes=list(getattr(program, "notes", [])),
            interconnect=getattr(program, "interconnect", None),
            runs_as=getattr(program, "runs_as", None),
            spark_master=getattr(program, "spark_master", None),
            collective=program.collective() if hasattr(program, "collective") else None,
        )
    finally:
        mark = time.perf_counter()
        program.close()
        del program
        gc.collect()  # the program's reference cycles (a model's device memory among them) go now
        phases["close_s"] = time.perf_counter() - mark
        base["wall_s"] = time.perf_counter() - started
        _log_phases(job, base, phases)
    return base


def energy_block(probe: dict[str, Any], joules: float, timing: Any, samples_per_unit: int) -> dict[str, Any]:
    """One source's Energy (schema 11) for this process's round: its joules over the steady state, the units it ran
    and the window, with the figures one round gives (runner.results.energy)."""
    one = {"joules": max(0.0, joules), "units": timing.steady_units, "window_s": timing.steady_wall_s}
    return {
        "source": probe["source"],
        "of": probe["of"],
        "domains": probe["domains"],
        "counter_period_s": probe["counter_period_s"],
        "idle_power_w": probe["idle_power_w"],
        "rounds": [one],
        **energy_figures([one], probe["counter_period_s"], probe["idle_power_w"], samples_per_unit),
    }


def _log_phases(job: dict[str, Any], base: dict[str, Any], phases: dict[str, float]) -> None:
    """Where a measurement's wall time went (build, warm-up, steady state, profiled step, close), one JSON line
    in the phase log (runner.measure.protocol.log_phases)."""
    keys = ("workload", "point", "variant", "framework", "device", "wall_s")
    process = {
        "seed_process": bool(job.get("seed_process")),
        "frozen": gc.get_freeze_count(),
        "stdout_redirected": sys.stdout is sys.stderr,  # `_protocol`: never for a seed's loop
        "pid": os.getpid(),
        "ended_at": time.time(),  # wall clock: the gaps between one measurement's end and the next's start
    }
    log_phases({**{k: base.get(k) for k in keys}, **phases, **process})


def _timed_fields(timing: Any, program: Any, job: dict[str, Any], case: Any, flops: float | None) -> dict[str, Any]:
    """A timed point's measurement fields: the engine's samples, their statistics and rates, and (for steps,
    where asked) the top operators from a profiled step after the timing."""
    stats = summarize(timing.samples_s)
    top_ops: list[dict[str, Any]] = []
    if job.get("profile_ops") and case.unit == "step":
        try:  # the profiler needs CUPTI/roctracer; its failure must not cost the measurement
            top_ops = program.top_ops()
        except Exception as exc:
            reason = privacy.scrub(f"{type(exc).__name__}: {exc}")
            timing.warnings.append(f"profiler failed, no top operators: {reason}"[:4000])
    return {
        "status": "ok",
        "warmup_s": timing.warmup_s,
        "samples_s": timing.samples_s,
        "units_per_sample": timing.units_per_sample,
        "timer": timing.timer,
        "median_s": stats.median_s,
        "iqr_s": stats.iqr_s,
        "ci95_s": list(stats.ci95_s) if stats.ci95_s else None,
        "rel_ci_halfwidth": stats.rel_ci_halfwidth,
        "stable": timing.stable,
        "warnings": timing.warnings,
        "samples_per_s": case.samples_per_unit / stats.median_s,
        "achieved_tflops": flops / stats.median_s / 1e12 if flops else None,
        "top_ops": top_ops,
    }


def _stream_fields(record: dict[str, Any]) -> dict[str, Any]:
    """A streaming point's measurement fields: each file's end-to-end latency as a sample (production order),
    their median and its interval, the rows per second achieved, and the raw record, with the figures the
    program derived from it (runner.results.streaming.figures)."""
    latencies = record["latencies_s"]
    stats = summarize(latencies)
    stream = record["stream"]
    return {
        "status": "ok",
        "samples_s": latencies,
        "median_s": stats.median_s,
        "iqr_s": stats.iqr_s,
        "ci95_s": list(stats.ci95_s) if stats.ci95_s else None,
        "rel_ci_halfwidth": stats.rel_ci_halfwidth,
        "stable": None,
        "samples_per_s": record["figures"].achieved_rows_per_s,
        "stream": stream,
        "warnings": [] if stream["bounded"] else [f"not sustained at {stream['offered_rows_per_s']:g} rows/s"],
    }


def failed_below(ladder: str | None, cases: list[Any], index: int, failed: list[list[Any]]) -> str | None:
    """Why a ladder's point is not measured: a lower rung of the same ladder (the same point but for the ladder's
    field) failed earlier in this run (`failed`: [case index, error type] pairs, passed on by
    runner.measure.executor.run_cases to the process that takes over). None where nothing below failed."""
    if ladder is None or ladder not in cases[index].point:
        return None
    point = cases[index].point
    others = {k: v for k, v in point.items() if k != ladder}
    below = [
        (cases[i].point[ladder], kind)
        for i, kind in failed
        if 0 <= i < len(cases)
        and {k: v for k, v in cases[i].point.items() if k != ladder} == others
        and cases[i].point.get(ladder, point[ladder]) < point[ladder]
    ]
    if not below:
        return None
    value, kind = min(below, key=lambda pair: pair[0])
    return f"above a {ladder} that failed: at {ladder} {value:g} the point failed ({kind}), so nothing higher is tried"


class SweepCeiling:
    """Skips the points of an upward sweep (Workload.swept, a runner.workloads.base.Sweep) that would outlast the
    time budget, predicted from the last point measured with the same other fields. On a 16-core CPU that is
    BERT-base training past batch 8 (1.4 s a step there) and data-parallel training past one process (8 s a step):
    each would give one sample and no interval at two units' cost or more. A larger --time-budget measures them."""

    def __init__(self, sweep: Sweep | None, budget_s: float, peaks: dict[str, float] | None = None):
        self.sweep, self.budget_s = sweep, budget_s
        self.peaks = peaks or {}  # this device's matrix-product TFLOP/s measured in the run, by dtype
        self.last: dict[str, tuple[float, float]] = {}  # the other fields -> (swept value, seconds per unit)

    def _key(self, case: Any) -> str | None:
        if self.sweep is None or self.sweep.field not in case.point:
            return None
        return json.dumps({k: v for k, v in case.point.items() if k != self.sweep.field}, sort_keys=True)

    def skip_reason(self, case: Any, precision: str | None = None) -> str | None:
        key = self._key(case)
        if key is None:
            return None
        floor = self._floor_reason(case, precision)
        if floor is not None or key not in self.last:
            return floor
        assert self.sweep is not None
        field, value = self.sweep.field, case.point[self.sweep.field]
        last, seconds = self.last[key]
        predicted = seconds * (value / last) ** self.sweep.exponent
        if predicted <= self.budget_s:
            return None
        how = f"scaled by {field}" if self.sweep.exponent == 1 else "the same work per process, at least as long"
        return (
            f"a unit at {field} {value} would take about {predicted:.3g} s ({seconds:.3g} s measured at {last:g}, "
            f"{how}), more than the {self.budget_s:g} s time budget: raise --time-budget to measure it"
        )

    def _floor_reason(self, case: Any, precision: str | None) -> str | None:
        """Where every process keeps its work (exponent 0), no point of the sweep is shorter than one process's
        share of a unit at the device's measured matrix-product peak: a lower bound from the FLOP count, known
        before anything is measured. Past the budget, every point would be one sample with no interval (and a
        sweep of one point shows no scaling), so the whole sweep is skipped. On a 16-core CPU (1.06 TFLOP/s in
        fp32) that is the data-parallel BERT-base step: 4.3 TFLOP, at least 4 s. The peak is the fp32 one (or
        TF32, where measured) for a point that will run in fp32 (the implementation's `<builder>_precision`
        says, before anything is built), the fastest measured otherwise."""
        assert self.sweep is not None
        if self.sweep.exponent != 0 or not self.peaks or not case.flops_per_unit:
            return None
        dtypes = ("fp32", "tf32") if precision == "fp32" else tuple(self.peaks)
        tflops = max((self.peaks[d] for d in dtypes if d in self.peaks), default=0.0)
        if tflops <= 0:
            return None
        share = case.flops_per_unit / max(1, case.point[self.sweep.field])
        floor = share / (tflops * 1e12)
        if floor <= self.budget_s:
            return None
        return (
            f"each process's step is {share / 1e12:.3g} TFLOP: at least {floor:.3g} s at this device's measured peak "
            f"of {tflops:.3g} TFLOP/s, more than the {self.budget_s:g} s time budget at every {self.sweep.field} "
            f"(one sample, no interval, no scaling to show): raise --time-budget to measure it"
        )

    def measured(self, case: Any, measurement: dict[str, Any]) -> None:
        key = self._key(case)
        if key is not None and measurement.get("median_s"):
            assert self.sweep is not None
            self.last[key] = (case.point[self.sweep.field], measurement["median_s"])


def run_equivalence(job: dict[str, Any], out: IO[str]) -> int:
    """Compute each item's equivalence data and save it as `<dir>/<workload>-<index>-<framework>.npz`."""
    import numpy as np

    from runner.frameworks import REFERENCE

    framework, directory = job["framework"], Path(job["dir"])
    for workload_id, index in job["items"]:
        event: dict[str, Any] = {"event": "equivalence", "workload": workload_id, "index": index}
        try:
            workload = get_workload(workload_id)
            case = workload.cases(job["profile"])[index]
            compute = import_builder(workload.implementations[framework] + "_equivalence")
            if framework == REFERENCE:
                result = compute(case, job["batch"])
            else:
                with np.load(directory / f"{workload_id}-{index}-{REFERENCE}.npz") as ref:
                    result = compute(case, {key: ref[key] for key in ref.files})
            arrays = {f"g{i}": g for i, g in enumerate(result.pop("grads"))}
            arrays.update({f"w{i}": w for i, w in enumerate(result.pop("weights", []))})
            arrays.update({key: np.asarray(result[key]) for key in result})
            target = directory / f"{workload_id}-{index}-{framework}.npz"
            with open(target.with_suffix(".tmp"), "wb") as handle:
                np.savez(handle, **arrays)
            os.replace(target.with_suffix(".tmp"), target)
            event["status"] = "ok"
        except Exception as exc:
            event.update(status="error", error=error_info(exc))
        _emit(out, event)
    return 0


def run_compile(job: dict[str, Any], framework: Any, device: Any, out: IO[str]) -> int:
    """Compile each case ahead of its measurement: build its program and run one unit (Dynamo traces the model,
    Inductor compiles the forward graph, and on the first backward the backward graph, into the compile cache),
    then close it. One `compiled` line per case, with its status and seconds; nothing here is timed for the result
    file, and a failure costs only the head start (the measurement compiles that point itself)."""
    setup = getattr(framework, "compile_ahead_setup", None)
    if setup is not None:
        setup(job["compile_threads"])
    workload = get_workload(job["workload"])
    cases = workload.cases(job["profile"])
    builder = import_builder(workload.implementations[job["framework"]])
    for index in job["case_indices"]:
        started = time.perf_counter()
        event: dict[str, Any] = {"event": "compiled", "index": index, "status": "ok"}
        program = None
        device.reset_peak_memory()
        try:
            program = builder(cases[index], job["variant"], device)
            program.run_unit()
            engine_options(program, device)["sync"]()
        except PointSkipped as skipped:
            event.update(status="skipped", skip_reason=str(skipped))
        except Exception as exc:
            event.update(status="failed", error=error_info(exc))
        finally:
            if program is not None:
                program.close()
            del program
            gc.collect()
        event["seconds"] = time.perf_counter() - started
        _emit(out, event)
        log_phases(
            {
                **{k: job[k] for k in ("workload", "variant", "framework", "device")},
                "point": cases[index].point,
                "ahead": event["status"],
                "wall_s": event["seconds"],
                "peak_device_mib": device.peak_memory_mib(),
            }
        )
    return 0


def run_job(job: dict[str, Any], out: IO[str]) -> int:
    kind = job["kind"]
    if job.get("compile_cache"):  # read when a compiler first caches, long after the framework's import
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = job["compile_cache"]
    framework = _framework(job["framework"])
    if job.get("compile_cache") and hasattr(framework, "use_compile_cache"):  # JAX's, set in the process itself
        framework.use_compile_cache(job["compile_cache"])
    if kind == "describe":
        _emit(out, {"event": "describe", "info": framework.describe()})
        return 0
    device = framework.make_device(job["device"], job.get("cpu_name", "CPU"))
    if kind == "equivalence":
        return run_equivalence(job, out)
    if kind == "selftest":
        _emit(out, {"event": "selftest", "result": framework.sync_selftest(device)})
        return 0
    if kind == "peak":
        _emit(out, {"event": "peak", "peaks": framework.measure_peaks(device)})
        return 0
    if kind == "compile":
        return run_compile(job, framework, device, out)
    if kind != "measure":
        raise ValueError(f"unknown job kind {kind!r}")
    # PyTorch's Inductor otherwise starts its pool of kernel-compiling processes (one per core, each importing
    # PyTorch) whenever a loop is compiled, though a measuring process mostly loads every kernel from the compile
    # cache: the pool is started only when a kernel must be compiled, and never beside a loop that needs none.
    os.environ.setdefault("TORCH_WARM_POOL", "0")
    workload = get_workload(job["workload"])
    cases = workload.cases(job["profile"])
    swept = workload.swept if job.get("sweep_ceiling", True) else None
    ceiling = SweepCeiling(swept, job.get("point_budget_s", job["budget_s"]), job.get("peaks"))
    for index, seconds in sorted((int(i), s) for i, s in job.get("measured", {}).items()):
        ceiling.measured(cases[index], {"median_s": seconds})  # points measured in processes before this one
    module, _, builder = workload.implementations[job["framework"]].partition(":")
    precision_of = getattr(importlib.import_module(module), f"{builder}_precision", None)
    for index in job["case_indices"]:
        _emit(out, {"event": "start", "index": index})
        precision = precision_of(cases[index], job["variant"], device) if precision_of else None
        reason = ceiling.skip_reason(cases[index], precision) or failed_below(
            workload.ladder, cases, index, job.get("failed", [])
        )
        if reason is not None:
            _emit(out, {"event": "result", "index": index, "status": "skipped", "skip_reason": reason})
            continue
        try:
            result = measure_case(job, cases[index], device, out, index)
        except PointSkipped as skipped:
            _emit(out, {"event": "result", "index": index, "status": "skipped", "skip_reason": str(skipped)})
            continue
        except Exception as exc:
            _emit(out, {"event": "result", "index": index, "status": "failed", "error": error_info(exc)})
            return EXIT_CASE_FAILED
        ceiling.measured(cases[index], result)
        _emit(out, {"event": "result", "index": index, "status": "ok", "measurement": result})
    return 0


def main(argv: list[str] | None = None) -> int:
    """Read one job on stdin and run it. `--spare FRAMEWORK [MODULE ...]` (runner.measure.spares): import the
    framework's harness module and the modules named first, say so on stdout, then wait for the job; a spare nobody
    used reads no job and ends."""
    if argv and argv[0] == "--spare":
        _framework(argv[1])
        for name in argv[2:]:
            importlib.import_module(name)
        sys.stdout.write(SPARE_READY + "\n")
        sys.stdout.flush()
    text = sys.stdin.read()
    if not text.strip():
        return 0
    job = json.loads(text)
    protocol = _protocol(job)
    try:
        return run_job(job, protocol)
    except Exception as exc:
        _emit(protocol, {"event": "error", "error": error_info(exc)})
        return 1
    finally:
        _ending["fast"] = bool(job.get("seed_process"))


# Whether the process, its job done, may end without the interpreter's teardown (end)
_ending = {"fast": False}


def end(code: int) -> NoReturn:
    """End a measuring process started as a fresh interpreter. A seed's loop (its job's `seed_process`) ends as a
    forked child does (runner.measure.forkserver): its streams flushed, then os._exit, without the interpreter's
    teardown, which unloads PyTorch and on a GPU destroys the CUDA context after everything was measured and
    reported: about a second a process on the 2-core VM (tests/benchmarks/suite_time.py --parts, the gaps between
    processes). Any other job (an engine's, whose session may stop at exit) ends as a script does, and so does a
    process with child processes still alive (a DataLoader's workers), which the interpreter's exit would end."""
    multiprocessing = sys.modules.get("multiprocessing")
    if _ending["fast"] and not (multiprocessing is not None and multiprocessing.active_children()):
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


def _protocol(job: dict[str, Any]) -> IO[str]:
    """The stream the job's events go on.

    A seed's loop (the job's `seed_process`, set by the parent from runner.measure.protocol.seed_process) runs with its
    standard streams as its script has them: the events go on stdout itself, the pipe the parent reads, and nothing
    is duplicated or redirected. On an H200 host's 16-core CPU, seed 000's loop timed 1.108 (1.062 .. 1.152) of
    its script's time with the set-up below and 0.990 (0.958 .. 1.024) without it, over 24 paired rounds
    (tests/benchmarks/point_probe.py, `worker-redirect` and `worker`), for no reason found. A library's stray print
    there reaches the parent, which skips what is not an event and finds an event that a print without a newline ran
    into (runner.measure.executor).

    Every other job keeps the events on a private copy of stdout and sends stray prints to stderr."""
    if job.get("seed_process"):
        return sys.stdout
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol


if __name__ == "__main__":
    end(main(sys.argv[1:]))
