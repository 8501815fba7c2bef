#!/bin/bash
# netns_job.sh - run one fathom worker command on N simulated hosts.
#
#   scripts/netns_job.sh N RATE -- fathom-subcommand args...     (root; needs iproute2)
#
# Brings up ../shared/tools/netcluster.sh with N hosts (network namespaces
# fx-h0..fx-h{N-1} on a bridge, every link shaped to RATE both ways, e.g.
# 1gbit), starts the command once per namespace as rank r of N (RANK,
# WORLD_SIZE, MASTER_ADDR=10.77.0.1 (host 0), a fresh job token, TCP only:
# shared memory does not cross hosts), waits for all, prints rank 0's stdout
# and exits with the first failure. The cluster is always torn down. Every
# rank is bounded by RANK_TIMEOUT (600 s).
#   FATHOM   the binary (default: build ./cmd/fathom)
#   OUT      a directory for each rank's stdout and stderr (default: a temp dir)
# Example (2 hosts at 1 Gbit/s, one epoch of the Fashion-MNIST MLP):
#   scripts/netns_job.sh 2 1gbit -- train examples/fashion-mlp.yaml --json --quiet --set epochs=1
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
N=${1:?usage: netns_job.sh N RATE -- args...}
RATE=${2:?usage: netns_job.sh N RATE -- args...}
shift 2
[[ ${1:-} == -- ]] && shift
NETCLUSTER=${NETCLUSTER:-$ROOT/../shared/tools/netcluster.sh}
RANK_TIMEOUT=${RANK_TIMEOUT:-600}
[[ $EUID -eq 0 ]] || { echo "netns_job: must run as root" >&2; exit 2; }
[[ -x $NETCLUSTER ]] || { echo "netns_job: $NETCLUSTER not found (set NETCLUSTER)" >&2; exit 2; }

WORK=$(mktemp -d /tmp/fathom-netns-job.XXXXXX)
OUT=${OUT:-$WORK/out}
mkdir -p "$OUT"
cleanup() { "$NETCLUSTER" down >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT INT TERM
FATHOM=${FATHOM:-}
if [[ -z $FATHOM ]]; then
  FATHOM=$WORK/fathom
  /usr/local/go/bin/go build -o "$FATHOM" ./cmd/fathom
fi
"$NETCLUSTER" up "$N" "$RATE" >/dev/null
TOKEN=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
PORT=$((29700 + RANDOM % 200))
pids=()
for (( r = 0; r < N; r++ )); do
  ip netns exec "fx-h$r" env RANK=$r WORLD_SIZE=$N LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 \
    MASTER_ADDR=10.77.0.1 MASTER_PORT=$PORT FATHOM_JOB_TOKEN="$TOKEN" FATHOM_SHM=0 \
    timeout -k 5 "$RANK_TIMEOUT" "$FATHOM" "$@" > "$OUT/rank$r.out" 2> "$OUT/rank$r.err" &
  pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || { [[ $rc == 0 ]] && rc=$?; }; done
cat "$OUT/rank0.out"
if (( rc != 0 )); then
  echo "netns_job: a rank failed (exit $rc):" >&2
  tail -n 5 "$OUT"/rank*.err >&2
fi
exit $rc
