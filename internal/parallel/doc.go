// Package parallel holds fathom's one set of CPU workers: it splits work
// over the cores the Go runtime may use.
//
// One set of long-lived helper goroutines (started on first use) serves
// three ways of calling it:
//
//   - For(n, grain, fn) calls fn on contiguous, disjoint ranges covering
//     [0, n) and returns when all are done. Work of fewer than two grains
//     runs on the calling goroutine with no synchronization, so small
//     tensors pay nothing. MapReduce does the same and folds one result per
//     chunk in index order, which makes parallel reductions deterministic.
//   - A Loop is a For that a long-lived value builds once and runs many
//     times with its own chunk size (an optimizer step over all its
//     parameters); every Run after the first allocates nothing.
//   - A Job runs any Task whose participants claim work themselves (the
//     GEMM driver packs shared panels and multiplies chunks of C that way);
//     each participant gets a part number for its own scratch space.
//
// Work is claimed, never assigned: the caller starts at once, helpers join
// when the scheduler wakes them, and a helper that arrives after the
// caller has finished its part is turned away, so a core that a shared
// machine slows down takes fewer pieces instead of stalling the call.
//
//	parallel.For(len(x), 1<<15, func(lo, hi int) {
//		for i := lo; i < hi; i++ {
//			y[i] = 2 * x[i]
//		}
//	})
//
//	sum := parallel.MapReduce(len(x), 1<<15, 0.0,
//		func(lo, hi int) float64 { return sumRange(x[lo:hi]) },
//		func(a, b float64) float64 { return a + b })
//
//	step := parallel.NewLoop(func(lo, hi int) { update(lo, hi) })
//	for range steps {
//		step.Run(n, 64<<10) // chunks of 64 Ki elements
//	}
//
// All of them are safe to call from many goroutines at once and from inside
// a running body (nested parallelism): the caller always works on its own
// job and only ever waits for helpers that are running a part of it.
package parallel
