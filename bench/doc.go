// Package bench holds the harnesses behind `fathom bench`: one function
// per kind of benchmark, each taking typed options and returning a typed
// result that `--json` prints as it is (Matmul, Elementwise). The command
// line parses flags and prints; the measuring is here.
//
//	res, err := bench.Matmul(bench.MatmulOptions{M: 1024, N: 1024, K: 1024, Dtype: "f32", Iters: 5, MinTime: 300 * time.Millisecond})
//	fmt.Printf("%.1f GFLOP/s\n", res.GFlops)
package bench
