package job

import (
	"strings"
	"testing"
)

// TestPSConfig: the parameter-server keys are checked, with their line.
func TestPSConfig(t *testing.T) {
	c, err := ParseConfig([]byte(baseConfig+"distributed:\n  strategy: ps\n  servers: 2\n  staleness: 1\n"), "p.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := c.Distributed; d.Strategy != "ps" || d.Servers != 2 || d.Staleness == nil || *d.Staleness != 1 {
		t.Fatalf("parsed %+v", d)
	}
	for _, test := range []struct{ section, want string }{
		{"  strategy: mesh\n", "want ddp, ps or pipeline"},
		{"  servers: 2\n", "applies only with distributed.strategy: ps"},
		{"  strategy: ps\n  staleness: -1\n", "want 0 or more"},
		{"  strategy: ps\n  staleness: 1\n  deterministic: true\n", "do not go together"},
		{"  strategy: ps\n  server_ranks: [0, 3]\n", "rank 0 must be a worker"},
		{"  strategy: ps\n  servers: 1\n  server_ranks: [2, 3]\n", "lists 2 ranks"},
		{"  strategy: ps\n  compression: fp16\n", "does not go together"},
	} {
		_, err := ParseConfig([]byte(baseConfig+"distributed:\n"+test.section), "p.yaml", nil)
		if err == nil || !strings.Contains(err.Error(), test.want) {
			t.Errorf("%q: error %v, want one saying %q", test.section, err, test.want)
		}
	}
}

// TestPSCheckpointConfig: synchronous servers take checkpoints and
// output.resume; asynchronous ones refuse them with one message.
func TestPSCheckpointConfig(t *testing.T) {
	for _, out := range []string{"output:\n  checkpoint_every: 5\n", "output:\n  resume: true\n"} {
		if _, err := ParseConfig([]byte(baseConfig+out+"distributed:\n  strategy: ps\n  servers: 2\n"), "p.yaml", nil); err != nil {
			t.Errorf("synchronous servers with %q: %v", out, err)
		}
		_, err := ParseConfig([]byte(baseConfig+out+"distributed:\n  strategy: ps\n  staleness: 1\n"), "p.yaml", nil)
		if err == nil || !strings.Contains(err.Error(), "distributed.staleness (asynchronous servers) does not go together with output.checkpoint_every or output.resume") {
			t.Errorf("asynchronous servers with %q: error %v, want the refusal", out, err)
		}
	}
}
