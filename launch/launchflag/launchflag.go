package launchflag

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/fathom-ml/fathom/launch"
	"github.com/spf13/pflag"
)

// Add registers the launcher's command-line flags on fs, bound to c's
// fields and using c's current values as defaults. The flag names follow
// torchrun's (with dashes): -n/--nproc-per-node, --nnodes, --node-rank,
// --master-addr, --master-port, --max-restarts, --rdzv-backend,
// --rdzv-endpoint, --rdzv-id, plus --rdzv-host, --rdzv-last-call,
// --rdzv-timeout, --grace, --threads-per-worker, --no-prefix and
// --tail-lines. --nnodes takes N or, with --rdzv-backend etcd, MIN:MAX.
func Add(fs *pflag.FlagSet, c *launch.Config) {
	fs.VarP((*positiveValue)(&c.NProcPerNode), "nproc-per-node", "n", "number of workers to start on this node")
	fs.Var(&nnodesValue{min: &c.MinNodes, max: &c.NNodes}, "nnodes", "number of nodes (one launcher each) in the job: N, or MIN:MAX with --rdzv-backend etcd")
	fs.IntVar(&c.NodeRank, "node-rank", c.NodeRank, "this node's index in [0, nnodes)")
	fs.StringVar(&c.MasterAddr, "master-addr", c.MasterAddr, "host of global rank 0 (MASTER_ADDR)")
	fs.IntVar(&c.MasterPort, "master-port", c.MasterPort, "port of the rendezvous on master-addr (MASTER_PORT); 0 picks a free port (single node only)")
	fs.IntVar(&c.MaxRestarts, "max-restarts", c.MaxRestarts, "restart the workers up to this many times after a worker failure (with several nodes, every node's together)")
	fs.BoolVar(&c.KeepGoing, "keep-going", c.KeepGoing, "when a worker fails, let the others run to their end (an asynchronous parameter-server job); fathom run still fails then (no restarts)")
	fs.DurationVar(&c.RendezvousTimeout, "rdzv-timeout", c.RendezvousTimeout, "with several nodes: how long the launchers wait for each other to start or end an attempt, or to form a round (0: 5m)")
	fs.StringVar(&c.RendezvousBackend, "rdzv-backend", c.RendezvousBackend, "\"static\" (default: --node-rank, --master-addr, --master-port) or \"etcd\" (elastic membership: the launchers meet in etcd)")
	fs.StringVar(&c.RendezvousEndpoint, "rdzv-endpoint", c.RendezvousEndpoint, "with --rdzv-backend etcd: the etcd client address HOST:PORT (comma-separated for several)")
	fs.StringVar(&c.RendezvousID, "rdzv-id", c.RendezvousID, "with --rdzv-backend etcd: the job's name in etcd, the same on every node and new for every job")
	fs.StringVar(&c.RendezvousHost, "rdzv-host", c.RendezvousHost, "with --rdzv-backend etcd: this node's address for the others (its store listens there when it is node 0 of a round); default: the address it reaches etcd from")
	fs.DurationVar(&c.RendezvousLastCall, "rdzv-last-call", c.RendezvousLastCall, "with --rdzv-backend etcd: how long a round that has MIN nodes waits for more (0: 3s)")
	fs.Var((*graceValue)(&c.Grace), "grace", "time between SIGTERM and SIGKILL when stopping workers (0: none)")
	fs.Var((*threadsValue)(&c.ThreadsPerWorker), "threads-per-worker", "set GOMAXPROCS and OMP_NUM_THREADS of each worker to this number, or \"auto\" (the default: CPUs / nproc-per-node); 0 leaves them alone")
	fs.BoolVar(&c.NoPrefix, "no-prefix", c.NoPrefix, "do not prefix worker output lines with \"[rank] \"")
	fs.Var((*tailValue)(&c.TailLines), "tail-lines", "how many of a failed worker's last stderr lines the summary shows")
}

// Parse parses a torchrun-style argument list: launcher flags, an
// optional "--", then the worker command and its arguments. Parsing stops at
// the first argument that is not a flag, so the command's own flags are left
// alone. The result is validated.
func Parse(args []string) (launch.Config, error) {
	c := launch.DefaultConfig()
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SetInterspersed(false)
	Add(fs, &c)
	if err := fs.Parse(args); err != nil {
		return launch.Config{}, fmt.Errorf("%w: %v", launch.ErrConfig, err)
	}
	c.Command = fs.Args()
	if err := c.Validate(); err != nil {
		return launch.Config{}, err
	}
	return c, nil
}

// The flag values below give the command line natural meanings where the
// Config's zero value means "default": -n 0 is an error, --grace 0 means
// no grace, --tail-lines 0 means no lines.

// nnodesValue is --nnodes: N (MinNodes 0: fixed), or MIN:MAX.
type nnodesValue struct{ min, max *int }

func (v *nnodesValue) String() string {
	if v.max == nil {
		return ""
	}
	if *v.min != 0 && *v.min != *v.max {
		return strconv.Itoa(*v.min) + ":" + strconv.Itoa(*v.max)
	}
	return strconv.Itoa(*v.max)
}

func (v *nnodesValue) Type() string { return "N|MIN:MAX" }

func (v *nnodesValue) Set(s string) error {
	lo, hi, isRange := strings.Cut(s, ":")
	minN, err1 := strconv.Atoi(lo)
	maxN, err2 := strconv.Atoi(hi)
	if !isRange {
		maxN, err2 = minN, err1
	}
	if err1 != nil || err2 != nil || minN < 1 || maxN < minN {
		return fmt.Errorf("%q: want a positive integer N or MIN:MAX with 1 <= MIN <= MAX", s)
	}
	*v.max = maxN
	*v.min = 0
	if isRange {
		*v.min = minN
	}
	return nil
}

// positiveValue is an int flag that must be at least 1.
type positiveValue int

func (v *positiveValue) String() string { return strconv.Itoa(int(*v)) }
func (v *positiveValue) Type() string   { return "int" }
func (v *positiveValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return fmt.Errorf("%q is not a positive integer", s)
	}
	*v = positiveValue(n)
	return nil
}

// graceValue is a duration flag where 0 means "no grace".
type graceValue time.Duration

func (v *graceValue) String() string {
	if *v < 0 {
		return "0s"
	}
	return time.Duration(*v).String()
}
func (v *graceValue) Type() string { return "duration" }
func (v *graceValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return fmt.Errorf("%q is not a non-negative duration", s)
	}
	if d == 0 {
		d = -1
	}
	*v = graceValue(d)
	return nil
}

// tailValue is an int flag where 0 means "no lines".
type tailValue int

func (v *tailValue) String() string { return strconv.Itoa(max(0, int(*v))) }
func (v *tailValue) Type() string   { return "int" }
func (v *tailValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return fmt.Errorf("%q is not a non-negative integer", s)
	}
	if n == 0 {
		n = -1
	}
	*v = tailValue(n)
	return nil
}

// threadsValue is the pflag.Value of --threads-per-worker: a positive
// integer, "auto", or 0/"" for unset.
type threadsValue int

func (v *threadsValue) String() string {
	switch int(*v) {
	case launch.AutoThreads:
		return "auto"
	case 0:
		return ""
	}
	return strconv.Itoa(int(*v))
}

func (v *threadsValue) Set(s string) error {
	n, err := launch.ParseThreads(s)
	if err != nil {
		return err
	}
	*v = threadsValue(n)
	return nil
}

func (v *threadsValue) Type() string { return "N|auto" }
