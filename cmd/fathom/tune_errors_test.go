package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTuneErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("epochs: 3\n"), 0o644)
	for _, test := range []struct {
		path string
		f    tuneFlags
		err  string
	}{
		{"../../examples/iris.yaml", tuneFlags{}, "nothing to search"},
		{"../../examples/iris.yaml", tuneFlags{grid: []string{"optimizer.lr=0.1"}, n: 3}, "--trials N is the number of random draws"},
		{"../../examples/iris.yaml", tuneFlags{random: []string{"optimizer.lr=normal(0,1)"}, n: 3}, "unknown distribution"},
		{"../../examples/iris.yaml", tuneFlags{grid: []string{"optimizer.lr=0.1"}, metric: "f1"}, "--metric f1"},
		{"../../examples/iris.yaml", tuneFlags{grid: []string{"optimizer.lr=0.1"}, mode: "up"}, "--mode"},
		{"../../examples/ml/iris-logreg.yaml", tuneFlags{grid: []string{"pipeline.3.params.regParam=0.1"}, asha: true}, "no epochs"},
		{"../../examples/ml/iris-logreg.yaml", tuneFlags{grid: []string{"pipeline.3.params.regParam=0.1"}, metric: "rmse"}, "evaluators report accuracy, f1, logLoss"},
		{bad, tuneFlags{grid: []string{"epochs=1"}}, "neither a fathom train config"},
	} {
		test.f.out = filepath.Join(dir, "out")
		err := runTune(context.Background(), test.path, test.f, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), test.err) {
			t.Errorf("%s %+v: error %v, want %q", test.path, test.f, err, test.err)
		}
	}
	// A key that is not in the config fails its trials, named.
	f := tuneFlags{grid: []string{"optimizer.nosuchkey=1"}, out: filepath.Join(dir, "fail"), quiet: true}
	if err := runTune(context.Background(), "../../examples/iris.yaml", f, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	rows := readTuneRows(t, f.out)
	if len(rows) != 1 || rows[0].Status != "failed" || rows[0].Metric != nil || !strings.Contains(rows[0].Error, "nosuchkey") {
		t.Errorf("unknown key: %+v", rows)
	}
	if s := readTuneSummary(t, f.out); s.Failed != 1 || s.Best != nil {
		t.Errorf("summary %+v", s)
	}
}
