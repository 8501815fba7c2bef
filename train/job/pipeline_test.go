package job

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPipelineConfig: the pipeline keys are parsed and checked.
func TestPipelineConfig(t *testing.T) {
	c, err := ParseConfig([]byte(baseConfig+"distributed:\n  strategy: pipeline\n  stages: 2\n  micro_batches: 8\n  schedule: 1f1b\n  split: [2]\n  memory_limit_mb: 64\n"), "p.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := c.Distributed; d.Stages != 2 || d.MicroBatches != 8 || d.Schedule != "1f1b" || len(d.Split) != 1 || d.MemoryLimitMB != 64 {
		t.Fatalf("parsed %+v", d)
	}
	for _, test := range []struct{ section, want string }{
		{"  stages: 2\n", "applies only with distributed.strategy: pipeline"},
		{"  strategy: ps\n  micro_batches: 4\n", "applies only with distributed.strategy: pipeline"},
		{"  strategy: pipeline\n  schedule: interleaved\n", "want gpipe or 1f1b"},
		{"  strategy: pipeline\n  stages: 1\n", "want 2 or more"},
		{"  strategy: pipeline\n  micro_batches: -1\n", "want 1 or more"},
		{"  strategy: pipeline\n  stages: 3\n  split: [2]\n", "need 2 split points"},
		{"  strategy: pipeline\n  split: [3, 1]\n", "ascending"},
		{"  strategy: pipeline\n  deterministic: true\n", "does not go together"},
		{"  memory_limit_mb: -2\n", "want a positive size"},
	} {
		_, err := ParseConfig([]byte(baseConfig+"distributed:\n"+test.section), "p.yaml", nil)
		if err == nil || !strings.Contains(err.Error(), test.want) {
			t.Errorf("%q: error %v, want one saying %q", test.section, err, test.want)
		}
	}
}

// TestPipelineConfigCheckpoints: a pipeline job may checkpoint and resume.
func TestPipelineConfigCheckpoints(t *testing.T) {
	section := "distributed:\n  strategy: pipeline\n  split: [2]\n"
	if _, err := ParseConfig([]byte(baseConfig+section), "p.yaml", []string{"output.checkpoint_every=20", "output.resume=true"}); err != nil {
		t.Fatalf("pipeline with checkpoints: %v", err)
	}
}

// TestRecordedCuts: the stage cuts recorded beside the checkpoints are the
// ones a resumed run uses (and only a resumed run); cuts that do not fit
// the model are an error.
func TestRecordedCuts(t *testing.T) {
	ckpt := filepath.Join(t.TempDir(), "checkpoint.safetensors")
	if cuts, err := recordedCuts(ckpt, true, 7, 2); cuts != nil || err != nil {
		t.Fatalf("no record: %v, %v; want none", cuts, err)
	}
	if err := recordCuts(ckpt, []int{0, 3, 7}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(ckpt), "checkpoint.pipeline.json")); err != nil {
		t.Fatal(err)
	}
	if cuts, err := recordedCuts(ckpt, true, 7, 2); err != nil || !slices.Equal(cuts, []int{0, 3, 7}) {
		t.Errorf("resuming: cuts %v, %v; want the recorded [0 3 7]", cuts, err)
	}
	if cuts, err := recordedCuts(ckpt, false, 7, 2); cuts != nil || err != nil {
		t.Errorf("a new run: cuts %v, %v; want none (it balances again)", cuts, err)
	}
	if _, err := recordedCuts(ckpt, true, 9, 2); err == nil || !strings.Contains(err.Error(), "do not fit") {
		t.Errorf("cuts of another model: %v, want an error", err)
	}
}
