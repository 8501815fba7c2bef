package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fathom-ml/fathom/bench"
)

// TestBenchAllreduceLocal builds the fathom binary and runs
// `bench allreduce --local 2` end to end: two workers started through
// package launch on loopback, one JSON line per size from rank 0 only.
func TestBenchAllreduceLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts processes")
	}
	exe := buildFathom(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "bench", "allreduce", "--local", "2", "--size", "4KB,64KB",
		"--iters", "3", "--warmup", "1", "--transport", "tcp", "--json")
	cmd.Env = append(os.Environ(), "MASTER_ADDR=", "FATHOM_JOB_TOKEN=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("bench allreduce --local 2: %v\nstderr:\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 JSON lines (rank 0, one per size), got %d:\n%s", len(lines), stdout.String())
	}
	for i, size := range []int{4 << 10, 64 << 10} {
		var res bench.AllReduceResult
		if err := json.Unmarshal([]byte(lines[i]), &res); err != nil {
			t.Fatalf("line %d %q: %v", i, lines[i], err)
		}
		if res.Size != size || res.World != 2 || res.Iters != 3 || !res.Correct || res.Transport != "tcp" || res.LatencyUs <= 0 {
			t.Errorf("line %d: %+v, want size %d, world 2, 3 iterations, tcp, correct", i, res, size)
		}
	}
}

// buildFathom returns the path of the fathom binary, built once for all
// the tests of the run that start processes.
func buildFathom(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "fathom-test-"); built.err != nil {
			return
		}
		built.exe = filepath.Join(built.dir, "fathom")
		built.out, built.err = exec.Command("go", "build", "-o", built.exe, ".").CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("go build: %v\n%s", built.err, built.out)
	}
	return built.exe
}

// built is the binary buildFathom builds once for every test of the run.
var built struct {
	once     sync.Once
	dir, exe string
	out      []byte
	err      error
}

// TestMain removes the binary buildFathom built.
func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}
