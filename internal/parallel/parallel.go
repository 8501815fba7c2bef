package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// chunksPerWorker is how many chunks each worker gets when the work allows
// it. More chunks than workers lets a core that finishes early (the machine
// may be shared) take over the rest, at the cost of one atomic add per
// chunk; few, long chunks keep each core on one long memory stream. With 2
// per worker, summing 16 Mi float32 on two idle cores runs as fast as an
// even split between two goroutines (about 46 GB/s here).
const chunksPerWorker = 2

// Workers returns the number of goroutines For may use: GOMAXPROCS.
func Workers() int { return runtime.GOMAXPROCS(0) }

// job is one call of For. It lives on the heap for the duration of the call
// and is never reused: a worker may receive a pointer to a job that has
// already finished, finds no chunk left, and drops it.
type job struct {
	fn      func(lo, hi int)
	n       int
	chunk   int   // elements per chunk; the last chunk may be shorter
	nChunks int64 // number of chunks
	next    atomic.Int64
	left    atomic.Int64  // chunks not finished yet
	done    chan struct{} // receives one value when a worker finishes the last chunk
}

// run executes chunks until none is left. It reports whether this goroutine
// finished the job's last chunk.
func (j *job) run() (last bool) {
	for {
		c := j.next.Add(1) - 1
		if c >= j.nChunks {
			return false
		}
		lo := int(c) * j.chunk
		hi := min(lo+j.chunk, j.n)
		j.fn(lo, hi)
		if j.left.Add(-1) == 0 {
			return true
		}
	}
}

// The pool: long-lived worker goroutines started on the first parallel call,
// woken by a job pointer on wake. The pool holds no per-call state, so
// concurrent and nested calls of For are safe: the caller of For always runs
// chunks itself and only ever waits for chunks another goroutine has already
// started, so progress never depends on a worker being free.
var (
	poolOnce sync.Once
	wake     chan *job
)

func startPool() {
	n := max(runtime.NumCPU(), runtime.GOMAXPROCS(0)) - 1
	if n < 1 {
		n = 1
	}
	wake = make(chan *job, 4*n)
	for range n {
		go worker()
	}
}

// spinFor is how long an idle worker keeps polling for the next job before
// it blocks. Waking a blocked goroutine whose thread is asleep costs tens of
// microseconds on a virtual machine (the idle core must be woken by the
// host); back-to-back parallel calls (a training step is a chain of them)
// find a polling worker instead. OpenMP runtimes spin for the same reason,
// much longer; 50 µs keeps the cost to other processes small.
const spinFor = 50 * time.Microsecond

func worker() {
	for {
		j := nextJob()
		if j.run() {
			j.done <- struct{}{}
		}
	}
}

// nextJob returns the next job from wake, polling for up to spinFor before
// blocking.
func nextJob() *job {
	start := time.Now()
	for i := 0; ; i++ {
		select {
		case j := <-wake:
			return j
		default:
		}
		if i%32 == 31 {
			if time.Since(start) > spinFor {
				return <-wake
			}
			runtime.Gosched() // let other goroutines of this program run
		}
	}
}

// For calls fn over [0, n) split into contiguous ranges of at least grain
// elements (except when n < grain), using up to GOMAXPROCS goroutines,
// including the caller's. Every index in [0, n) is covered by exactly one
// call. fn must be safe to call concurrently on disjoint ranges. For returns
// when every call has returned.
//
// When n < 2*grain or GOMAXPROCS is 1, fn(0, n) runs on the calling
// goroutine with no synchronization at all.
func For(n, grain int, fn func(lo, hi int)) {
	if n <= 0 {
		return
	}
	grain = max(grain, 1)
	workers := runtime.GOMAXPROCS(0)
	maxChunks := n / grain
	if workers <= 1 || maxChunks <= 1 {
		fn(0, n)
		return
	}
	nChunks := min(maxChunks, workers*chunksPerWorker)
	chunk := (n + nChunks - 1) / nChunks
	nChunks = (n + chunk - 1) / chunk
	j := &job{fn: fn, n: n, chunk: chunk, nChunks: int64(nChunks), done: make(chan struct{}, 1)}
	j.left.Store(int64(nChunks))
	poolOnce.Do(startPool)
	for range min(workers, nChunks) - 1 {
		select {
		case wake <- j:
		default: // every worker is busy and the queue is full: do it ourselves
		}
	}
	if j.run() {
		return // we finished the last chunk
	}
	if j.left.Load() != 0 {
		// A worker is still running a chunk; the one that finishes the last
		// chunk sends on done. (When left is already 0, that worker's send
		// goes into the buffered channel and nobody needs to read it.)
		<-j.done
	}
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
