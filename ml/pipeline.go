package ml

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/fathom-ml/fathom/data"
)

// Pipeline chains stages: fitting it fits each Estimator on the output of
// the stages before it and transforms with each Model, as Spark ML's
// Pipeline does. It is an Estimator; its model is a PipelineModel.
type Pipeline struct {
	Stages []Stage
}

// NewPipeline returns a pipeline of the given stages.
func NewPipeline(stages ...Stage) *Pipeline { return &Pipeline{Stages: stages} }

func (p *Pipeline) Type() string { return "Pipeline" }

// Copy copies the pipeline and every Estimator in it (Models are shared:
// they are not changed by fitting).
func (p *Pipeline) Copy() Estimator {
	out := &Pipeline{Stages: make([]Stage, len(p.Stages))}
	for i, s := range p.Stages {
		if e, ok := s.(Estimator); ok {
			out.Stages[i] = e.Copy()
		} else {
			out.Stages[i] = s
		}
	}
	return out
}

// Fit fits the stages in order. The frame is transformed by a stage only
// when a later stage needs it.
func (p *Pipeline) Fit(d Data) (Model, error) {
	if len(p.Stages) == 0 {
		return nil, fmt.Errorf("ml: Pipeline: no stages")
	}
	last := -1
	for i, s := range p.Stages {
		switch s.(type) {
		case Estimator:
			last = i
		case Model:
		default:
			return nil, fmt.Errorf("ml: Pipeline: stage %d (%s) is neither an Estimator nor a Model", i+1, s.Type())
		}
	}
	models := make([]Model, len(p.Stages))
	cur := d
	for i, s := range p.Stages {
		var m Model
		if e, ok := s.(Estimator); ok {
			var err error
			fit := cur
			if report := d.Progress; report != nil {
				stage, typ := i, s.Type()
				fit.Progress = func(p Progress) { p.Stage, p.StageType = stage, typ; report(p) }
			}
			if m, err = e.Fit(fit); err != nil {
				return nil, fmt.Errorf("ml: Pipeline: stage %d (%s): %w", i+1, s.Type(), err)
			}
		} else {
			m = s.(Model)
		}
		models[i] = m
		if i < last {
			f, err := m.Transform(cur.Frame)
			if err != nil {
				return nil, fmt.Errorf("ml: Pipeline: stage %d (%s): %w", i+1, s.Type(), err)
			}
			cur.Frame = f
		}
	}
	return &PipelineModel{Stages: models}, nil
}

// PipelineModel is a fitted pipeline: its models, applied in order.
type PipelineModel struct {
	Stages []Model
}

func (m *PipelineModel) Type() string { return "PipelineModel" }

// Transform applies every stage in order.
func (m *PipelineModel) Transform(f *data.Frame) (*data.Frame, error) {
	for i, s := range m.Stages {
		var err error
		if f, err = s.Transform(f); err != nil {
			return nil, fmt.Errorf("ml: PipelineModel: stage %d (%s): %w", i+1, s.Type(), err)
		}
	}
	return f, nil
}

type pipelineParams struct {
	Stages []Node `json:"stages"`
}

// Encode keeps each stage's Node in the params and its arrays under
// "stages.<i>.".
func (m *PipelineModel) Encode() (Encoded, error) {
	arrays := map[string]Array{}
	p := pipelineParams{Stages: make([]Node, len(m.Stages))}
	for i, s := range m.Stages {
		n, err := EncodeModel(s, stagePrefix(i), arrays)
		if err != nil {
			return Encoded{}, fmt.Errorf("stage %d: %w", i+1, err)
		}
		p.Stages[i] = n
	}
	return Encoded{Params: p, Arrays: arrays}, nil
}

func stagePrefix(i int) string { return "stages." + strconv.Itoa(i) + "." }

func decodePipelineModel(raw json.RawMessage, arrays map[string]Array) (Model, error) {
	var p pipelineParams
	if err := DecodeParams(raw, &p); err != nil {
		return nil, err
	}
	m := &PipelineModel{Stages: make([]Model, len(p.Stages))}
	for i, n := range p.Stages {
		s, err := DecodeModel(n, SubArrays(arrays, stagePrefix(i)))
		if err != nil {
			return nil, fmt.Errorf("stage %d: %w", i+1, err)
		}
		m.Stages[i] = s
	}
	return m, nil
}

func init() {
	RegisterModel("PipelineModel", decodePipelineModel)
}

// Evaluator scores a frame of predictions (Spark ML's Evaluator).
type Evaluator interface {
	// Metric is the name of what Evaluate returns ("areaUnderROC", "f1",
	// "rmse", ...).
	Metric() string
	// Evaluate scores this rank's rows of f; over several ranks the
	// statistics are combined with c, and every rank gets the score of
	// the whole data set.
	Evaluate(f *data.Frame, c Comm) (float64, error)
	// LargerBetter says whether a larger value is better (false for rmse,
	// logLoss, ...).
	LargerBetter() bool
}
