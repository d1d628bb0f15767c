"""The result format: round trip, JSON Schema, and errors that name the file and field."""

from __future__ import annotations

import json
import math

import pytest
import yaml

from runner.results import storage
from runner.results.schema import SCHEMA_VERSION, ResultFile, json_schema
from tests.conftest import make_measurement, make_result


def test_round_trip_is_lossless(result, tmp_path):
    path = storage.save(result, tmp_path / "r.yaml")
    loaded, problems = storage.load(path)
    assert problems == []
    assert loaded == result


def test_json_schema_describes_every_field_and_forbids_extras():
    schema = json_schema()
    assert schema["title"] == "benchsite result file"
    measurement = schema["$defs"]["Measurement"]
    assert measurement["additionalProperties"] is False
    assert "workload_hash" in measurement["required"]
    assert "description" in measurement["properties"]["workload_hash"]
    json.dumps(schema)  # serialisable


def _mutate(result: ResultFile, edit) -> str:
    data = result.model_dump(mode="json", exclude_none=True)
    edit(data)
    return yaml.safe_dump(data)


@pytest.mark.parametrize(
    ("edit", "field", "words"),
    [
        (lambda d: d["measurements"][0].update(median_s=-1.0), "measurements[0].median_s", "greater than 0"),
        (lambda d: d["measurements"][0].update(samples_s=[0.1, float("nan")]), "measurements[0].samples_s[1]", ""),
        (lambda d: d["measurements"][0].update(surprise=1), "measurements[0].surprise", "Extra inputs"),
        (lambda d: d["machine"].update(id="not-a-hash"), "machine.id", "pattern"),
        (lambda d: d["measurements"][0].update(device="tpu"), "measurements[0].device", "Input should be"),
        (lambda d: d["machine"]["cpu"].update(model="x" * 500), "machine.cpu.model", "at most 200"),
        (lambda d: d["machine"]["cpu"].update(model="bad\x07bell"), "machine.cpu.model", "control characters"),
        (lambda d: d.pop("run"), "run", "Field required"),
    ],
)
def test_validation_errors_name_file_and_field(result, edit, field, words):
    text = _mutate(result, edit)
    loaded, problems = storage.parse(text, "results/x/y.yaml")
    assert loaded is None
    assert any(p.field == field and words in p.message for p in problems), problems
    assert all(str(p).startswith("results/x/y.yaml: ") for p in problems)


def test_all_problems_are_reported_at_once(result):
    def edit(d):
        d["measurements"][0]["median_s"] = -1
        d["measurements"][0]["iqr_s"] = -1
        d["machine"]["memory_gib"] = "lots"

    _, problems = storage.parse(_mutate(result, edit), "f.yaml")
    assert {p.field for p in problems} >= {"measurements[0].median_s", "measurements[0].iqr_s", "machine.memory_gib"}


def test_schema_version_mismatch_is_actionable(result):
    newer = _mutate(result, lambda d: d.update(schema_version=SCHEMA_VERSION + 1))
    _, problems = storage.parse(newer, "f.yaml")
    assert problems[0].field == "schema_version" and "upgrade" in problems[0].message


@pytest.mark.parametrize("text", ["", "[1, 2]", "a: [", "\x00\x01binary", "measurements: !!python/object:os.system x"])
def test_garbage_is_an_error_not_an_exception(text):
    loaded, problems = storage.parse(text, "g.yaml")
    assert loaded is None and problems and problems[0].path == "g.yaml"


def test_oversized_file_is_rejected_before_parsing(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text("a: " + "x" * (storage.MAX_FILE_BYTES + 1))
    _, problems = storage.load(path)
    assert "limit" in problems[0].message


def test_path_must_match_machine_id(tmp_path, result):
    name = storage.file_name(result)
    path = storage.save(result, tmp_path / "results" / "ffffffffffffffff" / name)
    _, problems = storage.validate_paths([tmp_path / "results"])
    assert [p.field for p in problems] == ["machine.id"]
    path.unlink()
    path = storage.save(result, tmp_path / "results" / result.machine.id / "r.yaml")
    _, problems = storage.validate_paths([tmp_path / "results"])
    assert [(p.field, name in p.message) for p in problems] == [("run.started_at", True)]
    path.unlink()
    storage.save(result, tmp_path / "results" / result.machine.id / name)
    checked, problems = storage.validate_paths([tmp_path / "results"])
    assert (checked, problems) == (1, [])


def test_failed_measurement_keeps_its_error():
    m = make_measurement(
        status="failed",
        samples_s=[],
        median_s=None,
        ci95_s=None,
        error={"type": "OutOfMemory", "message": "CUDA out of memory"},
    )
    result = make_result([m])
    loaded, _ = storage.parse(storage.dumps(result))
    assert loaded is not None and loaded.measurements[0].error.type == "OutOfMemory"
    assert math.isclose(loaded.measurements[0].warmup_s, 0.5)


def test_schema_8_fields_pass_the_gate_and_older_files_without_them_still_do(tmp_path):
    """A schema-8 file with a data-parallel step's `runs_as` and a Spark measurement's `spark_master` is read and
    passes the gate; the same measurements in a schema-7 file without them (their notes only) too. The fields take
    only their words: a master's address, another way of running or an unknown key is refused."""
    from runner.gate import validate

    ddp = {"workload": "transformer-ddp", "point": {"model": "bert-tiny", "batch_size": 2, "world_size": 2}}
    spark = {"workload": "spark-inference", "point": {"model": "vit-tiny", "batch_size": 16, "partitions": 2}}
    new = make_result(
        [
            make_measurement(
                **ddp, variant="tuned", runs_as="eager", notes=["fp32, batch resident, fused AdamW; eager"]
            ),
            make_measurement(
                **spark, variant="as-written", spark_master="local[2]", notes=["spark 4.0.1; master local[2]; x"]
            ),
        ]
    ).model_copy(update={"schema_version": 8})
    old = new.model_copy(
        update={
            "schema_version": 7,
            "measurements": [m.model_copy(update={"runs_as": None, "spark_master": None}) for m in new.measurements],
        }
    )
    for result, folder in ((new, "new"), (old, "old")):
        path = storage.save(result, tmp_path / folder / result.machine.id / storage.file_name(result))
        loaded, problems = storage.load(path)
        assert problems == [] and loaded == result
        assert validate.validate([path], strict=True).errors == []
        text = path.read_text()
        assert ("runs_as: eager" in text, "spark_master: local[2]" in text) == (result is new, result is new)
    for edit, field in (
        (lambda d: d["measurements"][1].update(spark_master="spark://db-7.corp.example:7077"), "spark_master"),
        (lambda d: d["measurements"][0].update(runs_as="CUDA graph"), "runs_as"),
        (lambda d: d["measurements"][0].update(run_as="eager"), "run_as"),
    ):
        loaded, problems = storage.parse(_mutate(new, edit), "f.yaml")
        assert loaded is None and any(p.field.endswith(field) for p in problems), problems
