"""Seed 000 (CPU vs GPU for an MLP on a small dataset), transcribed: the notebook's model, DataLoader and
train(), line for line. Only the data is synthetic (734 x 13, as the heart-disease split) and the timing is
split in two: one warm-up epoch, then `--epochs` timed epochs (the notebook times 100 epochs including the
first). Imports nothing from benchsite. Prints one JSON line: seconds per epoch."""

import argparse
import json
import time

import torch
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cpu")
parser.add_argument("--epochs", type=int, default=20)
parser.add_argument("--n", type=int, default=734)  # the heart-disease split's training rows
args = parser.parse_args()


class MultiLayerPerceptron(nn.Module):
    def __init__(self, input_dim):
        super().__init__()

        self.fc1 = nn.Linear(in_features=input_dim, out_features=32)
        self.fc2 = nn.Linear(in_features=32, out_features=16)
        self.fc3 = nn.Linear(in_features=16, out_features=2)

        self.activation = nn.ReLU()

    def forward(self, x):
        x = self.activation(self.fc1(x))
        x = self.activation(self.fc2(x))
        logits = self.fc3(x)
        return logits


X_train = torch.randn(args.n, 13)
y_train = torch.randint(0, 2, (args.n,))
X_train = torch.tensor(X_train, dtype=torch.float32)  # noqa: the notebook converts its arrays like this
y_train = torch.tensor(y_train, dtype=torch.long)


def synchronize():
    # the notebook calls torch.cuda.synchronize() unconditionally (it runs only where CUDA is available)
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def train(model, dataloader, num_epochs: int, lr: float, device):
    model.to(device, non_blocking=True)
    decay, no_decay = [], []
    for _, param in model.named_parameters():
        if param.ndim == 1:
            no_decay.append(param)
        else:
            decay.append(param)

    optimizer = torch.optim.AdamW(
        [
            {"params": decay, "weight_decay": 1e-4},
            {"params": no_decay, "weight_decay": 0.0},
        ],
        lr=lr,
    )

    criterion = torch.nn.CrossEntropyLoss()

    def epochs(n):
        for epoch in range(n):
            model.train()
            train_loss = 0.0
            n_batches = 0
            for X_batch, y_batch in dataloader:
                n_batches += 1
                X_batch = X_batch.to(device, non_blocking=True)
                y_batch = y_batch.to(device, non_blocking=True)
                logits = model(X_batch)
                batch_loss = criterion(logits, y_batch)

                train_loss += batch_loss.item()

                optimizer.zero_grad()
                batch_loss.backward()

                optimizer.step()
            train_loss /= n_batches

    synchronize()
    epochs(1)  # warm-up (benchsite records it apart)
    synchronize()
    start = time.perf_counter()
    epochs(num_epochs)
    synchronize()
    end = time.perf_counter()
    return end - start


if __name__ == "__main__":
    num_features = X_train.size(dim=1)
    model = MultiLayerPerceptron(input_dim=num_features)

    dataset = torch.utils.data.TensorDataset(X_train, y_train)
    dataloader = torch.utils.data.DataLoader(
        dataset, batch_size=10, shuffle=True, pin_memory=True, num_workers=2
    )  # for GPU training, not need for CPU

    seconds = train(model, dataloader, args.epochs, 1e-3, torch.device(args.device))
    print(json.dumps({"per_unit_s": seconds / args.epochs, "units": args.epochs}))
