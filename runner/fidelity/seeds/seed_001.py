"""Seed 001 (when to use a GPU for training), transcribed: generate_disc_set, the nn.Sequential of doubling
widths, SGD lr 0.1, mini-batches of 100 by narrow(), the per-epoch print; on a GPU the three .cuda() lines.
The timing (time.time() around the epochs) excludes one warm-up epoch. Imports nothing from benchsite.
Prints one JSON line: seconds per epoch."""

import argparse
import json
import math
import sys
import time

import torch
from torch import nn, optim

parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cpu")
parser.add_argument("--epochs", type=int, default=100)
parser.add_argument("--depth", type=int, default=8)
parser.add_argument("--n", type=int, default=1000)
args = parser.parse_args()


def generate_disc_set(num_points):
    _input = torch.empty(num_points, 2).uniform_(0, 1)
    _target = _input.pow(2).sum(1).sub(1 / (2 * math.pi)).sign().neg().add(1).div(2).ceil()
    return _input, _target.long()


train_input, train_target = generate_disc_set(args.n)
train_input = train_input.sub_(train_input.mean()).div_(train_input.std())


def create_model(depth):
    # the seed's example for 8 layers: Linear(2, 4), ReLU, ..., Linear(128, 256), ReLU, Linear(256, 2)
    layers = []
    width = 2
    for _ in range(depth - 1):
        layers += [nn.Linear(width, width * 2), nn.ReLU()]
        width *= 2
    layers.append(nn.Linear(width, 2))
    return nn.Sequential(*layers)


model = create_model(args.depth)
if args.device == "cuda":
    model = create_model(args.depth).cuda()
    train_input = train_input.cuda()
    train_target = train_target.cuda()

criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(model.parameters(), lr=0.1)
mini_batch_size = 100


def run(epochs, log):
    for k in range(epochs):
        acc_loss = 0
        nb_train_errors = 0

        for n in range(0, train_input.size(0), mini_batch_size):
            output = model(train_input.narrow(0, n, mini_batch_size))
            pred = torch.argmax(output, dim=1)
            labels = train_target.narrow(0, n, mini_batch_size)
            nb_train_errors += torch.sum(pred != labels)
            loss = criterion(output, labels)
            acc_loss = acc_loss + loss
            loss.backward()

            optimizer.step()
            optimizer.zero_grad()

        print(
            "Epoch {:2d}: Train Loss {:6.2f}, Train Error: {:5.02f}%".format(
                k, acc_loss, (100 * nb_train_errors) / train_input.size(0)
            ),
            file=log,
        )


run(1, sys.stderr)  # warm-up (benchsite records it apart)
start_time = time.time()
run(args.epochs, sys.stderr)
time_elasped = time.time() - start_time
print(json.dumps({"per_unit_s": time_elasped / args.epochs, "units": args.epochs}))
