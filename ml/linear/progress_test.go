package linear

import (
	"testing"

	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/feature"
)

// TestFitReportsProgress: a pipeline's logistic regression reports each
// L-BFGS iteration once, in order, with its stage, and an objective that
// never rises.
func TestFitReportsProgress(t *testing.T) {
	f := clsFrame(t)
	lr := NewLogisticRegression()
	lr.LabelCol, lr.RegParam = "label3", 0.01
	p := &ml.Pipeline{Stages: []ml.Stage{feature.NewStandardScaler(), lr}}
	var got []ml.Progress
	m, err := p.Fit(ml.Data{Frame: f, Progress: func(r ml.Progress) { got = append(got, r) }})
	if err != nil {
		t.Fatal(err)
	}
	model := m.(*ml.PipelineModel).Stages[1].(*LogisticRegressionModel)
	if len(got) != model.Iterations || len(got) < 3 {
		t.Fatalf("%d reports for %d iterations", len(got), model.Iterations)
	}
	for i, r := range got {
		if r.Iteration != i+1 || r.Stage != 1 || r.StageType != lr.Type() {
			t.Errorf("report %d: %+v", i, r)
		}
		if i > 0 && r.Loss > got[i-1].Loss {
			t.Errorf("objective rose at iteration %d: %g after %g", r.Iteration, r.Loss, got[i-1].Loss)
		}
	}
}
