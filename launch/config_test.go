package launch

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseArgs(t *testing.T) {
	for _, test := range []struct {
		name string
		args []string
		want Config // only the fields compared below
	}{
		{
			name: "defaults",
			args: []string{"--", "worker"},
			want: Config{Command: []string{"worker"}, NProcPerNode: 1, NNodes: 1, MasterAddr: "127.0.0.1", Grace: 5 * time.Second, ThreadsPerWorker: AutoThreads, TailLines: 10},
		},
		{
			name: "no dash-dash, command flags untouched",
			args: []string{"-n", "4", "sh", "-c", "echo $RANK", "--grace", "1s"},
			want: Config{Command: []string{"sh", "-c", "echo $RANK", "--grace", "1s"}, NProcPerNode: 4, NNodes: 1, MasterAddr: "127.0.0.1", Grace: 5 * time.Second, ThreadsPerWorker: AutoThreads, TailLines: 10},
		},
		{
			name: "multi-node",
			args: []string{"--nproc-per-node=2", "--nnodes", "3", "--node-rank", "2", "--master-addr", "job-0.svc", "--master-port", "29500", "--", "fathom", "train", "x.yaml"},
			want: Config{Command: []string{"fathom", "train", "x.yaml"}, NProcPerNode: 2, NNodes: 3, NodeRank: 2, MasterAddr: "job-0.svc", MasterPort: 29500, Grace: 5 * time.Second, ThreadsPerWorker: AutoThreads, TailLines: 10},
		},
		{
			name: "restarts, grace, threads, prefix, tail",
			args: []string{"-n", "2", "--max-restarts", "3", "--grace", "250ms", "--threads-per-worker", "auto", "--no-prefix", "--tail-lines", "0", "--", "w"},
			want: Config{Command: []string{"w"}, NProcPerNode: 2, NNodes: 1, MasterAddr: "127.0.0.1", MaxRestarts: 3, Grace: 250 * time.Millisecond, ThreadsPerWorker: AutoThreads, NoPrefix: true, TailLines: -1},
		},
		{
			name: "no grace",
			args: []string{"--grace=0", "w"},
			want: Config{Command: []string{"w"}, NProcPerNode: 1, NNodes: 1, MasterAddr: "127.0.0.1", Grace: -1, ThreadsPerWorker: AutoThreads, TailLines: 10},
		},
		{
			name: "threads number",
			args: []string{"--threads-per-worker=3", "w"},
			want: Config{Command: []string{"w"}, NProcPerNode: 1, NNodes: 1, MasterAddr: "127.0.0.1", Grace: 5 * time.Second, ThreadsPerWorker: 3, TailLines: 10},
		},
		{
			name: "threads left alone",
			args: []string{"--threads-per-worker=0", "w"},
			want: Config{Command: []string{"w"}, NProcPerNode: 1, NNodes: 1, MasterAddr: "127.0.0.1", Grace: 5 * time.Second, ThreadsPerWorker: 0, TailLines: 10},
		},
	} {
		t.Run(test.name, func(t *testing.T) {
			got, err := ParseArgs(test.args)
			if err != nil {
				t.Fatalf("ParseArgs(%q): %v", test.args, err)
			}
			w := test.want
			if !slices.Equal(got.Command, w.Command) || got.NProcPerNode != w.NProcPerNode || got.NNodes != w.NNodes ||
				got.NodeRank != w.NodeRank || got.MasterAddr != w.MasterAddr || got.MasterPort != w.MasterPort ||
				got.MaxRestarts != w.MaxRestarts || got.Grace != w.Grace || got.ThreadsPerWorker != w.ThreadsPerWorker ||
				got.NoPrefix != w.NoPrefix || got.TailLines != w.TailLines {
				t.Errorf("ParseArgs(%q) =\n %+v\nwant\n %+v", test.args, got, w)
			}
		})
	}
}

func TestParseArgsErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"-n", "2"},
		{"-n", "2", "--"},
		{"-n", "0", "w"},
		{"-n", "-3", "w"},
		{"-n", "x", "w"},
		{"--nnodes", "2", "--master-port", "1", "--node-rank", "2", "w"},
		{"--node-rank", "-1", "w"},
		{"--nnodes", "2", "w"}, // multi-node needs an agreed port
		{"--master-port", "70000", "w"},
		{"--master-addr", "a b", "w"},
		{"--max-restarts", "-1", "w"},
		{"--grace", "-1s", "w"},
		{"--grace", "soon", "w"},
		{"--tail-lines", "-1", "w"},
		{"--nnodes", "0", "w"},
		{"--threads-per-worker", "-2", "w"},
		{"--threads-per-worker", "many", "w"},
		{"--no-such-flag", "w"},
	} {
		if c, err := ParseArgs(args); err == nil {
			t.Errorf("ParseArgs(%q) = %+v, want an error", args, c)
		} else if !errors.Is(err, ErrConfig) {
			t.Errorf("ParseArgs(%q) error %v does not wrap ErrConfig", args, err)
		}
	}
}

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
	v := threadsValue(AutoThreads)
	if v.String() != "auto" {
		t.Errorf("String of auto = %q", v.String())
	}
	c := Config{NProcPerNode: 1 << 12, ThreadsPerWorker: AutoThreads}
	if c.threads() != 1 {
		t.Errorf("auto threads with more workers than CPUs = %d, want 1", c.threads())
	}
}

func TestParseArgsElastic(t *testing.T) {
	for _, test := range []struct {
		args               []string
		minNodes, maxNodes int
		backend, endpoint  string
		id, host           string
		lastCall           time.Duration
	}{
		{[]string{"--nnodes", "1:4", "--rdzv-backend", "etcd", "--rdzv-endpoint", "10.0.0.5:2379", "--rdzv-id", "job-7", "w"},
			1, 4, BackendEtcd, "10.0.0.5:2379", "job-7", "", 0},
		{[]string{"--nnodes=2", "--rdzv-backend=etcd", "--rdzv-endpoint=a:1,b:2", "--rdzv-id=j", "--rdzv-host", "10.0.0.9", "--rdzv-last-call", "10s", "--", "w"},
			2, 2, BackendEtcd, "a:1,b:2", "j", "10.0.0.9", 10 * time.Second},
		{[]string{"--nnodes", "3:3", "--master-port", "1", "w"}, 3, 3, BackendStatic, "", "", "", 0},
	} {
		c, err := ParseArgs(test.args)
		if err != nil {
			t.Errorf("ParseArgs(%q): %v", test.args, err)
			continue
		}
		c = c.withDefaults()
		if c.MinNodes != test.minNodes || c.NNodes != test.maxNodes || c.RendezvousBackend != test.backend ||
			c.RendezvousEndpoint != test.endpoint || c.RendezvousID != test.id || c.RendezvousHost != test.host || c.RendezvousLastCall != test.lastCall {
			t.Errorf("ParseArgs(%q) = %+v", test.args, c)
		}
	}
	v := nnodesValue{min: new(int), max: new(int)}
	for _, s := range []string{"3", "1:4", "2:2"} {
		if err := v.Set(s); err != nil {
			t.Fatal(err)
		}
		if want := map[string]string{"2:2": "2"}[s]; v.String() != s && v.String() != want {
			t.Errorf("--nnodes %s reads back as %q", s, v.String())
		}
	}
}

func TestParseArgsElasticErrors(t *testing.T) {
	etcd := []string{"--rdzv-backend", "etcd", "--rdzv-endpoint", "127.0.0.1:2379", "--rdzv-id", "j"}
	for _, test := range []struct {
		args []string
		want string
	}{
		{[]string{"--nnodes", "1:4", "w"}, "needs an elastic rendezvous"},
		{[]string{"--nnodes", "3:2", "w"}, "MIN <= MAX"},
		{[]string{"--nnodes", "0:2", "w"}, "MIN <= MAX"},
		{[]string{"--nnodes", "1:", "w"}, "MIN:MAX"},
		{[]string{"--nnodes", ":2", "w"}, "MIN:MAX"},
		{[]string{"--nnodes", "1:2:3", "w"}, "MIN:MAX"},
		{[]string{"--rdzv-backend", "zookeeper", "w"}, `want "static" or "etcd"`},
		{[]string{"--rdzv-backend", "etcd", "--rdzv-id", "j", "w"}, "needs --rdzv-endpoint"},
		{[]string{"--rdzv-backend", "etcd", "--rdzv-endpoint", "h:1", "w"}, "needs --rdzv-id"},
		{append(etcd, "--node-rank", "1", "--nnodes", "2", "w"), "gives every node its rank"},
		{append(etcd, "--master-port", "29500", "w"), "picks a free port"},
		{append(etcd[:4:4], "--rdzv-id", "a/b", "w"), "rendezvous id"},
		{[]string{"--rdzv-backend", "etcd", "--rdzv-endpoint", "nohost", "--rdzv-id", "j", "w"}, "want HOST:PORT"},
	} {
		c, err := ParseArgs(test.args)
		if err == nil {
			t.Errorf("ParseArgs(%q) = %+v, want an error", test.args, c)
		} else if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), test.want) {
			t.Errorf("ParseArgs(%q) error %v: want ErrConfig saying %q", test.args, err, test.want)
		}
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
