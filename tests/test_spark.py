"""spark-inference on real Spark: the embedded local[2] session and a real standalone cluster (a master and a
worker started here from pyspark's own launcher on 127.0.0.1). Every row is predicted exactly once, by the same
model the suite builds, and `benchsite run` writes a valid file. Needs Java 17+ (CI has it)."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

pytest.importorskip("torch")
pytest.importorskip("transformers")
pyspark = pytest.importorskip("pyspark")

from runner.engines.spark import master as spark_master  # noqa: E402
from runner.engines.spark.inference import driver_memory  # noqa: E402
from runner.workloads import get  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

if spark_master.java_version() is None:
    pytest.skip("no Java runtime: Spark cannot start", allow_module_level=True)


def _case():
    return get("spark-inference").cases("tiny")[0]


def _expected(case) -> list[int]:
    """The suite's model on the same rows, in this process, without Spark."""
    import torch

    from runner.engines.spark.inference import synthetic_rows
    from runner.engines.spark.predict import MODEL_SEED, input_shape
    from runner.frameworks.torch.workloads import build_transformer

    cfg = case.config["model"]
    torch.manual_seed(MODEL_SEED)
    model = build_transformer(cfg).eval()
    x = torch.from_numpy(synthetic_rows(cfg, case.config["rows"])).reshape(-1, *input_shape(cfg))
    with torch.no_grad():
        return model(pixel_values=x).logits.argmax(-1).tolist()


def _predict_all(master: str) -> list[tuple[int, int]]:
    from runner.engines.spark.inference import SparkInference
    from runner.frameworks.torch import make_device
    from runner.frameworks.torch.predict import make_predict_fn

    program = SparkInference(_case(), make_device("cpu"), make_predict_fn, master=master)
    try:
        program.run_unit()  # the timed action runs
        assert "master " + spark_master.master_kind(master) in program.notes[0]
        assert program.spark_master == spark_master.master_kind(master)  # the measurement's `spark_master` field
        return program.predictions()
    finally:
        program.close()


def _check_exactly_once(pairs: list[tuple[int, int]]) -> None:
    case = _case()
    ids = [i for i, _ in pairs]
    assert sorted(ids) == list(range(case.config["rows"]))  # every id once: none lost, none twice
    assert [p for _, p in sorted(pairs)] == _expected(case)


def test_local_spark_predicts_every_row_exactly_once():
    _check_exactly_once(_predict_all("local[2]"))


def _recording(log: Path, factory):
    """A predict factory that records, in `log`, each Python worker's model build and each predict call (by pid)."""

    def recording_factory(model_cfg, device_kind, gpu):
        make = factory(model_cfg, device_kind, gpu)

        def recording_make():
            with open(log / f"build-{os.getpid()}", "a") as out:
                out.write("x")
            predict = make()

            def recorded(inputs):
                with open(log / f"call-{os.getpid()}", "a") as out:
                    out.write("x")
                return predict(inputs)

            return recorded

        return recording_make

    return recording_factory


def test_the_short_warm_up_builds_the_model_in_every_worker_the_unit_then_uses(tmp_path):
    """The short warm-up that warmup_ab.py compares with a whole unit predicts one batch per task that a unit runs at
    once (local[2]: two), so the unit after it builds no model: every worker that predicts in it built its model in
    the warm-up. (Else the comparison would charge the short warm-up for builds it skipped.)"""
    import dataclasses

    from runner.engines.spark.inference import SparkInference
    from runner.frameworks.torch import make_device
    from runner.frameworks.torch.predict import make_predict_fn

    case = _case()
    case = dataclasses.replace(case, config={**case.config, "partitions": 4})
    program = SparkInference(case, make_device("cpu"), _recording(tmp_path, make_predict_fn), master="local[2]")
    try:
        program.short_epoch()
        built = {f.name.split("-")[1] for f in tmp_path.glob("build-*")}
        assert len(built) == 2  # both task slots' workers, each once
        assert all(f.read_text() == "x" for f in tmp_path.glob("build-*"))
        for f in tmp_path.glob("call-*"):
            f.unlink()
        program.run_unit()
        assert {f.name.split("-")[1] for f in tmp_path.glob("build-*")} == built  # no model built in the unit
        called = {f.name.split("-")[1] for f in tmp_path.glob("call-*")}
        assert called and called <= built
    finally:
        program.close()


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.5)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port}")


@pytest.fixture
def standalone_cluster(tmp_path):
    """A real Spark standalone master and one worker (2 cores), from pyspark's own spark-class."""
    home = Path(pyspark.__file__).parent
    launcher = home / "bin" / "spark-class"
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_LOG_DIR": str(tmp_path)}
    env["PYSPARK_PYTHON"] = sys.executable
    port = _port()
    master = f"spark://127.0.0.1:{port}"
    common = {"env": env, "stdout": subprocess.DEVNULL, "stderr": subprocess.STDOUT, "start_new_session": True}
    procs = [
        subprocess.Popen(
            [
                "bash",
                str(launcher),
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--webui-port",
                str(_port()),
            ],
            **common,
        )
    ]
    try:
        _wait_port(port, 120)
        procs.append(
            subprocess.Popen(
                [
                    "bash",
                    str(launcher),
                    "org.apache.spark.deploy.worker.Worker",
                    master,
                    "--host",
                    "127.0.0.1",
                    "--cores",
                    "2",
                    "--memory",
                    "2g",
                    "--webui-port",
                    str(_port()),
                    "--work-dir",
                    str(tmp_path),
                ],
                **common,
            )
        )
        yield master
    finally:
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, 15)
            proc.wait(timeout=60)


def test_standalone_cluster_predicts_every_row_exactly_once(standalone_cluster, monkeypatch):
    monkeypatch.setenv("PYSPARK_PYTHON", sys.executable)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    _check_exactly_once(_predict_all(standalone_cluster))


def test_master_kind_never_keeps_the_address():
    assert spark_master.master_kind("spark://db-7.corp.example:7077") == "standalone"
    assert spark_master.master_kind("k8s://https://10.0.0.1:443") == "k8s"
    assert spark_master.master_kind("yarn") == "yarn"
    assert spark_master.master_kind("local[4]") == "local[4]"
    assert spark_master.master_kind("local[evil.example]") == "local"
    from runner import api

    assert "db-7" not in api.command_line({"spark_master": "spark://db-7.corp.example:7077"})


def test_a_local_driver_gets_half_the_machine_s_memory_within_bounds():
    """Spark's default 1 GiB heap died reading the streaming ladder's 154 MB files (OutOfMemoryError in the
    vectorized Parquet reader, then every later rate with it): a local driver gets half this machine's memory."""
    gib = 2**30
    assert driver_memory(24 * gib) == "12g"  # the 2-core VM
    assert driver_memory(128 * gib) == "32g"  # a large GPU host: capped
    assert driver_memory(gib) == "1g"  # never under Spark's default
    assert driver_memory() == driver_memory(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))


def test_missing_java_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))  # no bin/java there
    with pytest.raises(spark_master.SparkUnavailable, match="Java runtime"):
        spark_master.require_spark("local[*]")


def test_benchsite_run_writes_a_valid_spark_file(tmp_path):
    cmd = [sys.executable, "-m", "runner", "run", "-w", "spark-*", "--profile", "tiny", "-f", "torch", "-d", "cpu"]
    cmd += ["--no-equivalence", "--time-budget", "0.5", "--spark-master", "local[2]", "-o", str(tmp_path)]
    cmd += ["--rounds", "2"]  # the fewest that give a figure its interval
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    (path,) = tmp_path.rglob("*.yaml")
    data = yaml.safe_load(path.read_text())
    assert "--spark-master 'local[2]'" in data["run"]["command"]
    assert {m["workload"] for m in data["measurements"]} == {"spark-inference", "spark-streaming"}
    (m,) = [m for m in data["measurements"] if m["workload"] == "spark-inference"]
    assert m["status"] == "ok" and m["samples_per_s"] > 0, m.get("error")
    assert "master local[2]" in m["notes"][0] and "partitions 2" in m["notes"][0]
    assert data["schema_version"] == 11 and m["spark_master"] == "local[2]"  # a field of its own, as the note says
    assert f"driver heap {driver_memory()};" in m["notes"][0]  # the session was given the heap, not Spark's 1 GiB
    check = subprocess.run([sys.executable, "-m", "runner", "validate", str(path)], cwd=ROOT, capture_output=True)
    assert check.returncode == 0, check.stdout
    # the Scale page's Spark table and chart from that file
    from runner.results.storage import iter_all
    from site_builder import charts
    from site_builder.analyses.spark import spark_inference, spark_streaming, sustained
    from site_builder.collect import measurements_frame

    frame = measurements_frame([(p, r) for p, r, _ in iter_all([tmp_path]) if r is not None])
    (row,) = spark_inference(frame).to_dict("records")
    assert row["spark_master"] == "local[2]" and row["partitions"] == 2 and row["model"] == "vit-tiny"
    assert row["samples_per_s"] == pytest.approx(m["samples_per_s"])
    if m.get("ci95_s"):  # a single sample has no interval: the table then shows none
        assert row["samples_per_s_lo"] <= row["samples_per_s"] <= row["samples_per_s_hi"]
    else:
        assert row["samples_per_s_lo"] != row["samples_per_s_lo"]  # NaN
    spec = charts.spark_chart(spark_inference(frame)).to_dict()
    assert spec["facet"]["column"]["field"] == "model"
    # spark-streaming: the tiny ladder's rates, each measured (or skipped above one not sustained)
    streamed = [m for m in data["measurements"] if m["workload"] == "spark-streaming"]
    assert [m["point"]["rate"] for m in streamed] == [20, 40]
    assert streamed[0]["status"] == "ok", streamed[0].get("error")
    for m in streamed:
        if m["status"] == "skipped":
            assert "above the sustained rate" in m["skip_reason"]
            continue
        assert m["status"] == "ok" and m["unit"] == "latency", m.get("error")
        assert len(m["samples_s"]) == m["stream"]["files"] == 15
        assert "master local[2]" in m["notes"][0] and m["spark_master"] == "local[2]"
    table = spark_streaming(frame)
    assert list(table["rate"]) == [m["point"]["rate"] for m in streamed if m["status"] == "ok"]
    first = table.iloc[0]
    assert first["p50_s"] == pytest.approx(streamed[0]["median_s"])
    assert first["p50_s_lo"] <= first["p50_s"] <= first["p50_s_hi"]
    assert first["p99_s"] == pytest.approx(streamed[0]["stream"]["p99_s"])
    (best,) = sustained(table).to_dict("records")
    assert best["model"] == "vit-tiny" and best["spark_master"] == "local[2]"
    if table["bounded"].iloc[0]:
        # sustained is what the step achieved, not the rate it was offered
        held = table[table["rate"] == best["rate"]].iloc[0]
        assert best["achieved"] == pytest.approx(held["samples_per_s"])
    else:  # a busy host kept even the lowest rate's latency from staying bounded: nothing sustained, said as such
        assert best["rate"] != best["rate"] and best["achieved"] != best["achieved"]  # NaN
        assert best["next_rate"] == 20
    spec = charts.stream_chart(table).to_dict()
    assert spec["facet"]["column"]["field"] == "model"


def test_spark_workers_run_benchsite_s_interpreter_from_a_venv_that_is_not_activated(tmp_path):
    """`/path/to/venv/bin/python -m runner run -w 'spark-*'`, the venv not activated, with a `python3` first on
    PATH that is not benchsite's interpreter (here one that refuses to run): Spark's Python workers must start the
    venv's interpreter (spark.pyspark.python), not the `python3` on PATH."""
    import site
    import venv

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=False, symlinks=True).create(env_dir)
    python = env_dir / "bin" / "python"
    # the new venv sees the system's packages, not those of a venv the tests may run in: it adds this interpreter's
    # own site directories (their .pth files too, as an editable install's), whichever kind of interpreter it is
    (inner,) = env_dir.glob("lib/python*/site-packages")
    lines = [f"import site; site.addsitedir({d!r})" for d in (*site.getsitepackages(), site.getusersitepackages())]
    (inner / "outer_site.pth").write_text("\n".join(lines) + "\n")
    poison = tmp_path / "poison"
    poison.mkdir()
    for name in ("python3", "python"):
        script = poison / name
        script.write_text("#!/bin/sh\necho 'not the interpreter benchsite runs in' >&2\nexit 3\n")
        script.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "VIRTUAL_ENV")}
    env["PATH"] = f"{poison}{os.pathsep}{env['PATH']}"
    out = tmp_path / "out"
    cmd = [str(python), "-m", "runner", "run", "-w", "spark-inference", "--profile", "tiny", "-f", "torch"]
    cmd += ["-d", "cpu", "--no-equivalence", "--time-budget", "0.5", "--spark-master", "local[2]", "-o", str(out)]
    cmd += ["--rounds", "1"]  # one measuring process is enough to see which interpreter its workers start
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    (path,) = out.rglob("*.yaml")
    (m,) = yaml.safe_load(path.read_text())["measurements"]
    assert m["status"] == "ok", m.get("error")
    # a user's own choice stands; a remote cluster keeps its executors' setting
    from runner.engines.spark.inference import worker_python

    assert worker_python("local[2]", {"PYSPARK_PYTHON": "/opt/py"}) is None
    assert worker_python("spark://spark.example.org:7077", {}) is None
    assert worker_python("local[*]", {}) == sys.executable
    assert worker_python("spark://127.0.0.1:7077", {}) == sys.executable
