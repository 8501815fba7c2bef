package mljob

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fathom-ml/fathom/metrics"

	"gopkg.in/yaml.v3"

	"github.com/fathom-ml/fathom/comm/join"
	"github.com/fathom-ml/fathom/dashboard"
	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/internal/atomicfile"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/tune"
	"github.com/fathom-ml/fathom/runlog"
)

// Result is what a fit reports: the final `--json` line of `fathom ml
// fit` and, with more detail, metrics.json.
type Result struct {
	// Metrics maps each evaluator's metric name to its value on the
	// held-out rows (MetricsSplit "test"), or on the training rows when
	// the config holds none out (MetricsSplit "train").
	Metrics      map[string]float64 `json:"metrics"`
	MetricsSplit string             `json:"metrics_split"`
	// FitSeconds is the wall time of the fit (with tuning, of the whole
	// search and the refit), reading and evaluation excluded.
	FitSeconds float64 `json:"fit_seconds"`
	// ModelPath is the saved model (the best one when tuning); "" when
	// Options.NoSave.
	ModelPath string `json:"model_path"`
	TrainRows int    `json:"train_rows"`
	TestRows  int    `json:"test_rows"`
	Ranks     int    `json:"ranks"`
	// Iterations is the last stage's iteration count, when its model
	// reports one (ml.Iterative).
	Iterations int `json:"iterations,omitempty"`
	// Tuning reports the search, when the config has one.
	Tuning *TuningResult `json:"tuning,omitempty"`

	// Model is the fitted model (the best one when tuning).
	Model ml.Model `json:"-"`
}

// MarshalJSON writes NaN and infinite values (a metric an evaluator could
// not compute on some split) as null, which JSON can hold.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result
	out := struct {
		Metrics map[string]*float64 `json:"metrics"`
		plain
		Tuning *tuningJSON `json:"tuning,omitempty"`
	}{plain: plain(r), Metrics: map[string]*float64{}}
	for k, v := range r.Metrics {
		out.Metrics[k] = metrics.Finite(v)
	}
	if r.Tuning != nil {
		t := &tuningJSON{TuningResult: *r.Tuning}
		for _, v := range r.Tuning.AvgMetrics {
			t.AvgMetrics = append(t.AvgMetrics, metrics.Finite(v))
		}
		out.Tuning = t
	}
	return json.Marshal(out)
}

type tuningJSON struct {
	TuningResult
	AvgMetrics []*float64 `json:"avg_metrics"`
}

// TuningResult is the outcome of a grid search.
type TuningResult struct {
	Method     string           `json:"method"`
	Metric     string           `json:"metric"`
	Grid       []map[string]any `json:"grid"`
	AvgMetrics []float64        `json:"avg_metrics"`
	BestIndex  int              `json:"best_index"`
	Best       map[string]any   `json:"best"`
}

// Options adjust Run.
type Options struct {
	// Comm joins the ranks of a distributed job; nil is one process (see
	// Comm).
	Comm ml.Comm
	// NoSave skips writing the output files.
	NoSave bool
	// Log, if set, receives progress lines.
	Log io.Writer
	// Dashboard, if set, is told the job (config, data sizes, machine),
	// every solver iteration of the fit with its objective as a step, the
	// metrics as one epoch at the end, and the end (rank 0's board; the
	// other ranks may pass nil).
	Dashboard *dashboard.Board
}

// Comm returns the ml.Comm of a job joined with package comm/join
// (join.Options{Group: true}, as `fathom ml fit` under `fathom run -n N`
// does): the job's group, or ml.Single for a single process.
func Comm(j *join.Job) ml.Comm {
	if j == nil || j.Group == nil {
		return ml.Single
	}
	return ml.Group(j.Group)
}

// NewPipeline builds the config's pipeline: each stage of its registered
// type with its params.
func (c *Config) NewPipeline() (*ml.Pipeline, error) {
	p := &ml.Pipeline{}
	for i := range c.Pipeline {
		st, err := c.stage(i, 0)
		if err != nil {
			return nil, c.located(err)
		}
		p.Stages = append(p.Stages, st)
	}
	return p, nil
}

// Evaluators builds the config's evaluators; the first drives tuning.
func (c *Config) Evaluators() ([]ml.Evaluator, error) {
	ev, err := c.evaluators(0)
	if err != nil {
		return nil, c.located(err)
	}
	return ev, nil
}

func (c *Config) located(err error) error {
	if ce, ok := err.(*ConfigError); ok && ce.File == "" {
		ce.File = c.file
	}
	return err
}

// gridValue is a grid value as written in the config.
type gridValue struct{ node *yaml.Node }

// String is the value as YAML on one line.
func (v gridValue) String() string {
	b, err := yaml.Marshal(v.node)
	if err != nil {
		return v.node.Value
	}
	s := strings.TrimSpace(string(b))
	return strings.ReplaceAll(s, "\n", " ")
}

// MarshalJSON writes the value as the YAML decodes it.
func (v gridValue) MarshalJSON() ([]byte, error) {
	var x any
	if err := v.node.Decode(&x); err != nil {
		return nil, err
	}
	return json.Marshal(x)
}

// plainValues returns a grid point's values as the YAML decodes them.
func plainValues(p tune.ParamMap) map[string]any {
	out := p.Values()
	for k, v := range out {
		if g, ok := v.(gridValue); ok {
			var x any
			if g.node.Decode(&x) == nil {
				out[k] = x
			}
		}
	}
	return out
}

// Grid returns the tuning grid as tune's ParamMaps over the pipeline: a
// point sets each axis's value by decoding {param: value} over the
// stage's params, strictly.
func (c *Config) Grid() []tune.ParamMap {
	b := tune.NewParamGridBuilder()
	for _, a := range c.axes {
		vals := make([]gridValue, len(a.values))
		for i, n := range a.values {
			vals[i] = gridValue{n}
		}
		b.AddGrid(tune.Axis(a.key, func(e ml.Estimator, v gridValue) error {
			p, ok := e.(*ml.Pipeline)
			if !ok || a.stage >= len(p.Stages) {
				return fmt.Errorf("tuning.grid: %s: not the config's pipeline", a.key)
			}
			if err := setParam(p.Stages[a.stage], a.param, v.node, a.path()); err != nil {
				err.File = c.file
				return err
			}
			return nil
		}, vals...))
	}
	return b.Build()
}

// spread reports whether the tuning spreads its fits over ranks that
// each hold all the rows.
func (c *Config) spread() bool {
	d := ""
	switch c.tuning {
	case "crossValidator":
		d = c.Tuning.CrossValidator.Distribution
	case "trainValidationSplit":
		d = c.Tuning.TrainValidationSplit.Distribution
	}
	m, _ := distribution(d)
	return c.tuning != "" && m == tune.Spread
}

// OutputDir is where the model and metrics are written.
func (c *Config) OutputDir() string { return c.Output.Dir }

// Run reads the data (this rank's share under `fathom run -n N`), fits
// the pipeline (or searches the grid and refits the best point),
// evaluates on the held-out rows and, on rank 0, writes
// <output.dir>/model.safetensors and metrics.json.
//
// Rank 0 also writes the run's dashboard board to dashboard.json there
// (what `fathom dashboard` replays), with or without a live page.
func Run(c *Config, o Options) (*Result, error) {
	cm := o.Comm
	if cm == nil {
		cm = ml.Single
	}
	if o.Dashboard == nil && cm.Rank() == 0 && !o.NoSave {
		o.Dashboard = dashboard.NewBoard(0)
	}
	res, err := run(c, o)
	if o.Dashboard != nil && cm.Rank() == 0 {
		o.Dashboard.Finish(err)
		if !o.NoSave && err == nil {
			if werr := dashboard.WriteState(filepath.Join(c.Output.Dir, runlog.DashboardFile), o.Dashboard.Snapshot()); werr != nil && err == nil {
				err = werr
			}
		}
	}
	return res, err
}

func run(c *Config, o Options) (*Result, error) {
	cm := o.Comm
	if cm == nil {
		cm = ml.Single
	}
	logf := func(format string, args ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, format+"\n", args...)
		}
	}
	whole := c.spread()
	train, test, err := c.readData(cm, whole)
	if err != nil {
		return nil, err
	}
	// In the spread distribution every rank holds every row: evaluation
	// is then local.
	evalComm := cm
	if whole {
		evalComm = ml.Single
	}
	nTrain, err := ml.SumCount(evalComm, train.Len())
	if err != nil {
		return nil, err
	}
	nTest := 0
	if test != nil {
		if nTest, err = ml.SumCount(evalComm, test.Len()); err != nil {
			return nil, err
		}
	}
	pipe, err := c.NewPipeline()
	if err != nil {
		return nil, err
	}
	evs, err := c.Evaluators()
	if err != nil {
		return nil, err
	}
	res := &Result{Ranks: cm.Size(), TrainRows: nTrain, TestRows: nTest, Metrics: map[string]float64{}}
	logf("ml fit: %d training rows, %d test rows, %d rank(s)", nTrain, nTest, cm.Size())
	board := o.Dashboard
	if cm.Rank() != 0 {
		board = nil
	}
	progress := c.dashboardStart(board, pipe, evs, nTrain, cm.Size())

	start := time.Now()
	var model ml.Model
	if c.tuning == "" {
		if model, err = pipe.Fit(ml.Data{Frame: train, Comm: cm, Progress: progress}); err != nil {
			return nil, err
		}
	} else if model, res.Tuning, err = c.fitTuned(pipe, evs[0], ml.Data{Frame: train, Comm: cm}, logf); err != nil {
		return nil, err
	}
	res.FitSeconds = time.Since(start).Seconds()
	res.Model = model
	res.Iterations = Iterations(model)

	scored, split := test, "test"
	if test == nil {
		scored, split = train, "train"
	}
	res.MetricsSplit = split
	pred, err := model.Transform(scored)
	if err != nil {
		return nil, fmt.Errorf("transform of the %s rows: %w", split, err)
	}
	for _, ev := range evs {
		v, err := ev.Evaluate(pred, evalComm)
		if err != nil {
			return nil, fmt.Errorf("evaluate (%s) on the %s rows: %w", ev.Metric(), split, err)
		}
		res.Metrics[ev.Metric()] = v
	}
	if board != nil {
		st := board.Snapshot()
		st.Info.EvalSplit = split
		board.SetInfo(st.Info)
		steps := 0
		if n := len(st.Steps); n > 0 {
			steps = st.Steps[n-1].Step
		}
		board.AddEpoch(dashboard.Epoch{Epoch: 1, Steps: steps, Eval: res.Metrics, Seconds: res.FitSeconds})
	}
	if !o.NoSave {
		res.ModelPath = filepath.Join(c.Output.Dir, runlog.ModelFile)
		if cm.Rank() == 0 {
			if err := writeOutputs(c.Output.Dir, res); err != nil {
				return nil, err
			}
		}
	}
	return res, nil
}

// fitTuned searches the config's grid with its tuning method on d and
// returns the best point's model, refit, and the search's results.
func (c *Config) fitTuned(pipe *ml.Pipeline, ev ml.Evaluator, d ml.Data, logf func(string, ...any)) (ml.Model, *TuningResult, error) {
	grid := c.Grid()
	var est ml.Estimator
	switch c.tuning {
	case "crossValidator":
		s := c.Tuning.CrossValidator
		cv := tune.NewCrossValidator(pipe, grid, ev)
		cv.NumFolds, cv.Parallelism, cv.Seed = s.NumFolds, s.Parallelism, s.Seed
		cv.Distribution, _ = distribution(s.Distribution)
		est = cv
	default:
		s := c.Tuning.TrainValidationSplit
		tv := tune.NewTrainValidationSplit(pipe, grid, ev)
		tv.TrainRatio, tv.Parallelism, tv.Seed = s.TrainRatio, s.Parallelism, s.Seed
		tv.Distribution, _ = distribution(s.Distribution)
		est = tv
	}
	logf("ml fit: %s over %d grid points", c.tuning, len(grid))
	m, err := est.Fit(d)
	if err != nil {
		return nil, nil, err
	}
	vm := m.(*tune.ValidatorModel)
	tr := &TuningResult{Method: c.tuning, Metric: vm.Metric, AvgMetrics: vm.AvgMetrics, BestIndex: vm.BestIndex,
		Best: plainValues(vm.BestParams)}
	for _, p := range grid {
		tr.Grid = append(tr.Grid, plainValues(p))
	}
	logf("ml fit: best %s (%s %g)", vm.BestParams, vm.Metric, vm.AvgMetrics[vm.BestIndex])
	return vm.BestModel, tr, nil
}

// Iterations returns the iteration count of m (or of the last stage of a
// PipelineModel) when it was fitted by an iterative solver (ml.Iterative),
// else 0.
func Iterations(m ml.Model) int {
	if p, ok := m.(*ml.PipelineModel); ok && len(p.Stages) > 0 {
		m = p.Stages[len(p.Stages)-1]
	}
	if it, ok := m.(ml.Iterative); ok {
		return it.NumIterations()
	}
	return 0
}

func writeOutputs(dir string, res *Result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := ml.SaveModel(res.ModelPath, res.Model); err != nil {
		return err
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return fmt.Errorf("metrics.json: %w", err)
	}
	return atomicfile.WriteBytes(filepath.Join(dir, runlog.FitResultFile), append(b, '\n'))
}

// ReadAll reads every row of paths (CSV or Parquet) in one process, for
// prediction and evaluation.
func ReadAll(paths []string, o ReadOptions) (*data.Frame, error) {
	return ReadFrame(paths, o, 0, 1)
}
