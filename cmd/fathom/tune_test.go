package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/train/job"
)

// tuneRow is a line of trials.jsonl.
type tuneRow struct {
	Trial  int                `json:"trial"`
	Params map[string]any     `json:"params"`
	Metric *float64           `json:"metric"`
	Epochs int                `json:"epochs"`
	Status string             `json:"status"`
	Rank   int                `json:"rank"`
	Model  string             `json:"model"`
	Extra  map[string]float64 `json:"extra"`
	Error  string             `json:"error"`
	SHA    string             `json:"weights_sha256"`
}

func readTuneRows(t *testing.T, dir string) []tuneRow {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "trials.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []tuneRow
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r tuneRow
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("trials.jsonl: %v", err)
		}
		rows = append(rows, r)
	}
	return rows
}

func readTuneSummary(t *testing.T, dir string) tuneSummary {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s tuneSummary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// modelSHA is the fingerprint of a model file's weights.
func modelSHA(t *testing.T, path string) string {
	t.Helper()
	m, err := modelfile.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return job.WeightsSHA256(m.Net)
}

// tuneIrisFlags is the search of the tests: 4 trials of the Iris MLP,
// 8 epochs each, over learning rate and seed.
func tuneIrisFlags(out string) tuneFlags {
	return tuneFlags{grid: []string{"optimizer.lr=0.1,0.003", "seed=1,2"}, sets: []string{"epochs=8"}, out: out, quiet: true}
}

// aloneIris trains each trial of tuneIrisFlags alone, as `fathom train
// --set ...` would, and returns its weights' fingerprint and validation
// accuracy by trial.
func aloneIris(t *testing.T) (shas []string, accs []float64) {
	t.Helper()
	for _, lr := range []string{"0.1", "0.003"} {
		for _, seed := range []string{"1", "2"} {
			cfg, err := job.Load("../../examples/iris.yaml", []string{"epochs=8", "optimizer.lr=" + lr, "seed=" + seed,
				"output.dir=" + t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			res, err := job.Run(context.Background(), cfg, job.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			shas = append(shas, res.WeightsSHA256)
			accs = append(accs, res.Epochs[len(res.Epochs)-1].Eval.Accuracy)
		}
	}
	return shas, accs
}

// checkTuneIris checks a search's results against the trials run alone:
// the same accuracy and the same weights, bit for bit.
func checkTuneIris(t *testing.T, dir, what string, shas []string, accs []float64) {
	t.Helper()
	rows := readTuneRows(t, dir)
	if len(rows) != len(shas) {
		t.Fatalf("%s: %d trials, want %d", what, len(rows), len(shas))
	}
	for i, r := range rows {
		if r.Trial != i || r.Status != "done" || r.Epochs != 8 || r.Metric == nil || *r.Metric != accs[i] {
			t.Errorf("%s: trial %d: %+v, want done after 8 epochs with accuracy %v (alone)", what, i, r, accs[i])
			continue
		}
		if got := modelSHA(t, r.Model); got != shas[i] || r.SHA != got {
			t.Errorf("%s: trial %d (%v): weights %s (reported %s), alone %s", what, i, r.Params, got, r.SHA, shas[i])
		}
	}
	s := readTuneSummary(t, dir)
	best := slices.Index(accs, slices.Max(accs))
	if s.Best == nil || int(s.Best["trial"].(float64)) != best || s.Done != len(shas) {
		t.Errorf("%s: summary %+v, want best trial %d", what, s, best)
	} else if got := modelSHA(t, s.BestModel); got != shas[best] {
		t.Errorf("%s: best.safetensors holds weights %s, trial %d's are %s", what, got, best, shas[best])
	}
}

// TestTuneMatchesAlone runs 4 trials two at a time in one process, and
// under `fathom run -n 2` (one queue over the job's store): every trial's
// weights and metric are those of training its config alone, and rank 0
// holds the best model whichever rank trained it.
func TestTuneMatchesAlone(t *testing.T) {
	shas, accs := aloneIris(t)

	dir := t.TempDir()
	f := tuneIrisFlags(dir)
	f.parallel = 2
	if err := runTune(context.Background(), "../../examples/iris.yaml", f, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	checkTuneIris(t, dir, "one process", shas, accs)

	if testing.Short() {
		t.Skip("the two-process run builds the binary and starts processes")
	}
	exe := buildFathom(t)
	dir2 := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "run", "-n", "2", "--", exe, "tune", "../../examples/iris.yaml",
		"--grid", "optimizer.lr=0.1,0.003", "--grid", "seed=1,2", "--set", "epochs=8", "--out", dir2, "--json")
	cmd.Env = append(os.Environ(), "MASTER_ADDR=", "FATHOM_JOB_TOKEN=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("fathom run -n 2 -- fathom tune: %v\nstderr:\n%s", err, stderr.String())
	}
	checkTuneIris(t, dir2, "two processes", shas, accs)
	if s := readTuneSummary(t, dir2); s.Processes != 2 {
		t.Errorf("summary: %d processes, want 2", s.Processes)
	}
	ranks := map[int]bool{}
	for _, r := range readTuneRows(t, dir2) {
		ranks[r.Rank] = true
	}
	if len(ranks) != 2 {
		t.Logf("all 4 trials ran on rank(s) %v (the queue hands trials to whichever asks first)", ranks)
	}
}

// TestTuneASHA checks that stopped trials stop at a rung and the best
// model is a completed trial's.
func TestTuneASHA(t *testing.T) {
	dir := t.TempDir()
	f := tuneFlags{random: []string{"optimizer.lr=loguniform(1e-4,0.3)"}, n: 8, seed: 3, sets: []string{"epochs=9"},
		asha: true, ashaMin: 1, ashaEta: 3, out: dir, quiet: true, parallel: 2}
	if err := runTune(context.Background(), "../../examples/iris.yaml", f, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	rows := readTuneRows(t, dir)
	stopped := 0
	for _, r := range rows {
		switch r.Status {
		case "stopped":
			stopped++
			if r.Epochs != 1 && r.Epochs != 3 {
				t.Errorf("trial %d stopped after %d epochs, not at a rung (1, 3)", r.Trial, r.Epochs)
			}
			if r.Model != "" {
				t.Errorf("stopped trial %d names a model", r.Trial)
			}
		case "done":
			if r.Epochs != 9 {
				t.Errorf("trial %d done after %d epochs", r.Trial, r.Epochs)
			}
		default:
			t.Errorf("trial %d: %s", r.Trial, r.Status)
		}
	}
	s := readTuneSummary(t, dir)
	if stopped == 0 || s.Stopped != stopped || s.Done+s.Stopped != 8 {
		t.Errorf("%d stopped of 8 (summary %+v): ASHA stopped none", stopped, s)
	}
	if _, err := os.Stat(s.BestModel); err != nil {
		t.Error(err)
	}
}

// TestTuneMixedPrecisionOneAtATime: trials that train with precision bf16
// (a process-wide switch) run one at a time whatever --parallel says.
func TestTuneMixedPrecisionOneAtATime(t *testing.T) {
	dir := t.TempDir()
	f := tuneFlags{grid: []string{"precision=float32,bf16"}, sets: []string{"epochs=2"}, out: dir, quiet: true, parallel: 2}
	var stderr strings.Builder
	if err := runTune(context.Background(), "../../examples/iris.yaml", f, io.Discard, &stderr); err != nil {
		t.Fatal(err)
	}
	if s := readTuneSummary(t, dir); s.Parallel != 1 || s.Done != 2 {
		t.Errorf("summary: parallel %d, %d done; want 1 and 2", s.Parallel, s.Done)
	}
	if !strings.Contains(stderr.String(), "one trial at a time") {
		t.Errorf("stderr does not say why: %q", stderr.String())
	}
}
