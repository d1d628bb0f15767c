"""Data-parallel training (transformer-ddp): real torch.distributed processes over gloo on the CPU, started the
way torchrun starts them, measured through `benchsite run`; a rank that dies is an error, not a hang."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from runner import api
from runner.api.plan import _groups
from runner.workloads import get

pytest.importorskip("torch")
pytest.importorskip("transformers")

ROOT = Path(__file__).resolve().parents[1]
# Captured on a 2 x H200 machine (nvidia-smi prints the heading underlined).
TOPO = (
    "\t\x1b[4mGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\n"
    "GPU0\t X \tNV18\t0-31\t0\t\tN/A\n"
    "GPU1\tNV18\t X \t0-31\t0\t\tN/A\n\nLegend:\n\n  X    = Self\n"
)


def _ranks_running() -> list[str]:
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if "runner.frameworks.torch.distributed" in line]


def test_two_gloo_ranks_measured_through_benchsite_run(tmp_path):
    cmd = [sys.executable, "-m", "runner", "run", "-w", "transformer-ddp", "--profile", "tiny", "-d", "cpu"]
    cmd += ["-f", "torch", "--no-equivalence", "--time-budget", "0.5", "-o", str(tmp_path)]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (path,) = tmp_path.glob("*/*.yaml")
    result = yaml.safe_load(path.read_text())
    measurements = {(m["variant"], m["point"]["world_size"]): m for m in result["measurements"]}
    assert set(measurements) == {(v, w) for v in ("as-written", "tuned") for w in (1, 2)}
    for (_variant, world), m in measurements.items():
        assert m["status"] == "ok", m.get("error")
        assert m["samples_per_unit"] == 2 * world  # every rank trains its own batch of 2
        assert m["samples_per_s"] == pytest.approx(m["samples_per_unit"] / m["median_s"], rel=1e-9)
        assert f"world size {world}: " in m["notes"][0] and "over gloo" in m["notes"][0]
        # how the tuned step ran, a field of its own (a CPU replica runs it eager); no interconnect between processes
        assert m.get("runs_as") == ("eager" if _variant == "tuned" else None) and "interconnect" not in m
        collective = m["collective"]  # how the gradients were all-reduced, and NVLink multicast off in every rank
        assert collective["backend"] == "gloo" and collective["buckets"] >= 1 and "comm_hook" not in collective
        assert collective["env"]["NCCL_NVLS_ENABLE"] == "0" and collective["env"]["NVSHMEM_DISABLE_NVLS"] == "1"
        assert collective["env"]["TORCH_SYMM_MEM_DISABLE_MULTICAST"] == "1"
    check = subprocess.run([sys.executable, "-m", "runner", "validate", str(path)], cwd=ROOT, capture_output=True)
    assert check.returncode == 0, check.stdout.decode()[-2000:]
    assert not _ranks_running()  # every rank it started has ended


def test_a_rank_that_dies_is_reported():
    from runner.frameworks.torch import make_device
    from runner.frameworks.torch.distributed import transformer_ddp

    case = next(c for c in get("transformer-ddp").cases("tiny") if c.config["world_size"] == 2)
    program = transformer_ddp(case, "as-written", make_device("cpu"))
    try:
        for _ in range(3):
            program.run_unit()
        proc, _log = program.peers[0]
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        with pytest.raises(RuntimeError, match="rank 1 exited with code -9"):
            program.run_unit()
    finally:
        started = time.monotonic()
        program.close()
        assert time.monotonic() - started < 30
    assert not _ranks_running()


def test_points_beyond_the_machines_devices_are_skipped_with_the_reason():
    workload = get("transformer-ddp")
    cases = workload.cases("standard")
    groups = _groups(workload, "torch", "cuda", "tuned", cases, None, devices=2)
    run, skipped = groups
    assert [c.config["world_size"] for c in run.cases] == [1, 2] and run.skip_reason is None
    assert [c.config["world_size"] for c in skipped.cases] == [4, 8]
    assert skipped.skip_reason == "needs more cuda devices than there are: this machine has 2"
    assert skipped.indices == [2, 3]  # each case keeps its position in the profile's list


def test_one_gpu_machine_skips_the_whole_data_parallel_sweep():
    """One process on one GPU shows no scaling: every point is recorded as skipped, the first with the others."""
    workload = get("transformer-ddp")
    cases = workload.cases("standard")
    (group,) = _groups(workload, "torch", "cuda", "tuned", cases, None, devices=1)
    assert group.indices == [0, 1, 2, 3] and len(group.cases) == 4
    assert (
        group.skip_reason
        == "one cuda device: data-parallel scaling needs 2 or more; the transformer workload times one device"
    )
    # The CPU keeps its points (two gloo processes can split one CPU), and a framework's own reason wins.
    run, over = _groups(workload, "torch", "cpu", "tuned", cases, None, devices=2)
    assert run.skip_reason is None and run.indices == [0, 1] and over.indices == [2, 3]
    other = _groups(workload, "jax", "cuda", "tuned", cases, "PyTorch only", devices=1)
    assert other[0].skip_reason == "PyTorch only"


def test_collective_kernels_name_nccls_algorithm_and_protocol():
    """What NCCL chose, read off its kernels' names in the profiled step (both naming schemes NCCL has used)."""
    from runner.frameworks.torch.distributed import collective_kernels

    events = [
        ("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 15),
        ("ncclDevKernel_AllReduce_Sum_bf16_NVLS_SIMPLE(ncclDevKernelArgsStorage<4096ul>)", 2),
        ("ncclKernel_AllReduce_TREE_LL128_Sum_float(ncclWorkElem)", 3),
        ("nccl:all_reduce", 15),  # the host-side record, not a kernel
        ("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", 1),  # point to point: no algorithm
        ("aten::mm", 148),
    ]
    assert collective_kernels(events) == [
        {"name": "AllReduce_Sum_bf16", "algorithm": "nvls", "protocol": "simple", "calls": 2},
        {"name": "AllReduce_Sum_f32", "algorithm": "ring", "protocol": "ll", "calls": 15},
        {"name": "AllReduce_Sum_float", "algorithm": "tree", "protocol": "ll128", "calls": 3},
    ]


def test_multicast_stays_off_in_every_rank_unless_the_user_chose(monkeypatch):
    from runner.frameworks.torch import distributed

    for name in distributed.MULTICAST_OFF:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NCCL_NVLS_ENABLE", "1")  # the user's own choice is kept, and recorded
    monkeypatch.setenv("NCCL_SOCKET_IFNAME", "eth0")  # an interface name never reaches the file
    distributed.multicast_off()
    env = distributed.collective_env()
    assert env == {"NCCL_NVLS_ENABLE": "1", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}


def test_interconnect_from_nvidia_smi():
    from runner.frameworks.torch.distributed import parse_topology

    assert parse_topology(TOPO, 2) == "GPU0-GPU1 NV18"
    assert parse_topology(TOPO, 1) is None
    assert parse_topology("no GPUs here", 2) is None


def test_a_ranks_case_travels_whole():
    """The other ranks rebuild the case from JSON: it must come back equal, hash and all."""
    import dataclasses

    from runner.workloads.base import Case

    case = get("transformer-ddp").cases("standard")[1]
    back = Case(**json.loads(json.dumps(dataclasses.asdict(case))))
    assert back.workload_hash("tuned") == case.workload_hash("tuned") and back.samples_per_unit == 128


def test_a_loops_ddp_settings_reach_distributed_data_parallel():
    """A loop may set DDP's own options (gradient_as_bucket_view, bucket_cap_mb, ...): they reach the wrapper; the
    bf16 compression hook and the whole-step CUDA graph are for GPUs, so a CPU (gloo) replica runs without them."""
    import dataclasses

    from runner.frameworks.torch import make_device
    from runner.frameworks.torch.distributed import transformer_ddp

    case = next(c for c in get("transformer-ddp").cases("tiny") if c.config["world_size"] == 2)
    assert case.loop("tuned")["graph"] == "whole-step-on-gpu"
    loops = dict(case.config["loops"])
    extra = {"gradient_as_bucket_view": True, "bucket_cap_mb": 1, "comm_hook": "bf16-compress"}
    loops["tuned"] = {**loops["tuned"], **extra}
    case = dataclasses.replace(case, config={**case.config, "loops": loops})
    program = transformer_ddp(case, "tuned", make_device("cpu"))
    try:
        for _ in range(2):
            program.run_unit()
        replica = program.replica
        assert replica.ddp.gradient_as_bucket_view and replica.ddp.bucket_bytes_cap == 1024 * 1024
        assert replica.comm_hook is None and not replica.compiled and not replica.graphed
        assert replica.forward is replica.ddp
        assert program.notes[1].endswith("; eager") and getattr(program, "warmup_units", 1) == 1
        assert program.runs_as == "eager"  # the measurement's `runs_as` field
    finally:
        program.close()
    assert not _ranks_running()


def test_the_runs_peaks_reach_the_measuring_process_and_bound_the_sweep(tmp_path):
    """The matrix-product peaks the run measured travel with the job: a CPU whose fp32 peak puts even one
    process's step past the budget skips the fp32 sweep in its measuring process, before any rank starts."""
    from runner.results.schema import DevicePeak

    plan = api.plan_run(
        api.RunOptions(profile="tiny", workloads=["transformer-ddp"], frameworks=["torch"], devices=["cpu"])
    )
    (group,) = [g for g in plan.groups if g.variant == "as-written" and g.skip_reason is None]
    slow = DevicePeak(framework="torch", device="cpu", device_name="CPU", dtype="fp32", n=64, median_s=1.0, tflops=1e-9)
    started = time.monotonic()
    measured = api.measure_group(plan, group, api.Progress(), peaks=[slow])
    assert [m.status for m in measured] == ["skipped", "skipped"]
    assert all("measured peak of 1e-09 TFLOP/s" in (m.skip_reason or "") for m in measured)
    assert time.monotonic() - started < 60 and not _ranks_running()
