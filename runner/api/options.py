"""What a run is asked to do: RunOptions (what runner.api reads), `benchsite run`'s options declared once (RunArgs:
the command's signature and --help, the RunOptions they make and the command line the result file records), and
the settings a run reads from the environment."""

from __future__ import annotations

import dataclasses
import inspect
import os
import shlex
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

# Seconds of steady-state timing per measurement, by profile (the warm-up comes on top). A measurement stops earlier
# once its interval is within 2%; the budget caps the noisy ones (the run lists them). What a whole run then takes:
# docs/methodology/cost.md, "The profiles"; raise --time-budget for tighter intervals.
DEFAULT_BUDGET_S = {"tiny": 0.5, "quick": 1.0, "standard": 2.0}
# A case with no result for this long is stopped and recorded as a time-out.
DEFAULT_TIMEOUT_S = {"tiny": 120.0, "quick": 600.0, "standard": 1800.0}


class PlanError(ValueError):
    """The options cannot be run here; the message says what to change."""


@dataclass
class RunOptions:
    profile: str = "quick"
    workloads: list[str] | None = None
    devices: list[str] | None = None
    frameworks: list[str] | None = None
    variants: list[str] | None = None
    time_budget_s: float | None = None
    timeout_s: float | None = None
    output: Path | None = None
    results_dir: Path = Path("results")
    profile_ops: bool = True
    equivalence: bool = True  # prove each non-PyTorch framework's models equal PyTorch's before measuring
    peaks: bool = True  # measure each device's matrix-product throughput (the denominator of "% of peak")
    compile_ahead: bool = True  # compile the points of a compiled loop several at a time first (compile_ahead)
    energy: bool = True  # read the energy counters at each measurement's bounds (runner.measure.energy)
    # time each point a seed script covers against that script, round by round (runner.fidelity); None: on for the
    # standard profile only
    fidelity: bool | None = None
    # independent measuring processes a point is measured in (runner.api.rounds); a twin's script runs once a round
    rounds: int = 3
    command: str = "benchsite run"
    # `--model`: the user's model as every process of the run rebuilds it (runner.workloads.custom.Checked, as JSON);
    # the journal keeps it with the other options, so that --resume measures the same model
    model: str | None = None

    @property
    def twins(self) -> bool:
        return self.profile == "standard" if self.fidelity is None else self.fidelity


def ahead_children_override() -> int | None:
    """BENCHSITE_AHEAD_CHILDREN, where set: how many compile-ahead children side by side (0 or 1: no pass)."""
    forced = os.environ.get("BENCHSITE_AHEAD_CHILDREN", "").strip()
    if not forced:
        return None
    if not forced.isdigit():
        raise PlanError(f"BENCHSITE_AHEAD_CHILDREN={forced!r}: expected a whole number of children (0 or more)")
    return int(forced)


@dataclass(frozen=True)
class Use:
    """What `benchsite run` does with an option beyond typer's part: the RunOptions field it sets (`negated`: a
    --no-X flag, which sets X to False), and its rank in the command line the result file records (None: left out,
    as paths are; `unless_default`: left out while at its default). An --X/--no-X option that defaults to None is
    recorded as whichever of the two was given."""

    field: str | None = None
    negated: bool = False
    recorded: int | None = None
    unless_default: bool = False


Command = TypeVar("Command", bound=Callable[..., Any])


@dataclass
class RunArgs:
    """`benchsite run`'s options, each declared once: its typer option (the command's signature and --help are
    these fields in this order, see `declare`), and its Use (the RunOptions it makes, the command line recorded)."""

    profile: Annotated[
        str,
        typer.Option(
            "--profile",
            "-p",
            help="Sizes: 'quick' (minutes on a laptop), 'standard' (the seeds' sizes, what "
            "the leaderboard compares) or 'tiny' (smoke test).",
        ),
        Use("profile", recorded=1),
    ] = "quick"
    workload: Annotated[
        list[str] | None,
        typer.Option(
            "--workload", "-w", help="Workload id or glob (repeatable), e.g. 'depth-*'. See `benchsite list`."
        ),
        Use("workloads", recorded=2),
    ] = None
    device: Annotated[
        list[str] | None,
        typer.Option("--device", "-d", help="cpu, cuda, rocm or mps (repeatable). Default: every device found."),
        Use("devices", recorded=3),
    ] = None
    framework: Annotated[
        list[str] | None,
        typer.Option(
            "--framework",
            "-f",
            help="torch, tensorflow or jax (repeatable or comma-separated; 'pytorch', 'tf' and 'keras' work too). "
            "Default: every one installed; the others are recorded as skipped with the reason.",
        ),
        Use("frameworks", recorded=4),
    ] = None
    variant: Annotated[
        list[str] | None,
        typer.Option(
            "--variant", help="'as-written' (the seed's loop) or 'tuned' (best the device can do). Default: both."
        ),
        Use("variants", recorded=5),
    ] = None
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Where to write the result: a FILE.yaml, or a folder that gets <machine-id>/<time>.yaml inside "
            "it (anything not ending in .yaml or .yml is a folder). Default: results/<machine-id>/<time>.yaml. "
            "A place that cannot be written is refused before measuring.",
        ),
        Use("output"),
    ] = None
    results_dir: Annotated[
        Path,
        typer.Option(help="Folder that holds results/<machine-id>/."),
        Use("results_dir"),
    ] = Path("results")
    time_budget: Annotated[
        float | None,
        typer.Option(
            "--time-budget",
            help="Seconds of steady-state timing per measurement (default by profile: tiny 0.5, "
            "quick 1, standard 2). Measurements stop earlier once their 95% CI is within 2%; a point of a "
            "batch sweep whose step would outlast the budget is skipped.",
            min=0.01,
        ),
        Use("time_budget_s", recorded=6),
    ] = None
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout", help="Seconds one measurement may run before it is stopped and recorded as a time-out.", min=1
        ),
        Use("timeout_s", recorded=7),
    ] = None
    no_profiler: Annotated[
        bool,
        typer.Option("--no-profiler", help="Skip the per-device top-operator profile of the transformer steps."),
        Use("profile_ops", negated=True, recorded=8),
    ] = False
    no_energy: Annotated[
        bool,
        typer.Option(
            "--no-energy",
            help="Do not read the energy counters (NVIDIA's NVML, AMD's amdsmi, Apple's powermetrics, the CPU's "
            "RAPL) around each measurement, nor measure their update period and idle power first (about 3 s a source).",
        ),
        Use("energy", negated=True, recorded=16),
    ] = False
    no_compile_ahead: Annotated[
        bool,
        typer.Option(
            "--no-compile-ahead",
            help="Compile each point of a compiled loop (the tuned transformer sweep on a GPU) only in its own "
            "measurement, one after another, instead of several at a time first. Slower; what is timed is the same.",
        ),
        Use("compile_ahead", negated=True, recorded=9),
    ] = False
    fidelity: Annotated[
        bool | None,
        typer.Option(
            "--fidelity/--no-fidelity",
            help="Time each as-written point a seed script covers (seeds 000 to 004: the tabular MLP, depths 2, 8 "
            "and 12, LeNet, BERT-base training at batch 8, the MNIST example) against that script, run in a fresh "
            "interpreter round by round with benchsite's own measurement; both lists go in the file and the site "
            "keeps a harness-affected point out of its verdicts. Default: on for the standard profile.",
        ),
        Use("fidelity", recorded=11),
    ] = None
    rounds: Annotated[
        int,
        typer.Option(
            "--rounds",
            help="Independent processes each point is measured in (on a machine with an accelerator the CPU's and "
            "the accelerator's alternate, round by round); a point's interval and a speedup's come from its rounds, "
            "and a fidelity twin's script runs once a round. The time budget is shared among the rounds. Two is the "
            "least that gives an interval.",
            min=1,
            max=50,
        ),
        Use("rounds", recorded=12, unless_default=True),
    ] = 3
    no_equivalence: Annotated[
        bool,
        typer.Option(
            "--no-equivalence",
            help="Skip the check that TensorFlow's and JAX's models compute what PyTorch's do (about 10 s on 2 "
            "cores). The site shows their results as unchecked.",
        ),
        Use("equivalence", negated=True, recorded=10),
    ] = False
    # no RunOptions field: the measuring processes read it from the environment (runner.engines.spark.inference)
    spark_master: Annotated[
        str | None,
        typer.Option(
            "--spark-master",
            envvar="BENCHSITE_SPARK_MASTER",
            help="Run the spark-* workloads on this Spark cluster (spark://host:7077, yarn, k8s://...) instead of "
            "an embedded local[*] Spark. The file records the master's kind, never its address.",
        ),
        Use(recorded=13),
    ] = None
    # --model and its options: `benchsite run` checks the model and sets RunOptions.model, which every process of the
    # run rebuilds it from (runner.workloads.custom); a path can name the user, so none is recorded in the file
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="Measure your own PyTorch model instead of the suite: path/to/file.py:FUNCTION (a function "
            "returning a torch.nn.Module), timm:NAME or hf:MODEL_TYPE (random weights; nothing is downloaded). "
            "Needs --input-shape; see `docs/your-model.md`.",
        ),
        Use(),
    ] = None
    input_shape: Annotated[
        str | None,
        typer.Option(
            "--input-shape",
            help="With --model: one sample's input, e.g. 3,224,224 (a float tensor) or tokens:128 (token ids).",
        ),
        Use(),
    ] = None
    classes: Annotated[
        int,
        typer.Option("--classes", help="With --model: the classes its logits score (cross-entropy targets).", min=2),
        Use(),
    ] = 10
    vocab: Annotated[
        int | None,
        typer.Option(
            "--vocab",
            help="With --model and tokens: the vocabulary size (default: the model config's vocab_size).",
            min=2,
        ),
        Use(),
    ] = None
    mode: Annotated[
        list[str] | None,
        typer.Option(
            "--mode", help="With --model: train, infer or both (repeatable or comma-separated). Default: train."
        ),
        Use(recorded=14),
    ] = None
    batch_size: Annotated[
        str | None,
        typer.Option(
            "--batch-size",
            help="With --model: batch sizes, comma-separated, e.g. 8,32,128 (default by profile: tiny 2, quick 8 and "
            "32, standard 8, 32 and 128).",
        ),
        Use(recorded=15),
    ] = None
    resume: Annotated[
        bool,
        typer.Option(
            "--resume",
            help="Finish this machine's newest interrupted run (killed, crashed, out of memory, Ctrl-C): what it "
            "measured is kept from its journal (.benchsite-journal/ beside the results folder), the rest is "
            "measured with the run's own options, and one file is written with its run id. Give the same "
            "--output/--results-dir as the run had; other options are the run's.",
        ),
    ] = False

    @classmethod
    def uses(cls) -> Iterator[tuple[dataclasses.Field[Any], Any, Use]]:
        """Each option's field, its annotation (the type and the typer option) and its Use."""
        hints = typing.get_type_hints(cls, include_extras=True)
        for f in dataclasses.fields(cls):
            use = next((m for m in hints[f.name].__metadata__ if isinstance(m, Use)), Use())
            yield f, hints[f.name], use

    @classmethod
    def declare(cls, command: Command) -> Command:
        """Give `command`, which takes these options as keywords, the signature typer reads (inspect.signature):
        one parameter a field, in their order, annotated with its typer option and defaulting to its default."""
        parameters = [
            inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=annotation)
            for f, annotation, _ in cls.uses()
        ]
        command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
        return command

    def options(self) -> RunOptions:
        """The RunOptions these options ask for, with the command line the result file records."""
        values: dict[str, Any] = {}
        for f, _, use in self.uses():
            if use.field is not None:
                value = getattr(self, f.name)
                values[use.field] = not value if use.negated else value
        return RunOptions(**values, command=command_line(self.recorded()))

    def recorded(self) -> dict[str, Any]:
        """The options the recorded command line shows, in its order, as command_line takes them."""
        args: dict[str, Any] = {}
        for f, _, use in sorted(self.uses(), key=lambda item: item[2].recorded or 0):
            value = getattr(self, f.name)
            if use.recorded is None or (use.unless_default and value == f.default):
                continue  # never recorded, or at its default
            if value is False and f.default is None:  # --no-X of an --X/--no-X option
                args[f"no_{f.name}"] = True
            else:
                args[f.name] = value
        return args


def command_line(args: dict[str, Any]) -> str:
    """The benchsite command as run, without paths (they can name the user) or a Spark master's address."""
    parts = ["benchsite", "run"]
    for key, value in args.items():
        if value in (None, [], False) or key in ("output", "results_dir"):
            continue
        flag = "--" + key.replace("_", "-")
        if key == "spark_master":  # a cluster's address names the user's hosts: its kind only
            from runner.engines.spark.master import master_kind

            value = master_kind(str(value))
        for item in value if isinstance(value, list) else [value]:
            parts += [flag] if item is True else [flag, str(item)]
    return shlex.join(parts)[:200]
