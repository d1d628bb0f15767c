"""An example for `benchsite run --model docs/examples/my_model.py:build --input-shape 3,32,32 --classes 10`.

The function takes no arguments and returns a torch.nn.Module that maps a batch of inputs to logits shaped
(batch, classes); benchsite builds it with random weights, feeds it synthetic batches and trains it with
cross-entropy.
"""

from torch import nn


def build() -> nn.Module:
    """A small CNN for 3x32x32 images and 10 classes."""
    return nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(64 * 8 * 8, 128),
        nn.ReLU(),
        nn.Linear(128, 10),
    )
