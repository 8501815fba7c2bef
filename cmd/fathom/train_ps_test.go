package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestTrainParameterServer: deterministic training with parameter servers
// (`fathom run -n 3`: 2 workers and 1 server; `-n 4`: 2 workers and 2
// servers, the parameters sharded) gives the bits of `fathom run -n 2`
// data-parallel training; an asynchronous job (staleness 2) trains to
// Iris's accuracy; rank 0 alone prints.
func TestTrainParameterServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts processes")
	}
	exe := buildFathom(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := func(n string, sets ...string) map[string]any {
		t.Helper()
		args := []string{"run", "-n", n, "--", exe, "train", "../../examples/iris.yaml", "--json", "--quiet",
			"--set", "output.dir=" + t.TempDir(), "--set", "epochs=20"}
		for _, s := range sets {
			args = append(args, "--set", s)
		}
		cmd := exec.CommandContext(ctx, exe, args...)
		cmd.Env = append(os.Environ(), "MASTER_ADDR=", "FATHOM_JOB_TOKEN=")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("fathom %v: %v\n%s", args, err, stderr.String())
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		for _, l := range lines {
			if !strings.HasPrefix(l, "[0] ") {
				t.Fatalf("a stdout line not from rank 0: %q", l)
			}
		}
		var final map[string]any
		if err := json.Unmarshal([]byte(strings.TrimPrefix(lines[len(lines)-1], "[0] ")), &final); err != nil {
			t.Fatal(err)
		}
		return final
	}
	ddp := run("2", "distributed.deterministic=true")
	for _, c := range []struct {
		n    string
		sets []string
	}{
		{"3", []string{"distributed.strategy=ps"}},
		{"4", []string{"distributed.strategy=ps", "distributed.servers=2"}},
	} {
		got := run(c.n, append(c.sets, "distributed.deterministic=true")...)
		if got["weights_sha256"] != ddp["weights_sha256"] {
			t.Errorf("fathom run -n %s with %v: weights_sha256 %v, want the data-parallel run's %v", c.n, c.sets, got["weights_sha256"], ddp["weights_sha256"])
		}
	}
	async := run("4", "distributed.strategy=ps", "distributed.servers=2", "distributed.staleness=2", "epochs=60")
	if acc, _ := async["test_accuracy"].(float64); acc < 0.9 {
		t.Errorf("asynchronous parameter servers: test accuracy %v, want ≥ 0.9", acc)
	}
}
