#!/bin/bash
# ps_staleness.sh - accuracy of the Fashion-MNIST MLP against the staleness
# bound of asynchronous parameter servers.
#
#   scripts/ps_staleness.sh [EPOCHS]
#
# Trains examples/fashion-mlp.yaml (batch 64 global) on loopback as
# `fathom run -n 5`: 4 workers and 1 server, synchronous, then asynchronous
# with staleness K = 0, 1 and 4 (each worker's gradient of its 16 rows is
# applied as it arrives: 4 optimizer steps per global batch). Writes
# ps/testdata/results/staleness.csv: mode, epoch, test accuracy, test loss,
# epoch seconds; internal/tools/distplot draws it.
set -euo pipefail
cd "$(dirname "$0")/.."
EPOCHS=${1:-4}
WORK=$(mktemp -d /tmp/fathom-ps-staleness.XXXXXX)
trap 'rm -rf "$WORK"' EXIT INT TERM
FATHOM=${FATHOM:-$WORK/fathom}
[[ -x $FATHOM ]] || /usr/local/go/bin/go build -o "$FATHOM" ./cmd/fathom
CSV=ps/testdata/results/staleness.csv
mkdir -p "$(dirname "$CSV")"
echo "mode,epoch,test_accuracy,test_loss,seconds" > "$CSV.tmp"
for mode in sync 0 1 4; do
  sets=(--set distributed.strategy=ps --set distributed.servers=1 --set epochs=$EPOCHS --set output.dir=$WORK/$mode)
  [[ $mode != sync ]] && sets+=(--set distributed.staleness=$mode)
  label=$mode; [[ $mode != sync ]] && label="K=$mode"
  timeout -k 5 1800 "$FATHOM" run -n 5 -- "$FATHOM" train examples/fashion-mlp.yaml --json --quiet "${sets[@]}" > "$WORK/$mode.out"
  grep '"epoch":' "$WORK/$mode.out" | sed 's/^\[0\] //' | python3 -c '
import json, sys
for line in sys.stdin:
    d = json.loads(line)
    print("%s,%d,%.4f,%.4f,%.2f" % (sys.argv[1], d["epoch"], d["eval"]["accuracy"], d["eval"]["loss"], d["seconds"]))' "$label" | tee -a "$CSV.tmp"
done
mv "$CSV.tmp" "$CSV"
echo "written $CSV"
