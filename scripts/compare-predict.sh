#!/usr/bin/env bash
# The scale run of docs/inference.md: `fathom run -n 2 -- fathom predict`
# over 20 Parquet partitions of 1M Fashion-MNIST-like rows against
# `fathom bench infer --batches 10000` on the same model, interleaved
# (bench, predict, bench, predict, ..., bench) so that both see the same
# machine; prints each run and the median ratio of predict's rows/s to
# the bench's (each predict run against the mean of the benches around it).
#
#   scripts/compare-predict.sh [MODEL]
#
# MODEL reads 784 features (Fashion-MNIST); without it the script trains
# the MLP of examples/fashion-mlp.yaml for one epoch. Data sets are
# generated once under WORK (go test ./infer -run TestGeneratePartitions).
# Environment:
#   WORK=/tmp/compare-predict   data, outputs and the binary
#   LAYOUTS="dict snappy"       any of: dict (784 float32 columns,
#                               dictionary-encoded, Snappy: how PyArrow and
#                               Spark write them by default), snappy (the
#                               same as PLAIN pages), raw (PLAIN,
#                               uncompressed), vector (one list<float32>
#                               column "image", Snappy), vecdict (the
#                               same, dictionary-encoded)
#   RUNS=3                      predict runs per layout
#   THREADS=auto                --threads-per-worker of fathom run
#   FATHOM=path                 a fathom binary (default: go build)
# Needs the Debian package dataset-fashion-mnist (the generator's images).
set -euo pipefail

WORK=${WORK:-/tmp/compare-predict}
LAYOUTS=${LAYOUTS:-dict snappy}
RUNS=${RUNS:-3}
THREADS=${THREADS:-auto}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)

fathom=${FATHOM:-}
if [ -z "$fathom" ]; then
	(cd "$root" && go build -o "$WORK/fathom" ./cmd/fathom)
	fathom=$WORK/fathom
fi

model=${1:-}
if [ -z "$model" ]; then
	model=$WORK/mlp/model.safetensors
	if [ ! -f "$model" ]; then
		echo "training the Fashion-MNIST MLP for one epoch..." >&2
		(cd "$WORK" && "$fathom" train "$root/examples/fashion-mlp.yaml" --set epochs=1 --set output.dir="$WORK/mlp" >/dev/null)
	fi
fi

gen() { # layout dir
	local flags=""
	case $1 in
	raw) flags="-infer.gen.uncompressed" ;;
	vector) flags="-infer.gen.vector" ;;
	dict) flags="-infer.gen.dict" ;;
	vecdict) flags="-infer.gen.vector -infer.gen.dict" ;;
	esac
	if [ ! -f "$2/part=19/data.parquet" ]; then
		echo "generating $1 partitions in $2..." >&2
		rm -rf "$2"
		(cd "$root" && go test ./infer -run TestGeneratePartitions -count=1 -infer.gen "$2" $flags >/dev/null)
	fi
}

bench() {
	"$fathom" bench infer "$model" --batches 10000 --json 2>/dev/null |
		sed -n 's/.*"rows_per_s":\([0-9.]*\).*/\1/p' | tail -1
}

predict() { # dir -> "rows_per_second peak_rss_kb"
	rm -rf "$WORK/out"
	local log=$WORK/predict.log
	/usr/bin/time -f "rss_kb %M" -o "$WORK/time.txt" \
		"$fathom" run -n 2 --threads-per-worker "$THREADS" -- \
		"$fathom" predict "$model" "$1" --out "$WORK/out" --keep id >"$log" 2>&1
	local rate rows
	rate=$(sed -n 's/.*"rows_per_second":\([0-9.]*\).*/\1/p' "$log" | head -1)
	rows=$(sed -n 's/.*"rows":\([0-9]*\),.*/\1/p' "$log" | head -1)
	if [ "$rows" != 1000000 ]; then
		echo "predict scored $rows rows, want 1000000; see $log" >&2
		exit 1
	fi
	echo "$rate $(sed -n 's/rss_kb //p' "$WORK/time.txt")"
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

for layout in $LAYOUTS; do
	dir=$WORK/parts-$layout
	gen "$layout" "$dir"
	# Into the page cache first (this machine keeps only a few GB of it):
	# the runs compare decoding and scoring, not the disk.
	cat "$dir"/*/*.parquet >/dev/null
	ratios=()
	b0=$(bench)
	for r in $(seq 1 "$RUNS"); do
		res=$(predict "$dir")
		read -r rate rss <<<"$res"
		b1=$(bench)
		ratio=$(awk -v p="$rate" -v a="$b0" -v b="$b1" 'BEGIN {printf "%.3f", 2*p/(a+b)}')
		printf '%-7s run %d: predict %8.0f rows/s (peak RSS of the largest process %d MB)  bench infer %8.0f / %8.0f rows/s  ratio %s  load %s\n' \
			"$layout" "$r" "$rate" $((rss / 1024)) "$b0" "$b1" "$ratio" "$(cut -d' ' -f1 /proc/loadavg)"
		ratios+=("$ratio")
		b0=$b1
	done
	printf '%-7s median ratio %s over %d runs\n' "$layout" "$(printf '%s\n' "${ratios[@]}" | median)" "$RUNS"
done
rm -rf "$WORK/out"
