package main

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/fathom-ml/fathom/internal/kernel"
)

// elementwiseResult is one `fathom bench add|sum|softmax` measurement (a
// JSON line with --json). GB/s counts the bytes the operation must move:
// add 12 per element (read a and b, write c), sum 4, softmax 8 (read x,
// write dst); 1 GB = 1e9 bytes.
type elementwiseResult struct {
	Op      string  `json:"op"`
	N       int     `json:"n"`
	Threads int     `json:"threads"`
	Ms      float64 `json:"ms"`
	GBps    float64 `json:"gbps"`
	Samples int     `json:"samples"`
}

// elementwiseBench describes one bandwidth benchmark: bytes moved per
// element and a constructor of the timed call over n elements.
type elementwiseBench struct {
	op, short, long string
	bytesPerElem    int
	defaultN        int
	setup           func(n int) func()
}

var elementwiseBenches = []elementwiseBench{
	{
		op: "add", short: "Measure c = a + b bandwidth on float32 vectors (GB/s)",
		long: `Times kernel.AddF32(c, a, b) on float32 vectors of --n elements into a
preallocated c (PyTorch: torch.add(a, b, out=c)). GB/s = 12·n / t.`,
		bytesPerElem: 12, defaultN: 1 << 24,
		setup: func(n int) func() {
			a, b, c := benchF32(n, 1), benchF32(n, 2), make([]float32, n)
			return func() { kernel.AddF32(c, a, b) }
		},
	},
	{
		op: "sum", short: "Measure the bandwidth of summing a float32 vector (GB/s)",
		long: `Times kernel.SumF32(a) over --n float32 elements (PyTorch: torch.sum(a)).
GB/s = 4·n / t.`,
		bytesPerElem: 4, defaultN: 1 << 24,
		setup: func(n int) func() {
			a := benchF32(n, 3)
			var sink float32
			return func() { sink += kernel.SumF32(a) }
		},
	},
	{
		op: "softmax", short: "Measure row-wise softmax of a rows×1000 float32 matrix (GB/s)",
		long: `Times kernel.SoftmaxRowsF32 over a float32 matrix of --n elements laid out as
rows of 1000 (default 4096×1000; PyTorch: torch.softmax(x, dim=1)).
GB/s = 8·n / t (read x, write dst).`,
		bytesPerElem: 8, defaultN: 4096 * 1000,
		setup: func(n int) func() {
			const cols = 1000
			rows := max(n/cols, 1)
			x, dst := benchF32(rows*cols, 4), make([]float32, rows*cols)
			return func() { kernel.SoftmaxRowsF32(dst, x, rows, cols) }
		},
	},
}

func init() {
	for _, b := range elementwiseBenches {
		var n, iters, threads int
		var minTime time.Duration
		cmd := &cobra.Command{
			Use:   b.op,
			Short: b.short,
			Long: b.long + `

After one warm-up call, each of --iters samples repeats the call until it
lasts at least --min-time; the median time per call is reported.`,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				if n <= 0 {
					return fmt.Errorf("bench %s: --n must be positive, got %d", b.op, n)
				}
				if iters < 1 {
					return fmt.Errorf("bench %s: --iters must be at least 1, got %d", b.op, iters)
				}
				if threads > 0 {
					defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(threads))
				}
				if b.op == "softmax" {
					n = max(n/1000, 1) * 1000
				}
				call := b.setup(n)
				runtime.GC() // collect now, not during the timed calls
				sec, _ := medianTime(call, iters, minTime)
				res := elementwiseResult{
					Op: b.op, N: n, Threads: runtime.GOMAXPROCS(0), Ms: sec * 1e3,
					GBps: float64(b.bytesPerElem) * float64(n) / sec / 1e9, Samples: iters,
				}
				if jsonOut {
					return printJSON(res)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s n=%d threads=%d: %.3f ms  %.2f GB/s (median of %d)\n",
					b.op, n, res.Threads, res.Ms, res.GBps, iters)
				return nil
			},
		}
		f := cmd.Flags()
		f.IntVar(&n, "n", b.defaultN, "number of float32 elements")
		f.IntVar(&iters, "iters", 7, "number of timed samples (the median is reported)")
		f.IntVar(&threads, "threads", 0, "GOMAXPROCS for the run (0 keeps the current value)")
		f.DurationVar(&minTime, "min-time", 300*time.Millisecond, "minimum duration of one sample")
		benchCmd.AddCommand(cmd)
	}
}

// benchF32 returns n uniform [0, 1) float32 values (as torch.rand).
func benchF32(n int, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	x := make([]float32, n)
	for i := range x {
		x[i] = r.Float32()
	}
	return x
}
