# .devstate/steps.sh of this run, for tests/benchmarks/device/go.sh
step gpu_c --device cuda --min-units 1 --seed 003 --seed 004
step cpu_c --device cpu --min-units 1 --seed 004
