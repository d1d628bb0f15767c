"""`benchsite`: the command line. Options, progress and printing only, over the packages that do the work:
runner.api (run), runner.gate (validate, check-pr), runner.contribute (submit, compare), runner.fingerprint,
runner.results (schema, the files) and the site builder (site build, site serve)."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from runner.api.options import RunArgs  # `benchsite run`'s options
from runner.measure.executor import Interrupted  # what Ctrl-C during a measurement raises

if TYPE_CHECKING:
    from runner.api import Group, Plan
    from runner.results.schema import Machine, Measurement, ResultFile
    from runner.workloads import Case

app = typer.Typer(
    name="benchsite",
    help="Should I train on the CPU or the GPU, and with which framework? benchsite measures the standard "
    "workload suite on every device and framework of this machine and writes one result file to share.",
    no_args_is_help=True,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
)
console = Console()
err = Console(stderr=True)
UNSTABLE_LISTED = 5  # the unstable measurements a run's end names, the widest first
# `benchsite list`'s columns, each with the terminal width from which it is shown
LIST_COLUMNS = {"id": 0, "seed": 0, "unit": 0, "points": 0, "frameworks": 0, "params": 110, "what": 150}


@app.command()
@RunArgs.declare
def run(**values: Any) -> None:
    """Measure the suite on this machine and write one result file.

    Each measurement runs in its own process: a crash, an out-of-memory error or a hang is recorded in the
    file and the suite goes on. Ctrl-C stops and still writes what finished.
    """
    from runner import api

    args = RunArgs(**values)
    if args.spark_master:  # the measuring processes read it (runner.engines.spark.inference)
        os.environ["BENCHSITE_SPARK_MASTER"] = args.spark_master
    # Ctrl-C must stop the run cleanly even where the shell started us with SIGINT ignored
    # (background jobs of non-interactive shells): the finished measurements are still written.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    options = args.options()
    if args.model is not None or args.input_shape is not None:
        options = _with_model(args, options)
    recovered = None
    try:
        with console.status("Probing frameworks and hardware ..."):
            if args.resume:
                plan, recovered = api.plan_resumed(options)
            else:
                plan = api.plan_run(options)
    except api.PlanError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(2) from None
    except (KeyboardInterrupt, Interrupted):
        err.print("Interrupted before any measurement; nothing was written.")
        raise typer.Exit(130) from None
    _print_plan(plan)
    result, path = _execute_with_progress(plan, recovered)
    if path is None:
        err.print("Interrupted before any measurement finished; nothing was written.")
        raise typer.Exit(130)
    _print_summary(result)
    _print_time_and_convergence(plan, result)
    own = _own_model(result)
    _print_standing(result, plan.options.results_dir, path, standings=not own)
    failed = [m for m in result.measurements if m.status == "failed"]
    console.print(f"\nWrote [bold]{path}[/bold] ({len(result.measurements)} measurements, {len(failed)} failed).")
    if result.run.interrupted:
        console.print(
            "[yellow]The run was interrupted; the file holds the measurements that finished. "
            "[bold]benchsite run --resume[/bold] measures the rest into the same file.[/yellow]"
        )
        raise typer.Exit(130)
    if own:
        console.print(
            "It measures your own model: [bold]benchsite validate[/bold] checks it; results/ and the leaderboard "
            "take runs of the suite only."
        )
        return
    console.print("Check it with [bold]benchsite validate[/bold] and open a pull request adding it to results/.")


def _own_model(result: ResultFile) -> bool:
    """Whether a file measures a user's own model (`--model`) rather than the suite."""
    from runner.workloads import custom

    return any(m.workload == custom.WORKLOAD for m in result.measurements)


def _with_model(args: RunArgs, options: Any) -> Any:
    """`--model`: the model checked here (built, one forward pass on the CPU) before anything is measured, handed to
    every process of the run (runner.workloads.custom), and measured alone, with PyTorch; exit 2 naming the option
    where it cannot be."""
    from runner.workloads import custom

    if args.model is None or args.input_shape is None:
        err.print("[red]error:[/red] --model and --input-shape go together: name the model and one sample's input")
        raise typer.Exit(2)
    modes = tuple(m.strip() for value in (args.mode or ["train"]) for m in value.split(",") if m.strip())
    try:
        batches = None
        if args.batch_size is not None:
            parts = [b.strip() for b in args.batch_size.split(",")]
            if not all(p.isdigit() for p in parts):
                raise custom.SpecError(f"--batch-size {args.batch_size!r}: expected whole numbers, e.g. 8,32,128")
            batches = tuple(int(p) for p in parts)
        with console.status("Building the model and running one forward pass on the CPU ..."):
            checked = custom.prepare(args.model, args.input_shape, args.classes, args.vocab, modes, batches)
    except custom.SpecError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(2) from None
    if args.workload or (args.framework and set(args.framework) != {"torch"}):
        err.print(
            "[red]error:[/red] --model measures your model alone, with PyTorch: leave out --workload and --framework"
        )
        raise typer.Exit(2)
    os.environ[custom.ENV] = checked.to_env()
    console.print(
        f"Model {escape(checked.spec)}: {checked.params:,} parameters, input {checked.input.text}, "
        f"{checked.classes} classes, structure {checked.structure}."
    )
    return dataclasses.replace(
        options,
        workloads=[custom.WORKLOAD],
        frameworks=["torch"],
        fidelity=False,
        equivalence=False,
        model=checked.to_env(),
    )


def _print_plan(plan: Plan) -> None:
    machine = plan.machine
    accel = ", ".join(f"{a.count}x {a.model}" for a in machine.accelerators) or "none"
    console.print(
        f"Machine [bold]{machine.id}[/bold]: {machine.cpu.model} ({machine.cpu.logical_cpus} CPUs), "
        f"accelerators: {accel}"
    )
    for framework, kinds in plan.devices.items():
        console.print(f"  {framework}: {', '.join(kinds)}")
    console.print(
        f"{plan.total} measurements, profile {plan.options.profile}, up to {plan.budget_s:g} s each after warm-up."
    )


def _execute_with_progress(plan: Plan, recovered: Any = None) -> tuple[ResultFile, Path | None]:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from runner import api
    from runner.results.summary import format_seconds

    bars = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    )
    overall = bars.add_task("suite", total=plan.total)
    current = bars.add_task("", total=plan.budget_s, visible=False)

    def label(group: Group, case: Case) -> str:
        return escape(f"{case.label()} {group.variant} {group.framework}/{group.device}")

    def started(group: Group, case: Case) -> None:  # once a round: each round has its share of the budget
        budget = plan.budget_s / plan.rounds_of(group)
        bars.reset(current, total=budget, description=f"  {label(group, case)} (warm-up)", visible=True)

    def step(group: Group, case: Case, samples: int, elapsed: float) -> None:
        budget = plan.budget_s / plan.rounds_of(group)
        bars.update(current, completed=min(elapsed, budget), description=f"  {label(group, case)} ({samples} samples)")

    def finished(group: Group, case: Case, m: Measurement) -> None:
        bars.advance(overall)
        if m.status == "failed" and m.error is not None:
            bars.console.print(
                f"[red]failed[/red] {label(group, case)}: {escape(m.error.type)}: {escape(m.error.message[:200])}"
            )
        elif m.status == "skipped":
            bars.console.print(f"[yellow]skipped[/yellow] {label(group, case)}: {escape(m.skip_reason or '')}")
        elif m.stream is not None and m.median_s is not None:
            verdict = "sustained" if m.stream.bounded else "[yellow]not sustained[/yellow]"
            bars.console.print(
                f"{label(group, case)}: latency p50 {format_seconds(m.median_s)}, p99 "
                f"{format_seconds(m.stream.p99_s)}; {m.samples_per_s or 0:,.0f} rows/s, {verdict}"
            )
        elif m.median_s is not None:
            unstable = "" if m.stable else " [yellow](unstable)[/yellow]"
            bars.console.print(f"{label(group, case)}: {format_seconds(m.median_s)} per {m.unit}{unstable}")

    def ahead(group: Group, done: int, total: int, children: int) -> None:
        what = escape(f"{group.workload.id} {group.variant} {group.framework}/{group.device}")
        description = f"  compiling {total} {what} points ahead, {children} at a time"
        if done == 0:
            bars.reset(current, total=total, description=description, visible=True)
        else:
            bars.update(current, completed=done, description=description)

    progress = api.Progress(
        note=lambda t: bars.console.print(escape(t)),
        case_started=started,
        case_progress=step,
        case_finished=finished,
        ahead=ahead,
    )
    with bars:
        return api.execute(plan, progress, recovered)


def _print_time_and_convergence(plan: Plan, result: ResultFile) -> None:
    """Where the time went (phases, the measuring grouped by framework) and which measurements stopped before
    their confidence interval reached the target."""
    from runner.results.summary import format_seconds

    grouped: dict[str, float] = {}
    for name, seconds in plan.phase_s.items():
        key = " ".join(name.split()[:2]) if name.startswith("measure ") else name
        grouped[key] = grouped.get(key, 0.0) + seconds
    total = (result.run.finished_at - result.run.started_at).total_seconds() + grouped.get(
        "probe frameworks and hardware", 0.0
    )
    parts = ", ".join(f"{escape(name)} {format_seconds(seconds)}" for name, seconds in grouped.items())
    console.print(f"\nTook {format_seconds(total)}: {parts}.")
    unstable = [m for m in result.measurements if m.status == "ok" and not m.stable and m.unit != "latency"]
    if unstable:
        console.print(
            f"[yellow]{len(unstable)} of {sum(m.status == 'ok' for m in result.measurements)} measurements stopped "
            "at the time budget before their 95% CI was within 2% of the median[/yellow] (raise --time-budget "
            "or quiet the machine):"
        )
        # the widest first, a few of them: a quick run's short budget leaves most unstable, and the answer follows
        unstable.sort(key=lambda m: -1.0 if m.rel_ci_halfwidth is None else m.rel_ci_halfwidth, reverse=True)
        for m in unstable[:UNSTABLE_LISTED]:
            point = " ".join(f"{k}={v}" for k, v in m.point.items())
            width = f"{m.rel_ci_halfwidth:.1%}" if m.rel_ci_halfwidth is not None else "?"
            console.print(
                f"  {escape(f'{m.workload} {point}'.strip())} {m.variant} {m.framework}/{m.device}: +-{width}"
            )
        if len(unstable) > UNSTABLE_LISTED:
            console.print(f"  and {len(unstable) - UNSTABLE_LISTED} more, each marked stable: false in the file")


def _print_summary(result: ResultFile) -> None:
    from runner.results.summary import format_seconds, speedup_rows

    rows = speedup_rows(result)
    if not rows:
        return
    accelerated = any(row["accel_s"] for row in rows)
    several = len({row["framework"] for row in rows}) > 1
    title = "Median time per unit" + ("; speedup = CPU time / best accelerator time" if accelerated else "")
    table = Table(title=title)
    columns = ("measurement", "variant") + (("framework",) if several else ()) + ("CPU",)
    columns += ("accelerator", "speedup") if accelerated else ()
    for column in columns:
        table.add_column(column, justify="left" if column in ("measurement", "variant", "framework") else "right")
    for row in rows:
        cells = [
            escape(f"{row['workload']} {row['point']}".strip()),
            row["variant"],
            *([row["framework"]] if several else []),
            format_seconds(row["cpu_s"]) if row["cpu_s"] else "-",
        ]
        if accelerated:
            speedup = row["speedup"]
            colour = "green" if speedup is not None and speedup >= 1 else "red"
            cells.append(f"{format_seconds(row['accel_s'])} ({row['accel']})" if row["accel_s"] else "-")
            cells.append("-" if speedup is None else f"[{colour}]{speedup:.2f}x[/{colour}]")
        table.add_row(*cells)
    console.print(table)


@app.command("list")
def list_workloads(
    profile: Annotated[str, typer.Option("--profile", "-p", help="Show the points of this profile.")] = "standard",
) -> None:
    """List the workloads of the suite, their seeds and sweep points."""
    from runner.workloads import PROFILES, all_workloads

    if profile not in PROFILES:
        err.print(f"[red]error:[/red] unknown profile {profile!r}; valid profiles: {', '.join(PROFILES)}")
        raise typer.Exit(2)
    table = Table(title=f"benchsite suite ({profile} profile)")
    reasons: list[str] = []
    # a terminal too narrow for every column leaves out the description, then the parameter counts, rather than
    # crush columns to nothing
    columns = [c for c, wide in LIST_COLUMNS.items() if console.width >= wide]
    for column in columns:
        # ids are what people copy into -w: never wrapped or cut; a point count's reason wraps
        table.add_column(column, no_wrap=column != "points", min_width=12 if column == "points" else None)
    for w in all_workloads():
        cases = w.cases(profile)
        params = [c.params for c in cases if c.params]
        span = (f"{min(params):,}" if len(set(params)) == 1 else f"{min(params):,}..{max(params):,}") if params else "-"
        points = str(len(cases))
        for out in (o for o in w.left_out if profile in o.profiles):
            where = out.where()
            if points != "left out":
                loop = f" the {out.loop()}" if out.variants else ""
                points = f"{points} (not{loop}{out.on()})" if where else "left out"
            elsewhere = " The standard profile measures it." if "standard" not in out.profiles else ""
            reasons.append(f"{w.id}{where}: {out.why}.{elsewhere}")
        frameworks = ", ".join(w.implementations)
        cells = dict(id=w.id, seed=w.seed, unit=w.unit, points=points, frameworks=frameworks, params=span, what=w.title)
        table.add_row(*(cells[c] for c in columns))
    console.print(table)
    if profile == "quick":
        console.print("Every quick point is a standard point (the same workload hash), so the two profiles compare.")
    if reasons:
        console.print(f"The {profile} profile leaves out:")
        for reason in reasons:
            console.print(f"  {escape(reason)}", highlight=False)


@app.command()
def fingerprint(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Show this machine's hardware fingerprint and id, and the frameworks' builds and threads.

    Nothing personal: no hostname, user name, serial number or MAC address.
    """
    from runner.api import describe_frameworks, software_info
    from runner.fingerprint import collect_machine
    from runner.frameworks import FRAMEWORKS

    with console.status("Probing hardware and frameworks ..."):
        infos, accelerators = describe_frameworks(list(FRAMEWORKS))
        machine = collect_machine(framework_accelerators=accelerators)
        software = software_info(infos)
    if as_json:
        payload = {"machine": machine.model_dump(mode="json"), "software": software.model_dump(mode="json")}
        typer.echo(json.dumps(payload, indent=2))
        return
    _print_machine(machine)
    table = Table(title="software", show_header=False)
    table.add_column("field", style="bold")
    table.add_column("value")
    table.add_row("python", f"{software.python} ({software.python_implementation}), numpy {software.numpy or '-'}")
    for info in software.frameworks:
        if not info.available:
            table.add_row(info.name, escape(f"unavailable: {info.reason}"))
            continue
        build = ", ".join(f"{k} {v}" for k, v in info.build.items() if v not in (None, False))
        threads = ", ".join(f"{k} {v}" for k, v in info.threads.items())
        table.add_row(
            info.name, escape(f"{info.version}; {build}; threads: {threads}; devices: {', '.join(info.devices)}")
        )
    for key, value in software.env.items():
        table.add_row(key, escape(value))
    console.print(table)


def _print_machine(machine: Machine) -> None:
    table = Table(title=f"machine {machine.id}", show_header=False)
    table.add_column("field", style="bold")
    table.add_column("value")
    cpu = machine.cpu
    table.add_row("CPU", f"{cpu.model} ({cpu.vendor}, {cpu.arch})")
    table.add_row(
        "cores",
        f"{cpu.physical_cores or '?'} physical, {cpu.logical_cpus} logical, "
        f"{cpu.sockets or '?'} socket(s), max {cpu.max_mhz or '?'} MHz",
    )
    table.add_row("ISA", ", ".join(cpu.isa) or "-")
    table.add_row("memory", f"{machine.memory_gib:.1f} GiB")
    for a in machine.accelerators:
        extra = ", ".join(
            x
            for x in (
                f"{a.memory_gib:.0f} GiB" if a.memory_gib else "",
                f"driver {a.driver}" if a.driver else "",
                f"CUDA {a.cuda_version}" if a.cuda_version else "",
                f"sm {a.compute_capability}" if a.compute_capability else "",
                a.gfx_target or "",
                f"ROCm {a.rocm_version}" if a.rocm_version else "",
                f"{a.cores} cores" if a.cores else "",
                f"via {a.source}",
            )
            if x
        )
        table.add_row("accelerator", f"{a.count}x {a.model} ({extra})")
    if not machine.accelerators:
        table.add_row("accelerator", "none found")
    table.add_row("OS", f"{machine.os.distro or machine.os.system} ({machine.os.release})")
    table.add_row("system type", f"{machine.system_type} ({'; '.join(machine.system_type_evidence) or 'no evidence'})")
    console.print(table)


@app.command()
def schema() -> None:
    """Print the JSON Schema of result files."""
    from runner.results.schema import json_schema

    typer.echo(json.dumps(json_schema(), indent=2))


@app.command()
def validate(
    paths: Annotated[list[Path], typer.Argument(help="Result files or folders (searched for *.yaml).")],
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output for bots.")] = False,
    strict: Annotated[bool, typer.Option("--strict", help="Treat warnings (cohort outliers) as errors.")] = False,
) -> None:
    """Check result files: the format, then the rules a schema cannot express.

    Size limit, no YAML anchors, aliases or duplicate keys, the strict schema, plain names, results/<machine-id>/
    matching machine.id (the hash of the file's hardware) and a file name that is the run's start time; every
    derived figure recomputed (statistics from the raw samples, rates, FLOPs and parameters from the suite);
    unique run ids and samples (no replays); a passed sync self-test for every accelerator timing; achieved
    FLOP/s below the device's peak. Warnings: a measurement 10x away from its hardware cohort, or 25% faster
    than the machine's earlier runs; an unknown GPU. Every problem is reported at once with its file and
    field. Exit code 1 if any error.
    """
    from runner.gate.validate import validate as run_gate

    report = run_gate(paths, strict=strict)
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "files": report.files,
                    "valid": report.files - report.bad_files,
                    "errors": len(report.errors),
                    "warnings": len(report.problems) - len(report.errors),
                    "problems": [p.__dict__ for p in report.problems],
                },
                indent=2,
            )
        )
    else:
        for problem in report.problems:  # file contents are untrusted: never let them carry markup
            colour = "red" if problem.severity == "error" else "yellow"
            line = f"[{colour}]{problem.severity}[/{colour}] {escape(str(problem))}"
            err.print(line, highlight=False, soft_wrap=True)
        if report.files == 0:
            err.print("no result files found")
        else:
            warnings = len(report.problems) - len(report.errors)
            console.print(
                f"{report.files} file(s) checked, {report.files - report.bad_files} valid, "
                f"{report.bad_files} with errors" + (f", {warnings} warning(s)." if warnings else ".")
            )
    if report.files == 0 or report.errors:
        raise typer.Exit(1)


def _answer(result: ResultFile, against: Path, path: Path | None) -> tuple[Any, list[Any]]:
    """site_builder.answer's Answer and its standings against a results folder where the site's extra is installed;
    else (None, the standings of runner.contribute.standing alone, with within-run intervals: the site's open data
    holds no spread between runs)."""
    from runner.contribute import standing

    try:
        if against.suffix == ".parquet":
            raise ImportError
        from site_builder.answer import answer
    except ImportError:  # pandas or pyarrow missing, or the open data
        return None, standing.standing(result, standing.published_rows(against) if against.exists() else [])
    found = answer(result, path, against)
    return found, found.standings


def _print_standing(result: ResultFile, against: Path, path: Path | None = None, standings: bool = True) -> None:
    """What this file answers (site_builder.answer, where the site's extra is installed: the verdicts and standing
    with the site's intervals; else runner.contribute.standing alone, within-run intervals). `standings`: where the
    machine stands among the published ones (not for a user's own model, which no published machine ran). Never
    fails the run: a results folder that cannot be read is said and skipped."""
    from runner.contribute import standing

    try:
        found, places = _answer(result, against, path)
    except (OSError, ValueError, KeyError) as exc:
        err.print(f"[yellow]Could not read {escape(str(against))} to compare: {escape(str(exc))}[/yellow]")
        return
    mine = {(r.workload_hash, r.framework, standing.device_class(r.device)) for r in standing.rows_of(result)}
    if standings and not places:
        console.print(
            f"\nWhere it stands: no published machine in {escape(str(against))} shares a measurement with this file "
            f"({len(mine)} measurements of suite {result.suite.version})."
        )
    elif standings:
        console.print(
            f"\n[bold]Where this machine stands[/bold] (against {escape(str(against))}; time ratios, 95% intervals):"
        )
        for place in places:
            console.print(f"  {escape(place.sentence())}", highlight=False, soft_wrap=True)
    if found is None:
        hint = "" if against.suffix == ".parquet" else ", pip install 'benchsite[site]'"
        console.print(
            f"  (intervals within these runs only: a results folder and the site's extra{hint} give the spread "
            "between runs of one machine and the CPU-or-accelerator verdicts)",
            highlight=False,
        )
        return
    if places and found.between_runs:  # the standings compare machines: each side's spread between runs, once
        console.print(
            "  Each ratio's interval includes both machines' spread between runs of one machine.",
            highlight=False,
            soft_wrap=True,
        )
    for problem in found.refused:  # the site would not show this file: no verdicts from it
        err.print(f"[yellow]The site would refuse this file:[/yellow] {escape(problem)}", highlight=False)
    later: list[str] = []
    if not standings and path is not None:  # a user's own model: each figure, with the interval the site gives it
        later = _own_answer(path, result, found)
    _print_verdicts(result, found)
    for line in later:  # the nearest suite workloads and the advisor beside the measured answer
        console.print(line, highlight=False, soft_wrap=True)


def _print_verdicts(result: ResultFile, found: Any) -> None:
    """On a machine with an accelerator: each speedup of the file with its interval and verdict, and where the
    verdict flips along a batch sweep."""
    if not result.machine.accelerators:
        return
    if not found.verdicts:
        console.print("\nCPU or accelerator: no point of this file was measured on both.")
        return
    console.print("\n[bold]CPU or accelerator on this machine[/bold] (CPU time / accelerator time, 95% intervals):")
    for verdict in found.verdicts:
        console.print(f"  {escape(verdict.sentence())}", highlight=False, soft_wrap=True)
    from site_builder.answer import along_batch_sizes

    for line in along_batch_sizes(found.verdicts):  # where the verdict flips along a batch sweep, if it does
        console.print(f"  {escape(line)}", highlight=False, soft_wrap=True)
    if found.note:
        console.print(f"  {escape(found.note)}", highlight=False, soft_wrap=True)


def _own_answer(path: Path, result: ResultFile, found: Any) -> list[str]:
    """A user's own model's figures, printed; and the lines that follow its verdicts: the suite workloads nearest to
    it and, per measured speedup, the advisor's estimate beside it (site_builder.answer.beside_suite)."""
    from site_builder.answer import beside_suite, memory_of, own_figures, own_model

    frame, verdicts = own_model(path, result, found.spread)
    console.print("\n[bold]Your model on this machine[/bold] (time per step, 95% intervals):")
    for line in own_figures(frame, memory_of(result)):
        console.print(f"  {escape(line)}", highlight=False, soft_wrap=True)
    near, beside = beside_suite(frame, verdicts, found.suite, found.suite_speedups)
    lines = [] if near else ["\nNearest suite workloads: no published suite result counts FLOPs to compare it with."]
    for mode, (yours, points) in near.items():
        lines.append(f"\n[bold]Nearest suite workloads[/bold], {mode} (your model: {escape(yours.figures())}):")
        lines.append("  " + escape("; ".join(n.label() for n in points)))
    if beside:
        lines.append("\n[bold]Measured against the advisor[/bold] (CPU time / accelerator time, 95% intervals):")
    lines += [f"  {escape(b.sentence())}" for b in beside]
    return lines


@app.command()
def compare(
    file: Annotated[Path, typer.Argument(help="A result file, e.g. one `benchsite run` wrote.")],
    against: Annotated[
        Path,
        typer.Option(help="The published results: a results folder, or a built site's data/measurements.parquet."),
    ] = Path("results"),
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Where a result file's machine stands against the published machines, offline.

    Per device class (CPU, accelerator) and loop: its rank among the published devices of that class that share
    a measurement with it (the same workload hash and framework, whatever the profile: a quick point is a standard
    point; each machine's newest run), and its time against the fastest one's, as the geometric mean over the
    shared measurements of the ratio of medians with a 95% interval from each measurement's rounds (Student's t),
    widened by the spread between runs of one machine where the site's extra is installed. On a machine with an
    accelerator, also each speedup of the file with its interval and verdict. A file of your own model (`benchsite
    run --model`) gets its answer instead: each figure, the suite workloads nearest to it and the advisor's estimate
    beside each measured speedup. Exit code 1 if the file cannot be read."""
    from runner.results.storage import load

    result, problems = load(file)
    if result is None:
        for problem in problems:
            err.print(f"[red]error[/red] {escape(str(problem))}", highlight=False, soft_wrap=True)
        raise typer.Exit(1)
    if not against.exists():
        err.print(f"[red]error:[/red] {escape(str(against))} does not exist")
        raise typer.Exit(1)
    if as_json:
        _, places = _answer(result, against, file)
        typer.echo(json.dumps([{**p.__dict__, "versus": [v.__dict__ for v in p.versus]} for p in places], indent=2))
        return
    _print_standing(result, against, file, standings=not _own_model(result))


@app.command("check-pr")
def check_pr(
    base: Annotated[str, typer.Argument(help="The pull request's base commit.")],
    head: Annotated[str, typer.Argument(help="The pull request's head commit.")],
    author: Annotated[
        str, typer.Option(help="Who opened the pull request: a GitHub login (--owners github) or an e-mail (git).")
    ],
    owners: Annotated[
        str,
        typer.Option(
            help="How to tell who contributed a machine's earlier files: 'github' (the author of the pull request "
            "each came from, via GITHUB_REPOSITORY and GITHUB_TOKEN) or 'git' (the commit's author e-mail)."
        ),
    ] = "github",
    approved: Annotated[
        bool, typer.Option("--approved", help="A maintainer labelled the pull request 'maintainer-approved'.")
    ] = False,
    repo: Annotated[Path, typer.Option(help="The git repository (default: here).")] = Path("."),
) -> None:
    """Check that a pull request only adds result files, and only to its author's machines.

    A published result file may not be modified, deleted or renamed (results are append-only). A file added to
    results/<machine-id>/ whose earlier files another contributor's pull request added needs a maintainer's
    'maintainer-approved' label. Exit code 1 with each offending file named.
    """
    from runner.gate import pull_request

    if owners not in ("github", "git"):
        err.print("[red]error:[/red] --owners is 'github' or 'git'")
        raise typer.Exit(2)
    owner_of = pull_request.environment_owner() if owners == "github" else pull_request.git_owner(repo)
    if owner_of is None:
        err.print("[red]error:[/red] --owners github needs GITHUB_REPOSITORY (and GITHUB_TOKEN) in the environment")
        raise typer.Exit(2)
    try:
        problems = pull_request.check(repo, base, head, author, owner_of, approved)
    except RuntimeError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(2) from None
    for problem in problems:
        err.print(f"[red]error[/red] {escape(str(problem))}", highlight=False, soft_wrap=True)
    if problems:
        raise typer.Exit(1)
    console.print("Only new result files, each in a folder of its author's (or approved by a maintainer).")


@app.command()
def submit(
    files: Annotated[
        list[Path] | None, typer.Argument(help="Result files to submit. Default: every new file under results/.")
    ] = None,
    remote: Annotated[str, typer.Option(help="The git remote of your fork.")] = "origin",
    upstream: Annotated[str, typer.Option(help="The git remote of the benchsite repository, if you added one.")] = (
        "upstream"
    ),
    base: Annotated[str, typer.Option(help="The branch the pull request goes into.")] = "main",
    branch: Annotated[
        str | None, typer.Option(help="Branch to create. Default: results/<machine-id>-<time of the run>.")
    ] = None,
    no_push: Annotated[bool, typer.Option("--no-push", help="Commit on a new branch but do not push.")] = False,
    repo: Annotated[Path, typer.Option(help="Your clone of your fork.")] = Path("."),
) -> None:
    """Submit new result files as a pull request from your fork.

    Validates the files (refuses them on any error), creates a branch from the upstream base branch, commits
    them with a message naming the machine, pushes to your fork and opens the pull request with `gh` when it
    is installed; otherwise prints the link and the steps.
    """
    from runner.contribute.submit import SubmitError
    from runner.contribute.submit import submit as run_submit

    try:
        sub = run_submit(
            repo,
            files,
            remote=remote,
            upstream=upstream,
            base=base,
            branch=branch,
            push=not no_push,
            note=lambda text: console.print(escape(text)),
        )
    except SubmitError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(1) from None
    where = f"[bold]{escape(sub.branch)}[/bold]"
    console.print(f"Committed {len(sub.files)} file(s) on branch {where}: {escape(sub.title)}")
    if sub.pr_url:
        console.print(f"Opened the pull request: {escape(sub.pr_url)}")
    elif sub.steps:
        console.print("Next:" if not sub.pushed else "Pushed. Open the pull request:")
        for step in sub.steps:
            console.print(f"  {escape(step)}")


site_app = typer.Typer(help="Build or preview the leaderboard site from result files.", no_args_is_help=True)
app.add_typer(site_app, name="site")


def _mkdocs(command: list[str], results: Path, strict: bool, config: Path) -> None:
    import os
    import subprocess

    if not config.exists():
        err.print(f"[red]error:[/red] no MkDocs configuration at {escape(str(config))}; run from the repository root")
        raise typer.Exit(2)
    env = {**os.environ, "BENCHSITE_RESULTS": str(results.resolve()), "BENCHSITE_STRICT": "1" if strict else "0"}
    code = subprocess.call([sys.executable, "-m", "mkdocs", *command, "-f", str(config)], env=env)
    if code:
        raise typer.Exit(code)


@site_app.command("build")
def site_build(
    results: Annotated[Path, typer.Option(help="Folder of result files.")] = Path("results"),
    out: Annotated[Path, typer.Option(help="Where to write the static site.")] = Path("site"),
    strict: Annotated[bool, typer.Option(help="Fail on a bad result file instead of leaving it out.")] = False,
    config: Annotated[Path, typer.Option(help="The MkDocs configuration.")] = Path("mkdocs.yml"),
) -> None:
    """Build the static site (mkdocs build --strict) from every result file."""
    _mkdocs(["build", "--strict", "-d", str(out.resolve())], results, strict, config)


@site_app.command("serve")
def site_serve(
    results: Annotated[Path, typer.Option(help="Folder of result files.")] = Path("results"),
    address: Annotated[str, typer.Option(help="host:port to serve on.")] = "127.0.0.1:8000",
    config: Annotated[Path, typer.Option(help="The MkDocs configuration.")] = Path("mkdocs.yml"),
) -> None:
    """Preview the site with live reload (mkdocs serve)."""
    _mkdocs(["serve", "-a", address], results, False, config)


def main() -> Any:
    return app(prog_name="benchsite")


if __name__ == "__main__":
    sys.exit(main())
