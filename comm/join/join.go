package join

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/comm/store"
	"github.com/fathom-ml/fathom/internal/distenv"
)

// Options say what a process joins.
type Options struct {
	// Group joins the job's process group (the collectives). Without it
	// the job is its store alone: batch prediction shares its work through
	// the store and never waits for a peer.
	Group bool
	// Store connects a client of the job's store (Job.Store).
	Store bool
	// Comm, if set, adjusts the group's options (as comm.FromEnv reads
	// them, comm.EnvOptions) before the group is joined: a benchmark's transport, a
	// timeout.
	Comm func(*comm.Options)
	// Logger receives the warnings of the store rank 0 hosts when there is
	// no group (refused connections); nil is slog.Default().
	Logger *slog.Logger
	// DialTimeout bounds connecting to the store (default 5 minutes: the
	// process hosting it may start later).
	DialTimeout time.Duration
}

// Job is this process's place in a distributed job.
type Job struct {
	// Env is the environment the job was joined from.
	Env distenv.Env
	// Group is the job's process group: nil for a single process or
	// without Options.Group.
	Group *comm.Group
	// Store is this process's client of the job's store, its keys under
	// the restart generation's prefix ("g<N>/" after N restarts, so a
	// restarted job never meets an earlier attempt's keys): nil for a
	// single process or without Options.Store.
	Store store.Store

	addr   string
	token  []byte
	client *store.Client
	server *store.Server
}

// FromEnv joins the job the environment describes (RANK, WORLD_SIZE,
// MASTER_ADDR, ... as `fathom run`, torchrun or a training operator set
// them; package internal/distenv). A single process (WORLD_SIZE unset or
// 1) joins nothing: its Job holds the environment only. Otherwise the
// process joins the group (Options.Group; rank 0 hosts the store on
// MASTER_ADDR:MASTER_PORT unless the launcher does, FATHOM_STORE_HOSTED=1)
// and connects to the store (Options.Store) with the job token. Call
// Close when done.
func FromEnv(ctx context.Context, o Options) (*Job, error) {
	e, err := distenv.FromOS()
	if err != nil {
		return nil, fmt.Errorf("join: %w", err)
	}
	return fromEnv(ctx, e, o)
}

func fromEnv(ctx context.Context, e distenv.Env, o Options) (*Job, error) {
	j := &Job{Env: e}
	if e.WorldSize <= 1 {
		return j, nil
	}
	if e.JobToken == "" && !o.Group { // the group says so itself, at length
		return nil, fmt.Errorf("join: rank %d: %s is not set (fathom run sets it)", e.Rank, distenv.JobToken)
	}
	j.addr = net.JoinHostPort(e.MasterAddr, strconv.Itoa(e.MasterPort))
	j.token = []byte(e.JobToken)
	if o.Group {
		co, err := comm.EnvOptions(e)
		if err != nil {
			return nil, err
		}
		if o.Comm != nil {
			o.Comm(&co)
		}
		if j.Group, err = comm.New(ctx, co); err != nil {
			return nil, err
		}
	} else if e.Rank == 0 && !e.StoreHosted {
		// No group hosts the store: rank 0 does, as the group would.
		ln, err := net.Listen("tcp", j.addr)
		if err != nil {
			return nil, fmt.Errorf("join: rank 0 cannot host the store on %s: %w", j.addr, err)
		}
		logger := o.Logger
		if logger == nil {
			logger = slog.Default()
		}
		j.server = store.Serve(ln, j.token, logger)
	}
	if o.Store {
		timeout := o.DialTimeout
		if timeout <= 0 {
			timeout = 5 * time.Minute
		}
		dctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		c, err := store.Dial(dctx, j.addr, j.token, e.Rank)
		if err != nil {
			j.Close()
			return nil, fmt.Errorf("join: rank %d: %w", e.Rank, err)
		}
		j.client, j.Store = c, j.prefixed(c)
	}
	return j, nil
}

// prefixed puts st under the restart generation's prefix.
func (j *Job) prefixed(st store.Store) store.Store {
	if j.Env.RestartCount == 0 {
		return st
	}
	return store.WithPrefix(st, "g"+strconv.Itoa(j.Env.RestartCount)+"/")
}

// Distributed reports whether the job has more than one process.
func (j *Job) Distributed() bool { return j != nil && j.Env.WorldSize > 1 }

// Rank is this process's rank (0 for a single process).
func (j *Job) Rank() int {
	if j == nil {
		return 0
	}
	return j.Env.Rank
}

// Size is the number of processes of the job (1 for a single process).
func (j *Job) Size() int {
	if j == nil {
		return 1
	}
	return max(j.Env.WorldSize, 1)
}

// DialStore connects another client of the job's store, under the same
// prefix as Store: a goroutine that polls with short deadlines (a
// dashboard reading results as they come) needs a connection of its own,
// since a request abandoned at its deadline holds up the next one on the
// same connection until its answer is read. The caller closes it.
func (j *Job) DialStore(ctx context.Context) (store.Store, error) {
	if !j.Distributed() {
		return nil, errors.New("join: a single process has no job store")
	}
	c, err := store.Dial(ctx, j.addr, j.token, j.Env.Rank)
	if err != nil {
		return nil, fmt.Errorf("join: rank %d: %w", j.Env.Rank, err)
	}
	return j.prefixed(c), nil
}

// Close leaves the job: the store client first, then the group (whose
// close waits for every rank), or, where rank 0 hosts the store without a
// group, the store once the others are done with it (waiting a little).
// A nil Job and a single process's close nothing.
func (j *Job) Close() error {
	if j == nil {
		return nil
	}
	var errs []error
	if j.client != nil {
		j.client.Close()
		j.client, j.Store = nil, nil
	}
	if j.Group != nil {
		errs = append(errs, j.Group.Close())
		j.Group = nil
	}
	if j.server != nil {
		j.server.WaitIdle(10 * time.Second)
		errs = append(errs, j.server.Close())
		j.server = nil
	}
	return errors.Join(errs...)
}
