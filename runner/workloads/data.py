"""The suite's synthetic data, made once in NumPy so every framework trains on the same bytes.

Nothing is downloaded: each generator makes data of the seed's shape and type from a fixed seed
(PCG64), so every machine and every framework sees identical inputs. Images are channels-first
(N, C, H, W) as PyTorch takes them; channels-last frameworks transpose once when they load them.
"""

from __future__ import annotations

import math

import numpy as np

DATA_SEED = 20240601


def rng(stream: int = 0) -> np.random.Generator:
    """A fresh generator; `stream` separates independent uses (training data, the equivalence batch)."""
    return np.random.default_rng([DATA_SEED, stream])


def tabular(n: int, features: int) -> tuple[np.ndarray, np.ndarray]:
    """Standardised features and a label from a fixed linear rule (heart-disease-like: 13 columns)."""
    gen = rng()
    x = gen.standard_normal((n, features), dtype=np.float32)
    w = gen.standard_normal(features, dtype=np.float32)
    y = ((x @ w + 0.5 * gen.standard_normal(n, dtype=np.float32)) > 0).astype(np.int64)
    return x, y


def disc(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Seed 001's generate_disc_set: points in the unit square, label 1 inside radius 1/sqrt(2 pi),
    inputs standardised with the set's own mean and standard deviation."""
    x = rng().uniform(0.0, 1.0, (n, 2)).astype(np.float32)
    y = ((x**2).sum(axis=1) <= 1.0 / (2.0 * math.pi)).astype(np.int64)
    x = (x - x.mean()) / x.std(ddof=1)
    return x.astype(np.float32), y


def images(n: int, shape: list[int], classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Uniform [0, 1) float images (N, C, H, W) and uniform labels (seed 002's synthetic CIFAR)."""
    gen = rng()
    return gen.random((n, *shape), dtype=np.float32), gen.integers(0, classes, n, dtype=np.int64)


def mnist(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Raw uint8 28x28 images and labels, as torchvision's MNIST hands them to its transforms."""
    gen = rng()
    return gen.integers(0, 256, (n, 28, 28), dtype=np.uint8), gen.integers(0, 10, n, dtype=np.int64)


def normalise_mnist(raw: np.ndarray, mean: float, std: float) -> np.ndarray:
    """ToTensor() + Normalize((mean,), (std,)) over a whole array: (N, 1, 28, 28) float32."""
    return ((raw.astype(np.float32) / 255.0 - mean) / std)[:, None, :, :]
