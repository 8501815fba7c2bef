package mljob

import (
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/dashboard"
)

// TestRunReportsToDashboard: a fit tells its board the config and the
// pipeline, each solver iteration as a step, the metrics as its one
// epoch, and its end; the output directory gets dashboard.json with the
// same.
func TestRunReportsToDashboard(t *testing.T) {
	dir := t.TempDir()
	c, err := Load("../../examples/ml/iris-logreg.yaml", []string{"output.dir=" + dir})
	if err != nil {
		t.Fatal(err)
	}
	b := dashboard.NewBoard(0)
	res, err := Run(c, Options{Dashboard: b})
	if err != nil {
		t.Fatal(err)
	}
	s := b.Snapshot()
	if s.Info.Kind != "ml" || !strings.Contains(s.Info.Model, "LogisticRegression") || !strings.Contains(s.Info.Config, "pipeline") ||
		s.Info.TrainRows != res.TrainRows || s.Info.EvalSplit != res.MetricsSplit {
		t.Errorf("info %+v", s.Info)
	}
	if res.Iterations < 2 || len(s.Steps) != res.Iterations || s.Steps[len(s.Steps)-1].Batch != res.Iterations {
		t.Errorf("%d steps for %d iterations", len(s.Steps), res.Iterations)
	}
	if len(s.Epochs) != 1 || len(s.Epochs[0].Eval) == 0 || !s.Status.Done {
		t.Fatalf("epochs %+v, status %+v", s.Epochs, s.Status)
	}
	for k, v := range res.Metrics {
		if s.Epochs[0].Eval[k] != v {
			t.Errorf("metric %s: board %v, result %v", k, s.Epochs[0].Eval[k], v)
		}
	}
	replay, err := dashboard.LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r := replay.Snapshot(); len(r.Steps) != len(s.Steps) || len(r.Epochs) != 1 || r.Info.Kind != "ml" {
		t.Errorf("replayed %d steps, %d epochs, kind %q", len(r.Steps), len(r.Epochs), r.Info.Kind)
	}
}
