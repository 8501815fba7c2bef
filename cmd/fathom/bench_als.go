package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/fathom-ml/fathom/bench"
	"github.com/fathom-ml/fathom/comm/join"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/mljob"
	"github.com/fathom-ml/fathom/ml/recommend"
)

func init() {
	var (
		path        string
		rank, iters int
		lambda      float64
		threads     int
		seed        int64
		implicit    bool
		nonnegative bool
		alpha       float64
		trainErr    bool
	)
	cmd := &cobra.Command{
		Use:   "als",
		Short: "Time ALS on a ratings file of gen_ratings.py (explicit, rank 10, λ 0.1, 10 iterations)",
		Long: `Reads a compact binary ratings file written by
../shared/anchors/python/gen_ratings.py (memory-mapped), fits ALS on its
training rows (the first n_train) as job6_als.py does — rank 10, λ 0.1 scaled by
each user's and item's number of ratings (ALS-WR), 10 iterations — and scores
the test rows (the rest). Prints seconds_per_iteration (median), total_seconds
(the fit: indexing and iterations), wall_seconds (reading, fitting and
scoring), test_rmse (over the test rows whose user and item have training
ratings; cold_test_rows counts the others) and peak_rss_bytes.

Under fathom run -n N each rank fits on its contiguous share of the training
rows; the factors are exchanged by all-gathers, and rank 0 prints, with
factor_bytes (all factors, (users + items)·rank·8) and its
sent/received_bytes_per_iteration.`,
		Example: `  /usr/bin/python3 ../shared/anchors/python/gen_ratings.py   # /tmp/anchors_ratings_100k_10k_10M.bin
  fathom bench als --data /tmp/anchors_ratings_100k_10k_10M.bin --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if threads > 0 {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(threads))
			}
			e := recommend.NewALS()
			e.Rank, e.MaxIter, e.RegParam, e.Seed = rank, iters, lambda, seed
			e.ImplicitPrefs, e.Nonnegative, e.Alpha = implicit, nonnegative, alpha
			job, err := join.FromEnv(cmd.Context(), join.Options{Group: true})
			if err != nil {
				return fmt.Errorf("bench als: %w", err)
			}
			defer job.Close()
			return runBenchALS(path, e, mljob.Comm(job), trainErr)
		},
	}
	f := cmd.Flags()
	f.StringVar(&path, "data", "/tmp/anchors_ratings_100k_10k_10M.bin", "ratings file (gen_ratings.py's binary form)")
	f.IntVar(&rank, "rank", 10, "rank of the factors")
	f.Float64Var(&lambda, "lambda", 0.1, "regParam λ (scaled by the number of ratings)")
	f.IntVar(&iters, "iters", 10, "iterations")
	f.Int64Var(&seed, "seed", 0, "seed of the initial factors")
	f.BoolVar(&implicit, "implicit", false, "implicit feedback (confidence 1 + alpha·r)")
	f.Float64Var(&alpha, "alpha", 1, "alpha of implicit feedback")
	f.BoolVar(&nonnegative, "nonnegative", false, "nonnegative factors (NNLS)")
	f.BoolVar(&trainErr, "train-rmse", false, "score the training rows too (train_rmse)")
	f.IntVar(&threads, "threads", 0, "GOMAXPROCS for the run (0: all cores)")
	benchCmd.AddCommand(cmd)
}

// runBenchALS runs bench.ALS and prints rank 0's result.
func runBenchALS(path string, e *recommend.ALS, c ml.Comm, trainErr bool) error {
	res, err := bench.ALS(path, e, c, trainErr)
	if err != nil {
		return err
	}
	if c.Rank() != 0 {
		return nil
	}
	if jsonOut {
		return printJSON(res)
	}
	fmt.Printf("als: %d ratings (%d train), %d users, %d items; rank %d, λ %g, %d iterations on %d threads\n",
		res.Ratings, res.Train, res.Users, res.Items, res.Rank, res.Lambda, res.Iters, res.Threads)
	fmt.Printf("  load %.2f s, prep %.2f s, %.3f s/iteration (median), fit %.2f s, wall %.2f s\n",
		res.LoadSeconds, res.PrepSeconds, res.SecondsPerIteration, res.TotalSeconds, res.WallSeconds)
	trainMsg := ""
	if trainErr {
		trainMsg = fmt.Sprintf("train RMSE %.4f, ", res.TrainRMSE)
	}
	fmt.Printf("  %stest RMSE %.4f (%d cold test rows left out), peak RSS %.2f GiB\n",
		trainMsg, res.TestRMSE, res.ColdTestRows, float64(res.PeakRSSBytes)/(1<<30))
	if res.Ranks > 1 {
		fmt.Printf("  %d ranks: rank 0 sent %d and received %d factor bytes per iteration (all factors: %d bytes); %d bytes of ratings received\n",
			res.Ranks, res.SentBytesPerIteration, res.ReceivedBytesPerIteration, res.FactorBytes, res.ShuffleBytes)
	}
	return nil
}
