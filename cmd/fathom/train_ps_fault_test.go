package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestTrainPSAsyncWorkerLost: an asynchronous parameter-server job (3
// workers, 1 server, staleness 1) whose worker 2 is killed after worker 0's
// first epoch carries on: the server drops worker 2 from the staleness
// bound, workers 0 and 1 train all epochs, rank 0 writes the model. The
// processes are started one by one (fathom run would stop the whole job
// when one exits non-zero).
func TestTrainPSAsyncWorkerLost(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts processes")
	}
	exe := filepath.Join(t.TempDir(), "fathom")
	if out, err := exec.Command("go", "build", "-o", exe, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	tok := make([]byte, 16)
	rand.Read(tok)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const world = 4 // ranks 0-2 workers, rank 3 the server
	dir := t.TempDir()
	cmds := make([]*exec.Cmd, world)
	stderr := make([]*strings.Builder, world)
	var out0 *bufio.Scanner
	for r := range world {
		cmd := exec.CommandContext(ctx, exe, "train", "../../examples/iris.yaml", "--json", "--quiet",
			"--set", "distributed.strategy=ps", "--set", "distributed.staleness=1", "--set", "batch_size=15",
			"--set", "epochs=150", "--set", "output.dir="+dir)
		cmd.Env = append(os.Environ(), "RANK="+strconv.Itoa(r), fmt.Sprintf("WORLD_SIZE=%d", world), "LOCAL_RANK="+strconv.Itoa(r),
			fmt.Sprintf("LOCAL_WORLD_SIZE=%d", world), "MASTER_ADDR=127.0.0.1", "MASTER_PORT="+strconv.Itoa(port),
			"FATHOM_JOB_TOKEN="+hex.EncodeToString(tok), "FATHOM_HEARTBEAT_TIMEOUT=2s")
		stderr[r] = &strings.Builder{}
		cmd.Stderr = stderr[r]
		if r == 0 {
			p, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			out0 = bufio.NewScanner(p)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[r] = cmd
	}
	defer func() {
		for _, c := range cmds {
			c.Process.Kill()
		}
	}()
	var lines []string
	killed := false
	for out0.Scan() {
		lines = append(lines, out0.Text())
		if !killed {
			// Worker 0 finished epoch 1; with staleness 1 worker 2 is at
			// most a step ahead of it, so 149 epochs are left to it.
			cmds[2].Process.Kill()
			killed = true
		}
	}
	for r, c := range cmds {
		err := c.Wait()
		if r == 2 {
			if err == nil {
				t.Error("worker 2 was killed but exited 0")
			}
			continue
		}
		if err != nil {
			t.Fatalf("rank %d: %v\nstderr:\n%s", r, err, stderr[r].String())
		}
	}
	if len(lines) != 151 {
		t.Fatalf("rank 0 printed %d lines, want 150 epochs and the final line", len(lines))
	}
	var final map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &final); err != nil {
		t.Fatal(err)
	}
	if acc, _ := final["test_accuracy"].(float64); acc < 0.9 {
		t.Errorf("test accuracy %v after losing a worker, want ≥ 0.9", final["test_accuracy"])
	}
	if !strings.Contains(stderr[3].String(), "lost a worker") {
		t.Errorf("the server's stderr does not report the lost worker:\n%s", stderr[3].String())
	}
}
