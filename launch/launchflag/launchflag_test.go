package launchflag

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fathom-ml/fathom/launch"
)

func TestParseArgs(t *testing.T) {
	for _, test := range []struct {
		name string
		args []string
		want launch.Config // only the fields compared below
	}{
		{
			name: "defaults",
			args: []string{"--", "worker"},
			want: launch.Config{Command: []string{"worker"}, NProcPerNode: 1, NNodes: 1, MasterAddr: "127.0.0.1", Grace: 5 * time.Second, ThreadsPerWorker: launch.AutoThreads, TailLines: 10},
		},
		{
			name: "no dash-dash, command flags untouched",
			args: []string{"-n", "4", "sh", "-c", "echo $RANK", "--grace", "1s"},
			want: launch.Config{Command: []string{"sh", "-c", "echo $RANK", "--grace", "1s"}, NProcPerNode: 4, NNodes: 1, MasterAddr: "127.0.0.1", Grace: 5 * time.Second, ThreadsPerWorker: launch.AutoThreads, TailLines: 10},
		},
		{
			name: "multi-node",
			args: []string{"--nproc-per-node=2", "--nnodes", "3", "--node-rank", "2", "--master-addr", "job-0.svc", "--master-port", "29500", "--", "fathom", "train", "x.yaml"},
			want: launch.Config{Command: []string{"fathom", "train", "x.yaml"}, NProcPerNode: 2, NNodes: 3, NodeRank: 2, MasterAddr: "job-0.svc", MasterPort: 29500, Grace: 5 * time.Second, ThreadsPerWorker: launch.AutoThreads, TailLines: 10},
		},
		{
			name: "restarts, grace, threads, prefix, tail",
			args: []string{"-n", "2", "--max-restarts", "3", "--grace", "250ms", "--threads-per-worker", "auto", "--no-prefix", "--tail-lines", "0", "--", "w"},
			want: launch.Config{Command: []string{"w"}, NProcPerNode: 2, NNodes: 1, MasterAddr: "127.0.0.1", MaxRestarts: 3, Grace: 250 * time.Millisecond, ThreadsPerWorker: launch.AutoThreads, NoPrefix: true, TailLines: -1},
		},
		{
			name: "no grace",
			args: []string{"--grace=0", "w"},
			want: launch.Config{Command: []string{"w"}, NProcPerNode: 1, NNodes: 1, MasterAddr: "127.0.0.1", Grace: -1, ThreadsPerWorker: launch.AutoThreads, TailLines: 10},
		},
		{
			name: "threads number",
			args: []string{"--threads-per-worker=3", "w"},
			want: launch.Config{Command: []string{"w"}, NProcPerNode: 1, NNodes: 1, MasterAddr: "127.0.0.1", Grace: 5 * time.Second, ThreadsPerWorker: 3, TailLines: 10},
		},
		{
			name: "threads left alone",
			args: []string{"--threads-per-worker=0", "w"},
			want: launch.Config{Command: []string{"w"}, NProcPerNode: 1, NNodes: 1, MasterAddr: "127.0.0.1", Grace: 5 * time.Second, ThreadsPerWorker: 0, TailLines: 10},
		},
	} {
		t.Run(test.name, func(t *testing.T) {
			got, err := Parse(test.args)
			if err != nil {
				t.Fatalf("Parse(%q): %v", test.args, err)
			}
			w := test.want
			if !slices.Equal(got.Command, w.Command) || got.NProcPerNode != w.NProcPerNode || got.NNodes != w.NNodes ||
				got.NodeRank != w.NodeRank || got.MasterAddr != w.MasterAddr || got.MasterPort != w.MasterPort ||
				got.MaxRestarts != w.MaxRestarts || got.Grace != w.Grace || got.ThreadsPerWorker != w.ThreadsPerWorker ||
				got.NoPrefix != w.NoPrefix || got.TailLines != w.TailLines {
				t.Errorf("Parse(%q) =\n %+v\nwant\n %+v", test.args, got, w)
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
		if c, err := Parse(args); err == nil {
			t.Errorf("Parse(%q) = %+v, want an error", args, c)
		} else if !errors.Is(err, launch.ErrConfig) {
			t.Errorf("Parse(%q) error %v does not wrap launch.ErrConfig", args, err)
		}
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
			1, 4, launch.BackendEtcd, "10.0.0.5:2379", "job-7", "", 0},
		{[]string{"--nnodes=2", "--rdzv-backend=etcd", "--rdzv-endpoint=a:1,b:2", "--rdzv-id=j", "--rdzv-host", "10.0.0.9", "--rdzv-last-call", "10s", "--", "w"},
			2, 2, launch.BackendEtcd, "a:1,b:2", "j", "10.0.0.9", 10 * time.Second},
		{[]string{"--nnodes", "3:3", "--master-port", "1", "w"}, 3, 3, launch.BackendStatic, "", "", "", 0},
	} {
		c, err := Parse(test.args)
		if err != nil {
			t.Errorf("Parse(%q): %v", test.args, err)
			continue
		}
		// The zero values' documented meanings (launch.Config): MinNodes 0
		// is NNodes, an empty backend the static one.
		if c.MinNodes == 0 {
			c.MinNodes = c.NNodes
		}
		if c.RendezvousBackend == "" {
			c.RendezvousBackend = launch.BackendStatic
		}
		if c.MinNodes != test.minNodes || c.NNodes != test.maxNodes || c.RendezvousBackend != test.backend ||
			c.RendezvousEndpoint != test.endpoint || c.RendezvousID != test.id || c.RendezvousHost != test.host || c.RendezvousLastCall != test.lastCall {
			t.Errorf("Parse(%q) = %+v", test.args, c)
		}
	}
	th := threadsValue(launch.AutoThreads)
	if th.String() != "auto" {
		t.Errorf("String of auto = %q", th.String())
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
		c, err := Parse(test.args)
		if err == nil {
			t.Errorf("Parse(%q) = %+v, want an error", test.args, c)
		} else if !errors.Is(err, launch.ErrConfig) || !strings.Contains(err.Error(), test.want) {
			t.Errorf("Parse(%q) error %v: want launch.ErrConfig saying %q", test.args, err, test.want)
		}
	}
}
