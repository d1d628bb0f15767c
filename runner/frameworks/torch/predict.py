"""PyTorch's side of the Spark engines (runner.engines.spark): the predict function they call in Spark's Python
workers (the interface is runner.engines.spark.predict), and the spark-* workload builders that hand it to them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from runner.engines.spark import inference, streaming
from runner.engines.spark.predict import MODEL_SEED, Predict, input_shape
from runner.frameworks.torch import TorchDevice
from runner.workloads.base import Case


def make_predict_fn(model_cfg: dict[str, Any], device_kind: str, gpu: Callable[[], int]) -> Callable[[], Predict]:
    """What predict_batch_udf calls once per Python worker: build the model there (on the GPU `gpu()` names, for
    cuda and rocm) and return the function that predicts one batch (a NumPy array of flat inputs) as the arg-max
    class of each row."""

    def make() -> Predict:
        import torch

        from runner.frameworks.torch.workloads import build_transformer

        on_gpu = device_kind in ("cuda", "rocm")
        device = torch.device("cuda", gpu()) if on_gpu else torch.device("cpu")
        torch.manual_seed(MODEL_SEED)
        model = build_transformer(model_cfg).to(device).eval()
        shape = input_shape(model_cfg)

        def predict(inputs: np.ndarray) -> np.ndarray:
            batch = torch.from_numpy(np.ascontiguousarray(inputs)).reshape(len(inputs), *shape).to(device)
            with torch.no_grad():
                if model_cfg["family"] == "bert":
                    ids = batch.long()
                    logits = model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits
                else:
                    logits = model(pixel_values=batch).logits
            result: np.ndarray = logits.argmax(dim=-1).to("cpu", torch.int32).numpy()
            return result

        return predict

    return make


def spark_inference(case: Case, variant: str, device: TorchDevice) -> inference.SparkInference:
    return inference.spark_inference(case, variant, device, make_predict_fn)


def spark_streaming(case: Case, variant: str, device: TorchDevice) -> streaming.SparkStreaming:
    return streaming.spark_streaming(case, variant, device, make_predict_fn)
