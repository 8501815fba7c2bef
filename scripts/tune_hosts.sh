#!/bin/bash
# tune_hosts.sh - one hyperparameter search on 1 process, 2 processes and 4
# simulated hosts; wall times, and every trial checked against training its
# config alone.
#
#   scripts/tune_hosts.sh [CONFIG] [EPOCHS]     (root for the 4-host run; needs iproute2)
#
# The search: 16 trials, --random optimizer.lr=loguniform(1e-4,1e-2) and
# seed=randint(1,1000) (--seed 1), EPOCHS epochs each (default 2) of CONFIG
# (default examples/fashion-mlp.yaml), run
#   1. in one process, --parallel 2 (the cores);
#   2. as fathom run -n 2 -- fathom tune ... (one trial at a time per process,
#      trials from one queue in the job's store);
#   3. on 4 hosts of scripts/netns_job.sh (network namespaces at 1 Gbit/s,
#      one trial at a time per host) - skipped when not root.
# Then each of the 16 trials is trained alone with fathom train --set ... and
# its weights_sha256 and metric compared with every run's. The simulated hosts
# share this machine's cores: the 4-host run shows that the queue works across
# hosts, not a speed-up.
#   FATHOM  the binary (default: build ./cmd/fathom);  OUT  where the runs go
set -euo pipefail
cd "$(dirname "$0")/.."
CONFIG=${1:-examples/fashion-mlp.yaml}
EPOCHS=${2:-2}
OUT=${OUT:-$(mktemp -d /tmp/fathom-tune-hosts.XXXXXX)}
mkdir -p "$OUT"
FATHOM=${FATHOM:-}
if [[ -z $FATHOM ]]; then
  FATHOM=$OUT/fathom
  /usr/local/go/bin/go build -o "$FATHOM" ./cmd/fathom
fi
SEARCH=(--random 'optimizer.lr=loguniform(1e-4,1e-2)' --random 'seed=randint(1,1000)' --trials 16 --seed 1
  --set "epochs=$EPOCHS" --json --quiet)
CONFIG=$(realpath "$CONFIG")

wall() { # name, command...: runs it, records its wall time
  local name=$1; shift
  local t0 t1
  t0=$(date +%s.%N)
  "$@" > "$OUT/$name.json"
  t1=$(date +%s.%N)
  echo "$name $(echo "$t1 - $t0" | bc)" >> "$OUT/walls.txt"
}
: > "$OUT/walls.txt"
wall one "$FATHOM" tune "$CONFIG" "${SEARCH[@]}" --parallel 2 --out "$OUT/one"
wall two env MASTER_ADDR= FATHOM_JOB_TOKEN= "$FATHOM" run -n 2 -- "$FATHOM" tune "$CONFIG" "${SEARCH[@]}" --out "$OUT/two"
runs=(one two)
if [[ $EUID -eq 0 ]]; then
  wall four env FATHOM="$FATHOM" scripts/netns_job.sh 4 1gbit -- tune "$CONFIG" "${SEARCH[@]}" --parallel 1 --out "$OUT/four"
  runs+=(four)
else
  echo "tune_hosts: not root; the 4-host run is skipped" >&2
fi

# Each trial alone: fathom train with the trial's params.
/usr/bin/python3 - "$OUT" "$FATHOM" "$CONFIG" "$EPOCHS" "${runs[@]}" <<'PY'
import json, subprocess, sys
out, fathom, config, epochs, runs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
walls = dict(l.split() for l in open(f"{out}/walls.txt"))
rows = {r: [json.loads(l) for l in open(f"{out}/{r}/trials.jsonl")] for r in runs}
summ = {r: json.load(open(f"{out}/{r}/summary.json")) for r in runs}
same = {r: 0 for r in runs}
for t in rows["one"]:
    sets = [f"{k}={v}" for k, v in t["params"].items()] + [f"epochs={epochs}", f"output.dir={out}/alone/{t['trial']:03d}"]
    args = [fathom, "train", config, "--json", "--quiet"] + sum((["--set", s] for s in sets), [])
    final = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1])
    for r in runs:
        x = rows[r][t["trial"]]
        if x["weights_sha256"] == final["weights_sha256"] and x["extra"]["test_accuracy"] == final["test_accuracy"]:
            same[r] += 1
print(f"| run | processes | wall s | tune s | trials identical to alone | best trial | best accuracy |")
print(f"|---|---|---|---|---|---|---|")
for r in runs:
    s = summ[r]
    print(f"| {r} | {s['processes']} | {float(walls[r]):.1f} | {s['seconds']:.1f} | {same[r]}/{len(rows[r])} | {s['best']['trial']} | {s['best']['metric']:.4f} |")
PY
echo "runs in $OUT"
