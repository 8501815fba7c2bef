package job

import (
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
