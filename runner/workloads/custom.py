"""A user's own model (`benchsite run --model SPEC`): what the SPEC names, the synthetic batch it is fed, and the
hash of its structure that keys its measurements.

SPEC is one of

- `path/to/file.py:FUNCTION`: a function, called with no arguments, that returns a `torch.nn.Module`;
- `timm:NAME`: a timm architecture (timm.create_model(NAME, pretrained=False): random weights);
- `hf:MODEL_TYPE`: a transformers architecture from its default configuration (random weights), with a
  sequence-classification head for token inputs and an image-classification head for image inputs.

Nothing is downloaded. Inputs are synthetic: `--input-shape 3,224,224` gives each sample a float tensor of that
shape, `--input-shape tokens:128` a sequence of 128 token ids below the vocabulary size (`--vocab`, by default the
model configuration's `vocab_size`). Targets are class ids below `--classes`, and the loss is cross-entropy over
the model's logits: its output, or the output's `logits`, or its first element, shaped (batch, classes).

Every error here is a SpecError whose message names the option to change; `check` builds the model and runs one
forward pass of a batch of two on the CPU before anything is measured, so a model that rejects its input says so
at once, with the model's own error.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib.util
import json
import os
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

KINDS = ("file", "timm", "hf")


class SpecError(ValueError):
    """A --model SPEC, or an option that goes with it, that cannot be measured; the message says which and why."""


@dataclass(frozen=True)
class ModelSpec:
    """What --model names: `kind` file (target a path, function its function), timm or hf (target a name)."""

    kind: str
    target: str
    function: str | None = None

    @property
    def text(self) -> str:
        """The SPEC as given on the command line."""
        if self.kind == "file":
            return f"{self.target}:{self.function}"
        return f"{self.kind}:{self.target}"


@dataclass(frozen=True)
class InputSpec:
    """A sample's synthetic input: token ids of `length` below `vocab` (tokens), or a float tensor of `shape`."""

    shape: tuple[int, ...]
    tokens: bool = False
    vocab: int | None = None

    @property
    def text(self) -> str:
        return f"tokens:{self.shape[0]}" if self.tokens else ",".join(str(s) for s in self.shape)


def parse_spec(text: str) -> ModelSpec:
    """--model's value, checked for form (not yet for existence: `build` does that)."""
    text = text.strip()
    prefix, sep, rest = text.partition(":")
    if sep and prefix in ("timm", "hf"):
        if not rest.strip():
            raise SpecError(f"--model {text!r}: name the architecture after '{prefix}:', e.g. {_example(prefix)}")
        return ModelSpec(prefix, rest.strip())
    path, sep, function = text.rpartition(":")
    if not sep or not path or not function.strip():
        raise SpecError(
            f"--model {text!r}: expected path/to/file.py:FUNCTION (a function returning a torch.nn.Module), "
            "timm:NAME or hf:MODEL_TYPE"
        )
    if not function.isidentifier():
        raise SpecError(f"--model {text!r}: {function!r} is not a Python function name")
    return ModelSpec("file", path, function)


def _example(prefix: str) -> str:
    return "timm:resnet50" if prefix == "timm" else "hf:bert"


def parse_input(text: str, vocab: int | None = None) -> InputSpec:
    """--input-shape's value: 'C,H,W' (or any comma-separated sizes) or 'tokens:LENGTH'."""
    raw = text.strip()
    if raw.startswith("tokens:"):
        length = raw.removeprefix("tokens:").strip()
        if not length.isdigit() or int(length) < 1:
            raise SpecError(f"--input-shape {text!r}: expected tokens:LENGTH with a whole LENGTH of 1 or more")
        if vocab is not None and vocab < 2:
            raise SpecError(f"--vocab {vocab}: a vocabulary needs at least 2 tokens")
        return InputSpec((int(length),), tokens=True, vocab=vocab)
    parts = [p.strip() for p in raw.split(",")]
    if not parts or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise SpecError(
            f"--input-shape {text!r}: expected the sizes of one sample, comma-separated (e.g. 3,224,224), or "
            "tokens:LENGTH for token ids"
        )
    return InputSpec(tuple(int(p) for p in parts))


def build(spec: ModelSpec, inputs: InputSpec, classes: int) -> Any:
    """The model SPEC names, with random weights. SpecError where it does not exist, raises or is not a module."""
    import torch

    if spec.kind == "file":
        model = _call(_function(spec), spec)
    elif spec.kind == "timm":
        model = _timm(spec, classes)
    else:
        model = _hf(spec, inputs, classes)
    if not isinstance(model, torch.nn.Module):
        raise SpecError(
            f"--model {spec.text}: returned {type(model).__module__}.{type(model).__qualname__}, not a torch.nn.Module"
        )
    return model


def _function(spec: ModelSpec) -> Callable[[], Any]:
    path = Path(spec.target)
    if not path.is_file():
        raise SpecError(f"--model {spec.text}: {path} does not exist (or is not a file)")
    name = "benchsite_model_" + hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]
    loader = importlib.util.spec_from_file_location(name, path)
    if loader is None or loader.loader is None:
        raise SpecError(f"--model {spec.text}: {path} cannot be imported as a Python module")
    module = importlib.util.module_from_spec(loader)
    sys.modules[name] = module  # dataclasses and pickling look a module's classes up by name
    try:
        loader.loader.exec_module(module)
    except Exception as exc:  # the user's file: any error it raises is theirs to see
        sys.modules.pop(name, None)
        raise SpecError(f"--model {spec.text}: importing {path} raised {type(exc).__name__}: {exc}") from exc
    function = getattr(module, str(spec.function), None)
    if function is None:
        found = [n for n, v in vars(module).items() if callable(v) and not n.startswith("_")]
        close = difflib.get_close_matches(str(spec.function), found, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise SpecError(f"--model {spec.text}: {path} has no function {spec.function!r}{hint}")
    if not callable(function):
        raise SpecError(f"--model {spec.text}: {spec.function!r} in {path} is not a function")
    return function


def _call(function: Callable[[], Any], spec: ModelSpec) -> Any:
    try:
        return function()
    except Exception as exc:
        raise SpecError(f"--model {spec.text}: calling {spec.function}() raised {type(exc).__name__}: {exc}") from exc


def _timm(spec: ModelSpec, classes: int) -> Any:
    try:
        import timm
    except ImportError as exc:
        raise SpecError(f"--model {spec.text}: timm is not installed (pip install timm)") from exc
    names = timm.list_models()
    if spec.target not in names:
        close = difflib.get_close_matches(spec.target, names, n=5)
        hint = f"; close matches: {', '.join(close)}" if close else ""
        raise SpecError(f"--model {spec.text}: timm has no architecture {spec.target!r}{hint}")
    try:
        return timm.create_model(spec.target, pretrained=False, num_classes=classes)
    except Exception as exc:
        raise SpecError(f"--model {spec.text}: timm.create_model raised {type(exc).__name__}: {exc}") from exc


def _hf(spec: ModelSpec, inputs: InputSpec, classes: int) -> Any:
    try:
        import transformers
        from transformers.models.auto.configuration_auto import CONFIG_MAPPING
    except ImportError as exc:
        raise SpecError(f"--model {spec.text}: transformers is not installed (pip install transformers)") from exc
    if spec.target not in CONFIG_MAPPING:
        close = difflib.get_close_matches(spec.target, list(CONFIG_MAPPING.keys()), n=5)
        hint = f"; close matches: {', '.join(close)}" if close else ""
        raise SpecError(f"--model {spec.text}: transformers has no model type {spec.target!r}{hint}")
    config = transformers.AutoConfig.for_model(spec.target, num_labels=classes)
    head = (
        transformers.AutoModelForSequenceClassification
        if inputs.tokens
        else transformers.AutoModelForImageClassification
    )
    try:
        return head.from_config(config)
    except Exception as exc:  # no such head for this architecture, or its config rejects the input kind
        kind = "token" if inputs.tokens else "image"
        raise SpecError(
            f"--model {spec.text}: transformers has no {kind}-classification model for {spec.target!r} "
            f"({type(exc).__name__}: {exc}); give --input-shape {'C,H,W' if inputs.tokens else 'tokens:LENGTH'} "
            "if it takes the other kind of input"
        ) from exc


def vocabulary(model: Any, inputs: InputSpec) -> InputSpec:
    """The input with its vocabulary size: --vocab where given, else the model configuration's vocab_size."""
    if not inputs.tokens or inputs.vocab is not None:
        return inputs
    size = getattr(getattr(model, "config", None), "vocab_size", None)
    if not isinstance(size, int) or size < 2:
        raise SpecError(
            "--vocab: the model has no configuration with a vocab_size to take the token ids from; give --vocab N"
        )
    return InputSpec(inputs.shape, tokens=True, vocab=size)


def batch(inputs: InputSpec, classes: int, size: int, seed: int = 0) -> tuple[Any, Any]:
    """A synthetic batch of `size` samples (the inputs, the class ids), the same for the same seed."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, classes, (size,), generator=gen)
    if inputs.tokens:
        assert inputs.vocab is not None
        return torch.randint(0, inputs.vocab, (size, *inputs.shape), generator=gen), labels
    return torch.randn(size, *inputs.shape, generator=gen), labels


def forward(model: Any, x: Any, tokens: bool, hf: bool | None = None) -> Any:
    """The model's logits for a batch: a transformers model (`hf`, by default read from the model's class) takes
    input_ids (tokens) or pixel_values by name, any other module its input positionally; the output is the logits,
    their `logits`, or the first element."""
    if is_transformers(model) if hf is None else hf:
        out = model(input_ids=x) if tokens else model(pixel_values=x)
    else:
        out = model(x)
    if hasattr(out, "logits"):
        return out.logits
    if isinstance(out, (tuple, list)):
        return out[0]
    return out


def is_transformers(model: Any) -> bool:
    return any(c.__module__.startswith("transformers.") for c in type(model).__mro__)


def check(model: Any, inputs: InputSpec, classes: int) -> None:
    """One forward pass and loss of a batch of two on the CPU; SpecError with what failed."""
    import torch

    model = model.to("cpu").eval()
    x, labels = batch(inputs, classes, 2)
    try:
        with torch.no_grad():
            logits = forward(model, x, inputs.tokens)
    except Exception as exc:
        raise SpecError(
            f"--input-shape {inputs.text}: the model rejected a batch of shape {tuple(x.shape)} on the CPU "
            f"({type(exc).__name__}: {exc})"
        ) from exc
    if not isinstance(logits, torch.Tensor) or logits.dim() != 2 or logits.shape[0] != 2:
        shape = tuple(logits.shape) if isinstance(logits, torch.Tensor) else type(logits).__name__
        raise SpecError(
            f"--model: the model's output for a batch of 2 is {shape}; benchsite trains with cross-entropy over "
            "logits shaped (batch, classes)"
        )
    if logits.shape[1] != classes:
        raise SpecError(
            f"--classes {classes}: the model gives {logits.shape[1]} logits per sample; give --classes "
            f"{logits.shape[1]} or build the model with {classes} outputs"
        )
    torch.nn.functional.cross_entropy(logits.float(), labels)


def flops_per_sample(model: Any, inputs: InputSpec, classes: int, mode: str) -> float:
    """The FLOPs of one sample's step, counted from the model by PyTorch's FlopCounterMode over a batch of two on
    the CPU (matrix products and convolutions, a multiply-add 2 FLOPs, as the suite counts its own): the forward
    pass for inference; for training the forward pass, the loss and the backward pass."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    model = model.to("cpu").train(mode == "train")
    x, labels = batch(inputs, classes, 2)
    counter = FlopCounterMode(display=False)
    with counter:
        if mode == "train":
            torch.nn.functional.cross_entropy(forward(model, x, inputs.tokens).float(), labels).backward()
        else:
            with torch.no_grad():
                forward(model, x, inputs.tokens)
    model.zero_grad(set_to_none=True)
    return counter.get_total_flops() / 2


def structure(model: Any, inputs: InputSpec, classes: int) -> dict[str, Any]:
    """What identifies the model's work: every module's type (by its place in the model), every parameter's shape,
    the input and the classes. Two models with these equal do the same arithmetic on the same shapes."""
    return {
        "modules": [[name, type(module).__qualname__] for name, module in model.named_modules()],
        "parameters": [[name, list(p.shape)] for name, p in model.named_parameters()],
        "input": asdict(inputs),
        "classes": classes,
    }


def structure_hash(model: Any, inputs: InputSpec, classes: int) -> str:
    """The hash of `structure`: the key of the model's measurements (with the loop, mode and batch size)."""
    text = json.dumps(structure(model, inputs, classes), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def parameter_count(model: Any) -> int:
    return int(sum(p.numel() for p in model.parameters()))


# --- the workload --------------------------------------------------------------------------------------------------

# The run's --model options, as JSON, for every process of the run (the measuring processes build the model anew).
ENV = "BENCHSITE_CUSTOM_MODEL"
WORKLOAD = "custom"
MODES = ("train", "infer")
# Batch sizes by profile where --batch-size is not given.
DEFAULT_BATCHES = {"tiny": (2,), "quick": (8, 32), "standard": (8, 32, 128)}
LR = 5e-5


@dataclass(frozen=True)
class Checked:
    """A --model that was built and ran one CPU forward pass: what every process of the run needs to rebuild it."""

    spec: str
    input: InputSpec
    classes: int
    structure: str
    params: int
    modes: tuple[str, ...]
    batches: tuple[int, ...] | None  # None: the profile's
    flops: dict[str, float]  # FLOPs of one sample's step, by mode (flops_per_sample)

    def to_env(self) -> str:
        return json.dumps({**asdict(self), "input": asdict(self.input)})


def prepare(
    text: str,
    input_shape: str,
    classes: int,
    vocab: int | None = None,
    modes: tuple[str, ...] = ("train",),
    batches: tuple[int, ...] | None = None,
) -> Checked:
    """--model and its options checked in the run's own process before anything is measured: the model is built and
    runs one forward pass on the CPU (SpecError otherwise)."""
    if classes < 2:
        raise SpecError(f"--classes {classes}: a classifier needs at least 2 classes")
    unknown = [m for m in modes if m not in MODES]
    if unknown or not modes:
        raise SpecError(f"--mode {', '.join(unknown) or '(none)'}: expected train, infer or both")
    if batches is not None and (not batches or any(b < 1 for b in batches)):
        raise SpecError("--batch-size: expected whole batch sizes of 1 or more, e.g. 8,32,128")
    spec = parse_spec(text)
    inputs = parse_input(input_shape, vocab)
    model = build(spec, inputs, classes)
    inputs = vocabulary(model, inputs)
    check(model, inputs, classes)
    modes = tuple(dict.fromkeys(modes))
    return Checked(
        spec.text,
        inputs,
        classes,
        structure_hash(model, inputs, classes),
        parameter_count(model),
        modes,
        tuple(sorted(set(batches))) if batches else None,
        {mode: flops_per_sample(model, inputs, classes, mode) for mode in modes},
    )


def resumed(raw: str) -> Checked:
    """The model of an interrupted --model run (its Checked, as JSON), built and checked again as at the start of a
    run and handed to this process and those it starts (BENCHSITE_CUSTOM_MODEL; runner.workloads.register_custom
    registers it): SpecError where it can no longer be built, or where its structure is no longer the one the
    interrupted run measured (its file changed), for the rest would not be the same model."""
    was = json.loads(raw)
    shape = was["input"]
    text = f"tokens:{shape['shape'][0]}" if shape["tokens"] else ",".join(str(s) for s in shape["shape"])
    batches = tuple(was["batches"]) if was["batches"] else None
    try:
        checked = prepare(was["spec"], text, was["classes"], shape["vocab"], tuple(was["modes"]), batches)
    except SpecError as exc:
        raise SpecError(f"the interrupted run's model cannot be built again: {exc}") from None
    if checked.structure != was["structure"]:
        raise SpecError(
            f"the interrupted run measured {was['spec']} with structure {was['structure']}; it now has structure "
            f"{checked.structure} (its code changed): run it anew rather than resume"
        )
    os.environ[ENV] = checked.to_env()
    return checked


def options_from_env() -> dict[str, Any]:
    """The run's --model options (Checked, as JSON in BENCHSITE_CUSTOM_MODEL)."""
    raw = os.environ.get(ENV)
    if not raw:
        raise RuntimeError(f"{ENV} is not set: the custom workload runs only under `benchsite run --model`")
    options: dict[str, Any] = json.loads(raw)
    options["input"]["shape"] = tuple(options["input"]["shape"])
    return options


def cases(profile: str) -> list[Any]:
    """One case per mode and batch size of the run's --model."""
    from runner.workloads.base import Case
    from runner.workloads.suite import TRANSFORMER_LOOPS  # seed 003's step, for any model

    options = options_from_env()
    batches = options["batches"] or DEFAULT_BATCHES[profile]
    out = []
    for mode in options["modes"]:
        for size in batches:
            config = {
                "structure": options["structure"],
                "input": options["input"],
                "classes": options["classes"],
                "mode": mode,
                "batch": size,
                "optimizer": "adamw",
                "lr": LR,
                "data": "synthetic-v1",
                "loops": TRANSFORMER_LOOPS,
            }
            point = {"model": options["structure"], "mode": mode, "batch_size": size}
            flops = options["flops"][mode] * size or None  # a model of no matrix products: no rate
            out.append(Case(WORKLOAD, point, config, "step", size, params=options["params"], flops_per_unit=flops))
    return out


def workload() -> Any:
    """The custom workload of this run's --model (registered by runner.workloads where BENCHSITE_CUSTOM_MODEL is
    set, in the run's process and in every measuring process it starts)."""
    from runner.workloads.base import Workload

    return Workload(
        WORKLOAD,
        "",
        "Your model",
        "A model given with --model: fine-tuning steps and inference over a batch sweep, the suite's loops.",
        "step",
        cases,
        {"torch": "runner.frameworks.torch.custom:custom"},
        unsupported={f: "--model measures PyTorch modules only" for f in ("tensorflow", "jax")},
    )
