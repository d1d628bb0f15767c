"""The command line, through typer's CliRunner (and once for real, end to end)."""

from __future__ import annotations

import json
import shlex
import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from runner.api import RunOptions
from runner.cli import app
from runner.results import storage
from runner.results.schema import Machine
from runner.workloads import all_workloads
from tests.conftest import make_result

runner = CliRunner()
COMMANDS = ["run", "list", "fingerprint", "schema", "validate", "compare", "submit", "site build", "site serve"]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(command):
    result = runner.invoke(app, [*command.split(), "--help"])
    assert result.exit_code == 0
    assert "Usage" in result.output and len(result.output) > 200


def test_every_command_is_documented():
    docs = (Path(__file__).parent.parent / "docs" / "cli.md").read_text()
    for command in COMMANDS:
        assert f"benchsite {command}" in docs, command


def test_list_shows_every_workload():
    result = runner.invoke(app, ["list", "--profile", "quick"])
    assert result.exit_code == 0
    for workload in all_workloads():
        assert workload.id in result.output
    bad = runner.invoke(app, ["list", "--profile", "huge"])
    assert bad.exit_code == 2 and "valid profiles: tiny, quick, standard" in bad.output


@pytest.mark.parametrize("width", [80, 160])
def test_list_fits_the_terminal_and_cuts_no_cell_short(width, monkeypatch):
    """An 80-column terminal gets every workload's id, points and frameworks whole, the description and parameter
    counts only where there is room: no column is squeezed to nothing or cut with an ellipsis."""
    monkeypatch.setenv("COLUMNS", str(width))
    result = runner.invoke(app, ["list", "--profile", "quick"])
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert max(len(line) for line in lines) <= width and "…" not in result.output
    assert "┃ id" in result.output and "frameworks" in result.output
    for workload in all_workloads():
        (row,) = [line for line in lines if line.startswith(f"│ {workload.id} ")]
        assert ", ".join(workload.implementations) in row
        assert (workload.title in row) == (width >= 150)
    assert "ROCm" in result.output and "ROCM" not in result.output


def test_schema_prints_json_schema():
    result = runner.invoke(app, ["schema"])
    assert result.exit_code == 0
    assert json.loads(result.output)["title"] == "benchsite result file"


def test_fingerprint_json_is_a_machine():
    result = runner.invoke(app, ["fingerprint", "--json"])
    assert result.exit_code == 0
    payload = json.loads(result.output)
    machine = Machine.model_validate(payload["machine"])
    torch_info = payload["software"]["frameworks"][0]
    assert torch_info["name"] == "torch" and torch_info["available"] and "cpu" in torch_info["devices"]
    assert "blas" in torch_info["build"] and torch_info["threads"]["intra_op"] >= 1
    assert len(machine.id) == 16
    table = runner.invoke(app, ["fingerprint"])
    assert machine.id in table.output and machine.cpu.model in table.output and "intra_op" in table.output


def test_validate_good_and_bad_files(tmp_path):
    good = storage.save(make_result(), tmp_path / "good.yaml")
    ok = runner.invoke(app, ["validate", str(good)])
    assert ok.exit_code == 0 and "1 valid" in ok.output
    bad = tmp_path / "bad.yaml"
    bad.write_text(storage.dumps(make_result()).replace("median_s: 0.011", "median_s: -3"))
    result = runner.invoke(app, ["validate", str(good), str(bad)])
    assert result.exit_code == 1
    assert f"{bad}: measurements[0].median_s" in result.output
    as_json = runner.invoke(app, ["validate", "--json", str(tmp_path)])
    report = json.loads(as_json.stdout)
    assert report["files"] == 2 and report["problems"][0]["field"] == "measurements[0].median_s"


def test_validate_with_no_files_fails(tmp_path):
    result = runner.invoke(app, ["validate", str(tmp_path)])
    assert result.exit_code == 1 and "no result files" in result.output


def test_markup_in_a_hostile_file_is_printed_as_text(tmp_path):
    bad = tmp_path / "[bold]x[red].yaml"
    bad.write_text("schema_version: 1\nmeasurements: '[red]boom[/red]'\n")
    result = runner.invoke(app, ["validate", str(bad)])
    assert "[bold]x[red].yaml" in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--workload", "resnet"], "valid workloads: tabular-mlp, depth-sweep, cifar-lenet, mnist-cnn, transformer"),
        (["--device", "tpu"], "valid devices: cpu, cuda, rocm, mps"),
        (["--framework", "caffe"], "valid frameworks: torch"),
        (["--variant", "fast"], "valid variants: as-written, tuned"),
        (["--profile", "huge"], "valid profiles: tiny, quick, standard"),
    ],
)
def test_run_rejects_unknown_names_with_the_valid_ones(args, message, tmp_path):
    result = runner.invoke(app, ["run", *args, "--results-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert message in " ".join(result.output.split())
    assert list(tmp_path.iterdir()) == []


def test_a_run_of_only_what_the_profile_leaves_out_says_why_and_which_profile_measures_it(tmp_path):
    result = runner.invoke(
        app, ["run", "--profile", "quick", "-w", "mnist-cnn", "-f", "torch", "--results-dir", str(tmp_path)]
    )
    said = " ".join(result.output.split())
    assert result.exit_code == 2, said
    assert "nothing to measure: The quick profile leaves out mnist-cnn: a seed-size epoch" in said
    assert "The standard profile measures it (--profile standard)" in said
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def planned(monkeypatch):
    """The options `benchsite run` hands runner.api.plan_run, which stops the run there (exit code 2)."""
    from runner import api

    # unset, and unset again afterwards: `--spark-master` puts it in the environment for the measuring processes
    monkeypatch.setenv("BENCHSITE_SPARK_MASTER", "")
    monkeypatch.delenv("BENCHSITE_SPARK_MASTER")
    seen = []

    def plan_run(given, progress=None):
        seen.append(given)
        raise api.PlanError("planned")

    monkeypatch.setattr(api, "plan_run", plan_run)
    return seen


@pytest.mark.parametrize(
    ("args", "options"),
    [
        ("", RunOptions(command="benchsite run --profile quick")),
        (
            "-p tiny -w depth-* -w mnist-cnn -d cpu -f torch,jax --variant tuned --time-budget 0.05 --timeout 30 "
            "-o /home/alice/r.yaml",
            RunOptions(
                profile="tiny",
                workloads=["depth-*", "mnist-cnn"],
                devices=["cpu"],
                frameworks=["torch,jax"],
                variants=["tuned"],
                time_budget_s=0.05,
                timeout_s=30.0,
                output=Path("/home/alice/r.yaml"),
                command="benchsite run --profile tiny --workload 'depth-*' --workload mnist-cnn --device cpu "
                "--framework torch,jax --variant tuned --time-budget 0.05 --timeout 30.0",
            ),
        ),
        (
            "--profile standard --no-profiler --no-compile-ahead --no-equivalence --fidelity --rounds 5 "
            "--results-dir /home/alice/results",
            RunOptions(
                profile="standard",
                results_dir=Path("/home/alice/results"),
                profile_ops=False,
                equivalence=False,
                compile_ahead=False,
                fidelity=True,
                rounds=5,
                command="benchsite run --profile standard --no-profiler --no-compile-ahead --no-equivalence "
                "--fidelity --rounds 5",
            ),
        ),
        (  # the recorded order is not the order of the options in --help, nor the order given
            "--fidelity --no-equivalence -p tiny --no-compile-ahead --variant as-written",
            RunOptions(
                profile="tiny",
                variants=["as-written"],
                equivalence=False,
                compile_ahead=False,
                fidelity=True,
                command="benchsite run --profile tiny --variant as-written --no-compile-ahead --no-equivalence "
                "--fidelity",
            ),
        ),
        (
            "--no-fidelity --rounds 3 --spark-master spark://db-7.corp.example:7077 -f tf",
            RunOptions(
                frameworks=["tf"],
                fidelity=False,
                command="benchsite run --profile quick --framework tf --no-fidelity --spark-master standalone",
            ),
        ),
        (
            "-w depth-sweep " * 12,
            RunOptions(
                workloads=["depth-sweep"] * 12,
                command=("benchsite run --profile quick" + " --workload depth-sweep" * 12)[:200],
            ),
        ),
    ],
)
def test_run_records_its_options_and_command_line(args, options, planned):
    """What `benchsite run` hands the API for a few argument combinations: the options, and the command line the
    result file records (paths and a Spark master's address left out, the order fixed)."""
    result = runner.invoke(app, ["run", *shlex.split(args)])
    assert result.exit_code == 2 and "planned" in result.output
    assert planned == [options]


def test_run_records_the_spark_master_from_the_environment(planned, monkeypatch):
    monkeypatch.setenv("BENCHSITE_SPARK_MASTER", "yarn")
    result = runner.invoke(app, ["run", "--no-profiler"])
    assert result.exit_code == 2
    assert planned == [
        RunOptions(profile_ops=False, command="benchsite run --profile quick --no-profiler --spark-master yarn")
    ]


def test_run_end_to_end_writes_a_valid_file(tmp_path):
    result = runner.invoke(
        app,
        [
            "run",
            "--profile",
            "tiny",
            "-w",
            "depth-*",
            "-d",
            "cpu",
            "--variant",
            "tuned",
            "--time-budget",
            "0.05",
            "--results-dir",
            str(tmp_path / "results"),
        ],
    )
    assert result.exit_code == 0, result.output
    files = list((tmp_path / "results").rglob("*.yaml"))
    assert len(files) == 1
    loaded, problems = storage.load(files[0])
    assert problems == [] and loaded is not None
    assert files[0].parent.name == loaded.machine.id
    # every framework installed (the README's set-up installs all three), the equivalence check first
    frameworks = [f.name for f in loaded.software.frameworks if f.available]
    assert frameworks == ["torch", "tensorflow", "jax"]
    assert [(m.framework, m.point["depth"]) for m in loaded.measurements] == [
        (f, d) for f in frameworks for d in (2, 3)
    ]
    assert [(c.framework, c.point["depth"], c.status) for c in loaded.equivalence] == [
        (f, d, "passed") for f in frameworks[1:] for d in (2, 3)
    ]
    assert all(m.status == "ok" and m.median_s and m.warmup_s for m in loaded.measurements)
    assert (
        loaded.run.command == "benchsite run --profile tiny --workload 'depth-*' --device cpu --variant tuned "
        "--time-budget 0.05"
    )
    assert "Wrote" in result.output and "depth-sweep depth=2" in result.output
    text = files[0].read_text()
    host = socket.gethostname()
    assert len(host) < 4 or host not in text  # privacy: no host name in the file
    assert str(tmp_path) not in text  # nor the paths the run was given


def test_the_end_of_a_run_names_the_widest_unstable_measurements_and_counts_the_rest(monkeypatch):
    """A quick run on the 2-core VM (committed) leaves 32 measurements unstable: the end of the run names the five
    widest, widest first, and counts the rest, so that the answer after it is not buried."""
    import types

    from rich.console import Console

    from runner import cli

    result, _ = storage.load(Path(__file__).parent.parent / "results/a23074609b32f305/20261207T021034Z.yaml")
    assert result is not None
    unstable = [m for m in result.measurements if m.status == "ok" and not m.stable and m.unit != "latency"]
    assert len(unstable) == 32
    monkeypatch.setattr(cli, "console", Console(record=True, width=200))
    cli._print_time_and_convergence(types.SimpleNamespace(phase_s={"measure torch x": 1.0}), result)
    lines = cli.console.export_text().splitlines()
    start = next(i for i, line in enumerate(lines) if "32 of 32 measurements stopped at the time budget" in line)
    listed = lines[start + 1 : start + 1 + cli.UNSTABLE_LISTED]
    widths = [float(line.rsplit("+-", 1)[1].rstrip("%")) for line in listed]
    widest = sorted((m.rel_ci_halfwidth * 100 for m in unstable), reverse=True)[: cli.UNSTABLE_LISTED]
    assert widths == pytest.approx(widest, abs=0.051)
    assert lines[start + 1 + cli.UNSTABLE_LISTED] == "  and 27 more, each marked stable: false in the file"
