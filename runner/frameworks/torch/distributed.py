"""Seed 003 at scale: the transformer fine-tuning step, data-parallel over several devices with torch.distributed.

One process per device, started the way `torchrun` starts them: each gets RANK, LOCAL_RANK, WORLD_SIZE,
LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT in its environment and joins one process group (NCCL on GPUs,
gloo on the CPU). Each wraps the same model (same seed; DDP also broadcasts rank 0's weights) in
DistributedDataParallel and trains on its own batch of `batch_size`: a step is `world_size * batch_size`
examples, and every step ends with the gradients all-reduced across the group.

Rank 0 is the measuring process itself: the timing engine times its steps exactly as it times one device's,
with rank 0's device synchronised (or its CUDA events read), and rank 0's step cannot finish before every
rank's all-reduce has. The other ranks are this module run as `python -m runner.frameworks.torch.distributed`
with the case on stdin. They take a step when rank 0 announces one in the group's key-value store (a TCP round
trip on the host, no device synchronisation), so however many steps the engine, its warm-up or the profiler
ask of rank 0, every rank takes as many, and a key that says stop ends them. A rank that dies is reported by
rank 0 at its next step with the end of that rank's output; a rank whose parent dies is killed with it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from typing import IO, Any

import torch
import torch.distributed as dist
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel

from runner.frameworks.torch import TorchDevice
from runner.frameworks.torch.workloads import Program, build_transformer, compile_fresh, transformer_batch
from runner.workloads.base import Case
from runner.workloads.suite import CPU_WORLD_MAX

STORE_TIMEOUT = timedelta(seconds=300)
START_TIMEOUT_S = 180.0  # every rank has imported PyTorch and joined the store
STOP_TIMEOUT_S = 60.0
PEER_LOG_TAIL = 2000
# DistributedDataParallel's own keyword arguments a loop may set (config["loops"][variant]), passed as they are.
DDP_OPTIONS = ("gradient_as_bucket_view", "bucket_cap_mb", "static_graph", "broadcast_buffers")
# A loop's `comm_hook`, on GPUs: how each gradient bucket is all-reduced (PyTorch's own hooks).
COMM_HOOKS = {
    "bf16-compress": default_hooks.bf16_compress_hook,  # bucket cast to bf16, all-reduced, cast back and averaged
    "fp16-compress": default_hooks.fp16_compress_hook,
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _device_for(kind: str, rank: int) -> torch.device:
    return torch.device("cuda", rank) if kind in ("cuda", "rocm") else torch.device("cpu")


def topology(world: int) -> str | None:
    """How GPU 0 reaches each other GPU of the group, as `nvidia-smi topo -m` names it (NV18: 18 NVLink links;
    PIX, PXB, PHB, NODE, SYS: PCIe paths through a switch, a host bridge, a NUMA node or between sockets)."""
    exe = shutil.which("nvidia-smi")
    if exe is None or world < 2:
        return None
    try:
        out = subprocess.run([exe, "topo", "-m"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return parse_topology(out, world)


def parse_topology(text: str, world: int) -> str | None:
    """GPU 0's link to each other GPU of the group from `nvidia-smi topo -m`'s matrix: the heading line
    (indented) names the columns, GPU0's line lists its links in that order after its own name."""
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in text.splitlines()]
    heading = next((line.split() for line in lines if line[:1].isspace() and line.split()[:1] == ["GPU0"]), None)
    row = next((line.split() for line in lines if line.startswith("GPU0")), None)
    if heading is None or row is None:
        return None
    links = dict(zip(heading, row[1:], strict=False))
    found = [f"GPU0-GPU{i} {links[f'GPU{i}']}" for i in range(1, world) if f"GPU{i}" in links]
    return ", ".join(found) or None


class Replica:
    """One rank: its process group, its DDP-wrapped model, optimiser and batch."""

    def __init__(self, case: Case, variant: str, kind: str, rank: int, world: int, store: dist.Store) -> None:
        cfg = case.config
        self.device = _device_for(kind, rank)
        self.tuned = variant == "tuned"
        on_gpu = kind in ("cuda", "rocm")
        if on_gpu:
            torch.cuda.set_device(self.device)
        else:
            torch.set_num_threads(max(1, (os.cpu_count() or 1) // world))
        self.backend = "nccl" if on_gpu else "gloo"
        dist.init_process_group(
            self.backend, store=dist.PrefixStore("pg", store), rank=rank, world_size=world, timeout=STORE_TIMEOUT
        )
        torch.manual_seed(0)
        self.model = build_transformer(cfg["model"]).to(self.device)
        self.model.train()
        loop = case.loop(variant)
        options = {k: loop[k] for k in DDP_OPTIONS if k in loop}
        self.ddp = DistributedDataParallel(self.model, device_ids=[self.device.index] if on_gpu else None, **options)
        self.comm_hook = loop.get("comm_hook") if on_gpu else None  # the compression hooks: for NCCL on GPUs
        if self.comm_hook is not None:
            self.ddp.register_comm_hook(None, COMM_HOOKS[self.comm_hook])
        # Eager, the bf16 step is bound by the host launching its kernels (on a lent 2 x H200 host the step took as
        # long as its launches, 27 to 37 ms, and a second rank's DDP work made it 42 to 51 ms): the tuned loop on
        # GPUs compiles the DDP module. Dynamo splits the graph at DDP's bucket boundaries, so each bucket's
        # all-reduce still starts during the backward pass; no CUDA graphs, which cannot hold that all-reduce.
        self.compiled = self.tuned and on_gpu and loop.get("compile") == "inductor-on-gpu"
        if self.compiled:
            compile_fresh(self.model)  # rank 0 measures the sweep's points in one process
        self.forward: Any = torch.compile(self.ddp) if self.compiled else self.ddp
        self.autocast = bf16_autocast(variant, kind)
        extra: dict[str, Any] = {"fused": True} if self.tuned else {}  # fused AdamW: CUDA, ROCm and the CPU
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=cfg["lr"], **extra)
        self.host_batch = transformer_batch(cfg["model"], cfg["batch"])
        self.resident = {k: v.to(self.device) for k, v in self.host_batch.items()} if self.tuned else None

    def step(self) -> None:
        batch = self.resident or {k: v.to(self.device) for k, v in self.host_batch.items()}
        if self.autocast:
            with torch.autocast(self.device.type, dtype=torch.bfloat16):
                loss = self.forward(**batch).loss
        else:  # the plain step has no autocast context at all
            loss = self.forward(**batch).loss
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()  # PyTorch's default: gradients freed (set to None), not zeroed

    def close(self) -> None:
        if self.compiled:
            torch._dynamo.reset()  # its graphs go with the point
        if dist.is_initialized():
            dist.destroy_process_group()


class DataParallelTransformer(Program):
    """Rank 0 of a data-parallel group: starts the other ranks, and announces every step it takes."""

    def __init__(self, case: Case, variant: str, device: TorchDevice) -> None:
        self.world = int(case.config["world_size"])
        if device.kind in ("cuda", "rocm"):
            have = torch.cuda.device_count()
            if self.world > have:
                raise RuntimeError(f"world size {self.world} needs {self.world} GPUs; PyTorch sees {have}")
        elif device.kind == "cpu":
            if self.world > CPU_WORLD_MAX:
                raise RuntimeError(f"world size {self.world} on the CPU: at most {CPU_WORLD_MAX} gloo processes")
        else:
            raise RuntimeError(f"torch.distributed has no backend for {device.kind}")
        self.device = device
        self.steps = 0
        self.peers: list[tuple[subprocess.Popen[bytes], IO[bytes]]] = []
        port = _free_port()
        self.store = dist.TCPStore(
            "127.0.0.1", port, self.world, is_master=True, timeout=STORE_TIMEOUT, wait_for_workers=False
        )
        self.control = dist.PrefixStore("benchsite", self.store)
        job = json.dumps({"case": dataclasses.asdict(case), "variant": variant, "kind": device.kind}).encode()
        for rank in range(1, self.world):
            env = {
                **os.environ,
                "RANK": str(rank),
                "LOCAL_RANK": str(rank),
                "WORLD_SIZE": str(self.world),
                "LOCAL_WORLD_SIZE": str(self.world),
                "MASTER_ADDR": "127.0.0.1",
                "MASTER_PORT": str(port),
            }
            log = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close(), with the rank)
            argv = [sys.executable, "-m", "runner.frameworks.torch.distributed"]
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=log, stderr=log, env=env)
            assert proc.stdin is not None
            proc.stdin.write(job)
            proc.stdin.close()
            self.peers.append((proc, log))
        self._wait_ready()
        self.replica = Replica(case, variant, device.kind, 0, self.world, self.store)
        super().__init__(self.replica.model, device)
        self.precision = "bf16" if self.replica.autocast else "fp32"
        notes = [self._describe()]
        if variant == "tuned":
            what = "bf16 autocast, fp32 weights" if self.replica.autocast else "fp32"
            how = (
                "torch.compile (Inductor, split at DDP's buckets; no CUDA graphs around its all-reduce)"
                if self.replica.compiled
                else "eager"
            )
            notes.append(f"{what}, batch resident, fused AdamW; {how}")
        if self.replica.compiled:
            self.warmup_units = 3  # compiled in the first step; DDP rebuilds its buckets after it: all before the clock
        self.notes = tuple(notes)

    def _describe(self) -> str:
        backend = self.replica.backend
        version = ""
        if backend == "nccl":
            nccl = torch.cuda.nccl.version()
            version = " " + ".".join(str(v) for v in nccl) if isinstance(nccl, tuple) else f" {nccl}"
        where = "one per GPU" if backend == "nccl" else f"{torch.get_num_threads()} CPU threads each"
        processes = f"{self.world} processes" if self.world > 1 else "1 process"
        text = f"world size {self.world}: {processes} ({where}) over {backend}{version}, DDP"
        links = topology(self.world) if backend == "nccl" else None
        self.interconnect = links  # the measurement's `interconnect` field; the note keeps it for older readers
        return f"{text}; interconnect {links}" if links else text

    def _peer_failure(self) -> str | None:
        for rank, (proc, log) in enumerate(self.peers, start=1):
            if proc.poll() is not None:
                log.seek(0)
                tail = log.read().decode(errors="replace")[-PEER_LOG_TAIL:]
                return f"rank {rank} exited with code {proc.returncode}: {tail.strip() or 'no output'}"
        return None

    def _wait_ready(self) -> None:
        keys = [f"ready/{rank}" for rank in range(1, self.world)]
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self.control.check(keys):
            failure = self._peer_failure()
            if failure:
                self.close()
                raise RuntimeError(failure)
            if time.monotonic() > deadline:
                self.close()
                raise RuntimeError(f"the other ranks did not start within {START_TIMEOUT_S:.0f} s")
            time.sleep(0.05)

    def run_unit(self) -> None:
        failure = self._peer_failure()
        if failure:
            raise RuntimeError(failure)
        self.steps += 1
        self.control.set(f"step/{self.steps}", "go")
        self.replica.step()

    def close(self) -> None:
        if self.peers:
            self.control.set(f"step/{self.steps + 1}", "stop")
            deadline = time.monotonic() + STOP_TIMEOUT_S
            for proc, log in self.peers:
                try:
                    proc.wait(timeout=max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                log.close()
            self.peers = []
        replica = getattr(self, "replica", None)
        if replica is not None:
            replica.close()


def bf16_autocast(variant: str, kind: str) -> bool:
    """The tuned loop trains under bf16 autocast on GPUs that have bf16; every other step runs in fp32."""
    return variant == "tuned" and kind in ("cuda", "rocm") and torch.cuda.is_bf16_supported()


def transformer_ddp(case: Case, variant: str, device: TorchDevice) -> Program:
    return DataParallelTransformer(case, variant, device)


def transformer_ddp_precision(case: Case, variant: str, device: TorchDevice) -> str:
    """The precision a point will run in, known before anything is built (runner.worker.SweepCeiling's bound)."""
    return "bf16" if bf16_autocast(variant, device.kind) else "fp32"


def _die_with_parent() -> None:
    """Linux: a rank whose rank 0 is killed (a timeout, Ctrl-C) is killed too, instead of waiting on the store."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def peer_main() -> int:
    _die_with_parent()
    job = json.loads(sys.stdin.read())
    case = Case(**job["case"])
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    store = dist.TCPStore(
        os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), world, is_master=False, timeout=STORE_TIMEOUT
    )
    control = dist.PrefixStore("benchsite", store)
    control.set(f"ready/{rank}", "1")
    replica = Replica(case, job["variant"], job["kind"], rank, world, store)
    step = 0
    try:
        while True:
            key = f"step/{step + 1}"
            control.wait([key])
            if control.get(key) == b"stop":
                break
            replica.step()
            step += 1
        if replica.device.type == "cuda":
            torch.cuda.synchronize(replica.device)
    finally:
        replica.close()
    return 0


if __name__ == "__main__":
    sys.exit(peer_main())
