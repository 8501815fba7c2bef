package tune

import (
	"encoding/json"
	"fmt"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
)

// CrossValidator picks the grid point whose k-fold cross-validated metric
// is best, as Spark ML's CrossValidator: each row falls in one of NumFolds
// folds; for every fold and grid point the estimator is fit on the other
// folds and scored on that one; the metrics are averaged over the folds;
// the best point is refit on all rows.
//
// A row's fold is a hash of Seed and its global row index (its position
// in the data set, the ranks' rows in rank order), so it does not depend
// on the number of ranks nor on Parallelism; fold sizes are about equal
// (Spark draws them at random with the seed).
type CrossValidator struct {
	Estimator ml.Estimator
	// Grid are the points to try (ParamGridBuilder.Build).
	Grid      []ParamMap
	Evaluator ml.Evaluator
	// NumFolds is the number of folds, ≥ 2 [3].
	NumFolds int
	// Seed fixes the folds [0].
	Seed int64
	// Parallelism is how many fits run at once (goroutines) [1].
	Parallelism int
	// CollectSubModels keeps every fold's model of every point in the
	// result (memory: NumFolds × len(Grid) models).
	CollectSubModels bool
	// Distribution is how the ranks share the work [DataParallel].
	Distribution Distribution
}

// NewCrossValidator returns a CrossValidator with Spark's defaults
// (3 folds, parallelism 1).
func NewCrossValidator(est ml.Estimator, grid []ParamMap, ev ml.Evaluator) *CrossValidator {
	return &CrossValidator{Estimator: est, Grid: grid, Evaluator: ev, NumFolds: 3, Parallelism: 1}
}

// Type is "CrossValidator".
func (cv *CrossValidator) Type() string { return "CrossValidator" }

// Copy copies the validator and its estimator (the grid and evaluator are
// shared: they are not changed by fitting).
func (cv *CrossValidator) Copy() ml.Estimator {
	c := *cv
	if c.Estimator != nil {
		c.Estimator = c.Estimator.Copy()
	}
	return &c
}

// Fit cross-validates every grid point and returns a *ValidatorModel
// whose BestModel is the best point refit on all of d. Every rank of
// d.Comm calls it; each gets the same result.
func (cv *CrossValidator) Fit(d ml.Data) (ml.Model, error) {
	if cv.NumFolds < 2 {
		return nil, fmt.Errorf("CrossValidator: numFolds must be ≥ 2, got %d", cv.NumFolds)
	}
	k := cv.NumFolds
	v := validator{name: "CrossValidator", est: cv.Estimator, grid: cv.Grid, ev: cv.Evaluator,
		parallelism: cv.Parallelism, collect: cv.CollectSubModels, mode: cv.Distribution}
	o, err := v.run(d, k, func(row int) int { return int(rowHash(cv.Seed, row) % uint64(k)) })
	if err != nil {
		return nil, err
	}
	return newValidatorModel("CrossValidatorModel", cv.Grid, cv.Evaluator, o), nil
}

// TrainValidationSplit picks the grid point whose metric on one held-out
// split is best, as Spark ML's TrainValidationSplit: a row is trained on
// with probability TrainRatio (a hash of Seed and its global row index)
// and validated on otherwise; the best point is refit on all rows.
type TrainValidationSplit struct {
	Estimator ml.Estimator
	Grid      []ParamMap
	Evaluator ml.Evaluator
	// TrainRatio is the fraction of rows trained on, in (0, 1) [0.75].
	TrainRatio float64
	// Seed fixes the split [0].
	Seed int64
	// Parallelism is how many fits run at once [1].
	Parallelism int
	// CollectSubModels keeps every point's model in the result.
	CollectSubModels bool
	// Distribution is how the ranks share the work [DataParallel].
	Distribution Distribution
}

// NewTrainValidationSplit returns a TrainValidationSplit with Spark's
// defaults (trainRatio 0.75, parallelism 1).
func NewTrainValidationSplit(est ml.Estimator, grid []ParamMap, ev ml.Evaluator) *TrainValidationSplit {
	return &TrainValidationSplit{Estimator: est, Grid: grid, Evaluator: ev, TrainRatio: 0.75, Parallelism: 1}
}

// Type is "TrainValidationSplit".
func (tv *TrainValidationSplit) Type() string { return "TrainValidationSplit" }

// Copy copies the validator and its estimator.
func (tv *TrainValidationSplit) Copy() ml.Estimator {
	c := *tv
	if c.Estimator != nil {
		c.Estimator = c.Estimator.Copy()
	}
	return &c
}

// Fit scores every grid point on the validation split and returns a
// *ValidatorModel (AvgMetrics are the validation metrics).
func (tv *TrainValidationSplit) Fit(d ml.Data) (ml.Model, error) {
	if !(tv.TrainRatio > 0 && tv.TrainRatio < 1) {
		return nil, fmt.Errorf("TrainValidationSplit: trainRatio must be in (0, 1), got %g", tv.TrainRatio)
	}
	v := validator{name: "TrainValidationSplit", est: tv.Estimator, grid: tv.Grid, ev: tv.Evaluator,
		parallelism: tv.Parallelism, collect: tv.CollectSubModels, mode: tv.Distribution}
	o, err := v.run(d, 1, func(row int) int {
		if unitHash(tv.Seed, row) < tv.TrainRatio {
			return -1
		}
		return 0
	})
	if err != nil {
		return nil, err
	}
	return newValidatorModel("TrainValidationSplitModel", tv.Grid, tv.Evaluator, o), nil
}

// ValidatorModel is the result of CrossValidator and TrainValidationSplit
// (Spark's CrossValidatorModel and TrainValidationSplitModel): the best
// model, refit on all rows, and the metric of every grid point. It
// transforms with the best model; saved, it keeps the best model and the
// metrics (not the sub-models).
type ValidatorModel struct {
	typ string
	// BestModel is the best grid point's model, fit on all rows.
	BestModel ml.Model
	// BestIndex is the best point's index in the grid; BestParams the
	// point (nil for a loaded model: Grid describes it).
	BestIndex  int
	BestParams ParamMap
	// Grid describes every point (ParamMap.String).
	Grid []string
	// AvgMetrics is each point's metric averaged over the folds (the
	// validation metric for TrainValidationSplit); FoldMetrics[f][p] the
	// metric of point p on fold f.
	AvgMetrics  []float64
	FoldMetrics [][]float64
	// Metric names the evaluator's metric; LargerBetter its direction.
	Metric       string
	LargerBetter bool
	// SubModels[f][p] is the model of point p fit without fold f, when
	// CollectSubModels was set (under the Spread distribution only this
	// rank's fits; nil elsewhere).
	SubModels [][]ml.Model
}

func newValidatorModel(typ string, grid []ParamMap, ev ml.Evaluator, o *outcome) *ValidatorModel {
	m := &ValidatorModel{typ: typ, BestModel: o.bestModel, BestIndex: o.best, BestParams: grid[o.best],
		AvgMetrics: o.avg, FoldMetrics: o.metrics, Metric: ev.Metric(), LargerBetter: ev.LargerBetter(),
		SubModels: o.subModels}
	for _, p := range grid {
		m.Grid = append(m.Grid, p.String())
	}
	return m
}

// Type is "CrossValidatorModel" or "TrainValidationSplitModel".
func (m *ValidatorModel) Type() string { return m.typ }

// Transform transforms with the best model.
func (m *ValidatorModel) Transform(f *data.Frame) (*data.Frame, error) {
	return m.BestModel.Transform(f)
}

type validatorParams struct {
	Best         ml.Node  `json:"bestModel"`
	BestIndex    int      `json:"bestIndex"`
	Grid         []string `json:"grid"`
	Metric       string   `json:"metric"`
	LargerBetter bool     `json:"largerBetter"`
}

// Encode keeps the best model's Node in the params and its arrays under
// "best."; the metrics are arrays (a fold's metric may be NaN, which JSON
// cannot hold): "avgMetrics" (points) and "foldMetrics" (folds × points).
func (m *ValidatorModel) Encode() (ml.Encoded, error) {
	arrays := map[string]ml.Array{}
	n, err := ml.EncodeModel(m.BestModel, "best.", arrays)
	if err != nil {
		return ml.Encoded{}, fmt.Errorf("best model: %w", err)
	}
	arrays["avgMetrics"] = ml.Vec(m.AvgMetrics)
	var folds []float64
	for _, f := range m.FoldMetrics {
		folds = append(folds, f...)
	}
	arrays["foldMetrics"] = ml.Mat(len(m.FoldMetrics), len(m.AvgMetrics), folds)
	return ml.Encoded{Params: validatorParams{Best: n, BestIndex: m.BestIndex, Grid: m.Grid,
		Metric: m.Metric, LargerBetter: m.LargerBetter}, Arrays: arrays}, nil
}

func decoder(typ string) ml.ModelDecoder {
	return func(raw json.RawMessage, arrays map[string]ml.Array) (ml.Model, error) {
		var p validatorParams
		if err := ml.DecodeParams(raw, &p); err != nil {
			return nil, err
		}
		best, err := ml.DecodeModel(p.Best, ml.SubArrays(arrays, "best."))
		if err != nil {
			return nil, fmt.Errorf("best model: %w", err)
		}
		points := len(p.Grid)
		avg, err := ml.Need(arrays, "avgMetrics", points)
		if err != nil {
			return nil, err
		}
		folds, err := ml.Need(arrays, "foldMetrics", -1, points)
		if err != nil {
			return nil, err
		}
		if p.BestIndex < 0 || p.BestIndex >= points {
			return nil, fmt.Errorf("bestIndex %d out of range of %d grid points", p.BestIndex, points)
		}
		m := &ValidatorModel{typ: typ, BestModel: best, BestIndex: p.BestIndex, Grid: p.Grid,
			AvgMetrics: avg.Data, Metric: p.Metric, LargerBetter: p.LargerBetter}
		for f := range folds.Shape[0] {
			m.FoldMetrics = append(m.FoldMetrics, folds.Data[f*points:(f+1)*points])
		}
		return m, nil
	}
}

func init() {
	ml.RegisterModel("CrossValidatorModel", decoder("CrossValidatorModel"))
	ml.RegisterModel("TrainValidationSplitModel", decoder("TrainValidationSplitModel"))
}
