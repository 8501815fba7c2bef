#!/usr/bin/env bash
# compare-ml.sh — `fathom bench ml` and scikit-learn (job5_sklearn.py) on
# Fashion-MNIST (60 000 × 784 training rows, 10 000 test rows), back to back
# on this machine, so the figure that counts is the time ratio.
#
#   scripts/compare-ml.sh [ALGO...]     (default: logreg gnb linsvc mlp)
#
# Env: ROWS="linsvc=20000 mlp=10000" fits those on the first N training rows
# (both sides); PY (default /usr/bin/python3); ANCHORS (default
# ../shared/anchors/python). The peer runs at its best: OpenBLAS with
# OPENBLAS_CORETYPE=Cooperlake (AVX-512 kernels). Needs python3-sklearn and
# dataset-fashion-mnist. sklearn's LinearSVC takes minutes on all rows (435 s
# measured, not converged at max_iter=1000); the anchors' table
# (../shared/anchors/python/RESULTS.md) also has ROWS="linsvc=20000 mlp=10000".
# logreg and linsvc use regParam = 1/rows, sklearn's C = 1 on the rows fit.
#
# Targets of issue 10 (fathom time / sklearn time, accuracy):
#   logreg ≤ 0.5 with accuracy ≥ sklearn's; gnb ≤ 0.5;
#   linsvc ≤ 0.1 with accuracy within 0.5 point; mlp ≤ 0.25 with accuracy ≥ 85%.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
ALGOS=${*:-logreg gnb linsvc mlp}
ANCHORS=${ANCHORS:-$ROOT/../shared/anchors/python}
PY=${PY:-/usr/bin/python3}
ROWS=${ROWS:-}
[[ -d $ANCHORS ]] || { echo "compare-ml: $ANCHORS not found" >&2; exit 2; }
"$PY" -c "import sklearn" 2>/dev/null || { echo "compare-ml: $PY cannot import sklearn (apt-get install python3-sklearn)" >&2; exit 2; }

WORK=$(mktemp -d /tmp/fathom-ml-peers.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cp -r "$ANCHORS" "$WORK/anchors"
rm -rf "$WORK/anchors/results"; mkdir -p "$WORK/anchors/results"
go build -o "$WORK/fathom" ./cmd/fathom
OUT=$WORK/fathom.jsonl
: > "$OUT"

rows_of() { for kv in $ROWS; do [[ ${kv%%=*} == "$1" ]] && { echo "${kv#*=}"; return; }; done; echo 0; }

for a in $ALGOS; do
  n=$(rows_of "$a")
  echo "== fathom bench ml $a (rows ${n/#0/all})" >&2
  "$WORK/fathom" bench ml "$a" --rows "$n" --json | tee -a "$OUT" >&2
  subset=""
  [[ $n != 0 ]] && subset="--subset $a=$n"
  echo "== sklearn $a" >&2
  # shellcheck disable=SC2086
  (cd "$WORK/anchors" && OPENBLAS_CORETYPE=Cooperlake ANCHOR_NO_WAIT=1 "$PY" job5_sklearn.py --only "$a" $subset >&2)
done

"$PY" - "$OUT" "$WORK/anchors/results" <<'PY'
import glob, json, os, sys
ours = {}
for l in open(sys.argv[1]):
    if l.strip():
        r = json.loads(l)
        ours[r["algo"]] = r
peer = {}
for p in glob.glob(os.path.join(sys.argv[2], "job5_sklearn_*.json")):
    r = json.load(open(p))["results"]
    peer[r["estimator"]] = r
target = {"logreg": 0.5, "gnb": 0.5, "linsvc": 0.1, "mlp": 0.25}
print(f"{'algo':8s} {'rows':>6s} {'fathom s':>9s} {'sklearn s':>9s} {'ratio':>7s} {'target':>6s} "
      f"{'fathom acc':>10s} {'sklearn acc':>11s} {'iters f/s':>10s}")
for a, r in ours.items():
    if r.get("skipped"):
        print(f"{a:8s} skipped: {r.get('reason')}")
        continue
    p = peer.get(a, {})
    ps = p.get("sec", float("nan"))
    ratio = r["fit_seconds"] / ps if ps == ps and ps else float("nan")
    it = f"{r.get('iterations', '-')}/{p.get('n_iter', '-')}"
    print(f"{a:8s} {r['train_rows']:6d} {r['fit_seconds']:9.3f} {ps:9.3f} {ratio:7.3f} {target.get(a, float('nan')):6.2f} "
          f"{r.get('test_accuracy', float('nan')):10.4f} {p.get('test_acc', float('nan')):11.4f} {it:>10s}")
PY
