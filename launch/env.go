package launch

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Names of the environment variables a worker receives. The first six are
// the ones torchrun and the Kubernetes training operators set, so a fathom
// worker runs unchanged under them.
const (
	EnvRank           = "RANK"             // global rank, node_rank*N + local_rank
	EnvWorldSize      = "WORLD_SIZE"       // M*N
	EnvLocalRank      = "LOCAL_RANK"       // rank within this node, [0, N)
	EnvLocalWorldSize = "LOCAL_WORLD_SIZE" // N
	EnvMasterAddr     = "MASTER_ADDR"      // host of rank 0's rendezvous
	EnvMasterPort     = "MASTER_PORT"      // its port
	EnvGroupRank      = "GROUP_RANK"       // node rank (torchrun's name)
	EnvNodeRank       = "NODE_RANK"        // node rank
	EnvGroupWorldSize = "GROUP_WORLD_SIZE" // M (torchrun's name)
	EnvRestartCount   = "FATHOM_RESTART_COUNT"
	EnvMaxRestarts    = "FATHOM_MAX_RESTARTS"
	EnvJobToken       = "FATHOM_JOB_TOKEN" // the job's shared secret
	EnvGOMAXPROCS     = "GOMAXPROCS"
	EnvOMPNumThreads  = "OMP_NUM_THREADS"
)

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
	MaxRestarts  int
	Threads      int // GOMAXPROCS and OMP_NUM_THREADS; 0 leaves them alone
}

// Rank is the worker's global rank.
func (w Worker) Rank() int { return w.Topology.Rank(w.LocalRank) }

// Vars returns the worker's distributed variables as "KEY=VALUE" entries,
// in a fixed order. The job token is not among them.
func (w Worker) Vars() []string {
	vars := []string{
		EnvRank + "=" + strconv.Itoa(w.Rank()),
		EnvWorldSize + "=" + strconv.Itoa(w.WorldSize()),
		EnvLocalRank + "=" + strconv.Itoa(w.LocalRank),
		EnvLocalWorldSize + "=" + strconv.Itoa(w.NProcPerNode),
		EnvMasterAddr + "=" + w.MasterAddr,
		EnvMasterPort + "=" + strconv.Itoa(w.MasterPort),
		EnvGroupRank + "=" + strconv.Itoa(w.NodeRank),
		EnvNodeRank + "=" + strconv.Itoa(w.NodeRank),
		EnvGroupWorldSize + "=" + strconv.Itoa(w.NNodes),
		EnvRestartCount + "=" + strconv.Itoa(w.RestartCount),
		EnvMaxRestarts + "=" + strconv.Itoa(w.MaxRestarts),
	}
	if w.Threads > 0 {
		t := strconv.Itoa(w.Threads)
		vars = append(vars, EnvGOMAXPROCS+"="+t, EnvOMPNumThreads+"="+t)
	}
	return vars
}

// Environ returns the full environment of the worker: base with every
// variable of Vars and the job token set (replacing any earlier value).
func (w Worker) Environ(base []string, token string) []string {
	return mergeEnv(base, append(w.Vars(), EnvJobToken+"="+token)...)
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
func lookupEnv(env []string, key string) (string, bool) {
	val, found := "", false
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			val, found = v, true
		}
	}
	return val, found
}

// JobToken returns the job's secret: FATHOM_JOB_TOKEN from env if it is set
// and not empty (so every node of a job shares it), otherwise a new token of
// 32 random bytes from crypto/rand, hex-encoded. generated says which.
// The token must never be logged or printed.
func JobToken(env []string) (token string, generated bool, err error) {
	if t, ok := lookupEnv(env, EnvJobToken); ok && t != "" {
		return t, false, nil
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", false, fmt.Errorf("launch: generate job token: %w", err)
	}
	return hex.EncodeToString(b[:]), true, nil
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
