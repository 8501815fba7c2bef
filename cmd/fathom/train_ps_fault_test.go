//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
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

// TestTrainPSAsyncWorkerLost: an asynchronous parameter-server job under
// `fathom run --keep-going -n 4` (3 workers, 1 server, staleness 1) whose
// worker 2 is killed after worker 0's first epoch carries on: the server
// drops worker 2 from the staleness bound, workers 0 and 1 train all
// epochs, rank 0 writes the model; the launcher lets them finish, then
// reports rank 2's failure.
func TestTrainPSAsyncWorkerLost(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts processes")
	}
	exe := buildFathom(t)
	tok := make([]byte, 16)
	rand.Read(tok)
	token := hex.EncodeToString(tok)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	cmd := exec.CommandContext(ctx, exe, "run", "--keep-going", "-n", "4", "--", exe, "train", "../../examples/iris.yaml", "--json", "--quiet",
		"--set", "distributed.strategy=ps", "--set", "distributed.staleness=1", "--set", "batch_size=15",
		"--set", "epochs=150", "--set", "output.dir="+dir)
	cmd.Env = append(os.Environ(), "FATHOM_JOB_TOKEN="+token, "FATHOM_HEARTBEAT_TIMEOUT=2s", "MASTER_ADDR=", dashboardEnv+"=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	killed := false
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		l, ok := strings.CutPrefix(sc.Text(), "[0] ")
		if !ok {
			continue
		}
		lines = append(lines, l)
		if !killed {
			// Worker 0 finished epoch 1; with staleness 1 worker 2 is at
			// most a step ahead of it, so 149 epochs are left to it.
			pid := workerPID(t, token, 2)
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
	}
	err = cmd.Wait()
	if err == nil {
		t.Errorf("fathom run exited 0 though rank 2 was killed")
	}
	if !strings.Contains(stderr.String(), "rank 2 failed") || !strings.Contains(stderr.String(), "keep going") {
		t.Errorf("the launcher does not report rank 2 and keep going:\n%s", stderr.String())
	}
	if len(lines) != 151 {
		t.Fatalf("rank 0 printed %d lines, want 150 epochs and the final line\n%s", len(lines), stderr.String())
	}
	var final map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &final); err != nil {
		t.Fatal(err)
	}
	if acc, _ := final["test_accuracy"].(float64); acc < 0.9 {
		t.Errorf("test accuracy %v after losing a worker, want ≥ 0.9", final["test_accuracy"])
	}
	if _, err := os.Stat(filepath.Join(dir, "model.safetensors")); err != nil {
		t.Errorf("rank 0 wrote no model: %v", err)
	}
	if !strings.Contains(stderr.String(), "lost a worker") {
		t.Errorf("the server's stderr does not report the lost worker:\n%s", stderr.String())
	}
}

// workerPID finds the worker of rank in the job whose token is token, by
// its environment (/proc/PID/environ).
func workerPID(t *testing.T, token string, rank int) int {
	t.Helper()
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		vars := strings.Split(string(env), "\x00")
		hasTok, hasRank := false, false
		for _, v := range vars {
			hasTok = hasTok || v == "FATHOM_JOB_TOKEN="+token
			hasRank = hasRank || v == "RANK="+strconv.Itoa(rank)
		}
		if hasTok && hasRank {
			return pid
		}
	}
	t.Fatalf("no worker of rank %d found", rank)
	return 0
}
