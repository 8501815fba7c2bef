package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// rankPid returns the pid of the child of launcher whose environment has
// RANK=rank, or 0.
func rankPid(launcher, rank int) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so cut at ')'.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 2 || f[1] != strconv.Itoa(launcher) {
			continue
		}
		env, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		for _, kv := range bytes.Split(env, []byte{0}) {
			if string(kv) == "RANK="+strconv.Itoa(rank) {
				return pid
			}
		}
	}
	return 0
}

// TestTrainSurvivesKilledWorker: `fathom run -n 2 --max-restarts 1 --
// fathom train` with checkpoints, one worker killed with SIGKILL as soon
// as the first checkpoint is written: the group restarts, resumes from the
// checkpoint and finishes — with deterministic training, bitwise the model
// of an uninterrupted run.
func TestTrainSurvivesKilledWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts processes")
	}
	exe := buildFathom(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run := func(dir string, kill bool) (map[string]any, string) {
		cmd := exec.CommandContext(ctx, exe, "run", "-n", "2", "--max-restarts", "1", "--", exe, "train", "../../examples/iris.yaml",
			"--json", "--set", "epochs=300", "--set", "distributed.deterministic=true",
			"--set", "output.checkpoint_every=50", "--set", "output.dir="+dir)
		cmd.Env = append(os.Environ(), "MASTER_ADDR=", "FATHOM_JOB_TOKEN=")
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
			pid := rankPid(cmd.Process.Pid, 1)
			if pid == 0 {
				t.Fatalf("rank 1's process not found:\n%s", stderr.String())
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
	if !strings.Contains(stderr, "rank 1 failed (signal SIGKILL") || !strings.Contains(stderr, "restarting the local group (restart 1 of 1)") {
		t.Fatalf("no restart after the kill:\n%s", stderr)
	}
	if !strings.Contains(stderr, "restart 1: resuming from ") {
		t.Fatalf("the restarted workers did not resume from the checkpoint:\n%s", stderr)
	}
	if acc, _ := got["test_accuracy"].(float64); acc < 0.9 {
		t.Errorf("test accuracy %v after the restart", acc)
	}
	if got["weights_sha256"] != want["weights_sha256"] {
		t.Errorf("weights_sha256 %v after a kill and a resume, %v uninterrupted", got["weights_sha256"], want["weights_sha256"])
	}
	checkWeightsSHA(t, got)
}
