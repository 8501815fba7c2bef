package trials

import (
	"context"
	"net"
	"strconv"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/comm/store"
	"github.com/fathom-ml/fathom/internal/distenv"
)

// job is the process group of a distributed search and its store.
type job struct {
	env distenv.Env
	g   *comm.Group // nil when the environment names one process
	st  *store.Client
}

// joinJob joins the job's group when the environment names several
// processes and dials its store; for one process it returns a job with
// the environment only. It is the one place where a search joins a job.
func joinJob(ctx context.Context) (*job, error) {
	e, err := distenv.FromOS()
	if err != nil || e.WorldSize <= 1 {
		return &job{env: e}, err
	}
	g, err := comm.NewFromEnv(ctx)
	if err != nil {
		return nil, err
	}
	st, err := dialStore(ctx, e)
	if err != nil {
		g.Close()
		return nil, err
	}
	return &job{env: e, g: g, st: st}, nil
}

// dialStore dials the job's rendezvous store as e's rank.
func dialStore(ctx context.Context, e distenv.Env) (*store.Client, error) {
	return store.Dial(ctx, net.JoinHostPort(e.MasterAddr, strconv.Itoa(e.MasterPort)), []byte(e.JobToken), e.Rank)
}

// distributed says whether the search spans several processes.
func (j *job) distributed() bool { return j.g != nil }

// prefix is where the search's keys live in the store: one prefix per
// restart of the job, so a restarted search starts from an empty queue.
func (j *job) prefix() string {
	if j.env.RestartCount > 0 {
		return "tune/g" + strconv.Itoa(j.env.RestartCount) + "/"
	}
	return "tune/"
}

func (j *job) close() {
	if j != nil && j.g != nil {
		j.st.Close()
		j.g.Close()
	}
}
