"""The suite in TensorFlow (Keras 3): the same models, data, optimisers and hyper-parameters as PyTorch.

as-written: the Keras idiom a practitioner writes. `model.compile(...)` with Keras' defaults (its
`jit_compile='auto'` turns XLA on when a GPU is present and off on a CPU-only machine), then one
`model.fit(x, y, batch_size, epochs=1)` per epoch from NumPy arrays in host memory.

tuned: the data resident on the device as tensors, a custom train step under `tf.function(jit_compile=True)`,
the batch gathered inside the compiled step from a per-epoch permutation. Convolutional models on the CPU
are the exception: XLA's CPU convolutions are far slower than TensorFlow's oneDNN kernels (MNIST net: 8 s
against 1.3 s per quick epoch here, measured), so there the step is a `tf.function` without XLA.
`Program.notes` records which ran.

Images are channels-last (N, H, W, C), TensorFlow's native layout on the CPU. The optimisers are set to
PyTorch's hyper-parameters (Keras' defaults differ: Adam epsilon 1e-7, Adadelta rho 0.95 and epsilon 1e-7).
One difference is left on purpose: Keras' Adam adds epsilon before the bias correction of the second
moment (the paper's "epsilon hat"), PyTorch and optax after it; the two agree once |gradient| >> epsilon.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import keras
import numpy as np
import tensorflow as tf

from runner.frameworks.tensorflow import TFDevice, read_back
from runner.workloads import data as synthetic
from runner.workloads.base import Case, warmup_batches
from runner.workloads.suite import FLUX_EPS

LossFn = Callable[[Any, Any], Any]


class Program:
    precision = "fp32"
    notes: tuple[str, ...] = ()  # how the loop ran where that differs by device (the result file records it)

    def __init__(self, model: keras.Model, device: TFDevice):
        self.model, self.device = model, device
        self.params = int(sum(np.prod(v.shape) for v in model.trainable_variables))

    def run_unit(self) -> None:
        raise NotImplementedError

    def sync(self) -> None:
        """Wait for the last update: read back a slice of the last variable the optimiser wrote."""
        read_back(self.model.trainable_variables[-1].value)

    def close(self) -> None:
        keras.backend.clear_session()

    def top_ops(self, units: int = 1) -> list[dict[str, Any]]:
        return []


# --- models: the PyTorch models layer for layer -----------------------------------------------------------------


def mlp(widths: list[int]) -> keras.Sequential:
    """Linear layers with ReLU between them and none after the last (seeds 000 and 001)."""
    layers: list[keras.layers.Layer] = [keras.Input((widths[0],))]
    last = len(widths) - 2
    layers += [keras.layers.Dense(w, activation=None if i == last else "relu") for i, w in enumerate(widths[1:])]
    return keras.Sequential(layers)


def lenet(logits: bool = False) -> keras.Sequential:
    """Seed 002's Flux chain: no activations between the dense layers, softmax unless `logits`."""
    layers: list[Any] = [
        keras.Input((32, 32, 3)),
        keras.layers.Conv2D(16, 5, activation="relu"),
        keras.layers.MaxPooling2D(2),
        keras.layers.Conv2D(8, 5, activation="relu"),
        keras.layers.MaxPooling2D(2),
        keras.layers.Flatten(),
        keras.layers.Dense(120),
        keras.layers.Dense(84),
        keras.layers.Dense(10),
    ]
    if not logits:
        layers.append(keras.layers.Softmax())
    return keras.Sequential(layers)


def mnist_net(dropout: list[float]) -> keras.Sequential:
    """pytorch/examples' MNIST Net, which is also the Keras MNIST convnet's layer stack (1,199,882 params)."""
    return keras.Sequential(
        [
            keras.Input((28, 28, 1)),
            keras.layers.Conv2D(32, 3, activation="relu"),
            keras.layers.Conv2D(64, 3, activation="relu"),
            keras.layers.MaxPooling2D(2),
            keras.layers.Dropout(dropout[0]),
            keras.layers.Flatten(),
            keras.layers.Dense(128, activation="relu"),
            keras.layers.Dropout(dropout[1]),
            keras.layers.Dense(10, activation="log_softmax"),
        ]
    )


def channels_last(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x.transpose(0, 2, 3, 1))


def nll_loss(y_true: Any, log_probs: Any) -> Any:
    """PyTorch's F.nll_loss: the mean negative log-probability of the true class."""
    picked = tf.gather(log_probs, tf.cast(y_true, tf.int32), axis=1, batch_dims=1)
    return -tf.reduce_mean(picked)


def sparse_ce_logits(y_true: Any, logits: Any) -> Any:
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(tf.cast(y_true, tf.int32), logits))


def flux_crossentropy(onehot: Any, probs: Any) -> Any:
    """Flux's crossentropy on softmax output, as seed 002 (and the PyTorch as-written loop) computes it:
    mean over the batch of -sum(y * log(p + eps(Float32)))."""
    return -tf.reduce_mean(tf.reduce_sum(onehot * tf.math.log(probs + FLUX_EPS), axis=1))


def adamw_weights_only(cfg: dict[str, Any]) -> keras.optimizers.Optimizer:
    opt = keras.optimizers.AdamW(learning_rate=cfg["lr"], weight_decay=cfg["weight_decay"], epsilon=1e-8)
    opt.exclude_from_weight_decay(var_names=["bias"])  # PyTorch side: decay on weights (ndim > 1) only
    return opt


# --- the two loops ---------------------------------------------------------------------------------------------


class Loop(Program):
    """What both loops train on: the data, batch size, optimiser, loss, shuffling and learning-rate schedule."""

    def __init__(
        self,
        model: keras.Model,
        device: TFDevice,
        x: np.ndarray,
        y: np.ndarray,
        batch: int,
        optimizer: keras.optimizers.Optimizer,
        loss: LossFn,
        shuffle: bool,
        lr_schedule: Callable[[int], float] | None = None,
    ):
        super().__init__(model, device)
        self.x, self.y, self.batch, self.optimizer, self.loss = x, y, batch, optimizer, loss
        self.shuffle, self.lr_schedule = shuffle, lr_schedule
        self.epoch = 0


class KerasFit(Loop):
    """as-written: compile with Keras' defaults, then one `fit` epoch per unit from host NumPy arrays."""

    def __init__(self, *args: Any, metrics: list[str] | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        with tf.device(self.device.logical):
            self.model.compile(optimizer=self.optimizer, loss=self.loss, metrics=metrics)
        schedule = self.lr_schedule
        self.callbacks = [keras.callbacks.LearningRateScheduler(schedule)] if schedule else []

    def run_unit(self) -> None:
        with tf.device(self.device.logical):
            self.history = self.model.fit(
                self.x,
                self.y,
                batch_size=self.batch,
                epochs=self.epoch + 1,
                initial_epoch=self.epoch,
                shuffle=self.shuffle,
                callbacks=self.callbacks,
                verbose=0,
            )
        self.epoch += 1


class XlaResident(Loop):
    """tuned: resident tensors, an XLA-compiled train step, a fresh permutation per epoch (or none)."""

    def __init__(self, *args: Any, convolutional: bool = False, **kwargs: Any):
        super().__init__(*args, **kwargs)
        xla = not (convolutional and self.device.kind == "cpu")
        self.notes = (
            "tf.function(jit_compile=True) step" if xla else "tf.function step without XLA (CPU convolutions)",
        )
        n = self.x.shape[0]
        with tf.device(self.device.logical):
            self.x, self.y = tf.identity(tf.constant(self.x)), tf.identity(tf.constant(self.y))
            self.order = tf.range(n)
            self.optimizer.build(self.model.trainable_variables)
        self.starts = list(range(0, n, self.batch))
        self.step = tf.function(self._step, jit_compile=xla)

    def _step(self, x: Any, y: Any, idx: Any) -> Any:
        xb, yb = tf.gather(x, idx), tf.gather(y, idx)
        with tf.GradientTape() as tape:
            loss = self.loss(yb, self.model(xb, training=True))
        variables = self.model.trainable_variables
        self.optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables, strict=True))
        return loss

    def run_unit(self) -> None:
        self.train(self.starts)

    def warmup(self) -> None:
        """The engine's warm-up: the step over the first batches and the last (runner.workloads.base.warmup_batches),
        each shape traced and compiled."""
        self.train([self.starts[i] for i in warmup_batches(len(self.starts))])

    def train(self, starts: list[int]) -> None:
        with tf.device(self.device.logical):
            if self.lr_schedule is not None:
                self.optimizer.learning_rate.assign(self.lr_schedule(self.epoch))
            order = tf.random.shuffle(self.order) if self.shuffle else self.order
            for start in starts:
                self.last_loss = self.step(self.x, self.y, order[start : start + self.batch])
        self.epoch += 1


# --- workloads -------------------------------------------------------------------------------------------------------


def tabular_mlp(case: Case, variant: str, device: TFDevice) -> Program:
    cfg = case.config
    x, y = synthetic.tabular(cfg["n"], cfg["widths"][0])
    with tf.device(device.logical):
        model, opt = mlp(cfg["widths"]), adamw_weights_only(cfg)
    if variant == "as-written":
        return KerasFit(model, device, x, y, cfg["batch"], opt, sparse_ce_logits, shuffle=cfg["shuffle"])
    return XlaResident(model, device, x, y, cfg["batch"], opt, sparse_ce_logits, shuffle=cfg["shuffle"])


def depth_sweep(case: Case, variant: str, device: TFDevice) -> Program:
    cfg = case.config
    x, y = synthetic.disc(cfg["n"])
    with tf.device(device.logical):
        model, opt = mlp(cfg["widths"]), keras.optimizers.SGD(learning_rate=cfg["lr"])
    if variant == "as-written":  # the seed counts training errors: Keras' accuracy metric
        return KerasFit(model, device, x, y, cfg["batch"], opt, sparse_ce_logits, shuffle=False, metrics=["accuracy"])
    return XlaResident(model, device, x, y, cfg["batch"], opt, sparse_ce_logits, shuffle=False)


def _momentum_sgd(cfg: dict[str, Any]) -> keras.optimizers.Optimizer:
    return keras.optimizers.SGD(learning_rate=cfg["lr"], momentum=cfg["momentum"])


def cifar_lenet(case: Case, variant: str, device: TFDevice) -> Program:
    cfg = case.config
    x, y = synthetic.images(cfg["n"], cfg["image"], cfg["classes"])
    x = channels_last(x)
    with tf.device(device.logical):
        opt = _momentum_sgd(cfg)
        model = lenet(logits=variant == "tuned")
    if variant == "as-written":
        onehot = np.eye(cfg["classes"], dtype=np.float32)[y]
        return KerasFit(model, device, x, onehot, cfg["batch"], opt, flux_crossentropy, shuffle=False)
    return XlaResident(model, device, x, y, cfg["batch"], opt, sparse_ce_logits, shuffle=False, convolutional=True)


def mnist_cnn(case: Case, variant: str, device: TFDevice) -> Program:
    cfg = case.config
    raw, y = synthetic.mnist(cfg["n"])
    x = channels_last(synthetic.normalise_mnist(raw, *cfg["normalize"]))

    def step_lr(epoch: int, lr: float | None = None) -> float:  # StepLR(step_size=1, gamma)
        return float(cfg["lr"] * cfg["lr_gamma"] ** epoch)

    with tf.device(device.logical):
        model = mnist_net(cfg["dropout"])
        opt = keras.optimizers.Adadelta(learning_rate=cfg["lr"], rho=0.9, epsilon=1e-6)
    if variant == "as-written":
        return KerasFit(model, device, x, y, cfg["batch"], opt, nll_loss, shuffle=True, lr_schedule=step_lr)
    return XlaResident(
        model, device, x, y, cfg["batch"], opt, nll_loss, shuffle=True, lr_schedule=step_lr, convolutional=True
    )


# --- equivalence: PyTorch's weights copied in, gradients copied back out -------------------------------------------


def _to_keras(layer: keras.layers.Layer, weight: np.ndarray, flat_from: tuple[int, ...] | None) -> np.ndarray:
    """A PyTorch weight in the layout of the Keras kernel. After a Flatten of (H, W, C) the dense rows are
    permuted too: PyTorch flattens channels-first."""
    if isinstance(layer, keras.layers.Conv2D):
        return weight.transpose(2, 3, 1, 0)  # (out, in, kh, kw) -> (kh, kw, in, out)
    if flat_from is not None:
        h, w, c = flat_from
        return weight.reshape(-1, c, h, w).transpose(2, 3, 1, 0).reshape(h * w * c, -1)
    return weight.T


def _to_torch(layer: keras.layers.Layer, kernel: np.ndarray, flat_from: tuple[int, ...] | None) -> np.ndarray:
    if isinstance(layer, keras.layers.Conv2D):
        return kernel.transpose(3, 2, 0, 1)
    if flat_from is not None:
        h, w, c = flat_from
        return kernel.reshape(h, w, c, -1).transpose(3, 2, 0, 1).reshape(kernel.shape[-1], -1)
    return kernel.T


def _layouts(model: keras.Model) -> list[tuple[keras.layers.Layer, tuple[int, ...] | None]]:
    """Each layer with weights, and the (H, W, C) shape it flattens from if it follows a Flatten."""
    out, flat_from = [], None
    for layer in model.layers:
        if isinstance(layer, keras.layers.Flatten):
            flat_from = tuple(int(d) for d in layer.input.shape[1:])
        elif layer.trainable_weights:
            out.append((layer, flat_from))
            flat_from = None
    return out


def count_forward_flops(
    model: keras.Model, example_shape: tuple[int, ...], batch: int = 2, dtype: tf.DType = tf.float32
) -> float:
    """FLOPs per example of the MatMul and Conv2D operations in TensorFlow's own traced graph of the forward
    pass (2 per multiply-add), the same convention as the suite's analytic count."""
    spec = tf.TensorSpec((batch, *example_shape), dtype)
    graph = tf.function(lambda x: model(x, training=False)).get_concrete_function(spec).graph
    total = 0.0
    for op in graph.get_operations():
        if op.type in ("MatMul", "BatchMatMulV2", "BatchMatMulV3"):
            a = op.inputs[0].shape.as_list()
            k = a[-2] if op.get_attr("transpose_a" if op.type == "MatMul" else "adj_x") else a[-1]
            total += 2.0 * float(np.prod(op.outputs[0].shape.as_list())) * k
        elif op.type == "Conv2D":
            kh, kw, cin, _ = op.inputs[1].shape.as_list()
            total += 2.0 * float(np.prod(op.outputs[0].shape.as_list())) * kh * kw * cin
    return total / batch


def _equivalence(
    build: Callable[[], keras.Model], ref: dict[str, np.ndarray], x: np.ndarray, y: Any, loss: LossFn
) -> dict:
    """The model built in fp64, as the reference ran (fp32 rounding would flip ReLUs and max-pool choices whose
    inputs lie within rounding of each other, and one flip moves gradients by percents)."""
    floatx = keras.config.floatx()
    keras.config.set_floatx("float64")
    try:
        model = build()
    finally:
        keras.config.set_floatx(floatx)
    layouts = _layouts(model)
    weights = [ref[f"w{i}"] for i in range(2 * len(layouts))]
    for i, (layer, flat_from) in enumerate(layouts):
        layer.set_weights([_to_keras(layer, weights[2 * i], flat_from), weights[2 * i + 1]])
    with tf.GradientTape() as tape:
        out = model(tf.constant(x, tf.float64), training=False)  # dropout off, as in the reference
        value = loss(tf.constant(y), out)
    grads = tape.gradient(value, model.trainable_variables)
    back = []
    for i, (layer, flat_from) in enumerate(layouts):
        back += [_to_torch(layer, grads[2 * i].numpy(), flat_from), grads[2 * i + 1].numpy()]
    return {
        "params": int(sum(np.prod(v.shape) for v in model.trainable_variables)),
        "forward_flops": count_forward_flops(model, x.shape[1:], dtype=tf.float64),
        "output": out.numpy(),
        "loss": float(value),
        "grads": back,
    }


def tabular_mlp_equivalence(case: Case, ref: dict[str, np.ndarray]) -> dict[str, Any]:
    return _equivalence(lambda: mlp(case.config["widths"]), ref, ref["x"], ref["y"], sparse_ce_logits)


def depth_sweep_equivalence(case: Case, ref: dict[str, np.ndarray]) -> dict[str, Any]:
    return _equivalence(lambda: mlp(case.config["widths"]), ref, ref["x"], ref["y"], sparse_ce_logits)


def cifar_lenet_equivalence(case: Case, ref: dict[str, np.ndarray]) -> dict[str, Any]:
    onehot = np.eye(case.config["classes"], dtype=np.float64)[ref["y"]]
    return _equivalence(lenet, ref, channels_last(ref["x"]), onehot, flux_crossentropy)


def mnist_cnn_equivalence(case: Case, ref: dict[str, np.ndarray]) -> dict[str, Any]:
    return _equivalence(lambda: mnist_net(case.config["dropout"]), ref, channels_last(ref["x"]), ref["y"], nll_loss)
