#!/bin/bash
# loopback_bench.sh - fathom all-reduce (TCP and shared memory) against the
# Gloo peer (PyTorch's collbench.py, when python3-torch is installed) on one
# host, interleaved so both see the same machine load.
#
#   comm/testdata/loopback_bench.sh [OUT_CSV]
#
# Env: WORLDS ("2 4"), SIZES (4KB,1MB,16MB,64MB,256MB), REPS (3), ITERS (10),
#      FATHOM (prebuilt binary), COLLBENCH (path to collbench.py).
# CSV columns: impl,transport,world,rep,size_bytes,latency_us,algbw_GBps,busbw_GBps
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
WORLDS=${WORLDS:-2 4}
SIZES=${SIZES:-4KB,1MB,16MB,64MB,256MB}
REPS=${REPS:-3}
ITERS=${ITERS:-10}
OUT=${1:-/tmp/fathom-loopback.csv}
COLLBENCH=${COLLBENCH:-$ROOT/../shared/anchors/dist/collbench.py}
WORK=$(mktemp -d /tmp/fathom-lo.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
FATHOM=${FATHOM:-}
if [[ -z $FATHOM ]]; then
  FATHOM=$WORK/fathom
  /usr/local/go/bin/go build -o "$FATHOM" ./cmd/fathom || exit 1
fi
have_torch=0
/usr/bin/python3 -c 'import torch.distributed' 2>/dev/null && [[ -f $COLLBENCH ]] && have_torch=1
# collbench sizes use K/M suffixes
GSIZES=$(echo "$SIZES" | sed 's/KB/K/g; s/MB/M/g; s/GB/G/g')
echo "impl,transport,world,rep,size_bytes,latency_us,algbw_GBps,busbw_GBps" > "$WORK/out.csv"
port=29800
for rep in $(seq 1 "$REPS"); do
  for n in $WORLDS; do
    for tr in shm tcp; do
      timeout -k 5 600 "$FATHOM" bench allreduce --local "$n" --transport "$tr" --size "$SIZES" \
        --iters "$ITERS" --json 2>"$WORK/err" | /usr/bin/python3 -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    print("fathom,%s,%d,%s,%d,%.2f,%.4f,%.4f" % (sys.argv[1], r["world"], sys.argv[2], r["size"], r["latency_us"], r["algbw_GBps"], r["busbw_GBps"]))
' "$tr" "$rep" >> "$WORK/out.csv" || { echo "fathom n=$n $tr failed:"; cat "$WORK/err"; }
    done
    if (( have_torch )); then
      port=$((port + 1))
      (cd "$WORK" && timeout -k 5 900 /usr/bin/python3 "$COLLBENCH" --spawn --world "$n" --port "$port" --ops allreduce \
        --sizes "$GSIZES" --min-iters "$ITERS" --max-iters "$ITERS" --out "$WORK/gloo.json" >/dev/null 2>&1) &&
      /usr/bin/python3 -c '
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print("gloo,tcp,%d,%s,%d,%.2f,%.4f,%.4f" % (r["world"], sys.argv[2], r["size_bytes"], r["lat_median_s"]*1e6, r["algbw_GBps"], r["busbw_GBps"]))
' "$WORK/gloo.json" "$rep" >> "$WORK/out.csv"
    fi
  done
done
cp "$WORK/out.csv" "$OUT"
# medians over repetitions
/usr/bin/python3 - "$OUT" <<'PY'
import csv, statistics, sys, collections
rows = list(csv.DictReader(open(sys.argv[1])))
med = collections.defaultdict(list)
for r in rows:
    med[(int(r["world"]), int(r["size_bytes"]), r["impl"] + "/" + r["transport"])].append(r)
print("%-5s %-10s %-12s %12s %10s %5s" % ("world", "size", "impl", "latency_ms", "busbw", "reps"))
for k in sorted(med):
    v = med[k]
    print("%-5d %-10d %-12s %12.3f %10.3f %5d" % (k[0], k[1], k[2], statistics.median(float(x["latency_us"]) for x in v) / 1e3,
          statistics.median(float(x["busbw_GBps"]) for x in v), len(v)))
PY
echo "loopback_bench: wrote $OUT"
