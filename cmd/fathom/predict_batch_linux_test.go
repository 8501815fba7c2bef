package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/infer"
)

// TestPredictKilledWorkerRerun: `fathom run -n 2 -- fathom predict` over
// partitions, one worker killed with SIGKILL once the first outputs are
// written: the job fails; a re-run completes it, skipping the finished
// partitions, and every row is scored exactly once.
func TestPredictKilledWorkerRerun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts processes")
	}
	exe := buildFathom(t)
	dir := t.TempDir()
	const nparts, rows = 12, 4000
	in := filepath.Join(dir, "in")
	writeTestPartitions(t, in, nparts, rows)
	model := filepath.Join(dir, "model.safetensors")
	writeTestNet(t, model)
	out := filepath.Join(dir, "out")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := func() (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
		// Small batches make each partition take a while.
		cmd := exec.CommandContext(ctx, exe, "run", "-n", "2", "--", exe, "predict", model, in, "--out", out, "--keep", "id,k", "--batch-size", "20")
		cmd.Env = append(os.Environ(), "MASTER_ADDR=", "FATHOM_JOB_TOKEN=")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, &stdout, &stderr
	}
	cmd, _, stderr := start()
	deadline := time.Now().Add(time.Minute)
	for {
		m, _ := filepath.Glob(filepath.Join(out, "k=*", "part-0.parquet"))
		if len(m) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no output after a minute:\n%s", stderr)
		}
		time.Sleep(2 * time.Millisecond)
	}
	pid := rankPid(cmd.Process.Pid, 1)
	if pid == 0 {
		t.Fatalf("rank 1's process not found:\n%s", stderr)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil {
		t.Fatalf("the job succeeded although rank 1 was killed:\n%s", stderr)
	}
	done, _ := filepath.Glob(filepath.Join(out, "k=*", "part-0.parquet"))
	if len(done) == nparts {
		t.Fatalf("every partition was done before the kill: the test needs slower partitions")
	}

	cmd, stdout, stderr := start()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("re-run: %v\n%s", err, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var sum infer.Summary
	if err := json.Unmarshal([]byte(strings.TrimPrefix(lines[len(lines)-1], "[0] ")), &sum); err != nil {
		t.Fatalf("summary %q: %v", lines[len(lines)-1], err)
	}
	if sum.Skipped != len(done) || sum.Partitions != nparts-len(done) || sum.Rows != int64((nparts-len(done))*rows) {
		t.Fatalf("re-run summary %+v: want %d partitions skipped and %d done", sum, len(done), nparts-len(done))
	}
	seen := make([]int, nparts*rows)
	for k := range nparts {
		f, err := data.ReadParquetFrame(filepath.Join(out, fmt.Sprintf("k=%d", k), "part-0.parquet"), data.ParquetFrameOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ids, _ := f.Int64s("id")
		keys, _ := f.Int64s("k")
		for i, id := range ids {
			seen[id]++
			if keys[i] != int64(k) {
				t.Fatalf("partition k=%d: row %d has k=%d", k, id, keys[i])
			}
		}
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("row %d scored %d times", id, n)
		}
	}
}
