#!/bin/bash
# One device call: install the wheels, start go.sh detached if it is not running yet, wait up to $WAIT s (or until it
# ends), then bring back its folder, the journal and any result file.
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl 2>/dev/null
echo "call $(date -u +%FT%TZ)" >> /tmp/calls.log
if [ ! -f /tmp/go/started ]; then setsid nohup bash .devstate/go.sh > /tmp/go.out 2>&1 < /dev/null & sleep 5; fi
end=$(( $(date +%s) + ${WAIT:-540} ))
while [ ! -f /tmp/go/finished ] && [ $(date +%s) -lt $end ]; do sleep 10; done
cp /tmp/calls.log /tmp/go/ 2>/dev/null
cat /tmp/go/card; cat /tmp/go/progress 2>/dev/null; tail -25 /tmp/go/run.log 2>/dev/null; tail -3 /tmp/go/run_*.txt 2>/dev/null
tar -czf $OUT/go.tgz -C /tmp go
[ -d /tmp/bench/.benchsite-journal ] && tar -czf $OUT/journal.tgz -C /tmp/bench .benchsite-journal
[ -d /tmp/bench/results ] && tar -czf $OUT/results.tgz -C /tmp/bench results
ls -la $OUT
