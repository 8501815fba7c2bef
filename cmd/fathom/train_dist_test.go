package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/train/job"
)

// checkWeightsSHA checks that a final --json line's weights_sha256 is the
// fingerprint of the model file it names.
func checkWeightsSHA(t *testing.T, final map[string]any) {
	t.Helper()
	path, _ := final["model_path"].(string)
	m, err := modelfile.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := final["weights_sha256"], job.WeightsSHA256(m.Net); got != want {
		t.Errorf("weights_sha256 %v, the model file's weights hash to %s", got, want)
	}
}

// TestTrainWeightsSHA256 checks the fingerprint of a single-process run:
// that of the model file written, the same for the same seed.
func TestTrainWeightsSHA256(t *testing.T) {
	var sums []any
	for range 2 {
		dir := t.TempDir()
		out, err := captureStdout(t, true, func() error {
			return runTrain(context.Background(), "../../examples/iris.yaml", []string{"epochs=5", "output.dir=" + dir}, true, io.Discard)
		})
		if err != nil {
			t.Fatal(err)
		}
		final := lastJSON(t, out)
		checkWeightsSHA(t, final)
		sums = append(sums, final["weights_sha256"])
	}
	if sums[0] != sums[1] {
		t.Errorf("two runs of one config: weights_sha256 %v and %v", sums[0], sums[1])
	}
}

// TestTrainDataParallel runs `fathom run -n 2 -- fathom train
// examples/iris.yaml --json` end to end: two workers train one model on
// loopback; rank 0 alone prints the 60 epoch lines and the final line and
// writes the files, and the model scores as a single process does.
func TestTrainDataParallel(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts processes")
	}
	exe := buildFathom(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	prof := filepath.Join(t.TempDir(), "cpu.prof")
	cmd := exec.CommandContext(ctx, exe, "run", "-n", "2", "--", exe, "train", "../../examples/iris.yaml",
		"--json", "--quiet", "--set", "output.dir="+dir, "--cpuprofile", prof)
	cmd.Env = append(os.Environ(), "MASTER_ADDR=", "FATHOM_JOB_TOKEN=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("fathom run -n 2 -- fathom train: %v\nstderr:\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	for _, l := range lines {
		if !strings.HasPrefix(l, "[0] ") {
			t.Fatalf("a stdout line not from rank 0: %q", l)
		}
	}
	if len(lines) != 61 {
		t.Fatalf("%d lines from rank 0, want 61 (60 epochs and the final line):\n%s", len(lines), stdout.String())
	}
	var final map[string]any
	if err := json.Unmarshal([]byte(strings.TrimPrefix(lines[60], "[0] ")), &final); err != nil {
		t.Fatal(err)
	}
	if acc, _ := final["test_accuracy"].(float64); acc < 0.93 {
		t.Errorf("test accuracy %v, want ≥ 0.93: %v", acc, final)
	}
	checkWeightsSHA(t, final)
	for _, r := range []string{"0", "1"} { // --cpuprofile: one profile per worker
		if st, err := os.Stat(prof + ".rank" + r); err != nil || st.Size() == 0 {
			t.Errorf("rank %s's CPU profile: %v", r, err)
		}
	}
	sec, _ := final["allreduce_seconds"].(float64)
	hidden, ok := final["allreduce_hidden_fraction"].(float64)
	if sec <= 0 || !ok || hidden < 0 || hidden > 1 {
		t.Errorf("allreduce_seconds %v, allreduce_hidden_fraction %v", final["allreduce_seconds"], final["allreduce_hidden_fraction"])
	}
	// With a validation split the test split is scored after training:
	// sharded too, and the result is one process's within rounding.
	vdir := t.TempDir()
	sets := []string{"data.validation=0.2", "epochs=20", "output.dir=" + vdir}
	cmd = exec.CommandContext(ctx, exe, "run", "-n", "2", "--", exe, "train", "../../examples/iris.yaml", "--json", "--quiet",
		"--set", sets[0], "--set", sets[1], "--set", sets[2])
	cmd.Env = append(os.Environ(), "MASTER_ADDR=", "FATHOM_JOB_TOKEN=")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("with a validation split: %v", err)
	}
	lines = strings.Split(strings.TrimSpace(string(out)), "\n")
	var dist map[string]any
	if err := json.Unmarshal([]byte(strings.TrimPrefix(lines[len(lines)-1], "[0] ")), &dist); err != nil {
		t.Fatal(err)
	}
	one, err := captureStdout(t, true, func() error {
		return runTrain(context.Background(), "../../examples/iris.yaml", append(sets[:2:2], "output.dir="+t.TempDir()), true, io.Discard)
	})
	if err != nil {
		t.Fatal(err)
	}
	single := lastJSON(t, one)
	dl, _ := dist["test_loss"].(float64)
	sl, _ := single["test_loss"].(float64)
	if dist["test_accuracy"] != single["test_accuracy"] || math.Abs(dl-sl) > 1e-4*math.Abs(sl) {
		t.Errorf("2 workers: test accuracy %v loss %v; one process: %v and %v", dist["test_accuracy"], dl, single["test_accuracy"], sl)
	}

	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if want := []string{"curves.png", "dashboard.json", "metrics.csv", "model.safetensors"}; !slices.Equal(names, want) {
		t.Errorf("output files %v, want %v", names, want)
	}
}

// TestDeterministicContinuesOnOtherN: with distributed.deterministic, 30
// epochs on 2 workers continued from their checkpoint for 30 more in one
// process end with bitwise the weights of 60 uninterrupted epochs in one
// process, and of 60 on 4 workers.
func TestDeterministicContinuesOnOtherN(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts processes")
	}
	exe := buildFathom(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sets := func(dir string, epochs int) []string {
		return []string{"epochs=" + strconv.Itoa(epochs), "distributed.deterministic=true", "output.checkpoint_every=7", "output.dir=" + dir}
	}
	workers := func(n int, s []string) map[string]any {
		args := []string{"run", "-n", strconv.Itoa(n), "--", exe, "train", "../../examples/iris.yaml", "--json", "--quiet"}
		for _, v := range s {
			args = append(args, "--set", v)
		}
		cmd := exec.CommandContext(ctx, exe, args...)
		cmd.Env = append(os.Environ(), "MASTER_ADDR=", "FATHOM_JOB_TOKEN=")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("fathom %v: %v", args, err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		var final map[string]any
		if err := json.Unmarshal([]byte(strings.TrimPrefix(lines[len(lines)-1], "[0] ")), &final); err != nil {
			t.Fatal(err)
		}
		return final
	}
	one := func(s []string) map[string]any {
		out, err := captureStdout(t, true, func() error {
			return runTrain(context.Background(), "../../examples/iris.yaml", s, true, io.Discard)
		})
		if err != nil {
			t.Fatal(err)
		}
		return lastJSON(t, out)
	}
	dir := t.TempDir()
	workers(2, sets(dir, 30))
	continued := one(append(sets(dir, 60), "output.resume=true"))
	if e, _ := continued["epochs"].(float64); e != 60 {
		t.Fatalf("the continued run reports %v epochs", continued["epochs"])
	}
	whole := one(sets(t.TempDir(), 60))
	four := workers(4, sets(t.TempDir(), 60))
	if continued["weights_sha256"] != whole["weights_sha256"] || four["weights_sha256"] != whole["weights_sha256"] {
		t.Errorf("weights_sha256: 2 workers then 1 process %v; 1 process %v; 4 workers %v",
			continued["weights_sha256"], whole["weights_sha256"], four["weights_sha256"])
	}
}
