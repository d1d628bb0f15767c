"""The suite: parameter counts equal the seeds', analytic FLOPs equal what PyTorch counts, every workload
runs on the CPU at tiny size in both variants, and workload hashes identify exactly what they should."""

from __future__ import annotations

import io
import math

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from runner.frameworks.torch import make_device
from runner.frameworks.torch import workloads as tw
from runner.measure.worker import import_builder
from runner.workloads import PROFILES, VARIANTS, all_workloads, get, select
from runner.workloads.suite import MODELS, transformer_forward_flops, transformer_params

CPU = make_device("cpu", "test CPU")


def test_parameter_counts_equal_the_seeds():
    depth = [c.params for c in get("depth-sweep").cases("standard")]
    assert depth[0] == 22 and depth[-1] == 11_201_190 and len(depth) == 11
    assert get("cifar-lenet").cases("standard")[0].params == 39_558  # seed 002
    assert get("mnist-cnn").cases("standard")[0].params == 1_199_882  # seed 004, PyTorch and Keras
    assert get("tabular-mlp").cases("standard")[0].params == 13 * 32 + 32 + 32 * 16 + 16 + 16 * 2 + 2


@pytest.mark.parametrize("workload", ["tabular-mlp", "depth-sweep", "cifar-lenet", "mnist-cnn"])
def test_torch_models_have_the_specs_parameter_count(workload):
    for case in get(workload).cases("standard")[:4]:
        for variant in VARIANTS:
            program = getattr(tw, workload.replace("-", "_"))(
                case.__class__(**{**case.__dict__, "config": {**case.config, "n": 200}}), variant, CPU
            )
            assert program.params == case.params, (workload, variant, case.point)


def _counted_train_flops(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, loss_fn) -> int:
    with FlopCounterMode(display=False) as counter:
        loss_fn(model(x), y).backward()
    return counter.get_total_flops()


@pytest.mark.parametrize(
    ("workload", "model", "shape"),
    [
        ("tabular-mlp", lambda: tw.MultiLayerPerceptron(13, [13, 32, 16, 2]), (13,)),
        ("cifar-lenet", lambda: tw.LeNet(logits=True), (3, 32, 32)),
        ("mnist-cnn", tw.MnistNet, (1, 28, 28)),
    ],
)
def test_analytic_flops_equal_pytorchs_count(workload, model, shape):
    case = get(workload).cases("standard")[0]
    batch = 8
    counted = _counted_train_flops(
        model(), torch.randn(batch, *shape), torch.randint(0, 2, (batch,)), torch.nn.functional.cross_entropy
    )
    assert counted == pytest.approx(case.flops_per_unit / case.samples_per_unit * batch, rel=1e-9)


def test_depth_sweep_flops_equal_pytorchs_count():
    for case in get("depth-sweep").cases("standard")[:6]:
        counted = _counted_train_flops(
            tw.depth_model(case.config["widths"]),
            torch.randn(10, 2),
            torch.randint(0, 2, (10,)),
            torch.nn.functional.cross_entropy,
        )
        assert counted == pytest.approx(case.flops_per_unit / case.samples_per_unit * 10, rel=1e-9)


@pytest.mark.parametrize("name", ["bert-tiny", "vit-tiny", "convnext-mini"])
def test_transformer_flops_formula_matches_pytorchs_count(name):
    cfg = MODELS[name]
    model = tw.build_transformer(cfg).eval()
    # The counter has no rule for the fused CPU attention kernel; the eager path spells it as matmuls.
    model.set_attn_implementation("eager")
    batch = tw.transformer_batch(cfg, 2)
    batch.pop("labels")
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        model(**batch)
    assert counter.get_total_flops() == pytest.approx(transformer_forward_flops(cfg) * 2, rel=1e-9)


# Every loop a workload has; the spark-* models live in Spark's workers (tests/test_spark*.py run them).
LOOPS = [(w.id, v) for w in all_workloads() for v in w.variants if not w.id.startswith("spark-")]


@pytest.mark.parametrize(("workload", "variant"), LOOPS)
def test_every_workload_trains_on_the_cpu_at_tiny_size(workload, variant):
    spec = get(workload)
    builder = import_builder(spec.implementations["torch"])
    for case in spec.cases("tiny"):
        program = builder(case, variant, CPU)
        before = [p.detach().clone() for p in program.model.parameters()]
        program.run_unit()
        program.run_unit()
        CPU.sync()
        after = list(program.model.parameters())
        assert all(torch.isfinite(p).all() for p in after)
        trains = case.config.get("mode", "train") == "train"
        changed = any(not torch.equal(a, b) for a, b in zip(after, before, strict=True))
        assert changed == trains, case.label()
        program.close()


def test_transformer_top_ops_come_from_the_profiler():
    case = get("transformer").cases("tiny")[0]
    program = tw.transformer(case, "tuned", CPU)
    program.run_unit()
    ops = program.top_ops()
    assert ops and all(op["self_s"] > 0 and op["calls"] >= 1 for op in ops)
    assert any("mm" in op["name"] or "linear" in op["name"] for op in ops)


def test_as_written_loops_print_the_seeds_progress_lines():
    case = get("depth-sweep").cases("tiny")[0]
    program = tw.depth_sweep(case, "as-written", CPU)
    program.log = io.StringIO()
    program.run_unit()
    assert program.log.getvalue().startswith("Epoch  0: Train Loss")  # the seed's per-epoch progress line
    mnist = tw.mnist_cnn(get("mnist-cnn").cases("tiny")[0], "as-written", CPU)
    mnist.log = io.StringIO()
    mnist.run_unit()
    lines = mnist.log.getvalue().splitlines()
    assert lines[0].startswith("Train Epoch: 1 [0/256 (0%)]") and len(lines) == 1  # 4 batches, every 10th
    assert mnist.scheduler.get_last_lr()[0] == pytest.approx(0.7)  # StepLR(gamma=0.7) stepped once


def test_synthetic_data_is_deterministic():
    a, b = tw.disc_data(100), tw.disc_data(100)
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    _x, y = tw.disc_data(1000)
    inside = (y == 1).float().mean().item()
    assert inside == pytest.approx(math.pi * (1 / (2 * math.pi)) / 4, abs=0.05)  # quarter disc area


def test_workload_hash_identity():
    std = {c.point["depth"]: c for c in get("depth-sweep").cases("standard")}
    quick = {c.point["depth"]: c for c in get("depth-sweep").cases("quick")}
    assert std[8].workload_hash("tuned") == quick[8].workload_hash("tuned")  # same config, comparable
    assert std[8].workload_hash("tuned") != std[8].workload_hash("as-written")
    assert std[8].workload_hash("tuned") != std[9].workload_hash("tuned")
    cifar = {p: get("cifar-lenet").cases(p)[0].workload_hash("tuned") for p in PROFILES}
    assert cifar["tiny"] != cifar["standard"]  # different data sizes are different workloads


def test_quick_is_a_subset_of_standard_with_the_same_hashes():
    """Every point quick measures is a standard point, unit and hash alike (fewer points, never smaller units), and
    a point quick leaves out is left out with its reason, on the devices it names."""
    from runner.workloads.suite import WORKLOADS

    for workload in WORKLOADS:
        standard = {
            case.workload_hash(v): (case.unit, case.samples_per_unit, case.flops_per_unit)
            for case in workload.cases("standard")
            for v in workload.variants
        }
        for case in workload.cases("quick"):
            for variant in workload.variants:
                digest = case.workload_hash(variant)
                assert digest in standard, (workload.id, case.point, variant)
                assert standard[digest] == (case.unit, case.samples_per_unit, case.flops_per_unit)
    depth = get("depth-sweep")
    assert len(depth.cases("quick")) < len(depth.cases("standard"))
    lenet, mnist = get("cifar-lenet"), get("mnist-cnn")
    assert lenet.left_out_on("quick", "cpu") is not None and lenet.left_out_on("quick", "cuda") is None
    assert lenet.left_out_on("standard", "cpu") is None
    assert all(mnist.left_out_on("quick", d) is not None for d in ("cpu", "cuda", "rocm", "mps"))
    assert get("transformer-ddp").left_out_on("standard", "cpu") is not None
    assert get("transformer-ddp").left_out_on("tiny", "cpu") is None  # the tests' gloo points
    transformer = get("transformer")  # quick leaves out only the loop that compiles in each process, where it does
    assert transformer.left_out_on("quick", "cuda", "tuned") is not None
    assert transformer.left_out_on("quick", "cuda", "as-written") is None
    assert transformer.left_out_on("quick", "cpu", "tuned") is None
    assert transformer.left_out_on("quick", "cuda") is None  # not every loop: the workload is measured there
    assert transformer.left_out_on("standard", "cuda", "tuned") is None
    # the quick points of before (LeNet at 2,000 images) are still known, and not "a loop fixed since"
    from runner.workloads import known

    assert known.table(3)["dd8e406ac617c01f"].samples_per_unit == 2000
    assert "dd8e406ac617c01f" not in known.superseded(3)


def test_select_by_pattern_and_errors_list_valid_ids():
    assert [w.id for w in select(["*-sweep", "tabular-*"])] == ["tabular-mlp", "depth-sweep"]
    with pytest.raises(ValueError, match="valid workloads: tabular-mlp, depth-sweep"):
        select(["resnet*"])


@pytest.mark.parametrize("model", sorted(MODELS))
def test_transformer_parameter_count_is_the_built_models(model):
    """The suite's analytic count (what the gate holds a file to) equals the Hugging Face model's own."""
    pytest.importorskip("transformers")
    built = tw.build_transformer(MODELS[model])
    assert sum(p.numel() for p in built.parameters() if p.requires_grad) == transformer_params(MODELS[model])


def test_every_hash_of_the_suite_is_known_with_its_figures():
    from runner import SUITE_VERSION
    from runner.workloads import known
    from runner.workloads.suite import WORKLOADS

    table = known.table(SUITE_VERSION)
    for workload in WORKLOADS:  # the suite's own (the tests' plugin workloads are not published)
        for profile in PROFILES:
            for case in workload.cases(profile):
                for variant in workload.variants:
                    entry = table[case.workload_hash(variant)]
                    assert (entry.workload, entry.point, entry.variant) == (case.workload, case.point, variant)
                    assert entry.params == case.params is not None and entry.flops_per_unit == case.flops_per_unit
    assert known.table(1) and known.table(99) is None


def _compile_points(fresh: bool, points: int) -> list[int]:
    """Compile `points` tiny Hugging Face models one after another in this process, as a tuned sweep's points are
    (Dynamo's eager backend: the cache behaviour without Inductor's cost); returns the graphs each compiled."""
    import torch

    from runner.frameworks.torch.workloads import build_transformer, compile_fresh, transformer_batch
    from runner.workloads.suite import MODELS

    graphs = []
    for i in range(points):
        torch._dynamo.utils.counters.clear()
        name = ("bert-tiny", "vit-tiny", "convnext-mini")[i % 3]
        model = build_transformer(MODELS[name])
        if fresh:
            compile_fresh(model)
        step = torch.compile(model, backend="eager")
        batch = transformer_batch(MODELS[name], 2 + i)  # a new batch size each point, as a sweep's
        step(**batch)
        step(**batch)  # the second step: HF's loss has set config.problem_type by now
        graphs.append(torch._dynamo.utils.counters["stats"]["unique_graphs"])
    return graphs


def test_each_compiled_point_starts_from_an_empty_dynamo_cache():
    """Every HF model's forward goes through one shared decorator: without a reset, a sweep's points fill one code
    object's cache, and past the recompile limit Dynamo would silently run the rest eagerly (here it must raise:
    compile_fresh makes a limit hit an error). With compile_fresh before each point, every point compiles one graph,
    not two: HF's loss sets config.problem_type on the first step, which compile_fresh sets beforehand."""
    import torch

    pytest.importorskip("transformers")
    limit = torch._dynamo.config.recompile_limit
    try:
        torch._dynamo.config.recompile_limit = 3
        assert _compile_points(fresh=True, points=6) == [1] * 6
        with pytest.raises(Exception, match=r"(?i)recompile.?limit|cache.?size"):
            torch._dynamo.reset()
            _compile_points(fresh=False, points=6)  # the flag compile_fresh set is still on
    finally:
        torch._dynamo.config.recompile_limit = limit
        torch._dynamo.config.fail_on_recompile_limit_hit = False
        torch._dynamo.reset()


def test_a_quick_plan_on_a_gpu_machine_leaves_out_the_compiled_transformer_loop_there_and_says_so(
    tmp_path, monkeypatch
):
    """The plan of a quick run where PyTorch sees a GPU: the tuned transformer loop is measured on the CPU and left
    out on CUDA, the as-written loop measured on both, and the run's notes name what is left out and why."""
    from runner import api
    from runner.api import plan as plan_module
    from runner.api.options import RunOptions
    from runner.api.plan import describe_frameworks

    def with_cuda(names, timeout_s=300.0):
        infos, accelerators = describe_frameworks(names, timeout_s)
        cuda = [i.model_copy(update={"devices": [*i.devices, "cuda"]}) if i.name == "torch" else i for i in infos]
        return cuda, accelerators

    monkeypatch.setattr(plan_module, "describe_frameworks", with_cuda)
    plan = api.plan_run(RunOptions(workloads=["transformer"], frameworks=["torch"], output=tmp_path / "r.yaml"))
    measured = {(g.variant, g.device) for g in plan.groups if g.skip_reason is None}
    assert measured == {("as-written", "cpu"), ("as-written", "cuda"), ("tuned", "cpu")}
    said = "The quick profile leaves out transformer's tuned loop on CUDA: it compiles BERT-base"
    assert any(note.startswith(said) for note in plan.notes), plan.notes
