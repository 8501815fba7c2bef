package job

import (
	"context"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/dashboard"
)

// TestRunReportsToDashboard: a run tells its board the config, the model
// and the machine, every step with its learning rate, every epoch, and
// its end.
func TestRunReportsToDashboard(t *testing.T) {
	c, err := ParseConfig([]byte(baseConfig), "iris.yaml", []string{"epochs=3", "output.dir=" + t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	b := dashboard.NewBoard(0)
	res, err := Run(context.Background(), c, RunOptions{Dashboard: b})
	if err != nil {
		t.Fatal(err)
	}
	s := b.Snapshot()
	if s.Info.Title != "iris.yaml" || !strings.Contains(s.Info.Config, "epochs: 3") || !strings.Contains(s.Info.Model, "Linear") ||
		s.Info.Headline != "accuracy" || s.Info.Epochs != 3 || s.Info.Machine.CPUs < 1 || s.Info.Parameters == 0 {
		t.Errorf("info %+v", s.Info)
	}
	last := res.Epochs[len(res.Epochs)-1]
	if len(s.Epochs) != 3 || s.Epochs[2].Steps != last.Steps || s.Epochs[2].Eval["accuracy"] != last.Eval.Accuracy {
		t.Errorf("epochs %+v, want 3 ending as %+v", s.Epochs, last)
	}
	if len(s.Steps) != last.Steps || s.Steps[0].LR != 0.01 || s.Steps[0].SamplesPerSec <= 0 || s.Info.StepsPerEpoch*3 != last.Steps ||
		s.Steps[0].Compute <= 0 || s.Steps[0].Data < 0 || s.Steps[0].Comm < 0 || s.Steps[0].Comm > s.Steps[0].Compute {
		t.Errorf("%d steps (first %+v), %d per epoch; want %d", len(s.Steps), s.Steps[0], s.Info.StepsPerEpoch, last.Steps)
	}
	if !s.Status.Done || s.Status.Error != "" {
		t.Errorf("status %+v, want done", s.Status)
	}
}
