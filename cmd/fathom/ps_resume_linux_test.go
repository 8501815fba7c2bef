package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPSSurvivesKilledServer: a synchronous parameter-server job (`fathom
// run -n 4 --max-restarts 1`: 2 workers, 2 servers, Adam on the servers)
// with checkpoints, one server killed with SIGKILL once a checkpoint is
// written: the group restarts, worker 0 sends the servers the parameters
// and their optimizer state from the checkpoint, and the job ends bitwise
// with the model of an uninterrupted run.
func TestPSSurvivesKilledServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts processes")
	}
	exe := buildFathom(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	run := func(dir string, kill bool) (map[string]any, string) {
		cmd := exec.CommandContext(ctx, exe, "run", "-n", "4", "--max-restarts", "1", "--", exe, "train", "../../examples/iris.yaml",
			"--json", "--set", "epochs=100", "--set", "distributed.strategy=ps", "--set", "distributed.servers=2",
			"--set", "distributed.deterministic=true", "--set", "output.checkpoint_every=40", "--set", "output.dir="+dir)
		cmd.Env = append(os.Environ(), "MASTER_ADDR=", "FATHOM_JOB_TOKEN=", dashboardEnv+"=")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if kill {
			ckpt := filepath.Join(dir, "checkpoint.safetensors")
			deadline := time.Now().Add(time.Minute)
			for {
				if _, err := os.Stat(ckpt); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no checkpoint after a minute:\n%s", stderr.String())
				}
				time.Sleep(2 * time.Millisecond)
			}
			pid := rankPid(cmd.Process.Pid, 3) // the second server
			if pid == 0 {
				t.Fatalf("rank 3's process not found:\n%s", stderr.String())
			}
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("kill=%v: %v\nstderr:\n%s", kill, err, stderr.String())
		}
		lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
		var final map[string]any
		if err := json.Unmarshal([]byte(strings.TrimPrefix(lines[len(lines)-1], "[0] ")), &final); err != nil {
			t.Fatal(err)
		}
		return final, stderr.String()
	}
	want, _ := run(t.TempDir(), false)
	got, stderr := run(t.TempDir(), true)
	if !strings.Contains(stderr, "rank 3 failed (signal SIGKILL") || !strings.Contains(stderr, "restarting the local group (restart 1 of 1)") {
		t.Fatalf("no restart after the kill:\n%s", stderr)
	}
	if !strings.Contains(stderr, "restart 1: resuming from ") {
		t.Fatalf("the restarted workers did not resume from the checkpoint:\n%s", stderr)
	}
	if acc, _ := got["test_accuracy"].(float64); acc < 0.9 {
		t.Errorf("test accuracy %v after the restart", acc)
	}
	if got["weights_sha256"] != want["weights_sha256"] {
		t.Errorf("weights_sha256 %v after a killed server and a resume, %v uninterrupted", got["weights_sha256"], want["weights_sha256"])
	}
	checkWeightsSHA(t, got)
}
