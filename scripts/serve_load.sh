#!/usr/bin/env bash
# Load test of `fathom serve` with wrk (Debian's /usr/bin/wrk).
#
#   scripts/serve_load.sh [MODEL]
#
# MODEL is a model file reading 784 features (Fashion-MNIST); without it
# the script trains the Fashion-MNIST MLP for one epoch
# (examples/fashion-mlp.yaml --set epochs=1). It starts `fathom serve` on
# 127.0.0.1 (a free port), then
#   1. batch-1 requests at increasing connection counts (wrk -c, closed
#      loop: each connection sends its next request when the last is
#      answered), reporting requests/s and wrk's p50 and p99 latency;
#      then paced runs near fixed rates (Debian's wrk has no -R: each
#      connection waits PACE_MS before each request, and RATE × PACE_MS
#      connections give about RATE requests/s);
#   2. requests of BATCH_ROWS rows each, reporting rows/s;
# both as JSON and in the protocol's binary tensor data extension;
#   3. `fathom bench infer` on the same model, the in-process rows/s,
#      before and after the load runs.
# Everything stays on the loopback interface; every run is bounded by
# DURATION. Environment:
#   CONNS="1 2 4 8 16 64"     connection counts of the batch-1 runs
#   DURATION=10s              length of each wrk run
#   THREADS=1                 wrk threads (the machine has 2 cores)
#   BATCH_ROWS=64             rows per request of the batched runs
#   BATCH_CONNS="2 4 8"       connection counts of the batched runs
#   RATES="1000 2000 5000"    target requests/s of the paced batch-1 runs
#   PACE_MS=5                 each paced connection's wait before a request
#   SERVE_FLAGS=""            extra flags for fathom serve (--max-delay 0, ...)
#   BINARY_OUTPUT=0           1: binary requests ask for binary answers too
#                             (binary_data_output), not JSON numbers
#   FATHOM=path               a fathom binary (default: go build)
set -euo pipefail

CONNS=${CONNS:-"1 2 4 8 16 64"}
DURATION=${DURATION:-10s}
THREADS=${THREADS:-1}
BATCH_ROWS=${BATCH_ROWS:-64}
BATCH_CONNS=${BATCH_CONNS:-"2 4 8"}
RATES=${RATES:-"1000 2000 5000"}
PACE_MS=${PACE_MS:-5}
SERVE_FLAGS=${SERVE_FLAGS:-}
BINARY_OUTPUT=${BINARY_OUTPUT:-0}
root=$(cd "$(dirname "$0")/.." && pwd)
command -v wrk >/dev/null || { echo "serve_load.sh: needs wrk (apt-get install wrk)" >&2; exit 1; }

work=$(mktemp -d)
server=""
cleanup() {
	if [ -n "$server" ]; then
		kill -TERM "$server" 2>/dev/null || true
		wait "$server" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

fathom=${FATHOM:-}
if [ -z "$fathom" ]; then
	(cd "$root" && go build -o "$work/fathom" ./cmd/fathom)
	fathom=$work/fathom
fi

model=${1:-}
if [ -z "$model" ]; then
	echo "training the Fashion-MNIST MLP for one epoch..." >&2
	(cd "$work" && "$fathom" train "$root/examples/fashion-mlp.yaml" --set epochs=1 --set output.dir="$work/mlp" >/dev/null)
	model=$work/mlp/model.safetensors
fi

# Request bodies: rows of 784 pseudo-random pixels in [0, 1].
body() { # rows file
	awk -v rows="$1" 'BEGIN {
		srand(1)
		printf "{\"inputs\":[{\"name\":\"input\",\"shape\":[%d,784],\"datatype\":\"FP32\",\"data\":[", rows
		for (i = 0; i < rows * 784; i++) printf "%s%.3f", (i ? "," : ""), rand()
		printf "]}]}"
	}' >"$2"
}
# The same rows in the binary tensor data extension: a JSON header, then
# the float32s little-endian; wrk sends the header length with the body.
binbody() { # rows file
	local head
	local params=""
	[ "$BINARY_OUTPUT" = 1 ] && params="\"parameters\":{\"binary_data_output\":true},"
	head="{$params\"inputs\":[{\"name\":\"input\",\"shape\":[$1,784],\"datatype\":\"FP32\",\"parameters\":{\"binary_data_size\":$(( $1 * 784 * 4 ))}}]}"
	printf '%s' "$head" >"$2"
	awk -v rows="$1" 'BEGIN { srand(1); for (i = 0; i < rows * 784; i++) printf "%.3f\n", rand() }' |
		perl -ne 'print pack("f<", $_)' >>"$2"
	echo "${#head}" >"$2.len"
}
body 1 "$work/b1.json"
body "$BATCH_ROWS" "$work/bn.json"
binbody 1 "$work/b1.bin"
binbody "$BATCH_ROWS" "$work/bn.bin"

# The in-process figure, before the load (and again after it: the machine
# is shared, so the two bracket the load runs).
echo "in process, before: fathom bench infer --batches 1,$BATCH_ROWS,10000"
"$fathom" bench infer "$model" --batches "1,$BATCH_ROWS,10000" 2>/dev/null
echo

# shellcheck disable=SC2086
"$fathom" serve "$model" --name mlp --addr 127.0.0.1:0 --json $SERVE_FLAGS >"$work/ready" 2>"$work/serve.log" &
server=$!
for _ in $(seq 100); do
	[ -s "$work/ready" ] && break
	sleep 0.1
done
addr=$(sed -n 's/.*"addr":"\([^"]*\)".*/\1/p' "$work/ready")
[ -n "$addr" ] || { echo "fathom serve did not start:" >&2; cat "$work/serve.log" >&2; exit 1; }
url="http://$addr/v2/models/mlp/infer"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST --data-binary @"$work/b1.json" "$url")
[ "$code" = 200 ] || { echo "a test request got $code" >&2; exit 1; }
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Inference-Header-Content-Length: $(cat "$work/bn.bin.len")" --data-binary @"$work/bn.bin" "$url")
[ "$code" = 200 ] || { echo "a binary test request got $code" >&2; exit 1; }

# run CONNS BODY: one wrk run; prints requests/s, p50, p99, non-2xx count.
run() {
	local out
	local hlen=""
	[ -f "$2.len" ] && hlen=$(cat "$2.len")
	out=$(BODY=$2 HEADER_LENGTH=$hlen PACE_MS=${3:-} wrk -t "$(( $1 < THREADS ? $1 : THREADS ))" -c "$1" -d "$DURATION" --latency -s "$root/scripts/serve_load.lua" "$url")
	local rps p50 p99 bad
	rps=$(awk '/^Requests\/sec/ {print $2}' <<<"$out")
	p50=$(awk '$1 == "50%" {print $2}' <<<"$out")
	p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
	bad=$(awk '/Non-2xx/ {print $NF}' <<<"$out")
	echo "$rps ${p50:-?} ${p99:-?} ${bad:-0}"
}

echo "# fathom serve $SERVE_FLAGS, wrk -t$THREADS -d $DURATION, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
for kind in json bin; do
	echo "batch-1 requests ($kind)"
	printf '%6s %12s %10s %10s %8s\n' conns requests/s p50 p99 non-200
	for c in $CONNS; do
		read -r rps p50 p99 bad < <(run "$c" "$work/b1.$kind")
		printf '%6s %12s %10s %10s %8s\n' "$c" "$rps" "$p50" "$p99" "$bad"
	done
	echo
done
echo "paced batch-1 requests (json): each connection waits $PACE_MS ms before each request"
printf '%6s %6s %12s %10s %10s %8s\n' target conns requests/s p50 p99 non-200
for r in $RATES; do
	c=$(( (r * PACE_MS + 999) / 1000 ))
	read -r rps p50 p99 bad < <(run "$c" "$work/b1.json" "$PACE_MS")
	printf '%6s %6s %12s %10s %10s %8s\n' "$r" "$c" "$rps" "$p50" "$p99" "$bad"
done
echo
for kind in json bin; do
	echo "requests of $BATCH_ROWS rows ($kind)"
	printf '%6s %12s %12s %10s %10s %8s\n' conns requests/s rows/s p50 p99 non-200
	for c in $BATCH_CONNS; do
		read -r rps p50 p99 bad < <(run "$c" "$work/bn.$kind")
		rows=$(awk -v r="$rps" -v n="$BATCH_ROWS" 'BEGIN {printf "%.0f", r * n}')
		printf '%6s %12s %12s %10s %10s %8s\n' "$c" "$rps" "$rows" "$p50" "$p99" "$bad"
	done
	echo
done
echo
echo "batches the server ran (fathom_serve_batch_rows):"
curl -s "http://$addr/metrics" | awk '/^fathom_serve_batch_rows_(sum|count)/ {print "  " $0}'
echo
echo "in process, after: fathom bench infer --batches 1,$BATCH_ROWS,10000"
kill -TERM "$server"
wait "$server" || true
server=""
"$fathom" bench infer "$model" --batches "1,$BATCH_ROWS,10000" 2>/dev/null
