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

NVLink multicast (NCCL's NVLS algorithm, PyTorch's symmetric memory, NVSHMEM's) is off in every rank unless the user
set those switches: on shared hosts a program that uses it can put the GPUs out of service. The measurement
records how its gradients were all-reduced (`collective`): NCCL's version and the settings in the ranks'
environment, the algorithm and protocol of each collective kernel in the profiled step, and DDP's buckets.
"""

from __future__ import annotations

import contextlib
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
from runner.frameworks.torch.workloads import (
    Program,
    build_transformer,
    capture_graph,
    compile_fresh,
    transformer_batch,
)
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


# Off unless the user set them: every rank inherits rank 0's environment.
MULTICAST_OFF = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}
# The settings a measurement records (schema.Collective.env): tuning switches only, never a path, an address or an
# interface name (NCCL_SOCKET_IFNAME, NCCL_TOPO_FILE, NCCL_DEBUG_FILE, ... stay out of the file).
COLLECTIVE_ENV = (
    *MULTICAST_OFF,
    "NCCL_ALGO",
    "NCCL_PROTO",
    "NCCL_MIN_NCHANNELS",
    "NCCL_MAX_NCHANNELS",
    "NCCL_MIN_CTAS",
    "NCCL_MAX_CTAS",
    "NCCL_NTHREADS",
    "NCCL_BUFFSIZE",
    "NCCL_P2P_LEVEL",
    "NCCL_P2P_DISABLE",
    "NCCL_SHM_DISABLE",
    "NCCL_IB_DISABLE",
    "NCCL_NET_GDR_LEVEL",
    "NCCL_CUMEM_ENABLE",
    "NCCL_COLLNET_ENABLE",
    "NCCL_LAUNCH_MODE",
    "NCCL_GRAPH_REGISTER",
    "TORCH_NCCL_AVOID_RECORD_STREAMS",
    "TORCH_NCCL_HIGH_PRIORITY",
    "TORCH_NCCL_ASYNC_ERROR_HANDLING",
)
# A collective kernel as NCCL names it: ncclDevKernel_AllReduce_Sum_f32_RING_LL(...) since NCCL 2.19, the algorithm
# and protocol last; ncclKernel_AllReduce_RING_LL_Sum_float(...) before, the two after the collective.
_ALGORITHM = r"(?P<algorithm>RING|TREE|COLLNET_DIRECT|COLLNET_CHAIN|NVLS_TREE|NVLS|PAT)"
_PROTOCOL = r"(?P<protocol>LL128|LL|SIMPLE)"
_NCCL_KERNELS = (
    re.compile(rf"^ncclDevKernel_(?P<name>[A-Za-z0-9]+(?:_[A-Za-z0-9]+)*?)_{_ALGORITHM}_{_PROTOCOL}\b"),
    re.compile(rf"^nccl(?:Dev)?Kernel_(?P<op>[A-Za-z]+)_{_ALGORITHM}_{_PROTOCOL}_(?P<rest>[A-Za-z0-9_]+)"),
)


def multicast_off() -> None:
    """Turns NVLink multicast off in this process (and in the ranks it starts) where the user has not chosen."""
    for name, value in MULTICAST_OFF.items():
        os.environ.setdefault(name, value)


def collective_env() -> dict[str, str]:
    return {name: os.environ[name][:200] for name in COLLECTIVE_ENV if name in os.environ}


def collective_kernels(names_and_calls: list[tuple[str, int]]) -> list[dict[str, Any]]:
    """The collective kernels among a profile's events (name, launches), with NCCL's algorithm and protocol."""
    found: dict[tuple[str, str, str], int] = {}
    for name, calls in names_and_calls:
        match = _NCCL_KERNELS[0].match(name) or _NCCL_KERNELS[1].match(name)
        if match:
            what = match["name"] if "name" in match.groupdict() else f"{match['op']}_{match['rest']}"
            key = (what, match["algorithm"].lower(), match["protocol"].lower())
            found[key] = found.get(key, 0) + calls
    return [
        {"name": name, "algorithm": algorithm, "protocol": protocol, "calls": calls}
        for (name, algorithm, protocol), calls in sorted(found.items())
    ]


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


# Eager DDP iterations before a whole-step graph is captured (PyTorch's CUDA semantics notes: at least 11, so that
# DDP has rebuilt its buckets and its first-iteration work is behind it).
GRAPH_WARMUP_STEPS = 11


class Replica:
    """One rank: its process group, its DDP-wrapped model, optimiser and batch."""

    def __init__(self, case: Case, variant: str, kind: str, rank: int, world: int, store: dist.Store) -> None:
        cfg = case.config
        self.device = _device_for(kind, rank)
        self.tuned = variant == "tuned"
        on_gpu = kind in ("cuda", "rocm")
        loop = case.loop(variant)
        # The tuned loop on GPUs replays its whole step (forward, backward with DDP's all-reduces, AdamW) from one
        # CUDA graph captured once. Eager or compiled, the bf16 step is bound by the host launching its kernels (on a
        # 2 x H200 host the compiled step took 27 to 48 ms for 15 ms of kernels, and its 2-GPU efficiency came
        # out 88%, 75% and 76% in three runs as that host's speed drifted); replayed, it is bound by the GPUs.
        self.graphed = self.tuned and on_gpu and loop.get("graph") == "whole-step-on-gpu"
        if on_gpu:
            torch.cuda.set_device(self.device)
        else:
            torch.set_num_threads(max(1, (os.cpu_count() or 1) // world))
        if self.graphed:  # NCCL's watchdog must not query events while a graph is being captured (PyTorch's notes)
            os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "0")
        self.backend = "nccl" if on_gpu else "gloo"
        dist.init_process_group(
            self.backend, store=dist.PrefixStore("pg", store), rank=rank, world_size=world, timeout=STORE_TIMEOUT
        )
        torch.manual_seed(0)
        self.model = build_transformer(cfg["model"]).to(self.device)
        self.model.train()
        options = {k: loop[k] for k in DDP_OPTIONS if k in loop}
        # A graphed step's DDP is built on a side stream, as PyTorch's notes on capturing DDP require.
        self.side = torch.cuda.Stream(self.device) if self.graphed else None
        with torch.cuda.stream(self.side) if self.side is not None else contextlib.nullcontext():
            self.ddp = DistributedDataParallel(
                self.model, device_ids=[self.device.index] if on_gpu else None, **options
            )
        self.comm_hook = loop.get("comm_hook") if on_gpu else None  # the compression hooks: for NCCL on GPUs
        if self.comm_hook is not None:
            self.ddp.register_comm_hook(None, COMM_HOOKS[self.comm_hook])
        # Compiled (an earlier tuned loop; tests/benchmarks/ddp_scaling.py still times it): Dynamo splits the graph
        # at DDP's bucket boundaries, so each bucket's all-reduce starts during the backward pass.
        self.compiled = self.tuned and on_gpu and loop.get("compile") == "inductor-on-gpu"
        if self.compiled:
            compile_fresh(self.model)  # rank 0 measures the sweep's points in one process
        self.forward: Any = torch.compile(self.ddp) if self.compiled else self.ddp
        self.autocast = bf16_autocast(variant, kind)
        extra: dict[str, Any] = {"fused": True} if self.tuned else {}  # fused AdamW: CUDA, ROCm and the CPU
        if self.graphed:
            extra["capturable"] = True  # its step counter stays on the GPU, inside the graph
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=cfg["lr"], **extra)
        self.host_batch = transformer_batch(cfg["model"], cfg["batch"])
        self.resident = {k: v.to(self.device) for k, v in self.host_batch.items()} if self.tuned else None
        self.graph: torch.cuda.CUDAGraph | None = None

    def step(self) -> None:
        if not self.graphed:
            self._step()
            self.optimizer.zero_grad()  # PyTorch's default: gradients freed (set to None), not zeroed
            return
        if self.graph is None:
            self._capture()
        assert self.graph is not None
        self.graph.replay()

    def _step(self) -> None:
        batch = self.resident or {k: v.to(self.device) for k, v in self.host_batch.items()}
        if self.autocast:  # inside a graph autocast must not cache its casts (they would outlive the capture)
            with torch.autocast(self.device.type, dtype=torch.bfloat16, cache_enabled=not self.graphed):
                loss = self.forward(**batch).loss
        else:  # the plain step has no autocast context at all
            loss = self.forward(**batch).loss
        loss.backward()
        self.optimizer.step()

    def _capture(self) -> None:
        """Eager DDP steps on the side stream, then the whole step captured. Every rank does this in its first step,
        so their collectives stay in the same order. Gradients are freed before the capture: the graph allocates
        them from its own pool and every replay writes them afresh (nothing to zero between replays)."""
        assert self.side is not None
        # DDP was built on the side stream and the capture runs on its own: autograd warns that the gradients'
        # accumulation nodes were made on another stream than the one that now feeds them, which is the recipe.
        quiet = getattr(torch.autograd.graph, "set_warn_on_accumulate_grad_stream_mismatch", None)
        if quiet is not None:
            quiet(False)
        self.graph = capture_graph(
            self._step, self.device, side=self.side, warmups=GRAPH_WARMUP_STEPS, between=self.optimizer.zero_grad
        )

    def close(self) -> None:
        self.graph = None
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
        self.kernels: list[dict[str, Any]] = []
        multicast_off()
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
        # the measurement's `runs_as` field: how a tuned step ran (the note says it too, for people and older readers)
        self.runs_as: str | None = None
        if variant == "tuned":
            what = "bf16 autocast, fp32 weights" if self.replica.autocast else "fp32"
            if self.replica.graphed:
                self.runs_as = "cuda-graph"
                how = (
                    "the whole step (DDP's all-reduces included) replayed from one CUDA graph, captured after "
                    f"{GRAPH_WARMUP_STEPS} eager steps"
                )
            elif self.replica.compiled:
                self.runs_as = "compiled"
                how = "torch.compile (Inductor, split at DDP's buckets; no CUDA graphs around its all-reduce)"
            else:
                self.runs_as = "eager"
                how = "eager"
            notes.append(f"{what}, batch resident, fused AdamW; {how}")
        if self.replica.compiled:
            self.warmup_units = 3  # compiled in the first step; DDP rebuilds its buckets after it: all before the clock
        elif self.replica.graphed:
            self.warmup_units = 2  # the eager steps and the capture in the first, the first replay: before the clock
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

    def profiled(self, events: list[tuple[str, int]]) -> None:
        self.kernels = collective_kernels(events)

    def collective(self) -> dict[str, Any]:
        """The measurement's `collective` field: how this group all-reduced its gradients."""
        replica = self.replica
        version = None
        if replica.backend == "nccl":
            nccl = torch.cuda.nccl.version()
            version = ".".join(str(v) for v in nccl) if isinstance(nccl, tuple) else str(nccl)
        try:
            logged = replica.ddp._get_ddp_logging_data()  # DDP's own record of its buckets
        except Exception:  # a private API: its absence costs the bucket count, never the measurement
            logged = {}
        sizes = str(logged.get("rebuilt_bucket_sizes") or logged.get("bucket_sizes") or "")
        cap = logged.get("bucket_cap_bytes")
        return {
            "backend": replica.backend,
            "version": version,
            "env": collective_env(),
            "kernels": self.kernels,
            "bucket_cap_mb": cap / 2**20 if isinstance(cap, int) else None,
            "buckets": len([s for s in sizes.split(",") if s.strip()]) or None,
            "gradient_as_bucket_view": bool(replica.ddp.gradient_as_bucket_view),
            "static_graph": bool(replica.ddp.static_graph),
            "comm_hook": replica.comm_hook,
        }

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
    """The precision a point will run in, known before anything is built (runner.measure.worker.SweepCeiling's
    bound)."""
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
