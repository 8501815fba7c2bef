package launch

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/fathom-ml/fathom/internal/distenv"
)

// The names of the environment variables a worker receives are package
// internal/distenv's (distenv.Rank, distenv.JobToken, ...), shared with the
// collective layer that reads them.

// Topology is the rank layout of a job: NNodes launchers, each starting
// NProcPerNode workers; this launcher is node NodeRank.
type Topology struct {
	NNodes, NodeRank, NProcPerNode int
}

// WorldSize is the number of workers in the whole job.
func (t Topology) WorldSize() int { return t.NNodes * t.NProcPerNode }

// Rank is the global rank of this node's worker localRank. Ranks are
// assigned node by node, as torchrun does with static rendezvous.
func (t Topology) Rank(localRank int) int { return t.NodeRank*t.NProcPerNode + localRank }

// Worker is what one worker is told about itself, minus the job token
// (kept out of this type so printing it can never leak the secret).
type Worker struct {
	Topology
	LocalRank    int
	MasterAddr   string
	MasterPort   int
	RestartCount int
	// StoreHosted: the launcher of node 0 hosts the job's store
	// (FATHOM_STORE_HOSTED=1), as it does for a job of several nodes.
	StoreHosted bool
	MaxRestarts int
	Threads     int // GOMAXPROCS and OMP_NUM_THREADS; 0 leaves them alone
}

// Rank is the worker's global rank.
func (w Worker) Rank() int { return w.Topology.Rank(w.LocalRank) }

// Vars returns the worker's distributed variables as "KEY=VALUE" entries,
// in a fixed order. The job token is not among them.
func (w Worker) Vars() []string {
	vars := []string{
		distenv.Rank + "=" + strconv.Itoa(w.Rank()),
		distenv.WorldSize + "=" + strconv.Itoa(w.WorldSize()),
		distenv.LocalRank + "=" + strconv.Itoa(w.LocalRank),
		distenv.LocalWorldSize + "=" + strconv.Itoa(w.NProcPerNode),
		distenv.MasterAddr + "=" + w.MasterAddr,
		distenv.MasterPort + "=" + strconv.Itoa(w.MasterPort),
		distenv.GroupRank + "=" + strconv.Itoa(w.NodeRank),
		distenv.NodeRank + "=" + strconv.Itoa(w.NodeRank),
		distenv.GroupWorldSize + "=" + strconv.Itoa(w.NNodes),
		distenv.RestartCount + "=" + strconv.Itoa(w.RestartCount),
		distenv.MaxRestarts + "=" + strconv.Itoa(w.MaxRestarts),
	}
	if w.StoreHosted {
		vars = append(vars, distenv.StoreHosted+"=1")
	}
	if w.Threads > 0 {
		t := strconv.Itoa(w.Threads)
		vars = append(vars, distenv.GOMAXPROCS+"="+t, distenv.OMPNumThreads+"="+t)
	}
	return vars
}

// Environ returns the full environment of the worker: base with every
// variable of Vars and the job token set (replacing any earlier value).
func (w Worker) Environ(base []string, token string) []string {
	return mergeEnv(base, append(w.Vars(), distenv.JobToken+"="+token)...)
}

// mergeEnv returns base without the keys that overrides set, followed by
// overrides. Keys compare exactly, as on Unix.
func mergeEnv(base []string, overrides ...string) []string {
	set := make(map[string]bool, len(overrides))
	for _, kv := range overrides {
		set[envKey(kv)] = true
	}
	out := make([]string, 0, len(base)+len(overrides))
	for _, kv := range base {
		if !set[envKey(kv)] {
			out = append(out, kv)
		}
	}
	return append(out, overrides...)
}

func envKey(kv string) string {
	k, _, _ := strings.Cut(kv, "=")
	return k
}

// lookupEnv returns the value of key in env; the last entry wins, as in
// os/exec.
func lookupEnv(env []string, key string) (string, bool) { return distenv.Lookup(env)(key) }

// JobToken returns the job's secret: FATHOM_JOB_TOKEN from env if it is set
// and not empty (so every node of a job shares it), otherwise a new token
// from distenv.NewJobToken (32 random bytes, hex-encoded). generated says
// which. The token must never be logged or printed.
func JobToken(env []string) (token string, generated bool, err error) {
	if t, ok := lookupEnv(env, distenv.JobToken); ok && t != "" {
		return t, false, nil
	}
	t, err := distenv.NewJobToken()
	if err != nil {
		return "", false, fmt.Errorf("launch: %w", err)
	}
	return t, true, nil
}

// FreePort asks the kernel for a free TCP port on host and returns it. The
// port is released before FreePort returns, so another process may take it
// in between; that race is inherent (torchrun has it too) and harmless in
// practice on a single machine.
func FreePort(host string) (int, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("launch: pick a free port on %s (pass a master port instead): %w", host, err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
