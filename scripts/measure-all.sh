#!/usr/bin/env bash
# measure-all.sh — every figure of docs/PERFORMANCE.md, measured in one run:
# the peers (PyTorch, OpenBLAS, scikit-learn, Gloo-style DDP) and fathom back
# to back, one script after the other, each writing its own log under OUT.
#
#   scripts/measure-all.sh [OUT]            (default /tmp/fathom-measure-DATE)
#
# Parts (PARTS selects; default all, in this order):
#   peers   scripts/compare-peers.sh 3       kernels, MLP/CNN epochs, inference
#   ddp     scripts/compare-ddp.sh 6         2 workers vs PyTorch DDP and vs 1×2
#   quant   scripts/compare-quant.sh         int8 vs float32 and torch dynamic
#   serve   BINARY_OUTPUT=1 scripts/serve_load.sh
#   ml      scripts/compare-ml.sh            logreg, naive Bayes, LinearSVC, MLP
#   predict LAYOUTS="vecdict dict raw snappy" scripts/compare-predict.sh
#   before  scripts/compare-before-after.sh $BEFORE   (BEFORE, default 94c152e)
#   parquet one round of BenchmarkParquetMatrix (the page walker against
#           arrow-go's page reader, docs/inference.md); the default order
#           runs three rounds spread over the hour
# Run it on a quiet machine (it takes about an hour on 2 cores); NICE (default
# -5 as root, 0 otherwise) gives the measured processes priority over
# anything else running.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-/tmp/fathom-measure-$(date +%Y%m%d-%H%M)}
mkdir -p "$out"
parts=${PARTS:-parquet peers ddp quant parquet serve ml predict before parquet}
round=0
before=${BEFORE:-94c152e}
nice_n=${NICE:-0}
if [ "$(id -u)" = 0 ] && [ -z "${NICE:-}" ]; then nice_n=-5; fi
run() { # name, command...
	local name=$1; shift
	local t0=$SECONDS
	echo "== $name: $* ($(date +%H:%M:%S))"
	nice -n "$nice_n" env "$@" >"$out/$name.log" 2>&1
	local rc=$?
	echo "   rc=$rc, $((SECONDS - t0)) s, log $out/$name.log"
}
for p in $parts; do
	case $p in
	peers) run peers bash scripts/compare-peers.sh 3 ;;
	ddp) run ddp bash scripts/compare-ddp.sh 6 ;;
	quant) run quant bash scripts/compare-quant.sh "$out/quant" ;;
	serve) run serve BINARY_OUTPUT=1 bash scripts/serve_load.sh ;;
	ml) run ml bash scripts/compare-ml.sh ;;
	predict) run predict LAYOUTS="vecdict dict raw snappy" bash scripts/compare-predict.sh ;;
	before) run before bash scripts/compare-before-after.sh "$before" ;;
	parquet)
		round=$((round + 1))
		run "parquet-$round" go test -run XXX -count 5 ./data/ \
			-bench 'BenchmarkParquetMatrix/(plain|dict)/(matrix|matrix-arrowpages|columns|columns-arrowpages)$' ;;
	*) echo "measure-all: unknown part $p (parquet peers ddp quant serve ml predict before)" >&2; exit 2 ;;
	esac
done
echo "logs in $out"
