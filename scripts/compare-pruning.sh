#!/usr/bin/env bash
# compare-pruning.sh — the table of issue 16: sparsity against test
# accuracy, model file size and inference rows/s, for the Fashion-MNIST MLP
# and CNN of examples/, magnitude (unstructured, per layer) and structured
# (L1 neurons/channels, saved shrunk) pruning at 50/75/90%.
#
#   scripts/compare-pruning.sh [mlp] [cnn]      (default: both)
#
# Each row is one `fathom train` run: EPOCHS epochs, pruned from
# PRUNE_START (default 1: after one dense epoch; fractions of an epoch
# allowed), the sparsity raised along the cubic ramp until PRUNE_END
# (default EPOCHS-1; one-shot when that is not later), the rest of training
# fine-tuning with the masks held. The baseline row trains the same epochs
# unpruned. rows/s is `fathom bench infer --batches 64`
# (median of 3 passes over the 10 000 test images).
#
# Env: EPOCHS_MLP (default 3), EPOCHS_CNN (default 2), SPARSITIES
# (default "0.5 0.75 0.9"), PRUNE_START, PRUNE_END (see above). Times on a loaded machine are indicative.
set -euo pipefail
cd "$(dirname "$0")/.."
MODELS=${*:-mlp cnn}
SPARSITIES=${SPARSITIES:-0.5 0.75 0.9}
WORK=$(mktemp -d /tmp/fathom-pruning.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
go build -o "$WORK/fathom" ./cmd/fathom
OUT=$WORK/rows.jsonl
: > "$OUT"

run() { # model method sparsity epochs
  local m=$1 method=$2 s=$3 e=$4 dir=$WORK/$1-$2-$3 set=()
  if [[ $method != none ]]; then
    local start=${PRUNE_START:-1} end=${PRUNE_END:-$((e - 1))}
    set=(--set "prune={method: $method, sparsity: $s, start_epoch: $start, end_epoch: $end, every_steps: 50}")
  fi
  echo "== $m $method $s ($e epochs)" >&2
  "$WORK/fathom" train "examples/fashion-$m.yaml" --quiet --json --set "epochs=$e" --set "output.dir=$dir" "${set[@]}" \
    | tail -n 1 > "$dir.train.json"
  "$WORK/fathom" bench infer "$dir/model.safetensors" --batches 64 --json | tail -n 1 > "$dir.infer.json"
  /usr/bin/python3 - "$m" "$method" "$s" "$dir" >> "$OUT" <<'PY'
import json, os, sys
m, method, s, d = sys.argv[1:]
t = json.load(open(d + ".train.json"))
i = json.load(open(d + ".infer.json"))
print(json.dumps({"model": m, "method": method, "sparsity": float(s), "test_acc": t["test_accuracy"],
                  "bytes": os.path.getsize(d + "/model.safetensors"), "rows_per_s": i["rows_per_s"]}))
PY
}

for m in $MODELS; do
  e=${EPOCHS_MLP:-3}
  [[ $m == cnn ]] && e=${EPOCHS_CNN:-2}
  run "$m" none 0 "$e"
  for method in magnitude structured; do
    for s in $SPARSITIES; do
      run "$m" "$method" "$s" "$e"
    done
  done
done

/usr/bin/python3 - "$OUT" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
base = {}
print(f"{'model':5s} {'method':10s} {'sparsity':>8s} {'test acc':>8s} {'Δ pt':>6s} {'file KiB':>9s} {'size':>6s} {'rows/s':>9s} {'speed':>6s}")
for r in rows:
    if r["method"] == "none":
        base[r["model"]] = r
    b = base[r["model"]]
    print(f"{r['model']:5s} {r['method']:10s} {r['sparsity']:8.2f} {r['test_acc']:8.4f} {100*(r['test_acc']-b['test_acc']):+6.2f} "
          f"{r['bytes']/1024:9.1f} {r['bytes']/b['bytes']:6.2f} {r['rows_per_s']:9.0f} {r['rows_per_s']/b['rows_per_s']:6.2f}")
PY
