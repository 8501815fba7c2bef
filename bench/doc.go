// Package bench holds the harnesses behind `fathom bench`: one function
// per kind of benchmark, each taking typed options and returning a typed
// result that `--json` prints as it is. The command line parses flags and
// prints; the measuring is here.
//
//   - Matmul and Elementwise (ElementwiseOps): kernel throughput.
//   - Infer: rows per second of a saved classifier on Fashion-MNIST.
//   - Train: epochs of the Fashion-MNIST MLP or CNN recipe (TrainRecipes)
//     through train/job.
//   - ML: a classic-ML fit on Fashion-MNIST with the scikit-learn peer's
//     settings (MLRecipes), ReadCenters for k-means starting centers.
//   - ALS: alternating least squares on a gen_ratings.py ratings file,
//     alone or across the ranks of a job.
//   - AllReduce: all-reduce latency and bus bandwidth across the ranks of
//     the job in the environment; SpawnLocal starts those ranks on this host.
//
// Without Fashion-MNIST (FashionMNISTMissing), Train and ML return a
// result marked Skipped with the reason, and no error.
//
//	res, err := bench.Matmul(bench.MatmulOptions{M: 1024, N: 1024, K: 1024, Dtype: "f32", Iters: 5, MinTime: 300 * time.Millisecond})
//	fmt.Printf("%.1f GFLOP/s\n", res.GFlops)
package bench
