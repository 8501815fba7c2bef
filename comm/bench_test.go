package comm

import (
	"fmt"
	"testing"
)

// BenchmarkAllReduce measures the ring and recursive doubling between two
// in-process ranks over TCP and shared memory; it reports bus bandwidth
// (nccl-tests' busbw = size/time · 2(N-1)/N). Processes, not goroutines, are
// what `fathom bench allreduce` measures; this is for quick comparisons
// (benchstat) of changes to the transports.
func BenchmarkAllReduce(b *testing.B) {
	for _, tr := range transports {
		for _, size := range []int{4 << 10, 1 << 20, 16 << 20} {
			b.Run(fmt.Sprintf("%s/%dKiB", tr.name, size>>10), func(b *testing.B) {
				const n = 2
				gs := newGroups(b, n, tr.tr, func(o *Options) { o.ShmRingBytes = 4 << 20 })
				bufs := make([][]float32, n)
				for r := range bufs {
					bufs[r] = make([]float32, size/4)
				}
				b.SetBytes(int64(size))
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					errs := onAll(gs, func(g *Group) error { return AllReduce(g, bufs[g.Rank()], Sum) })
					for _, err := range errs {
						if err != nil {
							b.Fatal(err)
						}
					}
				}
				sec := b.Elapsed().Seconds() / float64(b.N)
				b.ReportMetric(float64(size)/sec/1e9*2*(n-1)/n, "busbw_GB/s")
			})
		}
	}
}
