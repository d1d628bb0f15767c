# .devstate/steps.sh of this run, for tests/benchmarks/device/go.sh
echo "$(date -u +%T) start threads" >> $G/progress.txt
python3 tests/benchmarks/fork_threads.py --framework torch --framework jax > $G/threads.txt 2>&1
echo "$(date -u +%T) end threads rc=$?" >> $G/progress.txt
step gpu_a --device cuda --min-units 1 --seed 000 --seed 001 --seed 002
step cpu_a --device cpu --min-units 1 --seed 000 --seed 001 --seed 002 --seed 003
step gpu_b --device cuda --min-units 1 --seed 003
