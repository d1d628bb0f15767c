"""What the engine runs before the clock and what it leaves out: a tuned epoch loop (and JAX's as-written one on a
CPU) warms up on a short epoch (its first batches and its last, partial one) that still compiles every shape a
timed epoch meets, PyTorch's and TensorFlow's as-written loops on a whole one, and a sweep skips the points that
would outlast the time budget."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

from runner.measure.timing import measure
from runner.measure.worker import SweepCeiling, import_builder
from runner.workloads import get
from runner.workloads.base import warmup_batches


def test_warmup_batches_are_the_first_two_and_the_last():
    assert warmup_batches(938) == [0, 1, 937]  # 60,000 MNIST images in batches of 64: the last holds 32
    assert warmup_batches(3) == [0, 1, 2]
    assert warmup_batches(2) == [0, 1]
    assert warmup_batches(1) == [0]


def test_the_engine_runs_the_shorter_warmup_in_place_of_the_first_unit():
    now = [0.0]
    calls: list[str] = []

    def unit() -> None:
        calls.append("unit")
        now[0] += 1.0

    def warm() -> None:
        calls.append("warmup")
        now[0] += 0.25

    timing = measure(unit, lambda: None, budget_s=0.5, warmup=warm, clock=lambda: now[0], min_samples=1)
    assert calls[0] == "warmup" and "warmup" not in calls[1:]
    assert timing.warmup_s == 0.25 and timing.samples_s == [1.0]


def _with_tail(workload: str, n: int):
    """The quick case of a workload with n examples, so that its epoch ends in a partial batch."""
    case = get(workload).cases("quick")[0]
    return dataclasses.replace(case, config={**case.config, "n": n})


@pytest.mark.parametrize("workload", ["mnist-cnn", "cifar-lenet", "tabular-mlp"])
def test_torch_tuned_epoch_warmup_runs_the_first_batches_and_the_last_through_the_same_loop(workload):
    from runner.frameworks.torch import make_device

    cpu = make_device("cpu", "test CPU")
    batch = get(workload).cases("quick")[0].config["batch"]
    case = _with_tail(workload, 5 * batch + 10)
    program = import_builder(get(workload).implementations["torch"])(case, "tuned", cpu)
    sizes: list[int] = []
    program.model.register_forward_pre_hook(lambda module, args: sizes.append(args[0].shape[0]))
    program.warmup()
    assert sizes == [batch, batch, 10]
    sizes.clear()
    program.run_unit()
    assert sizes == [batch] * 5 + [10]
    program.close()


@pytest.mark.parametrize("framework", ["torch", "tensorflow"])
def test_as_written_loops_warm_up_on_a_whole_epoch(framework):
    """The seeds' transcriptions warm up on a whole epoch: PyTorch's as-written loops (the seeds' own, DataLoader
    workers and all) and TensorFlow's (Keras' fit) keep the engine's default."""
    if framework != "torch":
        pytest.importorskip(framework)
    done = subprocess.run(
        [sys.executable, "-c", AS_WRITTEN_CHECK, framework], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split()[-1] == "whole"


# JAX and TensorFlow run in a child process, as in a run: imported here they would warn at every later fork.
AS_WRITTEN_CHECK = """
import sys
from runner.measure.worker import import_builder
from runner.workloads import get

framework = sys.argv[1]
device = __import__(f"runner.frameworks.{framework}", fromlist=["make_device"]).make_device("cpu", "test CPU")
for workload in ("tabular-mlp", "depth-sweep", "cifar-lenet", "mnist-cnn"):
    build = import_builder(get(workload).implementations[framework])
    program = build(get(workload).cases("tiny")[0], "as-written", device)
    assert not hasattr(program, "warmup"), (framework, workload)
print("whole")
"""

JAX_CHECK = """
import dataclasses, sys
from runner.frameworks.jax import make_device
from runner.measure.worker import import_builder
from runner.workloads import get

case = get("mnist-cnn").cases("quick")[0]
case = dataclasses.replace(case, config={**case.config, "n": 3 * 64 + 10})
program = import_builder(get("mnist-cnn").implementations["jax"])(case, sys.argv[1], make_device("cpu", "test CPU"))
step = getattr(program, "step_fn", None) or program.jitted  # tuned on the CPU, or as-written: a jitted step per batch
program.warmup()
program.sync()
warm = step._cache_size()
program.run_unit()
program.sync()
print(warm, step._cache_size())
"""

TF_CHECK = """
import dataclasses
import subprocess
import sys
from runner.frameworks.tensorflow import make_device
from runner.measure.worker import import_builder
from runner.workloads import get

case = get("tabular-mlp").cases("quick")[0]
case = dataclasses.replace(case, config={**case.config, "n": 4 * case.config["batch"] + 5})
program = import_builder(get("tabular-mlp").implementations["tensorflow"])(case, "tuned", make_device("cpu", "test"))
program.warmup()
warm = program.step.experimental_get_tracing_count()
program.run_unit()
print(warm, program.step.experimental_get_tracing_count())
"""


def _child(code: str, *args: str) -> list[int]:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return [int(v) for v in done.stdout.split()[-2:]]


def test_jax_as_written_loop_warms_up_whole_on_a_gpu():
    """The short warm-up is the CPU's: on the H100 machine's GPU warmup_ab.py gave 1.193 for it, not harmless."""
    pytest.importorskip("jax")
    done = subprocess.run([sys.executable, "-c", JAX_GPU_CHECK], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split()[-2:] == ["cpu:short", "cuda:whole"]


JAX_GPU_CHECK = """
import jax
from runner.frameworks.jax import JaxDevice, make_device
from runner.measure.worker import engine_options, import_builder
from runner.workloads import get

cpu = make_device("cpu", "test CPU")
gpu = JaxDevice("cuda", "a GPU's kind on the CPU's device", cpu.device, cpu.sync)  # what the loop decides on
build = import_builder(get("mnist-cnn").implementations["jax"])
case = get("mnist-cnn").cases("tiny")[0]
for device in (cpu, gpu):
    program = build(case, "as-written", device)
    warmup = engine_options(program, device)["warmup"]  # what the timing engine runs before the clock
    print(f"{device.kind}:{'whole' if warmup is None else 'short'}")
"""


@pytest.mark.parametrize("variant", ["tuned", "as-written"])
def test_jax_epoch_warmup_compiles_every_shape_a_timed_epoch_meets(variant):
    """JAX's tuned step loop on the CPU and its as-written loop there warm up on the short epoch."""
    pytest.importorskip("jax")
    warm, after = _child(JAX_CHECK, variant)
    assert warm >= 2  # at least the full batch and the partial last one
    assert after == warm  # nothing compiled inside a timed epoch


def test_tensorflow_epoch_warmup_traces_every_shape_a_timed_epoch_meets():
    pytest.importorskip("tensorflow")
    warm, after = _child(TF_CHECK)
    assert warm >= 1 and after == warm


def test_a_sweep_skips_the_points_that_would_outlast_the_budget():
    cases = {
        (c.point["model"], c.point["mode"], c.point["batch_size"]): c for c in get("transformer").cases("standard")
    }
    ceiling = SweepCeiling(get("transformer").swept, budget_s=2.0)
    assert ceiling.skip_reason(cases["bert-base", "train", 8]) is None  # the first point of a sweep is measured
    ceiling.measured(cases["bert-base", "train", 8], {"median_s": 1.42})
    reason = ceiling.skip_reason(cases["bert-base", "train", 32])
    assert reason is not None and "batch_size 32" in reason and "5.68 s" in reason and "--time-budget" in reason
    assert ceiling.skip_reason(cases["bert-base", "infer", 64]) is None  # another sweep: nothing measured yet
    ceiling.measured(cases["bert-base", "infer", 8], {"median_s": 0.2})
    assert ceiling.skip_reason(cases["bert-base", "infer", 64]) is None  # 1.6 s: inside the budget
    ceiling.measured(cases["bert-base", "infer", 64], {"median_s": 1.5})
    assert ceiling.skip_reason(cases["bert-base", "infer", 256]) is not None  # 6 s, scaled from the last measured
    # A larger budget measures them; a workload with no sweep never skips.
    roomy = SweepCeiling(get("transformer").swept, budget_s=6.0)
    roomy.measured(cases["bert-base", "train", 8], {"median_s": 1.42})
    assert roomy.skip_reason(cases["bert-base", "train", 32]) is None
    flat = SweepCeiling(get("mnist-cnn").swept, budget_s=0.001)
    case = get("mnist-cnn").cases("standard")[0]
    flat.measured(case, {"median_s": 30.0})
    assert flat.skip_reason(case) is None


def test_a_seed_loops_sweep_skips_past_the_budget_though_each_point_has_a_process_of_its_own():
    """The as-written transformer loop measures each point in a fresh interpreter, as its seed's script runs: the
    ceiling there predicts from the points the processes before it measured (the code before measured them all)."""
    pytest.importorskip("transformers")
    from runner import api

    options = api.RunOptions(
        profile="standard", workloads=["transformer"], frameworks=["torch"], devices=["cpu"], variants=["as-written"],
        time_budget_s=0.05, rounds=2, peaks=False, equivalence=False, energy=False, fidelity=False, profile_ops=False,
    )  # fmt: skip
    plan = api.plan_run(options)
    (group,) = [g for g in plan.groups if g.skip_reason is None]
    wanted = {"model": "deit-tiny", "mode": "infer"}
    group.only([i for i, c in zip(group.indices, group.cases, strict=True) if wanted.items() <= c.point.items()])
    first, larger = api.measure_group(plan, group, api.Progress())
    assert (first.point["batch_size"], larger.point["batch_size"]) == (32, 256)
    assert first.status == "ok" and len(first.rounds) == 2
    assert larger.status == "skipped" and "batch_size 256 would take about" in (larger.skip_reason or "")


def test_a_data_parallel_sweep_skips_the_process_counts_after_one_past_the_budget():
    """Each process keeps its batch: a step with two processes takes at least as long as with one."""
    cases = {c.point["world_size"]: c for c in get("transformer-ddp").cases("standard")}
    ceiling = SweepCeiling(get("transformer-ddp").swept, budget_s=2.0)
    assert ceiling.skip_reason(cases[1]) is None
    ceiling.measured(cases[1], {"median_s": 7.9})
    reason = ceiling.skip_reason(cases[2])
    assert reason is not None and "world_size 2" in reason and "7.9 s" in reason and "at least as long" in reason
    fast = SweepCeiling(get("transformer-ddp").swept, budget_s=2.0)
    fast.measured(cases[1], {"median_s": 0.11})  # a GPU's step: every process count is measured
    assert all(fast.skip_reason(cases[w]) is None for w in (2, 4, 8))


def test_a_data_parallel_sweep_past_the_budget_even_at_peak_is_skipped_before_measuring():
    """Each process's share of a step at the device's measured peak is a lower bound on every point of the sweep:
    the 16-core CPU's fp32 DDP step (4.3 TFLOP at 1.06 TFLOP/s) is skipped whole, nothing measured first."""
    cases = {c.point["world_size"]: c for c in get("transformer-ddp").cases("standard")}
    cpu = {"fp32": 1.06, "bf16": 4.4}
    ceiling = SweepCeiling(get("transformer-ddp").swept, budget_s=2.0, peaks=cpu)
    reason = ceiling.skip_reason(cases[1], "fp32")
    assert reason is not None and "4.05 s" in reason and "1.06 TFLOP/s" in reason and "--time-budget" in reason
    assert ceiling.skip_reason(cases[2], "fp32") is not None  # the same share per process
    # a bf16 step may reach the bf16 peak (as may one of unknown precision): 0.98 s is no bound past the budget
    assert ceiling.skip_reason(cases[1], "bf16") is None and ceiling.skip_reason(cases[1]) is None
    assert SweepCeiling(get("transformer-ddp").swept, budget_s=6.0, peaks=cpu).skip_reason(cases[1], "fp32") is None
    gpu = SweepCeiling(get("transformer-ddp").swept, budget_s=2.0, peaks={"fp32": 52.0, "bf16": 711.0})
    assert all(gpu.skip_reason(cases[w], "fp32") is None for w in (1, 2, 4, 8))
    # no peak measured (--no-peaks, or it failed): nothing is predicted
    assert SweepCeiling(get("transformer-ddp").swept, budget_s=2.0).skip_reason(cases[1], "fp32") is None
    # a batch sweep keeps its first point whatever its FLOP count: the floor is for the same work per process
    bert = next(c for c in get("transformer").cases("standard") if c.point["batch_size"] == 128)
    slow = SweepCeiling(get("transformer").swept, budget_s=2.0, peaks={"fp32": 0.01})
    assert slow.skip_reason(bert, "fp32") is None


def test_the_data_parallel_precision_is_known_before_the_build():
    """The bound's peak follows the precision the point will run in: fp32 on the CPU for both loops (autocast is
    for GPUs), as the built program then reports."""
    from runner.frameworks.torch import make_device
    from runner.frameworks.torch.distributed import transformer_ddp_precision

    case = get("transformer-ddp").cases("tiny")[0]
    assert {transformer_ddp_precision(case, v, make_device("cpu")) for v in ("as-written", "tuned")} == {"fp32"}
