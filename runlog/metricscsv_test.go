package runlog

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/metrics"
)

func TestReadMetricsCSV(t *testing.T) {
	in := "epoch,train_loss,train_accuracy,test_loss,test_accuracy,lr,seconds,eval_seconds\n" +
		"1,1.12,0.43,0.9,0.67,0.01,0.5,0.1\n" +
		"2,0.8,0.6,,0.7,0.01,0.5,0.1\n"
	l, err := ReadMetricsCSV(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if task, ok := l.Task(); l.Headline != "accuracy" || l.EvalSplit != "test" || !ok || task != metrics.Classification ||
		l.HasSteps || len(l.Epochs) != 2 {
		t.Fatalf("log %+v", l)
	}
	e := l.Epochs[1]
	if e.Epoch != 2 || e.Steps != 0 || e.Train.Loss != 0.8 || e.Train.Accuracy != 0.6 || !math.IsNaN(e.Train.RMSE) ||
		e.Eval == nil || !math.IsNaN(e.Eval.Loss) || e.Eval.Accuracy != 0.7 || e.LR != 0.01 || e.Seconds != 0.5 || e.EvalSeconds != 0.1 {
		t.Errorf("epoch 2: %+v (eval %+v)", e, e.Eval)
	}
	reg := "epoch,train_loss,train_rmse,val_loss,val_rmse,lr,seconds,eval_seconds\n1,4,2,9,3,0.1,1,1\n2,3,1,,,0.1,1,1\n"
	if l, err := ReadMetricsCSV(strings.NewReader(reg)); err != nil || l.Headline != "rmse" || l.EvalSplit != "val" ||
		l.Epochs[0].Eval.RMSE != 3 || l.Epochs[1].Eval != nil {
		t.Errorf("regression file: %+v, %v", l, err)
	}
	for _, c := range []struct{ in, want string }{
		{"epoch,train_loss\n1,x\n", "row 2, column 2 (train_loss)"},
		{"epoch,train_loss\n2,1\n1,1\n", "row 3: epoch 1 does not follow epoch 2"},
		{"train_loss\n1\n", "no epoch column"},
		{"epoch,train_loss\n1.5,1\n", "row 2, column 1 (epoch)"},
		{"epoch,epoch\n1,1\n", "appears twice"},
		{"epoch,train_loss\n1,2,3\n", "wrong number of fields"},
	} {
		_, err := ReadMetricsCSV(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.in, err, c.want)
		}
	}
}

// TestMetricsRoundTrip: what WriteMetricsCSVSplit writes reads back as
// the records it was given.
func TestMetricsRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), MetricsFile)
	h := testHistory()
	if err := WriteMetricsCSVSplit(path, metrics.Classification, h, "test"); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l, err := ReadMetricsCSV(f)
	if err != nil || len(l.Epochs) != 2 || l.EvalSplit != "test" {
		t.Fatalf("%+v, %v", l, err)
	}
	for i, e := range l.Epochs {
		w := h[i]
		if e.Epoch != w.Epoch || e.Train.Loss != w.Train.Loss || e.Train.Accuracy != w.Train.Accuracy || e.LR != w.LR ||
			e.Seconds != w.Seconds || (e.Eval == nil) != (w.Eval == nil) || (e.Eval != nil && (e.Eval.Loss != w.Eval.Loss || e.Eval.Accuracy != w.Eval.Accuracy)) {
			t.Errorf("epoch %d: %+v, want %+v", i+1, e, w)
		}
	}
}

// TestMetricsCSVAppends: a finished epoch's row is appended to the file,
// which is not written anew, and a history that does not extend the file
// (a run restarted from an older checkpoint) rewrites it; after every
// Write the file holds what WriteMetricsCSVSplit writes.
func TestMetricsCSVAppends(t *testing.T) {
	dir := t.TempDir()
	path, want := filepath.Join(dir, MetricsFile), filepath.Join(dir, "want.csv")
	check := func(hist []Epoch) {
		t.Helper()
		if err := WriteMetricsCSVSplit(want, metrics.Classification, hist, "test"); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(path)
		w, _ := os.ReadFile(want)
		if string(got) != string(w) {
			t.Fatalf("metrics file:\n%s\nwant\n%s", got, w)
		}
	}
	os.WriteFile(path, []byte("left by an earlier run\n"), 0o644)
	w := &MetricsCSV{Path: path, Task: metrics.Classification, Split: "test"}
	h := testHistory()
	if err := w.Write(h[:1]); err != nil {
		t.Fatal(err)
	}
	check(h[:1])
	first, _ := os.Stat(path)
	if err := w.Write(h); err != nil {
		t.Fatal(err)
	}
	check(h)
	second, _ := os.Stat(path)
	if !os.SameFile(first, second) {
		t.Error("the second epoch's row rewrote the file")
	}
	if err := w.Write(h); err != nil { // nothing new
		t.Fatal(err)
	}
	check(h)
	again := append([]Epoch(nil), h...)
	again[1].Train.Loss = 0.25 // epoch 2 run again from a checkpoint inside it
	if err := w.Write(again); err != nil {
		t.Fatal(err)
	}
	check(again)
	if err := w.Write(h[:1]); err != nil { // restarted from an older checkpoint
		t.Fatal(err)
	}
	check(h[:1])
	// the split defaults to val
	v := &MetricsCSV{Path: filepath.Join(dir, "v.csv"), Task: metrics.Classification}
	if err := v.Write(h); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(v.Path); !strings.HasPrefix(string(b), "epoch,train_loss,train_accuracy,val_loss,") {
		t.Errorf("default split: %s", b)
	}
}

// TestReadRun: a run directory is read from both its files, or from one
// file named; a directory with neither is a clear error.
func TestReadRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "iris-run")
	os.Mkdir(dir, 0o755)
	if err := WriteMetricsCSV(filepath.Join(dir, MetricsFile), metrics.Classification, testHistory()); err != nil {
		t.Fatal(err)
	}
	r, err := ReadRun(dir)
	if err != nil || r.Name != "iris-run" || len(r.Metrics.Epochs) != 2 || r.Dashboard != nil || r.DashboardPath != "" ||
		r.MetricsPath != filepath.Join(dir, MetricsFile) {
		t.Fatalf("%+v, %v", r, err)
	}
	state := []byte(`{"info":{"title":"x"}}`)
	os.WriteFile(filepath.Join(dir, DashboardFile), state, 0o644)
	if r, err = ReadRun(dir); err != nil || string(r.Dashboard) != string(state) || len(r.Metrics.Epochs) != 2 {
		t.Fatalf("with a dashboard file: %+v, %v", r, err)
	}
	if r, err = ReadRun(filepath.Join(dir, DashboardFile)); err != nil || r.Name != "iris-run" || r.MetricsPath != "" || r.Dashboard == nil {
		t.Fatalf("the dashboard file alone: %+v, %v", r, err)
	}
	if r, err = ReadRun(filepath.Join(dir, MetricsFile)); err != nil || r.Dashboard != nil || len(r.Metrics.Epochs) != 2 {
		t.Fatalf("the metrics file alone: %+v, %v", r, err)
	}
	if _, err := ReadRun(t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a run directory") {
		t.Errorf("empty directory: %v", err)
	}
	bad := filepath.Join(t.TempDir(), MetricsFile)
	os.WriteFile(bad, []byte("epoch\nx\n"), 0o644)
	if _, err := ReadRun(bad); err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "row 2") {
		t.Errorf("broken metrics file: %v", err)
	}
	if _, err := ReadRun(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing path: no error")
	}
}
