"""Measuring: everything that turns a planned point into samples, apart from the frameworks' own code.

- `executor`: the parent side; starts a measuring child per job (a fork of the framework's fork server, or a fresh
  interpreter), streams its events, enforces time limits, turns a crash into data;
- `worker`: the child (`python -m runner.measure.worker`): builds a workload's program and times it;
- `protocol`: what parent and child agree on (the exit codes, which jobs run as their seed's script, the phase log);
- `forkserver`: a framework's pre-imported server that forks measuring children;
- `timing`: the timing engine (warm-up, synchronised samples, stopping rule);
- `monitor`: what the machine did during a measurement (peak memory, CPU use);
- `journal`: an interrupted run's measurements, for `benchsite run --resume`;
- `equivalence`: the check that every framework trains the same model.

Imports nothing from the gate or from `runner.contribute`; the site builder imports nothing from here.
"""
