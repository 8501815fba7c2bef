//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// childPids lists the children of process pid (every thread's: the Go
// runtime starts a child from whichever thread it runs on).
func childPids(pid int) []int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var out []int
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, s := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(s); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// procCPU returns the user+system clock ticks of process pid.
func procCPU(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.Atoi(f[11])
	st, _ := strconv.Atoi(f[12])
	return ut + st
}

// TestBenchAllreduceLocalStoppedWorker: `bench allreduce --local 3` with one
// worker stopped (SIGSTOP) mid-run ends within seconds, naming that rank,
// instead of waiting for the collective timeout.
func TestBenchAllreduceLocalStoppedWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts processes")
	}
	exe := buildFathom(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "bench", "allreduce", "--local", "3", "--size", "4KB",
		"--iters", "100000000", "--warmup", "1", "--heartbeat-timeout", "1500ms")
	cmd.Env = append(os.Environ(), "MASTER_ADDR=", "FATHOM_JOB_TOKEN=", "FATHOM_TIMEOUT=2m")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var workers []int
	defer func() {
		for _, p := range workers {
			syscall.Kill(p, syscall.SIGCONT)
		}
	}()
	// wait until every worker is all-reducing (burning CPU past rendezvous)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-done
			t.Fatalf("workers %v never got going\nstderr:\n%s", workers, stderr.String())
		}
		workers = childPids(cmd.Process.Pid)
		busy := 0
		for _, p := range workers {
			if procCPU(p) >= 30 {
				busy++
			}
		}
		if len(workers) == 3 && busy == 3 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	victim := workers[1]
	env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", victim))
	rank := -1
	for _, kv := range strings.Split(string(env), "\x00") {
		if v, ok := strings.CutPrefix(kv, "RANK="); ok {
			rank, _ = strconv.Atoi(v)
		}
	}
	stopped := time.Now()
	if err := syscall.Kill(victim, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		took := time.Since(stopped)
		t.Logf("bench ended %v after rank %d was stopped: %v", took.Round(time.Millisecond), rank, err)
		if err == nil {
			t.Fatal("bench succeeded with a stopped worker")
		}
		for _, want := range []string{
			fmt.Sprintf("rank %d has not been heard from", rank),
			fmt.Sprintf("fathom run: rank %d failed: ", rank),
		} {
			if !strings.Contains(stderr.String(), want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
			}
		}
		if took > 30*time.Second {
			t.Errorf("bench took %v to end after a worker stopped (heartbeat timeout 1.5s)", took)
		}
	case <-time.After(90 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("bench still running 90s after rank %d was stopped\nstderr:\n%s", rank, stderr.String())
	}
}
