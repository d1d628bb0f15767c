#!/bin/bash
# One call of the device tool, run from the repository's root on the lent machine, with `.devstate` (holding
# steps.sh and, optionally, commit) and `.whl` (pydantic's wheels) carried:
#
#     WAIT=560 bash tests/benchmarks/device/call.sh
#
# The first call installs the wheels, copies the tree to /tmp/repo and starts go.sh there detached, so that the run
# outlives the call; later calls, each within the machine's 30 s of warmth, only wait. Every call waits up to WAIT
# seconds (or until the run is done), brings /tmp/go back as $OUT/go.tgz and prints where the run is.
G=/tmp/go; WAIT=${WAIT:-540}; t0=$(date +%s)
if [ ! -d $G ]; then
  mkdir -p $G
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > $G/pip.txt 2>&1
  rm -rf /tmp/repo && mkdir -p /tmp/repo && cp -a . /tmp/repo/
  setsid nohup bash /tmp/repo/tests/benchmarks/device/go.sh > $G/go.log 2>&1 < /dev/null &
  echo started go.sh
fi
while [ ! -e $G/done ] && [ $(( $(date +%s) - t0 )) -lt $WAIT ]; do sleep 5; done
tar czf $OUT/go.tgz -C /tmp go
cat $G/threads.txt 2>/dev/null | head -30; cat $G/progress.txt; tail -n 3 $G/load.txt
for f in $G/*.txt; do case $f in */load.txt|*/progress.txt|*/pip.txt) ;; *) echo "== $f"; grep -E "ratio|^\|" $f | tail -n 12;; esac; done
tail -n 4 $G/$(ls -t $G | grep -E '^(cpu|gpu).*\.txt$' | head -1) 2>/dev/null
