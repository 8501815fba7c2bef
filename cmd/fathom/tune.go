package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/fathom-ml/fathom/dashboard"
	"github.com/fathom-ml/fathom/trials"
	"github.com/fathom-ml/fathom/trials/tunejob"
)

// tuneFlags are the flags of `fathom tune`.
type tuneFlags struct {
	grid, random, sets []string
	n                  int
	seed               uint64
	parallel           int
	metric, mode       string
	asha               bool
	ashaMin, ashaEta   int
	out                string
	quiet              bool
	dash               dashboardFlags
}

func init() {
	var f tuneFlags
	cmd := &cobra.Command{
		Use:   "tune CONFIG.yaml (--grid KEY=V1,V2,... | --random KEY=DIST(...) --trials N)... --out DIR",
		Short: "Search hyperparameters: many trials of a train or ml fit config at once",
		Long: `Tune runs trials of a config — a fathom train config (it has model:) or a
fathom ml fit config (it has pipeline:) — each with some keys overridden as
--set would, and keeps the best.

  --grid KEY=V1,V2,...     every combination of the grid axes (values are YAML:
                           --grid 'model.0.out=16,32' --grid 'optimizer.lr=0.1,0.01')
  --random KEY=DIST(...)   --trials N draws, seeded by --seed: uniform(lo,hi),
                           loguniform(lo,hi), randint(lo,hi), choice(v1,v2,...)
                           (with a grid too, each grid point gets the N draws)

Trials run --parallel at a time in this process (default: the cores, divided
among the processes of the host). Under fathom run -n N (one host or several)
every process takes trials from one queue in the job's store, so none waits
while others have work. A trial's result depends only on its config: it is the
result of fathom train (or fathom ml fit) of that config alone.

The metric (--metric, --mode max|min) is, for train configs, the evaluation
split's after each epoch (val with data.validation, else test: accuracy, loss
or rmse; default the task's headline), and for ml fit configs an evaluator's
metric (default the first). --asha stops weak train trials early: rungs at
--asha-min·eta^k epochs, a trial continues past a rung when its metric is in
the best 1/eta of those recorded there so far (ASHA). ml fit configs have no
epochs: --asha is refused for them.

Into --out (rank 0): trials/NNN/ (each trial's own output.dir), trials.csv and
trials.jsonl (trial, params, metric, epochs, status, seconds, rank),
trials.png, best.safetensors (the best trial's model) and summary.json, the
last stdout line with --json.`,
		Example: `  fathom tune examples/iris.yaml --grid optimizer.lr=0.1,0.01,0.001 --grid model.0.out=8,32 --out runs/tune-iris
  fathom tune examples/iris.yaml --random optimizer.lr='loguniform(1e-4,0.1)' --trials 16 --asha --out runs/tune-iris
  fathom run -n 2 -- fathom tune examples/iris.yaml --random seed='randint(1,1000)' --trials 16 --out runs/tune-iris
  fathom tune examples/ml/iris-logreg.yaml --grid pipeline.3.params.regParam=0,0.01,0.1 --out runs/tune-lr`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if args = f.dash.takeAddress(args, 1); len(args) != 1 {
				return fmt.Errorf("accepts 1 arg, received %d", len(args))
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runTune(ctx, args[0], f, os.Stdout, os.Stderr)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.grid, "grid", nil, "a grid axis: key.path=v1,v2,... (repeatable)")
	fl.StringArrayVar(&f.random, "random", nil, "a random axis: key.path=uniform(lo,hi)|loguniform(lo,hi)|randint(lo,hi)|choice(a,b,...) (repeatable)")
	fl.IntVar(&f.n, "trials", 0, "number of random draws")
	fl.Uint64Var(&f.seed, "seed", 1, "seed of the random draws")
	fl.IntVar(&f.parallel, "parallel", 0, "trials at once in this process (default: the cores / the processes on this host)")
	fl.StringVar(&f.metric, "metric", "", "the metric to optimize (default: accuracy or rmse for train configs, the first evaluator's for ml configs)")
	fl.StringVar(&f.mode, "mode", "", "max or min (default: from the metric)")
	fl.BoolVar(&f.asha, "asha", false, "stop weak trials early with asynchronous successive halving (train configs)")
	fl.IntVar(&f.ashaMin, "asha-min", 1, "ASHA's first rung, in epochs")
	fl.IntVar(&f.ashaEta, "asha-eta", 3, "ASHA's reduction factor: rungs at min·eta^k epochs, the best 1/eta go on")
	fl.StringVarP(&f.out, "out", "o", "", "output directory (default runs/tune-<config name>)")
	fl.StringArrayVar(&f.sets, "set", nil, "override a key of the base config: key.path=value (repeatable)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no per-trial lines on stderr")
	f.dash.register(cmd)
	rootCmd.AddCommand(cmd)
}

// tuneSummary is summary.json and the last `--json` line.
type tuneSummary = trials.Summary

// runTune is `fathom tune`, with the dashboard the flags ask for.
func runTune(ctx context.Context, path string, f tuneFlags, stdout, stderr io.Writer) error {
	srv, err := f.dash.start(stderr)
	if err != nil {
		return err
	}
	if srv == nil {
		return runTuneOn(ctx, path, f, nil, stdout, stderr)
	}
	err = runTuneOn(ctx, path, f, srv.Board(), stdout, stderr)
	srv.Board().Finish(err)
	f.dash.finish(ctx, srv, stderr)
	return err
}

// runTuneOn runs the search, reporting to board (nil for none) on rank 0.
func runTuneOn(ctx context.Context, path string, f tuneFlags, board *dashboard.Board, stdout, stderr io.Writer) error {
	return tunejob.Search(ctx, path, tunejob.Options{Metric: f.metric, SearchOptions: trials.SearchOptions{
		Sets: f.sets, Grid: f.grid, Random: f.random, N: f.n, Seed: f.seed,
		Parallel: f.parallel, Mode: f.mode, ASHA: f.asha, ASHAMin: f.ashaMin, ASHAEta: f.ashaEta,
		Out: f.out, Quiet: f.quiet, JSON: jsonOut, Board: board, Stdout: stdout, Stderr: stderr,
	}})
}
