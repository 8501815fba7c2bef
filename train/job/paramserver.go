package job

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/ps"
	"github.com/fathom-ml/fathom/tensor"
	"github.com/fathom-ml/fathom/train"
	"gopkg.in/yaml.v3"
)

// Parameter-server jobs (distributed.strategy: ps). Under `fathom run -n
// N` the last distributed.servers ranks (or distributed.server_ranks)
// serve and the others are workers, worker i being the i-th of them in
// rank order; rank 0 must be a worker (it writes the files). Every server
// listens on an ephemeral port of the address the job's process group
// binds to, and the addresses travel in one all-gather of the job's
// group. The servers shard the parameters by bytes (ps.Plan) and run the
// configured optimizer on their shard; the workers split every global
// batch (batch_size must be a multiple of the number of workers).
// distributed.staleness makes the servers asynchronous with that SSP
// bound. A server that dies stops the job with an error naming it.
// Synchronous jobs checkpoint: worker 0 asks the servers for their
// optimizer state between two steps (ps.Optimizer.FetchState) and, on
// resume or a restart (`fathom run --max-restarts`), sends it back after
// the parameters; asynchronous servers refuse checkpoints.

// addrWords is the size, in int64 words, of an address in the all-gather.
const addrWords = 8

// psRole is this process's part in a parameter-server job.
type psRole struct {
	server  int   // this rank's server index; -1 on a worker
	worker  int   // this rank's worker index; -1 on a server
	servers []int // job ranks of the servers, by server index
	workers *comm.Group
	ln      net.Listener
	addrs   []string
	async   bool

	client *ps.Client
	strat  *train.ParameterServer
}

// validateStrategy checks distributed.strategy and the parameter-server
// keys.
func (c *Config) validateStrategy(root *yaml.Node) *ConfigError {
	d := &c.Distributed
	line := func(key string) int { return valueLine(root, "distributed", key) }
	if err := c.validatePipeline(root); err != nil {
		return err
	}
	if d.MemoryLimitMB < 0 {
		return &ConfigError{Line: line("memory_limit_mb"), Msg: fmt.Sprintf("distributed.memory_limit_mb: want a positive size, got %g", d.MemoryLimitMB)}
	}
	switch d.Strategy {
	case "", "ddp", "pipeline":
		for key, set := range map[string]bool{"servers": d.Servers != 0, "server_ranks": d.ServerRanks != nil, "staleness": d.Staleness != nil} {
			if set {
				return &ConfigError{Line: line(key), Msg: fmt.Sprintf("distributed.%s applies only with distributed.strategy: ps", key)}
			}
		}
		return nil
	case "ps":
	default:
		return &ConfigError{Line: line("strategy"), Msg: fmt.Sprintf("distributed.strategy: want ddp, ps or pipeline, got %q", d.Strategy)}
	}
	switch {
	case d.Servers < 0:
		return &ConfigError{Line: line("servers"), Msg: fmt.Sprintf("distributed.servers: want at least 1, got %d", d.Servers)}
	case d.ServerRanks != nil && d.Servers != 0 && d.Servers != len(d.ServerRanks):
		return &ConfigError{Line: line("servers"), Msg: fmt.Sprintf("distributed.servers is %d but distributed.server_ranks lists %d ranks", d.Servers, len(d.ServerRanks))}
	case slices.Contains(d.ServerRanks, 0):
		return &ConfigError{Line: line("server_ranks"), Msg: "distributed.server_ranks: rank 0 must be a worker (it writes the model and the metrics)"}
	case d.Staleness != nil && *d.Staleness < 0:
		return &ConfigError{Line: line("staleness"), Msg: fmt.Sprintf("distributed.staleness: want 0 or more steps, got %d", *d.Staleness)}
	case d.Staleness != nil && d.Deterministic:
		return &ConfigError{Line: line("staleness"), Msg: "distributed.staleness (asynchronous servers) and distributed.deterministic do not go together"}
	case d.shardAsked() || d.SyncBatchNorm || d.compresses():
		return &ConfigError{Line: line("strategy"), Msg: "distributed.strategy ps does not go together with shard_optimizer, sync_batchnorm or compression (data-parallel options)"}
	case c.Optimizer.ClipGradNorm > 0 || c.Optimizer.ClipGradValue > 0:
		return &ConfigError{Line: line("strategy"), Msg: "distributed.strategy ps: gradient clipping is not supported (a worker holds only its part of the gradient)"}
	case d.Staleness != nil && (c.Output.Resume || c.Output.CheckpointEvery > 0):
		return &ConfigError{Line: line("staleness"), Msg: "distributed.staleness (asynchronous servers) does not go together with output.checkpoint_every or output.resume: the servers apply gradients as they come, so there is no step at which to checkpoint their state"}
	}
	for _, r := range d.ServerRanks {
		if r < 0 {
			return &ConfigError{Line: line("server_ranks"), Msg: fmt.Sprintf("distributed.server_ranks: rank %d is negative", r)}
		}
	}
	return nil
}

// joinPS joins the job's group, assigns the roles and starts the servers'
// listeners.
func joinPS(ctx context.Context, c *Config, world int) (*distributed, error) {
	d := c.Distributed
	servers := slices.Clone(d.ServerRanks)
	if servers == nil {
		n := max(d.Servers, 1)
		for r := world - n; r < world; r++ {
			servers = append(servers, r)
		}
	}
	for _, r := range servers {
		if r <= 0 || r >= world {
			return nil, &ConfigError{File: c.file, Msg: fmt.Sprintf("distributed.strategy ps: server rank %d of a job of %d ranks (rank 0 is a worker; run with more ranks than servers)", r, world)}
		}
	}
	var workers []int
	for r := range world {
		if !slices.Contains(servers, r) {
			workers = append(workers, r)
		}
	}
	if c.BatchSize%len(workers) != 0 {
		return nil, &ConfigError{File: c.file, Msg: fmt.Sprintf(
			"batch_size %d is the global batch of all %d workers (%d ranks, %d servers) and must be a multiple of their number",
			c.BatchSize, len(workers), world, len(servers))}
	}
	g, err := joinGroup(ctx)
	if err != nil {
		return nil, err
	}
	role := &psRole{server: slices.Index(servers, g.Rank()), worker: slices.Index(workers, g.Rank()), servers: servers,
		async: d.Staleness != nil}
	fail := func(err error) (*distributed, error) {
		if role.ln != nil {
			role.ln.Close()
		}
		g.Close()
		return nil, err
	}
	mine := make([]int64, addrWords)
	if role.server >= 0 {
		ip, err := comm.BindIP(g.Options())
		if err != nil {
			return fail(err)
		}
		if role.ln, err = net.Listen("tcp", net.JoinHostPort(ip, "0")); err != nil {
			return fail(fmt.Errorf("parameter server %d (rank %d): %w", role.server, g.Rank(), err))
		}
		a := role.ln.Addr().String()
		if len(a) > 8*addrWords {
			return fail(fmt.Errorf("parameter server %d: address %s too long", role.server, a))
		}
		var b [8 * addrWords]byte
		copy(b[:], a)
		for i := range mine {
			mine[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
		}
	}
	all := make([]int64, addrWords*world)
	if err := comm.AllGather(g, all, mine); err != nil {
		return fail(fmt.Errorf("parameter server addresses: %w", err))
	}
	for _, r := range servers {
		var b []byte
		for _, w := range all[r*addrWords : (r+1)*addrWords] {
			b = binary.LittleEndian.AppendUint64(b, uint64(w))
		}
		role.addrs = append(role.addrs, strings.TrimRight(string(b), "\x00"))
	}
	dist := &distributed{g: g, ps: role}
	if role.worker >= 0 {
		if role.workers, err = g.Subgroup(workers); err != nil {
			return fail(err)
		}
	}
	return dist, nil
}

func (d *distributed) isServer() bool   { return d != nil && d.ps != nil && d.ps.server >= 0 }
func (d *distributed) isPSWorker() bool { return d != nil && d.ps != nil && d.ps.worker >= 0 }

// plan shards net's parameters over the servers.
func (r *psRole) plan(net nn.Layer) ([][]ps.Segment, error) {
	var sizes []int
	for _, p := range net.Parameters() {
		if p.DType() != tensor.Float32 {
			return nil, fmt.Errorf("parameter server: float32 parameters only, got %v", p.DType())
		}
		sizes = append(sizes, p.Numel())
	}
	return ps.Plan(sizes, len(r.servers))
}

// serve runs this rank's server until every worker has finished.
func (d *distributed) serve(ctx context.Context, c *Config, net nn.Layer) (*Result, error) {
	r := d.ps
	plan, err := r.plan(net)
	if err != nil {
		return nil, err
	}
	srv, err := ps.NewServer(ps.ServerOptions{Index: r.server, Workers: d.g.Size() - len(r.servers), Segments: plan[r.server],
		Async: r.async, Staleness: stalenessOf(c), Token: d.g.Options().Token, Timeout: d.g.Options().Timeout, Logger: slog.Default(),
		NewOptimizer: func(p []*tensor.Tensor) (optim.Optimizer, error) { return c.newOptimizer(p) }})
	if err != nil {
		return nil, err
	}
	ln := r.ln
	r.ln = nil
	if _, err := srv.Serve(ctx, ln); err != nil {
		return nil, fmt.Errorf("parameter server %d (rank %d): %w", r.server, d.g.Rank(), err)
	}
	return &Result{Main: false}, nil
}

func stalenessOf(c *Config) int {
	if s := c.Distributed.Staleness; s != nil {
		return *s
	}
	return 0
}

// psOptimizer connects this worker to the servers and returns the
// optimizer that pushes to them (local keeps the learning rate).
func (d *distributed) psOptimizer(ctx context.Context, net nn.Layer, local optim.Optimizer) (optim.Optimizer, error) {
	r := d.ps
	plan, err := r.plan(net)
	if err != nil {
		return nil, err
	}
	r.client, err = ps.Dial(ctx, ps.ClientOptions{Worker: r.worker, Addrs: r.addrs, Plan: plan, Token: d.g.Options().Token, Timeout: d.g.Options().Timeout})
	if err != nil {
		return nil, err
	}
	opt := ps.NewOptimizer(local, r.client, net.Parameters())
	r.strat = train.NewParameterServer(r.workers, opt, r.async)
	d.dp = r.strat.Workers()
	return opt, nil
}

// psDone tells the servers this worker has finished.
func (d *distributed) psDone() error {
	if !d.isPSWorker() || d.ps.client == nil {
		return nil
	}
	err := d.ps.client.Close()
	d.ps.client = nil
	return err
}

// abort closes what is still open after a failure: the connections to the
// servers without saying done (a synchronous server then fails the job
// naming this worker), a listener never served.
func (r *psRole) abort() {
	if r == nil {
		return
	}
	if r.client != nil {
		r.client.Abort()
		r.client = nil
	}
	if r.ln != nil {
		r.ln.Close()
	}
}
