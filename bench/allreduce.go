package bench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/launch"
)

// AllReduceOptions are the settings of `fathom bench allreduce`.
type AllReduceOptions struct {
	Sizes     []int         // buffer sizes in bytes, measured in turn
	Algo      string        // ring, rd, naive or auto
	Dtype     string        // f32, f64 or i64 (float32, float64, int64)
	Transport string        // tcp, shm, auto, or "" for the environment's
	Iters     int           // timed iterations (0: fill Budget, between 10 and 50)
	Warmup    int           // untimed warm-up iterations (at least 1 is run)
	Budget    time.Duration // target timed duration per size when Iters is 0
	Timeout   time.Duration // per-collective timeout (0: the environment's)
	Heartbeat time.Duration // heartbeat timeout (0: the environment's)
}

// AllReduceResult is one `fathom bench allreduce` measurement (rank 0
// prints it as a JSON line with --json). Bandwidths follow nccl-tests:
// algbw = size/time, busbw = algbw·2(N-1)/N.
type AllReduceResult struct {
	Size      int     `json:"size"`
	World     int     `json:"world"`
	Algo      string  `json:"algo"`
	Dtype     string  `json:"dtype"`
	Transport string  `json:"transport"`
	Iters     int     `json:"iters"`
	LatencyUs float64 `json:"latency_us"`
	LatMinUs  float64 `json:"lat_min_us"`
	AlgbwGBps float64 `json:"algbw_GBps"`
	BusbwGBps float64 `json:"busbw_GBps"`
	Correct   bool    `json:"correct"`
}

// ParseSizes parses a comma-separated list of sizes: "4KB,64MB,256MiB".
func ParseSizes(list string) ([]int, error) {
	var sizes []int
	for _, s := range strings.Split(list, ",") {
		n, err := ParseSize(s)
		if err != nil {
			return nil, err
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}

// ParseSize parses "4KB", "64MB", "256MiB", "1g", "4096" (KB/MB/GB and
// KiB/MiB/GiB are all binary, as in the reference tables).
func ParseSize(s string) (int, error) {
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

// FormatSize writes n bytes as ParseSize reads them: 4KB, 64MB, 1GB, 100B.
func FormatSize(n int) string {
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

// AllReduce joins the job the environment describes (RANK, WORLD_SIZE,
// MASTER_ADDR, MASTER_PORT, FATHOM_JOB_TOKEN) and measures all-reduce
// (sum) at each size: o.Warmup untimed calls (the first checks the
// result), then timed calls each preceded by a barrier; per iteration the
// slowest rank's time counts, and the median is the latency. Rank 0 calls
// report with each measurement; a wrong sum is an error after it.
func AllReduce(ctx context.Context, o AllReduceOptions, report func(AllReduceResult) error) error {
	if ctx == nil {
		ctx = context.Background()
	}
	algo, err := comm.ParseAlgorithm(o.Algo)
	if err != nil {
		return err
	}
	co, err := comm.FromEnv()
	if err != nil {
		return err
	}
	switch o.Transport {
	case "":
	case "auto":
		co.Transport = comm.TransportAuto
	case "tcp":
		co.Transport = comm.TransportTCP
	case "shm":
		co.Transport = comm.TransportSHM
	default:
		return fmt.Errorf("bench allreduce: unknown --transport %q (tcp, shm or auto)", o.Transport)
	}
	if o.Timeout > 0 {
		co.Timeout = o.Timeout
	}
	if o.Heartbeat > 0 {
		co.HeartbeatTimeout = o.Heartbeat
	}
	g, err := comm.New(ctx, co)
	if err != nil {
		return err
	}
	defer g.Close()
	for _, size := range o.Sizes {
		var res AllReduceResult
		switch o.Dtype {
		case "f32", "float32":
			res, err = allReduceSize[float32](g, size, algo, o)
		case "f64", "float64":
			res, err = allReduceSize[float64](g, size, algo, o)
		case "i64", "int64":
			res, err = allReduceSize[int64](g, size, algo, o)
		default:
			return fmt.Errorf("bench allreduce: unknown --dtype %q (f32, f64 or i64)", o.Dtype)
		}
		if err != nil {
			return err
		}
		if g.Rank() != 0 {
			continue
		}
		if err := report(res); err != nil {
			return err
		}
		if !res.Correct {
			return fmt.Errorf("bench allreduce: wrong result at size %d", size)
		}
	}
	return g.Close()
}

// allReduceSize measures one size of AllReduce.
func allReduceSize[T comm.Number](g *comm.Group, size int, algo comm.Algorithm, o AllReduceOptions) (AllReduceResult, error) {
	var zero T
	esize := int(sizeof(zero))
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
	res := AllReduceResult{Size: n * esize, World: world, Algo: g.ChooseAlgorithm(n*esize, algo).String(),
		Dtype: o.Dtype, Transport: g.Transport((g.Rank() + 1) % world), Correct: true}
	var warm []float64
	for w := 0; w < max(o.Warmup, 1); w++ {
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
	iters := o.Iters
	if iters <= 0 {
		est := []float64{slices.Min(warm[min(1, len(warm)-1):])}
		if err := comm.AllReduce(g, est, comm.Max); err != nil {
			return res, err
		}
		iters = int(min(50, max(10, o.Budget.Seconds()/max(est[0], 1e-6))))
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
	med := median(times)
	res.Iters = iters
	res.LatencyUs = med * 1e6
	res.LatMinUs = slices.Min(times) * 1e6
	res.AlgbwGBps = float64(res.Size) / med / 1e9
	res.BusbwGBps = res.AlgbwGBps * 2 * float64(world-1) / float64(world)
	return res, nil
}

func sizeof[T comm.Number](v T) uintptr {
	switch any(v).(type) {
	case float32:
		return 4
	}
	return 8
}

// SpawnLocal runs exe with args, minus --local, as the n ranks of a local
// job through package launch (what `fathom run -n N` does): MASTER_ADDR
// 127.0.0.1, a free MASTER_PORT, and the job token launch inherits from
// FATHOM_JOB_TOKEN or generates. Output lines are not prefixed with the
// rank, so rank 0's results read as they do under `fathom run`; what
// arrives on sigs is forwarded to the workers.
func SpawnLocal(ctx context.Context, n int, exe string, args []string, sigs chan os.Signal) error {
	if ctx == nil {
		ctx = context.Background()
	}
	cfg := launch.DefaultConfig()
	cfg.Command = append([]string{exe}, workerArgs(args)...)
	cfg.NProcPerNode = n
	cfg.NoPrefix = true
	cfg.Signals = sigs
	if _, err := launch.Run(ctx, cfg); err != nil {
		return fmt.Errorf("bench allreduce --local %d: %w", n, err)
	}
	return nil
}

// workerArgs returns the command line of a --local worker: args without
// --local and its value.
func workerArgs(args []string) []string {
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
