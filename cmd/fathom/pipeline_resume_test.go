//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// resumedAt matches a resumed worker's log line.
var resumedAt = regexp.MustCompile(`restart 1: resuming from \S+ at epoch (\d+, step \d+)`)

// TestPipelineSurvivesKilledStage: `fathom run -n 2 --max-restarts 1 --
// fathom train examples/iris-pipeline.yaml` with checkpoints, stage 1
// killed with SIGKILL once a checkpoint is committed (its manifest
// written): the group restarts, every stage resumes from its part of the
// committed checkpoint, and the job ends with the weights of an
// uninterrupted run, bit for bit.
func TestPipelineSurvivesKilledStage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts processes")
	}
	exe := buildFathom(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run := func(dir string, kill bool) (map[string]any, string) {
		cmd := exec.CommandContext(ctx, exe, "run", "-n", "2", "--max-restarts", "1", "--", exe, "train", "../../examples/iris-pipeline.yaml",
			"--json", "--set", "epochs=40", "--set", "output.checkpoint_every=20", "--set", "output.dir="+dir)
		cmd.Env = append(os.Environ(), "MASTER_ADDR=", "FATHOM_JOB_TOKEN=")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if kill {
			manifest := filepath.Join(dir, "checkpoint.manifest.json")
			deadline := time.Now().Add(time.Minute)
			for {
				if _, err := os.Stat(manifest); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no committed checkpoint after a minute:\n%s", stderr.String())
				}
				time.Sleep(2 * time.Millisecond)
			}
			pid := rankPid(cmd.Process.Pid, 1)
			if pid == 0 {
				t.Fatalf("stage 1's process not found:\n%s", stderr.String())
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
			t.Fatalf("%v in %q", err, lines[len(lines)-1])
		}
		return final, stderr.String()
	}
	want, _ := run(t.TempDir(), false)
	dir := t.TempDir()
	got, stderr := run(dir, true)
	if !strings.Contains(stderr, "rank 1 failed (signal SIGKILL") || !strings.Contains(stderr, "restarting the local group (restart 1 of 1)") {
		t.Fatalf("no restart after the kill:\n%s", stderr)
	}
	// Rank 0 says where the stages resume: past the start (a run started
	// over would end with the same weights, too).
	if m := resumedAt.FindStringSubmatch(stderr); m == nil || m[1] == "1, step 0" {
		t.Fatalf("the restarted stages did not resume from the committed checkpoint (%q):\n%s", m, stderr)
	}
	if got["weights_sha256"] != want["weights_sha256"] {
		t.Errorf("weights_sha256 %v after a kill and a resume, %v uninterrupted", got["weights_sha256"], want["weights_sha256"])
	}
	checkWeightsSHA(t, got)
	// Each stage keeps its parts of the last two checkpoints only.
	for _, part := range []string{"part0", "part1"} {
		if parts, _ := filepath.Glob(filepath.Join(dir, "checkpoint.*."+part+".safetensors")); len(parts) == 0 || len(parts) > 2 {
			t.Errorf("%d checkpoint files of %s left, want 1 or 2: %v", len(parts), part, parts)
		}
	}
}
