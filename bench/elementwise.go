package bench

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/fathom-ml/fathom/internal/kernel"
)

// ElementwiseResult is one `fathom bench add|sum|softmax` measurement (a
// JSON line with --json). GB/s counts the bytes the operation must move:
// add 12 per element (read a and b, write c), sum 4, softmax 8 (read x,
// write dst); 1 GB = 1e9 bytes.
type ElementwiseResult struct {
	Op      string  `json:"op"`
	N       int     `json:"n"`
	Threads int     `json:"threads"`
	Ms      float64 `json:"ms"`
	GBps    float64 `json:"gbps"`
	Samples int     `json:"samples"`
}

// ElementwiseOp describes one bandwidth benchmark (`fathom bench add|sum|softmax`): bytes moved per
// element and a constructor of the timed call over n elements.
type ElementwiseOp struct {
	Op, Short, Long string // the command's name and help
	DefaultN        int    // the default element count
	bytesPerElem    int
	setup           func(n int) func()
}

var ElementwiseOps = []ElementwiseOp{
	{
		Op: "add", Short: "Measure c = a + b bandwidth on float32 vectors (GB/s)",
		Long: `Times kernel.AddF32(c, a, b) on float32 vectors of --n elements into a
preallocated c (PyTorch: torch.add(a, b, out=c)). GB/s = 12·n / t.`,
		bytesPerElem: 12, DefaultN: 1 << 24,
		setup: func(n int) func() {
			a, b, c := benchF32(n, 1), benchF32(n, 2), make([]float32, n)
			return func() { kernel.AddF32(c, a, b) }
		},
	},
	{
		Op: "sum", Short: "Measure the bandwidth of summing a float32 vector (GB/s)",
		Long: `Times kernel.SumF32(a) over --n float32 elements (PyTorch: torch.sum(a)).
GB/s = 4·n / t.`,
		bytesPerElem: 4, DefaultN: 1 << 24,
		setup: func(n int) func() {
			a := benchF32(n, 3)
			var sink float32
			return func() { sink += kernel.SumF32(a) }
		},
	},
	{
		Op: "softmax", Short: "Measure row-wise softmax of a rows×1000 float32 matrix (GB/s)",
		Long: `Times kernel.SoftmaxRowsF32 over a float32 matrix of --n elements laid out as
rows of 1000 (default 4096×1000; PyTorch: torch.softmax(x, dim=1)).
GB/s = 8·n / t (read x, write dst).`,
		bytesPerElem: 8, DefaultN: 4096 * 1000,
		setup: func(n int) func() {
			const cols = 1000
			rows := max(n/cols, 1)
			x, dst := benchF32(rows*cols, 4), make([]float32, rows*cols)
			return func() { kernel.SoftmaxRowsF32(dst, x, rows, cols) }
		},
	},
}

// ElementwiseOptions configure Elementwise.
type ElementwiseOptions struct {
	N       int           // elements (softmax: rounded down to whole rows of 1000)
	Iters   int           // timed samples (the median is reported)
	MinTime time.Duration // minimum duration of one sample
}

// Run times b on the current GOMAXPROCS: after one warm-up call,
// each of Iters samples repeats the call until it lasts at least MinTime;
// the median time per call is reported.
func (b ElementwiseOp) Run(o ElementwiseOptions) (ElementwiseResult, error) {
	n := o.N
	if n <= 0 {
		return ElementwiseResult{}, fmt.Errorf("bench %s: --n must be positive, got %d", b.Op, n)
	}
	if o.Iters < 1 {
		return ElementwiseResult{}, fmt.Errorf("bench %s: --iters must be at least 1, got %d", b.Op, o.Iters)
	}
	if b.Op == "softmax" {
		n = max(n/1000, 1) * 1000
	}
	call := b.setup(n)
	runtime.GC() // collect now, not during the timed calls
	sec, _ := MedianTime(call, o.Iters, o.MinTime)
	return ElementwiseResult{
		Op: b.Op, N: n, Threads: runtime.GOMAXPROCS(0), Ms: sec * 1e3,
		GBps: float64(b.bytesPerElem) * float64(n) / sec / 1e9, Samples: o.Iters,
	}, nil
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
