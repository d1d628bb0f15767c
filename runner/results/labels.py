"""How benchsite names a CPU wherever it shows one: its model and its core count. A model name alone does not say
which CPU it is: a cloud VM's "Intel(R) Xeon(R) Processor" is a 2-core slice on one machine and a 16-core host on
another, and the two answer the CPU-or-GPU question differently."""

from __future__ import annotations

import re

from runner.results.schema import Cpu

_MARKS = re.compile(r"\s*\((?:R|TM|C)\)|\s*®|\s*™", re.IGNORECASE)


def cpu_label(cpu: Cpu) -> str:
    """'Intel Xeon Processor, 16 cores' (the model without trademark signs, then its physical cores, or its logical
    CPUs where the machine did not report cores); '..., 8 cores (16 threads)' where the two differ."""
    model = " ".join(_MARKS.sub("", cpu.model).split()) or cpu.model
    cores = cpu.physical_cores or cpu.logical_cpus
    plural = "s" if cores != 1 else ""
    if cpu.physical_cores and cpu.logical_cpus > cpu.physical_cores:
        return f"{model}, {cores} core{plural} ({cpu.logical_cpus} threads)"
    return f"{model}, {cores} core{plural}"
