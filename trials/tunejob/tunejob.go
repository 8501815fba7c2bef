package tunejob

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/mljob"
	"github.com/fathom-ml/fathom/runlog"
	"github.com/fathom-ml/fathom/tensor"
	"github.com/fathom-ml/fathom/train/job"
	"github.com/fathom-ml/fathom/trials"
)

// Options configure Search. SearchOptions.Config and .Target are set by
// Search; an empty Out becomes runs/tune-<config name>.
type Options struct {
	trials.SearchOptions
	// Metric is the metric to optimize: for train configs loss or the
	// task's headline (the default), for ml fit configs an evaluator's
	// (default the first).
	Metric string
}

// Search runs `fathom tune` of the config at path.
func Search(ctx context.Context, path string, o Options) error {
	kind, err := ConfigKind(path)
	if err != nil {
		return err
	}
	if o.Out == "" {
		o.Out = filepath.Join("runs", "tune-"+strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)))
	}
	so := o.SearchOptions
	so.Config = path
	so.Target = func() (*trials.Target, error) {
		if kind == "train" {
			return trainTarget(path, o)
		}
		if o.ASHA {
			return nil, errors.New("--asha: an ml fit config has no epochs to stop trials at; every trial runs its fit to the end")
		}
		return mlTarget(path, o)
	}
	return trials.Search(ctx, so)
}

// ConfigKind tells a fathom train config (model:) from a fathom ml fit
// config (pipeline:): "train" or "ml".
func ConfigKind(path string) (string, error) {
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

// largerBetterByName guesses the direction of a metric by its name.
func largerBetterByName(m string) bool {
	switch strings.ToLower(m) {
	case "loss", "rmse", "mse", "mae", "logloss", "hammingloss":
		return false
	}
	return true
}

// errASHAStop ends a trainer's Fit when ASHA stops the trial.
var errASHAStop = errors.New("stopped by ASHA")

// trainTarget runs trials of a fathom train config.
func trainTarget(path string, o Options) (*trials.Target, error) {
	base, err := job.Load(path, o.Sets)
	if err != nil {
		return nil, err
	}
	task, err := base.Task()
	if err != nil {
		return nil, err
	}
	t := &trials.Target{Kind: "train", Metric: o.Metric, Epochs: base.Epochs}
	if t.Metric == "" {
		t.Metric = task.Headline()
	}
	if t.Metric != "loss" && t.Metric != task.Headline() {
		return nil, fmt.Errorf("--metric %s: a %s train config reports loss and %s", t.Metric, task, task.Headline())
	}
	t.LargerBetter = largerBetterByName(t.Metric)
	t.Serial = func(list []trials.Trial) string {
		// Mixed precision is a process-wide switch (tensor.SetAutocast):
		// trials that set it run one at a time, so that each trains as it
		// would alone.
		if p := autocastTrials(path, o.Sets, list); p != "" {
			return "trials train with precision " + p + " (a process-wide setting)"
		}
		return ""
	}
	t.Objective = func(ctx context.Context, tr trials.Trial, report trials.Report) (trials.Outcome, error) {
		sets := slices.Concat(o.Sets, tr.Overrides(), []string{
			"output.dir=" + trials.TrialDir(o.Out, tr.ID), "output.plot=false", `output.model=""`})
		cfg, err := job.Load(path, sets)
		if err != nil {
			return trials.Outcome{}, err
		}
		out := trials.Outcome{Metric: math.NaN()}
		ro := job.RunOptions{Local: true}
		ro.Hooks.EpochEnd = func(r runlog.Epoch) error {
			out.Epochs = r.Epoch
			if r.Eval != nil {
				out.Metric, _ = r.Eval.Get(t.Metric)
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
func mlTarget(path string, o Options) (*trials.Target, error) {
	base, err := mljob.Load(path, o.Sets)
	if err != nil {
		return nil, err
	}
	evs, err := base.Evaluators()
	if err != nil {
		return nil, err
	}
	t := &trials.Target{Kind: "ml", Metric: o.Metric}
	var names []string
	for _, ev := range evs {
		names = append(names, ev.Metric())
		if t.Metric == "" || t.Metric == ev.Metric() {
			t.Metric, t.LargerBetter = ev.Metric(), ev.LargerBetter()
		}
	}
	if !slices.Contains(names, t.Metric) {
		return nil, fmt.Errorf("--metric %s: the config's evaluators report %s", t.Metric, strings.Join(names, ", "))
	}
	t.Objective = func(ctx context.Context, tr trials.Trial, _ trials.Report) (trials.Outcome, error) {
		sets := slices.Concat(o.Sets, tr.Overrides(), []string{"output.dir=" + trials.TrialDir(o.Out, tr.ID)})
		cfg, err := mljob.Load(path, sets)
		if err != nil {
			return trials.Outcome{}, err
		}
		res, err := mljob.Run(cfg, mljob.Options{Comm: ml.Single})
		if err != nil {
			return trials.Outcome{Metric: math.NaN()}, err
		}
		out := trials.Outcome{Metric: res.Metrics[t.Metric], Model: res.ModelPath, Extra: map[string]float64{}}
		for k, v := range res.Metrics {
			if k != t.Metric {
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

// autocastTrials returns the first precision other than float32 that a
// trial's config (the base config, sets, then the trial's overrides)
// trains with, or "". Configs that do not load are passed over.
func autocastTrials(path string, sets []string, list []trials.Trial) string {
	for _, tr := range list {
		c, err := job.Load(path, append(slices.Clone(sets), tr.Overrides()...))
		if err != nil {
			continue // the trial fails, saying why, when it runs
		}
		if p, err := tensor.ParsePrecision(c.Precision); err == nil && p != tensor.PrecisionFloat32 {
			return p.String()
		}
	}
	return ""
}
