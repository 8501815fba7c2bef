#!/usr/bin/env bash
# compare-precision.sh — mixed precision on this machine, in one run:
#
#  1. bf16 GEMM against fathom's float32 (fathom bench matmul --dtype
#     f32|bf16, alternated ROUNDS times; medians);
#  2. the Fashion-MNIST MLP and CNN of examples/ trained in float32, bf16
#     and (with FP16=1) fp16 by fathom (--set precision=...), and in float32
#     and under torch.autocast(bfloat16) by PyTorch (scripts/precision_torch.py),
#     back to back: seconds per epoch (median) and test accuracy after the
#     same epochs.
#
#   scripts/compare-precision.sh [mlp] [cnn]      (default: both)
#
# Env: EPOCHS_MLP (default 3), EPOCHS_CNN (default 1), ROUNDS (default 3),
# PY (default /usr/bin/python3), FP16=1 adds fathom's emulated fp16,
# TORCH_BATCHES=N times only N PyTorch batches and extrapolates the epoch
# (no PyTorch accuracy then; for a loaded machine).
# Goals of issue 16: bf16 GEMM ≥ 1.6× float32 GFLOP/s; bf16 accuracy within
# 0.3 point of float32. On a loaded machine the times are indicative: compare
# the ratios of a run, not absolute figures across runs.
set -euo pipefail
cd "$(dirname "$0")/.."
MODELS=${*:-mlp cnn}
PY=${PY:-/usr/bin/python3}
ROUNDS=${ROUNDS:-3}
EPOCHS_MLP=${EPOCHS_MLP:-3}
EPOCHS_CNN=${EPOCHS_CNN:-1}
"$PY" -c "import torch" 2>/dev/null || { echo "compare-precision: $PY cannot import torch" >&2; exit 2; }

WORK=$(mktemp -d /tmp/fathom-precision.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
go build -o "$WORK/fathom" ./cmd/fathom
GEMM=$WORK/gemm.jsonl
TRAIN=$WORK/train.jsonl
: > "$GEMM"
: > "$TRAIN"

echo "== GEMM ($ROUNDS rounds)" >&2
for r in $(seq "$ROUNDS"); do
  for shape in "--n 1024" "--m 64 --k 784 --n 256 --trans-b" "--m 256 --k 64 --n 784"; do
    for d in f32 bf16; do
      # shellcheck disable=SC2086
      "$WORK/fathom" bench matmul $shape --dtype "$d" --iters 3 --json >> "$GEMM"
    done
  done
done

precisions="float32 bf16"
[[ ${FP16:-0} == 1 ]] && precisions="$precisions fp16"
for m in $MODELS; do
  epochs=$EPOCHS_MLP
  [[ $m == cnn ]] && epochs=$EPOCHS_CNN
  for p in $precisions; do
    echo "== fathom $m $p ($epochs epochs)" >&2
    "$WORK/fathom" train "examples/fashion-$m.yaml" --quiet --json --set "epochs=$epochs" --set "precision=$p" \
      --set "output.dir=$WORK/run-$m-$p" | tail -n 1 | sed "s/^{/{\"who\":\"fathom\",\"model\":\"$m\",\"precision\":\"$p\",/" >> "$TRAIN"
  done
  for p in fp32 bf16; do
    echo "== pytorch $m $p ($epochs epochs)" >&2
    "$PY" scripts/precision_torch.py --model "$m" --precision "$p" --epochs "$epochs" --max-batches "${TORCH_BATCHES:-0}" | sed 's/^{/{"who":"pytorch",/' >> "$TRAIN"
  done
done

"$PY" - "$GEMM" "$TRAIN" <<'PY'
import json, statistics, sys
from collections import defaultdict
g = defaultdict(list)
for l in open(sys.argv[1]):
    r = json.loads(l)
    g[(r["m"], r["n"], r["k"], r.get("trans_b", False))].append(r)
print("GEMM GFLOP/s (median of rounds; bf16 includes rounding A and B)")
print(f"{'m×k×n':>16s} {'f32':>8s} {'bf16':>8s} {'ratio':>6s}")
for (m, n, k, tb), rs in g.items():
    f = statistics.median(r["gflops"] for r in rs if r["dtype"] == "f32")
    b = statistics.median(r["gflops"] for r in rs if r["dtype"] == "bf16")
    print(f"{f'{m}×{k}×{n}' + ('ᵀ' if tb else ''):>16s} {f:8.1f} {b:8.1f} {b / f:6.2f}")
print()
print(f"{'model':5s} {'who':8s} {'precision':9s} {'s/epoch':>8s} {'vs f32':>7s} {'test acc':>8s}")
rows = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
base = {}
for r in rows:
    sec = r.get("seconds_per_epoch", r.get("sec_per_epoch"))
    acc = r.get("test_accuracy", r.get("test_acc"))
    if acc is None:
        acc = float("nan")
    if r["precision"] in ("float32", "fp32"):
        base[(r["model"], r["who"])] = (sec, acc)
    b = base.get((r["model"], r["who"]), (sec, acc))
    print(f"{r['model']:5s} {r['who']:8s} {r['precision']:9s} {sec:8.2f}{'*' if r.get('extrapolated') else ' '}{sec / b[0]:6.2f} {acc:8.4f}"
          f"{'' if r['precision'] in ('float32', 'fp32') else f'  (Δacc {100 * (acc - b[1]):+.2f} pt)'}")
PY
