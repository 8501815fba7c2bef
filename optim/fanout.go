package optim

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// A step's work is split over the cores by a fanout that every optimizer
// owns and reuses, so a steady-state step allocates nothing (package
// internal/parallel allocates its job record per call). The split is over
// the concatenation of all parameters, so one fork and one join serve a
// whole step however many tensors the model has.
//
// Chunks are claimed, not assigned: the caller starts on them at once and a
// helper joins when the Go scheduler and the OS wake it. On a busy machine
// that takes tens of microseconds, and the caller does most of a small
// step itself; the step is never slower than on one core by more than the
// hand-off. The results do not depend on the split (see fused.go).

const (
	// fanGrain is the least work worth handing to another core: about
	// 10 µs of an Adam update, well above the cost of waking a helper.
	fanGrain = 32 << 10
	// fanAlign keeps chunk boundaries on 64-element multiples, so only a
	// parameter's own end leaves a scalar tail.
	fanAlign = 64
	// chunksPerWorker lets a core that finishes early (the machine may be
	// shared) take over chunks from a slow one.
	chunksPerWorker = 4
)

// fanout runs fn over [0, n) in chunks claimed by the caller and idle
// helper goroutines. It is not safe for concurrent use; each optimizer has
// its own.
type fanout struct {
	fn      func(lo, hi int)
	n, size int
	chunks  int64
	next    atomic.Int64
	done    chan struct{} // one value per helper that joined a call
}

var (
	helpersOnce sync.Once
	helpers     chan *fanout
)

func startHelpers() {
	n := max(runtime.NumCPU(), runtime.GOMAXPROCS(0)) - 1
	helpers = make(chan *fanout, max(n, 1))
	for range n {
		go func() {
			for f := range helpers {
				f.work()
				f.done <- struct{}{}
			}
		}()
	}
}

func newFanout(fn func(lo, hi int)) *fanout {
	return &fanout{fn: fn}
}

// work claims and runs chunks until none is left.
func (f *fanout) work() {
	for {
		c := f.next.Add(1) - 1
		if c >= f.chunks {
			return
		}
		lo := int(c) * f.size
		f.fn(lo, min(lo+f.size, f.n))
	}
}

// run calls fn over [0, n), in parallel when n is large enough, and returns
// when every chunk is done and no helper holds f any more.
func (f *fanout) run(n int) {
	workers := runtime.GOMAXPROCS(0)
	if workers <= 1 || n < 2*fanGrain {
		f.fn(0, n)
		return
	}
	nChunks := min(n/fanGrain, workers*chunksPerWorker)
	size := (n + nChunks - 1) / nChunks
	size = (size + fanAlign - 1) / fanAlign * fanAlign
	f.n, f.size, f.chunks = n, size, int64((n+size-1)/size)
	f.next.Store(0)
	helpersOnce.Do(startHelpers)
	if cap(f.done) < workers {
		f.done = make(chan struct{}, workers)
	}
	sent := 0
	for range workers - 1 {
		select {
		case helpers <- f:
			sent++
		default: // every helper is busy: do the work here
		}
	}
	f.work()
	// Wait for the helpers that took the job. A job still queued is
	// taken back (or another caller's queued job run here, as a helper
	// would), so a helper that the OS has not scheduled yet cannot hold
	// up the step.
	for sent > 0 {
		select {
		case <-f.done:
			sent--
		case j := <-helpers:
			j.work()
			j.done <- struct{}{}
		}
	}
}

// span is one parameter's share of a step: update applies the optimizer to
// elements [lo, hi) of the parameter.
type span interface {
	size() int
	update(lo, hi int)
}

// runSpans applies the update to elements [lo, hi) of the concatenation
// of the items' parameters.
func runSpans[S any, PS interface {
	*S
	span
}](items []S, lo, hi int) {
	off := 0
	for k := range items {
		it := PS(&items[k])
		n := it.size()
		if a, b := max(lo-off, 0), min(hi-off, n); a < b {
			it.update(a, b)
		}
		off += n
		if off >= hi {
			return
		}
	}
}

// totalSize returns the summed sizes of the items.
func totalSize[S any, PS interface {
	*S
	span
}](items []S) int {
	n := 0
	for k := range items {
		n += PS(&items[k]).size()
	}
	return n
}

// sub returns s[lo:hi], or nil for a nil s.
func sub[T any](s []T, lo, hi int) []T {
	if s == nil {
		return nil
	}
	return s[lo:hi]
}
