package main

import (
	"fmt"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/fathom-ml/fathom/bench"
)

func init() {
	var m, n, k, iters, threads int
	var dtype string
	var transA, transB bool
	var minTime time.Duration
	cmd := &cobra.Command{
		Use:   "matmul",
		Short: "Measure dense matrix multiply throughput (GFLOP/s)",
		Long: `Times C = A·B for row-major m×k by k×n matrices of standard-normal values
into a preallocated C. After one warm-up call, each of --iters samples repeats
the multiply until it lasts at least --min-time; the median time per multiply
gives GFLOP/s = 2·m·n·k / t. --n alone means a square n×n product.

--dtype int8 times the quantized product: uint8 A times int8 B into int32
(B packed once, before timing, as quantization does; --trans-a/--trans-b do
not apply). Its gflops then counts int8 operations (a multiply and an add
each), and peak_gflops is the VPDPBUSD throughput on the same cores.`,
		Example: `  fathom bench matmul --n 1024
  fathom bench matmul --n 2048 --dtype f64 --json
  fathom bench matmul --m 64 --k 784 --n 256 --trans-b --threads 2
  fathom bench matmul --n 1024 --dtype int8 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if m == 0 {
				m = n
			}
			if k == 0 {
				k = n
			}
			if threads > 0 {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(threads))
			}
			res, err := bench.Matmul(bench.MatmulOptions{M: m, N: n, K: k, Dtype: dtype, TransA: transA, TransB: transB, Iters: iters, MinTime: minTime})
			if err != nil {
				return err
			}
			if jsonOut {
				return printJSON(res)
			}
			op := func(t bool) string {
				if t {
					return "ᵀ"
				}
				return ""
			}
			fmt.Fprintf(cmd.OutOrStdout(), "matmul %s A%s·B%s m=%d n=%d k=%d threads=%d: %.3f ms  %.1f GFLOP/s (median of %d)\n",
				res.Dtype, op(transA), op(transB), m, n, k, res.Threads, res.Sec*1e3, res.GFlops, res.Samples)
			if res.PeakGFlops > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "  %s kernel; VPDPBUSD peak on %d threads %.1f GOP/s (%.0f%%)\n",
					res.Kernel, res.Threads, res.PeakGFlops, 100*res.GFlops/res.PeakGFlops)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&n, "n", 1024, "columns of B and C (and every size when --m/--k are not given)")
	f.IntVar(&m, "m", 0, "rows of A and C (default --n)")
	f.IntVar(&k, "k", 0, "columns of A, rows of B (default --n)")
	f.StringVar(&dtype, "dtype", "float32", "element type: float32 (f32), float64 (f64), int8, or bf16 (float32 in and out, bfloat16 products)")
	f.BoolVar(&transA, "trans-a", false, "multiply by Aᵀ (A stored k×m)")
	f.BoolVar(&transB, "trans-b", false, "multiply by Bᵀ (B stored n×k)")
	f.IntVar(&iters, "iters", 5, "number of timed samples (the median is reported)")
	f.IntVar(&threads, "threads", 0, "GOMAXPROCS for the run (0 keeps the current value)")
	f.DurationVar(&minTime, "min-time", 300*time.Millisecond, "minimum duration of one sample")
	benchCmd.AddCommand(cmd)
}
