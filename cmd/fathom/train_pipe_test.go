package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fathom-ml/fathom/modelfile"
)

// TestTrainPipeline: examples/iris-pipeline.yaml is over its memory limit
// in one process and trains as two pipeline stages (`fathom run -n 2`, or
// `-n 4`: 2 stages × 2 data-parallel replicas); the stages, with either
// schedule and any number of micro-batches, train the
// weights one process trains without the limit, within float32 rounding
// of the micro-batch sums: 1e-4 relative plus 1e-5 (1% of the learning
// rate) absolute after 2 epochs of Adam, which turns the rounding of a
// near-zero gradient into a difference in its update of up to lr.
func TestTrainPipeline(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts processes")
	}
	exe := buildFathom(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := func(n string, sets ...string) (map[string]any, string, error) {
		dir := t.TempDir()
		args := []string{"train", "../../examples/iris-pipeline.yaml", "--json", "--quiet", "--set", "output.dir=" + dir, "--set", "epochs=2"}
		if n != "" {
			args = append([]string{"run", "-n", n, "--", exe}, args...)
		}
		for _, s := range sets {
			args = append(args, "--set", s)
		}
		cmd := exec.CommandContext(ctx, exe, args...)
		cmd.Env = append(os.Environ(), "MASTER_ADDR=", "FATHOM_JOB_TOKEN=")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, stderr.String(), err
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		var final map[string]any
		if err := json.Unmarshal([]byte(strings.TrimPrefix(lines[len(lines)-1], "[0] ")), &final); err != nil {
			t.Fatal(err)
		}
		return final, dir, nil
	}
	if _, stderr, err := run(""); err == nil || !strings.Contains(stderr, "over distributed.memory_limit_mb 6") {
		t.Fatalf("one process over the memory limit: %v, stderr %q; want a refusal naming the limit", err, stderr)
	}
	one, oneDir, err := run("", "distributed.memory_limit_mb=0")
	if err != nil {
		t.Fatalf("one process without the limit: %v\n%s", err, oneDir)
	}
	want, err := modelfile.Load(filepath.Join(oneDir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		n    string
		sets []string
	}{
		{"2", nil}, // 1f1b, 4 micro-batches, split at layer 4
		{"2", []string{"distributed.schedule=gpipe", "distributed.micro_batches=1"}},
		{"2", []string{"distributed.schedule=gpipe", "distributed.micro_batches=16", "distributed.split=null"}},
		{"4", []string{"distributed.stages=2"}}, // 2 stages × 2 data-parallel replicas
	} {
		sets := c.sets
		got, dir, err := run(c.n, sets...)
		if err != nil {
			t.Fatalf("fathom run -n %s with %v: %v\n%s", c.n, sets, err, dir)
		}
		m, err := modelfile.Load(filepath.Join(dir, "model.safetensors"))
		if err != nil {
			t.Fatal(err)
		}
		wp, gp := want.Net.Parameters(), m.Net.Parameters()
		for i := range wp {
			a, b := gp[i].Float32s(), wp[i].Float32s()
			for j := range a {
				if d := math.Abs(float64(a[j] - b[j])); d > 1e-4*math.Abs(float64(b[j]))+1e-5 {
					t.Fatalf("%v: parameter %d[%d] = %g, one process %g", sets, i, j, a[j], b[j])
				}
			}
		}
		if got["test_accuracy"] != one["test_accuracy"] {
			t.Errorf("%v: test accuracy %v, one process %v", sets, got["test_accuracy"], one["test_accuracy"])
		}
	}
}
