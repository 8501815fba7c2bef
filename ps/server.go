package ps

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/fathom-ml/fathom/comm/auth"
	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/tensor"
)

// ServerOptions configure a Server.
type ServerOptions struct {
	// Index is this server's number (0 ≤ Index < servers), for messages.
	Index int
	// Workers is the number of workers that connect.
	Workers int
	// Segments are the parameter ranges this server holds (Plan's entry
	// for Index).
	Segments []Segment
	// Async applies each worker's gradient as it arrives, bounded by
	// Staleness (stale-synchronous parallel); otherwise the server waits
	// for every worker's gradient of a step, sums them and takes one
	// optimizer step.
	Async bool
	// Staleness is SSP's bound in steps (Async only): no worker computes
	// a step more than Staleness steps ahead of the slowest live one.
	Staleness int
	// NewOptimizer builds the optimizer over the server's segments, one
	// one-dimensional tensor per segment.
	NewOptimizer func(params []*tensor.Tensor) (optim.Optimizer, error)
	// Token is the job secret every worker connection proves.
	Token []byte
	// Timeout bounds every wait: for all workers to connect, for a
	// worker's next message, for a step's gradients (default 5 minutes).
	Timeout time.Duration
	// Logger receives refused connections and lost workers (default: discard).
	Logger *slog.Logger
}

// Stats describe a finished Serve.
type Stats struct {
	// Updates is the number of optimizer steps the server took.
	Updates int
	// Lost lists the workers whose connection broke before they finished
	// (asynchronous mode carries on without them).
	Lost []int
}

// Server holds a shard of the parameters and runs the optimizer on it.
type Server struct {
	o      ServerOptions
	params []*tensor.Tensor // one per segment
	opt    optim.Optimizer
	total  int

	mu      sync.Mutex
	cond    *sync.Cond
	inited  bool
	version int         // synchronous: steps applied
	pending [][]float32 // synchronous: each worker's gradient of step version
	have    []bool
	count   int
	clock   *Clock // SSP bound (asynchronous); in both modes, which workers finished or were lost
	err     error
	stats   Stats

	connMu sync.Mutex
	conns  []net.Conn // by worker
}

// closeConns closes every worker connection at once, as the death of the
// server's process would (tests).
func (s *Server) closeConns() {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	for _, c := range s.conns {
		if c != nil {
			c.Close()
		}
	}
}

// NewServer returns the server of o.Segments with parameters at zero
// until worker 0 sends their initial values.
func NewServer(o ServerOptions) (*Server, error) {
	if o.Workers < 1 {
		return nil, fmt.Errorf("ps: server %d: want at least one worker, got %d", o.Index, o.Workers)
	}
	if o.Staleness < 0 {
		return nil, fmt.Errorf("ps: server %d: staleness must not be negative, got %d", o.Index, o.Staleness)
	}
	if o.NewOptimizer == nil {
		return nil, fmt.Errorf("ps: server %d: no optimizer", o.Index)
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Minute
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{o: o, clock: NewClock(o.Workers, o.Staleness)}
	s.cond = sync.NewCond(&s.mu)
	for _, seg := range o.Segments {
		p := tensor.Zeros(tensor.Float32, seg.Len())
		p.SetRequiresGrad(true)
		p.SetGrad(tensor.Zeros(tensor.Float32, seg.Len()))
		s.params = append(s.params, p)
		s.total += seg.Len()
	}
	if !o.Async {
		s.pending = make([][]float32, o.Workers)
		for w := range s.pending {
			s.pending[w] = make([]float32, s.total)
		}
		s.have = make([]bool, o.Workers)
	}
	if len(s.params) > 0 {
		opt, err := o.NewOptimizer(s.params)
		if err != nil {
			return nil, fmt.Errorf("ps: server %d: %w", o.Index, err)
		}
		s.opt = opt
	}
	return s, nil
}

// Elems returns the number of parameter elements the server holds.
func (s *Server) Elems() int { return s.total }

// Serve accepts the workers' connections on ln and serves them until every
// worker has finished (or, asynchronously, finished or been lost). A
// synchronous server fails when a worker is lost, and tells the others. A
// server with no segments returns at once. Serve closes ln.
func (s *Server) Serve(ctx context.Context, ln net.Listener) (Stats, error) {
	defer ln.Close()
	if s.total == 0 {
		return Stats{}, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	refusals := auth.NewRefusalLog(s.o.Logger, "parameter server")
	var wg sync.WaitGroup
	s.connMu.Lock()
	s.conns = make([]net.Conn, s.o.Workers)
	conns := s.conns
	s.connMu.Unlock()
	connMu := &s.connMu
	acceptDone := make(chan error, 1)
	go func() {
		deadline := time.Now().Add(s.o.Timeout)
		if tl, ok := ln.(*net.TCPListener); ok {
			tl.SetDeadline(deadline)
		}
		n := 0
		for n < s.o.Workers {
			c, err := ln.Accept()
			if err != nil {
				acceptDone <- fmt.Errorf("ps: server %d: %d of %d workers connected: %w", s.o.Index, n, s.o.Workers, err)
				return
			}
			w, err := auth.Server(c, s.o.Token, auth.KindPS, time.Now().Add(10*time.Second))
			if err != nil {
				refusals.Warn("parameter server: refused connection", "server", s.o.Index, "remote", c.RemoteAddr().String(), "err", err)
				c.Close()
				continue
			}
			connMu.Lock()
			bad := w < 0 || w >= s.o.Workers || conns[w] != nil
			if !bad {
				conns[w] = c
			}
			connMu.Unlock()
			if bad {
				s.o.Logger.Warn("parameter server: refused a worker number out of range or already connected", "server", s.o.Index, "worker", w)
				c.Close()
				continue
			}
			n++
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.handle(w, c)
			}()
		}
		ln.Close() // every worker is here: nobody else may connect
		acceptDone <- nil
	}()
	// Wake waiters regularly so that they see deadlines and ctx.
	go func() {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				s.mu.Lock()
				s.cond.Broadcast()
				s.mu.Unlock()
				return
			case <-t.C:
				s.mu.Lock()
				s.cond.Broadcast()
				s.mu.Unlock()
			}
		}
	}()
	var acceptErr error
	select {
	case acceptErr = <-acceptDone:
	case <-ctx.Done():
		acceptErr = ctx.Err()
	}
	if acceptErr != nil {
		s.fail(acceptErr)
		ln.Close()
	} else {
		s.mu.Lock()
		for s.clock.Live() > 0 && s.err == nil && ctx.Err() == nil {
			s.cond.Wait()
		}
		if s.err == nil && ctx.Err() != nil {
			s.failLocked(fmt.Errorf("ps: server %d: %w", s.o.Index, ctx.Err()))
		}
		s.mu.Unlock()
	}
	if s.Err() != nil {
		connMu.Lock()
		for _, c := range conns {
			if c != nil {
				c.SetDeadline(time.Now().Add(time.Second))
			}
		}
		connMu.Unlock()
	}
	wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats, s.err
}

// Err returns the error that failed the server, if any.
func (s *Server) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *Server) fail(err error) {
	s.mu.Lock()
	s.failLocked(err)
	s.mu.Unlock()
}

func (s *Server) failLocked(err error) {
	if s.err == nil {
		s.err = err
	}
	s.cond.Broadcast()
}

// handle serves worker w's connection until it says done, breaks, or the
// server fails.
func (s *Server) handle(w int, c net.Conn) {
	defer c.Close()
	var rbuf, wbuf []byte
	grad := make([]float32, s.total)
	out := make([]float32, s.total)
	protocol := func(format string, a ...any) {
		err := fmt.Errorf("ps: server %d: worker %d: "+format, append([]any{s.o.Index, w}, a...)...)
		s.fail(err)
		writeError(c, err.Error())
	}
	for {
		c.SetReadDeadline(time.Now().Add(s.o.Timeout))
		h, err := readHeader(c)
		if err != nil {
			s.lose(w, err)
			return
		}
		if (h.op == opInit || h.op == opPush) && h.n != s.total {
			protocol("%s of %d values, this server holds %d", opName(h.op), h.n, s.total)
			return
		}
		switch h.op {
		case opInit:
			if w != 0 {
				protocol("only worker 0 sends the initial parameters")
				return
			}
			if err := readFloats(c, &rbuf, grad); err != nil {
				s.lose(w, err)
				return
			}
			s.mu.Lock()
			s.scatter(grad)
			s.inited = true
			s.cond.Broadcast()
			s.mu.Unlock()
		case opPush:
			dst := grad
			if !s.o.Async {
				dst = s.pending[w] // only this goroutine writes it until have[w] is set
			}
			if err := readFloats(c, &rbuf, dst); err != nil {
				s.lose(w, err)
				return
			}
			if err := s.push(w, h, dst); err != nil {
				protocol("%v", err)
				return
			}
		case opPull:
			if err := s.waitPull(int(h.step)); err != nil {
				writeError(c, err.Error())
				return
			}
			s.mu.Lock()
			s.gather(out)
			s.mu.Unlock()
			if err := writeFrame(c, &wbuf, header{op: opParams, step: h.step}, out); err != nil {
				s.lose(w, err)
				return
			}
		case opState, opLoadState:
			if w != 0 {
				protocol("only worker 0 exchanges the optimizer state")
				return
			}
			if err := s.exchangeState(c, h, &wbuf); err != nil {
				protocol("%v", err)
				return
			}
		case opDone:
			s.mu.Lock()
			s.clock.Leave(w)
			s.cond.Broadcast()
			s.mu.Unlock()
			return
		default:
			protocol("unexpected %s frame", opName(h.op))
			return
		}
	}
}

// lose handles worker w's broken connection: fatal for a synchronous
// server, the worker leaves the SSP bound of an asynchronous one.
func (s *Server) lose(w int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.clock.Gone(w) || s.err != nil {
		return
	}
	if !s.o.Async {
		s.failLocked(fmt.Errorf("ps: server %d: lost worker %d: %w", s.o.Index, w, err))
		return
	}
	s.o.Logger.Warn("parameter server: lost a worker; the others carry on", "server", s.o.Index, "worker", w, "err", err)
	s.clock.Leave(w)
	s.stats.Lost = append(s.stats.Lost, w)
	s.cond.Broadcast()
}

// push takes worker w's gradient g of step h.step.
func (s *Server) push(w int, h header, g []float32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if !s.inited {
		return errors.New("gradient before the initial parameters")
	}
	if s.o.Async {
		if int(h.step) != s.clock.Of(w) {
			return fmt.Errorf("gradient of step %d, want step %d", h.step, s.clock.Of(w))
		}
		s.apply(g, h.lr)
		s.clock.Push(w)
		s.cond.Broadcast()
		return nil
	}
	if int(h.step) != s.version || s.have[w] {
		return fmt.Errorf("gradient of step %d, the server is at step %d", h.step, s.version)
	}
	s.have[w] = true
	s.count++
	if s.count < s.o.Workers {
		return nil
	}
	// Sum in the tree of recursive doubling (adjacent workers, then pairs
	// of pairs): the order in which data-parallel training sums the same
	// gradients, so the sum has the same bits.
	W := s.o.Workers
	for width := 1; width < W; width *= 2 {
		for j := 0; j+width < W; j += 2 * width {
			kernel.AddF32(s.pending[j], s.pending[j], s.pending[j+width])
		}
	}
	s.apply(s.pending[0], h.lr)
	s.version++
	clear(s.have)
	s.count = 0
	s.cond.Broadcast()
	return nil
}

// apply takes one optimizer step with gradient g at learning rate lr (0:
// the optimizer's own).
func (s *Server) apply(g []float32, lr float64) {
	off := 0
	for _, p := range s.params {
		n := p.Numel()
		copy(p.Grad().Float32s(), g[off:off+n])
		off += n
	}
	if lr > 0 {
		for i := range s.opt.NumGroups() {
			s.opt.SetLR(i, lr)
		}
	}
	// SGD, Adam and the others return errors only for bad state.
	if err := s.opt.Step(); err != nil {
		s.failLocked(fmt.Errorf("ps: server %d: optimizer step: %w", s.o.Index, err))
		return
	}
	s.stats.Updates++
}

// waitPull waits until the parameters for step may be read.
func (s *Server) waitPull(step int) error {
	deadline := time.Now().Add(s.o.Timeout)
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		if s.err != nil {
			return s.err
		}
		if s.inited && ((!s.o.Async && s.version >= step) || (s.o.Async && s.clock.Ready(step))) {
			return nil
		}
		if time.Now().After(deadline) {
			err := fmt.Errorf("ps: server %d: waited %v for the parameters of step %d (synchronous step %d, slowest clock %v)",
				s.o.Index, s.o.Timeout, step, s.version, s.clockString())
			s.failLocked(err)
			return err
		}
		s.cond.Wait()
	}
}

func (s *Server) clockString() string {
	m, ok := s.clock.Min()
	if !ok {
		return "none"
	}
	return fmt.Sprint(m)
}

// scatter copies flat values into the segments.
func (s *Server) scatter(v []float32) {
	off := 0
	for _, p := range s.params {
		off += copy(p.Float32s(), v[off:])
	}
}

// gather copies the segments into flat out.
func (s *Server) gather(out []float32) {
	off := 0
	for _, p := range s.params {
		off += copy(out[off:], p.Float32s())
	}
}
