#!/bin/bash
# One device call: the first starts go.sh detached (after rm -rf /tmp/go), later ones only wait. WAIT: seconds.
G=/tmp/go; WAIT=${WAIT:-540}; t0=$(date +%s)
if [ ! -d $G ]; then
  mkdir -p $G
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > $G/pip.txt 2>&1
  rm -rf /tmp/repo && mkdir -p /tmp/repo && cp -a . /tmp/repo/
  setsid nohup bash /tmp/repo/.devstate/go.sh > $G/go.log 2>&1 < /dev/null &
  echo started go.sh
fi
while [ ! -e $G/done ] && [ $(( $(date +%s) - t0 )) -lt $WAIT ]; do sleep 5; done
tar czf $OUT/go.tgz -C /tmp go
cat $G/threads.txt 2>/dev/null | head -30; cat $G/progress.txt; tail -n 3 $G/load.txt
for f in $G/*.txt; do case $f in */load.txt|*/progress.txt|*/pip.txt) ;; *) echo "== $f"; grep -E "ratio|^\|" $f | tail -n 12;; esac; done
tail -n 4 $G/$(ls -t $G | grep -E '^(cpu|gpu).*\.txt$' | head -1) 2>/dev/null
