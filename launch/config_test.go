package launch

import (
	"errors"
	"testing"
	"time"
)

func TestValidateDefaults(t *testing.T) {
	// The zero value with a command is valid: every default applies.
	if err := (Config{Command: []string{"w"}}).Validate(); err != nil {
		t.Fatalf("zero config: %v", err)
	}
	c := Config{Command: []string{"w"}}.withDefaults()
	if c.NProcPerNode != 1 || c.NNodes != 1 || c.MasterAddr != DefaultMasterAddr || c.Grace != DefaultGrace || c.TailLines != DefaultTailLines {
		t.Errorf("withDefaults = %+v", c)
	}
	if c.Env == nil || c.Stdout == nil || c.Stderr == nil {
		t.Errorf("withDefaults left Env/Stdout/Stderr nil")
	}
	if err := (Config{Command: []string{"w"}, NProcPerNode: 1 << 13, NNodes: 1 << 12, MasterPort: 1}).Validate(); err == nil {
		t.Errorf("oversized world accepted")
	}
}

func TestParseThreads(t *testing.T) {
	for _, test := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"auto", AutoThreads, true}, {"0", 0, true}, {"1", 1, true}, {" 8 ", 8, true},
		{"-1", 0, false}, {"", 0, false}, {"1.5", 0, false}, {"AUTO", 0, false},
	} {
		got, err := ParseThreads(test.in)
		if (err == nil) != test.ok || (test.ok && got != test.want) {
			t.Errorf("ParseThreads(%q) = %d, %v; want %d, ok=%v", test.in, got, err, test.want, test.ok)
		}
	}
	c := Config{NProcPerNode: 1 << 12, ThreadsPerWorker: AutoThreads}
	if c.threads() != 1 {
		t.Errorf("auto threads with more workers than CPUs = %d, want 1", c.threads())
	}
}

// The checks shared with the static backend apply to the etcd one too.
func TestValidateElasticSharedChecks(t *testing.T) {
	base := Config{Command: []string{"w"}, RendezvousBackend: BackendEtcd, RendezvousEndpoint: "127.0.0.1:2379", RendezvousID: "j", NNodes: 2, MinNodes: 1}
	if err := base.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, edit := range []func(*Config){
		func(c *Config) { c.MaxRestarts = -1 },
		func(c *Config) { c.RendezvousTimeout = -time.Second },
		func(c *Config) { c.ThreadsPerWorker = -2 },
		func(c *Config) { c.RendezvousHost = "a b" },
	} {
		c := base
		edit(&c)
		if err := c.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("Validate(%+v) = %v, want ErrConfig", c, err)
		}
	}
}
