# ruff: noqa: B007  (a copy of runner/fidelity/seeds/seed_002.py, which keeps the seed's idioms; only its images differ)
"""Seed 002 (GPU vs CPU benchmarks with Flux.jl), transcribed into PyTorch (Julia is not part of the suite):
a Vector of (images, one-hot labels) batches of 1000 moved to the device once, the Chain (Conv 5x5 3=>16 relu,
MaxPool 2, Conv 5x5 16=>8 relu, MaxPool 2, reshape, Dense 200=>120, Dense 120=>84, Dense 84=>10, softmax),
loss = sum(crossentropy(m(x), y)) with Flux's eps, Momentum(0.01) (rho 0.9), one gradient and update! per batch.
@btime's statistic (the minimum) is replaced by the mean of `--epochs` epochs after a warm-up, as the other
transcriptions time. Imports nothing from benchsite. Prints one JSON line: seconds per epoch."""

import argparse
import json
import os
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cpu")
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--n", type=int, default=50000)
parser.add_argument("--batch", type=int, default=1000)
args = parser.parse_args()
device = torch.device(args.device)

if os.environ.get("NO_NUMPY_HUGEPAGE"):
    getattr(np, "_core", None) and np._core.multiarray._set_madvise_hugepage(False)
imgs = torch.from_numpy(np.random.default_rng(0).random((args.n, 3, 32, 32), dtype=np.float32))
labels = F.one_hot(torch.randint(0, 10, (args.n,)), 10).float()
b = args.batch
train = [(imgs[i : i + b].to(device), labels[i : i + b].to(device)) for i in range(0, args.n, b)]

m = nn.Sequential(
    nn.Conv2d(3, 16, 5),
    nn.ReLU(),
    nn.MaxPool2d(2),
    nn.Conv2d(16, 8, 5),
    nn.ReLU(),
    nn.MaxPool2d(2),
    nn.Flatten(),
    nn.Linear(200, 120),
    nn.Linear(120, 84),
    nn.Linear(84, 10),
    nn.Softmax(dim=1),
).to(device)

eps = torch.finfo(torch.float32).eps


def loss(x, y):
    return torch.sum(-(y * torch.log(m(x) + eps)).sum(dim=1).mean())  # sum(crossentropy(m(x), y))


opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)  # Flux's Momentum(0.01), rho = 0.9


def sync():
    if device.type == "cuda":
        torch.cuda.synchronize()


def epochs(n):
    for epoch in range(n):
        for d in train:
            opt.zero_grad()
            loss(*d).backward()
            opt.step()


epochs(1)  # warm-up (benchsite records it apart)
sync()
start = time.perf_counter()
epochs(args.epochs)
sync()
seconds = time.perf_counter() - start
print(json.dumps({"per_unit_s": seconds / args.epochs, "units": args.epochs}))
