// Package parallel splits loops over the cores the Go runtime may use.
//
// For(n, grain, fn) calls fn on contiguous, disjoint ranges covering [0, n),
// on up to GOMAXPROCS goroutines, and returns when all are done. Work of fewer
// than two grains runs on the calling goroutine with no synchronization, so
// small tensors pay nothing. Larger work is handed to a small pool of
// long-lived worker goroutines (started once, on first use), so a parallel
// call costs a channel send and an atomic per chunk rather than a goroutine
// spawn. MapReduce does the same and folds one result per chunk in index
// order, which makes parallel reductions deterministic.
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
// For and MapReduce are safe to call from many goroutines at once and from
// inside fn (nested parallelism): the caller always works on its own job and
// never waits for a chunk nobody has started.
package parallel
