"""benchsite's runner: `benchsite run` and the commands around it.

Packages by role (the README's Layout section draws the tree): measure (the measuring processes and the timing
engine), workloads (the registry), frameworks (PyTorch, TensorFlow, JAX), engines (Spark), fidelity (the seed
scripts' twin), fingerprint (the machine), gate (what a contributed file must pass), contribute (submit, compare)
and results (the result file's format, shared by all). cli.py is the command line over api/.
"""

__version__ = "0.9.0"

# Version of the standard workload suite. Bump it whenever a workload changes in a way that changes its
# numbers; it is part of every workload_hash, so results of different suite versions are never compared.
# 2 (benchsite 0.2.0): as-written loops follow their seeds line by line (seed 000's one DataLoader with 2 workers
#   and pinned memory on every device, seed 004's CPU loader without workers or shuffling and its PIL
#   transforms, Flux's epsilon in seed 002's loss, seed 001's print); tuned transformers compiled. benchsite 0.3.0
#   adds the transformer-ddp workload (new hashes; the others' are unchanged).
# 3 (benchsite 0.4.0): seed 004's as-written PyTorch loop runs torchvision's transforms step for step (its checks,
#   API-usage calls and Normalize as an nn.Module), not only the tensor operations they end in
#   (torchvision took 122 to 135 us per image against 88 on one H100 machine). benchsite 0.5.0 adds the
#   spark-streaming workload (new hashes; the others' are unchanged). Within suite 3 (2026-11-23), seed 003's
#   as-written step (transformer, transformer-ddp) frees its gradients with optimizer.zero_grad() as plain PyTorch
#   does, not zero_grad(set_to_none=False): those loops' hashes changed (the old ones frozen in past_suites.json,
#   their files shown apart on the site), the version and every other hash did not.
SUITE_VERSION = 3
