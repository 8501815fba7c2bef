package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/fathom-ml/fathom/bench"
)

func init() {
	var f bench.AllReduceOptions
	var sizes string
	var local int
	cmd := &cobra.Command{
		Use:   "allreduce",
		Short: "Measure all-reduce latency and bus bandwidth across the workers of a job",
		Long: `Runs all-reduce (sum) on a buffer of --size bytes across the ranks of the job
described by the environment (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT,
FATHOM_JOB_TOKEN), as set by ` + "`fathom run`" + `, torchrun or a Kubernetes operator.
--local N instead spawns N worker processes of this binary on this host.

Method (as the Gloo reference script): --warmup untimed calls (the first checks
the result), then --iters timed calls (0: as many as fit in --budget, 10..50),
each preceded by a barrier. Per iteration the slowest rank's time counts; the
median over iterations is the latency. algbw = size/latency, busbw = algbw ×
2(N-1)/N (nccl-tests). --size accepts a comma-separated list: 4KB, 64MB, 256MiB
(KB/MB/GB and KiB/MiB/GiB are all binary, as in the reference tables).`,
		Example: `  fathom run -n 4 -- fathom bench allreduce --size 64MB
  fathom bench allreduce --local 2 --size 4KB,1MB,16MB,64MB,256MB --algo ring --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if local > 0 {
				return spawnLocal(cmd.Context(), local)
			}
			var err error
			if f.Sizes, err = bench.ParseSizes(sizes); err != nil {
				return err
			}
			return runBenchAllReduce(cmd.Context(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&sizes, "size", "64MB", "buffer size in bytes (4KB, 64MB, 256MiB; comma-separated list allowed)")
	fl.StringVar(&f.Algo, "algo", "auto", "all-reduce algorithm: ring, rd, naive or auto")
	fl.StringVar(&f.Dtype, "dtype", "f32", "element type: f32, f64 or i64")
	fl.StringVar(&f.Transport, "transport", "", "force the transport: tcp, shm or auto (default: environment, FATHOM_SHM)")
	fl.IntVar(&f.Iters, "iters", 0, "timed iterations (0: fill --budget, between 10 and 50)")
	fl.IntVar(&f.Warmup, "warmup", 3, "untimed warm-up iterations")
	fl.DurationVar(&f.Budget, "budget", 4*time.Second, "target timed duration per size when --iters is 0")
	fl.IntVar(&local, "local", 0, "spawn N local worker processes of this binary (no launcher needed)")
	fl.DurationVar(&f.Timeout, "timeout", 0, "per-collective timeout (default FATHOM_TIMEOUT or 5m)")
	fl.DurationVar(&f.Heartbeat, "heartbeat-timeout", 0, "abort, naming it, when a rank is not heard from for this long (default FATHOM_HEARTBEAT_TIMEOUT or 15s)")
	benchCmd.AddCommand(cmd)
}

// runBenchAllReduce runs bench.AllReduce and prints rank 0's line per
// size (a JSON line with --json).
func runBenchAllReduce(ctx context.Context, o bench.AllReduceOptions) error {
	return bench.AllReduce(ctx, o, func(res bench.AllReduceResult) error {
		if jsonOut {
			return printJSON(res)
		}
		fmt.Printf("allreduce n=%d %9s %-5s %-4s %s iters=%3d  lat med %10.3f ms (min %9.3f)  algbw %7.3f GB/s  busbw %7.3f GB/s %s\n",
			res.World, bench.FormatSize(res.Size), res.Algo, res.Transport, res.Dtype, res.Iters, res.LatencyUs/1e3, res.LatMinUs/1e3,
			res.AlgbwGBps, res.BusbwGBps, map[bool]string{true: "ok", false: "WRONG"}[res.Correct])
		return nil
	})
}

// spawnLocal runs this binary's command line as the n ranks of a local job
// (bench.SpawnLocal), forwarding SIGINT and SIGTERM to the workers.
func spawnLocal(ctx context.Context, n int) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	return bench.SpawnLocal(ctx, n, exe, os.Args[1:], sigs)
}
