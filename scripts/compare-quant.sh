#!/usr/bin/env bash
# Int8 inference, fathom against fathom float32 and PyTorch's dynamic int8, in
# one run (see docs/compression.md for figures):
#   - trains the Fashion-MNIST MLP (5 epochs) and CNN (1 epoch) of examples/,
#     unless MLP=... and CNN=... name trained model files;
#   - quantizes them (dynamic; the CNN also static, percentile observer);
#   - prints test accuracy of each and rows/s at batch 64 and 10000 for fathom
#     float32, fathom int8 (dynamic and static), torch float32 and torch
#     quantize_dynamic (MLP), interleaved over ROUNDS rounds, medians.
# Usage: scripts/compare-quant.sh [OUTDIR]   (THREADS=2 ROUNDS=3 MLP= CNN=)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-$(mktemp -d /tmp/compare-quant.XXXXXX)}
threads=${THREADS:-2}
rounds=${ROUNDS:-3}
mkdir -p "$out"
go build -o "$out/fathom" ./cmd/fathom
f="$out/fathom"
mlp=${MLP:-}
cnn=${CNN:-}
if [ -z "$mlp" ]; then
	"$f" train examples/fashion-mlp.yaml --set output.dir="$out/mlp" >"$out/train-mlp.log"
	mlp="$out/mlp/model.safetensors"
fi
if [ -z "$cnn" ]; then
	"$f" train examples/fashion-cnn.yaml --set output.dir="$out/cnn" >"$out/train-cnn.log"
	cnn="$out/cnn/model.safetensors"
fi
"$f" quantize "$mlp" --out "$out/mlp-int8.safetensors"
"$f" quantize "$mlp" --mode static --calibrate fashion-mnist --observer percentile --out "$out/mlp-int8-static.safetensors"
"$f" quantize "$cnn" --out "$out/cnn-int8.safetensors"
"$f" quantize "$cnn" --mode static --calibrate fashion-mnist --observer percentile --out "$out/cnn-int8-static.safetensors"
for m in "$mlp" "$out/mlp-int8.safetensors" "$out/mlp-int8-static.safetensors" \
	"$cnn" "$out/cnn-int8.safetensors" "$out/cnn-int8-static.safetensors"; do
	"$f" eval "$m" --data fashion-mnist
done
/usr/bin/python3 scripts/compare_quant.py --fathom "$f" --float "$mlp" --int8 "$out/mlp-int8.safetensors" \
	--int8-static "$out/mlp-int8-static.safetensors" --cnn "$cnn" --cnn-int8 "$out/cnn-int8.safetensors" \
	--cnn-int8-static "$out/cnn-int8-static.safetensors" --threads "$threads" --rounds "$rounds"
