# ruff: noqa: B007  (a copy of runner/fidelity/seeds/seed_002.py, which keeps the seed's idioms; only its model and loss differ)
"""Seed 002 (GPU vs CPU benchmarks with Flux.jl), transcribed into PyTorch (Julia is not part of the suite):
a Vector of (images, one-hot labels) batches of 1000 moved to the device once, the Chain (Conv 5x5 3=>16 relu,
MaxPool 2, Conv 5x5 16=>8 relu, MaxPool 2, reshape, Dense 200=>120, Dense 120=>84, Dense 84=>10, softmax),
loss = sum(crossentropy(m(x), y)) with Flux's eps, Momentum(0.01) (rho 0.9), one gradient and update! per batch.
@btime's statistic (the minimum) is replaced by the mean of `--epochs` epochs after a warm-up, as the other
transcriptions time. Imports nothing from benchsite. Prints one JSON line: seconds per epoch."""

import argparse
import json
import time

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

imgs = torch.rand(args.n, 3, 32, 32)
labels = F.one_hot(torch.randint(0, 10, (args.n,)), 10).float()
b = args.batch
train = [(imgs[i : i + b].to(device), labels[i : i + b].to(device)) for i in range(0, args.n, b)]


class LeNet(nn.Module):  # benchsite's functional LeNet (runner/frameworks/torch/workloads.py)
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 5)
        self.conv2 = nn.Conv2d(16, 8, 5)
        self.fc1, self.fc2, self.fc3 = nn.Linear(200, 120), nn.Linear(120, 84), nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = self.fc3(self.fc2(self.fc1(torch.flatten(x, 1))))
        return F.softmax(x, dim=1)


m = LeNet().to(device)

eps = torch.finfo(torch.float32).eps


def loss(x, y):
    return -(y * torch.log(m(x) + eps)).sum(dim=1).mean()  # benchsite's flux_crossentropy, no torch.sum


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
