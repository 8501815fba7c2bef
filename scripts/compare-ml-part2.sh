#!/usr/bin/env bash
# compare-ml-part2.sh — fathom's KMeans and PCA against scikit-learn on
# Fashion-MNIST (60 000 × 784, pixels/255), back to back on this machine:
# the figures that count are the time ratios and the quality differences.
#
#   scripts/compare-ml-part2.sh            (REPEATS=3 fits each, medians)
#
# Sections, each peer run next to its fathom run:
#   kmeans_init  both sides from the same 10 starting centers (sklearn's
#                kmeans_plusplus(X, 10, random_state=0), the start of
#                job5_sklearn.py's KMeans): sklearn lloyd, max_iter 100,
#                against `fathom bench ml kmeans --init-centers`
#                (target: inertia within 0.1%, time ≤ 0.5× job5's KMeans,
#                whose time includes its k-means++ init, and ≤ 0.5× the
#                lloyd run from the given centers)
#   seeds        fathom's own k-means|| init, seeds 0..4, against sklearn
#                k-means++ random_state 0..4 (target: no worse on average)
#   pca          fathom PCA k=50 against PCA(50, randomized) and (full)
#                (target: ≤ 0.5× randomized's time, explained variance
#                ratios within 1e-4)
#
# Env: PY (default /usr/bin/python3), ANCHORS (default
# ../shared/anchors/python), REPEATS (3), SECTIONS ("kmeans seeds pca"). The peer runs with
# OPENBLAS_CORETYPE=Cooperlake (AVX-512 kernels). Needs python3-sklearn and
# dataset-fashion-mnist.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
ANCHORS=${ANCHORS:-$ROOT/../shared/anchors/python}
PY=${PY:-/usr/bin/python3}
REPEATS=${REPEATS:-3}
SECTIONS=" ${SECTIONS:-kmeans seeds pca} "
[[ -d $ANCHORS ]] || { echo "compare-ml-part2: $ANCHORS not found" >&2; exit 2; }
"$PY" -c "import sklearn" 2>/dev/null || { echo "compare-ml-part2: $PY cannot import sklearn (apt-get install python3-sklearn)" >&2; exit 2; }

WORK=$(mktemp -d /tmp/fathom-ml2-peers.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
go build -o "$WORK/fathom" ./cmd/fathom
peer() { OPENBLAS_CORETYPE=Cooperlake "$PY" scripts/compare-ml-part2.py --anchors "$ANCHORS" \
  --centers "$WORK/centers.csv" --repeats "$REPEATS" --only "$1" > "$WORK/peer_$2.json"; }
ours() { local out=$1; shift; for _ in $(seq "$REPEATS"); do "$WORK/fathom" bench ml "$@" --json; done > "$WORK/$out.jsonl"; }

if [[ $SECTIONS == *" kmeans "* ]]; then
  echo "== kmeans from sklearn's initial centers" >&2
  peer kmeans_init,kmeans kmeans
  ours kmeans_init kmeans --init-centers "$WORK/centers.csv"
fi
if [[ $SECTIONS == *" seeds "* ]]; then
  echo "== kmeans|| seeds 0..4 against k-means++ random_state 0..4" >&2
  peer kmeans_seeds seeds
  for s in 0 1 2 3 4; do "$WORK/fathom" bench ml kmeans --param seed=$s --json; done > "$WORK/seeds.jsonl"
fi
if [[ $SECTIONS == *" pca "* ]]; then
  echo "== pca 50" >&2
  peer pca_rand,pca_full pca
  ours pca pca
fi

"$PY" - "$WORK" <<'PY'
import json, statistics, sys, os
w = sys.argv[1]
def has(n): return os.path.exists(os.path.join(w, n))
def jl(n): return [json.loads(l) for l in open(os.path.join(w, n)) if l.strip()]
def pj(n): return json.load(open(os.path.join(w, n)))
if has("kmeans_init.jsonl"):
    km, pk = jl("kmeans_init.jsonl"), pj("peer_kmeans.json")
    t = statistics.median(r["fit_seconds"] for r in km)
    ine = km[0]["inertia"]; pi = pk["kmeans_init"]["inertia"]
    print(f"kmeans, same start: fathom {t:.3f} s ({km[0]['iterations']} it), sklearn lloyd {pk['kmeans_init']['sec']:.3f} s "
          f"({pk['kmeans_init']['n_iter']} it), job5 KMeans (k-means++ incl.) {pk['kmeans']['sec']:.3f} s")
    print(f"  each fit: fathom {[round(r['fit_seconds'], 2) for r in km]}, sklearn lloyd {[round(v, 2) for v in pk['kmeans_init']['secs']]}, "
          f"job5 {[round(v, 2) for v in pk['kmeans']['secs']]}")
    print(f"  time ratio vs job5 {t/pk['kmeans']['sec']:.3f}, vs lloyd from C0 {t/pk['kmeans_init']['sec']:.3f} (target ≤ 0.5)")
    print(f"  inertia fathom {ine:.6f}, sklearn {pi:.6f}, relative difference {abs(ine-pi)/pi:.2e} (target ≤ 1e-3)")
    print(f"  sklearn's KMeans(random_state=0) starts from C0: {pk['kmeans']['init_is_kmeans_plusplus_rs0']}")
if has("seeds.jsonl"):
    sd, ps = jl("seeds.jsonl"), pj("peer_seeds.json")["kmeans_seeds"]
    fi = [r["inertia"] for r in sd]
    print(f"kmeans|| seeds 0..4: fathom inertia {[round(v) for v in fi]} mean {statistics.mean(fi):.0f}; "
          f"sklearn k-means++ {[round(v) for v in ps]} mean {statistics.mean(ps):.0f}; "
          f"ratio of means {statistics.mean(fi)/statistics.mean(ps):.5f} (target ≤ 1); fit s {[round(r['fit_seconds'],2) for r in sd]}")
if has("pca.jsonl"):
    pc, pp = jl("pca.jsonl"), pj("peer_pca.json")
    t = statistics.median(r["fit_seconds"] for r in pc)
    ev = pc[0]["explained_variance_ratio_sum"]
    print(f"pca 50: fathom {t:.3f} s, sklearn randomized {pp['pca_rand']['sec']:.3f} s, full {pp['pca_full']['sec']:.3f} s; "
          f"ratio vs randomized {t/pp['pca_rand']['sec']:.3f} (target ≤ 0.5)")
    print(f"  each fit: fathom {[round(r['fit_seconds'], 2) for r in pc]}, sklearn randomized {[round(v, 2) for v in pp['pca_rand']['secs']]}, "
          f"full {[round(v, 2) for v in pp['pca_full']['secs']]}")
    print(f"  explained variance ratio sum: fathom {ev:.7f}, sklearn randomized {pp['pca_rand']['explained_variance_ratio_sum']:.7f} "
          f"(diff {abs(ev-pp['pca_rand']['explained_variance_ratio_sum']):.1e}), full {pp['pca_full']['explained_variance_ratio_sum']:.7f} "
          f"(diff {abs(ev-pp['pca_full']['explained_variance_ratio_sum']):.1e}); target ≤ 1e-4")
PY
