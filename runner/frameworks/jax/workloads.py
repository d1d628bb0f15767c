"""The suite in JAX (+ optax): the same models, data, optimisers and hyper-parameters as PyTorch.

Models are pure functions of a flat list of parameters in PyTorch's order and layout (Linear weights
(out, in), convolution kernels OIHW, images NCHW), so PyTorch's weights drop straight in for the
equivalence check. Initialisation follows PyTorch's default (uniform in +-1/sqrt(fan_in)).

as-written: the JAX idiom from the Flax examples: the data in device arrays, a Python loop over batches
gathered with host-side index arrays, and one `jax.jit`-compiled train step per batch. It keeps the seeds'
host synchronisations (`float(loss)` where the seed calls `.item()` or prints).

tuned: the whole epoch is one compiled function, `lax.scan` over the batches, the permutation drawn on the
device, parameter and optimiser buffers donated on accelerators. Except for convolutional models on the CPU:
XLA's CPU backend runs a loop body's convolutions without its multithreaded kernels (LeNet: 6x slower in a
scan than as separate steps, measured), so there the tuned loop dispatches one compiled step per batch, with
the permutation and the gather on the device and no host synchronisation. `Program.notes` says which ran.
"""

from __future__ import annotations

import itertools
import math
import sys
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax import lax

from runner.frameworks.jax import JaxDevice
from runner.workloads import data as synthetic
from runner.workloads.base import Case, warmup_batches
from runner.workloads.suite import FLUX_EPS

Params = list[jax.Array]
Apply = Callable[[Params, jax.Array, jax.Array | None], jax.Array]
Loss = Callable[[jax.Array, jax.Array], jax.Array]


# --- models -------------------------------------------------------------------------------------------------------


def init_params(seed: int, shapes: list[tuple[int, ...]]) -> list[np.ndarray]:
    """Weights and biases for (out, in) linear and (out, in, kh, kw) conv weight shapes, in order: uniform in
    +-1/sqrt(fan_in), PyTorch's default. Drawn on the host with NumPy: jax.random would compile one XLA program
    per distinct shape, seconds per model on a small CPU before anything is measured."""
    rng = np.random.default_rng(seed)
    params: list[np.ndarray] = []
    for shape in shapes:
        bound = 1.0 / math.sqrt(math.prod(shape[1:]))
        params += [rng.uniform(-bound, bound, size=s).astype(np.float32) for s in (shape, (shape[0],))]
    return params


def linear(x: jax.Array, w: jax.Array, b: jax.Array) -> jax.Array:
    return x @ w.T + b


def conv(x: jax.Array, w: jax.Array, b: jax.Array) -> jax.Array:
    out = lax.conv_general_dilated(x, w, (1, 1), "VALID", dimension_numbers=("NCHW", "OIHW", "NCHW"))
    return out + b[None, :, None, None]


def max_pool(x: jax.Array) -> jax.Array:
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")


def dropout(x: jax.Array, rate: float, key: jax.Array | None) -> jax.Array:
    if key is None or rate == 0.0:
        return x
    keep = jax.random.bernoulli(key, 1.0 - rate, x.shape)
    return jnp.where(keep, x / (1.0 - rate), 0.0)


def mlp(params: Params, x: jax.Array, key: jax.Array | None = None) -> jax.Array:
    """Linear layers with ReLU between them (seeds 000 and 001)."""
    layers = len(params) // 2
    for i in range(layers):
        x = linear(x, params[2 * i], params[2 * i + 1])
        if i < layers - 1:
            x = jax.nn.relu(x)
    return x


def mlp_shapes(widths: list[int]) -> list[tuple[int, ...]]:
    return [(b, a) for a, b in itertools.pairwise(widths)]


LENET_SHAPES: list[tuple[int, ...]] = [(16, 3, 5, 5), (8, 16, 5, 5), (120, 200), (84, 120), (10, 84)]
MNIST_SHAPES: list[tuple[int, ...]] = [(32, 1, 3, 3), (64, 32, 3, 3), (128, 9216), (10, 128)]


def lenet(params: Params, x: jax.Array, key: jax.Array | None = None, logits: bool = False) -> jax.Array:
    x = max_pool(jax.nn.relu(conv(x, params[0], params[1])))
    x = max_pool(jax.nn.relu(conv(x, params[2], params[3])))
    x = x.reshape(x.shape[0], -1)
    x = linear(linear(linear(x, params[4], params[5]), params[6], params[7]), params[8], params[9])
    return x if logits else jax.nn.softmax(x, axis=1)


def mnist_net(params: Params, x: jax.Array, key: jax.Array | None, rates: tuple[float, float]) -> jax.Array:
    keys = jax.random.split(key) if key is not None else (None, None)
    x = jax.nn.relu(conv(x, params[0], params[1]))
    x = max_pool(jax.nn.relu(conv(x, params[2], params[3])))
    x = dropout(x, rates[0], keys[0]).reshape(x.shape[0], -1)
    x = dropout(jax.nn.relu(linear(x, params[4], params[5])), rates[1], keys[1])
    return jax.nn.log_softmax(linear(x, params[6], params[7]), axis=1)


def ce_logits(logits: jax.Array, y: jax.Array) -> jax.Array:
    return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()


def nll(log_probs: jax.Array, y: jax.Array) -> jax.Array:
    return -jnp.take_along_axis(log_probs, y[:, None], axis=1).mean()


def flux_crossentropy(probs: jax.Array, onehot: jax.Array) -> jax.Array:
    """Flux's crossentropy: mean over the batch of -sum(y .* log(yhat .+ eps(Float32)))."""
    return -(onehot * jnp.log(probs + FLUX_EPS)).sum(axis=1).mean()


def weights_only(params: Params) -> list[bool]:
    return [p.ndim > 1 for p in params]


# --- the two loops -------------------------------------------------------------------------------------------------


def _train_step(apply: Apply, loss: Loss, opt: optax.GradientTransformation) -> Callable[..., Any]:
    def step(params: Params, opt_state: Any, xb: jax.Array, yb: jax.Array, key: jax.Array) -> Any:
        def objective(p: Params) -> tuple[jax.Array, jax.Array]:
            out = apply(p, xb, key)
            return loss(out, yb), out

        (value, out), grads = jax.value_and_grad(objective, has_aux=True)(params)
        updates, opt_state = opt.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, value, out

    return step


class Program:
    precision = "fp32"
    notes: tuple[str, ...] = ()  # how the loop ran where that differs by device (the result file records it)

    def __init__(
        self,
        apply: Apply,
        loss: Loss,
        opt: optax.GradientTransformation,
        shapes: list[tuple[int, ...]],
        device: JaxDevice,
        x: np.ndarray,
        y: np.ndarray,
        batch: int,
        shuffle: bool,
        lr_schedule: Callable[[int], float] | None = None,
    ):
        self.device = device
        self.key = jax.random.key(synthetic.DATA_SEED)
        self.weights = jax.device_put(init_params(synthetic.DATA_SEED, shapes), device.device)
        self.params = int(sum(p.size for p in self.weights))  # trainable parameters, as the harness reports
        self.opt = opt
        self.opt_state = jax.device_put(opt.init(self.weights), device.device)
        self.x, self.y = jax.device_put(x, device.device), jax.device_put(y, device.device)
        self.n, self.batch, self.shuffle, self.lr_schedule = x.shape[0], batch, shuffle, lr_schedule
        self.n_batches = math.ceil(self.n / batch)
        self.step = _train_step(apply, loss, opt)
        self.epoch = 0

    def set_learning_rate(self) -> None:
        if self.lr_schedule is not None:
            self.opt_state.hyperparams["learning_rate"] = jnp.asarray(self.lr_schedule(self.epoch), jnp.float32)

    def sync(self) -> None:
        jax.block_until_ready(self.weights)

    def run_unit(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        jax.clear_caches()

    def top_ops(self, units: int = 1) -> list[dict[str, Any]]:
        return []


class JittedStep(Program):
    """as-written: the seed's loop translated, one jitted step per batch from a Python loop, warmed up on a short
    epoch on a CPU (`short_epoch`). `batches` follows
    where the seed's batches come from: 'host' (a DataLoader in host memory: gathered on the host, copied to
    the device per batch), 'slices' (narrow() of resident tensors) or 'list' (a list of resident batches made
    once). `after_batch` keeps the seed's host syncs and prints."""

    after_batch: Callable[[int, jax.Array, jax.Array, jax.Array], None] | None = None
    train_loss = 0.0  # what the seeds' own loops keep on the host

    def __init__(self, *args: Any, batches: str = "slices", **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.jitted = jax.jit(self.step)
        self.host_rng = np.random.default_rng(synthetic.DATA_SEED)
        self.batches = batches
        self.log = sys.stdout  # the measuring child sends stdout to its log file
        if self.device.kind == "cpu":
            self.warmup = self.short_epoch  # the engine's warm-up (runner.measure.worker.engine_options)
        starts = range(0, self.n, self.batch)
        if batches == "host":
            self.host_x, self.host_y = np.asarray(self.x), np.asarray(self.y)
        elif batches == "list":
            self.resident = [(self.x[i : i + self.batch], self.y[i : i + self.batch]) for i in starts]

    def _batch(self, i: int, start: int, order: np.ndarray | None) -> tuple[jax.Array, jax.Array]:
        if self.batches == "list":
            return self.resident[i]
        if self.batches == "host":
            idx = order[start : start + self.batch] if order is not None else slice(start, start + self.batch)
            return jax.device_put((self.host_x[idx], self.host_y[idx]), self.device.device)
        return self.x[start : start + self.batch], self.y[start : start + self.batch]

    def run_unit(self) -> None:
        self.train(range(self.n_batches))

    def short_epoch(self) -> None:
        """The same loop over its first batches and its last (runner.workloads.base.warmup_batches), which compiles
        the step for the full batch and for the epoch's partial last one: the engine's warm-up on a CPU (`warmup`,
        set in __init__). There, with no loader process to start or warm, the first timed epoch after it took as
        long as after a whole epoch (tests/benchmarks/warmup_ab.py --framework jax --variant as-written: 1.000 on
        the 2-core VM), and the seed-sized MNIST warm-up epoch took 54 s of the H100 machine's CPU. On that GPU the
        same benchmark gave 1.193 (4 trials, spread 1.38 to 1.93 s): not shown harmless, and a whole GPU epoch is
        1.5 s, so a GPU warms up whole."""
        self.train(warmup_batches(self.n_batches))

    def train(self, batches: Sequence[int]) -> None:
        self.set_learning_rate()
        order = self.host_rng.permutation(self.n) if self.shuffle else None
        for i in batches:
            start = i * self.batch
            xb, yb = self._batch(i, start, order)
            self.key, sub = jax.random.split(self.key)
            self.weights, self.opt_state, loss, out = self.jitted(self.weights, self.opt_state, xb, yb, sub)
            if self.after_batch is not None:
                self.after_batch(i, loss, out, yb)
        self.epoch += 1


class FusedEpoch(Program):
    """tuned: one compiled epoch, `lax.scan` over the full batches (plus one step for a remainder); for
    convolutional models on the CPU, compiled steps that gather their batch on the device instead."""

    def __init__(self, *args: Any, convolutional: bool = False, **kwargs: Any):
        super().__init__(*args, **kwargs)
        donate = (0, 1) if self.device.kind != "cpu" else ()  # the CPU client cannot reuse donated buffers
        self.fused = not (convolutional and self.device.kind == "cpu")
        if self.fused:
            self.epoch_fn = jax.jit(self._epoch, donate_argnums=donate)
            self.notes = ("one jitted epoch: lax.scan over the batches",)
        else:
            self.step_fn = jax.jit(self._gather_step)
            self.order_fn = jax.jit(self._order)
            self.notes = ("a jitted step per batch, gathered on the device (XLA's CPU convolutions are slow in scan)",)

    def _order(self, key: jax.Array) -> jax.Array:
        return jax.random.permutation(key, self.n) if self.shuffle else jnp.arange(self.n)

    def _gather_step(self, params: Params, opt_state: Any, x: jax.Array, y: jax.Array, idx: jax.Array, key: Any) -> Any:
        params, opt_state, loss, _ = self.step(params, opt_state, x[idx], y[idx], key)
        return params, opt_state, loss

    def _epoch(self, params: Params, opt_state: Any, x: jax.Array, y: jax.Array, key: jax.Array) -> Any:
        n, b = self.n, self.batch
        full = n // b
        key, perm_key, tail_key = jax.random.split(key, 3)
        order = jax.random.permutation(perm_key, n) if self.shuffle else jnp.arange(n)

        def body(carry: Any, inputs: tuple[jax.Array, jax.Array]) -> Any:
            params, opt_state = carry
            i, step_key = inputs
            idx = lax.dynamic_slice(order, (i * b,), (b,))
            params, opt_state, loss, _ = self.step(params, opt_state, x[idx], y[idx], step_key)
            return (params, opt_state), loss

        (params, opt_state), losses = lax.scan(
            body, (params, opt_state), (jnp.arange(full), jax.random.split(key, full))
        )
        loss = losses[-1]
        if n % b:
            idx = order[full * b :]
            params, opt_state, loss, _ = self.step(params, opt_state, x[idx], y[idx], tail_key)
        return params, opt_state, loss

    def run_unit(self) -> None:
        self.train(range(self.n_batches))

    def warmup(self) -> None:
        """A compiled epoch warms up whole (compiling it is the warm-up); compiled steps over the first batches and
        the last (runner.workloads.base.warmup_batches)."""
        if self.fused:
            self.run_unit()
        else:
            self.train(warmup_batches(self.n_batches))

    def train(self, batches: Sequence[int]) -> None:
        """One epoch: the compiled one, or the compiled steps of `batches` (positions in the epoch)."""
        self.set_learning_rate()
        self.key, sub = jax.random.split(self.key)
        if self.fused:
            self.weights, self.opt_state, self.last_loss = self.epoch_fn(
                self.weights, self.opt_state, self.x, self.y, sub
            )
        else:
            order_key, sub = jax.random.split(sub)
            order = self.order_fn(order_key)
            keys = jax.random.split(sub, self.n_batches)
            for i in batches:
                start = i * self.batch
                idx = order[start : start + self.batch]
                self.weights, self.opt_state, self.last_loss = self.step_fn(
                    self.weights, self.opt_state, self.x, self.y, idx, keys[i]
                )
        self.epoch += 1


def _loop(variant: str) -> type[Program]:
    return JittedStep if variant == "as-written" else FusedEpoch


def _adamw(cfg: dict[str, Any]) -> optax.GradientTransformation:
    return optax.adamw(cfg["lr"], b1=0.9, b2=0.999, eps=1e-8, weight_decay=cfg["weight_decay"], mask=weights_only)


# --- workloads --------------------------------------------------------------------------------------------------------


def tabular_mlp(case: Case, variant: str, device: JaxDevice) -> Program:
    cfg = case.config
    x, y = synthetic.tabular(cfg["n"], cfg["widths"][0])
    args = (mlp, ce_logits, _adamw(cfg), mlp_shapes(cfg["widths"]), device, x, y, cfg["batch"], True)
    program = JittedStep(*args, batches="host") if variant == "as-written" else FusedEpoch(*args)
    if isinstance(program, JittedStep):  # the seed adds loss.item() of every batch to a Python float
        program.train_loss = 0.0

        def accumulate(i: int, loss: jax.Array, out: jax.Array, yb: jax.Array) -> None:
            program.train_loss += float(loss)

        program.after_batch = accumulate
    return program


def depth_sweep(case: Case, variant: str, device: JaxDevice) -> Program:
    cfg = case.config
    x, y = synthetic.disc(cfg["n"])
    opt = optax.sgd(cfg["lr"])
    program = _loop(variant)(mlp, ce_logits, opt, mlp_shapes(cfg["widths"]), device, x, y, cfg["batch"], False)
    if isinstance(program, JittedStep):  # the seed sums loss and training errors, and prints them per epoch
        batches = math.ceil(cfg["n"] / cfg["batch"])
        totals: dict[str, Any] = {}

        def tally(i: int, loss: jax.Array, out: jax.Array, yb: jax.Array) -> None:
            errors = jnp.sum(jnp.argmax(out, axis=1) != yb)
            totals["loss"] = loss if i == 0 else totals["loss"] + loss
            totals["errors"] = errors if i == 0 else totals["errors"] + errors
            if i == batches - 1:
                rate = 100 * float(totals["errors"]) / cfg["n"]
                loss_sum = float(totals["loss"])
                print(
                    f"Epoch {program.epoch:2d}: Train Loss {loss_sum:6.2f}, Train Error: {rate:5.02f}%",
                    file=program.log,
                )

        program.after_batch = tally
    return program


def cifar_lenet(case: Case, variant: str, device: JaxDevice) -> Program:
    cfg = case.config
    x, y = synthetic.images(cfg["n"], cfg["image"], cfg["classes"])
    opt = optax.sgd(cfg["lr"], momentum=cfg["momentum"])
    if variant == "as-written":  # softmax output and Flux's crossentropy on one-hot labels
        onehot = np.eye(cfg["classes"], dtype=np.float32)[y]
        args = (lenet, flux_crossentropy, opt, LENET_SHAPES, device, x, onehot, cfg["batch"], False)
        return JittedStep(*args, batches="list")
    logits = partial(lenet, logits=True)
    return FusedEpoch(logits, ce_logits, opt, LENET_SHAPES, device, x, y, cfg["batch"], False, convolutional=True)


def mnist_cnn(case: Case, variant: str, device: JaxDevice) -> Program:
    cfg = case.config
    raw, y = synthetic.mnist(cfg["n"])
    x = synthetic.normalise_mnist(raw, *cfg["normalize"])
    opt = optax.inject_hyperparams(optax.adadelta)(learning_rate=cfg["lr"], rho=0.9, eps=1e-6)
    apply = partial(mnist_net, rates=tuple(cfg["dropout"]))

    def step_lr(epoch: int) -> float:  # StepLR(step_size=1, gamma)
        return float(cfg["lr"] * cfg["lr_gamma"] ** epoch)

    args = (apply, nll, opt, MNIST_SHAPES, device, x, y, cfg["batch"], True, step_lr)
    if variant == "as-written":  # the example's DataLoader: batches from host memory, shuffled on a GPU only
        program: Program = JittedStep(*args[:8], device.kind in ("cuda", "rocm"), step_lr, batches="host")
    else:
        program = FusedEpoch(*args, convolutional=True)
    if isinstance(program, JittedStep):  # the example prints loss.item() every log_interval batches

        def log(i: int, loss: jax.Array, out: jax.Array, yb: jax.Array) -> None:
            if i % cfg["log_interval"] == 0:
                line = f"Train Epoch: {program.epoch} [{i * cfg['batch']}/{cfg['n']}]\tLoss: {float(loss):.6f}"
                print(line, file=program.log)

        program.after_batch = log
    return program


# --- equivalence ------------------------------------------------------------------------------------------------------


def count_forward_flops(fn: Callable[..., Any], *args: Any) -> float:
    """FLOPs of the dot_general and conv_general_dilated operations in the traced jaxpr (2 per multiply-add)."""

    def walk(jaxpr: Any) -> float:
        total = 0.0
        for eqn in jaxpr.eqns:
            name = eqn.primitive.name
            out = math.prod(eqn.outvars[0].aval.shape)
            if name == "dot_general":
                (contract, _), _ = eqn.params["dimension_numbers"]
                lhs = eqn.invars[0].aval.shape
                total += 2.0 * out * math.prod(lhs[d] for d in contract)
            elif name == "conv_general_dilated":
                rhs = eqn.invars[1].aval.shape
                out_feature_dim = eqn.params["dimension_numbers"].rhs_spec[0]
                total += 2.0 * out * math.prod(rhs) / rhs[out_feature_dim]
            for value in eqn.params.values():
                inner = getattr(value, "jaxpr", value)
                if hasattr(inner, "eqns"):
                    total += walk(inner)
        return total

    return walk(jax.make_jaxpr(fn)(*args).jaxpr)


def _equivalence(apply: Apply, loss: Loss, ref: dict[str, np.ndarray], y: np.ndarray) -> dict[str, Any]:
    """Computed in fp64, as the reference ran. The check's child process does nothing else, so switching 64-bit
    types on for the rest of its life is safe."""
    jax.config.update("jax_enable_x64", True)
    count = sum(1 for k in ref if k.startswith("w"))
    params = [jnp.asarray(ref[f"w{i}"]) for i in range(count)]
    x = jnp.asarray(ref["x"])

    def objective(p: Params) -> tuple[jax.Array, jax.Array]:
        out = apply(p, x, None)  # no dropout key: dropout off, as in the reference
        return loss(out, jnp.asarray(y)), out

    # One compiled program: run op by op, every operation of a new shape compiles on its own (seconds per model).
    (value, out), grads = jax.jit(jax.value_and_grad(objective, has_aux=True))(params)
    return {
        "params": int(sum(p.size for p in params)),
        "forward_flops": count_forward_flops(lambda p, xb: apply(p, xb, None), params, x) / x.shape[0],
        "output": np.asarray(out),
        "loss": float(value),
        "grads": [np.asarray(g) for g in grads],
    }


def tabular_mlp_equivalence(case: Case, ref: dict[str, np.ndarray]) -> dict[str, Any]:
    return _equivalence(mlp, ce_logits, ref, ref["y"])


def depth_sweep_equivalence(case: Case, ref: dict[str, np.ndarray]) -> dict[str, Any]:
    return _equivalence(mlp, ce_logits, ref, ref["y"])


def cifar_lenet_equivalence(case: Case, ref: dict[str, np.ndarray]) -> dict[str, Any]:
    onehot = np.eye(case.config["classes"], dtype=np.float64)[ref["y"]]
    return _equivalence(lenet, flux_crossentropy, ref, onehot)


def mnist_cnn_equivalence(case: Case, ref: dict[str, np.ndarray]) -> dict[str, Any]:
    return _equivalence(partial(mnist_net, rates=tuple(case.config["dropout"])), nll, ref, ref["y"])
