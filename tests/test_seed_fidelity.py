"""As-written means the seed's code: the PyTorch as-written loops are built and their DataLoader settings,
optimisers and hyper-parameters are compared with a table transcribed from the seeds (each row quotes the
seed's own line, and the quotes are checked against the seed text where ../shared/seeds is beside the
checkout). A change to what a loop does must change its workload hash."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn
from torch.utils.data import RandomSampler, SequentialSampler

from runner import SUITE_VERSION
from runner.frameworks.torch import make_device, vision
from runner.frameworks.torch import workloads as tw
from runner.workloads import get
from runner.workloads.base import Case

CPU = make_device("cpu", "test CPU")
SEEDS = Path(__file__).resolve().parents[2] / "shared" / "seeds"

# workload -> (seed file prefix, lines quoted from the seed, what the as-written loop must be)
SEED_TABLE = {
    "tabular-mlp": (
        "000",
        [
            "dataloader = torch.utils.data.DataLoader(dataset, batch_size=10, shuffle=True,",
            "pin_memory=True, num_workers=2) #for GPU training, not need for CPU",
            "X_batch = X_batch.to(device, non_blocking=True)",
            '{"params": decay, "weight_decay": 1e-4},',
            "lr = 1e-3",
        ],
        {
            # one loader for every device, the CPU included: the seed's CPU time used it too
            "loader": {"cpu": {"batch_size": 10, "shuffle": True, "pin_memory": True, "num_workers": 2}},
            "optimizer": (torch.optim.AdamW, [{"lr": 1e-3, "weight_decay": 1e-4}, {"lr": 1e-3, "weight_decay": 0.0}]),
        },
    ),
    "depth-sweep": (
        "001",
        [
            "optimizer = optim.SGD(model.parameters(), lr=0.1)",
            "mini_batch_size = 100",
            "output = model(train_input.narrow(0, n, mini_batch_size))",
            "print('Epoch {:2d}: Train Loss {:6.2f}, Train Error: {:5.02f}%'",
        ],
        {"optimizer": (torch.optim.SGD, [{"lr": 0.1, "momentum": 0}]), "batch": 100},
    ),
    "cifar-lenet": (
        "002",
        [
            "opt_cpu = Momentum(0.01)",
            "labels[:,i]) for i in partition(1:50000, 1000)]) |> cpu",
            "loss_cpu(x, y) = sum(crossentropy(m_cpu(x), y))",
        ],
        # Flux's Momentum(eta, rho=0.9) is SGD with momentum 0.9 at a constant rate
        {"optimizer": (torch.optim.SGD, [{"lr": 0.01, "momentum": 0.9}]), "batch": 1000},
    ),
    "mnist-cnn": (
        "004",
        ["Code can be found [here](https://github.com/pytorch/examples/blob/main/mnist/main.py)"],
        # pytorch/examples mnist/main.py (2023): train_kwargs = {'batch_size': 64}; under CUDA it adds
        # {'num_workers': 1, 'pin_memory': True, 'shuffle': True}; Adadelta(lr=1.0); StepLR(step_size=1, gamma=0.7)
        {
            "loader": {
                "cpu": {"batch_size": 64, "shuffle": False, "pin_memory": False, "num_workers": 0},
                "cuda": {"batch_size": 64, "shuffle": True, "pin_memory": True, "num_workers": 1},
            },
            "optimizer": (torch.optim.Adadelta, [{"lr": 1.0, "rho": 0.9, "eps": 1e-6}]),
            "step_lr_gamma": 0.7,
        },
    ),
}


def _case(workload: str) -> Case:
    return get(workload).cases("standard")[0]


def _loader_settings(loader: torch.utils.data.DataLoader) -> dict:
    shuffled = isinstance(loader.sampler, RandomSampler)
    assert shuffled or isinstance(loader.sampler, SequentialSampler)
    return {
        "batch_size": loader.batch_size,
        "shuffle": shuffled,
        "pin_memory": loader.pin_memory,
        "num_workers": loader.num_workers,
    }


@pytest.mark.skipif(not SEEDS.is_dir(), reason="../shared/seeds is not beside this checkout")
@pytest.mark.parametrize("workload", sorted(SEED_TABLE))
def test_quoted_lines_are_in_the_seed_text(workload):
    prefix, quotes, _ = SEED_TABLE[workload]
    (seed,) = SEEDS.glob(f"{prefix}_*.txt")
    text = re.sub(r"\s+", " ", seed.read_text())
    for quote in quotes:
        assert re.sub(r"\s+", " ", quote) in text, f"seed {prefix} does not say: {quote}"


@pytest.mark.parametrize("workload", sorted(SEED_TABLE))
def test_as_written_optimiser_is_the_seeds(workload):
    _, _, expected = SEED_TABLE[workload]
    case = _case(workload)
    if workload == "mnist-cnn":
        case = get(workload).cases("tiny")[0]  # 60,000 PIL images are not needed to read the settings
    program = tw.__dict__[workload.replace("-", "_")](case, "as-written", CPU)
    kind, groups = expected["optimizer"]
    assert type(program.optimizer) is kind
    assert len(program.optimizer.param_groups) == len(groups)
    for group, want in zip(program.optimizer.param_groups, groups, strict=True):
        for key, value in want.items():
            assert group[key] == pytest.approx(value), (workload, key)
    if workload == "tabular-mlp":  # decay on weights (ndim > 1), none on biases
        decay, no_decay = program.optimizer.param_groups
        assert all(p.ndim > 1 for p in decay["params"]) and all(p.ndim == 1 for p in no_decay["params"])
    if "batch" in expected:
        assert case.config["batch"] == expected["batch"]
    if "step_lr_gamma" in expected:
        assert program.scheduler.gamma == expected["step_lr_gamma"] and program.scheduler.step_size == 1


@pytest.mark.parametrize("workload", ["tabular-mlp", "mnist-cnn"])
def test_as_written_dataloader_is_the_seeds_on_the_cpu(workload):
    case = get(workload).cases("tiny")[0]
    program = tw.__dict__[workload.replace("-", "_")](case, "as-written", CPU)
    assert _loader_settings(program.loader) == SEED_TABLE[workload][2]["loader"]["cpu"]


def test_mnist_loader_under_cuda_is_the_examples():
    """No GPU here: check what the loop would pass to DataLoader under CUDA/ROCm against the example."""
    loop = _case("mnist-cnn").loop("as-written")
    want = SEED_TABLE["mnist-cnn"][2]["loader"]["cuda"]
    settings = {"batch_size": 64, "shuffle": False, "pin_memory": False, "num_workers": 0, **loop["loader"]["cuda"]}
    assert settings == want


def test_mnist_items_go_through_pil_to_tensor_and_normalize():
    images, targets = tw.mnist_images(4)
    item, target = tw.SyntheticMnist(images, targets, vision.mnist_transform(0.1307, 0.3081))[2]
    expected = (images[2].float() / 255 - 0.1307) / 0.3081
    assert item.shape == (1, 28, 28) and item.dtype == torch.float32 and target == int(targets[2])
    assert torch.allclose(item[0], expected, atol=1e-6)


def test_mnist_transform_takes_torchvisions_steps():
    """Normalize is an nn.Module (its hooks run), the zero-std guard is there, and ToTensor refuses what
    torchvision's refuses: the bookkeeping that made the seed's worker slower than the bare tensor operations."""
    from PIL import Image

    transform = vision.mnist_transform(0.1307, 0.3081)
    to_tensor, norm = transform.transforms
    assert isinstance(to_tensor, vision.ToTensor) and isinstance(norm, nn.Module)
    calls = []
    norm.register_forward_hook(lambda *_: calls.append(1))
    transform(Image.fromarray(np.zeros((28, 28), np.uint8), mode="L"))
    assert calls == [1]
    with pytest.raises(ValueError, match="std evaluated to zero"):
        vision.normalize(torch.zeros(1, 2, 2), [0.0], [0.0])
    with pytest.raises(TypeError, match="PIL Image or ndarray"):
        vision.to_tensor([[0]])


def test_mnist_transform_matches_torchvision_where_installed():
    transforms = pytest.importorskip("torchvision.transforms")
    from PIL import Image

    pic = Image.fromarray(np.arange(28 * 28, dtype=np.uint8).reshape(28, 28), mode="L")
    want = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])(pic)
    assert torch.equal(vision.mnist_transform(0.1307, 0.3081)(pic), want)


def test_workload_hash_follows_the_variants_loop_only():
    case = _case("tabular-mlp")
    loops = case.config["loops"]
    changed_loader = {**loops["as-written"], "loader": {**loops["as-written"]["loader"], "num_workers": 0}}
    edited = Case(**{**case.__dict__, "config": {**case.config, "loops": {**loops, "as-written": changed_loader}}})
    assert edited.workload_hash("as-written") != case.workload_hash("as-written")
    assert edited.workload_hash("tuned") == case.workload_hash("tuned")  # the other loop is untouched


# The workload hashes of suite version 3 at the standard profile. A failure here means a loop, a model or data
# changed: if its numbers change, bump SUITE_VERSION (runner/__init__.py) and pin the new hashes.
PINNED = {
    ("tabular-mlp", "as-written"): "e41ac5ad467074e2",
    ("tabular-mlp", "tuned"): "0a1e8c60f7ef154a",
    ("depth-sweep", "as-written"): "e35339d0d9603efc",
    ("cifar-lenet", "as-written"): "e27840e66a00df3c",
    ("mnist-cnn", "as-written"): "f9c88c7611d928b6",
    ("mnist-cnn", "tuned"): "bd7a9b02e05e8777",
}


@pytest.mark.parametrize(("workload", "variant"), sorted(PINNED))
def test_workload_hashes_are_pinned(workload, variant):
    assert SUITE_VERSION == 3
    assert _case(workload).workload_hash(variant) == PINNED[workload, variant]


def test_no_current_hash_matches_an_older_suites_result():
    """Results of suite version 1 (committed under results/) are never compared with this suite's."""
    from runner.results.storage import iter_all
    from runner.workloads import PROFILES, VARIANTS, all_workloads

    current = {c.workload_hash(v) for w in all_workloads() for p in PROFILES for c in w.cases(p) for v in VARIANTS}
    old = {
        m.workload_hash
        for _path, result, _problems in iter_all([Path(__file__).resolve().parents[1] / "results"])
        if result is not None and result.suite.version < SUITE_VERSION
        for m in result.measurements
    }
    assert old and not (old & current)


@pytest.mark.parametrize("variant", ["as-written", "tuned"])
def test_the_transformer_step_frees_its_gradients_as_plain_pytorch_does(variant):
    """Seed 003 prints no loop, so as-written is the plain fine-tuning step: `optimizer.zero_grad()` with
    PyTorch's default, which frees the gradients (sets them to None) rather than zeroing them in place, and no
    autocast context around an fp32 step. The as-written loop records it, so the fix moved that loop's hash."""
    pytest.importorskip("transformers")
    spec = get("transformer")
    case = next(c for c in spec.cases("tiny") if c.point["mode"] == "train")
    program = tw.transformer(case, variant, CPU)
    program.run_unit()
    grads = [p.grad for p in program.model.parameters() if p.requires_grad]
    assert grads and all(g is None for g in grads)
    if variant == "as-written":
        assert case.config["loops"][variant]["zero_grad"] == "set-to-none"


def _step_calls(source_lines: list[str]) -> list[str]:
    """The training step's calls in the order a transcription's source makes them: zero_grad, the loss (its
    forward), backward, step."""
    calls = []
    for line in source_lines:
        for name, pattern in (
            ("zero_grad", r"\.zero_grad\("),
            ("forward", r"\bloss\("),
            ("backward", r"\.backward\("),
            ("step", r"\.step\("),
        ):
            if re.search(pattern, line):
                calls.append(name)
    return calls


def test_the_cifar_step_runs_in_the_transcriptions_order():
    """Seed 002's step is Flux's gradient(() -> loss(d...), params) then update!: benchsite's as-written loop and
    the shipped transcription both free the old gradients, run the loss's forward and backward, then step. The
    order is observed as the loop runs (the optimiser's zero_grad against the model's forward), and the
    transcription's source is read for its own."""
    program = tw.cifar_lenet(get("cifar-lenet").cases("tiny")[0], "as-written", CPU)
    program.batches = program.batches[:2]
    events: list[str] = []
    program.model.register_forward_pre_hook(lambda *_: events.append("forward"))
    zero_grad, step = program.optimizer.zero_grad, program.optimizer.step
    program.optimizer.zero_grad = lambda *a, **k: (events.append("zero_grad"), zero_grad(*a, **k))[1]
    program.optimizer.step = lambda *a, **k: (events.append("step"), step(*a, **k))[1]
    for p in program.model.parameters():
        p.register_hook(lambda g: (events.append("backward"), g)[1])
    program.run_unit()
    ordered = [e for i, e in enumerate(events) if e != "backward" or events[i - 1] != "backward"]
    assert ordered == ["zero_grad", "forward", "backward", "step"] * 2

    from runner.fidelity import SCRIPTS

    script = (SCRIPTS / "seed_002.py").read_text().splitlines()
    start = next(i for i, line in enumerate(script) if line.startswith("def epochs("))
    assert _step_calls(script[start : start + 8]) == ["zero_grad", "forward", "backward", "step"]
    assert get("cifar-lenet").cases("tiny")[0].loop("as-written")["step"] == "zero_grad, forward, backward, step"
