#!/usr/bin/env bash
# compare-peers.sh — fathom and its peers (PyTorch 1.13 / OpenBLAS from Debian)
# measured back to back on this machine, so the figure that counts is the ratio.
#
#   scripts/compare-peers.sh [ROUNDS]        (default 3 rounds; medians reported)
#
# Needs: apt-get install python3-torch dataset-fashion-mnist; the anchor
# scripts in ../shared/anchors/python (copied to a temp dir, since they write
# their results beside themselves). Peers run at their best: OpenBLAS with
# OPENBLAS_CORETYPE=Cooperlake (AVX-512 kernels), 2 threads for GEMM and
# elementwise ops, 1 thread for the small MLP (its fastest setting), 2 threads
# for the CNN. JOBS selects parts: "gemm elem mlp cnn" (default all).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
ROUNDS=${1:-3}
JOBS=${JOBS:-gemm elem mlp cnn}
ANCHORS=${ANCHORS:-$ROOT/../shared/anchors/python}
PY=${PY:-/usr/bin/python3}
[[ -d $ANCHORS ]] || { echo "compare-peers: $ANCHORS not found" >&2; exit 2; }
"$PY" -c "import torch" 2>/dev/null || { echo "compare-peers: $PY cannot import torch (apt-get install python3-torch)" >&2; exit 2; }

WORK=$(mktemp -d /tmp/fathom-peers.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cp -r "$ANCHORS" "$WORK/anchors"
rm -rf "$WORK/anchors/results"; mkdir -p "$WORK/anchors/results"
go build -o "$WORK/fathom" ./cmd/fathom
F=$WORK/fathom
OUT=$WORK/fathom.jsonl
: > "$OUT"
export ANCHOR_NO_WAIT=1

has() { [[ " $JOBS " == *" $1 "* ]]; }
tag() { jq_tag=$1; shift; while read -r l; do printf '{"tag":"%s","round":%d,"r":%s}\n' "$jq_tag" "$round" "$l"; done; }

for (( round = 1; round <= ROUNDS; round++ )); do
  echo "== round $round/$ROUNDS" >&2
  if has gemm; then
    for n in 64 128 256 512 1024 2048; do "$F" bench matmul --n $n --json | tag gemm; done >> "$OUT"
    for n in 1024 2048; do "$F" bench matmul --n $n --dtype f64 --json | tag gemm; done >> "$OUT"
    (cd "$WORK/anchors" && OPENBLAS_CORETYPE=Cooperlake ANCHOR_TAG=r$round "$PY" job1_matmul.py \
      --sizes 64,128,256,512,1024,2048 --f64-sizes 1024,2048 > /dev/null)
  fi
  if has elem; then
    for op in add sum softmax; do "$F" bench $op --json | tag elem; done >> "$OUT"
    (cd "$WORK/anchors" && ANCHOR_TAG=r$round "$PY" job7_elementwise.py > /dev/null)
  fi
  if has mlp; then
    "$F" train examples/fashion-mlp.yaml --set output.dir="$WORK/mlp" --json --quiet 2>/dev/null | tail -1 | tag mlp >> "$OUT"
    "$F" bench infer "$WORK/mlp/model.safetensors" --json | tag infer >> "$OUT"
    (cd "$WORK/anchors" && OPENBLAS_CORETYPE=Cooperlake ANCHOR_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
      ANCHOR_TAG=r$round "$PY" job2_mlp.py --opt adam > /dev/null &&
      OPENBLAS_CORETYPE=Cooperlake ANCHOR_TAG=r$round "$PY" job4_infer.py > /dev/null)
  fi
  if has cnn; then
    "$F" train examples/fashion-cnn.yaml --set output.dir="$WORK/cnn" --json --quiet 2>/dev/null | tail -1 | tag cnn >> "$OUT"
    (cd "$WORK/anchors" && ANCHOR_TAG=r$round "$PY" job3_cnn.py > /dev/null)
  fi
done

"$PY" - "$OUT" "$WORK/anchors/results" <<'PY'
import glob, json, os, statistics as st, sys
ours = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
res = {}
for p in glob.glob(os.path.join(sys.argv[2], "*.json")):
    d = json.load(open(p))
    res.setdefault(d["job"], []).append(d["results"])
def med(xs): return st.median(xs) if xs else float("nan")
rows = []
def row(what, f, p, unit, higher=True):
    ratio = (f / p if higher else p / f) if p and f else float("nan")
    rows.append((what, f, p, unit, ratio))
# GEMM
for dt, sizes in (("f32", (64, 128, 256, 512, 1024, 2048)), ("f64", (1024, 2048))):
    for n in sizes:
        f = med([o["r"]["gflops"] for o in ours if o["tag"] == "gemm" and o["r"]["dtype"] == dt and o["r"]["n"] == n])
        tdt = "float32" if dt == "f32" else "float64"
        p = med([r["gflops"] for rs in res.get("job1_matmul", []) for r in rs if r["lib"] == "torch" and r["dtype"] == tdt and r["n"] == n])
        row(f"GEMM {dt} n={n}", f, p, "GFLOP/s")
# elementwise
for op, pop in (("add", "add_out"), ("sum", "sum"), ("softmax", "softmax")):
    f = med([o["r"]["gbps"] for o in ours if o["tag"] == "elem" and o["r"]["op"] == op])
    p = med([r["GBps"] for rs in res.get("job7_elementwise", []) for r in rs if r["lib"] == "torch" and r["op"].startswith(pop)])
    row(f"{op} " + ("4096x1000 rows" if op == "softmax" else "16M float32"), f, p, "GB/s")
# training
for tag, job, key in (("mlp", "job2_mlp_adam", "sec_per_epoch_median"), ("cnn", "job3_cnn", "sec_per_epoch")):
    f = med([o["r"]["seconds_per_epoch"] for o in ours if o["tag"] == tag])
    p = med([rs[key] for rs in res.get(job, [])])
    row(f"{tag} seconds/epoch", f, p, "s", higher=False)
    fa = med([o["r"]["test_accuracy"] for o in ours if o["tag"] == tag])
    pa = med([rs["final_test_acc"] for rs in res.get(job, [])])
    rows.append((f"{tag} test accuracy", fa, pa, "", fa - pa if fa == fa and pa == pa else float("nan")))
for b in (1, 64, 10000):
    f = med([o["r"]["rows_per_s"] for o in ours if o["tag"] == "infer" and o["r"]["batch"] == b])
    p = med([r["rows_per_s"] for rs in res.get("job4_infer", []) for r in rs["rows"] if r["batch"] == b])
    row(f"MLP inference batch {b}", f, p, "rows/s")
print("| measurement | fathom | PyTorch | unit | fathom/PyTorch (accuracy: difference) |")
print("|---|---:|---:|---|---:|")
for what, f, p, unit, ratio in rows:
    if f != f and p != p:
        continue
    print(f"| {what} | {f:.4g} | {p:.4g} | {unit} | {ratio:.3g} |")
PY
