package comm

import (
	"fmt"
	"time"
)

// Work is the handle of an asynchronous operation. Operations of a group run
// one at a time in the order they were submitted, so a caller can queue
// several (DDP buckets) and wait for them later while computing.
type Work struct {
	name string
	tag  uint64
	fn   func(tag uint64) error
	done chan struct{}
	err  error

	start, end time.Time // when it ran (set before done closes)
}

// Span returns when the operation started and finished running (both zero
// for an operation refused before it ran). Valid once Wait has returned.
func (w *Work) Span() (start, end time.Time) { return w.start, w.end }

// Wait blocks until the operation finished and returns its error.
func (w *Work) Wait() error {
	<-w.done
	return w.err
}

// Done reports whether the operation has finished.
func (w *Work) Done() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

// DoneWork returns the handle of an operation that has already finished
// with err: what a wrapper over the collectives (package comm/tensorcomm)
// returns when it rejects its input before submitting anything.
func DoneWork(err error) *Work { return doneWork(err) }

func doneWork(err error) *Work {
	w := &Work{done: make(chan struct{}), err: err}
	close(w.done)
	return w
}

// collTag returns a tag for collective number seq: the top bit separates
// collectives from user point-to-point tags.
func collTag(seq uint32) uint32 { return 1<<31 | seq&(1<<31-1) }

// linkTag returns the link tag of the operation with sequence number seq,
// or of a point-to-point message with userTag >= 0: the group's id in the
// high 32 bits, the tag within the group in the low 32.
func (g *Group) linkTag(seq uint32, userTag int) uint64 {
	t := collTag(seq)
	if userTag >= 0 {
		t = uint32(userTag)
	}
	return uint64(g.gid)<<32 | uint64(t)
}

// submit queues fn as the next operation of the group.
func (g *Group) submit(name string, userTag int, fn func(tag uint64) error) *Work {
	w := &Work{name: name, fn: fn, done: make(chan struct{})}
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return doneWork(g.opError(name, ErrClosed))
	}
	g.seq++
	w.tag = g.linkTag(g.seq, userTag)
	g.pending++
	g.mu.Unlock()
	g.ops <- w
	return w
}

// do runs fn synchronously: inline on the caller's goroutine when nothing is
// queued (saves a goroutine hand-off per small collective), otherwise behind
// the queued operations.
func (g *Group) do(name string, userTag int, fn func(tag uint64) error) error {
	g.mu.Lock()
	if g.pending > 0 || g.closed {
		g.mu.Unlock()
		return g.submit(name, userTag, fn).Wait()
	}
	g.seq++
	w := &Work{name: name, tag: g.linkTag(g.seq, userTag), fn: fn}
	g.pending++
	g.execMu.Lock() // free: no operation is pending
	g.mu.Unlock()
	g.run(w)
	g.execMu.Unlock()
	g.mu.Lock()
	g.pending--
	g.mu.Unlock()
	return w.err
}

func (g *Group) worker() {
	defer close(g.opsDone)
	for w := range g.ops {
		g.execMu.Lock()
		g.run(w)
		g.execMu.Unlock()
		g.mu.Lock()
		g.pending--
		g.mu.Unlock()
		close(w.done)
	}
}

// run executes one operation under the group's timeout. Aborts are the
// root's: a subgroup shares its links and its fate.
func (g *Group) run(w *Work) {
	root := g.root
	if root.aborted.Load() {
		w.err = g.opError(w.name, root.abortError())
		return
	}
	var timer *time.Timer
	if g.size > 1 {
		timer = time.AfterFunc(g.opts.Timeout, func() {
			msg := fmt.Sprintf("%s spent more than %v in %s", g.who(), g.opts.Timeout, w.name)
			if silent := root.silentRanks(beatInterval(g.opts.HeartbeatTimeout) * 3); len(silent) > 0 {
				msg += fmt.Sprintf("; %s not been heard from lately", ranksPhrase(silent))
			} else if root.hb.stop != nil {
				msg += "; every rank's heartbeat is current (a rank is slow or stuck in a loop that still lets the heartbeat run)"
			}
			root.abort(fmt.Errorf("%w: %s", ErrTimeout, msg), true)
		})
	}
	w.start = time.Now()
	err := w.fn(w.tag)
	w.end = time.Now()
	if timer != nil {
		timer.Stop()
	}
	if err != nil {
		w.err = g.opError(w.name, err)
		if root.server != nil {
			// this process hosts the store and may exit on this error:
			// first let the abort reach every rank waiting for it
			root.server.WaitIdle(time.Second)
		}
	}
}

func (g *Group) opError(op string, err error) error {
	e := &opError{Rank: g.rank, Op: op, Err: err}
	if g.members != nil {
		e.Group = fmt.Sprint("subgroup ", g.members)
	}
	return e
}

// who names this rank in messages: "rank 2", or "rank 1 of subgroup [1 3]"
// (the subgroup listed by the ranks of the job).
func (g *Group) who() string {
	if g.members == nil {
		return fmt.Sprintf("rank %d", g.rank)
	}
	return fmt.Sprintf("rank %d of subgroup %v", g.rank, g.members)
}

// scratchBytes returns a reused 8-byte-aligned buffer of n bytes; only the
// running operation (holder of execMu) may use it.
func (g *Group) scratchBytes(n int) []byte {
	if cap(g.scratch) < n {
		g.scratch = alignedBytes(max(n, 2*cap(g.scratch)))
	}
	return g.scratch[:n]
}

func scratchOf[T Number](g *Group, n int) []T {
	return fromBytes[T](g.scratchBytes(n * elemSize[T]()))[:n:n]
}
