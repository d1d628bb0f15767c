#!/bin/bash
# pause the builds, seed 002's three arms on the idle VM, resume the builds (even if the probe fails)
cd /work/main
bash /var/tmp/s9/pause.sh STOP
sleep 5
trap 'bash /var/tmp/s9/pause.sh CONT' EXIT
uptime > /var/tmp/s9/arms002.load
bash .devstate/arms002.sh ${1:-8} /var/tmp/s9/arms002.log
uptime >> /var/tmp/s9/arms002.load
