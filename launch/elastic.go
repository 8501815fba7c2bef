package launch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fathom-ml/fathom/launch/rdzv"
)

// With the etcd backend (Config.RendezvousBackend == BackendEtcd) a job is
// a sequence of rounds that the launchers form in etcd (package
// launch/rdzv). In each round:
//
//  1. the round's node 0 hosts a store for the round on a free port of its
//     advertised address and publishes host:port in etcd; every member
//     connects, and the coordinator protocol of coord.go runs as for a
//     static job of len(members) nodes, with the round's number as its
//     generation (FATHOM_RESTART_COUNT);
//  2. the workers run; they are stopped early by a failure on any node (as
//     in a static job) or by a change of membership that etcd shows: a
//     node that registered for the next round (it joins) or a member whose
//     lease vanished (it left);
//  3. the members publish how their groups ended and read everyone's: all
//     ok ends the job; a member that was interrupted (it leaves) or a
//     change of membership sends everyone to the next round, a failure
//     does too while --max-restarts allows, counting one restart; anything
//     else ends the job as in a static one. When a member left, the
//     others do not wait for its word: they go on to the next round.
//
// A launcher that is interrupted (signal, context) leaves the job: it stops
// its workers, publishes "interrupted" and revokes its lease; the others go
// on without it.

// membershipChange is the cause of a round's context ending when a member
// left.
type membershipChange struct{ rdzv.Change }

func (m *membershipChange) Error() string { return m.What }

// roundChange returns the change of membership that ended ctx, if any.
func roundChange(ctx context.Context) *membershipChange {
	var mc *membershipChange
	if errors.As(context.Cause(ctx), &mc) {
		return mc
	}
	return nil
}

// outcomeChanged: the node stopped its workers for a change of membership.
const outcomeChanged = "changed"

// elasticShape describes how a launcher was started, for the others to
// compare.
func (c Config) elasticShape() string {
	return fmt.Sprintf("nnodes=%d:%d nproc-per-node=%d max-restarts=%d", c.MinNodes, c.NNodes, c.NProcPerNode, c.MaxRestarts)
}

// runElastic runs the job round after round until a verdict ends it.
func (l *launcher) runElastic(ctx context.Context, res *Result) error {
	cfg := l.cfg
	shape := cfg.elasticShape()
	sctx, stopSig := l.untilSignal(ctx)
	s, err := rdzv.Open(sctx, cfg.rdzvConfig())
	if sig := stopSig(); err != nil || sig != nil {
		if err == nil {
			s.Close()
		}
		return l.elasticErr(ctx, sig, res, err)
	}
	defer s.Close()
	l.hosted = true
	round := rdzv.Round{Number: -1}
	failures := 0
	for {
		sctx, stopSig := l.untilSignal(ctx)
		next, err := s.Join(sctx, round.Number, failures, shape)
		if sig := stopSig(); err != nil || sig != nil {
			return l.elasticErr(ctx, sig, res, err)
		}
		round = next
		failures = max(failures, round.Failures)
		res.Rounds, res.Round, res.Restarts = res.Rounds+1, round.Number, failures
		for _, m := range round.Members {
			if m.Meta != shape {
				_ = s.Final(ctx, round.Number)
				return fmt.Errorf("%w: node %s was started with %s, this node (%s) with %s; every node needs the same",
					ErrConfig, m.Host, m.Meta, s.Host(), shape)
			}
		}
		again, err := l.runRound(ctx, s, round, &failures, res)
		res.Restarts = failures
		if !again {
			return err
		}
	}
}

// elasticErr is Run's error when the rendezvous itself failed or a signal
// or the context stopped it.
func (l *launcher) elasticErr(ctx context.Context, sig os.Signal, res *Result, err error) error {
	if sig != nil || ctx.Err() != nil {
		res.Interrupted, res.Signal = true, sig
		return l.interruptErr(ctx, sig)
	}
	if errors.Is(err, rdzv.ErrConfig) {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return fmt.Errorf("launch: %w", err)
}

// untilSignal returns a context that also ends when a signal arrives on
// Config.Signals, for the waits outside runGroup; stop ends the watch and
// returns the signal, if one came.
func (l *launcher) untilSignal(ctx context.Context) (context.Context, func() os.Signal) {
	ctx, cancel := context.WithCancel(ctx)
	if l.cfg.Signals == nil {
		return ctx, func() os.Signal { cancel(); return nil }
	}
	var got os.Signal
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case sig, ok := <-l.cfg.Signals:
			if ok {
				got = sig
				cancel()
			}
		case <-ctx.Done():
		}
	}()
	return ctx, func() os.Signal { cancel(); <-done; return got }
}

// runRound runs this node's part of round r: the round's store and
// coordinator, the workers, and the verdict. again says whether to go on
// to the next round; failures counts the failure restarts used.
func (l *launcher) runRound(ctx context.Context, s *rdzv.Session, round rdzv.Round, failures *int, res *Result) (again bool, err error) {
	r, nnodes := round.Number, len(round.Members)
	l.cfg.NNodes, l.cfg.NodeRank = nnodes, round.Rank

	// The round's context ends when a member leaves; a join only stops
	// the workers (remote).
	rctx, rcancel := context.WithCancelCause(ctx)
	changes, stopWatch := s.Watch(rctx, round)
	remote := make(chan string, 1)
	var mu sync.Mutex
	var joined *rdzv.Change
	var fwd sync.WaitGroup
	defer func() { rcancel(nil); stopWatch(); fwd.Wait() }()
	forward := func(msg string) {
		select {
		case remote <- msg:
		default: // runGroup acts on the first message only
		}
	}
	fwd.Go(func() {
		select {
		case c := <-changes:
			if c.Left {
				rcancel(&membershipChange{c})
			} else {
				mu.Lock()
				joined = &c
				mu.Unlock()
			}
			forward(c.What)
		case <-rctx.Done():
		}
	})
	changedBy := func() *rdzv.Change {
		if mc := roundChange(rctx); mc != nil {
			return &mc.Change
		}
		mu.Lock()
		defer mu.Unlock()
		return joined
	}
	// goOn is the way to the next round after a change of membership.
	goOn := func(what string) (bool, error) {
		l.notef("fathom run: round %d ended: %s; going on to a new round\n", r, what)
		return true, nil
	}
	// lost tells, after an error of the round's store or coordinator,
	// whether a member left (waiting for etcd to show it, about a lease's
	// time at most): then the job goes on to the next round.
	lost := func(err error) (bool, error) {
		t := time.NewTimer(l.leaveWait())
		defer t.Stop()
		select {
		case <-rctx.Done():
		case <-t.C:
		}
		if mc := roundChange(rctx); mc != nil {
			return goOn(mc.What)
		}
		if ctx.Err() != nil {
			res.Interrupted = true
			return false, l.interruptErr(ctx, nil)
		}
		return false, err
	}

	sctx, stopSig := l.untilSignal(rctx)
	co, err := l.openRound(sctx, s, round)
	if err == nil {
		if err = co.join(sctx, r); err != nil {
			co.close()
		}
	}
	if sig := stopSig(); sig != nil {
		if err == nil {
			co.close()
		}
		res.Interrupted, res.Signal = true, sig
		return false, l.interruptErr(ctx, sig)
	}
	if err != nil {
		return lost(err)
	}
	defer co.close()
	l.noteRound(round)
	res.MasterAddr, res.MasterPort = l.cfg.MasterAddr, l.port

	failed, stopWatchFailed := co.watch(rctx, r)
	fwd.Go(func() {
		select {
		case msg := <-failed:
			forward(msg)
		case <-rctx.Done():
		}
	})
	g, err := l.runGroup(ctx, r, remote, func(msg string) { co.report(r, msg) })
	stopWatchFailed()
	res.Workers = g.workers
	if err != nil {
		_ = s.Final(ctx, r)
		return false, err
	}
	if g.failed >= 0 {
		res.Failures = append(res.Failures, g.workers[g.failed])
	}
	if g.interrupted { // this node leaves the job
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		_ = co.st.Set(pctx, coordKey(r, "exit/"+strconv.Itoa(round.Rank)), []byte(outcomeInterrupted))
		cancel()
		res.Interrupted, res.Signal = true, g.signal
		return false, l.interruptErr(ctx, g.signal)
	}
	change := changedBy()
	if change != nil && change.Left {
		return goOn(change.What)
	}
	return l.endRound(ctx, rctx, s, co, r, g, change, failures, res, goOn, lost)
}

// noteRound says which round starts, this node's place in it and its store.
func (l *launcher) noteRound(round rdzv.Round) {
	ranks := strconv.Itoa(round.Rank * l.cfg.NProcPerNode)
	if l.cfg.NProcPerNode > 1 {
		ranks += ".." + strconv.Itoa((round.Rank+1)*l.cfg.NProcPerNode-1)
	}
	l.notef("fathom run: %s; this is node %d (rank %s of world size %d), store %s:%d\n", round, round.Rank,
		ranks, len(round.Members)*l.cfg.NProcPerNode, l.cfg.MasterAddr, l.port)
}

// endRound tells the other members of round r how it ended here, reads
// how it ended everywhere and decides, as every member does: the next
// round (a member left, the membership changed, or a restart while
// restarts are left), or the job's end. goOn and lost are runRound's ways
// to the next round.
func (l *launcher) endRound(ctx, rctx context.Context, s *rdzv.Session, co *coordinator, r int, g group, change *rdzv.Change,
	failures *int, res *Result, goOn func(string) (bool, error), lost func(error) (bool, error)) (bool, error) {
	outcome := outcomeOK
	switch {
	case g.failed >= 0:
		outcome = outcomeFailed
	case g.remote == "": // every worker had ended well before any change
	case change != nil:
		outcome = outcomeChanged
	default:
		outcome = outcomeStopped
	}
	outs, err := co.finish(rctx, r, outcome)
	if err != nil {
		return lost(err)
	}
	var left, changed []string
	for j, o := range outs {
		switch o {
		case outcomeInterrupted:
			left = append(left, strconv.Itoa(j))
		case outcomeChanged:
			changed = append(changed, strconv.Itoa(j))
		}
	}
	switch {
	case len(left) > 0:
		co.linger(rctx, r)
		return goOn("node(s) " + strings.Join(left, ", ") + " of the round left (interrupted)")
	case len(changed) > 0:
		co.linger(rctx, r)
		what := "the membership changed"
		if change != nil {
			what = change.What
		}
		return goOn(what)
	}
	done, restartable, why := verdict(outs)
	if !done && restartable && *failures < l.cfg.MaxRestarts {
		*failures++
		co.linger(rctx, r)
		cause := l.cause(g)
		l.notef("fathom run: round %d ended: %s (%s); going on to a new round (restart %d of %d)\n",
			r, why, cause, *failures, l.cfg.MaxRestarts)
		return true, nil
	}
	// The job ends here for every member: say so before leaving, so
	// that this node's going is not taken for a loss.
	if err := s.Final(ctx, r); err != nil {
		l.notef("fathom run: %v\n", err)
	}
	co.linger(rctx, r)
	switch {
	case done:
		return false, nil
	case g.failed >= 0:
		return false, l.workerFailed(res, why)
	}
	l.notef("fathom run: round %d ended: %s (%s); %d restart(s) used\n", r, why, g.remote, *failures)
	return false, fmt.Errorf("%w: %s: %s", ErrWorkerFailed, why, g.remote)
}

// openRound sets up round r's store: node 0 serves it on a free port of its
// advertised address and publishes it; the others look it up. The workers
// are told its address (MASTER_ADDR, MASTER_PORT).
func (l *launcher) openRound(ctx context.Context, s *rdzv.Session, round rdzv.Round) (*coordinator, error) {
	r := round.Number
	var addr string
	var ln net.Listener
	if round.Rank == 0 {
		var err error
		if ln, err = net.Listen("tcp", net.JoinHostPort(s.Host(), "0")); err != nil {
			return nil, fmt.Errorf("launch: node 0 of round %d cannot host its store on %s (set --rdzv-host): %w", r, s.Host(), err)
		}
		addr = net.JoinHostPort(s.Host(), strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
		if err := s.PublishStore(ctx, r, addr); err != nil {
			ln.Close()
			return nil, fmt.Errorf("launch: %w", err)
		}
	} else {
		var err error
		if addr, err = s.StoreAddr(ctx, r); err != nil {
			return nil, fmt.Errorf("launch: %w", err)
		}
	}
	host, portStr, err := net.SplitHostPort(addr)
	port, perr := strconv.Atoi(portStr)
	if err != nil || perr != nil {
		if ln != nil {
			ln.Close()
		}
		return nil, fmt.Errorf("launch: round %d's store address %q is not HOST:PORT", r, addr)
	}
	l.cfg.MasterAddr, l.port = host, port
	return l.newCoordinator(ctx, round.Rank, len(round.Members), addr, ln, l.cfg.elasticShape())
}

// leaveWait bounds how long a node whose round's store failed waits for
// etcd to show which member left: a lease's time and a little.
func (l *launcher) leaveWait() time.Duration {
	ttl := l.cfg.RendezvousTTL
	if ttl <= 0 {
		ttl = rdzv.DefaultTTL
	}
	return ttl + 2*time.Second
}
