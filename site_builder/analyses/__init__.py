"""What the site computes from the measurement frame (site_builder.collect), a module by analysis: the frame's
slices (slices: what is compared, what is shown apart), speedups over the same machine's CPU and everything summarised
from them (speedups: verdicts, summaries across machines, the loop's effect, frameworks against each other),
crossovers (where the accelerator starts to win along a sweep), scaling (data-parallel efficiency) and spark
(Spark inference, streaming and the sustained rate); frames holds the helpers they share.

Only measurements with the same workload_hash are ever compared; a speedup compares an accelerator with the CPU of
the same machine, same framework and same workload_hash. Pure: frames in, frames out; no file I/O, no rendering.
"""
