"""The standard suite (its version is runner.SUITE_VERSION): one workload per published experiment in shared/seeds/.

Sizes per profile: `standard` is the seed's size. `quick` is a subset of it: the same points with the same
units and workload hashes, fewer of them and a shorter time budget, so that a first run on a 2-core laptop ends in
minutes and compares with every published standard run; a point whose seed-size unit is too long for quick is left
out of it (LeftOut, the reason in the run's plan), never shrunk. `tiny` is for tests.
"""

from __future__ import annotations

import itertools
from typing import Any

from runner.workloads.base import (
    Case,
    Deviation,
    LeftOut,
    Sweep,
    Workload,
    conv_flops,
    linear_flops,
    mlp_params,
    train_flops,
)

TORCH = "runner.frameworks.torch.workloads"
TF = "runner.frameworks.tensorflow.workloads"
JAX = "runner.frameworks.jax.workloads"


def _everywhere(function: str) -> dict[str, str]:
    return {
        framework: f"{module}:{function}" for framework, module in (("torch", TORCH), ("tensorflow", TF), ("jax", JAX))
    }


def _mlp_case(workload: str, point: dict[str, Any], widths: list[int], n: int, config: dict[str, Any]) -> Case:
    layers = [linear_flops(a, b) for a, b in itertools.pairwise(widths)]
    return Case(
        workload=workload,
        point=point,
        config={"widths": widths, "n": n, **config},
        unit="epoch",
        samples_per_unit=n,
        params=mlp_params(widths),
        flops_per_unit=train_flops(layers) * n,
        forward_flops=sum(layers),
    )


# --- seed 000: a 3-layer MLP on heart-disease-sized tabular data ------------------------------------------------


# What each variant's loop does, as data the loops read. It is part of the workload hash of that variant only,
# so a change to one loop separates its old and new numbers and leaves the other variant's comparable.
# The as-written entries are the seeds' own settings (tests/test_seed_fidelity.py checks them against the seed
# text); docs list where a loop cannot follow its seed (DEVIATIONS).

TABULAR_LOOPS = {
    # seed 000: DataLoader(dataset, batch_size=10, shuffle=True, pin_memory=True, num_workers=2), one loader for
    # both devices; X_batch.to(device, non_blocking=True); train_loss += batch_loss.item() every batch.
    "as-written": {
        "loader": {"batch_size": 10, "shuffle": True, "pin_memory": True, "num_workers": 2},
        "non_blocking": True,
        "loss_item": "every-batch",
    },
    "tuned": {"data": "resident", "shuffle": "device-permutation", "optimizer": "fused", "graph": "epoch"},
}


def tabular_cases(profile: str) -> list[Case]:
    n = 100 if profile == "tiny" else 734  # 734 training rows, 13 features: the seed's heart-disease split
    loop = {
        "batch": 10,
        "shuffle": True,
        "optimizer": "adamw",
        "lr": 1e-3,
        "weight_decay": 1e-4,
        "decay": "weights-only",
        "loss": "cross-entropy",
        "data": "synthetic-normal-v1",
        "loops": TABULAR_LOOPS,
    }
    return [_mlp_case("tabular-mlp", {}, [13, 32, 16, 2], n, loop)]


# --- seed 001: depth sweep of doubling-width MLPs, 22 to 11.2M parameters ------------------------------------------


def depth_widths(depth: int) -> list[int]:
    """depth Linear layers: 2 -> 4 -> ... -> 2**depth -> 2 (the seed's 8-layer example ends 128->256->2)."""
    return [2**k for k in range(1, depth + 1)] + [2]


DEPTH_LOOPS = {
    # seed 001: train_input.narrow(0, n, mini_batch_size) of tensors made resident with .cuda(); argmax error
    # count and loss summed as tensors; loss.backward(), optimizer.step(), optimizer.zero_grad(); one print per
    # epoch, whose formatting of the tensors waits for the device.
    "as-written": {"batches": "narrow", "bookkeeping": "argmax-errors+loss-sum", "print": "every-epoch"},
    "tuned": {"data": "resident", "optimizer": "fused", "graph": "epoch"},
}


def depth_cases(profile: str) -> list[Case]:
    # quick keeps four of the standard's depths, doubling from 2 (each point costs its processes' start and warm-up,
    # however small its epoch) and the deepest: a break-even between them is interpolated as between any two
    depths = {"tiny": [2, 3], "quick": [2, 4, 8, 12], "standard": list(range(2, 13))}[profile]
    n = 200 if profile == "tiny" else 1000
    loop = {
        "batch": 100,
        "optimizer": "sgd",
        "lr": 0.1,
        "loss": "cross-entropy",
        "data": "disc-v1",
        "loops": DEPTH_LOOPS,
    }
    return [_mlp_case("depth-sweep", {"depth": d}, depth_widths(d), n, loop) for d in depths]


# --- seed 002: LeNet-style CNN on CIFAR-10-sized data, batches of 1000 ----------------------------------------------

LENET_FORWARD = [
    conv_flops(3, 16, 5, 28, 28),  # Conv 5x5 3->16, 32x32 -> 28x28
    conv_flops(16, 8, 5, 10, 10),  # after 2x2 pool: 14x14 -> 10x10
    linear_flops(200, 120),  # after 2x2 pool: 8 x 5 x 5 = 200
    linear_flops(120, 84),
    linear_flops(84, 10),
]
LENET_PARAMS = (3 * 25 * 16 + 16) + (16 * 25 * 8 + 8) + mlp_params([200, 120, 84, 10])


# Flux's crossentropy adds eps(Float32) inside the log: -sum(xlogy.(y, yhat .+ eps); dims=1), mean over the batch.
FLUX_EPS = 1.1920929e-07

CIFAR_LOOPS = {
    # seed 002: a Vector of (images, one-hot) batches of 1000 moved to the device once; per batch
    # gradient(params(m)) of crossentropy(m(x), y) and update!(Momentum(0.01), ...); timed by @btime.
    # The step is gradient() as one block, fresh gradients of the loss (zero_grad(), then the loss's forward and
    # backward), then update! (step()), as the shipped transcription writes it. PyTorch's loop once computed the loss
    # before zero_grad(), and on a 2-core VM that order ran 6% faster than the transcription's
    # (docs/methodology/suite.md): the loop's hash changed with it, within suite 3 (the old hashes are in
    # past_suites.json).
    "as-written": {
        "batches": "resident-list",
        "loss": "softmax+flux-crossentropy",
        "eps": FLUX_EPS,
        "step": "zero_grad, forward, backward, step",
    },
    "tuned": {"data": "resident", "loss": "logits+fused-cross-entropy", "optimizer": "fused", "graph": "epoch"},
}


def cifar_cases(profile: str) -> list[Case]:
    n = 200 if profile == "tiny" else 50_000
    batch = 100 if profile == "tiny" else 1000
    config = {
        "n": n,
        "image": [3, 32, 32],
        "classes": 10,
        "batch": batch,
        "optimizer": "momentum-sgd",
        "lr": 0.01,
        "momentum": 0.9,
        "loss": "softmax-cross-entropy",
        "data": "synthetic-uniform-v1",
        "loops": CIFAR_LOOPS,
    }
    flops = train_flops(LENET_FORWARD) * n
    return [Case("cifar-lenet", {}, config, "epoch", n, LENET_PARAMS, flops, sum(LENET_FORWARD))]


# --- seed 004: the pytorch/examples MNIST Net (= the Keras MNIST convnet), batch 64, Adadelta ------------------------

MNIST_FORWARD = [
    conv_flops(1, 32, 3, 26, 26),
    conv_flops(32, 64, 3, 24, 24),
    linear_flops(9216, 128),  # 64 x 12 x 12 after the 2x2 pool
    linear_flops(128, 10),
]
MNIST_PARAMS = (1 * 9 * 32 + 32) + (32 * 9 * 64 + 64) + mlp_params([9216, 128, 10])


MNIST_LOOPS = {
    # seed 004, pytorch/examples mnist/main.py as of the seed (2023): train_kwargs = {'batch_size': 64};
    # if use_cuda (also ROCm's HIP build): {'num_workers': 1, 'pin_memory': True, 'shuffle': True}; on the CPU
    # and on MPS neither workers nor shuffling. datasets.MNIST hands each image to the transform as a PIL image:
    # transforms.Compose([ToTensor(), Normalize((0.1307,), (0.3081,))]). data.to(device); loss.item() printed
    # every log_interval batches; StepLR(step_size=1, gamma=0.7) after each epoch.
    "as-written": {
        "loader": {"cuda": {"num_workers": 1, "pin_memory": True, "shuffle": True}, "other": {}},
        "transform": "pil+torchvision-compose-to_tensor-normalize",
        "print": "every-log-interval",
    },
    "tuned": {"data": "resident-normalised", "shuffle": "device-permutation", "optimizer": "foreach", "graph": "epoch"},
}


def mnist_cases(profile: str) -> list[Case]:
    n = 256 if profile == "tiny" else 60_000
    config = {
        "n": n,
        "image": [1, 28, 28],
        "classes": 10,
        "batch": 64,
        "optimizer": "adadelta",
        "lr": 1.0,
        "lr_gamma": 0.7,
        "dropout": [0.25, 0.5],
        "normalize": [0.1307, 0.3081],
        "log_interval": 10,
        "loss": "nll",
        "data": "synthetic-uint8-v1",
        "loops": MNIST_LOOPS,
    }
    flops = train_flops(MNIST_FORWARD) * n
    return [Case("mnist-cnn", {}, config, "epoch", n, MNIST_PARAMS, flops, sum(MNIST_FORWARD))]


# --- seed 003: transformers (BERT-base text, DeiT/ViT and ConvNeXt images), train and inference, batch sweep --------

BERT_BASE = {
    "family": "bert",
    "hidden_size": 768,
    "num_hidden_layers": 12,
    "num_attention_heads": 12,
    "intermediate_size": 3072,
    "vocab_size": 30522,
    "max_position_embeddings": 512,
    "num_labels": 2,
    "seq_len": 128,
}
DEIT_TINY = {
    "family": "vit",
    "hidden_size": 192,
    "num_hidden_layers": 12,
    "num_attention_heads": 3,
    "intermediate_size": 768,
    "image_size": 224,
    "patch_size": 16,
    "num_labels": 1000,
}
CONVNEXT_TINY = {
    "family": "convnext",
    "depths": [3, 3, 9, 3],
    "hidden_sizes": [96, 192, 384, 768],
    "image_size": 224,
    "num_labels": 1000,
}
TINY_MODELS = {
    "bert-tiny": {
        **BERT_BASE,
        "hidden_size": 32,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "intermediate_size": 64,
        "vocab_size": 512,
        "max_position_embeddings": 64,
        "seq_len": 16,
    },
    "vit-tiny": {
        **DEIT_TINY,
        "hidden_size": 32,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "intermediate_size": 64,
        "image_size": 32,
        "patch_size": 8,
        "num_labels": 10,
    },
    "convnext-mini": {
        **CONVNEXT_TINY,
        "depths": [1, 1, 1, 1],
        "hidden_sizes": [8, 16, 32, 64],
        "image_size": 32,
        "num_labels": 10,
    },
}
MODELS = {"bert-base": BERT_BASE, "deit-tiny": DEIT_TINY, "convnext-tiny": CONVNEXT_TINY, **TINY_MODELS}
# (model, mode) -> batch sizes per profile. Standard covers the seed's sweep and, for BERT-base, batches large
# enough to saturate a data-centre GPU (the tuned loop's best batch is the one the site reports); quick keeps
# BERT-base inference at batch 8, the seed's smallest, whose step takes under a second on a 2-core laptop CPU.
TRANSFORMER_SWEEP: dict[str, list[tuple[str, str, list[int]]]] = {
    "standard": [
        ("bert-base", "train", [8, 32, 128]),
        ("bert-base", "infer", [8, 64, 256]),
        ("deit-tiny", "train", [32, 128]),
        ("deit-tiny", "infer", [32, 256]),
        ("convnext-tiny", "train", [32]),
        ("convnext-tiny", "infer", [32, 128]),
    ],
    "quick": [("bert-base", "infer", [8])],
    "tiny": [
        ("bert-tiny", "train", [2]),
        ("bert-tiny", "infer", [2]),
        ("vit-tiny", "train", [2]),
        ("convnext-mini", "infer", [2]),
    ],
}


def _encoder_flops(tokens: int, hidden: int, inter: int, layers: int) -> float:
    """Forward FLOPs of a transformer encoder over one sequence: Q, K, V and output projections
    (4 h^2 MACs), the MLP (2 h i MACs) and attention scores and mixing (2 s h MACs), per token and layer."""
    return 2.0 * tokens * layers * (4 * hidden * hidden + 2 * hidden * inter + 2 * tokens * hidden)


def transformer_forward_flops(model: dict[str, Any]) -> float:
    """Analytic forward FLOPs per example (matrix products and convolutions only)."""
    if model["family"] == "bert":
        h = model["hidden_size"]
        body = _encoder_flops(model["seq_len"], h, model["intermediate_size"], model["num_hidden_layers"])
        return body + linear_flops(h, h) + linear_flops(h, model["num_labels"])  # pooler + classifier
    if model["family"] == "vit":
        h, p, side = model["hidden_size"], model["patch_size"], model["image_size"]
        patches = (side // p) ** 2
        embed = conv_flops(3, h, p, side // p, side // p)  # stride-p conv: one kernel per patch
        body = _encoder_flops(patches + 1, h, model["intermediate_size"], model["num_hidden_layers"])
        return embed + body + linear_flops(h, model["num_labels"])
    if model["family"] == "convnext":
        side = model["image_size"] // 4
        widths = model["hidden_sizes"]
        total = conv_flops(3, widths[0], 4, side, side)  # 4x4 stride-4 stem
        for stage, (depth, width) in enumerate(zip(model["depths"], widths, strict=True)):
            if stage:
                side //= 2
                total += conv_flops(widths[stage - 1], width, 2, side, side)  # 2x2 stride-2 downsample
            per_block = 2.0 * 49 * width * side * side + 2 * linear_flops(width, 4 * width) * side * side
            total += depth * per_block  # 7x7 depthwise conv, then the 4x inverted-bottleneck MLP
        return total + linear_flops(widths[-1], model["num_labels"])
    raise ValueError(f"unknown model family {model['family']!r}")


def transformer_params(model: dict[str, Any]) -> int:
    """Trainable parameters of the Hugging Face class the suite builds from `model` (BertForSequenceClassification,
    ViTForImageClassification, ConvNextForImageClassification): weights and biases of every layer, LayerNorms,
    embeddings, ConvNeXt's layer scales. tests/test_workloads.py checks it against the built models."""
    labels = model["num_labels"]
    if model["family"] in ("bert", "vit"):
        h, inter, layers = model["hidden_size"], model["intermediate_size"], model["num_hidden_layers"]
        # Q, K, V and output projections, the MLP, two LayerNorms
        layer = 4 * (h * h + h) + (h * inter + inter) + (inter * h + h) + 2 * 2 * h
        if model["family"] == "bert":
            # word, position and two token-type embeddings, their LayerNorm; the pooler
            embeddings = (model["vocab_size"] + model["max_position_embeddings"] + 2) * h + 2 * h
            return embeddings + layers * layer + (h * h + h) + (h * labels + labels)
        p, side = model["patch_size"], model["image_size"]
        # the CLS token, position embeddings of the patches and CLS, the stride-p patch convolution; final LayerNorm
        embeddings = h + ((side // p) ** 2 + 1) * h + (3 * p * p * h + h)
        return embeddings + layers * layer + 2 * h + (h * labels + labels)
    if model["family"] == "convnext":
        widths = model["hidden_sizes"]
        total = (3 * 4 * 4 * widths[0] + widths[0]) + 2 * widths[0]  # the stem and its LayerNorm
        for stage, (depth, w) in enumerate(zip(model["depths"], widths, strict=True)):
            if stage:
                total += 2 * widths[stage - 1] + (widths[stage - 1] * w * 4 + w)  # LayerNorm, 2x2 downsample
            # 7x7 depthwise conv, LayerNorm, the 4x MLP, the layer scale
            total += depth * ((49 * w + w) + 2 * w + (w * 4 * w + 4 * w) + (4 * w * w + w) + w)
        return total + 2 * widths[-1] + (widths[-1] * labels + labels)
    raise ValueError(f"unknown model family {model['family']!r}")


TRANSFORMER_LOOPS = {
    # seed 003 prints no loop: as-written is the plain Hugging Face fine-tuning step (fp32, batch from host memory
    # every step, torch.optim.AdamW, optimizer.zero_grad() as PyTorch defaults it, no_grad inference). Until
    # 2026-11-23 it zeroed the gradients in place (zero_grad(set_to_none=False)), which the plain step does not:
    # the loop's hash changed with it, within suite 3 (the old hashes are frozen in past_suites.json).
    "as-written": {"precision": "fp32", "batch": "host-copy", "optimizer": "adamw", "zero_grad": "set-to-none"},
    "tuned": {
        "batch": "resident",
        "train": "bf16-autocast",
        "infer": "bf16-weights",
        "optimizer": "fused-adamw",
        "compile": "reduce-overhead-on-cuda",
        # Until 2026-11-24 a sweep's points shared Dynamo's cache in their process, and past its recompile limit
        # later points ran eagerly (runner.frameworks.torch.workloads.compile_fresh): each point now compiles from
        # an empty cache. The hashes changed with it, within suite 3 (the old ones are in past_suites.json).
        "dynamo": "fresh-per-point",
    },
}


# Where the tuned transformer loop compiles its model (torch.compile with CUDA graphs); elsewhere it runs eagerly.
TRANSFORMER_COMPILED_ON = ("cuda", "rocm")


def transformer_cases(profile: str) -> list[Case]:
    cases = []
    for model, mode, batches in TRANSFORMER_SWEEP[profile]:
        for batch in batches:
            config = {
                "model": MODELS[model],
                "mode": mode,
                "batch": batch,
                "optimizer": "adamw",
                "lr": 5e-5,
                "data": "synthetic-v1",
                "loops": TRANSFORMER_LOOPS,
            }
            forward = transformer_forward_flops(MODELS[model]) * batch
            # Training: forward, plus weight and input gradients (each about one forward).
            flops = 3 * forward if mode == "train" else forward
            cases.append(
                Case(
                    "transformer",
                    {"model": model, "mode": mode, "batch_size": batch},
                    config,
                    "step",
                    batch,
                    params=transformer_params(MODELS[model]),
                    flops_per_unit=flops,
                )
            )
    return cases


# --- seed 003 at scale: batch inference over a Spark DataFrame (pyspark.ml.functions.predict_batch_udf) -----------

# (model, rows) per profile, and the batch sizes (rows per predict call) and partitions swept for each. Standard
# finishes in minutes on a 2-core laptop CPU: BERT-base over 64 rows (about 12 s an action there; the 2,048 rows
# it had before took more than 10 minutes for the workload), DeiT-tiny over 256.
SPARK_SWEEP: dict[str, dict[str, Any]] = {
    "standard": {"models": [("bert-base", 64), ("deit-tiny", 256)], "batch": [8, 32], "partitions": [2, 8]},
    "tiny": {"models": [("vit-tiny", 64)], "batch": [16], "partitions": [2]},
}
SPARK_LOOPS = {
    "as-written": {
        "udf": "predict_batch_udf",
        "precision": "fp32",
        "grad": "no_grad",
        "sink": "noop",
        "cache": "inputs",
    },
}


def spark_cases(profile: str) -> list[Case]:
    sweep = SPARK_SWEEP["standard" if profile == "quick" else profile]  # quick leaves it out (the workload's left_out)
    cases = []
    for model, rows in sweep["models"]:
        for batch in sweep["batch"]:
            for partitions in sweep["partitions"]:
                config = {
                    "model": MODELS[model],
                    "mode": "infer",
                    "rows": rows,
                    "batch": batch,
                    "partitions": partitions,
                    "data": "synthetic-v1",
                    "loops": SPARK_LOOPS,
                }
                cases.append(
                    Case(
                        "spark-inference",
                        {"model": model, "batch_size": batch, "partitions": partitions},
                        config,
                        "epoch",
                        rows,
                        params=transformer_params(MODELS[model]),
                        flops_per_unit=transformer_forward_flops(MODELS[model]) * rows,
                    )
                )
    return cases


# --- seed 003 at scale: real-time inference with Spark Structured Streaming (runner.engines.spark.streaming) ----

# Per profile: the model, the ladder of offered rates (rows per second, doubling; the run stops at the first the
# pipeline does not sustain), the seconds between two input files, the seconds each rate is offered for, and the
# rows per predict call. A file holds rate * interval rows.
STREAM_SWEEP: dict[str, dict[str, Any]] = {
    "standard": {
        "model": "deit-tiny",
        "rates": [4 * 2**k for k in range(9)],
        "interval_s": 0.25,
        "seconds": 30.0,
        "batch": 32,
    },
    "tiny": {"model": "vit-tiny", "rates": [20, 40], "interval_s": 0.2, "seconds": 3.0, "batch": 16},
}
STREAM_LOOPS = {
    "as-written": {
        "source": "parquet-files-renamed-into-folder",
        "sink": "parquet-with-checkpoint",
        "udf": "predict_batch_udf",
        "trigger": "default",
        "precision": "fp32",
        "grad": "no_grad",
    },
}


def stream_cases(profile: str) -> list[Case]:
    sweep = STREAM_SWEEP["standard" if profile == "quick" else profile]  # quick leaves it out (the workload's left_out)
    model = MODELS[sweep["model"]]
    cases = []
    for rate in sweep["rates"]:
        rows_per_file = round(rate * sweep["interval_s"])
        config = {
            "model": model,
            "mode": "infer",
            "rate": rate,
            "rows_per_file": rows_per_file,
            "interval_s": sweep["interval_s"],
            "seconds": sweep["seconds"],
            "batch": sweep["batch"],
            "data": "synthetic-v1",
            "loops": STREAM_LOOPS,
        }
        point = {"model": sweep["model"], "rate": rate}
        cases.append(Case("spark-streaming", point, config, "latency", rows_per_file, params=transformer_params(model)))
    return cases


# --- seed 003 at scale: the fine-tuning step data-parallel over every local GPU (torch.distributed DDP) -------------

# (model, batch per process) per profile, and the world sizes (processes, one per GPU) of each. A point whose world
# is larger than the machine's GPUs is recorded as skipped. Batch 64 of BERT-base is the scaling target's point.
DDP_SWEEP: dict[str, list[tuple[str, int]]] = {
    "standard": [("bert-base", 64)],
    "quick": [("bert-base", 64)],  # quick leaves it out (the workload's left_out)
    "tiny": [("bert-tiny", 2)],
}
DDP_WORLD_SIZES = {"standard": [1, 2, 4, 8], "quick": [1, 2, 4, 8], "tiny": [1, 2]}
# The most processes a point runs on the CPU: two gloo ranks splitting the cores show what the collective costs.
CPU_WORLD_MAX = 2
DDP_LOOPS = {
    "as-written": {
        "precision": "fp32",
        "batch": "host-copy",
        "optimizer": "adamw",
        "wrapper": "ddp",
        "zero_grad": "set-to-none",
    },
    "tuned": {
        "precision": "bf16-autocast",
        "batch": "resident",
        "optimizer": "fused-adamw",
        "wrapper": "ddp",
        # On GPUs the whole step, DDP's all-reduces included, replays from one CUDA graph (since 2026-11-24; before,
        # torch.compile without graphs, whose step was bound by the host launching its kernels).
        "graph": "whole-step-on-gpu",
    },
}


def ddp_cases(profile: str) -> list[Case]:
    cases = []
    for model, batch in DDP_SWEEP[profile]:
        for world in DDP_WORLD_SIZES[profile]:
            config = {
                "model": MODELS[model],
                "mode": "train",
                "batch": batch,
                "world_size": world,
                "optimizer": "adamw",
                "lr": 5e-5,
                "data": "synthetic-v1",
                "loops": DDP_LOOPS,
            }
            cases.append(
                Case(
                    "transformer-ddp",
                    {"model": model, "batch_size": batch, "world_size": world},
                    config,
                    "step",
                    batch * world,
                    params=transformer_params(MODELS[model]),
                    flops_per_unit=3 * transformer_forward_flops(MODELS[model]) * batch * world,
                )
            )
    return cases


# --- where the as-written loops cannot follow the seeds, and why -----------------------------------------------

_TIMING = Deviation(
    "all",
    "The first {unit} is timed apart (warm-up) and the steady state is reported as the median {unit} of repeated, "
    "synchronised samples; the seed {seed_timing}.",
    "Cold start and steady state answer different questions and both are kept; the median of many samples with "
    "its confidence interval is what makes two machines comparable.",
)
_NO_DATALOADER = "Neither Keras nor JAX has PyTorch's DataLoader, so there are no worker processes or pinned memory"

DEVIATIONS: dict[str, tuple[Deviation, ...]] = {
    "tabular-mlp": (
        Deviation(
            "all",
            "734 x 13 standard-normal features labelled by a fixed linear rule instead of the heart-disease UCI "
            "split the notebook loads from a joblib file in a cloned repository.",
            "Nothing is downloaded at run time; speed does not depend on the values.",
        ),
        Deviation(
            "all",
            "Each device trains a freshly initialised model; the notebook trains one model object on the GPU and "
            "then moves it, trained, to the CPU.",
            "Every measurement runs in its own process; the weights' values do not change the speed.",
        ),
        Deviation(
            "tensorflow",
            f"`model.fit` on host NumPy arrays with Keras' batching and shuffling. {_NO_DATALOADER}, and no "
            "per-batch read-back of the loss.",
            "The seed is PyTorch; `fit` is how its loop is written in Keras.",
        ),
        Deviation(
            "jax",
            f"Batches gathered in host memory by the main process and copied to the device one by one "
            f"(`jax.device_put`); `float(loss)` every batch stands for `.item()`. {_NO_DATALOADER}.",
            "The seed is PyTorch; this is its loop statement for statement in JAX.",
        ),
    ),
    "depth-sweep": (
        Deviation(
            "all",
            "The points are drawn by NumPy's generator (same rule: uniform in the unit square, label inside radius "
            "1/sqrt(2 pi), standardised) instead of torch's.",
            "One data set for every framework, identical on every machine.",
        ),
        Deviation(
            "tensorflow",
            "`model.fit` from host arrays with Keras' accuracy metric for the error count; no per-epoch print.",
            "The seed is PyTorch; Keras has no narrow() of resident tensors in `fit`.",
        ),
    ),
    "cifar-lenet": (
        Deviation(
            "all",
            "Run in PyTorch, TensorFlow and JAX instead of Julia's Flux (Zygote gradients, WHCN layout); uniform "
            "random images instead of CIFAR-10 from Metalhead.",
            "The suite's frameworks are Python's; a Flux script can still contribute files that pass validation.",
        ),
        Deviation(
            "tensorflow",
            "`model.fit` feeds the batches from host memory; the seed's batches are resident on the device.",
            "Keras' `fit` has no list of resident batches.",
        ),
    ),
    "mnist-cnn": (
        Deviation(
            "all",
            "Synthetic uint8 images instead of the MNIST files; the dataset's path (a PIL image per item, "
            "ToTensor, Normalize) is kept. PyTorch: torchvision's Compose, ToTensor and Normalize are "
            "transcribed step for step (their checks, API-usage calls and Normalize's nn.Module call) rather "
            "than imported, so the suite does not need a torchvision built for the installed torch. The test "
            "pass after each epoch is not timed: the unit is a training "
            "epoch, where the seed timed its whole script (14 epochs with their test passes) by the wall clock.",
            "Nothing is downloaded at run time; the suite measures training.",
        ),
        Deviation(
            "tensorflow",
            "The seed's Keras script (a gist) is not available: the model follows its summary (1,199,882 "
            "parameters, with PyTorch's two Dropout layers where the summary shows one) and trains with the "
            "PyTorch example's Adadelta and batch 64 through `model.fit` with Keras' defaults.",
            "The equivalence check proves the Keras model computes what PyTorch's does; the same optimiser and "
            "batch make the framework comparison fair.",
        ),
        Deviation(
            "jax",
            f"Batches gathered in host memory and copied per batch; shuffled on a GPU only, as the example's "
            f"loader. {_NO_DATALOADER}, and the transform runs once on the whole array.",
            "The seed is PyTorch; this is its loop in JAX.",
        ),
    ),
    "transformer": (
        Deviation(
            "all",
            "The seed shows results but no training loop: as-written is the plain Hugging Face fine-tuning step "
            "(fp32, batch copied from host memory each step, torch.optim.AdamW). Three of its models (BERT-base, "
            "DeiT-tiny, ConvNeXt-tiny) with random weights from their published configurations and synthetic "
            "tokens and images; its PySpark inference and streaming are measured separately.",
            "Nothing is downloaded at run time (no model hub); the loop is what the seed describes.",
        ),
    ),
    "spark-inference": (
        Deviation(
            "all",
            "The seed's Spark code is not published: this is Spark's own distributed inference tool "
            "(predict_batch_udf) over a DataFrame of synthetic inputs with the suite's models (random weights), "
            "the prediction being each row's arg-max class, materialised by Spark's noop sink.",
            "Nothing is downloaded at run time; predict_batch_udf is how Spark users run a model over a DataFrame.",
        ),
    ),
    "spark-streaming": (
        Deviation(
            "all",
            "The seed's streaming app (one client pushing images, another predicting them, on two clusters that "
            "lost data) is not published: this is Spark Structured Streaming's file source and Parquet sink with a "
            "checkpoint (exactly once), a producer thread writing synthetic images at a set rate, and the suite's "
            "model in predict_batch_udf; each rate is offered for a fixed time after a warm-up.",
            "Nothing is downloaded at run time; the file source and sink are Spark's own exactly-once path, with no "
            "message broker to install.",
        ),
    ),
    "transformer-ddp": (
        Deviation(
            "all",
            "The seed scaled out with a PySpark cluster; this is the same fine-tuning step (BERT-base, random weights, "
            "synthetic tokens) data-parallel over the machine's GPUs with torch.distributed, one process per GPU as "
            "torchrun starts them, each with its own batch; the gradients are all-reduced every step.",
            "Several GPUs in one machine is where users outgrow one GPU; DDP is how PyTorch trains there.",
        ),
    ),
}
_SEED_TIMING = {
    "tabular-mlp": "times 100 epochs in one block, the first included, with time.perf_counter and "
    "torch.cuda.synchronize",
    "depth-sweep": "times 100 epochs in one block with time.time(), the first included",
    "cifar-lenet": "reports BenchmarkTools' @btime, the minimum of repeated runs, without synchronising the GPU",
    "mnist-cnn": "timed its whole script by the wall clock",
    "transformer": "reports durations per batch size without saying how they were taken",
    "spark-inference": "reports durations per cluster without saying how they were taken",
    "spark-streaming": "reports no latency",
    "transformer-ddp": "reports durations per batch size without saying how they were taken",
}


_STREAM_TIMING = Deviation(
    "all",
    "Each rate is offered for a fixed time after a warm-up (one file per core, waited for); each file's latency "
    "runs from when the producer began it to when Spark committed its predictions; the p50 is reported with its "
    "interval, p95 and p99 beside it, and the highest rate whose latency does not grow is the sustained throughput. "
    "The seed {seed_timing}.",
    "A rate the pipeline cannot sustain has no steady latency: the ladder stops there rather than report one.",
)


def _deviations(workload: str, unit: str) -> tuple[Deviation, ...]:
    if unit == "latency":
        return (
            Deviation(
                _STREAM_TIMING.framework,
                _STREAM_TIMING.what.format(seed_timing=_SEED_TIMING[workload]),
                _STREAM_TIMING.why,
            ),
            *DEVIATIONS[workload],
        )
    timing = Deviation(
        _TIMING.framework, _TIMING.what.format(unit=unit, seed_timing=_SEED_TIMING[workload]), _TIMING.why
    )
    return (timing, *DEVIATIONS[workload])


# What both Spark workloads need, and why they are PyTorch-only.
_SPARK_REQUIRES = ("transformers", "pyspark", "pandas", "pyarrow")
_SPARK_UNSUPPORTED = {
    framework: "the Spark workloads predict with the suite's PyTorch models (Hugging Face transformers' PyTorch "
    "classes)"
    for framework in ("tensorflow", "jax")
}


# --- what the quick profile leaves out, and why (the run's plan lists it) ------------------------------------------
# Quick is standard's points, fewer of them: a point whose seed-size unit would take more of a first run than it
# tells is left out rather than measured smaller (a smaller unit is another workload, comparable with nothing).
QUICK = ("quick",)
EVERY_DEVICE: tuple[str, ...] = ()

WORKLOADS = [
    Workload(
        "tabular-mlp",
        "000",
        "MLP on small tabular data",
        "3-layer MLP (13->32->16->2) on 734 rows, batch 10, AdamW; the seed's one DataLoader (2 workers, "
        "pinned memory) feeds every device, the CPU included.",
        "epoch",
        tabular_cases,
        _everywhere("tabular_mlp"),
        deviations=_deviations("tabular-mlp", "epoch"),
    ),
    Workload(
        "depth-sweep",
        "001",
        "MLP depth sweep: where does the GPU start to win?",
        "2..12 Linear layers doubling in width (22 to 11.2M parameters) on 1000 points, SGD, batch 100 "
        "from resident tensors.",
        "epoch",
        depth_cases,
        _everywhere("depth_sweep"),
        deviations=_deviations("depth-sweep", "epoch"),
    ),
    Workload(
        "cifar-lenet",
        "002",
        "LeNet on CIFAR-10-sized images",
        "Two 5x5 convolutions and three dense layers (39,558 parameters), 50,000 images of 3x32x32 in "
        "resident batches of 1000, momentum SGD.",
        "epoch",
        cifar_cases,
        _everywhere("cifar_lenet"),
        deviations=_deviations("cifar-lenet", "epoch"),
        left_out=(
            LeftOut(
                QUICK,
                ("cpu",),
                "a seed-size CPU epoch (50,000 images) takes 2 to 9 s with PyTorch and 8 to 30 s with JAX on 16 and 2 "
                "cores, and each round runs two or more",
            ),
        ),
    ),
    Workload(
        "mnist-cnn",
        "004",
        "The MNIST example convnet",
        "pytorch/examples' MNIST Net (1,199,882 parameters, the Keras MNIST convnet), 60,000 images, "
        "batch 64, Adadelta, per-sample PIL transforms in a DataLoader (1 worker, pinned, shuffled under CUDA; "
        "plain on the CPU).",
        "epoch",
        mnist_cases,
        _everywhere("mnist_cnn"),
        deviations=_deviations("mnist-cnn", "epoch"),
        left_out=(
            LeftOut(
                QUICK,
                EVERY_DEVICE,
                "a seed-size epoch (60,000 images through the example's DataLoader) takes 20 to 150 s on a CPU and 2 "
                "to 12 s on a GPU, and each round runs two or more",
            ),
        ),
    ),
    Workload(
        "transformer",
        "003",
        "Transformers: BERT-base, DeiT-tiny, ConvNeXt-tiny",
        "Fine-tuning steps and inference of models built from their published configs with random "
        "weights, over a batch-size sweep; the top operators per device from the profiler.",
        "step",
        transformer_cases,
        {"torch": f"{TORCH}:transformer"},
        requires=("transformers",),
        unsupported={
            framework: "the transformer workload is PyTorch-only: its models are Hugging Face transformers' "
            "PyTorch classes built from their configs, and transformers 5 has no TensorFlow or Flax models. "
            "Re-implementations (keras-hub, flax) lay out their modules differently, so their parameter counts "
            "could not be proven equal to these"
            for framework in ("tensorflow", "jax")
        },
        deviations=_deviations("transformer", "step"),
        swept=Sweep("batch_size"),
        compiled_on={("torch", "tuned"): TRANSFORMER_COMPILED_ON},
        left_out=(
            LeftOut(
                QUICK,
                TRANSFORMER_COMPILED_ON,
                "it compiles BERT-base (torch.compile) in each of its processes, 10 to 19 s a round on an H100, for "
                "one figure",
                variants=("tuned",),
            ),
        ),
    ),
    Workload(
        "spark-inference",
        "003",
        "Distributed batch inference with Spark",
        "BERT-base and DeiT-tiny (random weights) over a Spark DataFrame of synthetic inputs with "
        "pyspark.ml.functions.predict_batch_udf, sweeping rows per predict call and partitions: rows per second "
        "for a full action. Embedded Spark (local[*]) by default, or a cluster with --spark-master.",
        "epoch",
        spark_cases,
        {"torch": "runner.frameworks.torch.predict:spark_inference"},
        requires=_SPARK_REQUIRES,
        unsupported=_SPARK_UNSUPPORTED,
        variants=("as-written",),
        deviations=_deviations("spark-inference", "epoch"),
        left_out=(LeftOut(QUICK, EVERY_DEVICE, "Spark's sessions and actions take about 100 s on a 2-core CPU"),),
    ),
    Workload(
        "spark-streaming",
        "003",
        "Real-time inference with Spark Structured Streaming",
        "A producer writes files of synthetic images at a set rate; a Structured Streaming query predicts them "
        "(DeiT-tiny, random weights) and commits each micro-batch to a Parquet sink with a checkpoint, exactly "
        "once. End-to-end latency per file (p50, p95, p99) at each offered rate, up to the highest rate the "
        "pipeline sustains.",
        "latency",
        stream_cases,
        {"torch": "runner.frameworks.torch.predict:spark_streaming"},
        requires=_SPARK_REQUIRES,
        unsupported=_SPARK_UNSUPPORTED,
        variants=("as-written",),
        deviations=_deviations("spark-streaming", "latency"),
        ladder="rate",
        left_out=(LeftOut(QUICK, EVERY_DEVICE, "each offered rate runs for 30 s, the whole ladder minutes"),),
    ),
    Workload(
        "transformer-ddp",
        "003",
        "Data-parallel training over several GPUs (DDP)",
        "The BERT-base fine-tuning step at batch 64 per GPU over 1, 2, 4 and 8 GPUs with torch.distributed "
        "(NCCL; gloo on the CPU, at most 2 processes): examples per second and the scaling efficiency.",
        "step",
        ddp_cases,
        {"torch": "runner.frameworks.torch.distributed:transformer_ddp"},
        requires=("transformers",),
        unsupported={
            framework: "the data-parallel workload is PyTorch's torch.distributed; its models are Hugging Face "
            "transformers' PyTorch classes"
            for framework in ("tensorflow", "jax")
        },
        deviations=_deviations("transformer-ddp", "step"),
        swept=Sweep("world_size", exponent=0.0),
        left_out=(
            LeftOut(QUICK, EVERY_DEVICE, "each world size starts its processes and compiles BERT-base's step anew"),
            LeftOut(
                ("quick", "standard"),
                ("cpu",),
                "gloo processes splitting one CPU's cores answer no question the seeds ask (the seed scales out over "
                "machines); data parallelism is measured over two or more GPUs",
            ),
        ),
    ),
]
