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
	tag  uint32
	fn   func(tag uint32) error
	done chan struct{}
	err  error
}

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

// submit queues fn as the next operation of the group.
func (g *Group) submit(name string, userTag int, fn func(tag uint32) error) *Work {
	w := &Work{name: name, fn: fn, done: make(chan struct{})}
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return doneWork(&opError{Rank: g.rank, Op: name, Err: ErrClosed})
	}
	g.seq++
	w.tag = collTag(g.seq)
	if userTag >= 0 {
		w.tag = uint32(userTag)
	}
	g.pending++
	g.mu.Unlock()
	g.ops <- w
	return w
}

// do runs fn synchronously: inline on the caller's goroutine when nothing is
// queued (saves a goroutine hand-off per small collective), otherwise behind
// the queued operations.
func (g *Group) do(name string, userTag int, fn func(tag uint32) error) error {
	g.mu.Lock()
	if g.pending > 0 || g.closed {
		g.mu.Unlock()
		return g.submit(name, userTag, fn).Wait()
	}
	g.seq++
	w := &Work{name: name, tag: collTag(g.seq), fn: fn}
	if userTag >= 0 {
		w.tag = uint32(userTag)
	}
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

// run executes one operation under the group's timeout.
func (g *Group) run(w *Work) {
	if g.aborted.Load() {
		w.err = &opError{Rank: g.rank, Op: w.name, Err: g.abortError()}
		return
	}
	var timer *time.Timer
	if g.size > 1 {
		timer = time.AfterFunc(g.opts.Timeout, func() {
			g.abort(fmt.Errorf("%w: rank %d spent more than %v in %s", ErrTimeout, g.rank, g.opts.Timeout, w.name), true)
		})
	}
	err := w.fn(w.tag)
	if timer != nil {
		timer.Stop()
	}
	if err != nil {
		w.err = &opError{Rank: g.rank, Op: w.name, Err: err}
		if g.server != nil {
			// this process hosts the store and may exit on this error:
			// first let the abort reach every rank waiting for it
			g.server.WaitIdle(time.Second)
		}
	}
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
