package job

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/fathom-ml/fathom/dashboard"
	"github.com/fathom-ml/fathom/runlog"
)

// TestRunWritesDashboardState: without a dashboard, a run still writes
// its board to dashboard.json beside metrics.csv, and that file replays
// every epoch and step of the run; with output.metrics off it writes
// neither.
func TestRunWritesDashboardState(t *testing.T) {
	dir := t.TempDir()
	c, err := ParseConfig([]byte(baseConfig), "iris.yaml", []string{"epochs=4", "output.dir=" + dir})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), c, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := dashboard.LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := b.Snapshot()
	last := res.Epochs[len(res.Epochs)-1]
	if len(s.Epochs) != 4 || s.Epochs[3].Eval["accuracy"] != last.Eval.Accuracy || !s.Status.Done || s.Info.Title != "iris.yaml" {
		t.Errorf("replayed %d epochs (last %+v), status %+v, title %q; want 4 ending %+v", len(s.Epochs), s.Epochs[len(s.Epochs)-1],
			s.Status, s.Info.Title, last)
	}
	if len(s.Steps) != last.Steps || s.Steps[len(s.Steps)-1].Step != last.Steps {
		t.Errorf("replayed %d steps, want %d", len(s.Steps), last.Steps)
	}

	off := t.TempDir()
	c, err = ParseConfig([]byte(baseConfig), "iris.yaml", []string{"epochs=1", "output.dir=" + off, "output.metrics=false"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), c, RunOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{runlog.DashboardFile, runlog.MetricsFile} {
		if _, err := os.Stat(filepath.Join(off, f)); err == nil {
			t.Errorf("output.metrics=false wrote %s", f)
		}
	}
}
