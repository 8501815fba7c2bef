// Package parallel splits loops over the cores the Go runtime may use.
//
// Work smaller than a grain runs on the calling goroutine, so tiny tensors pay
// no goroutine overhead.
package parallel

import (
	"runtime"
	"sync"
)

// For calls fn over [0, n) split into at most GOMAXPROCS contiguous ranges of
// at least grain elements each. fn must be safe to call concurrently on
// disjoint ranges. For returns when every call has returned.
func For(n, grain int, fn func(lo, hi int)) {
	if n <= 0 {
		return
	}
	if grain < 1 {
		grain = 1
	}
	workers := runtime.GOMAXPROCS(0)
	if w := n / grain; w < workers {
		workers = w
	}
	if workers <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	chunk := (n + workers - 1) / workers
	for lo := chunk; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			fn(lo, hi)
		}(lo, hi)
	}
	fn(0, min(chunk, n))
	wg.Wait()
}
