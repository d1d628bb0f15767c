#!/bin/bash
# after plan28: more rounds of the H200's seed 001 depth-2 row until the call ends
export PYTHONPATH=/tmp/site:$PWD
end=$(( $(date +%s) + ${WAIT:-560} ))
while [ $(date +%s) -lt $end ] && [ ! -f /tmp/fid/finished ]; do sleep 5; done
if [ -f /tmp/fid/finished ] && [ ! -f /tmp/fid/more_started ]; then
  date -u > /tmp/fid/more_started
  setsid nohup python3 tests/benchmarks/fidelity.py --profile standard --seconds 2 --rounds 10 --device cuda --seed 001 --depth 2 --json /tmp/fid/gpu_d2b.json > /tmp/fid/run_gpu_d2b.txt 2>&1 < /dev/null &
fi
while [ $(date +%s) -lt $end ] && [ ! -f /tmp/fid/gpu_d2b.json ]; do sleep 5; done
cat /tmp/fid/progress; grep -h "ratio" /tmp/fid/run_*.txt | grep -v "^|"; tail -12 /tmp/fid/run_gpu_d2b.txt
tar czf $OUT/fid.tgz -C /tmp fid
