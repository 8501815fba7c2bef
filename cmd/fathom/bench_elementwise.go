package main

import (
	"fmt"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/fathom-ml/fathom/bench"
)

func init() {
	for _, b := range bench.ElementwiseOps {
		var n, iters, threads int
		var minTime time.Duration
		cmd := &cobra.Command{
			Use:   b.Op,
			Short: b.Short,
			Long: b.Long + `

After one warm-up call, each of --iters samples repeats the call until it
lasts at least --min-time; the median time per call is reported.`,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				if threads > 0 {
					defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(threads))
				}
				res, err := b.Run(bench.ElementwiseOptions{N: n, Iters: iters, MinTime: minTime})
				if err != nil {
					return err
				}
				if jsonOut {
					return printJSON(res)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s n=%d threads=%d: %.3f ms  %.2f GB/s (median of %d)\n",
					b.Op, res.N, res.Threads, res.Ms, res.GBps, res.Samples)
				return nil
			},
		}
		f := cmd.Flags()
		f.IntVar(&n, "n", b.DefaultN, "number of float32 elements")
		f.IntVar(&iters, "iters", 7, "number of timed samples (the median is reported)")
		f.IntVar(&threads, "threads", 0, "GOMAXPROCS for the run (0 keeps the current value)")
		f.DurationVar(&minTime, "min-time", 300*time.Millisecond, "minimum duration of one sample")
		benchCmd.AddCommand(cmd)
	}
}
