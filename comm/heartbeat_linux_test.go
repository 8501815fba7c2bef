//go:build linux

package comm

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cpuTime returns the user+system CPU time of process pid from /proc.
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:]) // fields from 3 (state) on
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)             // field 14
	st, _ := strconv.ParseInt(f[12], 10, 64)             // field 15
	return time.Duration(ut+st) * time.Second / 100, nil // USER_HZ is 100 on Linux
}

// TestStoppedProcess starts 4 worker processes, SIGSTOPs one in the middle of
// its all-reduces and expects every survivor to exit within the heartbeat
// timeout plus slack with an error naming the stopped rank, burning little
// CPU while it waits.
func TestStoppedProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	const heartbeat = 1500 * time.Millisecond
	for _, tc := range []struct {
		shm    string
		victim int
	}{{"1", 1}, {"0", 2}, {"1", 0}} {
		t.Run(fmt.Sprintf("shm=%s/victim=%d", tc.shm, tc.victim), func(t *testing.T) {
			const n = 4
			victim := tc.victim
			port := freePort(t)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmds := make([]*exec.Cmd, n)
			outs := make([]*syncBuf, n)
			defer func() {
				for _, c := range cmds {
					if c != nil && c.ProcessState == nil {
						c.Process.Signal(syscall.SIGCONT)
						c.Process.Kill()
						c.Wait()
					}
				}
			}()
			for r := 0; r < n; r++ {
				cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), "FATHOM_DIST_TEST_WORKER=1",
					"RANK="+strconv.Itoa(r), "WORLD_SIZE="+strconv.Itoa(n), "LOCAL_RANK="+strconv.Itoa(r),
					"LOCAL_WORLD_SIZE="+strconv.Itoa(n), "MASTER_ADDR=127.0.0.1", "MASTER_PORT="+strconv.Itoa(port),
					"FATHOM_JOB_TOKEN=proc-token", "FATHOM_SHM="+tc.shm, "FATHOM_TIMEOUT=2m",
					"FATHOM_HEARTBEAT_TIMEOUT="+heartbeat.String())
				outs[r] = &syncBuf{}
				cmd.Stdout, cmd.Stderr = outs[r], outs[r]
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				cmds[r] = cmd
			}
			deadline := time.Now().Add(30 * time.Second)
			for !strings.Contains(outs[victim].String(), "ready") {
				if time.Now().After(deadline) {
					t.Fatalf("workers not ready: %q", outs[0].String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			stopped := time.Now()
			if err := cmds[victim].Process.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			// CPU of the survivors while they wait, from shortly after the
			// stop until just before the heartbeat may name the victim
			time.Sleep(200 * time.Millisecond)
			window := heartbeat - 400*time.Millisecond
			cpu0 := make([]time.Duration, n)
			for r, c := range cmds {
				if r != victim {
					cpu0[r], _ = cpuTime(c.Process.Pid)
				}
			}
			time.Sleep(window)
			for r, c := range cmds {
				if r == victim {
					continue
				}
				cpu1, err := cpuTime(c.Process.Pid)
				if err != nil {
					continue // exited already
				}
				used := cpu1 - cpu0[r]
				t.Logf("rank %d used %v CPU in %v of waiting", r, used, window)
				if used > window/4 {
					t.Errorf("rank %d burned %v CPU in %v while waiting for a stopped rank", r, used, window)
				}
			}
			for r, c := range cmds {
				if r == victim {
					continue
				}
				c.Wait()
				took := time.Since(stopped)
				out := outs[r].String()
				t.Logf("rank %d exited %v after the stop", r, took.Round(time.Millisecond))
				want := fmt.Sprintf("rank %d has not been heard from", victim)
				if victim == 0 {
					want = "rank 0 has not been heard from"
				}
				if !strings.Contains(out, fmt.Sprintf("lost rank %d", victim)) || !strings.Contains(out, want) {
					t.Errorf("rank %d output does not name stopped rank %d: %q", r, victim, out)
				}
			}
			if d := time.Since(stopped); d > heartbeat+15*time.Second {
				t.Errorf("survivors took %v to exit (heartbeat timeout %v)", d, heartbeat)
			}
		})
	}
}
