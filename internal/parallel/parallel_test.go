package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// checkCover runs For and verifies every index in [0, n) is visited exactly
// once and every range respects the grain (except a single short range).
func checkCover(t *testing.T, n, grain int) {
	t.Helper()
	counts := make([]int32, n)
	var calls atomic.Int64
	var bad atomic.Int64
	For(n, grain, func(lo, hi int) {
		calls.Add(1)
		if lo < 0 || hi > n || lo >= hi {
			bad.Add(1)
			return
		}
		for i := lo; i < hi; i++ {
			atomic.AddInt32(&counts[i], 1)
		}
	})
	if bad.Load() != 0 {
		t.Fatalf("n=%d grain=%d: %d calls with an invalid range", n, grain, bad.Load())
	}
	for i, c := range counts {
		if c != 1 {
			t.Fatalf("n=%d grain=%d: index %d visited %d times", n, grain, i, c)
		}
	}
	if n == 0 && calls.Load() != 0 {
		t.Fatalf("n=0: fn called %d times", calls.Load())
	}
	if n > 0 && n < 2*max(grain, 1) && calls.Load() != 1 {
		t.Fatalf("n=%d < 2*grain=%d: fn called %d times, want 1", n, grain, calls.Load())
	}
}

func TestForCoversEveryIndexOnce(t *testing.T) {
	for _, tc := range []struct{ n, grain int }{
		{0, 1}, {1, 1}, {1, 100}, {7, 1}, {7, 3}, {99, 100}, {100, 100}, {199, 100},
		{200, 100}, {1001, 7}, {4097, 16}, {1 << 20, 1 << 10}, {1<<20 + 5, 1}, {10, 0}, {10, -5},
	} {
		checkCover(t, tc.n, tc.grain)
	}
}

func TestForHugeN(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	// Only range bookkeeping, no per-index work: n near 1<<40 must not overflow.
	const n = 1 << 40
	var total atomic.Int64
	For(n, 1<<30, func(lo, hi int) { total.Add(int64(hi - lo)) })
	if total.Load() != n {
		t.Fatalf("covered %d of %d", total.Load(), n)
	}
}

func TestForSingleGoroutineBelowGrain(t *testing.T) {
	// Below two grains fn must run on the calling goroutine: a goroutine-local
	// value (here, a plain variable with no synchronization) is visible.
	x := 0
	For(10, 8, func(lo, hi int) { x += hi - lo })
	if x != 10 {
		t.Fatalf("x=%d", x)
	}
}

func TestForConcurrentAndNested(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := 5000 + g*37
			out := make([]int64, n)
			For(n, 10, func(lo, hi int) {
				// nested: each outer range is split again
				For(hi-lo, 3, func(l2, h2 int) {
					for i := lo + l2; i < lo+h2; i++ {
						atomic.AddInt64(&out[i], int64(i))
					}
				})
			})
			for i, v := range out {
				if v != int64(i) {
					errs <- "nested For missed or repeated an index"
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

func TestMapReduceDeterministic(t *testing.T) {
	x := make([]float64, 100003)
	for i := range x {
		x[i] = 1 / float64(i+1)
	}
	sum := func() float64 {
		return MapReduce(len(x), 100, 0.0, func(lo, hi int) float64 {
			s := 0.0
			for _, v := range x[lo:hi] {
				s += v
			}
			return s
		}, func(a, b float64) float64 { return a + b })
	}
	first := sum()
	for range 50 {
		if got := sum(); got != first {
			t.Fatalf("MapReduce not deterministic: %v vs %v", got, first)
		}
	}
	var ref float64
	for _, v := range x {
		ref += v
	}
	if d := first - ref; d > 1e-9 || d < -1e-9 {
		t.Fatalf("sum %v, sequential %v", first, ref)
	}
	// Integer version: exact.
	got := MapReduce(1000, 7, 0, func(lo, hi int) int {
		s := 0
		for i := lo; i < hi; i++ {
			s += i
		}
		return s
	}, func(a, b int) int { return a + b })
	if got != 999*1000/2 {
		t.Fatalf("int MapReduce = %d", got)
	}
	if z := MapReduce(0, 7, -1, func(lo, hi int) int { return 5 }, func(a, b int) int { return a + b }); z != -1 {
		t.Fatalf("empty MapReduce = %d, want zero value -1", z)
	}
}

func TestChunksMatchesFor(t *testing.T) {
	for _, tc := range []struct{ n, grain int }{{0, 1}, {5, 10}, {1000, 10}, {12345, 100}} {
		count, size := Chunks(tc.n, tc.grain)
		var calls atomic.Int64
		For(tc.n, tc.grain, func(lo, hi int) {
			calls.Add(1)
			if lo%max(size, 1) != 0 {
				t.Errorf("n=%d: range starts at %d, not a multiple of chunk %d", tc.n, lo, size)
			}
		})
		if int(calls.Load()) != count {
			t.Errorf("n=%d grain=%d: For made %d calls, Chunks says %d", tc.n, tc.grain, calls.Load(), count)
		}
	}
}

func TestGOMAXPROCS1(t *testing.T) {
	old := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(old)
	checkCover(t, 1000, 1)
}

func BenchmarkForOverhead(b *testing.B) {
	x := make([]float32, 1<<14)
	for b.Loop() {
		For(len(x), 1024, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				x[i]++
			}
		})
	}
}

func BenchmarkSerial(b *testing.B) {
	x := make([]float32, 1<<14)
	for b.Loop() {
		for i := range x {
			x[i]++
		}
	}
}

func benchSizes(b *testing.B, par bool) {
	for _, n := range []int{1 << 12, 1 << 14, 1 << 16, 1 << 18} {
		x := make([]float32, n)
		name := map[bool]string{true: "par", false: "ser"}[par]
		b.Run(name+"/"+itoa(n), func(b *testing.B) {
			for b.Loop() {
				if par {
					For(len(x), 1024, func(lo, hi int) {
						for i := lo; i < hi; i++ {
							x[i]++
						}
					})
				} else {
					for i := range x {
						x[i]++
					}
				}
			}
		})
	}
}

func itoa(n int) string {
	s := ""
	for n > 0 {
		s = string(rune('0'+n%10)) + s
		n /= 10
	}
	return s
}

func BenchmarkSizes(b *testing.B) { benchSizes(b, false); benchSizes(b, true) }

func TestLoopCoversAndReuses(t *testing.T) {
	var counts []int32
	l := NewLoop(func(lo, hi int) {
		for i := lo; i < hi; i++ {
			atomic.AddInt32(&counts[i], 1)
		}
	})
	for _, tc := range []struct{ n, size int }{{0, 1}, {1, 1}, {10, 0}, {1000, 7}, {1000, 1000}, {1 << 16, 1 << 10}, {1<<16 + 3, 64}} {
		for rep := range 3 {
			counts = make([]int32, tc.n)
			l.Run(tc.n, tc.size)
			for i, c := range counts {
				if c != 1 {
					t.Fatalf("n=%d size=%d rep %d: index %d visited %d times", tc.n, tc.size, rep, i, c)
				}
			}
		}
	}
}

// TestLoopNoGarbage checks that a steady-state Loop run, with helpers,
// allocates nothing.
func TestLoopNoGarbage(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs GOMAXPROCS ≥ 2")
	}
	x := make([]float32, 1<<16)
	l := NewLoop(func(lo, hi int) {
		for i := lo; i < hi; i++ {
			x[i]++
		}
	})
	l.Run(len(x), 1<<12)
	if allocs := testing.AllocsPerRun(100, func() { l.Run(len(x), 1<<12) }); allocs > 0 {
		t.Errorf("Loop.Run: %v allocations per run", allocs)
	}
}

// partTask records which parts ran and claims n units of work.
type partTask struct {
	n, next atomic.Int64
	seen    []atomic.Int32
	hold    chan struct{} // when set, helpers wait on it before claiming
}

func (p *partTask) RunPart(part int) {
	p.seen[part].Add(1)
	if part > 0 && p.hold != nil {
		<-p.hold
	}
	for p.next.Add(1) <= p.n.Load() {
	}
}

func TestJobParts(t *testing.T) {
	for _, parts := range []int{1, 2, 3, 8} {
		var j Job
		for rep := range 20 {
			p := &partTask{seen: make([]atomic.Int32, parts)}
			p.n.Store(100000)
			j.Run(parts, p)
			if p.seen[0].Load() != 1 {
				t.Fatalf("parts=%d rep %d: part 0 ran %d times", parts, rep, p.seen[0].Load())
			}
			for i := 1; i < parts; i++ {
				if c := p.seen[i].Load(); c > 1 {
					t.Fatalf("parts=%d rep %d: part %d ran %d times", parts, rep, i, c)
				}
			}
			if p.next.Load() <= p.n.Load() {
				t.Fatalf("parts=%d rep %d: work left", parts, rep)
			}
		}
	}
}

// TestJobWaitsForJoinedHelpers checks that Run does not return while a
// helper that joined is still in RunPart.
func TestJobWaitsForJoinedHelpers(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs GOMAXPROCS ≥ 2")
	}
	var j Job
	joined := 0
	for range 10 {
		p := &partTask{seen: make([]atomic.Int32, 2), hold: make(chan struct{})}
		p.n.Store(1 << 20) // a few milliseconds for the caller alone
		var released, returned atomic.Bool
		go func() {
			// Release the helper 2 ms after it joins (or when Run returned
			// without it).
			for p.seen[1].Load() == 0 && !returned.Load() {
				runtime.Gosched()
			}
			time.Sleep(2 * time.Millisecond)
			released.Store(true)
			close(p.hold)
		}()
		j.Run(2, p)
		returned.Store(true)
		if p.seen[1].Load() == 1 {
			joined++
			if !released.Load() {
				t.Fatal("Run returned while a joined helper was still in RunPart")
			}
		}
	}
	t.Logf("a helper joined %d of 10 runs", joined)
}

func BenchmarkLoopRun(b *testing.B) {
	x := make([]float32, 1<<16)
	l := NewLoop(func(lo, hi int) {
		for i := lo; i < hi; i++ {
			x[i]++
		}
	})
	b.ReportAllocs()
	for b.Loop() {
		l.Run(len(x), 1<<12)
	}
}
