#!/usr/bin/env bash
# compare-before-after.sh — the same measurements from two builds of fathom,
# interleaved round by round on this machine, so a change that moves code
# around can show it costs nothing.
#
#   scripts/compare-before-after.sh BEFORE_REV [ROUNDS]   (default 3 rounds)
#
# Builds BEFORE_REV (in a temporary worktree) and the working tree, then each
# round runs every measurement once with each build, alternating which goes
# first. Prints, per measurement, the medians of both and after ÷ before
# (rates: higher is better; times: lower is better). The MLP/CNN epochs and
# inference need the Fashion-MNIST files (apt-get install
# dataset-fashion-mnist); JOBS selects parts: "gemm elem mlp cnn infer".
set -euo pipefail
cd "$(dirname "$0")/.."
BEFORE=${1:?usage: compare-before-after.sh BEFORE_REV [ROUNDS]}
ROUNDS=${2:-3}
JOBS=${JOBS:-gemm elem mlp cnn infer}

WORK=$(mktemp -d /tmp/fathom-ab.XXXXXX)
cleanup() { git worktree remove --force "$WORK/src" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
git worktree add -q --detach "$WORK/src" "$BEFORE"
(cd "$WORK/src" && go build -o "$WORK/before" ./cmd/fathom)
go build -o "$WORK/after" ./cmd/fathom
OUT=$WORK/ab.jsonl
: > "$OUT"

has() { [[ " $JOBS " == *" $1 "* ]]; }
tag() { local t=$1 b=$2; while read -r l; do printf '{"tag":"%s","build":"%s","r":%s}\n' "$t" "$b" "$l"; done; }

measure() { # build-name binary
  local b=$1 F=$2
  if has gemm; then
    for n in 512 2048; do "$F" bench matmul --n $n --json | tag "gemm f32 n=$n" "$b"; done
    "$F" bench matmul --n 1024 --dtype f64 --json | tag "gemm f64 n=1024" "$b"
  fi
  if has elem; then
    for op in add sum softmax; do "$F" bench $op --json | tag "$op" "$b"; done
  fi
  if has mlp || has infer; then
    "$F" train examples/fashion-mlp.yaml --set output.dir="$WORK/mlp-$b" --json --quiet 2>/dev/null | tail -1 | tag mlp "$b"
  fi
  if has infer; then
    for bs in 1 64 10000; do
      "$F" bench infer "$WORK/mlp-$b/model.safetensors" --batches "$bs" --json | tail -1 | tag "infer batch $bs" "$b"
    done
  fi
  if has cnn; then
    "$F" train examples/fashion-cnn.yaml --set output.dir="$WORK/cnn-$b" --json --quiet 2>/dev/null | tail -1 | tag cnn "$b"
  fi
}

for (( round = 1; round <= ROUNDS; round++ )); do
  echo "== round $round/$ROUNDS" >&2
  if (( round % 2 )); then
    measure before "$WORK/before" >> "$OUT"; measure after "$WORK/after" >> "$OUT"
  else
    measure after "$WORK/after" >> "$OUT"; measure before "$WORK/before" >> "$OUT"
  fi
done

python3 - "$OUT" <<'PY'
import json, statistics as st, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
def value(r):
    # A rate where the record has one (higher is better), else a time.
    for k in ("seconds_per_epoch",):
        if k in r: return k, r[k], False
    for k in ("gflops", "gbps", "rows_per_s", "images_per_second", "rows_per_second", "samples_per_second"):
        if k in r: return k, r[k], True
    return None, None, None
tags = []
for r in rows:
    if r["tag"] not in tags: tags.append(r["tag"])
print(f"{'measurement':<22} {'unit':<18} {'before':>10} {'after':>10} {'after/before':>13}")
for t in tags:
    got = {"before": [], "after": []}
    unit = higher = None
    for r in rows:
        if r["tag"] != t: continue
        k, v, h = value(r["r"])
        if k is None: continue
        unit, higher = k, h
        got[r["build"]].append(v)
    if not got["before"] or not got["after"]:
        print(f"{t:<22} (no comparable field in its JSON)"); continue
    b, a = st.median(got["before"]), st.median(got["after"])
    ratio = a / b if higher else b / a
    print(f"{t:<22} {unit:<18} {b:>10.4g} {a:>10.4g} {ratio:>13.3f}")
print("after/before > 1 means the new build is faster (rates and times alike).")
PY
