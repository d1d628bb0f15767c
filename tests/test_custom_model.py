"""A user's own model (runner.workloads.custom): what --model SPEC names, the errors bad input gets (each naming the
option to change), the CPU forward check, and the structure hash that keys the measurements."""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from runner.workloads import custom  # noqa: E402
from runner.workloads.custom import (  # noqa: E402
    MODES,
    InputSpec,
    SpecError,
)
from tests.conftest import ROOT  # noqa: E402

MODELS = textwrap.dedent(
    """
    import torch
    from torch import nn

    def small():
        return nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 16), nn.ReLU(), nn.Linear(16, 10))

    def wider():
        return nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 32), nn.ReLU(), nn.Linear(32, 10))

    def broken():
        raise RuntimeError("no weights today")

    def not_a_model():
        return 42

    def text_model():
        class Text(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(100, 8)
                self.head = nn.Linear(8, 4)
            def forward(self, ids):
                return self.head(self.embed(ids).mean(dim=1))
        return Text()

    VALUE = 3
    """
)


@pytest.fixture
def models(tmp_path: Path) -> Path:
    path = tmp_path / "models.py"
    path.write_text(MODELS)
    return path


def _error(call, *args) -> str:
    with pytest.raises(SpecError) as caught:
        call(*args)
    return str(caught.value)


def test_a_spec_names_a_file_and_function_or_a_timm_or_transformers_architecture():
    assert custom.parse_spec("models/net.py:build") == custom.ModelSpec("file", "models/net.py", "build")
    assert custom.parse_spec("C:/models/net.py:build").target == "C:/models/net.py"  # a drive letter stays in
    assert custom.parse_spec("timm:resnet50") == custom.ModelSpec("timm", "resnet50")
    assert custom.parse_spec("hf:bert").text == "hf:bert"
    for bad in ("net.py", "timm:", "net.py:", "net.py:not-a-name"):
        assert "--model" in _error(custom.parse_spec, bad)


def test_input_shapes_are_sizes_or_token_lengths():
    assert custom.parse_input("3,224,224") == InputSpec((3, 224, 224))
    assert custom.parse_input("tokens:128", vocab=30522) == InputSpec((128,), tokens=True, vocab=30522)
    for bad in ("3,x,224", "", "tokens:", "tokens:0", "0,4"):
        assert "--input-shape" in _error(custom.parse_input, bad)


def test_a_file_model_is_built_and_checked_on_the_cpu(models: Path):
    spec = custom.parse_spec(f"{models}:small")
    inputs = custom.parse_input("3,8,8")
    model = custom.build(spec, inputs, 10)
    custom.check(model, inputs, 10)
    assert custom.parameter_count(model) == 3 * 8 * 8 * 16 + 16 + 16 * 10 + 10


def test_token_inputs_take_the_vocabulary_from_the_option(models: Path):
    spec = custom.parse_spec(f"{models}:text_model")
    model = custom.build(spec, custom.parse_input("tokens:12"), 4)
    with pytest.raises(SpecError, match="--vocab"):  # a plain module has no configuration to read it from
        custom.vocabulary(model, custom.parse_input("tokens:12"))
    inputs = custom.vocabulary(model, custom.parse_input("tokens:12", vocab=100))
    custom.check(model, inputs, 4)
    x, labels = custom.batch(inputs, 4, 5)
    assert x.shape == (5, 12) and x.dtype == torch.long and int(x.max()) < 100 and int(labels.max()) < 4


def test_bad_models_get_an_error_naming_the_option_and_what_failed(models: Path, tmp_path: Path):
    image = custom.parse_input("3,8,8")
    missing = _error(custom.build, custom.parse_spec(f"{tmp_path}/nope.py:small"), image, 10)
    assert "--model" in missing and "does not exist" in missing
    typo = _error(custom.build, custom.parse_spec(f"{models}:smal"), image, 10)
    assert "has no function 'smal'" in typo and "did you mean small" in typo
    raised = _error(custom.build, custom.parse_spec(f"{models}:broken"), image, 10)
    assert "RuntimeError: no weights today" in raised
    wrong = _error(custom.build, custom.parse_spec(f"{models}:not_a_model"), image, 10)
    assert "not a torch.nn.Module" in wrong and "int" in wrong
    assert "not a function" in _error(custom.build, custom.parse_spec(f"{models}:VALUE"), image, 10)
    bad_syntax = tmp_path / "bad.py"
    bad_syntax.write_text("def f(:\n")
    assert "SyntaxError" in _error(custom.build, custom.parse_spec(f"{bad_syntax}:f"), image, 10)


def test_a_shape_the_model_rejects_is_reported_with_the_models_own_error(models: Path):
    model = custom.build(custom.parse_spec(f"{models}:small"), custom.parse_input("3,8,8"), 10)
    rejected = _error(custom.check, model, custom.parse_input("3,16,16"), 10)
    assert "--input-shape 3,16,16" in rejected and "(2, 3, 16, 16)" in rejected and "RuntimeError" in rejected
    classes = _error(custom.check, model, custom.parse_input("3,8,8"), 5)
    assert "--classes 5" in classes and "10 logits" in classes


def test_unknown_architectures_list_close_matches():
    inputs = custom.parse_input("tokens:16")
    message = _error(custom.build, custom.parse_spec("hf:brt"), inputs, 2)
    assert "no model type 'brt'" in message and "bert" in message
    if importlib.util.find_spec("timm") is None:
        assert "timm is not installed" in _error(custom.build, custom.parse_spec("timm:resnet50"), inputs, 2)
    else:
        assert "close matches" in _error(custom.build, custom.parse_spec("timm:resnet5O"), inputs, 2)


def test_a_transformers_architecture_is_built_from_its_default_configuration_with_random_weights():
    inputs = custom.parse_input("tokens:16")
    model = custom.build(custom.parse_spec("hf:bert"), inputs, 3)
    inputs = custom.vocabulary(model, inputs)
    assert inputs.vocab == model.config.vocab_size
    custom.check(model, inputs, 3)


def test_a_timm_architecture_is_built_with_random_weights_and_checked():
    """Where timm is installed: `timm:NAME` is timm.create_model(NAME, pretrained=False, num_classes=CLASSES)."""
    pytest.importorskip("timm")
    inputs = custom.parse_input("3,32,32")
    model = custom.build(custom.parse_spec("timm:resnet18"), inputs, 7)
    custom.check(model, inputs, 7)
    assert custom.parameter_count(model) == 11_180_103  # ResNet-18 with a 7-class head
    train, infer = (custom.flops_per_sample(model, inputs, 7, mode) for mode in ("train", "infer"))
    assert 2.5 * infer < train < 3.5 * infer  # forward, then backward: about twice the forward's


def test_a_timm_run_on_a_gpu_machine_is_a_valid_file_of_resnet50():
    """The committed --model run of timm:resnet50 on the H100 machine (tests/benchmarks/data/own_model): a file the
    gate accepts, of a model with ResNet-50's parameters and both loops, modes and devices."""
    from runner.results.storage import load

    result, problems = load(ROOT / "tests" / "benchmarks" / "data" / "own_model" / "resnet50_h100.yaml")
    assert result is not None and not [p for p in problems if p.severity == "error"]
    assert {m.params for m in result.measurements} == {25_557_032}
    loops = {
        (mode, variant, device) for mode in MODES for variant in ("as-written", "tuned") for device in ("cpu", "cuda")
    }
    assert {(m.point["mode"], m.variant, m.device) for m in result.measurements} == loops


def test_the_structure_hash_follows_the_arithmetic_not_the_weights(models: Path):
    inputs = custom.parse_input("3,8,8")
    small = custom.parse_spec(f"{models}:small")
    first = custom.structure_hash(custom.build(small, inputs, 10), inputs, 10)
    again = custom.structure_hash(custom.build(small, inputs, 10), inputs, 10)  # other random weights
    assert first == again
    wider = custom.build(custom.parse_spec(f"{models}:wider"), inputs, 10)
    assert custom.structure_hash(wider, inputs, 10) != first
    model = custom.build(small, inputs, 10)
    assert custom.structure_hash(model, custom.parse_input("3,8,8"), 10) != custom.structure_hash(
        model, InputSpec((192,)), 10
    )


def test_flops_are_counted_from_the_model_as_the_suite_counts_its_own(models: Path):
    from runner.workloads.base import linear_flops, train_flops

    inputs = custom.parse_input("3,8,8")
    model = custom.build(custom.parse_spec(f"{models}:small"), inputs, 10)
    layers = [linear_flops(3 * 8 * 8, 16), linear_flops(16, 10)]
    assert custom.flops_per_sample(model, inputs, 10, "infer") == sum(layers)
    assert custom.flops_per_sample(model, inputs, 10, "train") == train_flops(layers)
    checked = custom.prepare(f"{models}:small", "3,8,8", 10, modes=("train", "infer"))
    assert checked.flops == {"infer": sum(layers), "train": train_flops(layers)}
