#!/bin/bash
cd "$(dirname "$0")/.."
python3 .devstate/tv_micro.py > /tmp/fid/run0_micro.txt 2>&1
echo "micro done $(date -u)" >> /tmp/fid/progress
S=runner/fidelity/seeds/seed_004.py
for r in 1 2 3; do
  for v in tv inline; do
    if [ $v = tv ]; then python3 $S --device cpu --epochs 1 2>/dev/null | sed "s/^/| script-$v round $r /" >> /tmp/fid/run1_script.txt
    else python3 -c "import sys, runpy; sys.modules['torchvision'] = None; sys.argv = ['$S', '--device', 'cpu', '--epochs', '1']; runpy.run_path('$S', run_name='__main__')" 2>/dev/null | sed "s/^/| script-$v round $r /" >> /tmp/fid/run1_script.txt; fi
  done
done
echo "script ab done $(date -u)" >> /tmp/fid/progress
F="python3 tests/benchmarks/fidelity.py --profile standard --seconds 2"
$F --rounds 5 --device cpu --seed 004 --min-units 1 --json /tmp/fid/cpu004.json > /tmp/fid/run2_cpu004.txt 2>&1
echo "cpu004 done $(date -u)" >> /tmp/fid/progress
date -u > /tmp/fid/finished
