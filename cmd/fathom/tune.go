package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/comm/store"
	"github.com/fathom-ml/fathom/dashboard"
	"github.com/fathom-ml/fathom/internal/atomicfile"
	"github.com/fathom-ml/fathom/internal/distenv"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/mljob"
	"github.com/fathom-ml/fathom/runlog"
	"github.com/fathom-ml/fathom/tensor"
	"github.com/fathom-ml/fathom/train/job"
	"github.com/fathom-ml/fathom/trials"
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
type tuneSummary struct {
	Kind   string `json:"kind"` // train or ml
	Metric string `json:"metric"`
	Mode   string `json:"mode"`
	Trials int    `json:"trials"`
	// Interrupted says the search was stopped (Ctrl-C) before every
	// planned trial ran: the table holds those that finished.
	Interrupted bool           `json:"interrupted,omitempty"`
	Done        int            `json:"done"`
	Stopped     int            `json:"stopped"`
	Failed      int            `json:"failed"`
	Processes   int            `json:"processes"`
	Parallel    int            `json:"parallel"`
	Seconds     float64        `json:"seconds"`
	Best        map[string]any `json:"best"`
	BestModel   string         `json:"best_model,omitempty"`
	CSV         string         `json:"csv"`
	JSONL       string         `json:"jsonl"`
	Plot        string         `json:"plot"`
}

// configKind tells a fathom train config (model:) from a fathom ml fit
// config (pipeline:).
func configKind(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("config: %w", err)
	}
	var top map[string]yaml.Node
	if err := yaml.Unmarshal(b, &top); err != nil {
		return "", fmt.Errorf("%s: %v", path, err)
	}
	_, hasModel := top["model"]
	_, hasPipe := top["pipeline"]
	switch {
	case hasModel && !hasPipe:
		return "train", nil
	case hasPipe && !hasModel:
		return "ml", nil
	}
	return "", fmt.Errorf("%s: neither a fathom train config (model:) nor a fathom ml fit config (pipeline:)", path)
}

// tuneTarget is what runTune needs of a config kind.
type tuneTarget struct {
	metric       string
	largerBetter bool
	epochs       int // train configs: the epochs of a full trial
	objective    trials.Objective
}

// mode is the direction of the metric, as --mode writes it.
func (t *tuneTarget) mode() string {
	if t.largerBetter {
		return "max"
	}
	return "min"
}

// largerBetterByName guesses the direction of a metric by its name.
func largerBetterByName(m string) bool {
	switch strings.ToLower(m) {
	case "loss", "rmse", "mse", "mae", "logloss", "hammingloss":
		return false
	}
	return true
}

func trialDir(out string, id int) string {
	return filepath.Join(out, "trials", fmt.Sprintf("%03d", id))
}

// errASHAStop ends a trainer's Fit when ASHA stops the trial.
var errASHAStop = errors.New("stopped by ASHA")

// trainTarget runs trials of a fathom train config.
func trainTarget(path string, f tuneFlags) (*tuneTarget, error) {
	base, err := job.LoadConfig(path, f.sets)
	if err != nil {
		return nil, err
	}
	task, err := base.Task()
	if err != nil {
		return nil, err
	}
	t := &tuneTarget{metric: f.metric, epochs: base.Epochs}
	if t.metric == "" {
		t.metric = task.Headline()
	}
	if t.metric != "loss" && t.metric != task.Headline() {
		return nil, fmt.Errorf("--metric %s: a %s train config reports loss and %s", t.metric, task, task.Headline())
	}
	t.largerBetter = largerBetterByName(t.metric)
	t.objective = func(ctx context.Context, tr trials.Trial, report trials.Report) (trials.Outcome, error) {
		sets := slices.Concat(f.sets, tr.Overrides(), []string{
			"output.dir=" + trialDir(f.out, tr.ID), "output.plot=false", `output.model=""`})
		cfg, err := job.LoadConfig(path, sets)
		if err != nil {
			return trials.Outcome{}, err
		}
		out := trials.Outcome{Metric: math.NaN()}
		ro := job.RunOptions{Local: true}
		ro.Hooks.EpochEnd = func(r runlog.Epoch) error {
			out.Epochs = r.Epoch
			if r.Eval != nil {
				out.Metric, _ = r.Eval.Get(t.metric)
			}
			if r.Epoch >= cfg.Epochs {
				return nil
			}
			goOn, err := report(r.Epoch, out.Metric)
			if err != nil {
				return err
			}
			if !goOn {
				return errASHAStop
			}
			return nil
		}
		res, err := job.Run(ctx, cfg, ro)
		if errors.Is(err, errASHAStop) {
			out.Stopped = true
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out.Model, out.Weights = res.ModelPath, res.WeightsSHA256
		out.Extra = map[string]float64{"test_" + task.Headline(): metricOf(res.Test.Get(task.Headline())), "test_loss": res.Test.Loss}
		return out, nil
	}
	return t, nil
}

func metricOf(v float64, ok bool) float64 {
	if !ok {
		return math.NaN()
	}
	return v
}

// mlTarget runs trials of a fathom ml fit config: the metric is an
// evaluator's on the held-out rows.
func mlTarget(path string, f tuneFlags) (*tuneTarget, error) {
	base, err := mljob.LoadConfig(path, f.sets)
	if err != nil {
		return nil, err
	}
	evs, err := base.Evaluators()
	if err != nil {
		return nil, err
	}
	t := &tuneTarget{metric: f.metric}
	var names []string
	for _, ev := range evs {
		names = append(names, ev.Metric())
		if t.metric == "" || t.metric == ev.Metric() {
			t.metric, t.largerBetter = ev.Metric(), ev.LargerBetter()
		}
	}
	if !slices.Contains(names, t.metric) {
		return nil, fmt.Errorf("--metric %s: the config's evaluators report %s", t.metric, strings.Join(names, ", "))
	}
	t.objective = func(ctx context.Context, tr trials.Trial, _ trials.Report) (trials.Outcome, error) {
		sets := slices.Concat(f.sets, tr.Overrides(), []string{"output.dir=" + trialDir(f.out, tr.ID)})
		cfg, err := mljob.LoadConfig(path, sets)
		if err != nil {
			return trials.Outcome{}, err
		}
		res, err := mljob.Run(cfg, mljob.Options{Comm: ml.Single})
		if err != nil {
			return trials.Outcome{Metric: math.NaN()}, err
		}
		out := trials.Outcome{Metric: res.Metrics[t.metric], Model: res.ModelPath, Extra: map[string]float64{}}
		for k, v := range res.Metrics {
			if k != t.metric {
				out.Extra[k] = v
			}
		}
		if res.Iterations > 0 {
			out.Extra["iterations"] = float64(res.Iterations)
		}
		return out, nil
	}
	return t, nil
}

// tuneJob is the process group of a distributed search and its store.
type tuneJob struct {
	g  *comm.Group
	st *store.Client
}

// joinTuneJob joins the job's group when the environment names several
// processes (nil for one) and dials its store.
func joinTuneJob(ctx context.Context) (*tuneJob, distenv.Env, error) {
	e, err := distenv.FromOS()
	if err != nil || e.WorldSize <= 1 {
		return nil, e, err
	}
	g, err := comm.NewFromEnv(ctx)
	if err != nil {
		return nil, e, err
	}
	st, err := dialJobStore(ctx, e)
	if err != nil {
		g.Close()
		return nil, e, err
	}
	return &tuneJob{g: g, st: st}, e, nil
}

// dialJobStore dials the job's rendezvous store as e's rank.
func dialJobStore(ctx context.Context, e distenv.Env) (*store.Client, error) {
	return store.Dial(ctx, net.JoinHostPort(e.MasterAddr, strconv.Itoa(e.MasterPort)), []byte(e.JobToken), e.Rank)
}

func (j *tuneJob) close() {
	if j != nil {
		j.st.Close()
		j.g.Close()
	}
}

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

// boardTrial is a trial's row on the dashboard.
func boardTrial(r trials.Result) dashboard.Trial {
	t := dashboard.Trial{ID: r.ID, Status: string(r.Status), Epochs: r.Epochs, Seconds: r.Seconds, Rank: r.Rank, Error: r.Error}
	for _, p := range r.Params {
		t.Params = append(t.Params, dashboard.TrialParam{Key: p.Key, Value: p.Value})
	}
	if m := r.Metric; !math.IsNaN(m) && !math.IsInf(m, 0) {
		t.Metric = &m
	}
	return t
}

// pollTrials shows on rank 0's board the trials other processes finish,
// read from the job's store on a client of its own, until stop is closed.
func pollTrials(env distenv.Env, n int, prefix string, board *dashboard.Board, stop <-chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	st, err := dialJobStore(ctx, env)
	cancel()
	if err != nil {
		return // best effort: the table fills at the end
	}
	defer st.Close()
	q := trials.NewStoreQueue(st, prefix, n)
	seen := make([]bool, n)
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		for id := range n {
			if seen[id] {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			r, ok := q.Result(ctx, id)
			cancel()
			if ok {
				seen[id] = true
				board.SetTrial(boardTrial(r))
			}
		}
	}
}

// runTuneOn runs the search, reporting to board (nil for none) on rank 0.
func runTuneOn(ctx context.Context, path string, f tuneFlags, board *dashboard.Board, stdout, stderr io.Writer) error {
	kind, err := configKind(path)
	if err != nil {
		return err
	}
	if f.out == "" {
		f.out = filepath.Join("runs", "tune-"+strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)))
	}
	space := trials.Space{N: f.n, Seed: f.seed}
	for _, s := range f.grid {
		p, err := trials.ParseGrid(s)
		if err != nil {
			return err
		}
		space.Grid = append(space.Grid, p)
	}
	for _, s := range f.random {
		p, err := trials.ParseRandom(s)
		if err != nil {
			return err
		}
		space.Random = append(space.Random, p)
	}
	if len(space.Random) == 0 && f.n > 0 {
		return errors.New("--trials N is the number of random draws: give --random key=dist(...) too")
	}
	list, err := space.Trials()
	if err != nil {
		return err
	}
	var target *tuneTarget
	if kind == "train" {
		target, err = trainTarget(path, f)
	} else {
		if f.asha {
			return errors.New("--asha: an ml fit config has no epochs to stop trials at; every trial runs its fit to the end")
		}
		target, err = mlTarget(path, f)
	}
	if err != nil {
		return err
	}
	switch f.mode {
	case "":
	case "max", "min":
		target.largerBetter = f.mode == "max"
	default:
		return fmt.Errorf("--mode %q: want max or min", f.mode)
	}
	mode := target.mode()

	j, env, err := joinTuneJob(ctx)
	if err != nil {
		return err
	}
	defer j.close()
	rank, procs := env.Rank, max(env.WorldSize, 1)
	par := f.parallel
	if par <= 0 {
		par = max(runtime.GOMAXPROCS(0)/max(env.LocalWorldSize, 1), 1)
	}
	if par > 1 && kind == "train" {
		// Mixed precision is a process-wide switch (tensor.SetAutocast):
		// trials that set it run one at a time, so that each trains as it
		// would alone.
		if p := autocastTrials(path, f.sets, list); p != "" {
			if stderr != nil && rank == 0 {
				fmt.Fprintf(stderr, "tune: trials train with precision %s (a process-wide setting): one trial at a time in this process\n", p)
			}
			par = 1
		}
	}
	if rank == 0 {
		if err := os.MkdirAll(f.out, 0o755); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}

	o := trials.Options{Trials: list, Objective: target.objective, Parallel: par, Rank: rank}
	var sq *trials.StoreQueue
	prefix := "tune/"
	if j != nil {
		if env.RestartCount > 0 {
			prefix = fmt.Sprintf("tune/g%d/", env.RestartCount)
		}
		sq = trials.NewStoreQueue(j.st, prefix, len(list))
		o.Queue = sq
	}
	if rank != 0 {
		board = nil
	}
	if board != nil {
		cfgText, _ := os.ReadFile(path)
		search := "fathom tune " + path
		for _, g := range f.grid {
			search += " --grid " + g
		}
		for _, r := range f.random {
			search += " --random " + r
		}
		if f.n > 0 {
			search += fmt.Sprintf(" --trials %d --seed %d", f.n, f.seed)
		}
		for _, s := range f.sets {
			search += " --set " + s
		}
		board.SetInfo(dashboard.RunInfo{Title: "tune " + filepath.Base(path), Kind: "tune", Config: "# " + search + "\n" + string(cfgText),
			Headline: target.metric, Mode: mode, Trials: len(list), Epochs: target.epochs, WorldSize: procs, Machine: dashboard.LocalMachine()})
		for _, t := range list { // every trial, queued
			board.SetTrial(boardTrial(trials.Result{ID: t.ID, Params: t.Params, Metric: math.NaN(), Status: "queued", Rank: -1}))
		}
		o.Started = func(t trials.Trial) {
			board.SetTrial(boardTrial(trials.Result{ID: t.ID, Params: t.Params, Metric: math.NaN(), Status: "running", Rank: rank}))
		}
		o.Progress = func(t trials.Trial, epoch int, v float64) {
			board.SetTrial(boardTrial(trials.Result{ID: t.ID, Params: t.Params, Metric: v, Epochs: epoch, Status: "running", Rank: rank}))
		}
		if sq != nil {
			stop := make(chan struct{})
			defer close(stop)
			go pollTrials(env, len(list), prefix, board, stop)
		}
	}
	if f.asha {
		o.ASHA = &trials.ASHA{MinEpochs: f.ashaMin, Eta: f.ashaEta, MaxEpochs: target.epochs, LargerBetter: target.largerBetter}
		if sq != nil {
			o.ASHA.Rungs = sq.Rungs()
		}
	}
	o.Finished = func(r trials.Result) {
		if board != nil {
			board.SetTrial(boardTrial(r))
		}
		if !f.quiet {
			fmt.Fprintln(stderr, trialLine(r, target.metric, len(list), procs))
		}
	}
	if rank == 0 && !f.quiet {
		fmt.Fprintf(stderr, "tune: %d trials of %s (%s config), %d at a time in each of %d process(es); %s %s\n",
			len(list), path, kind, par, procs, mode, target.metric)
	}
	start := time.Now()
	results, err := trials.Run(ctx, o)
	if err != nil {
		if ctx.Err() != nil && sq == nil && len(results) > 0 {
			// Interrupted: the trials that finished are written.
			if werr := writeTuneResults(results, nil, f, target, kind, procs, par, start, len(list), stdout); werr != nil {
				return errors.Join(err, werr)
			}
			fmt.Fprintf(stderr, "tune: interrupted; the %d finished trials are in %s\n", len(results), f.out)
		}
		return err
	}
	if sq != nil {
		if board != nil {
			defer func() { // every trial, as collected
				cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				defer cancel()
				if all, err := sq.Collect(cctx); err == nil {
					for _, r := range all {
						board.SetTrial(boardTrial(r))
					}
				}
			}()
		}
		return finishDistributed(ctx, sq, rank, results, f, target, kind, procs, par, start, stdout, stderr)
	}
	return writeTuneResults(results, nil, f, target, kind, procs, par, start, len(list), stdout)
}

// finishDistributed gathers the results at rank 0 and brings it the best
// trial's model from the process that trained it.
func finishDistributed(ctx context.Context, sq *trials.StoreQueue, rank int, mine []trials.Result, f tuneFlags, target *tuneTarget,
	kind string, procs, par int, start time.Time, stdout, stderr io.Writer) error {
	if rank != 0 {
		id, err := sq.WaitBest(ctx)
		if err != nil {
			return err
		}
		for _, r := range mine {
			if r.ID == id {
				b, err := os.ReadFile(r.Model)
				problem := ""
				if err != nil {
					problem = fmt.Sprintf("rank %d: %v", rank, err)
				}
				return sq.SendModel(ctx, b, problem)
			}
		}
		return nil
	}
	all, err := sq.Collect(ctx)
	if err != nil {
		return err
	}
	best := trials.Best(all, target.largerBetter)
	id := -1
	if best >= 0 {
		id = all[best].ID
	}
	if err := sq.AnnounceBest(ctx, id); err != nil {
		return err
	}
	var model []byte
	if best >= 0 && all[best].Rank != 0 {
		if model, err = sq.ReceiveModel(ctx); err != nil {
			return err
		}
	}
	return writeTuneResults(all, model, f, target, kind, procs, par, start, len(all), stdout)
}

// trialLine is the progress line of a finished trial.
func trialLine(r trials.Result, metric string, n, procs int) string {
	var ps []string
	for _, p := range r.Params {
		ps = append(ps, p.Key+"="+p.Value)
	}
	s := fmt.Sprintf("trial %d/%d %s", r.ID, n, r.Status)
	switch r.Status {
	case trials.Failed:
		s += ": " + r.Error
	default:
		s += fmt.Sprintf(": %s %.4g", metric, r.Metric)
		if r.Epochs > 0 {
			s += fmt.Sprintf(" after %d epoch(s)", r.Epochs)
		}
	}
	s += fmt.Sprintf(" (%s) %.2f s", strings.Join(ps, " "), r.Seconds)
	if procs > 1 {
		s += fmt.Sprintf(" [rank %d]", r.Rank)
	}
	return s
}

// writeTuneResults writes the table, the plot, the best model (model: its
// bytes when another process trained it) and the summary.
func writeTuneResults(rs []trials.Result, model []byte, f tuneFlags, target *tuneTarget, kind string, procs, par int,
	start time.Time, planned int, stdout io.Writer) error {
	trials.SortByID(rs)
	sum := tuneSummary{Kind: kind, Metric: target.metric, Mode: target.mode(),
		Trials: len(rs), Interrupted: len(rs) < planned, Processes: procs, Parallel: par, Seconds: time.Since(start).Seconds(),
		CSV: filepath.Join(f.out, runlog.TrialsTableFile), JSONL: filepath.Join(f.out, runlog.TrialsLogFile), Plot: filepath.Join(f.out, runlog.TrialsPlotFile)}
	for _, r := range rs {
		switch r.Status {
		case trials.Done:
			sum.Done++
		case trials.Stopped:
			sum.Stopped++
		case trials.Failed:
			sum.Failed++
		}
	}
	if err := trials.WriteCSV(sum.CSV, rs, target.metric); err != nil {
		return err
	}
	if err := trials.WriteJSONL(sum.JSONL, rs, target.metric); err != nil {
		return err
	}
	if err := trials.WritePlot(sum.Plot, rs, target.metric); err != nil {
		return err
	}
	if b := trials.Best(rs, target.largerBetter); b >= 0 {
		best := rs[b]
		params := map[string]any{}
		for _, p := range best.Params {
			params[p.Key] = p.Value
		}
		sum.Best = map[string]any{"trial": best.ID, "params": params, "metric": best.Metric, "epochs": best.Epochs}
		sum.BestModel = filepath.Join(f.out, "best.safetensors")
		if model == nil {
			var err error
			if model, err = os.ReadFile(best.Model); err != nil {
				return fmt.Errorf("best model: %w", err)
			}
		}
		if err := atomicfile.WriteBytes(sum.BestModel, model); err != nil {
			return err
		}
	}
	b, err := json.Marshal(sum)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteBytes(filepath.Join(f.out, "summary.json"), append(b, '\n')); err != nil {
		return err
	}
	if jsonOut {
		fmt.Fprintf(stdout, "%s\n", b)
		return nil
	}
	if sum.Best == nil {
		fmt.Fprintf(stdout, "%d trials, none completed (%d failed); table %s\n", sum.Trials, sum.Failed, sum.CSV)
		return nil
	}
	fmt.Fprintf(stdout, "%d trials (%d done, %d stopped, %d failed) in %.2f s; best trial %d: %s %.6g; model %s, table %s\n",
		sum.Trials, sum.Done, sum.Stopped, sum.Failed, sum.Seconds, sum.Best["trial"], sum.Metric, sum.Best["metric"], sum.BestModel, sum.CSV)
	return nil
}

// autocastTrials returns the first precision other than float32 that a
// trial's config (the base config, sets, then the trial's overrides)
// trains with, or "". Configs that do not load are passed over.
func autocastTrials(path string, sets []string, list []trials.Trial) string {
	for _, tr := range list {
		c, err := job.LoadConfig(path, append(slices.Clone(sets), tr.Overrides()...))
		if err != nil {
			continue // the trial fails, saying why, when it runs
		}
		if p, err := tensor.ParsePrecision(c.Precision); err == nil && p != tensor.PrecisionFloat32 {
			return p.String()
		}
	}
	return ""
}
