"""Seed 004's DataLoader worker alone: how fast does it feed, and how much does that vary?

    python tests/benchmarks/mnist_loader.py [--device cuda] [--rounds 2] [--epochs 2] [--n 60000]

Under CUDA the MNIST example's training epoch is bound by its one DataLoader worker (batch 64, pinned memory,
shuffled), which turns every image into a PIL image and through ToTensor + Normalize. This benchmark runs that
loader with no model at all (each batch is only copied to the device), so what it times is the worker's feed
rate, in four configurations, each in a fresh process, rounds alternating:

  transform  tv:    torchvision's own Compose([ToTensor(), Normalize((0.1307,), (0.3081,))]) (as the seed's
                    transcription uses it where torchvision is installed)
             bench: benchsite's step-for-step copy (runner.frameworks.torch.vision.mnist_transform)
  parent gc  plain: the collector as Python leaves it (as the seed's script runs)
             freeze: gc.collect(); gc.freeze() before the first epoch (as benchsite's measuring child does)

It prints, per configuration, seconds per epoch (every epoch forks a new worker, persistent_workers being off)
and each item's cost in the main process, then the spread of all epochs together and the rounds each side of
a fidelity ratio would need for its 95% interval to lie within 5%. Not part of the test run; without
torchvision the `tv` rows are left out.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# One configuration, in a fresh interpreter: argv = transform, gc mode, device, epochs, n. Prints one JSON line.
CHILD = r"""
import gc, json, sys, time
import torch
from PIL import Image
kind, gc_mode, device, epochs, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
if kind == "tv":
    from torchvision import transforms
    transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
else:
    from runner.frameworks.torch.vision import mnist_transform
    transform = mnist_transform(0.1307, 0.3081)

class MNIST(torch.utils.data.Dataset):
    def __init__(self, n):
        self.data = torch.randint(0, 256, (n, 28, 28), dtype=torch.uint8)
        self.targets = torch.randint(0, 10, (n,))
    def __len__(self):
        return len(self.data)
    def __getitem__(self, index):
        img, target = self.data[index], int(self.targets[index])
        img = Image.fromarray(img.numpy(), mode="L")
        return transform(img), target

cuda = device == "cuda"
if cuda:
    torch.zeros(1, device="cuda")
ds = MNIST(n)
for i in range(min(500, n)):
    ds[i]
items = min(5000, n)
start = time.perf_counter()
for i in range(items):
    ds[i]
item_us = (time.perf_counter() - start) / items * 1e6
loader = torch.utils.data.DataLoader(ds, batch_size=64, num_workers=1, pin_memory=cuda, shuffle=True)
if gc_mode == "freeze":
    gc.collect()
    gc.freeze()
seconds = []
for _ in range(epochs):
    start = time.perf_counter()
    for data, target in loader:
        data.to(device), target.to(device)
    seconds.append(time.perf_counter() - start)
print(json.dumps({"item_us": item_us, "epochs_s": seconds}))
"""


def has_torchvision() -> bool:
    probe = [sys.executable, "-c", "import torchvision.transforms"]
    return subprocess.run(probe, capture_output=True).returncode == 0


def run_one(kind: str, gc_mode: str, device: str, epochs: int, n: int) -> dict:
    argv = [sys.executable, "-c", CHILD, kind, gc_mode, device, str(epochs), str(n)]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
    if done.returncode:
        raise SystemExit(f"{kind}/{gc_mode} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default=None, help="cuda (the seed's loader) or cpu; default: cuda if present")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=2, help="epochs per process")
    parser.add_argument("--n", type=int, default=60000, help="images per epoch (the example's 60,000)")
    args = parser.parse_args()
    if args.device is None:
        import torch

        args.device = "cuda" if torch.cuda.is_available() else "cpu"
    kinds = ["tv", "bench"] if has_torchvision() else ["bench"]
    if kinds == ["bench"]:
        print("torchvision is not importable here: only benchsite's transform is timed", file=sys.stderr)
    configs = [(kind, gc_mode) for kind in kinds for gc_mode in ("plain", "freeze")]
    results: dict[tuple[str, str], list[dict]] = {c: [] for c in configs}
    for r in range(args.rounds):
        for kind, gc_mode in configs:
            out = run_one(kind, gc_mode, args.device, args.epochs, args.n)
            results[(kind, gc_mode)].append(out)
            epochs = ", ".join(f"{s:.2f}" for s in out["epochs_s"])
            print(
                f"  round {r + 1}: {kind:5s} {gc_mode:6s} epochs {epochs} s, {out['item_us']:.0f} µs/item", flush=True
            )
    print()
    print("| transform | parent gc | epochs (s) | mean s/epoch | main-process µs/item |")
    print("|---|---|---|---:|---:|")
    every = []
    for (kind, gc_mode), outs in results.items():
        seconds = [s for out in outs for s in out["epochs_s"]]
        every += seconds
        items = [out["item_us"] for out in outs]
        listed = ", ".join(f"{s:.2f}" for s in seconds)
        print(
            f"| {kind} | {gc_mode} | {listed} | {statistics.mean(seconds):.2f} | "
            f"{', '.join(f'{x:.0f}' for x in items)} |"
        )
    if len(every) > 1:
        mean, sd = statistics.mean(every), statistics.stdev(every)
        cv = sd / mean
        # Two sides of n rounds each: the ratio of their means has a relative sd of about cv * sqrt(2 / n).
        need = math.ceil(2 * (1.96 * cv / 0.05) ** 2)
        print(
            f"\nall {len(every)} epochs: {min(every):.2f} .. {max(every):.2f} s, mean {mean:.2f}, "
            f"coefficient of variation {cv:.1%}; a ratio of two such sides needs about {need} rounds each "
            "for a 95% interval within 5%"
        )


if __name__ == "__main__":
    main()
