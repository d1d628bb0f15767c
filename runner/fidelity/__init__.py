"""Fidelity: on this host, does benchsite's as-written loop time what the seed's own script times?

`runner/fidelity/seeds/seed_NNN.py` are the seeds' loops transcribed line by line (their models, DataLoader
settings, optimisers, host syncs and prints) as plain standalone scripts: each imports its framework and nothing
from benchsite, times its loop after one warm-up unit and prints one JSON line, the mean seconds per unit. They
ship with the runner so that every contributor's machine can run them.

For an as-written point the twin covers (`twin_for`), a run with fidelity on alternates, round by round, the
point's own rounds (each a fresh measuring process, as `benchsite run` measures every point: runner.api.rounds) and
the script in a freshly started interpreter (`run_script`), which side first alternating from round to round
(`script_first`), and records both lists in the
measurement's `fidelity` block. Both lists are the mean seconds per unit of a run, the statistic a script's own
timing of N units gives. The ratio is the harness's geometric mean over the script's, and its 95% interval is
Welch's on the logarithms (`INTERVAL`, "welch-log"): Student's t at the Satterthwaite degrees of freedom, so that
two or three rounds a side give the wide interval they warrant. Files before schema 7 used a seeded bootstrap of
the ratio of medians ("bootstrap-median"), which at two rounds a side reads a harness effect into noise: the host's
spread between processes alone gave a harness-affected verdict in 14 to 25% of two-round twins in simulation
(tests/benchmarks/twin_interval.py: a spread of 10 to 20%). The gate recomputes the figures from the lists by the
file's own method (`summarise`), so an edited figure is refused; the site judges every twin by the current method,
and keeps a measurement whose interval lies wholly outside LOW .. HIGH out of every verdict.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import random
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from runner.results.intervals import split_rounds

if TYPE_CHECKING:  # the gate imports this module: it must not import the measuring code
    from runner.measure.spares import Spare

SCRIPTS = Path(__file__).resolve().parent / "seeds"
# Hashes of the earlier versions of each shipped script, by name: append the old hash whenever a script changes.
PAST_SCRIPTS = Path(__file__).resolve().parent / "past_scripts.json"
LOW, HIGH = 0.95, 1.05  # a harness that times the seed's loop within 5% of the script is faithful
# How `ratio` and `ci95` follow from the two lists, by the name a file's `interval` gives (schema 7); files before
# schema 7 name none and used the first.
Interval = Literal["bootstrap-median", "welch-log"]
INTERVAL: Interval = "welch-log"
BOOTSTRAP = 2000  # bootstrap-median: draws, and their fixed seed (anyone recomputes the same interval)
BOOTSTRAP_SEED = 20261124
_BOOTSTRAP_STATE = random.Random(BOOTSTRAP_SEED).getstate()[1]  # the Mersenne Twister's 624 words and position
# A twin's script times about a round's share of the budget of units, at most this long: the spread that matters
# is between processes, which more rounds capture better than longer ones.
SIDE_S = 1.0
# Welch's interval needs two rounds a side: a run of fewer rounds has no twin.
MIN_ROUNDS = 2
# The depths of seed 001's sweep that are twinned: the smallest (launch- and Python-bound), the middle and the
# largest (compute-bound).
TWIN_DEPTHS = (2, 8, 12)
# Devices a transcription can time: it synchronises CUDA (ROCm's PyTorch is driven through the same API) and
# needs nothing on a CPU. Apple's MPS is not twinned: the seeds' code never synchronises it.
TWIN_DEVICES = {"cpu": "cpu", "cuda": "cuda", "rocm": "cuda"}
# What every transcription imports before its timed loop: PyTorch, and torch._dynamo, which PyTorch's optimizers import
# when first constructed (3.5 s on an H100 host); seed 003's script imports transformers as well, and its BERT
# classes' module when it first uses them (runner.measure.protocol.TRANSFORMER_MODULES). A spare
# interpreter for a script (runner.measure.spares) imports them ahead; tests/test_spares.py checks that each script
# has imported them by the time its timer starts.
SCRIPT_IMPORTS = ("torch", "torch._dynamo")
SCRIPT_IMPORTS_BY_SEED = {"003": ("transformers", "transformers.models.bert.modeling_bert")}

Verdict = Literal["faithful", "harness-affected", "inconclusive"]


@dataclass(frozen=True)
class Twin:
    """The script that transcribes a point's seed, and the arguments that make it that point."""

    seed: str
    args: tuple[str, ...]
    unit_flag: str = "--epochs"

    @property
    def script(self) -> str:
        return f"seed_{self.seed}.py"

    @property
    def path(self) -> Path:
        return SCRIPTS / self.script

    @property
    def imports(self) -> tuple[str, ...]:
        """The modules the script imports before its timed loop in any case (a spare imports them ahead)."""
        return (*SCRIPT_IMPORTS, *SCRIPT_IMPORTS_BY_SEED.get(self.seed, ()))


def script_sha256(name: str) -> str | None:
    """The hash of a shipped transcription, or None if there is none of that name."""
    path = SCRIPTS / name
    if path.parent != SCRIPTS or not path.is_file():
        return None
    return hashlib.sha256(path.read_bytes()).hexdigest()


def shipped_sha256(name: str) -> set[str]:
    """Every hash a release of benchsite shipped for this transcription: today's and those in PAST_SCRIPTS (a
    file measured with an earlier version of a script stays valid; a script nobody shipped does not)."""
    current = script_sha256(name)
    return {current, *_past_scripts().get(name, [])} if current is not None else set()


@functools.cache
def _past_scripts() -> dict[str, list[str]]:
    """PAST_SCRIPTS, read once per process (the gate asks for every twinned measurement of every file)."""
    past: dict[str, list[str]] = json.loads(PAST_SCRIPTS.read_text())
    return past


def twin_for(
    workload: str, variant: str, point: dict[str, Any], config: dict[str, Any], framework: str, device: str
) -> Twin | None:
    """The transcription that times this PyTorch as-written point as its seed's script does, or None."""
    if variant != "as-written" or framework != "torch" or device not in TWIN_DEVICES:
        return None
    if workload == "tabular-mlp":
        return Twin("000", ("--n", str(config["n"])))
    if workload == "depth-sweep" and point.get("depth") in TWIN_DEPTHS:
        return Twin("001", ("--depth", str(point["depth"]), "--n", str(config["n"])))
    if workload == "cifar-lenet":
        return Twin("002", ("--n", str(config["n"]), "--batch", str(config["batch"])))
    if workload == "transformer" and (point.get("model"), point.get("mode"), point.get("batch_size")) == (
        "bert-base",
        "train",
        8,
    ):
        return Twin("003", ("--batch", "8"), unit_flag="--steps")
    if workload == "mnist-cnn":
        return Twin("004", ("--n", str(config["n"])))
    return None


def expected_twin(m: Any, profile: str) -> Twin | None:
    """The twin a measurement of this profile's suite should have (None for a point no script covers, or one the
    suite no longer has)."""
    from runner.workloads import get

    try:
        cases = get(m.workload).cases(profile)
    except (KeyError, ValueError):
        return None
    case = next((c for c in cases if c.point == m.point), None)
    if case is None:
        return None
    return twin_for(m.workload, m.variant, m.point, case.config, m.framework, m.device)


class ScriptFailed(RuntimeError):
    pass


def run_script(twin: Twin, device: str, units: int, timeout_s: float, spare: Spare | None = None) -> float:
    """The transcription in a freshly started interpreter, as a user runs it: mean seconds per unit over `units`
    units after its warm-up. Its prints go to a file, as the measuring process's do. `spare`: an interpreter started
    ahead that has imported what the script imports first (runner.measure.spares, Twin.imports) and runs the script as
    `__main__`. Raises ScriptFailed."""
    argv = [str(twin.path), "--device", TWIN_DEVICES[device], twin.unit_flag, str(units), *twin.args]
    with contextlib.ExitStack() as stack:
        log = spare.stderr if spare is not None else stack.enter_context(tempfile.TemporaryFile())
        cwd = stack.enter_context(tempfile.TemporaryDirectory(prefix="benchsite-twin-"))
        try:
            if spare is not None:
                from runner.measure import spares

                with spare.stderr:
                    code, stdout = spares.run_script(spare, argv, Path(cwd), timeout_s)
                    log.seek(0)
                    err = log.read()
            else:
                from runner.measure.spares import end_group

                # its own session, as a spare's: what it leaves running is stopped with it (end_group)
                proc = subprocess.Popen(
                    [sys.executable, *argv],
                    stdout=subprocess.PIPE,
                    stderr=log,
                    text=True,
                    cwd=cwd,
                    start_new_session=True,
                )
                try:
                    stdout, _ = proc.communicate(timeout=timeout_s)
                finally:
                    end_group(proc.pid)  # on a timeout or Ctrl-C, the script itself too
                    proc.wait()
                code = proc.returncode
                log.seek(0)
                err = log.read()
        except subprocess.TimeoutExpired:
            raise ScriptFailed(f"{twin.script} did not finish within {timeout_s:.0f} s") from None
        if code:
            tail = err.decode("utf-8", errors="replace").strip().splitlines()[-1:] or ["no output"]
            raise ScriptFailed(f"{twin.script} exited with code {code}: {tail[0][:500]}")
    try:
        per_unit = float(json.loads(stdout.strip().splitlines()[-1])["per_unit_s"])
    except (IndexError, KeyError, ValueError, TypeError) as exc:
        raise ScriptFailed(f"{twin.script} printed no figure: {exc}") from None
    if not per_unit > 0:
        raise ScriptFailed(f"{twin.script} printed {per_unit} s per unit")
    return per_unit


def script_first(round_: int) -> bool:
    """Whether the script runs before the harness in this round (0-based). Round 1 measures the harness first (it
    is the run's own measurement); after that the order alternates, so that a drift of the host's speed over the
    rounds, or whatever one process leaves the next (freed memory, a core's clock), weighs on both sides alike
    rather than always on the side that runs second."""
    return round_ % 2 == 1


def units_for(per_unit_s: float, seconds: float) -> int:
    """Units a script run times to last about `seconds` (at least one)."""
    return max(1, round(seconds / per_unit_s)) if per_unit_s > 0 else 1


def mean_per_unit(samples_s: list[float]) -> float:
    """A measurement's mean seconds per unit (each sample is per unit already): the statistic a script's own timing
    of N units as one block gives."""
    return sum(samples_s) / len(samples_s)


def harness_rounds(samples_s: list[float], sizes: list[int]) -> list[float]:
    """The harness's side of a twin with rounds (schema 9): each round's mean seconds per unit, the rounds cutting
    `samples_s` by their sizes; without rounds (sizes empty), the measurement's own mean, round 1 of the older twins."""
    if not sizes:
        return [mean_per_unit(samples_s)]
    return [mean_per_unit(run) for run in split_rounds(samples_s, sizes)]


@dataclass(frozen=True)
class Summary:
    ratio: float
    ci95: tuple[float, float]
    verdict: Verdict


def summarise(harness_s: list[float], script_s: list[float], interval: Interval = INTERVAL) -> Summary:
    """The ratio (harness over script), its 95% interval by the named method, and the verdict: faithful when the
    interval lies inside LOW .. HIGH, harness-affected when it lies wholly outside, inconclusive when it is too
    wide to tell."""
    if interval == "welch-log":
        ratio, ci95 = _welch_log(harness_s, script_s)
    else:
        ratio, ci95 = _bootstrap_median(harness_s, script_s)
    lo, hi = ci95
    if lo >= LOW and hi <= HIGH:
        verdict: Verdict = "faithful"
    elif hi < LOW or lo > HIGH:
        verdict = "harness-affected"
    else:
        verdict = "inconclusive"
    return Summary(ratio, ci95, verdict)


def _welch_log(harness_s: list[float], script_s: list[float]) -> tuple[float, tuple[float, float]]:
    """The ratio of geometric means and Welch's 95% interval for it: the difference of the logarithms' means,
    plus or minus Student's t (0.975, Satterthwaite's degrees of freedom) times its standard error. A side with one
    round has no spread to go on: it needs two."""
    from scipy.special import stdtrit  # the gate imports this module; SciPy's special functions load in ~0.1 s

    if min(len(harness_s), len(script_s)) < 2:
        raise ValueError("Welch's interval needs at least two rounds a side")
    logs_h = [math.log(x) for x in harness_s]
    logs_s = [math.log(x) for x in script_s]
    diff = statistics.fmean(logs_h) - statistics.fmean(logs_s)
    var_h = statistics.variance(logs_h) / len(logs_h)
    var_s = statistics.variance(logs_s) / len(logs_s)
    se = math.sqrt(var_h + var_s)
    if se == 0:  # both sides constant: no spread to widen the interval
        return math.exp(diff), (math.exp(diff), math.exp(diff))
    df = (var_h + var_s) ** 2 / (var_h**2 / (len(logs_h) - 1) + var_s**2 / (len(logs_s) - 1))
    half = float(stdtrit(df, 0.975)) * se
    return math.exp(diff), (math.exp(diff - half), math.exp(diff + half))


def _bootstrap_median(harness_s: list[float], script_s: list[float]) -> tuple[float, tuple[float, float]]:
    """Files before schema 7: the ratio of medians and a seeded bootstrap of it over the rounds (BOOTSTRAP draws).

    Each draw resamples the harness's rounds, then the script's, by `int(random() * n)` from one `random.Random`
    seeded with BOOTSTRAP_SEED; the interval is the 2.5th and 97.5th percentile of the sorted ratios. The draws are
    made at once in NumPy from the same Mersenne Twister state (its `random_sample` is Python's `random()`, bit for
    bit), so the interval is exactly the one the loop gives (tests/test_fidelity.py checks it against that loop),
    about nine times sooner (4.2 against 0.48 ms a twin on a 2-core VM): the gate and every site build recompute it
    for each twin of the older files."""
    import numpy as np  # imported here: the gate and the run import this module and load NumPy for nothing else

    ratio = statistics.median(harness_s) / statistics.median(script_s)
    n_h, n_s = len(harness_s), len(script_s)
    stream = np.random.RandomState()
    words, position = np.array(_BOOTSTRAP_STATE[:624], dtype=np.uint32), int(_BOOTSTRAP_STATE[624])
    stream.set_state(("MT19937", words, position, 0, 0.0))  # no Gaussian cached: random_sample draws none
    uniform = stream.random_sample(BOOTSTRAP * (n_h + n_s)).reshape(BOOTSTRAP, n_h + n_s)
    harness = np.asarray(harness_s, dtype=float)[(uniform[:, :n_h] * n_h).astype(np.intp)]
    script = np.asarray(script_s, dtype=float)[(uniform[:, n_h:] * n_s).astype(np.intp)]
    draws = np.sort(np.median(harness, axis=1) / np.median(script, axis=1))
    return ratio, (float(draws[int(0.025 * BOOTSTRAP)]), float(draws[int(0.975 * BOOTSTRAP) - 1]))


def block(twin: Twin, device: str, harness_s: list[float], script_s: list[float], units: list[int]) -> dict[str, Any]:
    """The measurement's `fidelity` field (runner.results.schema.Fidelity) from the two lists."""
    s = summarise(harness_s, script_s)
    return {
        "script": twin.script,
        "script_sha256": script_sha256(twin.script),
        "args": ["--device", TWIN_DEVICES[device], *twin.args],
        "rounds": len(script_s),
        "units": units,
        "script_s": script_s,
        "harness_s": harness_s,
        "interval": INTERVAL,
        "ratio": s.ratio,
        "ci95": list(s.ci95),
        "verdict": s.verdict,
    }
