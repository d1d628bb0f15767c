"""What the Spark engines ask of a framework: one predict function for one of the suite's models.

Spark's `predict_batch_udf` calls a factory once per Python worker and the function it returns once per batch:

- the factory (`PredictFactory`, a framework's `make_predict_fn(model_cfg, device_kind, gpu)`) builds the model from
  its published configuration with random weights seeded by MODEL_SEED, on the CPU or, for `cuda`/`rocm`, on the
  GPU that `gpu()` names (the one Spark assigned the task: `assigned_gpu`), so every worker computes the same
  function;
- the function (`Predict`) takes a batch of rows, each the model's input flattened to float32 (token ids for BERT,
  an RGB image for the vision models, laid out as `input_shape` says), and returns each row's arg-max class as
  int32.

Nothing here imports a framework or pyspark at import time. PyTorch's implementation is
runner.frameworks.torch.predict; another framework plugs in with a module of the same name and the workload
builders that hand its factory to the engines (runner.engines.spark.inference, runner.engines.spark.streaming).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

MODEL_SEED = 0

Predict = Callable[[np.ndarray], np.ndarray]


class PredictFactory(Protocol):
    def __call__(self, model_cfg: dict[str, Any], device_kind: str, gpu: Callable[[], int]) -> Callable[[], Predict]:
        """The factory predict_batch_udf calls in each Python worker (it must pickle: no open handles)."""
        ...


class EngineDevice(Protocol):
    """All an engine needs of a framework's device: its kind (cpu, cuda, rocm, mps)."""

    kind: str


def input_shape(model_cfg: dict[str, Any]) -> tuple[int, ...]:
    """One example's input: token ids for BERT, an RGB image for the vision models."""
    if model_cfg["family"] == "bert":
        return (model_cfg["seq_len"],)
    side = model_cfg["image_size"]
    return (3, side, side)


def assigned_gpu() -> int:
    """The GPU Spark assigned this task (its `gpu` resource), else 0 (local mode, or outside Spark)."""
    try:
        from pyspark import TaskContext
    except ImportError:
        return 0
    context = TaskContext.get()
    gpus = context.resources().get("gpu") if context is not None else None
    return int(gpus.addresses[0]) if gpus is not None and gpus.addresses else 0


def predict_factory(framework: str) -> PredictFactory:
    """A framework's factory: `make_predict_fn` of runner.frameworks.<framework>.predict. Raises ValueError for a
    framework that has none."""
    try:
        module = importlib.import_module(f"runner.frameworks.{framework}.predict")
    except ModuleNotFoundError as exc:
        raise ValueError(f"{framework} has no predict function for the Spark engines") from exc
    factory: PredictFactory = module.make_predict_fn
    return factory
