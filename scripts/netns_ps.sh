#!/bin/bash
# netns_ps.sh - ring DDP against parameter servers on 4 simulated hosts.
#
#   scripts/netns_ps.sh [REPS]          (root; needs iproute2)
#
# Brings up 4 hosts at 1 Gbit/s (a copy of ../shared/tools/netcluster.sh
# with its own namespace prefix "fp" and subnet 10.78.0.0/24, so that it
# never touches another job's fx-* cluster) and trains the Fashion-MNIST MLP
# (examples/fashion-mlp.yaml, batch 64 global, 1 epoch) as
#   ring      4 data-parallel workers, one per host (ring all-reduce)
#   ps1       4 workers + 1 parameter server on host 0 (5 ranks)
#   ps4       4 workers + 4 servers, one per host (8 ranks), the
#             parameters sharded over all of them
# Rank r runs on host r mod 4, so rank 0 (worker 0) and the servers' rank
# 4.. are spread as described. Prints and writes ps/testdata/results/
# netns_ps_1gbit.csv: config, rep, ranks, seconds per epoch, steps per
# epoch, ms per step, test accuracy. Every rank is bounded by RANK_TIMEOUT.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
REPS=${1:-2}
RATE=${RATE:-1gbit}
HOSTS=4
RANK_TIMEOUT=${RANK_TIMEOUT:-900}
[[ $EUID -eq 0 ]] || { echo "netns_ps: must run as root" >&2; exit 2; }
WORK=$(mktemp -d /tmp/fathom-netns-ps.XXXXXX)
NETCLUSTER=$WORK/netcluster.sh
sed -e 's/^PREFIX=fx$/PREFIX=fp/' -e 's/^SUBNET=10.77.0$/SUBNET=10.78.0/' "$ROOT/../shared/tools/netcluster.sh" > "$NETCLUSTER"
chmod +x "$NETCLUSTER"
grep -q '^PREFIX=fp$' "$NETCLUSTER" || { echo "netns_ps: could not re-prefix netcluster.sh" >&2; exit 2; }
cleanup() { "$NETCLUSTER" down >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT INT TERM
FATHOM=${FATHOM:-$WORK/fathom}
[[ -x $FATHOM ]] || /usr/local/go/bin/go build -o "$FATHOM" ./cmd/fathom
"$NETCLUSTER" up $HOSTS "$RATE" >/dev/null

# job NAME RANKS SETS...: one training job, rank r on host r mod HOSTS.
job() {
  local name=$1 n=$2; shift 2
  local token port out=$WORK/$name pids=() rc=0 r
  mkdir -p "$out"
  token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
  port=$((29900 + RANDOM % 90))
  for (( r = 0; r < n; r++ )); do
    ip netns exec "fp-h$(( r % HOSTS ))" env RANK=$r WORLD_SIZE=$n LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 \
      MASTER_ADDR=10.78.0.1 MASTER_PORT=$port FATHOM_JOB_TOKEN="$token" FATHOM_SHM=0 \
      timeout -k 5 "$RANK_TIMEOUT" "$FATHOM" train examples/fashion-mlp.yaml --json --quiet \
      --set epochs=1 --set output.dir="$out/run" "$@" > "$out/rank$r.out" 2> "$out/rank$r.err" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || rc=$?; done
  if (( rc != 0 )); then
    echo "netns_ps: $name failed (exit $rc)" >&2
    tail -n 5 "$out"/rank*.err >&2
    return 1
  fi
  tail -n 1 "$out/rank0.out"
}

CSV=ps/testdata/results/netns_ps_${RATE}.csv
mkdir -p "$(dirname "$CSV")"
echo "config,rep,ranks,seconds_per_epoch,steps_per_epoch,ms_per_step,test_accuracy" > "$CSV.tmp"
for (( rep = 1; rep <= REPS; rep++ )); do
  for cfg in ring ps1 ps4; do
    case $cfg in
      ring) n=4; sets=() ;;
      ps1)  n=5; sets=(--set distributed.strategy=ps --set distributed.servers=1) ;;
      ps4)  n=8; sets=(--set distributed.strategy=ps --set distributed.servers=4) ;;
    esac
    line=$(job "$cfg-$rep" $n "${sets[@]}")
    row=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); s=d["seconds_per_epoch"]; steps=-(-60000//64)
print("%.3f,%d,%.2f,%.4f" % (s, steps, 1000*s/steps, d["test_accuracy"]))' "$line")
    echo "$cfg,$rep,$n,$row" | tee -a "$CSV.tmp"
  done
done
mv "$CSV.tmp" "$CSV"
echo "written $CSV"
