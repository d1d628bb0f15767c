"""The suite in PyTorch: models, synthetic data and the as-written and tuned loops of every workload.

Each builder takes (case, variant, device) and returns a Program whose `run_unit()` runs one epoch or
step. Programs never synchronise at the end of a unit: the timing engine does, at the timer boundary.
As-written loops keep whatever syncs the seed's own loop has (`loss.item()`, printing a tensor), because
those are part of what the seed measured.
"""

from __future__ import annotations

import itertools
import math
import sys
from collections.abc import Callable, Iterable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset, TensorDataset

from runner.frameworks.torch import TorchDevice
from runner.frameworks.torch.vision import mnist_transform
from runner.workloads import data as synthetic
from runner.workloads.base import Case, warmup_batches
from runner.workloads.suite import TRANSFORMER_COMPILED_ON

TOP_OPS = 10


class Program:
    """One built workload point, ready to time."""

    precision = "fp32"
    notes: tuple[str, ...] = ()  # how the loop ran where that differs by device (the result file records it)

    def __init__(self, model: nn.Module, device: TorchDevice):
        self.model = model
        self.device = device
        self.params = sum(p.numel() for p in model.parameters() if p.requires_grad)

    def run_unit(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Release workers and device memory before the next point in the same process."""

    def profiled(self, events: list[tuple[str, int]]) -> None:
        """Every event of the profiled unit (name, calls per unit), for a program that records more of it."""

    def top_ops(self, units: int = 1) -> list[dict[str, Any]]:
        """The operators that dominate one unit on this device, from torch.profiler."""
        from torch.profiler import ProfilerActivity, profile

        on_gpu = self.device.kind in ("cuda", "rocm")
        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if on_gpu else [])
        with profile(activities=activities) as prof:
            for _ in range(units):
                self.run_unit()
            self.device.sync()
        events = prof.key_averages()
        self.profiled([(e.key, int(e.count) // units) for e in events])

        def self_time(e: Any) -> float:
            if on_gpu:
                return float(getattr(e, "self_device_time_total", getattr(e, "self_cuda_time_total", 0.0)))
            return float(e.self_cpu_time_total)

        def total_time(e: Any) -> float:
            if on_gpu:
                return float(getattr(e, "device_time_total", getattr(e, "cuda_time_total", 0.0)))
            return float(e.cpu_time_total)

        ranked = sorted((e for e in events if self_time(e) > 0), key=self_time, reverse=True)[:TOP_OPS]
        return [
            {
                "name": e.key[:200],
                "self_s": self_time(e) / 1e6 / units,
                "total_s": total_time(e) / 1e6 / units,
                "calls": int(e.count) // units,
            }
            for e in ranked
        ]


def _fused_or_foreach(device: TorchDevice) -> dict[str, bool]:
    """Fused optimizer kernels where this torch has them for the device, else the multi-tensor path."""
    if device.kind in ("cuda", "rocm", "cpu"):
        return {"fused": True}
    return {"foreach": True}


class _GraphedEpoch:
    """Runs an epoch body eagerly, or, on CUDA/HIP, replays it from a graph captured once.

    For tiny models an epoch is thousands of kernel launches of a few microseconds each: the launch
    overhead, not the GPU, sets the time. Capturing the whole epoch in one graph removes it.
    """

    def __init__(self, body: Callable[[], None], device: TorchDevice, before: Callable[[], None] | None = None):
        self.body, self.device, self.before = body, device, before
        self.graph: torch.cuda.CUDAGraph | None = None

    def __call__(self) -> None:
        if self.before is not None:
            self.before()
        if not self.device.graphs:
            self.body()
            return
        if self.graph is None:
            self._capture()
        assert self.graph is not None
        self.graph.replay()

    def _capture(self) -> None:
        self.graph = capture_graph(self.body, self.device.device)


def capture_graph(
    body: Callable[[], object],
    device: torch.device,
    side: torch.cuda.Stream | None = None,
    warmups: int = 1,
    between: Callable[[], object] | None = None,
) -> torch.cuda.CUDAGraph:
    """`body` run `warmups` times on a side stream (optimizer state, cuDNN/cuBLAS workspaces, DDP's buckets), as
    PyTorch's notes require, `between` after each, then captured once into a graph to replay."""
    side = side or torch.cuda.Stream(device)
    current = torch.cuda.current_stream(device)
    side.wait_stream(current)
    with torch.cuda.stream(side):
        for _ in range(warmups):
            body()
            if between is not None:
                between()
    current.wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        body()
    return graph


def _step(model: nn.Module, optimizer: torch.optim.Optimizer, loss: torch.Tensor, graphed: bool) -> None:
    # Inside a graph the gradients must stay at fixed addresses: zero them in place instead of freeing.
    optimizer.zero_grad(set_to_none=not graphed)
    loss.backward()
    optimizer.step()


# --- equivalence: the reference every other framework is compared with (runner.measure.equivalence) ------------------


def _reference(
    model: nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
) -> dict[str, Any]:
    """Output, loss and gradients of one batch in fp64 with dropout off, the initial weights, and the forward
    FLOPs per example as PyTorch's own counter (torch.utils.flop_counter) sees them."""
    from torch.utils.flop_counter import FlopCounterMode

    model.eval().double()  # dropout off: its random masks cannot be the same across frameworks
    x = x.double() if x.is_floating_point() else x
    params = [p for p in model.parameters() if p.requires_grad]
    weights = [p.detach().numpy().copy() for p in params]
    with FlopCounterMode(display=False) as counter:
        out = model(x)
    loss = loss_fn(out, y)
    grads = torch.autograd.grad(loss, params)
    return {
        "params": sum(p.numel() for p in params),
        "forward_flops": counter.get_total_flops() / x.shape[0],
        "output": out.detach().numpy(),
        "loss": float(loss.detach()),
        "grads": [g.numpy() for g in grads],
        "weights": weights,
        "x": x.numpy(),
        "y": y.numpy(),
    }


# --- seed 000: tabular MLP ------------------------------------------------------------------------------------


class MultiLayerPerceptron(nn.Module):
    """The seed's model, layer for layer."""

    def __init__(self, input_dim: int, widths: list[int]):
        super().__init__()
        self.fc1 = nn.Linear(input_dim, widths[1])
        self.fc2 = nn.Linear(widths[1], widths[2])
        self.fc3 = nn.Linear(widths[2], widths[3])
        self.activation = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.activation(self.fc1(x))
        x = self.activation(self.fc2(x))
        return self.fc3(x)


def tabular_data(n: int, features: int) -> tuple[torch.Tensor, torch.Tensor]:
    x, y = synthetic.tabular(n, features)
    return torch.from_numpy(x), torch.from_numpy(y)


def _adamw_weights_only(model: nn.Module, lr: float, wd: float, **kwargs: Any) -> torch.optim.AdamW:
    decay = [p for p in model.parameters() if p.ndim > 1]
    no_decay = [p for p in model.parameters() if p.ndim <= 1]
    return torch.optim.AdamW(
        [{"params": decay, "weight_decay": wd}, {"params": no_decay, "weight_decay": 0.0}], lr=lr, **kwargs
    )


class TabularAsWritten(Program):
    """Seed 000's train(): one DataLoader for every device (batch 10, shuffle, pinned memory, 2 workers: the
    seed's comment says the CPU does not need them, but its CPU timing used the same loader), non-blocking
    copies, `.item()` per batch."""

    def __init__(self, case: Case, device: TorchDevice):
        cfg, loop = case.config, case.loop("as-written")
        x, y = tabular_data(cfg["n"], cfg["widths"][0])
        super().__init__(MultiLayerPerceptron(cfg["widths"][0], cfg["widths"]), device)
        self.non_blocking = loop["non_blocking"]
        self.model.to(device.device, non_blocking=self.non_blocking)
        self.optimizer = _adamw_weights_only(self.model, cfg["lr"], cfg["weight_decay"])
        self.criterion = nn.CrossEntropyLoss()
        self.loader = DataLoader(TensorDataset(x, y), **loop["loader"])

    def run_unit(self) -> None:
        dev = self.device.device
        self.model.train()
        train_loss, n_batches = 0.0, 0
        for x_batch, y_batch in self.loader:
            n_batches += 1
            x_batch = x_batch.to(dev, non_blocking=self.non_blocking)
            y_batch = y_batch.to(dev, non_blocking=self.non_blocking)
            logits = self.model(x_batch)
            batch_loss = self.criterion(logits, y_batch)
            train_loss += batch_loss.item()
            self.optimizer.zero_grad()
            batch_loss.backward()
            self.optimizer.step()
        self.train_loss = train_loss / n_batches


class ResidentShuffled(Program):
    """Tuned loop shared by the small models: data resident on the device, a fresh permutation per epoch
    (or none), fused optimizer, no host syncs, and on CUDA/HIP the whole epoch replayed from one graph."""

    def __init__(
        self,
        model: nn.Module,
        device: TorchDevice,
        x: torch.Tensor,
        y: torch.Tensor,
        batch: int,
        make_optimizer: Callable[[nn.Module, dict[str, Any]], torch.optim.Optimizer],
        loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
        shuffle: bool,
    ):
        super().__init__(model, device)
        dev = device.device
        self.model.to(dev).train()
        self.x, self.y = x.to(dev), y.to(dev)
        self.batch, self.loss_fn = batch, loss_fn
        extra: dict[str, Any] = _fused_or_foreach(device)
        if device.graphs:
            extra["capturable"] = True
        try:
            self.optimizer = make_optimizer(self.model, extra)
        except (RuntimeError, ValueError):  # no fused kernel for this device in this torch
            extra.pop("fused", None)
            self.optimizer = make_optimizer(self.model, {**extra, "foreach": True})
        n = self.x.shape[0]
        self.perm = torch.arange(n, device=dev)
        self.shuffle = shuffle
        self.epoch = _GraphedEpoch(self._body, device, before=self._reshuffle if shuffle else None)

    def _reshuffle(self) -> None:
        self.perm.copy_(torch.randperm(self.perm.shape[0], device=self.device.device))

    def _body(self, batches: Iterable[int] | None = None) -> None:
        n = self.x.shape[0]
        for start in range(0, n, self.batch) if batches is None else (i * self.batch for i in batches):
            if self.shuffle:
                idx = self.perm[start : start + self.batch]
                xb, yb = self.x.index_select(0, idx), self.y.index_select(0, idx)
            else:
                xb, yb = self.x[start : start + self.batch], self.y[start : start + self.batch]
            loss = self.loss_fn(self.model(xb), yb)
            _step(self.model, self.optimizer, loss, self.device.graphs)

    def run_unit(self) -> None:
        self.epoch()

    def warmup(self) -> None:
        """A replayed epoch warms up by capturing the whole of it; an eager one on its first batches and its last
        (the engine's warm-up, runner.workloads.base.warmup_batches)."""
        if self.device.graphs:
            self.epoch()
        else:
            self._body(warmup_batches(math.ceil(self.x.shape[0] / self.batch)))

    def close(self) -> None:
        self.epoch.graph = None


def tabular_mlp(case: Case, variant: str, device: TorchDevice) -> Program:
    if variant == "as-written":
        return TabularAsWritten(case, device)
    cfg = case.config
    x, y = tabular_data(cfg["n"], cfg["widths"][0])

    def make_opt(model: nn.Module, extra: dict[str, Any]) -> torch.optim.Optimizer:
        return _adamw_weights_only(model, cfg["lr"], cfg["weight_decay"], **extra)

    return ResidentShuffled(
        MultiLayerPerceptron(cfg["widths"][0], cfg["widths"]),
        device,
        x,
        y,
        cfg["batch"],
        make_opt,
        F.cross_entropy,
        shuffle=True,
    )


def tabular_mlp_equivalence(case: Case, batch: int) -> dict[str, Any]:
    x, y = tabular_data(batch, case.config["widths"][0])
    return _reference(MultiLayerPerceptron(case.config["widths"][0], case.config["widths"]), x, y, F.cross_entropy)


# --- seed 001: depth sweep ----------------------------------------------------------------------------------------


def depth_model(widths: list[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(itertools.pairwise(widths)):
        if i:
            layers.append(nn.ReLU())
        layers.append(nn.Linear(a, b))
    return nn.Sequential(*layers)


def disc_data(n: int) -> tuple[torch.Tensor, torch.Tensor]:
    x, y = synthetic.disc(n)
    return torch.from_numpy(x), torch.from_numpy(y)


class DepthAsWritten(Program):
    """Seed 001's loop: narrow() slices of resident tensors, argmax error count, loss accumulated as a
    tensor, and the per-epoch progress line printed (formatting the tensors synchronises)."""

    def __init__(self, case: Case, device: TorchDevice):
        cfg = case.config
        super().__init__(depth_model(cfg["widths"]), device)
        x, y = disc_data(cfg["n"])
        self.model.to(device.device)
        self.train_input, self.train_target = x.to(device.device), y.to(device.device)
        self.criterion = nn.CrossEntropyLoss()
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=cfg["lr"])
        self.mini_batch_size = cfg["batch"]
        self.k = 0
        self.log = sys.stdout  # the measuring child sends stdout to its log file

    def run_unit(self) -> None:
        acc_loss: Any = 0
        nb_train_errors: Any = 0
        n_total = self.train_input.size(0)
        for n in range(0, n_total, self.mini_batch_size):
            output = self.model(self.train_input.narrow(0, n, self.mini_batch_size))
            pred = torch.argmax(output, dim=1)
            labels = self.train_target.narrow(0, n, self.mini_batch_size)
            nb_train_errors += torch.sum(pred != labels)
            loss = self.criterion(output, labels)
            acc_loss = acc_loss + loss
            loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()
        print(
            f"Epoch {self.k:2d}: Train Loss {acc_loss:6.2f}, Train Error: {(100 * nb_train_errors) / n_total:5.02f}%",
            file=self.log,
        )
        self.k += 1


def depth_sweep(case: Case, variant: str, device: TorchDevice) -> Program:
    if variant == "as-written":
        return DepthAsWritten(case, device)
    cfg = case.config
    x, y = disc_data(cfg["n"])

    def make_opt(model: nn.Module, extra: dict[str, Any]) -> torch.optim.Optimizer:
        extra = {k: v for k, v in extra.items() if k != "capturable"}  # SGD has no step counter to capture
        return torch.optim.SGD(model.parameters(), lr=cfg["lr"], **extra)

    return ResidentShuffled(
        depth_model(cfg["widths"]), device, x, y, cfg["batch"], make_opt, F.cross_entropy, shuffle=False
    )


def depth_sweep_equivalence(case: Case, batch: int) -> dict[str, Any]:
    x, y = disc_data(batch)
    return _reference(depth_model(case.config["widths"]), x, y, F.cross_entropy)


# --- seed 002: LeNet on CIFAR-sized data ------------------------------------------------------------------------


class LeNet(nn.Module):
    """The seed's Flux Chain: Conv(5x5, 3=>16, relu), MaxPool 2, Conv(5x5, 16=>8, relu), MaxPool 2,
    Dense(200,120), Dense(120,84), Dense(84,10) (no activations between the dense layers, as in the seed),
    then softmax unless `logits`."""

    def __init__(self, logits: bool = False):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 5)
        self.conv2 = nn.Conv2d(16, 8, 5)
        self.fc1, self.fc2, self.fc3 = nn.Linear(200, 120), nn.Linear(120, 84), nn.Linear(84, 10)
        self.logits = logits

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = self.fc3(self.fc2(self.fc1(torch.flatten(x, 1))))
        return x if self.logits else F.softmax(x, dim=1)


def image_data(n: int, shape: list[int], classes: int) -> tuple[torch.Tensor, torch.Tensor]:
    x, y = synthetic.images(n, shape, classes)
    return torch.from_numpy(x), torch.from_numpy(y)


def flux_crossentropy(p: torch.Tensor, onehot: torch.Tensor, eps: float) -> torch.Tensor:
    """Flux's crossentropy(yhat, y): mean over the batch of -sum(y .* log(yhat .+ eps))."""
    return -(onehot * torch.log(p + eps)).sum(dim=1).mean()


class CifarAsWritten(Program):
    """Seed 002's loop: a list of resident (images, one-hot) batches of 1000, softmax output and
    Flux's crossentropy, Momentum(0.01) (Flux's rho 0.9 is PyTorch's momentum 0.9 for a constant rate)."""

    def __init__(self, case: Case, device: TorchDevice):
        cfg = case.config
        super().__init__(LeNet(), device)
        self.model.to(device.device)
        x, y = image_data(cfg["n"], cfg["image"], cfg["classes"])
        onehot = F.one_hot(y, cfg["classes"]).float()
        b = cfg["batch"]
        self.batches = [
            (x[i : i + b].to(device.device), onehot[i : i + b].to(device.device)) for i in range(0, cfg["n"], b)
        ]
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=cfg["lr"], momentum=cfg["momentum"])
        self.eps = case.loop("as-written")["eps"]

    def run_unit(self) -> None:
        # Flux's gradient(() -> loss(d...), params) then update!: the fresh gradients of the loss as one block
        # (the previous step's are freed before the forward), then the update; the transcription's order.
        for x, y in self.batches:
            self.optimizer.zero_grad()
            flux_crossentropy(self.model(x), y, self.eps).backward()
            self.optimizer.step()


def cifar_lenet(case: Case, variant: str, device: TorchDevice) -> Program:
    if variant == "as-written":
        return CifarAsWritten(case, device)
    cfg = case.config
    x, y = image_data(cfg["n"], cfg["image"], cfg["classes"])

    def make_opt(model: nn.Module, extra: dict[str, Any]) -> torch.optim.Optimizer:
        extra = {k: v for k, v in extra.items() if k != "capturable"}
        return torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=cfg["momentum"], **extra)

    # Logits + log-softmax cross-entropy: the same function as softmax then log, in one fused kernel.
    return ResidentShuffled(LeNet(logits=True), device, x, y, cfg["batch"], make_opt, F.cross_entropy, shuffle=False)


def cifar_lenet_equivalence(case: Case, batch: int) -> dict[str, Any]:
    cfg = case.config
    x, y = image_data(batch, cfg["image"], cfg["classes"])

    def loss(p: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return flux_crossentropy(p, F.one_hot(labels, cfg["classes"]).to(p.dtype), case.loop("as-written")["eps"])

    return _reference(LeNet(), x, y, loss)  # as written: softmax output, Flux's crossentropy


# --- seed 004: the MNIST example -----------------------------------------------------------------------------------


class MnistNet(nn.Module):
    """pytorch/examples mnist/main.py's Net."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.dropout2(x)
        return F.log_softmax(self.fc2(x), dim=1)


def mnist_images(n: int) -> tuple[torch.Tensor, torch.Tensor]:
    raw, labels = synthetic.mnist(n)
    return torch.from_numpy(raw), torch.from_numpy(labels)


class SyntheticMnist(Dataset[tuple[torch.Tensor, int]]):
    """torchvision's datasets.MNIST over synthetic uint8 images: each item becomes a PIL image and goes through
    the transform (`vision.mnist_transform`: torchvision's Compose([ToTensor(), Normalize(...)]), step for
    step), as the example's dataset does."""

    def __init__(self, images: torch.Tensor, targets: torch.Tensor, transform: Callable[[Any], torch.Tensor]):
        self.data, self.targets = images, targets
        self.transform: Callable[[Any], torch.Tensor] | None = transform
        self.target_transform: Callable[[int], int] | None = None

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        from PIL import Image

        img: Any
        img, target = self.data[index], int(self.targets[index])
        img = Image.fromarray(img.numpy(), mode="L")
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target


class MnistAsWritten(Program):
    """pytorch/examples' train(): the DataLoader as the example sets it up for this device (1 worker, pinned
    memory and shuffling under CUDA or ROCm; plain batches elsewhere), Adadelta, StepLR, the progress line
    with `loss.item()` printed every log_interval batches."""

    def __init__(self, case: Case, device: TorchDevice):
        cfg, loop = case.config, case.loop("as-written")
        super().__init__(MnistNet(), device)
        self.model.to(device.device)
        images, targets = mnist_images(cfg["n"])
        use_cuda = device.kind in ("cuda", "rocm")  # torch.cuda.is_available() is true for both
        kwargs: dict[str, Any] = {"batch_size": cfg["batch"], **loop["loader"]["cuda" if use_cuda else "other"]}
        self.loader = DataLoader(SyntheticMnist(images, targets, mnist_transform(*cfg["normalize"])), **kwargs)
        self.log = sys.stdout  # the measuring child sends stdout to its log file
        self.optimizer = torch.optim.Adadelta(self.model.parameters(), lr=cfg["lr"])
        self.scheduler = torch.optim.lr_scheduler.StepLR(self.optimizer, step_size=1, gamma=cfg["lr_gamma"])
        self.log_interval = cfg["log_interval"]
        self.epoch = 1

    def run_unit(self) -> None:
        dev = self.device.device
        self.model.train()
        for batch_idx, (data, target) in enumerate(self.loader):
            data, target = data.to(dev), target.to(dev)
            self.optimizer.zero_grad()
            output = self.model(data)
            loss = F.nll_loss(output, target)
            loss.backward()
            self.optimizer.step()
            if batch_idx % self.log_interval == 0:
                print(
                    "Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}".format(  # noqa: UP032 - the example's own call
                        self.epoch,
                        batch_idx * len(data),
                        len(self.loader.dataset),  # type: ignore[arg-type]
                        100.0 * batch_idx / len(self.loader),
                        loss.item(),
                    ),
                    file=self.log,
                )
        self.scheduler.step()
        self.epoch += 1


def mnist_cnn(case: Case, variant: str, device: TorchDevice) -> Program:
    if variant == "as-written":
        return MnistAsWritten(case, device)
    cfg = case.config
    images, targets = mnist_images(cfg["n"])
    mean, std = cfg["normalize"]
    x = images.to(torch.float32).div_(255).sub_(mean).div_(std).unsqueeze_(1)  # normalised once, resident

    def make_opt(model: nn.Module, extra: dict[str, Any]) -> torch.optim.Optimizer:
        extra = {k: v for k, v in extra.items() if k != "fused"}  # no fused Adadelta kernel
        return torch.optim.Adadelta(model.parameters(), lr=cfg["lr"], foreach=True, **extra)

    return ResidentShuffled(MnistNet(), device, x, targets, cfg["batch"], make_opt, F.nll_loss, shuffle=True)


def mnist_cnn_equivalence(case: Case, batch: int) -> dict[str, Any]:
    raw, labels = synthetic.mnist(batch)
    x = torch.from_numpy(synthetic.normalise_mnist(raw, *case.config["normalize"]))
    return _reference(MnistNet(), x, torch.from_numpy(labels), F.nll_loss)


# --- seed 003: transformers ----------------------------------------------------------------------------------------


def build_transformer(model_cfg: dict[str, Any]) -> nn.Module:
    """A model from its published configuration with random weights: nothing is downloaded."""
    import transformers

    cfg = {k: v for k, v in model_cfg.items() if k not in ("family", "seq_len")}
    family = model_cfg["family"]
    if family == "bert":
        return transformers.BertForSequenceClassification(transformers.BertConfig(**cfg))
    if family == "vit":
        return transformers.ViTForImageClassification(transformers.ViTConfig(**cfg))
    if family == "convnext":
        return transformers.ConvNextForImageClassification(transformers.ConvNextConfig(**cfg))
    raise ValueError(f"unknown model family {family!r}")


def transformer_batch(model_cfg: dict[str, Any], batch: int) -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(synthetic.DATA_SEED)
    labels = torch.randint(0, model_cfg["num_labels"], (batch,), generator=gen)
    if model_cfg["family"] == "bert":
        seq = model_cfg["seq_len"]
        ids = torch.randint(0, model_cfg["vocab_size"], (batch, seq), generator=gen)
        return {"input_ids": ids, "attention_mask": torch.ones(batch, seq, dtype=torch.long), "labels": labels}
    side = model_cfg["image_size"]
    return {"pixel_values": torch.randn(batch, 3, side, side, generator=gen), "labels": labels}


def compile_fresh(model: nn.Module) -> None:
    """Before a point compiles its model: an empty Dynamo cache, and a recompile limit that fails loudly.

    Every Hugging Face model's forward runs through one shared decorator (transformers.utils.generic's `wrapper`),
    so the points of a sweep, measured one after another in one process, added their graphs to one code object's
    cache. Past Dynamo's recompile limit (8) it ran the next points eagerly, without a word, while their notes
    said compiled: until 2026-11-24, DeiT-tiny's tuned training step took 47 ms on an H100, eager, against 7.6 ms
    compiled. Reset, each point compiles its own static graph; should one still hit the limit, it raises and the
    point is recorded as failed. HF's classification loss also sets `config.problem_type` on its first call, and
    Dynamo guards on it: set beforehand (to what that call sets for integer labels), the second step does not
    compile again (4 s) nor re-record the CUDA graphs."""
    torch._dynamo.reset()
    torch._dynamo.config.fail_on_recompile_limit_hit = True
    config = getattr(model, "config", None)
    if config is not None and getattr(config, "problem_type", "") is None and getattr(config, "num_labels", 1) > 1:
        config.problem_type = "single_label_classification"


def inductor_cache_counts() -> tuple[int, int]:
    """Inductor's FX-graph cache hits and misses so far in this process (a miss is a graph Inductor compiled)."""
    from torch._dynamo.utils import counters

    return counters["inductor"]["fxgraph_cache_hit"], counters["inductor"]["fxgraph_cache_miss"]


class TransformerProgram(Program):
    """as-written: fp32, the batch copied from host memory every step, plain AdamW, `no_grad` inference (seed
    003's fine-tuning loop). tuned, what an expert runs: the batch resident on the device, fused AdamW,
    gradients freed rather than zeroed, inference under inference_mode with bf16 weights, training under bf16
    autocast (fp32 master weights), fused attention (PyTorch's scaled_dot_product_attention), and on CUDA/ROCm
    the model compiled by torch.compile with CUDA graphs ('reduce-overhead'), so a small step is not
    launch-bound. On other devices the tuned loop runs eagerly: compiling for a CPU would put its compile
    time into every quick run, and no CPU gain has been measured yet; `notes` say which ran."""

    def __init__(
        self, case: Case, variant: str, device: TorchDevice, compiled_on: tuple[str, ...] = TRANSFORMER_COMPILED_ON
    ):
        cfg = case.config
        super().__init__(self.build(cfg), device)
        self.train = cfg["mode"] == "train"
        self.tuned = variant == "tuned"
        bf16 = self.tuned and device.bf16
        # Inference keeps no optimiser state: its weights can be bf16 outright. Training keeps fp32 weights.
        self.weights_bf16 = bf16 and not self.train
        self.model.to(device.device, dtype=torch.bfloat16 if self.weights_bf16 else None)
        self.model.train(self.train)
        host = self.host_batch_of(cfg)
        if self.weights_bf16:
            host = {k: v.to(torch.bfloat16) if v.is_floating_point() else v for k, v in host.items()}
        self.host_batch = host
        self.resident = {k: v.to(device.device) for k, v in host.items()} if self.tuned else None
        self.autocast = bf16 and self.train
        self.precision = "bf16" if bf16 else "fp32"
        if self.train:
            extra: dict[str, Any] = _fused_or_foreach(device) if self.tuned else {}
            self.optimizer: torch.optim.Optimizer | None = torch.optim.AdamW(
                self.model.parameters(), lr=cfg["lr"], **extra
            )
        else:
            self.optimizer = None
        self.forward: Callable[..., Any] = self.model
        self.compiled = self.tuned and device.kind in compiled_on
        self._notes: tuple[str, ...] = ()
        if self.tuned:
            notes = ["bf16 autocast, fp32 weights" if self.autocast else "bf16 weights" if bf16 else "fp32"]
            if self.compiled:
                compile_fresh(self.model)
                self._cache_before = inductor_cache_counts()
                self.forward = torch.compile(self.model, mode="reduce-overhead")
                self.warmup_units = 3  # compilation, then the CUDA graphs are recorded: all before the clock
                notes.append("torch.compile(mode='reduce-overhead'): Inductor kernels replayed from CUDA graphs")
            else:
                notes.append("eager (no torch.compile on this device)")
            self._notes = tuple(notes)

    def build(self, cfg: dict[str, Any]) -> nn.Module:
        """The point's model (a subclass measures another model in the same loops)."""
        return build_transformer(cfg["model"])

    def host_batch_of(self, cfg: dict[str, Any]) -> dict[str, torch.Tensor]:
        """The point's batch in host memory, by the forward's keyword (and `labels`)."""
        return transformer_batch(cfg["model"], cfg["batch"])

    @property
    def notes(self) -> tuple[str, ...]:  # type: ignore[override]
        """How the loop ran; for a compiled point, also where its Inductor graphs came from (read after the timing):
        loaded from the run's compile cache, which the compile-ahead pass filled (runner.api.compile_ahead), or
        compiled in the measuring process."""
        if not self.compiled:
            return self._notes
        hits, misses = (now - then for now, then in zip(inductor_cache_counts(), self._cache_before, strict=True))
        return (*self._notes, f"Inductor graphs: {hits} loaded from the run's compile cache, {misses} compiled here")

    def close(self) -> None:
        if self.compiled:  # its graphs go now, while the worker's collection sees them
            torch._dynamo.reset()

    def _batch(self) -> dict[str, torch.Tensor]:
        if self.resident is not None:
            return self.resident
        return {k: v.to(self.device.device) for k, v in self.host_batch.items()}

    def run_unit(self) -> None:
        batch = self._batch()
        if self.autocast:
            with torch.autocast(self.device.device.type, dtype=torch.bfloat16):
                self._step(batch)
        else:  # the plain step has no autocast context at all
            self._step(batch)

    def _step(self, batch: dict[str, torch.Tensor]) -> None:
        if self.train:
            assert self.optimizer is not None
            loss = self.forward(**batch).loss
            loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()  # PyTorch's default: gradients freed (set to None), not zeroed
        else:
            context = torch.inference_mode() if self.tuned else torch.no_grad()
            with context:
                self.forward(**{k: v for k, v in batch.items() if k != "labels"})


def transformer(case: Case, variant: str, device: TorchDevice) -> Program:
    return TransformerProgram(case, variant, device)
