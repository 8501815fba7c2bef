package launch

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/fathom-ml/fathom/comm/store"
)

// A job of several nodes restarts as one: the launchers meet in a store
// that node 0's launcher hosts on MASTER_ADDR:MASTER_PORT for the job's
// whole life (the workers use it too, FATHOM_STORE_HOSTED=1), and walk
// through numbered generations together:
//
//  1. every launcher joins generation g ("launch/g<g>/node/<k>") and waits
//     for all the others before starting its workers, with
//     FATHOM_RESTART_COUNT=g; the workers' own keys live under "g<g>/", so
//     they never meet an earlier attempt's addresses or job id;
//  2. the first launcher whose worker fails (or that is interrupted)
//     publishes it ("launch/g<g>/failed"); every launcher watches that
//     key and stops its own workers when it appears;
//  3. each launcher publishes how its group ended ("launch/g<g>/exit/<k>")
//     and reads everyone's: all "ok" ends the job; a failure with
//     restarts left sends every launcher to generation g+1; an interrupt,
//     a node that finished while another failed, or no restarts left ends
//     it with the same verdict on every node.
//
// The keys are the launchers' own ("launch/..."): the workers' are under
// "g<g>/".
//
// With the etcd backend (elastic.go) the same protocol runs within each
// round, in a store that the round's node 0 hosts for that round only: the
// round's number is its generation, its members are the nodes.

// coordinator is one launcher's end of that protocol.
type coordinator struct {
	node, nnodes int
	addr         string
	token        []byte
	server       *store.Server // node 0
	st           store.Store
	timeout      time.Duration
}

func coordKey(gen int, rest string) string { return "launch/g" + strconv.Itoa(gen) + "/" + rest }

// launcherRank is the rank a launcher claims when it authenticates to the
// store (shown in the store's refusal logs): below every worker's.
func launcherRank(node int) int { return -1 - node }

// openCoordinator hosts the store (node 0) and connects to it, and checks
// that every node was started with the same restart budget and shape.
func (l *launcher) openCoordinator(ctx context.Context) (*coordinator, error) {
	cfg := l.cfg
	addr := l.storeAddr()
	var ln net.Listener
	if cfg.NodeRank == 0 {
		var err error
		if ln, err = net.Listen("tcp", addr); err != nil {
			return nil, fmt.Errorf("launch: node 0 cannot host the job's store on %s: %w", addr, err)
		}
	}
	shape := fmt.Sprintf("nnodes=%d nproc-per-node=%d max-restarts=%d", cfg.NNodes, cfg.NProcPerNode, cfg.MaxRestarts)
	return l.newCoordinator(ctx, cfg.NodeRank, cfg.NNodes, addr, ln, shape)
}

// hostStore serves the job's store of a single node on MASTER_ADDR:port
// for the job's whole life; the workers' keys live under their restart
// generation's prefix, so no attempt meets an earlier one's.
func (l *launcher) hostStore() (*store.Server, error) {
	addr := l.storeAddr()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("launch: cannot host the job's store on %s: %w", addr, err)
	}
	return l.serveStore(ln), nil
}

// storeAddr is MASTER_ADDR:MASTER_PORT, where the job's store listens.
func (l *launcher) storeAddr() string {
	return net.JoinHostPort(l.cfg.MasterAddr, strconv.Itoa(l.port))
}

// serveStore serves the job's store on ln; refused connections are
// logged to the launcher's stderr.
func (l *launcher) serveStore(ln net.Listener) *store.Server {
	return store.Serve(ln, []byte(l.token), slog.New(slog.NewTextHandler(l.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
}

// newCoordinator connects node of nnodes to the store at addr, serving it
// first on ln when ln is not nil (node 0; the coordinator then owns ln), and
// checks that every node was started with the same shape.
func (l *launcher) newCoordinator(ctx context.Context, node, nnodes int, addr string, ln net.Listener, shape string) (_ *coordinator, err error) {
	c := &coordinator{node: node, nnodes: nnodes, token: []byte(l.token), timeout: l.cfg.RendezvousTimeout, addr: addr}
	defer func() {
		if err != nil {
			c.close()
		}
	}()
	if ln != nil {
		c.server = l.serveStore(ln)
	}
	dctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	if c.st, err = store.Dial(dctx, c.addr, c.token, launcherRank(c.node)); err != nil {
		return nil, fmt.Errorf("launch: node %d: the job's store: %w", c.node, err)
	}
	if c.node == 0 {
		if err := c.st.Set(dctx, "launch/config", []byte(shape)); err != nil {
			return nil, fmt.Errorf("launch: node 0: %w", err)
		}
	} else {
		v, err := c.st.Get(dctx, "launch/config")
		if err != nil {
			return nil, fmt.Errorf("launch: node %d: node 0's launcher did not publish the job's shape within %v: %w", c.node, c.timeout, err)
		}
		if string(v) != shape {
			return nil, fmt.Errorf("%w: node %d was started with %s, node 0 with %s; every node needs the same", ErrConfig, c.node, shape, v)
		}
	}
	return c, nil
}

func (c *coordinator) close() {
	if c.st != nil {
		c.st.Close()
	}
	if c.server != nil {
		c.server.Close()
	}
}

// join announces this node in generation gen and waits for every node.
func (c *coordinator) join(ctx context.Context, gen int) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	if err := c.st.Set(ctx, coordKey(gen, "node/"+strconv.Itoa(c.node)), []byte("1")); err != nil {
		return fmt.Errorf("launch: node %d: join attempt %d: %w", c.node, gen, err)
	}
	for j := range c.nnodes {
		if _, err := c.st.Get(ctx, coordKey(gen, "node/"+strconv.Itoa(j))); err != nil {
			return fmt.Errorf("launch: node %d: node %d did not join attempt %d within %v: %w", c.node, j, gen, c.timeout, err)
		}
	}
	return nil
}

// watch returns a channel that receives the failure another node reports
// in generation gen (or this one: the caller ignores its own), and a stop
// function to call when the group has ended.
func (c *coordinator) watch(ctx context.Context, gen int) (<-chan string, func()) {
	out := make(chan string, 1)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		// A dedicated connection: cancelling a blocked Get breaks it.
		w, err := store.Dial(ctx, c.addr, c.token, launcherRank(c.node))
		if err != nil {
			return
		}
		defer w.Close()
		if v, err := w.Get(ctx, coordKey(gen, "failed")); err == nil {
			out <- string(v)
		}
	}()
	return out, func() { cancel(); <-done }
}

// report publishes this node's failure in generation gen; the first
// report of a generation is the one every node reads.
func (c *coordinator) report(gen int, msg string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if n, err := c.st.Add(ctx, coordKey(gen, "failures"), 1); err == nil && n == 1 {
		_ = c.st.Set(ctx, coordKey(gen, "failed"), []byte(msg))
	}
}

// Outcomes a node publishes for a generation.
const (
	outcomeOK          = "ok"
	outcomeFailed      = "failed"      // one of its workers failed
	outcomeStopped     = "stopped"     // stopped because another node failed
	outcomeInterrupted = "interrupted" // a signal or the context
)

// finish publishes this node's outcome of generation gen and returns
// every node's, by node (waiting at most the rendezvous timeout, or until
// ctx ends). Node 0 then calls linger, so that its store outlives the
// others' last read.
func (c *coordinator) finish(ctx context.Context, gen int, outcome string) ([]string, error) {
	wctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	if err := c.st.Set(wctx, coordKey(gen, "exit/"+strconv.Itoa(c.node)), []byte(outcome)); err != nil {
		return nil, fmt.Errorf("launch: node %d: %w", c.node, err)
	}
	all := make([]string, c.nnodes)
	for j := range c.nnodes {
		v, err := c.st.Get(wctx, coordKey(gen, "exit/"+strconv.Itoa(j)))
		if err != nil {
			return nil, fmt.Errorf("launch: node %d: node %d did not report the end of attempt %d within %v: %w", c.node, j, gen, c.timeout, err)
		}
		all[j] = string(v)
	}
	if _, err := c.st.Add(wctx, coordKey(gen, "seen"), 1); err != nil {
		return nil, fmt.Errorf("launch: node %d: %w", c.node, err)
	}
	return all, nil
}

// linger keeps node 0's store up until every node has read the outcomes
// of generation gen (bounded by the rendezvous timeout and ctx).
func (c *coordinator) linger(ctx context.Context, gen int) {
	if c.server == nil {
		return
	}
	deadline := time.Now().Add(c.timeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		ctx, cancel := context.WithTimeout(ctx, time.Second)
		n, err := c.st.Add(ctx, coordKey(gen, "seen"), 0)
		cancel()
		if err != nil || n >= int64(c.nnodes) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// verdict reads every node's outcome of a generation: done (all ok), or
// whether the job may restart, and a description of what ended it.
func verdict(outcomes []string) (done, restartable bool, why string) {
	var failed, interrupted, ok []string
	for j, o := range outcomes {
		switch {
		case o == outcomeOK:
			ok = append(ok, strconv.Itoa(j))
		case o == outcomeInterrupted:
			interrupted = append(interrupted, strconv.Itoa(j))
		case o == outcomeFailed:
			failed = append(failed, strconv.Itoa(j))
		}
	}
	switch {
	case len(ok) == len(outcomes):
		return true, false, ""
	case len(interrupted) > 0:
		return false, false, "node(s) " + strings.Join(interrupted, ", ") + " interrupted"
	case len(ok) > 0:
		return false, false, fmt.Sprintf("node(s) %s finished while node(s) %s failed: no restart", strings.Join(ok, ", "), strings.Join(failed, ", "))
	}
	return false, true, "node(s) " + strings.Join(failed, ", ") + " failed"
}
