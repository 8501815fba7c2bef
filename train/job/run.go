package job

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/fathom-ml/fathom/dashboard"
	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ddp"
	"github.com/fathom-ml/fathom/internal/distenv"
	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/prune"
	"github.com/fathom-ml/fathom/runlog"
	"github.com/fathom-ml/fathom/runlog/plot"
	"github.com/fathom-ml/fathom/tensor"
	"github.com/fathom-ml/fathom/train"
)

// RunOptions adjust Run.
type RunOptions struct {
	// Hooks are called in addition to Run's own (metrics file updates).
	Hooks train.Hooks
	// Log receives a few human-readable lines (data sizes, model summary,
	// file locations); nil discards them.
	Log io.Writer
	// Dashboard, if set, is told the job's config, machine and model, its
	// steps and epochs as they finish, and its end (rank 0 only).
	Dashboard *dashboard.Board
	// DashboardWorkers makes every worker of a distributed job report its
	// progress to rank 0's Dashboard (its workers table) through the job's
	// rendezvous store; set it on every rank.
	DashboardWorkers bool
	// Local runs the job in this process alone even when the environment
	// names a distributed job (WORLD_SIZE > 1): `fathom tune` under
	// `fathom run -n N` runs whole trials on every rank.
	Local bool
}

// Result is the outcome of Run.
type Result struct {
	Task   metrics.Task
	Epochs []runlog.Epoch
	// Test holds the final model's metrics on the test split.
	Test metrics.Metrics
	// SecondsPerEpoch is the median wall time of the training passes.
	SecondsPerEpoch float64
	// SamplesPerSecond is the training throughput at that median.
	SamplesPerSecond float64
	// Stopped says early stopping ended training.
	Stopped bool
	// Files written.
	ModelPath, MetricsPath, PlotPath, CheckpointPath string
	Model                                            *modelfile.Model
	// WeightsSHA256 fingerprints the trained weights (WeightsSHA256).
	WeightsSHA256 string
	// Main is false on the workers of a distributed job other than rank 0,
	// which write no files and should print nothing.
	Main bool
	// AllreduceSeconds is, in a data-parallel job, the time rank 0's
	// gradient all-reduces ran over its last traced steps, and
	// AllreduceHidden the fraction of it that ran before the backward
	// pass ended (hidden behind computation); TimelinePath the figure of
	// those steps (distributed.timeline).
	AllreduceSeconds, AllreduceHidden float64
	TimelinePath                      string
	// OptimizerStateBytes returns the memory of this process's optimizer
	// state (its part with distributed.shard_optimizer); nil when the job
	// had no mini-batch optimizer.
	OptimizerStateBytes func() int64
}

// Run executes a training job: load and split the data, build the model,
// train it with evaluation after every epoch, score it on the test split
// and write the model file, metrics.csv and curves.png into the output
// directory.
//
// Rank 0 also keeps a dashboard board of the run (ro.Dashboard, or its
// own) and writes it to dashboard.json in the output directory with the
// metrics, at most every few seconds while training and once at the end:
// what `fathom dashboard RUN_DIR` replays, every step's loss included.
func Run(ctx context.Context, c *Config, ro RunOptions) (*Result, error) {
	if ro.Dashboard == nil && c.writesMetrics() {
		ro.Dashboard = dashboard.NewBoard(0)
	}
	var state stateWriter
	res, err := run(ctx, c, ro, &state)
	if ro.Dashboard != nil {
		ro.Dashboard.Finish(err)
		if werr := state.write(true); werr != nil && err == nil {
			err = werr
		}
	}
	return res, err
}

// writesMetrics says whether the job writes its metrics files.
func (c *Config) writesMetrics() bool { return c.Output.Metrics == nil || *c.Output.Metrics }

// stateWriter writes a run's dashboard board to its file, at most every
// stateEvery unless forced.
type stateWriter struct {
	board *dashboard.Board
	path  string
	last  time.Time
}

// stateEvery is the shortest time between two writes of a run's
// dashboard.json during training.
const stateEvery = 5 * time.Second

func (w *stateWriter) write(force bool) error {
	if w.board == nil || w.path == "" || (!force && time.Since(w.last) < stateEvery) {
		return nil
	}
	w.last = time.Now()
	return dashboard.WriteState(w.path, w.board.Snapshot())
}

// loaderFunc returns the function that makes a split's loader: the
// training split's shuffled (unless data.shuffle is false) with the
// config's batch size, the others in order in batches of at least 1000.
func (c *Config) loaderFunc(shape []int) func(*data.Table, bool) (*data.Loader, error) {
	return func(t *data.Table, train bool) (*data.Loader, error) {
		ds, err := data.NewDataset(t, data.DatasetOptions{Shape: shape})
		if err != nil {
			return nil, fmt.Errorf("data: %w", err)
		}
		o := data.LoaderOptions{BatchSize: c.BatchSize}
		if train {
			o.Shuffle = c.Data.Shuffle == nil || *c.Data.Shuffle
			o.Seed = c.Seed
		} else {
			o.BatchSize = max(c.BatchSize, 1000)
		}
		return data.NewLoader(ds, o)
	}
}

// newResult makes the output directory and returns the job's result with
// the paths of the files it writes (PlotPath empty without a plot,
// CheckpointPath without checkpoints); with metrics and a board it points
// state at the board's file.
func (c *Config) newResult(task metrics.Task, m *modelfile.Model, board *dashboard.Board, state *stateWriter) (*Result, error) {
	dir := c.Output.Dir
	if dir == "" {
		dir = "runs/fathom"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	res := &Result{Task: task, Model: m, ModelPath: c.Output.Model}
	if res.ModelPath == "" {
		res.ModelPath = filepath.Join(dir, runlog.ModelFile)
	}
	if c.writesMetrics() {
		res.MetricsPath = filepath.Join(dir, runlog.MetricsFile)
		if board != nil {
			*state = stateWriter{board: board, path: filepath.Join(dir, runlog.DashboardFile), last: time.Now()}
		}
	}
	if c.Output.Plot == nil || *c.Output.Plot {
		res.PlotPath = filepath.Join(dir, runlog.CurvesFile)
	}
	if c.Output.CheckpointEvery > 0 || c.Output.Resume {
		res.CheckpointPath = filepath.Join(dir, runlog.CheckpointFile)
	}
	return res, nil
}

// metricsHooks returns hooks with an EpochEnd that rewrites metrics.csv
// and the dashboard file with the epochs so far (the trainer's history,
// which includes the epochs of a resumed run, once *tr is set) before
// calling hooks' own.
func (c *Config) metricsHooks(hooks train.Hooks, res *Result, task metrics.Task, state *stateWriter, tr **train.Trainer) train.Hooks {
	var done []runlog.Epoch
	metricsCSV := &runlog.MetricsCSV{Path: res.MetricsPath, Task: task, Split: c.EvalSplit()}
	next := hooks.EpochEnd
	hooks.EpochEnd = func(r runlog.Epoch) error {
		done = append(done, r)
		if *tr != nil {
			done = (*tr).History()
		}
		if res.MetricsPath != "" {
			if err := metricsCSV.Write(done); err != nil {
				return err
			}
			if err := state.write(false); err != nil {
				return err
			}
		}
		if next != nil {
			return next(r)
		}
		return nil
	}
	return hooks
}

func run(ctx context.Context, c *Config, ro RunOptions, state *stateWriter) (*Result, error) {
	logf := func(format string, a ...any) {
		if ro.Log != nil {
			fmt.Fprintf(ro.Log, format+"\n", a...)
		}
	}
	task, err := c.task()
	if err != nil {
		return nil, err
	}
	var dist *distributed // nil for one process
	if !ro.Local {
		if dist, err = joinDistributed(ctx, c); err != nil {
			return nil, err
		}
	}
	defer dist.close()
	var stepReport func(train.BatchEvent) // each worker's progress for the dashboard
	if dist != nil && ro.DashboardWorkers {
		workers := startWorkerReports(dist.g.Rank(), dist.g.Size(), ro.Dashboard)
		defer workers.stop()
		stepReport = workers.step
	}
	if !dist.main() {
		ro.Log, ro.Dashboard = nil, nil
	}
	if ro.Dashboard != nil {
		ro.Hooks = dashboardHooks(ro.Dashboard, ro.Hooks)
	}
	splits, err := c.LoadData()
	if err != nil {
		return nil, err
	}
	shape := c.Data.Shape
	if shape == nil {
		shape = []int{splits.Train.Cols}
	}
	spec := nn.Spec{Input: slices.Clone(shape), Layers: c.Model}
	net, out, err := c.buildModel(shape, tensor.NewRNG(c.Seed))
	if err != nil {
		return nil, err
	}
	if c.InitFrom != "" {
		msg, err := c.initFrom(net)
		if err != nil {
			return nil, &ConfigError{File: c.file, Msg: err.Error()}
		}
		logf("%s", msg)
	}
	if err := c.freeze(net); err != nil {
		return nil, &ConfigError{File: c.file, Msg: err.Error()}
	}
	if dist.isServer() {
		return dist.serve(ctx, c, net)
	}
	m := &modelfile.Model{Net: net, Spec: spec, Task: task, Classes: splits.Train.Classes, Columns: splits.Train.Columns,
		Label: splits.Train.LabelName, Scaler: splits.Scaler, Impute: splits.ImputeMeans, TrainedOn: splits.TrainedOn}
	if err := m.CheckOutput(out); err != nil {
		line := 0
		if n := len(c.modelLines); n > 0 {
			line = c.modelLines[n-1]
		}
		return nil, &ConfigError{File: c.file, Line: line, Msg: "model: " + err.Error()}
	}
	mkLoader := c.loaderFunc(shape)
	trainL, err := mkLoader(splits.Train, true)
	if err != nil {
		return nil, err
	}
	evalL, err := mkLoader(splits.Eval, false)
	if err != nil {
		return nil, err
	}
	res, err := c.newResult(task, m, ro.Dashboard, state)
	if err != nil {
		return nil, err
	}
	writePlot := res.PlotPath != ""
	if splits.EvalIsTest {
		logf("data: %s, %d training rows, %d test rows (evaluated every epoch), %d features", c.Data.Source,
			splits.Train.Rows, splits.Test.Rows, splits.Train.Cols)
	} else {
		logf("data: %s, %d training rows, %d validation rows, %d test rows, %d features", c.Data.Source,
			splits.Train.Rows, splits.Eval.Rows, splits.Test.Rows, splits.Train.Cols)
	}
	logf("model: %d parameters, input %v, output %v", net.NumParameters(), shape, out)
	if ro.Dashboard != nil {
		ro.Dashboard.SetInfo(c.dashboardInfo(task, net, splits))
	}
	var tr *train.Trainer
	hooks := c.metricsHooks(ro.Hooks, res, task, state, &tr)
	var hist []runlog.Epoch
	if !dist.isPipeline() { // a pipeline stage checks its part
		if err := c.checkMemory("the model (one rank)", net.Parameters(), 0); err != nil {
			return nil, &ConfigError{File: c.file, Msg: err.Error()}
		}
	}
	if hist, err = c.fitTrainer(ctx, dist, net, task, trainL, evalL, res.CheckpointPath, hooks, stepReport, res, &tr, logf); err != nil || !dist.main() && dist.isPipeline() {
		res.Main = dist.main()
		return res, err
	}
	return c.finish(dist, res, splits, net, task, hist, trainL, mkLoader, writePlot, logf)
}

// fitTrainer trains through train.Trainer: with the config's mini-batch
// optimizer, or with full-batch L-BFGS (the whole training set as one
// batch, the train.FullBatch step).
func (c *Config) fitTrainer(ctx context.Context, dist *distributed, net *nn.Sequential, task metrics.Task, trainL, evalL *data.Loader, ckpt string,
	hooks train.Hooks, stepReport func(train.BatchEvent), res *Result, trp **train.Trainer, logf func(string, ...any)) ([]runlog.Epoch, error) {
	opts := train.Options{Model: net, Task: task, Loss: c.lossFunc(), Train: trainL, Eval: evalL, EvalSplit: c.evalSplitName(), Epochs: c.Epochs,
		EarlyStopping:  train.EarlyStopping{Monitor: c.EarlyStopping.Monitor, Patience: c.EarlyStopping.Patience, MinDelta: c.EarlyStopping.MinDelta},
		CheckpointPath: ckpt, CheckpointEvery: c.Output.CheckpointEvery, Hooks: hooks, StepReport: stepReport}
	var lbfgs *optim.LBFGS
	var pipeline *pipelineRun
	if dist.isPipeline() {
		var err error
		_, resuming := c.resuming(ckpt)
		if pipeline, err = c.pipelineOptions(dist, net, &opts, resuming, logf); err != nil {
			return nil, err
		}
	} else if kind, _ := c.optimizerKind(); kind == "lbfgs" {
		var err error
		if lbfgs, opts.Train, opts.Penalty, err = c.newLBFGS(net, trainL.Dataset()); err != nil {
			return nil, err
		}
		opts.FullBatch = lbfgs
	} else if err := c.miniBatchOptions(ctx, dist, net, &opts, res); err != nil {
		return nil, err
	}
	if pipeline == nil {
		opts.Strategy = dist.strategy() // set up with the parameter servers' optimizer
	}
	tr, err := train.New(opts)
	if err != nil {
		return nil, err
	}
	*trp = tr
	if err := c.resume(dist, tr, ckpt, logf); err != nil {
		return nil, err
	}
	hist, err := tr.Fit(ctx)
	if err == nil {
		err = dist.psDone()
	}
	if err == nil && pipeline != nil {
		err = pipeline.end(net, logf)
	}
	res.Epochs, res.Stopped = hist, tr.Stopped()
	if lbfgs != nil && err == nil {
		logf("lbfgs: %d iterations, %d loss evaluations", lbfgs.Iterations(), lbfgs.Evaluations())
	}
	return hist, err
}

// resuming says whether the job resumes from the checkpoint at ckpt (if
// there is one): with output.resume, or in a worker group restarted by
// `fathom run --max-restarts` after a failure (FATHOM_RESTART_COUNT > 0),
// which resumes from the checkpoint of the attempt before.
func (c *Config) resuming(ckpt string) (restart int, resume bool) {
	if e, err := distenv.FromOS(); err == nil {
		restart = e.RestartCount
	}
	return restart, c.Output.Resume || (restart > 0 && ckpt != "")
}

// resume loads the checkpoint at ckpt into tr when the job resumes and
// there is one.
func (c *Config) resume(dist *distributed, tr *train.Trainer, ckpt string, logf func(string, ...any)) error {
	restart, resume := c.resuming(ckpt)
	if !resume {
		return nil
	}
	// Every worker must resume from the same checkpoint (or none):
	// workers that each see their own output.dir would diverge.
	file := tr.ResumeFile(ckpt)
	if err := dist.sameFile(file); err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	if _, err := os.Stat(file); err != nil {
		if restart > 0 {
			logf("restart %d: no checkpoint at %s yet; starting over", restart, file)
		}
		return nil
	}
	if err := tr.LoadCheckpoint(ckpt); err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	e, s, _ := tr.Position()
	if restart > 0 {
		logf("restart %d: resuming from %s at epoch %d, step %d", restart, file, e+1, s)
	} else {
		logf("resuming from %s at epoch %d, step %d", file, e+1, s)
	}
	return nil
}

// miniBatchOptions sets the mini-batch optimizer of opts (sharded with
// distributed.shard_optimizer, pruning, pushed to the parameter servers),
// its schedule, gradient clipping, the precision and the micro-shards of
// deterministic training.
func (c *Config) miniBatchOptions(ctx context.Context, dist *distributed, net *nn.Sequential, opts *train.Options, res *Result) error {
	opt, err := c.newOptimizer(trainable(net.Parameters()))
	if err != nil {
		return err
	}
	if dist.sharded() {
		// ZeRO-1: the same optimizer over this worker's parts of the
		// gradient buckets, bound when the data-parallel strategy starts.
		opt = ddp.NewShardedOptimizer(c.newOptimizer)
	}
	if c.Prune != nil {
		if dist.sharded() {
			return &ConfigError{File: c.file, Msg: "prune does not combine with distributed.shard_optimizer"}
		}
		if dist.isPSWorker() {
			return &ConfigError{File: c.file, Msg: "prune does not combine with distributed.strategy ps (the servers run the optimizer)"}
		}
		plan, err := c.Prune.schedule(c.Epochs, opts.Train.Len())
		if err != nil {
			return &ConfigError{File: c.file, Msg: err.Error()}
		}
		if opt, err = prune.NewOptimizer(opt, net, plan); err != nil {
			return err
		}
	}
	if dist.isPSWorker() {
		// The optimizer runs on the servers; this one pushes and pulls.
		if opt, err = dist.psOptimizer(ctx, net, opt); err != nil {
			return err
		}
	}
	res.OptimizerStateBytes = func() int64 { return ddp.StateBytes(opt) }
	if opts.Schedule, err = c.newSchedule(opt); err != nil {
		return err
	}
	if opts.Precision, opts.LossScale, err = c.precision(); err != nil {
		return err
	}
	opts.Optimizer = opt
	opts.ClipGradNorm, opts.ClipGradValue = c.Optimizer.ClipGradNorm, c.Optimizer.ClipGradValue
	opts.MicroShards = c.Distributed.microShards()
	return nil
}

// finish scores the trained model on the test split and writes the model
// file and the curves.
func (c *Config) finish(dist *distributed, res *Result, splits *Splits, net *nn.Sequential, task metrics.Task, hist []runlog.Epoch, trainL *data.Loader,
	mkLoader func(*data.Table, bool) (*data.Loader, error), writePlot bool, logf func(string, ...any)) (*Result, error) {
	m := res.Model
	if len(hist) > 0 {
		secs := make([]float64, len(hist))
		for i, r := range hist {
			secs[i] = r.Seconds
		}
		slices.Sort(secs)
		res.SecondsPerEpoch = secs[len(secs)/2]
		if len(secs)%2 == 0 {
			res.SecondsPerEpoch = (secs[len(secs)/2-1] + secs[len(secs)/2]) / 2
		}
		if res.SecondsPerEpoch > 0 {
			res.SamplesPerSecond = float64(trainL.Samples()) / res.SecondsPerEpoch
		}
	}
	if splits.EvalIsTest && len(hist) > 0 && hist[len(hist)-1].Eval != nil {
		res.Test = *hist[len(hist)-1].Eval // the model has not changed since
	} else {
		testL, err := mkLoader(splits.Test, false)
		if err != nil {
			return res, err
		}
		if res.Test, err = dist.evaluate(net, testL, task, c.lossFunc()); err != nil {
			return res, err
		}
	}
	m.Info = map[string]any{"data": c.Data.Source, "epochs": len(hist), "seed": c.Seed,
		"test_" + task.Headline(): metricValue(res.Test, task.Headline()), "test_loss": res.Test.Loss}
	res.WeightsSHA256, res.Main = WeightsSHA256(net), dist.main()
	if !res.Main {
		return res, nil
	}
	if err := dist.reportOverlap(res, c.Distributed.Timeline); err != nil {
		return res, err
	}
	if p := c.Prune; p != nil {
		m.Info["sparsity"] = prune.Sparsity(net)
		if p.Method == "structured" && (p.Shrink == nil || *p.Shrink) {
			small, spec, err := prune.Shrink(net, m.Spec)
			if err != nil {
				return res, err
			}
			m.Net, m.Spec = small, spec
		}
	}
	if err := m.Save(res.ModelPath); err != nil {
		return res, err
	}
	if writePlot {
		if err := plot.CurvesSplit(res.PlotPath, task, hist, "", c.EvalSplit()); err != nil {
			return res, err
		}
	}
	logf("model written to %s", res.ModelPath)
	return res, nil
}

// metricValue returns a metric by name for a model file's info: nil
// (JSON null) when unknown or not finite.
func metricValue(m metrics.Metrics, name string) *float64 {
	v, _ := m.Get(name)
	return metrics.Finite(v)
}
