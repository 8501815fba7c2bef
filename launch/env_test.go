package launch

import (
	"encoding/hex"
	"fmt"
	"net"
	"slices"
	"strconv"
	"testing"

	"github.com/fathom-ml/fathom/internal/distenv"
)

func TestTopologyRanks(t *testing.T) {
	for _, test := range []struct {
		topo  Topology
		local int
		rank  int
		world int
	}{
		{Topology{NNodes: 1, NodeRank: 0, NProcPerNode: 1}, 0, 0, 1},
		{Topology{NNodes: 1, NodeRank: 0, NProcPerNode: 4}, 3, 3, 4},
		{Topology{NNodes: 2, NodeRank: 1, NProcPerNode: 4}, 0, 4, 8},
		{Topology{NNodes: 3, NodeRank: 2, NProcPerNode: 2}, 1, 5, 6},
		{Topology{NNodes: 8, NodeRank: 7, NProcPerNode: 8}, 7, 63, 64},
	} {
		if got := test.topo.Rank(test.local); got != test.rank {
			t.Errorf("%+v.Rank(%d) = %d, want %d", test.topo, test.local, got, test.rank)
		}
		if got := test.topo.WorldSize(); got != test.world {
			t.Errorf("%+v.WorldSize() = %d, want %d", test.topo, got, test.world)
		}
	}
}

// Every global rank of a job is produced by exactly one (node, local rank).
func TestTopologyRanksAreAPartition(t *testing.T) {
	const m, n = 5, 3
	seen := make([]int, m*n)
	for node := range m {
		for local := range n {
			seen[Topology{NNodes: m, NodeRank: node, NProcPerNode: n}.Rank(local)]++
		}
	}
	for r, c := range seen {
		if c != 1 {
			t.Errorf("rank %d produced %d times", r, c)
		}
	}
}

func TestWorkerVars(t *testing.T) {
	w := Worker{
		Topology:     Topology{NNodes: 2, NodeRank: 1, NProcPerNode: 3},
		LocalRank:    2,
		MasterAddr:   "job-0.svc",
		MasterPort:   29500,
		RestartCount: 4,
		MaxRestarts:  5,
	}
	want := []string{
		"RANK=5", "WORLD_SIZE=6", "LOCAL_RANK=2", "LOCAL_WORLD_SIZE=3",
		"MASTER_ADDR=job-0.svc", "MASTER_PORT=29500", "GROUP_RANK=1", "NODE_RANK=1",
		"GROUP_WORLD_SIZE=2", "FATHOM_RESTART_COUNT=4", "FATHOM_MAX_RESTARTS=5",
	}
	if got := w.Vars(); !slices.Equal(got, want) {
		t.Errorf("Vars() =\n %q\nwant\n %q", got, want)
	}
	w.Threads = 2
	got := w.Vars()
	if !slices.Contains(got, "GOMAXPROCS=2") || !slices.Contains(got, "OMP_NUM_THREADS=2") {
		t.Errorf("Vars() with Threads=2 = %q", got)
	}
}

func TestWorkerEnvironOverridesBase(t *testing.T) {
	w := Worker{Topology: Topology{NNodes: 1, NProcPerNode: 2}, LocalRank: 1, MasterAddr: "127.0.0.1", MasterPort: 1234}
	base := []string{"PATH=/bin", "RANK=99", "FATHOM_JOB_TOKEN=old", "NOEQUALS", "HOME=/root", "RANK=98"}
	env := w.Environ(base, "secret")
	count := map[string]int{}
	for _, kv := range env {
		count[envKey(kv)]++
	}
	for k, c := range count {
		if c != 1 {
			t.Errorf("key %s appears %d times in %q", k, c, env)
		}
	}
	for key, want := range map[string]string{"RANK": "1", "PATH": "/bin", "HOME": "/root", distenv.JobToken: "secret", "WORLD_SIZE": "2"} {
		if got, _ := lookupEnv(env, key); got != want {
			t.Errorf("%s = %q, want %q", key, got, want)
		}
	}
	if _, ok := lookupEnv(env, "GOMAXPROCS"); ok {
		t.Errorf("GOMAXPROCS set without Threads")
	}
}

func TestLookupEnvLastWins(t *testing.T) {
	env := []string{"A=1", "B=2", "A=3", "C"}
	if v, ok := lookupEnv(env, "A"); !ok || v != "3" {
		t.Errorf("A = %q, %v", v, ok)
	}
	if _, ok := lookupEnv(env, "C"); ok {
		t.Errorf("entry without '=' found")
	}
}

func TestJobToken(t *testing.T) {
	tok, gen, err := JobToken([]string{"PATH=/bin"})
	if err != nil || !gen {
		t.Fatalf("JobToken without env: gen=%v err=%v", gen, err)
	}
	if b, err := hex.DecodeString(tok); err != nil || len(b) != 32 {
		t.Errorf("generated token is not 32 hex-encoded bytes (len %d, err %v)", len(tok), err)
	}
	tok2, _, _ := JobToken(nil)
	if tok2 == tok {
		t.Errorf("two generated tokens are equal")
	}
	got, gen, err := JobToken([]string{"FATHOM_JOB_TOKEN=abc123"})
	if err != nil || gen || got != "abc123" {
		t.Errorf("inherited token: got len %d gen=%v err=%v", len(got), gen, err)
	}
	// An empty inherited token is treated as absent.
	if _, gen, _ := JobToken([]string{"FATHOM_JOB_TOKEN="}); !gen {
		t.Errorf("empty FATHOM_JOB_TOKEN was inherited")
	}
}

func TestFreePort(t *testing.T) {
	port, err := FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if port <= 0 || port > 65535 {
		t.Fatalf("port %d", port)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatalf("free port %d cannot be listened on: %v", port, err)
	}
	ln.Close()
	if _, err := FreePort("192.0.2.1"); err == nil { // TEST-NET-1: not ours
		t.Errorf("FreePort on a foreign address succeeded")
	}
}

func ExampleWorker_Vars() {
	w := Worker{
		Topology:   Topology{NNodes: 2, NodeRank: 1, NProcPerNode: 2},
		LocalRank:  0,
		MasterAddr: "10.0.0.1",
		MasterPort: 29500,
	}
	for _, kv := range w.Vars()[:6] {
		fmt.Println(kv)
	}
	// Output:
	// RANK=2
	// WORLD_SIZE=4
	// LOCAL_RANK=0
	// LOCAL_WORLD_SIZE=2
	// MASTER_ADDR=10.0.0.1
	// MASTER_PORT=29500
}
