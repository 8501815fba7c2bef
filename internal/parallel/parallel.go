package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// chunksPerWorker is how many chunks For gives each worker when the work
// allows it. More chunks than workers lets a core that finishes early (the
// machine may be shared) take over the rest, at the cost of one atomic add
// per chunk; few, long chunks keep each core on one long memory stream.
// With 2 per worker, summing 16 Mi float32 on two idle cores runs as fast
// as an even split between two goroutines (about 46 GB/s here).
const chunksPerWorker = 2

// Workers returns the number of goroutines For may use: GOMAXPROCS.
func Workers() int { return runtime.GOMAXPROCS(0) }

// A Loop runs one body over [0, n) in chunks that the caller and idle
// helpers claim from a counter, so a core that a busy machine slows down
// just takes fewer chunks. Build it once and run it many times: every Run
// after the first allocates nothing. A Loop is not safe for concurrent use.
type Loop struct {
	// Spin and WaitSpin are those of the Loop's Job: how long its helpers
	// stay awake for the next parallel call, and how long the caller polls
	// for them to finish before it blocks.
	Spin, WaitSpin time.Duration

	job     Job
	body    func(lo, hi int)
	n, size int
	chunks  int64
	next    atomic.Int64
}

// NewLoop returns a Loop that runs body on disjoint ranges. body must be
// safe to call concurrently on disjoint ranges.
func NewLoop(body func(lo, hi int)) *Loop { return &Loop{body: body} }

// Run calls the body over [0, n) in ranges of size elements (the last one
// may be shorter), on up to GOMAXPROCS goroutines including the caller's,
// and returns when every call has returned. With one chunk, or GOMAXPROCS
// 1, it calls body(0, n) on the calling goroutine.
func (l *Loop) Run(n, size int) {
	if n <= 0 {
		return
	}
	size = max(size, 1)
	chunks := (n-1)/size + 1
	parts := min(runtime.GOMAXPROCS(0), chunks)
	if parts <= 1 {
		l.body(0, n)
		return
	}
	l.n, l.size, l.chunks = n, size, int64(chunks)
	l.next.Store(0)
	l.job.Spin, l.job.WaitSpin = l.Spin, l.WaitSpin
	l.job.Run(parts, (*loopTask)(l))
}

// loopTask is a Loop seen as a Task (RunPart is not part of Loop's API).
type loopTask Loop

// RunPart claims and runs chunks until none is left.
func (t *loopTask) RunPart(int) {
	for {
		c := t.next.Add(1) - 1
		if c >= t.chunks {
			return
		}
		lo := int(c) * t.size
		t.body(lo, min(lo+t.size, t.n))
	}
}

// forSpin is the Spin of For: back-to-back calls (the elementwise ops of a
// training step) find the helpers awake.
const forSpin = 50 * time.Microsecond

// loops recycles the Loops of For, so a call allocates no record of its own.
var loops = sync.Pool{New: func() any { return &Loop{Spin: forSpin} }}

// For calls fn over [0, n) split into contiguous ranges of at least grain
// elements (except when n < grain), using up to GOMAXPROCS goroutines,
// including the caller's. Every index in [0, n) is covered by exactly one
// call. fn must be safe to call concurrently on disjoint ranges. For returns
// when every call has returned.
//
// When n < 2*grain or GOMAXPROCS is 1, fn(0, n) runs on the calling
// goroutine with no synchronization at all.
func For(n, grain int, fn func(lo, hi int)) {
	count, size := Chunks(n, grain)
	if count == 0 {
		return
	}
	if count == 1 {
		fn(0, n)
		return
	}
	l := loops.Get().(*Loop)
	l.body = fn
	l.Run(n, size)
	l.body = nil // drop the caller's closure
	loops.Put(l)
}

// Chunks returns how For would split n elements with the given grain on the
// current GOMAXPROCS: the number of chunks and the chunk length (the last
// chunk may be shorter). Callers that need one result slot per chunk (see
// MapReduce) use it to size their storage.
func Chunks(n, grain int) (count, size int) {
	if n <= 0 {
		return 0, 0
	}
	grain = max(grain, 1)
	workers := runtime.GOMAXPROCS(0)
	maxChunks := n / grain
	if workers <= 1 || maxChunks <= 1 {
		return 1, n
	}
	count = min(maxChunks, workers*chunksPerWorker)
	size = (n + count - 1) / count
	return (n + size - 1) / size, size
}

// MapReduce splits [0, n) like For, computes fn on every chunk in parallel,
// and folds the chunk results in index order with combine, starting from
// zero. Because chunk boundaries depend only on n, grain and GOMAXPROCS, and
// results are folded in order, the result is deterministic for a fixed
// GOMAXPROCS (no dependence on which goroutine ran which chunk).
func MapReduce[T any](n, grain int, zero T, fn func(lo, hi int) T, combine func(acc, x T) T) T {
	count, size := Chunks(n, grain)
	if count == 0 {
		return zero
	}
	if count == 1 {
		return combine(zero, fn(0, n))
	}
	parts := make([]T, count)
	For(count, 1, func(clo, chi int) {
		for c := clo; c < chi; c++ {
			lo := c * size
			parts[c] = fn(lo, min(lo+size, n))
		}
	})
	acc := zero
	for _, p := range parts {
		acc = combine(acc, p)
	}
	return acc
}
