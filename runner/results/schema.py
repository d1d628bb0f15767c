"""The benchsite result file: the one place that defines its format.

A result file is the YAML written by one `benchsite run`. Every other module reads and writes it through
these models (and `runner.results.storage`, which does the I/O), so the format cannot drift between the runner,
`benchsite validate` and the site builder. The published JSON Schema (`benchsite schema`) and the docs'
reference page are generated from the field descriptions below.

Format history (bump SCHEMA_VERSION and add a line for every change that old readers cannot ignore):

- 1 (benchsite 0.1.0): first version. Machine fingerprint, software, sync self-tests, measurements with
  raw samples and their statistics.
- 2 (benchsite 0.1.0, with TensorFlow and JAX): `equivalence`, the proof that each framework's model computes
  what PyTorch's does, and measurement `notes`. Version 1 files stay valid (they have neither).
- 3 (benchsite 0.2.0, suite 2): measurement `timer` (how samples were bounded: device events or host syncs),
  the self-test's `engine_s`, and `device_peaks`, the matrix-product throughput measured on each device in the
  same run (the denominator of "% of peak"). Older files stay valid.
- 4 (benchsite 0.5.0): streaming measurements (spark-streaming): unit `latency` (each sample is one
  input file's end-to-end latency) and the step's raw record in `stream`; a data-parallel measurement's
  `interconnect` as a field of its own (before, only in its notes). Older files stay valid.
- 5 (benchsite 0.6.0): a measurement's `fidelity`, the seed script's twin: the transcription of the seed timed in
  a fresh interpreter, alternating with the harness's measurement of the same point, both raw lists kept and the
  ratio with its interval recomputed by the gate. Older files stay valid (they have none).
- 6 (benchsite 0.7.0): a data-parallel measurement's `collective`: how its gradients were all-reduced (the
  communication library and its version, its settings in the ranks' environment, the algorithm and protocol of the
  collective kernels the profiled step ran, DDP's buckets). Older files stay valid (they have none).
- 7 (benchsite 0.8.0): a twin's `interval` names how its ratio and interval follow from the two lists: `welch-log`
  (the ratio of geometric means, Welch's interval on the logarithms), where earlier files used a bootstrap of the
  ratio of medians, which overstates what two or three rounds show. Older files stay valid: a twin that names
  none is recomputed as `bootstrap-median`.
- 8 (benchsite 0.9.0): facts the site read out of a measurement's free-text notes are fields of their own: a tuned
  data-parallel step's `runs_as` (eager, compiled, or replayed from a CUDA graph) and a spark-* measurement's
  `spark_master` (the kind of Spark master, never its address). The notes still say the same for people. Older
  files stay valid: the site reads their notes as before.
- 9 (benchsite 0.9.0 after its release): a measurement's `rounds`: the point measured in several independent processes
  (on a machine with an accelerator, the CPU's and the accelerator's processes alternating), each process's own
  figure kept. The measurement's `median_s` and `ci95_s` are then the median of the rounds' medians and its interval
  across them (runner.results.intervals.summarize_rounds): the spread that matters is between processes, not within
  one. `samples_s` holds every round's samples end to end. A twin's `harness_s` are the rounds themselves. Older files
  stay valid and keep the intervals their samples allow.
- 10 (unreleased): a measurement's `ci95_s` over its rounds is Student's t on the logarithms of the rounds'
  medians, centred on their median (runner.results.intervals.process_interval); schema 9's was a t-interval clipped
  to the fastest round, which holds the median of three rounds only about 85% of the time. Schema 9 files stay valid
  and are recomputed by their own rule; the site gives every figure of rounds the new interval.
- 11 (unreleased): energy. A measurement's `energy`: per source (NVML's counter or sampled power, RAPL) the
  joules each round's steady state used and their figures (runner.results.energy); an accelerator's
  `power_limit_w`; the run's `energy` sources, readable or why not.
"""

from __future__ import annotations

import math
import re
import unicodedata
from datetime import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

SCHEMA_VERSION = 11
READABLE_VERSIONS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)

# Free text in a result file ends up on web pages. Bound it and keep it to printable characters; escaping
# at render time is still the site's job (the file is untrusted), this only keeps the file sane.
# Control characters and the bidirectional overrides that can make text display as something else
# ("trojan source") are refused.
_PRINTABLE = re.compile(r"^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u202a-\u202e\u2066-\u2069]*$")


def _printable(value: str) -> str:
    if not _PRINTABLE.match(value):
        raise ValueError("contains control characters")
    return value


# Scripts that may share a name with Latin letters: Latin beside Han, kana or Hangul cannot be mistaken for
# another name (Unicode's "highly restrictive" profile, UTS #39). Latin beside Cyrillic or Greek can: an
# "H100" whose H is Cyrillic En (U+041D) reads as an H100 and is another name.
_WITH_LATIN = frozenset({"CJK", "HIRAGANA", "KATAKANA", "HANGUL", "BOPOMOFO"})


def _script(char: str) -> str:
    return unicodedata.name(char, "UNKNOWN").split(" ", 1)[0]


def _plain_name(value: str) -> str:
    """A name people read (a CPU, GPU or device model, a version): printable, no invisible formatting
    characters (zero-width, bidi marks and overrides: category Cf), letters from one script, NFKC-normalised
    (a full-width or ligature form becomes its plain letters), so that two names that look alike are alike."""
    _printable(value)
    invisible = sorted({f"U+{ord(c):04X}" for c in value if unicodedata.category(c) == "Cf"})
    if invisible:
        raise ValueError(f"contains invisible formatting characters ({', '.join(invisible)})")
    value = unicodedata.normalize("NFKC", value)
    scripts = {_script(c) for c in value if c.isalpha()}
    if len(scripts) > 1 and not (scripts - {"LATIN"}) <= _WITH_LATIN:
        raise ValueError(
            f"mixes the {', '.join(sorted(scripts))} scripts: letters from different alphabets that look alike "
            "could make one device pass for another"
        )
    return value


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError("must be a finite number")
    return value


Text = Annotated[str, Field(max_length=200), AfterValidator(_printable)]
# A release number, MAJOR.MINOR.PATCH with an optional suffix; runner.gate.validate compares the first three.
VERSION_PATTERN = r"^(\d+)\.(\d+)\.(\d+)(?:[.+-][0-9A-Za-z.+-]*)?$"
Name = Annotated[str, Field(max_length=200), AfterValidator(_plain_name)]
LongText = Annotated[str, Field(max_length=4000), AfterValidator(_printable)]
Finite = Annotated[float, AfterValidator(_finite)]
PositiveSeconds = Annotated[float, Field(gt=0), AfterValidator(_finite)]
NonNegative = Annotated[float, Field(ge=0), AfterValidator(_finite)]
Hex16 = Annotated[str, Field(pattern=r"^[0-9a-f]{16}$")]
Identifier = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_.+-]{0,63}$")]

DeviceKind = Literal["cpu", "cuda", "rocm", "mps"]
Variant = Literal["as-written", "tuned"]
Status = Literal["ok", "failed", "skipped"]
Profile = Literal["tiny", "quick", "standard"]


class Strict(BaseModel):
    """Every model forbids unknown keys: a typo in a contributed file is an error, not silently dropped."""

    model_config = ConfigDict(extra="forbid", frozen=True)


# --- machine --------------------------------------------------------------------------------------------


class Cpu(Strict):
    model: Name = Field(description="Marketing name, e.g. 'AMD EPYC 9654 96-Core Processor'.")
    vendor: Name = Field(description="'GenuineIntel', 'AuthenticAMD', 'Apple', 'ARM', ... or 'unknown'.")
    arch: Text = Field(description="Machine architecture as the OS names it: x86_64, aarch64, arm64.")
    physical_cores: int | None = Field(None, ge=1, description="Physical cores over all sockets.")
    logical_cpus: int = Field(ge=1, description="Logical CPUs (hardware threads) the OS exposes.")
    sockets: int | None = Field(None, ge=1)
    max_mhz: float | None = Field(None, gt=0, description="Maximum clock in MHz, where the OS reports it.")
    isa: list[Identifier] = Field(
        default_factory=list,
        description="ISA extensions that matter for ML kernels: avx2, fma, avx512f, avx512_bf16, amx_bf16, "
        "neon, sve, ...",
    )


class Accelerator(Strict):
    vendor: Literal["nvidia", "amd", "apple", "intel", "other"]
    model: Name = Field(description="e.g. 'NVIDIA H100 80GB HBM3', 'AMD Radeon RX 6800M', 'Apple M2 Pro'.")
    count: int = Field(1, ge=1, description="Identical devices of this model in the machine.")
    memory_gib: NonNegative | None = Field(None, description="Memory per device (unified memory on Apple).")
    driver: Text | None = None
    cuda_version: Text | None = Field(None, description="CUDA version the NVIDIA driver supports.")
    rocm_version: Text | None = None
    compute_capability: Text | None = Field(None, description="NVIDIA compute capability, e.g. '9.0'.")
    gfx_target: Text | None = Field(None, description="AMD GPU architecture, e.g. 'gfx1031'.")
    cores: int | None = Field(None, ge=1, description="GPU cores, where reported (Apple).")
    source: Text = Field(description="Which probe found it: nvml, nvidia-smi, rocm-smi, torch, sysctl, ...")
    power_limit_w: NonNegative | None = Field(
        None, description="The enforced power limit of one device (watts), as NVML reports it. Schema 11."
    )


class OperatingSystem(Strict):
    system: Text = Field(description="Linux, Darwin, Windows.")
    release: Text = Field(description="Kernel release (Linux) or OS version.")
    distro: Text | None = Field(None, description="e.g. 'Debian GNU/Linux 12 (bookworm)', 'macOS 14.5'.")


class Machine(Strict):
    id: Hex16 = Field(
        description="Stable hash of the hardware alone (CPU, accelerators): the same machine gives the same "
        "id across runs, reboots and software upgrades. Results live under results/<id>/."
    )
    cpu: Cpu
    memory_gib: NonNegative = Field(description="Installed RAM as the OS reports it.")
    accelerators: list[Accelerator] = Field(default_factory=list)
    os: OperatingSystem
    system_type: Literal["laptop", "desktop", "server", "cloud", "unknown"] = Field(
        description="A guess from DMI chassis type, battery presence and cloud DMI vendors."
    )
    system_type_evidence: list[Text] = Field(default_factory=list, description="What the guess rests on.")


# --- software ---------------------------------------------------------------------------------------------


class FrameworkInfo(Strict):
    name: Identifier = Field(description="torch, tensorflow, jax, ...")
    version: Name | None = Field(None, description="Missing when the framework could not be imported.")
    available: bool
    reason: LongText | None = Field(None, description="Why it is unavailable, when it is.")
    build: dict[Identifier, Text | bool | int | None] = Field(
        default_factory=dict,
        description="Build facts: cuda, hip, cudnn, mps_built, blas, mkldnn, debug, ...",
    )
    threads: dict[Identifier, int] = Field(
        default_factory=dict, description="Thread settings as the framework reports them."
    )
    devices: list[Text] = Field(default_factory=list, description="Devices this framework can use.")


class Software(Strict):
    python: Text
    python_implementation: Text
    numpy: Text | None = None
    frameworks: list[FrameworkInfo] = Field(default_factory=list)
    env: dict[Annotated[str, Field(pattern=r"^[A-Z][A-Z0-9_]{0,63}$")], Text] = Field(
        default_factory=dict,
        description="Thread and device environment variables that change numbers (OMP_NUM_THREADS, "
        "MKL_NUM_THREADS, CUDA_VISIBLE_DEVICES, ...). An allow-list: nothing else is read.",
    )


# --- measurements --------------------------------------------------------------------------------------------


class SyncSelfTest(Strict):
    """Does the harness's synchronisation really wait for the device? Checked on every accelerator."""

    framework: Identifier
    device: DeviceKind
    passed: bool
    unsynced_s: NonNegative = Field(description="Time to enqueue the kernels without synchronising.")
    synced_s: NonNegative = Field(description="Time to enqueue and synchronise with the harness's sync.")
    reference_s: NonNegative | None = Field(
        None, description="Device-side time of the same kernels (CUDA/HIP events), where available."
    )
    engine_s: NonNegative | None = Field(
        None,
        description="The same burst timed per unit by the timing engine, as measurements are timed (device "
        "events where the device has them); it must cover the synchronised time. Schema 3 and later.",
    )
    detail: LongText = ""


class DevicePeak(Strict):
    """What one device really does: a square matrix product timed in the run, like a measurement."""

    framework: Identifier
    device: DeviceKind
    device_name: Name
    dtype: Literal["fp32", "tf32", "bf16", "fp16"] = Field(description="Operand type of the product.")
    n: int = Field(ge=1, description="Side of the square matrices.")
    median_s: PositiveSeconds = Field(description="Median seconds per product.")
    tflops: NonNegative = Field(description="2 n^3 / median_s / 1e12.")


class TopOp(Strict):
    name: Text
    self_s: NonNegative = Field(description="Self time on the measured device (device time on a GPU).")
    total_s: NonNegative
    calls: int = Field(ge=0)


class ErrorInfo(Strict):
    type: Text = Field(description="Exception class, 'Timeout', 'Crash' or 'OutOfMemory'.")
    message: LongText
    traceback: LongText | None = Field(None, description="The end of the traceback, paths anonymised.")


PointValue = Annotated[int | float | Text, Field(union_mode="left_to_right")]


class StreamRecord(Strict):
    """One streaming step (a spark-streaming point): the producer wrote `files` files of samples_per_unit rows,
    one every `interval_s` seconds; `samples_s` holds each file's end-to-end latency in production order. Every
    derived figure here is recomputed from the raw lists by the gate (runner.results.streaming)."""

    offered_rows_per_s: PositiveSeconds = Field(description="The rate the producer offered: the point's `rate`.")
    interval_s: PositiveSeconds = Field(description="Seconds between the starts of two files.")
    files: int = Field(ge=1, le=100_000, description="Files produced in the step (one latency each).")
    produced_s: list[NonNegative] = Field(
        max_length=100_000, description="When each file was begun, in seconds after the first (production order)."
    )
    uncommitted: int = Field(
        0, ge=0, description="Files not wholly committed when the wait ended (their latencies are lower bounds)."
    )
    micro_batches: int = Field(ge=0, description="Micro-batches the query committed in the step.")
    p95_s: PositiveSeconds = Field(description="95th percentile of the latencies (linear interpolation).")
    p99_s: PositiveSeconds = Field(description="99th percentile of the latencies.")
    growth: Finite = Field(description="Least-squares slope of latency against production time (s per s).")
    producer_lag_s: NonNegative = Field(description="How late the latest file was begun against the schedule.")
    bounded: bool = Field(
        description="Whether the step sustained its rate: growth <= 0.1, producer lag <= interval_s, nothing "
        "uncommitted."
    )


class Fidelity(Strict):
    """The seed script's twin (runner.fidelity): the seed's loop transcribed as a standalone script, run in a
    freshly started interpreter on the same host, alternating round by round with the harness's own measurement of
    this point (round 1's harness figure is this measurement). Both lists are the mean seconds per unit of a run.
    The gate recomputes `ratio`, `ci95` and `verdict` from them by `interval`; a measurement the site finds
    harness-affected is kept out of its verdicts. Schema 5 (`interval`: schema 7)."""

    script: Annotated[str, Field(pattern=r"^seed_[0-9]{3}\.py$")] = Field(
        description="The shipped transcription, in runner/fidelity/seeds/."
    )
    script_sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")] = Field(
        description="SHA-256 of the transcription that ran; the gate accepts only the one it ships."
    )
    args: list[Text] = Field(max_length=16, description="The script's arguments besides the units it timed.")
    rounds: int = Field(ge=1, le=50, description="Rounds: one script run and one harness run each.")
    units: list[Annotated[int, Field(ge=1)]] = Field(max_length=50, description="Units each script run timed.")
    script_s: list[PositiveSeconds] = Field(max_length=50, description="The script's seconds per unit, per round.")
    harness_s: list[PositiveSeconds] = Field(max_length=50, description="benchsite's seconds per unit, per round.")
    interval: Literal["bootstrap-median", "welch-log"] = Field(
        "bootstrap-median",
        description="How ratio and ci95 follow from the lists. welch-log (schema 7): the ratio of the lists' "
        "geometric means, and Welch's 95% interval on their logarithms (Student's t at Satterthwaite's degrees of "
        "freedom; two rounds at least). bootstrap-median (earlier files, which name none): the ratio of medians and "
        "a bootstrap over the rounds (2000 draws, seeded). The site judges every twin by welch-log.",
    )
    ratio: PositiveSeconds = Field(description="benchsite over the script, by `interval`.")
    ci95: tuple[PositiveSeconds, PositiveSeconds] = Field(description="95% interval of the ratio, by `interval`.")
    verdict: Literal["faithful", "harness-affected", "inconclusive"] = Field(
        description="faithful: the interval lies inside 0.95 .. 1.05; harness-affected: wholly outside it; "
        "inconclusive: too wide to tell."
    )


# The kind of Spark master a spark-* measurement ran on (runner.engines.spark.master.master_kind): a local master as
# given (its cores), any other by its kind alone, so that no host name or address reaches a file.
SparkMaster = Annotated[str, Field(pattern=r"^(local(\[(\*|[0-9]+)(,[0-9]+)?\])?|standalone|yarn|k8s|mesos|other)$")]

# The environment variables a data-parallel run records (runner.frameworks.torch.distributed.COLLECTIVE_ENV): the
# communication library's tuning switches, never a path, an address or a network interface's name.
EnvName = Annotated[str, Field(pattern=r"^(NCCL|TORCH_NCCL|TORCH_SYMM_MEM|NVSHMEM)_[A-Z0-9_]{1,48}$")]


class CollectiveKernel(Strict):
    name: Text = Field(description="The collective as its kernel names it, e.g. 'AllReduce_Sum_f32'.")
    algorithm: Identifier = Field(description="NCCL's algorithm: ring, tree, nvls, collnet_direct, ...")
    protocol: Identifier = Field(description="NCCL's protocol: ll, ll128 or simple.")
    calls: int = Field(ge=0, description="Launches in the profiled step.")


class Collective(Strict):
    """How a data-parallel step's gradients were all-reduced across its processes. Schema 6."""

    backend: Identifier = Field(description="torch.distributed's backend: nccl on GPUs, gloo on the CPU.")
    version: Text | None = Field(None, description="The communication library's version (NCCL's), where known.")
    env: dict[EnvName, Text] = Field(
        default_factory=dict,
        max_length=64,
        description="The library's settings in every rank's environment (NCCL_ALGO, NCCL_PROTO, NCCL_NVLS_ENABLE, "
        "TORCH_SYMM_MEM_DISABLE_MULTICAST, NVSHMEM_DISABLE_NVLS, ...), as the run had them; unset ones are absent.",
    )
    kernels: list[CollectiveKernel] = Field(
        default_factory=list,
        max_length=32,
        description="The collective kernels of the profiled step, with the algorithm and protocol NCCL chose.",
    )
    bucket_cap_mb: NonNegative | None = Field(None, description="DDP's bucket size limit.")
    buckets: int | None = Field(None, ge=0, description="Gradient buckets DDP all-reduced per step (after rebuild).")
    gradient_as_bucket_view: bool | None = None
    static_graph: bool | None = None
    comm_hook: Identifier | None = Field(None, description="The communication hook, e.g. bf16-compress; none: plain.")


class Round(Strict):
    """One independent measuring process of a point (schema 9): its share of the measurement's samples and its own
    figure, decided by its own samples (runner.measure.timing)."""

    process: int = Field(
        ge=0,
        description="The run's measuring process this round ran in, numbered from 0 in the order they started: a "
        "point's CPU and accelerator rounds alternate (CPU, accelerator, CPU, ...).",
    )
    samples: int = Field(ge=1, description="How many of samples_s this round took, in order.")
    median_s: PositiveSeconds = Field(description="The median of this round's samples.")
    units_per_sample: int = Field(1, ge=1)
    warmup_s: PositiveSeconds | None = None
    stable: bool | None = Field(None, description="Whether this process's interval reached its target in budget.")
    wall_s: NonNegative | None = Field(None, description="Wall time of this round's measurement.")


EnergySource = Literal["nvml-counter", "nvml-power-samples", "amdsmi-counter", "powermetrics", "rapl"]


class EnergyRound(Strict):
    """The energy one round's steady state used, by one source (schema 11)."""

    joules: NonNegative = Field(description="The counter's advance over the steady state (wraps undone).")
    units: int = Field(ge=1, description="Units run in that window.")
    window_s: PositiveSeconds = Field(description="The window's wall time, between two device synchronisations.")


class Energy(Strict):
    """What a measurement's units cost in energy, by one source (schema 11; runner.measure.energy reads it and
    runner.results.energy computes the figures, which the gate recomputes from the rounds)."""

    source: EnergySource = Field(
        description="nvml-counter: NVIDIA's energy counter; nvml-power-samples: the board's power sampled and "
        "integrated (no counter before Volta); amdsmi-counter: an AMD board's energy accumulator; powermetrics: "
        "Apple silicon's CPU or GPU energy from macOS's powermetrics; rapl: the CPU's packages and DRAM through Linux "
        "powercap."
    )
    of: Literal["device", "host"] = Field(
        description="The measured device itself, or the host CPU read while an accelerator measured."
    )
    domains: list[Name] = Field(default_factory=list, max_length=64, description="What was read and summed.")
    counter_period_s: PositiveSeconds | None = Field(
        None, description="The counter's update period, measured before measuring (none for sampled power)."
    )
    idle_power_w: NonNegative | None = Field(None, description="Average power with nothing measured.")
    rounds: list[EnergyRound] = Field(default_factory=list, max_length=64)
    joules_per_unit: NonNegative | None = Field(
        None, description="The median over the rounds long enough to attribute of joules / units (none: too short)."
    )
    ci95_joules_per_unit: tuple[NonNegative, NonNegative] | None = Field(
        None, description="Student's t on the logarithms of those rounds' joules per unit (two rounds or more)."
    )
    joules_per_sample: NonNegative | None = None
    above_idle_joules_per_unit: NonNegative | None = Field(
        None, description="The median over those rounds of (joules - idle power x window) / units."
    )
    avg_power_w: NonNegative | None = Field(None, description="Every round's joules over every round's window.")
    note: LongText | None = Field(None, description="Why there is no figure, where there is none.")


class Measurement(Strict):
    workload: Identifier = Field(description="Workload id from the suite, e.g. 'depth-sweep'.")
    workload_hash: Hex16 = Field(
        description="Hash of everything that changes the numbers (model, data shape, loop, "
        "hyper-parameters, variant, suite version). Only equal hashes are compared."
    )
    point: dict[Identifier, PointValue] = Field(
        default_factory=dict,
        description="The sweep point inside the workload, e.g. {depth: 8} or {model: bert-base, mode: "
        "train, batch_size: 32}.",
    )
    variant: Variant = Field(
        description="'as-written' reproduces the seed's loop; 'tuned' is the best the device can do."
    )
    framework: Identifier
    device: DeviceKind
    device_name: Name = Field(description="The CPU or accelerator model the measurement ran on.")
    precision: Literal["fp32", "bf16", "fp16"] = "fp32"
    status: Status
    error: ErrorInfo | None = None
    skip_reason: LongText | None = None

    unit: Literal["epoch", "step", "latency"] = Field(
        description="What one sample times: an epoch, a step, or (streaming) one input file's end-to-end latency."
    )
    samples_per_unit: int = Field(ge=1, description="Training examples processed per unit.")
    units_per_sample: int = Field(1, ge=1, description="Units timed back to back in one sample (blocking).")
    timer: Literal["host-sync", "device-events"] | None = Field(
        None,
        description="How samples were bounded: 'host-sync', a host clock with the device synchronised after every "
        "sample; 'device-events', timestamps in the device's queue (CUDA/HIP events) with one host sync per round "
        "of samples. Schema 3 and later.",
    )
    warmup_s: PositiveSeconds | None = Field(
        None,
        description="The warm-up, timed on its own: the first unit, or for a tuned epoch loop (and JAX's as-written "
        "one on a CPU) a short epoch (its first batches and its last one).",
    )
    samples_s: list[PositiveSeconds] = Field(
        default_factory=list, description="Raw seconds per unit (with rounds: every round's, end to end)."
    )
    rounds: list[Round] = Field(
        default_factory=list,
        max_length=50,
        description="The independent processes the point was measured in, in order (schema 9). With rounds, "
        "median_s is the median of the rounds' medians and ci95_s its interval across them; one round has none.",
    )
    median_s: PositiveSeconds | None = None
    iqr_s: NonNegative | None = None
    ci95_s: tuple[PositiveSeconds, PositiveSeconds] | None = Field(
        None,
        description="95% confidence interval of the median: of the samples (order statistics; t-interval below 6), "
        "or with rounds of the rounds' medians (Student's t on their logarithms; schema 9: clipped to the fastest).",
    )
    rel_ci_halfwidth: NonNegative | None = Field(None, description="CI half-width over the median.")
    stable: bool | None = Field(
        None, description="Whether the CI reached the target width in budget (with rounds: every round's did)."
    )
    warnings: list[LongText] = Field(default_factory=list)
    notes: list[LongText] = Field(
        default_factory=list, description="How the framework ran the loop where that depends on the device."
    )

    samples_per_s: NonNegative | None = None
    params: int | None = Field(None, ge=0, description="Trainable parameters of the model.")
    flops_per_unit: NonNegative | None = Field(None, description="Analytic FLOPs of one unit.")
    achieved_tflops: NonNegative | None = None
    peak_host_mib: NonNegative | None = None
    peak_device_mib: NonNegative | None = None
    cpu_util: NonNegative | None = Field(None, description="CPU seconds per wall second (1.0 = one core).")
    load_avg: NonNegative | None = Field(None, description="1-minute load average at the end.")
    threads: int | None = Field(None, ge=1, description="Intra-op threads the framework used.")
    top_ops: list[TopOp] = Field(default_factory=list)
    wall_s: NonNegative | None = Field(None, description="Wall time of the whole measurement.")
    stream: StreamRecord | None = Field(None, description="A streaming step's raw record (unit 'latency').")
    fidelity: Fidelity | None = Field(
        None, description="The seed script's twin on this host, for the as-written points it covers. Schema 5."
    )
    energy: list[Energy] = Field(
        default_factory=list, max_length=8, description="Energy per source (schema 11): the device's, the host's."
    )
    interconnect: Text | None = Field(
        None,
        description="Data-parallel runs over several GPUs: how GPU 0 reaches the others, as `nvidia-smi topo -m` "
        "names it (e.g. 'GPU0-GPU1 NV18': 18 bonded NVLinks; PIX, PXB, PHB, NODE, SYS: PCIe paths). Schema 4.",
    )
    collective: Collective | None = Field(
        None,
        description="Data-parallel runs: how the gradients were all-reduced (library, settings, kernels). Schema 6.",
    )
    runs_as: Literal["eager", "compiled", "cuda-graph"] | None = Field(
        None,
        description="Tuned data-parallel steps (transformer-ddp): how the step ran: eager; compiled (torch.compile, "
        "Inductor); cuda-graph, the whole step (DDP's all-reduces included) replayed from one CUDA graph. Schema 8 "
        "(before it, only in the notes).",
    )
    spark_master: SparkMaster | None = Field(
        None,
        description="spark-* workloads: the kind of Spark master the measurement ran on, never its address "
        "(runner.engines.spark.master.master_kind): local, local[N] or local[*] for the embedded session, "
        "standalone, yarn, k8s, mesos or other. Schema 8 (before it, only in the notes).",
    )


class EquivalenceCheck(Strict):
    """Does this framework's model compute what PyTorch's does? PyTorch's initial weights and one batch are
    copied across; parameters, forward FLOPs, output shape, loss and gradients are compared (dropout off)."""

    framework: Identifier
    reference: Identifier = Field("torch", description="The framework compared with.")
    workload: Identifier
    point: dict[Identifier, PointValue] = Field(default_factory=dict)
    status: Literal["passed", "failed", "error"] = Field(
        description="'failed': a difference beyond tolerance (see detail); 'error': the check could not run."
    )
    params: int | None = Field(None, ge=0, description="Trainable parameters of this framework's model.")
    reference_params: int | None = Field(None, ge=0)
    forward_flops: NonNegative | None = Field(
        None, description="Forward FLOPs per example counted from this framework's own traced computation."
    )
    analytic_flops: NonNegative | None = Field(None, description="The suite's analytic forward FLOPs per example.")
    output_shape: list[Annotated[int, Field(ge=0)]] = Field(default_factory=list)
    loss: Finite | None = None
    reference_loss: Finite | None = None
    loss_rel_diff: NonNegative | None = Field(None, description="|loss - reference| / |reference|.")
    grad_rel_diff: NonNegative | None = Field(
        None,
        description="Largest over parameter tensors of max |g - g_ref| / max |g_ref|.",
    )
    loss_rtol: NonNegative = Field(description="Tolerance on loss_rel_diff.")
    grad_rtol: NonNegative = Field(description="Tolerance on grad_rel_diff.")
    detail: LongText = ""


# --- the file -----------------------------------------------------------------------------------------------


class Suite(Strict):
    version: int = Field(ge=1)
    profile: Profile


class EnergyProbe(Strict):
    """An energy source as the run found it before measuring: its update period and idle power, or why it cannot be
    read (and how to allow it, where it can be)."""

    device: Text = Field(description="The device kind whose measurements it serves: cpu, cuda.")
    source: EnergySource
    of: Literal["device", "host"]
    domains: list[Name] = Field(default_factory=list, max_length=64)
    counter_period_s: PositiveSeconds | None = None
    idle_power_w: NonNegative | None = None
    reason: LongText | None = Field(None, description="Why it cannot be read; none where it can.")


class Run(Strict):
    id: Annotated[str, Field(pattern=r"^[0-9a-f]{32}$")] = Field(description="Random run id (uuid4 hex).")
    started_at: datetime
    finished_at: datetime
    command: Text = Field(description="The benchsite command line, with paths left out.")
    time_budget_s: PositiveSeconds = Field(description="Steady-state time budget of each measurement.")
    interrupted: bool = Field(False, description="True if the run was stopped (Ctrl-C) before the end.")
    energy: list[EnergyProbe] = Field(
        default_factory=list, max_length=16, description="The energy sources found before measuring (schema 11)."
    )


class ResultFile(Strict):
    schema_version: Literal[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] = Field(
        description="Version of this format; see runner/results/schema.py."
    )
    benchsite_version: Annotated[str, Field(max_length=64, pattern=VERSION_PATTERN)] = Field(
        description="The benchsite release that wrote the file (no newer than the gate that reads it)."
    )
    suite: Suite
    run: Run
    machine: Machine
    software: Software
    sync_selftests: list[SyncSelfTest] = Field(default_factory=list)
    equivalence: list[EquivalenceCheck] = Field(
        default_factory=list, description="One check per framework other than PyTorch, workload and point."
    )
    device_peaks: list[DevicePeak] = Field(
        default_factory=list,
        description="Matrix-product throughput measured on each device in this run. Schema 3 and later.",
    )
    measurements: list[Measurement] = Field(default_factory=list)


def json_schema() -> dict[str, object]:
    """The published JSON Schema of a result file."""
    schema = ResultFile.model_json_schema()
    schema["$id"] = f"urn:benchsite:result-v{SCHEMA_VERSION}"  # a name, not an address: no domain is claimed
    schema["title"] = "benchsite result file"
    return schema
