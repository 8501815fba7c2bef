package launch

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/fathom-ml/fathom/launch/rdzv"
)

// Defaults used when a Config field is left at its zero value.
const (
	DefaultMasterAddr = "127.0.0.1"
	DefaultGrace      = 5 * time.Second
	// DefaultRendezvousTimeout is Config.RendezvousTimeout's default.
	DefaultRendezvousTimeout = 5 * time.Minute
	DefaultTailLines         = 10
	// DefaultRendezvousLastCall is Config.RendezvousLastCall's default.
	DefaultRendezvousLastCall = rdzv.DefaultLastCall
)

// Rendezvous backends (Config.RendezvousBackend, --rdzv-backend).
const (
	// BackendStatic is the default: a fixed number of nodes, each given
	// its --node-rank, meeting in node 0's store on MASTER_ADDR:MASTER_PORT.
	BackendStatic = "static"
	// BackendEtcd: elastic membership, the launchers meet in etcd and form
	// numbered rounds of MinNodes to NNodes nodes (package launch/rdzv).
	BackendEtcd = "etcd"
)

// AutoThreads as Config.ThreadsPerWorker splits this machine's CPUs evenly
// among the local workers: max(1, runtime.NumCPU()/NProcPerNode).
const AutoThreads = -1

// Limits that keep rank arithmetic and resource use sane.
const (
	maxProcsPerNode = 4096
	maxNodes        = 1 << 20
	maxWorldSize    = 1 << 24
)

// Config describes one launch: which command to start, how many copies, and
// where this node sits in the job. The zero value of every field except
// Command means "default"; see the field comments.
type Config struct {
	// Command is the worker program and its arguments; required.
	Command []string

	// NProcPerNode is N, the number of workers started on this node
	// (LOCAL_WORLD_SIZE). 0 means 1.
	NProcPerNode int
	// NNodes is M, the number of launchers (nodes) in the job. 0 means 1.
	// With the etcd backend it is the largest number of nodes a round may
	// have (MAX of --nnodes MIN:MAX).
	NNodes int
	// MinNodes, with the etcd backend, is the smallest number of nodes a
	// round may start with (MIN of --nnodes MIN:MAX). 0 means NNodes: a
	// round of fixed size. Without a backend it must be 0 or NNodes.
	MinNodes int
	// NodeRank is this node's index in [0, NNodes).
	NodeRank int
	// MasterAddr is the host of global rank 0 (MASTER_ADDR).
	// "" means DefaultMasterAddr.
	MasterAddr string
	// MasterPort is MASTER_PORT. 0 means: pick a free port on MasterAddr,
	// which is allowed only when NNodes == 1 (every node must agree on it).
	MasterPort int

	// MaxRestarts is how many times the local group is restarted after a
	// worker failure before Run gives up.
	MaxRestarts int
	// KeepGoing leaves the other workers running when one fails (an
	// asynchronous parameter-server job, whose servers and remaining
	// workers carry on without it); Run still returns ErrWorkerFailed once
	// they have all ended. It excludes restarts.
	KeepGoing bool
	// Grace is how long workers get between SIGTERM (or a forwarded
	// signal) and SIGKILL. 0 means DefaultGrace; negative means SIGKILL
	// right after the first signal.
	Grace time.Duration
	// RendezvousTimeout bounds how long the launchers of a job of several
	// nodes wait for each other: to join an attempt, and to report its end;
	// with the etcd backend also to form a round (0 means
	// DefaultRendezvousTimeout).
	RendezvousTimeout time.Duration
	// RendezvousBackend is BackendStatic ("" means it) or BackendEtcd.
	RendezvousBackend string
	// RendezvousEndpoint is the etcd cluster's client address, HOST:PORT
	// (several, comma-separated, for a cluster of several members).
	RendezvousEndpoint string
	// RendezvousID names the job in etcd: every launcher of one job uses
	// the same, and a new job a new one.
	RendezvousID string
	// RendezvousHost is the address this node advertises when it is node 0
	// of a round (its store listens there); "" means the local address
	// from which it reaches etcd.
	RendezvousHost string
	// RendezvousLastCall is how long a round that has MinNodes (but not
	// NNodes) nodes waits for more before it starts. 0 means
	// DefaultRendezvousLastCall; negative means no wait.
	RendezvousLastCall time.Duration
	// RendezvousTTL is the lease of a launcher's keys in etcd: a node that
	// dies is seen gone after about that long. 0 means rdzv.DefaultTTL.
	RendezvousTTL time.Duration

	// ThreadsPerWorker, when > 0, sets GOMAXPROCS and OMP_NUM_THREADS of
	// every worker; AutoThreads splits the CPUs evenly; 0 leaves both alone.
	ThreadsPerWorker int

	// NoPrefix turns off the "[rank] " prefix on worker output lines.
	// Output stays line-buffered either way.
	NoPrefix bool
	// TailLines is how many of the failed worker's last stderr lines the
	// failure summary shows. 0 means DefaultTailLines; negative means none.
	TailLines int

	// Env is the base environment of the workers ("KEY=VALUE" entries);
	// nil means os.Environ(). The distributed variables are set on top.
	Env []string
	// Dir is the workers' working directory; "" means the launcher's.
	Dir string
	// Stdout and Stderr receive the workers' (prefixed) output and the
	// launcher's own messages; nil means os.Stdout and os.Stderr.
	Stdout, Stderr io.Writer
	// Signals, if not nil, delivers signals to forward to the workers
	// (the CLI feeds it from signal.Notify for SIGINT and SIGTERM). The
	// first signal is forwarded and starts the grace period; a second one
	// kills the workers with SIGKILL at once.
	Signals <-chan os.Signal
}

// DefaultConfig returns a Config with every default filled in explicitly;
// AddFlags uses its values as flag defaults.
func DefaultConfig() Config {
	return Config{
		NProcPerNode: 1,
		NNodes:       1,
		MasterAddr:   DefaultMasterAddr,
		Grace:        DefaultGrace,
		TailLines:    DefaultTailLines,
		// Workers that each use every CPU contend for them: the default
		// splits the CPUs (torchrun sets OMP_NUM_THREADS=1 for the same
		// reason); --threads-per-worker 0 leaves GOMAXPROCS alone.
		ThreadsPerWorker: AutoThreads,
	}
}

// withDefaults returns c with zero-valued fields replaced by their defaults.
func (c Config) withDefaults() Config {
	if c.NProcPerNode == 0 {
		c.NProcPerNode = 1
	}
	if c.NNodes == 0 {
		c.NNodes = 1
	}
	if c.MinNodes == 0 {
		c.MinNodes = c.NNodes
	}
	if c.RendezvousBackend == "" {
		c.RendezvousBackend = BackendStatic
	}
	if c.MasterAddr == "" {
		c.MasterAddr = DefaultMasterAddr
	}
	if c.Grace == 0 {
		c.Grace = DefaultGrace
	}
	if c.RendezvousTimeout == 0 {
		c.RendezvousTimeout = DefaultRendezvousTimeout
	}
	if c.TailLines == 0 {
		c.TailLines = DefaultTailLines
	}
	if c.Env == nil {
		c.Env = os.Environ()
	}
	if c.Stdout == nil {
		c.Stdout = os.Stdout
	}
	if c.Stderr == nil {
		c.Stderr = os.Stderr
	}
	return c
}

// ErrConfig is wrapped by every error Validate returns.
var ErrConfig = errors.New("launch: invalid config")

// Validate reports the first problem with c (after defaults are applied),
// as an error wrapping ErrConfig.
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case len(c.Command) == 0 || c.Command[0] == "":
		return configErr("no command to run")
	case c.NProcPerNode < 1 || c.NProcPerNode > maxProcsPerNode:
		return configErr("nproc-per-node %d out of range [1, %d]", c.NProcPerNode, maxProcsPerNode)
	case c.NNodes < 1 || c.NNodes > maxNodes:
		return configErr("nnodes %d out of range [1, %d]", c.NNodes, maxNodes)
	case c.MinNodes < 1 || c.MinNodes > c.NNodes:
		return configErr("nnodes %d:%d: want MIN:MAX with 1 <= MIN <= MAX", c.MinNodes, c.NNodes)
	case c.RendezvousBackend != BackendStatic && c.RendezvousBackend != BackendEtcd:
		return configErr("rdzv-backend %q: want %q or %q", c.RendezvousBackend, BackendStatic, BackendEtcd)
	case c.RendezvousBackend == BackendStatic && c.MinNodes != c.NNodes:
		return configErr("nnodes %d:%d: a range of nodes needs an elastic rendezvous (--rdzv-backend %s --rdzv-endpoint HOST:PORT --rdzv-id JOB)",
			c.MinNodes, c.NNodes, BackendEtcd)
	case c.NNodes*c.NProcPerNode > maxWorldSize:
		return configErr("world size %d x %d exceeds %d", c.NNodes, c.NProcPerNode, maxWorldSize)
	case c.NodeRank < 0 || c.NodeRank >= c.NNodes:
		return configErr("node-rank %d out of range [0, %d)", c.NodeRank, c.NNodes)
	case c.MasterPort < 0 || c.MasterPort > 65535:
		return configErr("master-port %d out of range [0, 65535]", c.MasterPort)
	case !c.elastic() && c.NNodes > 1 && c.MasterPort == 0:
		return configErr("nnodes is %d: every node must be given the same --master-port", c.NNodes)
	case strings.ContainsAny(c.MasterAddr, " \t\n="):
		return configErr("master-addr %q is not a host name or address", c.MasterAddr)
	case c.MaxRestarts < 0:
		return configErr("max-restarts %d is negative", c.MaxRestarts)
	case c.KeepGoing && c.MaxRestarts > 0:
		return configErr("keep-going leaves the others running after a failure: it cannot be combined with max-restarts %d", c.MaxRestarts)
	case c.RendezvousTimeout < 0:
		return configErr("rdzv-timeout %v is negative", c.RendezvousTimeout)
	case c.ThreadsPerWorker < AutoThreads:
		return configErr("threads-per-worker %d is negative", c.ThreadsPerWorker)
	case c.elastic():
		return c.validateElastic()
	}
	return nil
}

// elastic reports whether the nodes meet in etcd (after withDefaults).
func (c Config) elastic() bool { return c.RendezvousBackend == BackendEtcd }

// validateElastic checks the settings of the etcd backend; c has its
// defaults and passed the checks before.
func (c Config) validateElastic() error {
	switch {
	case c.NodeRank != 0:
		return configErr("--node-rank %d: with --rdzv-backend %s the rendezvous gives every node its rank", c.NodeRank, BackendEtcd)
	case c.MasterPort != 0:
		return configErr("--master-port %d: with --rdzv-backend %s node 0 of every round picks a free port for its store (set --rdzv-host for its address)", c.MasterPort, BackendEtcd)
	case c.RendezvousEndpoint == "":
		return configErr("--rdzv-backend %s needs --rdzv-endpoint HOST:PORT (the etcd cluster's client address)", BackendEtcd)
	case c.RendezvousID == "":
		return configErr("--rdzv-backend %s needs --rdzv-id JOB (the same on every node, a new one for every job)", BackendEtcd)
	case strings.ContainsAny(c.RendezvousHost, " \t\n=/"):
		return configErr("rdzv-host %q is not a host name or address", c.RendezvousHost)
	}
	if err := c.rdzvConfig().Validate(); err != nil {
		return configErr("%v", strings.TrimPrefix(err.Error(), rdzv.ErrConfig.Error()+": "))
	}
	return nil
}

// configErr returns an error wrapping ErrConfig.
func configErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, args...))
}

// rdzvConfig is the etcd rendezvous's configuration.
func (c Config) rdzvConfig() rdzv.Config {
	var endpoints []string
	for _, e := range strings.Split(c.RendezvousEndpoint, ",") {
		if e = strings.TrimSpace(e); e != "" {
			endpoints = append(endpoints, e)
		}
	}
	return rdzv.Config{
		Endpoints: endpoints,
		ID:        c.RendezvousID,
		MinNodes:  c.MinNodes,
		MaxNodes:  c.NNodes,
		Host:      c.RendezvousHost,
		TTL:       c.RendezvousTTL,
		LastCall:  c.RendezvousLastCall,
		Timeout:   c.RendezvousTimeout,
	}
}

// threads returns the GOMAXPROCS value to give each worker, 0 for none.
func (c Config) threads() int {
	if c.ThreadsPerWorker == AutoThreads {
		return max(1, runtime.NumCPU()/c.NProcPerNode)
	}
	return c.ThreadsPerWorker
}

// ParseThreads parses a --threads-per-worker value: a non-negative integer,
// or "auto" (returned as AutoThreads).
func ParseThreads(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "auto" {
		return AutoThreads, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("threads-per-worker %q: want a non-negative integer or \"auto\"", s)
	}
	return n, nil
}
