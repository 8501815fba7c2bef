package optim

import (
	"runtime"

	"github.com/fathom-ml/fathom/internal/parallel"
)

// A step's work is split over the cores by a parallel.Loop that every
// optimizer owns and reuses, so a steady-state step allocates nothing. The
// split is over the concatenation of all parameters, so one fork and one
// join serve a whole step however many tensors the model has.
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

// fanout is an optimizer's parallel loop over the concatenation of its
// parameters. It is not safe for concurrent use; each optimizer has its own.
type fanout parallel.Loop

func newFanout(fn func(lo, hi int)) *fanout {
	return (*fanout)(parallel.NewLoop(fn))
}

// run calls fn over [0, n), in parallel when n is large enough, and returns
// when every chunk is done.
func (f *fanout) run(n int) {
	size := n // one call on this goroutine
	if workers := runtime.GOMAXPROCS(0); workers > 1 && n >= 2*fanGrain {
		chunks := min(n/fanGrain, workers*chunksPerWorker)
		size = (n + chunks - 1) / chunks
		size = (size + fanAlign - 1) / fanAlign * fanAlign
	}
	(*parallel.Loop)(f).Run(n, size)
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
