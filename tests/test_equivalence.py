"""Every framework's model computes what PyTorch's does: the equivalence check, run for real (each framework in
its own child process, PyTorch's weights copied across), and the comparison shown to fail on real mistakes."""

from __future__ import annotations

import numpy as np
import pytest

from runner.measure import equivalence
from runner.workloads import get, select
from tests.conftest import shadow_modules

WORKLOADS = ["tabular-mlp", "depth-sweep", "cifar-lenet", "mnist-cnn"]
FRAMEWORKS = ["tensorflow", "jax"]


@pytest.fixture(scope="module")
def checks():
    pytest.importorskip("tensorflow")
    pytest.importorskip("jax")
    return equivalence.check(select(WORKLOADS), ["torch", *FRAMEWORKS], "tiny")


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("workload", WORKLOADS)
def test_framework_matches_pytorch(checks, workload, framework):
    cases = get(workload).cases("tiny")
    mine = [c for c in checks if c.workload == workload and c.framework == framework]
    assert [c.point for c in mine] == [case.point for case in cases]  # every point of the sweep is checked
    for check, case in zip(mine, cases, strict=True):
        assert check.status == "passed", check.detail
        assert check.params == check.reference_params == case.params
        assert check.forward_flops == pytest.approx(case.forward_flops, rel=1e-12)
        assert check.output_shape == [equivalence.BATCH, 2 if workload in ("tabular-mlp", "depth-sweep") else 10]
        assert check.loss_rel_diff is not None and check.loss_rel_diff <= check.loss_rtol
        assert check.grad_rel_diff is not None and check.grad_rel_diff <= check.grad_rtol
        assert "fp64" in check.detail


def test_the_reference_is_fp64():
    """fp32 would let a ReLU or a max-pool choice within rounding of its tie flip on another CPU (the failure
    this guards against moved MNIST's gradients by 0.7% on one CI machine)."""
    torch_workloads = pytest.importorskip("runner.frameworks.torch.workloads")
    ref = torch_workloads.mnist_cnn_equivalence(get("mnist-cnn").cases("tiny")[0], equivalence.BATCH)
    arrays = [ref["output"], ref["x"], *ref["grads"], *ref["weights"]]
    assert all(a.dtype == np.float64 for a in arrays)


def _reference(seed: int = 0) -> dict:
    gen = np.random.default_rng(seed)
    return {
        "params": 30,
        "forward_flops": 40.0,
        "output": gen.standard_normal((8, 2)),
        "loss": 0.7,
        "grads": [gen.standard_normal((2, 10)), gen.standard_normal(10)],
    }


def test_identical_figures_pass():
    ref = _reference()
    figures, problems = equivalence.compare(ref, _reference(), 40.0)
    assert problems == [] and figures["grad_rel_diff"] == 0 and figures["loss_rel_diff"] == 0


@pytest.mark.parametrize(
    "mistake, expected",
    [
        (lambda o: o.update(params=31), "31 parameters, PyTorch has 30"),
        (lambda o: o.update(forward_flops=80.0), "80 forward FLOPs per example"),
        (lambda o: o.update(output=o["output"][:, :1]), "output shape [8, 1]"),
        (lambda o: o.update(loss=0.7 * (1 + 1e-4)), "loss 0.70007"),
        # What a changed epsilon does (1e-7 for 1.19e-7 in Flux's crossentropy: 8.3e-8): only fp64 can see it.
        (lambda o: o.update(loss=0.7 * (1 + 8e-8)), "loss 0.70000006"),
        (lambda o: o["grads"][0].__setitem__((0, 0), o["grads"][0][0, 0] * (1 + 1e-7)), "gradients differ"),
        (lambda o: o.update(loss=float("nan")), "loss nan"),
        (lambda o: o["grads"][0].__setitem__((0, 0), o["grads"][0][0, 0] + 0.01), "gradients differ"),
        (lambda o: o.update(grads=o["grads"][:1]), "1 gradient tensors"),
        # A transposed kernel: the classic mistake when copying weights between frameworks.
        (lambda o: o["grads"].__setitem__(0, o["grads"][0].T.copy()), "gradient 0 has shape [10, 2]"),
        (lambda o: o["grads"].__setitem__(0, o["grads"][0][::-1].copy()), "gradients differ"),
    ],
)
def test_each_kind_of_difference_fails(mistake, expected):
    other = _reference()
    mistake(other)
    _, problems = equivalence.compare(_reference(), other, 40.0)
    assert any(expected in p for p in problems), problems


def test_a_framework_that_cannot_run_is_an_error_not_a_pass(tmp_path, monkeypatch):
    """A framework whose import fails in the child is recorded as 'error' with the reason."""
    shadow_modules(tmp_path, monkeypatch, jax="raise ImportError('jax is broken on purpose')\n")
    checks = equivalence.check(select(["tabular-mlp"]), ["torch", "jax"], "tiny", timeout_s=120)
    assert [c.status for c in checks] == ["error"]
    assert "jax is broken on purpose" in checks[0].detail
