#!/bin/bash
# Seed 002 on two cores: the shipped transcription against two variants, one change each, fresh process each,
# the arms' order rotated every round. order: benchsite's statement order in the step (the loss, then zero_grad,
# backward, step); ahead: torch._dynamo imported before anything else, as a spare imports it before the script.
# Usage: [ARMS="script order"] arms002.sh ROUNDS LOG   (run from the repository root; ARMS: which arms, all three
# by default)
S=runner/fidelity/seeds/seed_002.py
D=$(mktemp -d)
python3 - "$S" "$D" <<'PY'
import sys
src = open(sys.argv[1]).read()
old = "            opt.zero_grad()\n            loss(*d).backward()\n            opt.step()\n"
assert old in src
new = "            l = loss(*d)\n            opt.zero_grad()\n            l.backward()\n            opt.step()\n"
open(sys.argv[2] + "/seed_002_order.py", "w").write(src.replace(old, new))
assert "import torch\n" in src
open(sys.argv[2] + "/seed_002_ahead.py", "w").write(src.replace("import torch\n", "import torch\nimport torch._dynamo\n", 1))
PY
arms=(${ARMS:-script order ahead}); n=${#arms[@]}
for r in $(seq 1 $1); do
  for k in $(seq 0 $(( n - 1 ))); do
    a=${arms[$(( (r + k) % n ))]}
    case $a in script) f=$S;; *) f=$D/seed_002_$a.py;; esac
    echo "$r $a $(python3 $f --epochs 1)" >> $2
  done
done
echo finished >> $2
