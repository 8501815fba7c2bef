package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/launch"
)

// allreduceResult is one `fathom bench allreduce` measurement (rank 0 prints
// it as a JSON line with --json). Bandwidths follow nccl-tests: algbw =
// size/time, busbw = algbw·2(N-1)/N.
type allreduceResult struct {
	Size       int     `json:"size"`
	World      int     `json:"world"`
	Algo       string  `json:"algo"`
	Dtype      string  `json:"dtype"`
	Transport  string  `json:"transport"`
	Iters      int     `json:"iters"`
	LatencyUs  float64 `json:"latency_us"`
	LatMinUs   float64 `json:"lat_min_us"`
	AlgbwGBps  float64 `json:"algbw_GBps"`
	BusbwGBps  float64 `json:"busbw_GBps"`
	Correct    bool    `json:"correct"`
	TimeoutSec float64 `json:"-"`
}

type allreduceFlags struct {
	sizes     string
	algo      string
	dtype     string
	transport string
	iters     int
	warmup    int
	budget    time.Duration
	local     int
	timeout   time.Duration
	heartbeat time.Duration
}

func init() {
	var f allreduceFlags
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
			if f.local > 0 {
				return arSpawnLocal(cmd.Context(), f.local)
			}
			return arRun(cmd.Context(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.sizes, "size", "64MB", "buffer size in bytes (4KB, 64MB, 256MiB; comma-separated list allowed)")
	fl.StringVar(&f.algo, "algo", "auto", "all-reduce algorithm: ring, rd, naive or auto")
	fl.StringVar(&f.dtype, "dtype", "f32", "element type: f32, f64 or i64")
	fl.StringVar(&f.transport, "transport", "", "force the transport: tcp, shm or auto (default: environment, FATHOM_SHM)")
	fl.IntVar(&f.iters, "iters", 0, "timed iterations (0: fill --budget, between 10 and 50)")
	fl.IntVar(&f.warmup, "warmup", 3, "untimed warm-up iterations")
	fl.DurationVar(&f.budget, "budget", 4*time.Second, "target timed duration per size when --iters is 0")
	fl.IntVar(&f.local, "local", 0, "spawn N local worker processes of this binary (no launcher needed)")
	fl.DurationVar(&f.timeout, "timeout", 0, "per-collective timeout (default FATHOM_TIMEOUT or 5m)")
	fl.DurationVar(&f.heartbeat, "heartbeat-timeout", 0, "abort, naming it, when a rank is not heard from for this long (default FATHOM_HEARTBEAT_TIMEOUT or 15s)")
	benchCmd.AddCommand(cmd)
}

// arParseSize parses "4KB", "64MB", "256MiB", "1g", "4096".
func arParseSize(s string) (int, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	mult := 1
	for _, u := range []struct {
		suffix string
		m      int
	}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30},
		{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.m
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 || v*float64(mult) > 1<<40 {
		return 0, fmt.Errorf("bench allreduce: bad size %q (want e.g. 4KB, 64MB, 256MiB)", s)
	}
	return int(v * float64(mult)), nil
}

func arRun(ctx context.Context, f allreduceFlags) error {
	if ctx == nil {
		ctx = context.Background()
	}
	var sizes []int
	for _, s := range strings.Split(f.sizes, ",") {
		n, err := arParseSize(s)
		if err != nil {
			return err
		}
		sizes = append(sizes, n)
	}
	algo, err := comm.ParseAlgorithm(f.algo)
	if err != nil {
		return err
	}
	o, err := comm.FromEnv()
	if err != nil {
		return err
	}
	switch f.transport {
	case "":
	case "auto":
		o.Transport = comm.TransportAuto
	case "tcp":
		o.Transport = comm.TransportTCP
	case "shm":
		o.Transport = comm.TransportSHM
	default:
		return fmt.Errorf("bench allreduce: unknown --transport %q (tcp, shm or auto)", f.transport)
	}
	if f.timeout > 0 {
		o.Timeout = f.timeout
	}
	if f.heartbeat > 0 {
		o.HeartbeatTimeout = f.heartbeat
	}
	g, err := comm.New(ctx, o)
	if err != nil {
		return err
	}
	defer g.Close()
	for _, size := range sizes {
		var res allreduceResult
		switch f.dtype {
		case "f32", "float32":
			res, err = arBench[float32](g, size, algo, f)
		case "f64", "float64":
			res, err = arBench[float64](g, size, algo, f)
		case "i64", "int64":
			res, err = arBench[int64](g, size, algo, f)
		default:
			return fmt.Errorf("bench allreduce: unknown --dtype %q (f32, f64 or i64)", f.dtype)
		}
		if err != nil {
			return err
		}
		if g.Rank() != 0 {
			continue
		}
		if jsonOut {
			if err := printJSON(res); err != nil {
				return err
			}
		} else {
			fmt.Printf("allreduce n=%d %9s %-5s %-4s %s iters=%3d  lat med %10.3f ms (min %9.3f)  algbw %7.3f GB/s  busbw %7.3f GB/s %s\n",
				res.World, arFormatSize(res.Size), res.Algo, res.Transport, res.Dtype, res.Iters, res.LatencyUs/1e3, res.LatMinUs/1e3,
				res.AlgbwGBps, res.BusbwGBps, map[bool]string{true: "ok", false: "WRONG"}[res.Correct])
		}
		if !res.Correct {
			return fmt.Errorf("bench allreduce: wrong result at size %d", size)
		}
	}
	return g.Close()
}

func arFormatSize(n int) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

func arBench[T comm.Number](g *comm.Group, size int, algo comm.Algorithm, f allreduceFlags) (allreduceResult, error) {
	var zero T
	esize := int(arSizeof(zero))
	n := size / esize
	x := make([]T, n)
	fill := func() {
		v := T(g.Rank() + 1)
		for i := range x {
			x[i] = v
		}
	}
	world := g.Size()
	want := T(world * (world + 1) / 2)
	res := allreduceResult{Size: n * esize, World: world, Algo: g.ChooseAlgorithm(n*esize, algo).String(),
		Dtype: f.dtype, Transport: g.Transport((g.Rank() + 1) % world), Correct: true}
	var warm []float64
	for w := 0; w < max(f.warmup, 1); w++ {
		fill()
		if err := comm.Barrier(g); err != nil {
			return res, err
		}
		t0 := time.Now()
		if err := comm.AllReduceWith(g, x, comm.Sum, algo); err != nil {
			return res, err
		}
		warm = append(warm, time.Since(t0).Seconds())
		if w == 0 && n > 0 && (x[0] != want || x[n-1] != want) {
			res.Correct = false
		}
	}
	iters := f.iters
	if iters <= 0 {
		est := []float64{slices.Min(warm[min(1, len(warm)-1):])}
		if err := comm.AllReduce(g, est, comm.Max); err != nil {
			return res, err
		}
		iters = int(min(50, max(10, f.budget.Seconds()/max(est[0], 1e-6))))
	}
	times := make([]float64, iters)
	for i := range times {
		if err := comm.Barrier(g); err != nil {
			return res, err
		}
		t0 := time.Now()
		if err := comm.AllReduceWith(g, x, comm.Sum, algo); err != nil {
			return res, err
		}
		times[i] = time.Since(t0).Seconds()
	}
	// the slowest rank defines each iteration
	if err := comm.AllReduce(g, times, comm.Max); err != nil {
		return res, err
	}
	ok := []int64{0}
	if !res.Correct {
		ok[0] = 1
	}
	if err := comm.AllReduce(g, ok, comm.Max); err != nil {
		return res, err
	}
	res.Correct = ok[0] == 0
	slices.Sort(times)
	med := times[len(times)/2]
	if len(times)%2 == 0 {
		med = (times[len(times)/2-1] + times[len(times)/2]) / 2
	}
	res.Iters = iters
	res.LatencyUs = med * 1e6
	res.LatMinUs = times[0] * 1e6
	res.AlgbwGBps = float64(res.Size) / med / 1e9
	res.BusbwGBps = res.AlgbwGBps * 2 * float64(world-1) / float64(world)
	return res, nil
}

func arSizeof[T comm.Number](v T) uintptr {
	switch any(v).(type) {
	case float32:
		return 4
	}
	return 8
}

// arSpawnLocal runs this binary, minus --local, as the n ranks of a local
// job through package launch (what `fathom run -n N` does): MASTER_ADDR
// 127.0.0.1, a free MASTER_PORT, and the job token launch inherits from
// FATHOM_JOB_TOKEN or generates. Output lines are not prefixed with the
// rank, so rank 0's results read as they do under `fathom run`; SIGINT and
// SIGTERM are forwarded to the workers.
func arSpawnLocal(ctx context.Context, n int) error {
	if ctx == nil {
		ctx = context.Background()
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	cfg := launch.DefaultConfig()
	cfg.Command = append([]string{exe}, arWorkerArgs(os.Args[1:])...)
	cfg.NProcPerNode = n
	cfg.NoPrefix = true
	cfg.Signals = sigs
	if _, err := launch.Run(ctx, cfg); err != nil {
		return fmt.Errorf("bench allreduce --local %d: %w", n, err)
	}
	return nil
}

// arWorkerArgs returns the command line of a --local worker: args without
// --local and its value.
func arWorkerArgs(args []string) []string {
	var out []string
	skip := false
	for _, a := range args {
		switch {
		case skip:
			skip = false
		case a == "--local" || a == "-local":
			skip = true
		case strings.HasPrefix(a, "--local=") || strings.HasPrefix(a, "-local="):
		default:
			out = append(out, a)
		}
	}
	return out
}
