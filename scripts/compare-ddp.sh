#!/usr/bin/env bash
# compare-ddp.sh — data-parallel training speed on one machine: fathom's two
# workers against PyTorch DDP and against one two-threaded fathom process,
# interleaved in the same run so that the figures that count are the ratios.
#
#   scripts/compare-ddp.sh [ROUNDS]      (default 3; medians per epoch reported)
#
# Every round runs, one after the other, 3 epochs of the Fashion-MNIST MLP
# (784-256-128-10, Adam 1e-3, global batch 128):
#   2x1       fathom run -n 2 -- fathom train examples/fashion-mlp.yaml --set epochs=3 --set batch_size=128
#             (each worker 1 thread, fathom run's default on 2 CPUs; ZeRO-1 by default on one machine)
#   2x1-plain the same with --set distributed.shard_optimizer=false (every worker runs all of Adam)
#   2x1-zero  the same with --set distributed.shard_optimizer=true
#   1x2       fathom train … (one process, GOMAXPROCS=2)
#   torch     ddp_mnist.py --world 2 --spawn --threads 1 (PyTorch DDP, gloo; 468 steps an
#             epoch — it drops the last partial batch — against fathom's 469)
# VARIANTS selects runs (default "2x1 2x1-plain 1x2 torch").
# Needs python3-torch and dataset-fashion-mnist (Debian) for the torch runs.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
ROUNDS=${1:-3}
VARIANTS=${VARIANTS:-2x1 2x1-plain 1x2 torch}
PY=${PY:-/usr/bin/python3}
ANCHOR=${ANCHOR:-$ROOT/../shared/anchors/dist/ddp_mnist.py}

WORK=$(mktemp -d /tmp/fathom-ddp.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
go build -o "$WORK/fathom" ./cmd/fathom
F=$WORK/fathom
OUT=$WORK/epochs.tsv
: > "$OUT"
CFG=$ROOT/examples/fashion-mlp.yaml
COMMON=(--set epochs=3 --set batch_size=128 --set "output.dir=$WORK/run" --json --quiet)

# epochs VARIANT: reads a run's output, appends "variant round epoch seconds" lines
epochs() {
  "$PY" -c '
import json, re, sys
v, r = sys.argv[1], sys.argv[2]
for line in sys.stdin:
    m = re.match(r"world=\d+ epoch (\d+): ([0-9.]+) s", line)
    if m:
        print(v, r, m.group(1), m.group(2)); continue
    line = re.sub(r"^\[\d+\] ", "", line.strip())
    if line.startswith("{"):
        d = json.loads(line)
        if "epoch" in d and "seconds" in d:
            print(v, r, d["epoch"], d["seconds"])
' "$1" "$round"
}

for (( round = 1; round <= ROUNDS; round++ )); do
  echo "== round $round/$ROUNDS (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
  for v in $VARIANTS; do
    case $v in
      2x1) "$F" run -n 2 -- "$F" train "$CFG" "${COMMON[@]}" ;;
      2x1-plain) "$F" run -n 2 -- "$F" train "$CFG" "${COMMON[@]}" --set distributed.shard_optimizer=false ;;
      2x1-zero) "$F" run -n 2 -- "$F" train "$CFG" "${COMMON[@]}" --set distributed.shard_optimizer=true ;;
      1x2) GOMAXPROCS=2 "$F" train "$CFG" "${COMMON[@]}" ;;
      torch) "$PY" "$ANCHOR" --world 2 --spawn --threads 1 --epochs 3 ;;
      *) echo "compare-ddp: unknown variant $v" >&2; exit 2 ;;
    esac 2>&1 | epochs "$v" >> "$OUT"
  done
done

"$PY" - "$OUT" <<'EOF'
import collections, statistics, sys
t = collections.defaultdict(list)
for line in open(sys.argv[1]):
    v, r, e, s = line.split()
    t[(v, int(e))].append(float(s))
variants = sorted({v for v, _ in t}, key=["2x1", "2x1-plain", "2x1-zero", "1x2", "torch"].index)
print("median seconds per epoch (rounds: %s)" % ", ".join(f"{v} {len(t[(v, 1)])}" for v in variants))
print("%-10s %8s %8s %8s" % ("run", "epoch 1", "epoch 2", "epoch 3"))
med = {k: statistics.median(x) for k, x in t.items()}
for v in variants:
    print("%-10s %8.3f %8.3f %8.3f" % (v, *(med.get((v, e), float("nan")) for e in (1, 2, 3))))
# Ratios of medians per epoch, and the median over rounds and epochs of
# the ratio within a round (runs close in time: steadier under load).
by_round = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    v, r, e, s = line.split()
    by_round[(int(r), int(e))][v] = float(s)
print("%-18s %7s %7s %7s   %s" % ("ratio", "epoch 1", "epoch 2", "epoch 3", "median of per-round ratios"))
for a, b in [(a, b) for b in ("torch", "1x2") for a in ("2x1", "2x1-plain", "2x1-zero")]:
    if (a, 1) not in med or (b, 1) not in med:
        continue
    within = [x[a] / x[b] for x in by_round.values() if a in x and b in x]
    print("%-18s %7.3f %7.3f %7.3f   %.3f" % (f"{a} / {b}", *(med[(a, e)] / med[(b, e)] for e in (1, 2, 3)), statistics.median(within)))
EOF
