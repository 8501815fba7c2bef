// Package distenv names the environment variables of a distributed fathom
// job, once, and parses them. The launcher (package launch, `fathom run`)
// writes them for every worker; the collective layer (package comm) reads
// them to join the job. Neither side spells a variable name itself.
//
// RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR and
// MASTER_PORT are the names torchrun and the Kubernetes training operators
// set, so a fathom worker runs unchanged under them; the FATHOM_ ones are
// fathom's own.
//
//	e, err := distenv.FromOS()
//	if err != nil { ... }
//	fmt.Println(e.Rank, e.WorldSize, e.MasterAddr, e.MasterPort)
//
// The package imports nothing of fathom, so both sides can import it
// without the launcher depending on the collectives.
package distenv

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Names of the environment variables.
const (
	Rank           = "RANK"             // global rank, node_rank*N + local_rank
	WorldSize      = "WORLD_SIZE"       // number of ranks in the job, M*N
	LocalRank      = "LOCAL_RANK"       // rank within this node, [0, N)
	LocalWorldSize = "LOCAL_WORLD_SIZE" // ranks on this node, N
	MasterAddr     = "MASTER_ADDR"      // host of rank 0's rendezvous store
	MasterPort     = "MASTER_PORT"      // its port
	GroupRank      = "GROUP_RANK"       // node rank (torchrun's name)
	NodeRank       = "NODE_RANK"        // node rank
	GroupWorldSize = "GROUP_WORLD_SIZE" // number of nodes, M (torchrun's name)

	RestartCount = "FATHOM_RESTART_COUNT" // 0 at the first start, +1 at every restart
	MaxRestarts  = "FATHOM_MAX_RESTARTS"  // the launcher's restart budget
	JobToken     = "FATHOM_JOB_TOKEN"     // the job's shared secret; never print it
	// StoreHosted "1": the launcher hosts the rendezvous store on
	// MASTER_ADDR:MASTER_PORT for the job's whole life (several nodes with
	// coordinated restarts); rank 0 dials it like every other rank.
	StoreHosted   = "FATHOM_STORE_HOSTED"
	BindAddr      = "FATHOM_BIND_ADDR"       // IP the worker listener binds to
	SHM           = "FATHOM_SHM"             // "0" disables shared memory (TCP only)
	SHMBytes      = "FATHOM_SHM_BYTES"       // size of each shared-memory ring direction
	MaxEarlyBytes = "FATHOM_MAX_EARLY_BYTES" // per-peer bound on messages received early
	Timeout       = "FATHOM_TIMEOUT"         // per-collective timeout, a Go duration
	// HeartbeatTimeout is how long a rank may go unheard before the others
	// name it and abort, a Go duration.
	HeartbeatTimeout = "FATHOM_HEARTBEAT_TIMEOUT"

	GOMAXPROCS    = "GOMAXPROCS"
	OMPNumThreads = "OMP_NUM_THREADS"
)

// Defaults of Env fields whose variable is unset.
const (
	DefaultMasterAddr = "127.0.0.1"
	DefaultMasterPort = 29500
)

// Env is the distributed environment of one worker as the collective layer
// reads it. Integer fields whose variable is unset hold the defaults Parse
// documents.
type Env struct {
	Rank, WorldSize int // 0 and 1 when unset: a single-process job
	// LocalRank and LocalWorldSize are -1 when unset.
	LocalRank, LocalWorldSize int

	MasterAddr string // DefaultMasterAddr when unset
	MasterPort int    // DefaultMasterPort when unset

	JobToken string
	BindAddr string
	// NoSHM is set by FATHOM_SHM=0.
	NoSHM bool
	// SHMBytes and MaxEarlyBytes are 0 when unset (the consumer's default).
	SHMBytes      int
	MaxEarlyBytes int
	// RestartCount is the restart generation (FATHOM_RESTART_COUNT, 0 when
	// unset); StoreHosted is set by FATHOM_STORE_HOSTED=1.
	RestartCount int
	StoreHosted  bool
	// Timeout and HeartbeatTimeout are 0 when unset.
	Timeout          time.Duration
	HeartbeatTimeout time.Duration
}

// Parse reads the variables through lookup (os.LookupEnv, or Lookup of an
// environment list). An empty value counts as unset. Integers must be
// decimal; FATHOM_TIMEOUT and FATHOM_HEARTBEAT_TIMEOUT are Go durations ("90s", "10m"). Parse checks
// syntax only: whether the rank fits the world size is the consumer's call.
func Parse(lookup func(key string) (string, bool)) (Env, error) {
	e := Env{WorldSize: 1, LocalRank: -1, LocalWorldSize: -1, MasterAddr: DefaultMasterAddr, MasterPort: DefaultMasterPort}
	get := func(key string) string {
		v, _ := lookup(key)
		return v
	}
	for _, v := range []struct {
		key string
		dst *int
	}{
		{Rank, &e.Rank}, {WorldSize, &e.WorldSize}, {LocalRank, &e.LocalRank},
		{LocalWorldSize, &e.LocalWorldSize}, {MasterPort, &e.MasterPort}, {SHMBytes, &e.SHMBytes},
		{MaxEarlyBytes, &e.MaxEarlyBytes}, {RestartCount, &e.RestartCount},
	} {
		s := get(v.key)
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return e, fmt.Errorf("environment %s=%q is not an integer", v.key, s)
		}
		*v.dst = n
	}
	if v := get(MasterAddr); v != "" {
		e.MasterAddr = v
	}
	e.JobToken = get(JobToken)
	e.BindAddr = get(BindAddr)
	e.NoSHM = get(SHM) == "0"
	e.StoreHosted = get(StoreHosted) == "1"
	for _, v := range []struct {
		key string
		dst *time.Duration
	}{{Timeout, &e.Timeout}, {HeartbeatTimeout, &e.HeartbeatTimeout}} {
		s := get(v.key)
		if s == "" {
			continue
		}
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil {
			return e, fmt.Errorf("environment %s=%q: %v", v.key, s, err)
		}
		*v.dst = d
	}
	return e, nil
}

// FromOS parses the process's own environment.
func FromOS() (Env, error) { return Parse(os.LookupEnv) }

// Lookup returns a lookup function over an environment list of "KEY=VALUE"
// entries (as exec.Cmd.Env); the last entry of a key wins, as in os/exec.
func Lookup(env []string) func(key string) (string, bool) {
	return func(key string) (string, bool) {
		val, found := "", false
		for _, kv := range env {
			if k, v, ok := strings.Cut(kv, "="); ok && k == key {
				val, found = v, true
			}
		}
		return val, found
	}
}

// NewJobToken returns a new job secret: 32 bytes from crypto/rand,
// hex-encoded. It is the only place fathom draws a job token.
func NewJobToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generate job token: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}
