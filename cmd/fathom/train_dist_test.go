package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestTrainDataParallel runs `fathom run -n 2 -- fathom train
// examples/iris.yaml --json` end to end: two workers train one model on
// loopback; rank 0 alone prints the 60 epoch lines and the final line and
// writes the files, and the model scores as a single process does.
func TestTrainDataParallel(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts processes")
	}
	exe := filepath.Join(t.TempDir(), "fathom")
	if out, err := exec.Command("go", "build", "-o", exe, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "run", "-n", "2", "--", exe, "train", "../../examples/iris.yaml",
		"--json", "--quiet", "--set", "output.dir="+dir)
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
	if h, _ := final["weights_sha256"].(string); len(h) != 64 {
		t.Errorf("weights_sha256 %q", h)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if want := []string{"curves.png", "metrics.csv", "model.safetensors"}; !slices.Equal(names, want) {
		t.Errorf("output files %v, want %v", names, want)
	}
}
