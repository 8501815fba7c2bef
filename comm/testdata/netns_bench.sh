#!/bin/bash
# netns_bench.sh - ring vs naive all-reduce across 4 simulated hosts.
#
#   comm/testdata/netns_bench.sh [OUT_CSV]      (root; needs iproute2)
#
# Builds fathom, brings up ../shared/tools/netcluster.sh with N hosts (network
# namespaces fx-h0..fx-h{N-1} on a bridge, every link shaped to RATE), runs
# `fathom bench allreduce` with one rank per namespace for each algorithm,
# writes one CSV row per (algo, size) and always tears the cluster down.
# Every rank is bounded by `timeout`; the whole script by the sum of those.
# Env: N (4), RATE (1gbit), SIZES (1MB,16MB,64MB), ALGOS (ring naive),
#      ITERS (8), NETCLUSTER (path to netcluster.sh), FATHOM (prebuilt binary),
#      CHECK=1 to fail unless, at the largest size, ring busbw >= MIN_RING of
#      the link rate (0.85) and naive takes >= MIN_NAIVE_X times ring's time (2.5);
#      the thresholds sit below the measured 0.94 and 4.0 to absorb noise.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
N=${N:-4}
RATE=${RATE:-1gbit}
SIZES=${SIZES:-1MB,16MB,64MB}
ALGOS=${ALGOS:-ring naive}
ITERS=${ITERS:-8}
OUT=${1:-/tmp/fathom-netns/netns_${RATE}_n${N}.csv}
NETCLUSTER=${NETCLUSTER:-$ROOT/../shared/tools/netcluster.sh}
RANK_TIMEOUT=${RANK_TIMEOUT:-300}

[[ $EUID -eq 0 ]] || { echo "netns_bench: must run as root" >&2; exit 2; }
command -v ip >/dev/null || { echo "netns_bench: iproute2 (ip) not installed" >&2; exit 2; }
[[ -x $NETCLUSTER ]] || { echo "netns_bench: $NETCLUSTER not found (set NETCLUSTER)" >&2; exit 2; }

WORK=$(mktemp -d /tmp/fathom-netns.XXXXXX)
cleanup() {
  "$NETCLUSTER" down >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

FATHOM=${FATHOM:-}
if [[ -z $FATHOM ]]; then
  FATHOM=$WORK/fathom
  (cd "$ROOT" && /usr/local/go/bin/go build -o "$FATHOM" ./cmd/fathom)
fi

"$NETCLUSTER" up "$N" "$RATE"
if command -v ping >/dev/null; then ip netns exec fx-h0 ping -c 2 -i 0.2 -W 1 "10.77.0.$N" >/dev/null; fi

rate_gbps() {  # link rate in GB/s (1e9 bytes) for the busbw/link column
  local r=${RATE,,} num unit
  num=${r%%[a-z]*}; unit=${r#"$num"}
  case $unit in
    gbit) awk -v n="$num" 'BEGIN{print n/8}';; mbit) awk -v n="$num" 'BEGIN{print n/8000}';; *) echo 0;;
  esac
}
LINK=$(rate_gbps)

mkdir -p "$(dirname "$OUT")"
TMPCSV=$WORK/out.csv
echo "algo,world,rate,size_bytes,latency_us,algbw_GBps,busbw_GBps,busbw_over_link" > "$TMPCSV"
TOKEN=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
PORT=29650
for algo in $ALGOS; do
  PORT=$((PORT + 1))
  pids=()
  for (( r = 0; r < N; r++ )); do
    ip netns exec "fx-h$r" env RANK=$r WORLD_SIZE=$N LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 \
      MASTER_ADDR=10.77.0.1 MASTER_PORT=$PORT FATHOM_JOB_TOKEN="$TOKEN" FATHOM_SHM=0 FATHOM_TIMEOUT=120s \
      timeout -k 5 "$RANK_TIMEOUT" "$FATHOM" bench allreduce --size "$SIZES" --algo "$algo" \
      --iters "$ITERS" --warmup 2 --json > "$WORK/rank$r.$algo.out" 2> "$WORK/rank$r.$algo.err" &
    pids+=($!)
  done
  rc=0
  for p in "${pids[@]}"; do wait "$p" || rc=$?; done
  if (( rc != 0 )); then
    echo "netns_bench: $algo failed (exit $rc):" >&2
    tail -n 5 "$WORK"/rank*."$algo".err >&2
    exit 1
  fi
  # one JSON line per size from rank 0 (flat JSON: pull fields with sed)
  while read -r line; do
    field() { printf '%s' "$line" | sed -n "s/.*\"$1\":\([^,}]*\).*/\1/p"; }
    world=$(field world); size=$(field size); lat=$(field latency_us)
    algbw=$(field algbw_GBps); busbw=$(field busbw_GBps)
    awk -v a="$algo" -v w="$world" -v r="$RATE" -v s="$size" -v l="$lat" -v ab="$algbw" -v bb="$busbw" -v link="$LINK" \
      'BEGIN { printf "%s,%d,%s,%d,%.1f,%.4f,%.4f,%.3f\n", a, w, r, s, l, ab, bb, (link > 0 ? bb / link : 0) }' >> "$TMPCSV"
  done < "$WORK/rank0.$algo.out"
done
mv "$TMPCSV" "$OUT"
if command -v column >/dev/null; then column -s, -t < "$OUT"; else cat "$OUT"; fi
echo "netns_bench: wrote $OUT"

if [[ ${CHECK:-0} == 1 ]]; then
  awk -F, -v minring="${MIN_RING:-0.85}" -v minx="${MIN_NAIVE_X:-2.5}" '
    NR > 1 { if ($4 + 0 >= big) big = $4 + 0; lat[$1 "," $4] = $5; ratio[$1 "," $4] = $8 }
    END {
      r = ratio["ring," big]; rl = lat["ring," big]; nl = lat["naive," big]
      if (r == "" || rl == "") { print "netns_bench: CHECK: no ring result"; exit 1 }
      printf "netns_bench: CHECK at %d bytes: ring busbw/link %.3f (min %.2f)", big, r, minring
      if (nl != "") printf ", naive/ring time %.2fx (min %.1f)", nl / rl, minx
      printf "\n"
      if (r + 0 < minring) exit 1
      if (nl != "" && nl / rl < minx) exit 1
    }' "$OUT"
fi
