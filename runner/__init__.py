"""benchsite runner: hardware fingerprint, workload suite, timing engine and the result format."""

__version__ = "0.1.0"

# Version of the standard workload suite. Bump it whenever a workload changes in a way that changes its
# numbers; it is part of every workload_hash, so results of different suite versions are never compared.
SUITE_VERSION = 1
